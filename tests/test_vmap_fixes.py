"""vmap behaviours found by running PyTorch's test/functorch/test_vmap.py on ember: out_dims
checking, clone's memory formats, in-place errors, refused out= and non-tensor ops. Each test
runs the same call in ember and torch and compares values or the exception."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")
from _torch_oracle import assert_same, same_error, make  # noqa: E402

X = np.random.default_rng(0).standard_normal((2, 3, 5))


def _quiet(fn):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib)
    return run


@pytest.mark.parametrize("out_dims", [3, -4])
def test_out_dim_out_of_range_is_index_error(out_dims):
    same_error(lambda lib: lib.vmap(lambda x: x, out_dims=out_dims)(make(lib, X)))


@pytest.mark.parametrize("out_dims", ["lol", ("lol",), (0, "x")])
def test_out_dims_not_int_refused_before_running(out_dims):
    ran = []

    def f(x):
        ran.append(1)
        return x, x

    for lib in (ember, torch):
        with pytest.raises(ValueError, match="must be an int, None or a python collection"):
            lib.vmap(f, out_dims=out_dims)(make(lib, X))
    assert not ran


@pytest.mark.parametrize("out_dims", [(0, 0), [0, 1]])
def test_out_dims_structure_mismatch(out_dims):
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="not compatible"):
            lib.vmap(lambda x: x if out_dims == (0, 0) else (x, x), out_dims=out_dims)(
                make(lib, X))


def test_none_out_dim_passes_non_tensor_outputs():
    for lib in (ember, torch):
        x = make(lib, X)
        assert lib.vmap(lambda x: (x, "hi"), out_dims=(0, None))(x)[1] == "hi"
        assert lib.vmap(lambda x: (x.add_(1), None)[1:] + ("hi",),
                        out_dims=(None, None))(x) == (None, "hi")
        assert lib.vmap(lambda x: "hi", out_dims=None)(x) == "hi"
    same_error(lambda lib: lib.vmap(lambda x: (x, "hi"), out_dims=0)(make(lib, X)))


def test_clone_contiguous_format_makes_examples_contiguous():
    for lib in (ember, torch):
        x = make(lib, X)
        y = lib.vmap(lambda t: t.clone(memory_format=lib.contiguous_format),
                     in_dims=1, out_dims=1)(x)
        assert y.movedim(1, 0).is_contiguous()
        z = lib.vmap(lambda t: t.clone(), in_dims=1, out_dims=1)(x.transpose(0, 2))
        assert z.stride() == x.transpose(0, 2).stride()
    for fmt in ("channels_last", "channels_last_3d"):
        same_error(lambda lib: lib.vmap(
            lambda t: t.clone(memory_format=getattr(lib, fmt)))(make(lib, X)))


@pytest.mark.parametrize("method", ["copy_", "mul_", "sub_", "div_"])
def test_inplace_arithmetic_on_unbatched_self(method):
    same_error(lambda lib: lib.vmap(getattr(lib.Tensor, method), in_dims=(None, 0))(
        make(lib, X[0, 0]), make(lib, X[0])))


def test_inplace_copy_into_batched_self():
    def run(lib):
        y = make(lib, X[0].T.copy())
        lib.vmap(lib.Tensor.copy_, in_dims=(1, None))(y, make(lib, X[0, 0]))
        return y
    assert_same(run(ember), run(torch))


def test_out_variant_and_equal_refused_on_batched():
    same_error(_quiet(lambda lib: lib.vmap(lambda a, b: lib.abs(a, out=b))(
        make(lib, X), make(lib, X))))
    same_error(_quiet(lambda lib: lib.vmap(lib.equal)(make(lib, X), make(lib, X))))
    # unbatched tensors inside a vmap still take out= and equal
    for lib in (ember, torch):
        out = make(lib, np.zeros(3))
        lib.vmap(lambda x: (lib.abs(make(lib, -X[0, :, 0]), out=out), x)[1])(make(lib, X))
        np.testing.assert_allclose(out.numpy(), np.abs(X[0, :, 0]))


@pytest.mark.parametrize("src,dst", [(0, 0), (0, 1), (1, 2), (0, -1), (-4, -1)])
def test_reshape_dim_into(src, dst):
    from ember._C._functorch import reshape_dim_into as ours
    from torch._C._functorch import reshape_dim_into as theirs
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 7))
    assert_same(ours(src, dst, ember.tensor(x)), theirs(src, dst, torch.tensor(x)))


@pytest.mark.parametrize("shape,src,size1", [((12, 12, 12), 1, 4), ((12, 12, 12), -1, 6),
                                             ((12, 12, 0), -1, 6)])
def test_reshape_dim_outof(shape, src, size1):
    from ember._C._functorch import reshape_dim_outof as ours
    from torch._C._functorch import reshape_dim_outof as theirs
    x = np.random.default_rng(2).standard_normal(shape)
    assert_same(ours(src, size1, ember.tensor(x).permute(2, 1, 0)),
                theirs(src, size1, torch.tensor(x).permute(2, 1, 0)))


def test_restore_vmap_keeps_batch_dims():
    from ember._functorch.vmap import restore_vmap as ours
    from torch._functorch.vmap import restore_vmap as theirs

    def f(x, y, z):
        return {"a": x[0] + x[1], "b": y, "c": y.sum() * z, "d": None}

    a = np.random.default_rng(3).standard_normal((2, 3))
    b = np.random.default_rng(4).standard_normal((4, 2))
    res = []
    for lib, rv in ((ember, ours), (torch, theirs)):
        x0, x1, y = make(lib, a), make(lib, a[:, 0]), make(lib, b)
        res.append(rv(f, ((0, 0), 1, None), 2, "error")((x0, x1), y, 5))
    (oe, de), (ot, dt) = res
    assert de == dt
    assert dt["b"] == 1 and dt["d"] is None
    for k in "abc":
        assert_same(oe[k], ot[k])
    assert oe["d"] is None


# ---- randomness: ember's generator gives torch's numbers, so vmap's draws compare exactly ----
P = np.full((3, 4), 0.5, dtype=np.float32)


def _vmap_draw(lib, fn, in_dims, randomness):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.vmap(fn(lib), in_dims=in_dims, randomness=randomness)(
            lib.tensor(P), lib.ones(4))


@pytest.mark.parametrize("fn,in_dims,randomness", [
    (lambda lib: lambda t, _: lib.bernoulli(t), (None, 0), "different"),
    (lambda lib: lambda t, _: lib.bernoulli(t), (1, 0), "different"),
    (lambda lib: lambda t, _: lib.rand_like(t), (1, 0), "different"),
    (lambda lib: lambda t, _: lib.rand_like(t), (1, 0), "same"),
    (lambda lib: lambda t, _: lib.normal(t, 1.), (1, 0), "different"),
    (lambda lib: lambda t, _: lib.binomial(t * 10, t), (None, 0), "different"),
    (lambda lib: lambda t, _: lib.randperm(5), (None, 0), "different"),
    (lambda lib: lambda t, _: lib.multinomial(t, 2), (None, 0), "different"),
    (lambda lib: lambda t, _: t.clone().uniform_(), (1, 0), "different"),
], ids=["bernoulli_unbatched", "bernoulli_batched", "rand_like_dim1", "rand_like_same",
        "normal_tensor", "binomial", "randperm", "multinomial", "uniform_batched"])
def test_random_draws_match_torch(fn, in_dims, randomness):
    out_e = _vmap_draw(ember, fn, in_dims, randomness)
    out_t = _vmap_draw(torch, fn, in_dims, randomness)
    assert_same(out_e, out_t, strides=True)


@pytest.mark.parametrize("fn,in_dims,randomness", [
    (lambda lib: lambda t, _: lib.normal(t, t), (1, 0), "error"),
    (lambda lib: lambda t, _: lib._standard_gamma(t), (1, 0), "error"),
    (lambda lib: lambda t, _: lib.bernoulli(t), (1, 0), "same"),
    (lambda lib: lambda t, _: lib.bernoulli(t, 0.3), (1, 0), "same"),
    (lambda lib: lambda t, _: lib.normal(t, 1.), (1, 0), "same"),
    (lambda lib: lambda t, _: lib.multinomial(t, 2), (1, 0), "same"),
    (lambda lib: lambda t, _: t.normal_(), (None, 0), "different"),
    (lambda lib: lambda t, _: t.bernoulli_(t), (None, 0), "different"),
    (lambda lib: lambda t, p: lib.ones(4).bernoulli_(p * 0.5), (None, 0), "different"),
    (lambda lib: lambda t, p: t[0].bernoulli_(p * 0.5), (1, 0), "same"),
], ids=["error_normal", "error_gamma", "same_bernoulli", "same_bernoulli_p", "same_normal", "same_multinomial",
        "different_normal_on_input", "different_bernoulli_on_input",
        "bernoulli_batched_p_unbatched_self", "same_bernoulli_batched_p"])
def test_random_refusals_match_torch(fn, in_dims, randomness):
    same_error(lambda lib: _vmap_draw(lib, fn, in_dims, randomness))
