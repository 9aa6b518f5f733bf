"""ember.testing against torch.testing: assert_close passes and fails on the same inputs with
the same exception and message; make_tensor draws the same tensor from the same seed."""
import math
import re

import numpy as np
import pytest

import ember
from _torch_oracle import assert_same

torch = pytest.importorskip("torch")


class T:
    """A tensor spec built in either library: T([1., 2.], dtype="float32")."""

    def __init__(self, data, dtype=None, expand=None):
        self.data, self.dtype, self.expand = data, dtype, expand

    def build(self, lib):
        t = lib.tensor(self.data, dtype=getattr(lib, self.dtype) if self.dtype else None)
        return t.expand(*self.expand) if self.expand else t


def build(x, lib):
    if isinstance(x, T):
        return x.build(lib)
    if isinstance(x, list):
        return [build(v, lib) for v in x]
    if isinstance(x, tuple):
        return tuple(build(v, lib) for v in x)
    if isinstance(x, dict):
        return {k: build(v, lib) for k, v in x.items()}
    return x


def outcome(lib, actual, expected, kwargs):
    try:
        lib.testing.assert_close(build(actual, lib), build(expected, lib), **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        # type names differ between the libraries: ember._tensor.Tensor vs torch.Tensor
        return type(e), re.sub(r"<class '[\w.]*Tensor'>", "<class 'Tensor'>", str(e))
    return None


nan, inf = math.nan, math.inf
CASES = [
    (T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.0]), {}),
    (T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.0]), dict(rtol=0, atol=0)),
    (T([1.0, 2.0, 3.0]), T([1.0, 2.0 + 1e-6, 3.0]), {}),
    (T([1.0, 2.0, 3.0]), T([1.0, 2.0 + 1e-4, 3.0]), {}),
    (T([1.0, 2.0]), T([1.0, 2.001]), dict(rtol=1e-3, atol=0.0)),
    (T(1.0), T(2.0), {}),
    (T([1, 2]), T([1, 3]), {}),
    (T([1, 2], "uint8"), T([1, 2], "uint8"), {}),
    (T([[1, 2], [3, 4]], "uint8"), T([[1, 2], [3, 9]], "uint8"), {}),
    (T([True, False]), T([True, True]), {}),
    (T([1.0, 2.0]), T([1.0, 2.0], "float64"), {}),
    (T([1.0, 2.0]), T([1.0, 2.0], "float64"), dict(check_dtype=False)),
    (T([1.0, 2.0], "float16"), T([1.0, 2.001], "float16"), {}),
    (T([1.0, 2.0], "float16"), T([1.0, 2.01], "float16"), {}),
    (T([1.0, 2.0], "bfloat16"), T([1.0, 2.02], "bfloat16"), {}),
    (T([1.0, 2.0], "float64"), T([1.0, 2.1], "float64"), {}),
    (T([1.0, nan]), T([1.0, nan]), {}),
    (T([1.0, nan]), T([1.0, nan]), dict(equal_nan=True)),
    (T([inf]), T([inf]), {}),
    (T([inf]), T([-inf]), {}),
    (T([0.0, 1.0]), T([1e-10, 1.0]), {}),
    (T([[0.0, 1.0], [2.0, 3.0]]), T([[0.0, 1.0], [2.5, 0.0]]), {}),
    (T([1.0, 2.0]), T([1.0, 2.0, 3.0]), {}),
    (T([1.0, 2.0], expand=(2, 2)), T([[1.0, 2.0], [1.0, 2.0]]), dict(check_stride=True)),
    (T([1.0, 2.0], expand=(2, 2)), T([[1.0, 2.0], [1.0, 2.0]]), {}),
    (T([1.0]), T([1.0]), dict(rtol=1e-3)),
    (T([1.0]), T([1.1]), dict(atol=0.0)),
    (T([1.0, 2.0]), T([1.0, 2.1]), dict(msg="custom")),
    (T([1.0, 2.0]), T([1.0, 2.1]), dict(msg=lambda m: "prefix: " + m)),
    (T([1.0]), 1.0, {}),
    (2.0, T(2.0), {}),
    (T([1.0, 2.0]), [1.0, 2.0], {}),
    (1.0, 1.0 + 1e-8, {}),
    (1.0, 1.1, {}),
    (1, 2, {}),
    (1.0, 1, {}),
    (1.0, 1, dict(check_dtype=False)),
    (0.0, 1e-3, {}),
    (nan, nan, {}),
    (nan, nan, dict(equal_nan=True)),
    (None, None, {}),
    (None, T(1.0), {}),
    (True, False, {}),
    (True, np.bool_(True), {}),
    (np.float32(1.5), 1.5, dict(check_dtype=False)),
    ([T(1.0), T(2.0)], [T(1.0), T(3.0)], {}),
    ((1, 2), (1, 2, 3), {}),
    ([1.0, 2.0], [1.0, 2.5], {}),
    ({"a": T(1.0)}, {"b": T(1.0)}, {}),
    ({"a": T(1.0), "b": [T([1.0]), 3]}, {"a": T(1.0), "b": [T([1.0]), 4]}, {}),
    ({"w": T([[1.0, 2.0]])}, {"w": T([[1.0, 2.5]])}, dict(msg=lambda m: m.upper())),
    ("abc", "abc", {}),
]


