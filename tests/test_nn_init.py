"""ember.nn.init against torch.nn.init: after the same manual_seed every initialiser writes
the same values, returns its tensor, leaves autograd untouched and raises torch's errors."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def init_both(name, shape, *args, dtype="float32", seed=0, **kwargs):
    """Run nn.init.<name> on a fresh leaf Parameter in each library after the same seed."""
    out = {}
    for lib in (ember, torch):
        lib.manual_seed(seed)
        p = lib.nn.Parameter(lib.empty(shape, dtype=getattr(lib, dtype)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(lib.nn.init, name)(p, *args, **kwargs)
        assert r is p and p.requires_grad and p.grad_fn is None
        out[lib] = p.detach().numpy()
    assert out[ember].dtype == out[torch].dtype
    return out[ember], out[torch]


CASES = [
    ("uniform_", (5, 7), (), {}),
    ("uniform_", (40,), (-3.0, 0.5), {}),
    ("normal_", (6, 9), (), {}),
    ("normal_", (33,), (2.0, 0.1), {}),
    ("constant_", (3, 4), (0.25,), {}),
    ("ones_", (2, 3), (), {}),
    ("zeros_", (2, 3), (), {}),
    ("eye_", (3, 5), (), {}),
    ("eye_", (4, 2), (), {}),
    ("dirac_", (4, 2, 3), (), {}),
    ("dirac_", (6, 4, 3, 3), (), {"groups": 2}),
    ("dirac_", (3, 5, 3, 2, 3), (), {"groups": 3}),
    ("xavier_uniform_", (20, 30), (), {}),
    ("xavier_uniform_", (8, 3, 3, 3), (), {"gain": 2.5}),
    ("xavier_normal_", (20, 30), (), {}),
    ("xavier_normal_", (8, 3, 5), (0.7,), {}),
    ("kaiming_uniform_", (16, 9), (), {}),
    ("kaiming_uniform_", (16, 4, 3, 3), (), {"a": 0.2, "mode": "fan_out"}),
    ("kaiming_uniform_", (10, 4), (), {"nonlinearity": "relu", "mode": "FAN_IN"}),
    ("kaiming_normal_", (16, 9), (), {}),
    ("kaiming_normal_", (12, 6, 2), (), {"mode": "fan_out", "nonlinearity": "tanh"}),
    ("trunc_normal_", (50, 20), (), {}),
    ("trunc_normal_", (300,), (0.5, 2.0, -1.0, 1.0), {}),
    ("trunc_normal_", (400,), (0.0, 1.0, 1.5, 4.0), {}),  # little mass: the uniform sampler
    ("trunc_normal_", (7, 7), (), {"mean": 3.0, "std": 0.5, "a": -1.0, "b": 1.5}),
    ("orthogonal_", (6, 4), (), {}),
    ("orthogonal_", (4, 6), (), {"gain": 2.0}),
    ("orthogonal_", (5, 2, 3), (), {}),
    ("orthogonal_", (16, 16), (), {}),
    ("orthogonal_", (64, 128), (), {}),
    ("sparse_", (10, 6), (0.3,), {}),
    ("sparse_", (7, 3), (0.5,), {"std": 1.0}),
]


@pytest.mark.parametrize("name,shape,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_same_values_as_torch(name, shape, args, kwargs):
    e, t = init_both(name, shape, *args, **kwargs)
    np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6)


def test_float64_and_seeds():
    for seed in (1, 7):
        for name in ("normal_", "trunc_normal_", "orthogonal_", "kaiming_uniform_"):
            e, t = init_both(name, (9, 5), dtype="float64", seed=seed)
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision(dtype):
    for name in ("uniform_", "normal_", "trunc_normal_", "xavier_normal_", "kaiming_uniform_"):
        out = {}
        for lib in (ember, torch):
            lib.manual_seed(0)
            x = getattr(lib.nn.init, name)(lib.empty(40, 30, dtype=getattr(lib, dtype)))
            assert str(x.dtype) == f"torch.{dtype}"
            out[lib] = x.float().numpy()
        np.testing.assert_array_equal(out[ember], out[torch])


def test_orthogonal_is_orthogonal():
    e, _ = init_both("orthogonal_", (5, 8), gain=1.0)
    np.testing.assert_allclose(e @ e.T, np.eye(5), atol=1e-5)


def test_generator_keyword():
    for name, args in (("uniform_", ()), ("normal_", ()), ("trunc_normal_", ()),
                       ("xavier_uniform_", ()), ("xavier_normal_", ()),
                       ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
                       ("orthogonal_", ()), ("sparse_", (0.2,))):
        out = {}
        for lib in (ember, torch):
            lib.manual_seed(123)
            g = lib.Generator().manual_seed(5)
            x = getattr(lib.nn.init, name)(lib.empty(6, 4), *args, generator=g)
            # the global stream is untouched by draws from `g` (sparse_'s randperm aside)
            out[lib] = (x.numpy(), lib.rand(3).numpy())
        np.testing.assert_allclose(out[ember][0], out[torch][0], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(out[ember][1], out[torch][1])


@pytest.mark.parametrize("args", [
    ("linear",), ("conv1d",), ("conv_transpose3d",), ("sigmoid",), ("tanh",), ("relu",),
    ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu",),
])
def test_calculate_gain(args):
    e = ember.nn.init.calculate_gain(*args)
    t = torch.nn.init.calculate_gain(*args)
    assert type(e) is type(t) and e == pytest.approx(t, rel=1e-15)


@pytest.mark.parametrize("args", [("softplus",), ("leaky_relu", True), ("leaky_relu", "0.1")])
def test_calculate_gain_errors(args):
    with pytest.raises(ValueError) as t:
        torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError) as e:
        ember.nn.init.calculate_gain(*args)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 2, 1), (3,), ()])
def test_calculate_fan_in_and_fan_out(shape):
    tt = torch.empty(shape)
    et = ember.empty(shape)
    if len(shape) < 2:
        with pytest.raises(ValueError) as t:
            torch.nn.init._calculate_fan_in_and_fan_out(tt)
        with pytest.raises(ValueError) as e:
            ember.nn.init._calculate_fan_in_and_fan_out(et)
        assert str(e.value) == str(t.value)
    else:
        assert (ember.nn.init._calculate_fan_in_and_fan_out(et)
                == torch.nn.init._calculate_fan_in_and_fan_out(tt))


@pytest.mark.parametrize("name,shape,kwargs", [
    ("eye_", (2, 3, 4), {}), ("dirac_", (3, 3), {}), ("dirac_", (3, 2, 3), {"groups": 2}),
    ("orthogonal_", (4,), {}), ("sparse_", (3, 4, 5), {"sparsity": 0.1}),
    ("xavier_uniform_", (4,), {}), ("kaiming_normal_", (3, 4), {"mode": "fan_avg"}),
    ("kaiming_uniform_", (3, 4), {"nonlinearity": "elu"}),
])
def test_errors_match(name, shape, kwargs):
    with pytest.raises(Exception) as t:
        getattr(torch.nn.init, name)(torch.empty(shape), **kwargs)
    with pytest.raises(Exception) as e:
        getattr(ember.nn.init, name)(ember.empty(shape), **kwargs)
    assert isinstance(e.value, type(t.value)) and str(e.value) == str(t.value)


@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
def test_zero_element_warns_and_returns(name):
    for lib in (ember, torch):
        x = lib.empty(0, 3)
        with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
            assert getattr(lib.nn.init, name)(x) is x


def test_trunc_normal_warns_when_mean_is_far():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="more than 2 std from"):
            lib.nn.init.trunc_normal_(lib.empty(10), mean=5.0, a=-1.0, b=1.0)


def test_meta_tensors_are_left_alone():
    for name, args in (("trunc_normal_", ()), ("orthogonal_", ()), ("sparse_", (0.5,)),
                       ("dirac_", ())):
        shape = (4, 4, 3) if name == "dirac_" else (4, 3)
        x = ember.empty(shape, device="meta")
        assert getattr(ember.nn.init, name)(x, *args) is x


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "eye", "dirac",
                                 "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                 "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_aliases(old):
    shape = (4, 2, 3) if old == "dirac" else (5, 4)
    args = {"constant": (0.5,), "sparse": (0.3,)}.get(old, ())
    out = {}
    for lib in (ember, torch):
        lib.manual_seed(3)
        fn = getattr(lib.nn.init, old)
        assert fn.__name__ == old
        with pytest.warns(FutureWarning) as rec:
            out[lib] = fn(lib.empty(shape), *args).numpy()
        out[lib, "msg"] = str(rec[0].message)
    assert out[ember, "msg"] == out[torch, "msg"]
    np.testing.assert_allclose(out[ember], out[torch], rtol=1e-6, atol=1e-7)


def test_all_names():
    assert sorted(ember.nn.init.__all__) == sorted(torch.nn.init.__all__)
    for name in torch.nn.init.__all__:
        assert callable(getattr(ember.nn.init, name))