@pytest.mark.parametrize("actual,expected,kwargs", CASES)
def test_assert_close_matches_torch(actual, expected, kwargs):
    assert outcome(ember, actual, expected, kwargs) == outcome(torch, actual, expected, kwargs)


def test_assert_close_numpy_arrays_and_parameters():
    for a, b, kw in [(np.array([1.0, 2.0]), np.array([1.0, 2.1]), {}),
                     (np.array([1, 2]), np.array([1, 2]), {})]:
        got = outcome(ember, a, b, kw)
        want = outcome(torch, a, b, kw)
        assert got == want
    p = ember.nn.Parameter(ember.ones(2))
    ember.testing.assert_close(p, ember.ones(2))
    with pytest.raises(TypeError, match="No comparison pair"):
        ember.testing.assert_close(p, ember.ones(2), allow_subclasses=False)
    tp = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(TypeError, match="No comparison pair"):
        torch.testing.assert_close(tp, torch.ones(2), allow_subclasses=False)


def test_meta_tensors_compare_attributes_only():
    ember.testing.assert_close(ember.empty(2, 3, device="meta"), ember.empty(2, 3, device="meta"))
    with pytest.raises(AssertionError, match="'shape' do not match"):
        ember.testing.assert_close(ember.empty(2, device="meta"), ember.empty(3, device="meta"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                   "int16", "int8", "uint8", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("kwargs", [{}, dict(low=-2, high=3), dict(noncontiguous=True),
                                    dict(exclude_zero=True, low=0, high=2)])
def test_make_tensor_matches_torch(dtype, kwargs):
    ember.manual_seed(5)
    torch.manual_seed(5)
    e = ember.testing.make_tensor(4, 3, dtype=getattr(ember, dtype), device="cpu", **kwargs)
    t = torch.testing.make_tensor(4, 3, dtype=getattr(torch, dtype), device="cpu", **kwargs)
    assert e.shape == t.shape and str(e.dtype) == str(t.dtype)
    assert e.is_contiguous() == t.is_contiguous() and e.stride() == t.stride()
    if dtype.startswith("complex"):
        assert np.array_equal(e.numpy(), t.numpy())
    else:
        assert_same(e, t, atol=0, rtol=0)


def test_make_tensor_options_and_errors():
    x = ember.testing.make_tensor((2, 3), dtype=ember.float32, device="cpu", requires_grad=True)
    assert x.shape == (2, 3) and x.requires_grad and x.is_leaf
    assert ember.testing.make_tensor([], dtype=ember.float64, device="cpu").shape == ()
    big = ember.testing.make_tensor(1000, dtype=ember.float16, device="cpu",
                                    low=-math.inf, high=math.inf)
    assert bool(ember.isfinite(big).all())
    cl = ember.testing.make_tensor(2, 3, 4, 5, dtype=ember.float32, device="cpu",
                                   memory_format=ember.channels_last)
    assert cl.is_contiguous(memory_format=ember.channels_last)
    for kwargs, exc in [(dict(dtype=ember.int64, requires_grad=True), ValueError),
                        (dict(dtype=ember.float32, low=2, high=1), ValueError),
                        (dict(dtype=ember.float32, low=math.nan), ValueError),
                        (dict(dtype=ember.uint8, low=300, high=400), ValueError),
                        (dict(dtype=ember.float32, noncontiguous=True,
                              memory_format=ember.channels_last), ValueError)]:
        tkw = {k: (getattr(torch, str(v).split(".")[-1]) if isinstance(v, ember.dtype)
                   else torch.channels_last if v is ember.channels_last else v)
               for k, v in kwargs.items()}
        with pytest.raises(exc) as te:
            torch.testing.make_tensor(2, device="cpu", **tkw)
        with pytest.raises(exc) as ee:
            ember.testing.make_tensor(2, device="cpu", **kwargs)
        assert str(ee.value) == str(te.value)


def test_deprecated_assert_allclose_as_torch():
    import warnings
    cases = [([1.0, 2.0], [1.0, 2.00001]), ([1.0, float("nan")], [1.0, float("nan")]),
             ([1.0, 2.0], [1.0, 2.1]), (1.0, 1.0 + 1e-6)]
    outcomes = []
    for m in (torch, ember):
        row = []
        for a, b in cases:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    m.testing.assert_allclose(m.tensor(a) if isinstance(a, list) else a, b)
                    row.append("ok")
                except AssertionError as e:
                    row.append(str(e).splitlines()[0])
            row.append([w.category.__name__ for w in caught])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.testing.assert_allclose(m.tensor([1.0]), [1.5], rtol=0, atol=0.6)
        outcomes.append(row)
    assert outcomes[0] == outcomes[1]
