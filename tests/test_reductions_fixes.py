"""Fixes found by running PyTorch's test_reductions.py on ember, checked against PyTorch: the
complex logcumsumexp scan (starts from -inf + 0j, keeps the larger term's phase unwrapped, and
PyTorch's rules for infinite and NaN parts); out= of sum/prod/cumsum/cumprod refusing a dtype=
other than out's; the dtype checks of (values, indices) out= pairs; torch._C._is_alias_of."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

inf, nan = float("inf"), float("nan")
CASES = [
    [-inf + 4j, -inf + 1j, 1.2 + 2.1j, 1e10 + 1e20j, inf + 0j, inf + 1j, inf + 3j, nan + 2j],
    [complex(-inf, inf), complex(-inf, inf), -inf + 1j, 1.2 + 2.1j, complex(2.4, inf)],
    [1e3 + 0j, 1e-18 + 1e4j, 1e2 + 1e-8j],
    [complex(nan, 0.0), 1 + 1j],
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_complex_logcumsumexp_special_values(case, dtype):
    e = ember.logcumsumexp(ember.tensor(CASES[case], dtype=getattr(ember, dtype)), 0)
    t = torch.logcumsumexp(torch.tensor(CASES[case], dtype=getattr(torch, dtype)), 0)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_complex_logcumsumexp_along_each_dim(dim):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))
    e = ember.logcumsumexp(ember.tensor(x), dim).numpy()
    t = torch.logcumsumexp(torch.tensor(x), dim).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)
    assert ember.logcumsumexp(ember.tensor(1 + 2j), 0).item() == \
        torch.logcumsumexp(torch.tensor(1 + 2j), 0).item()


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e)
    return "ok", [x.tolist() for x in r] if isinstance(r, tuple) else r.tolist()


@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_out_and_a_different_dtype_raise(op, dtype):
    def fn(lib):
        x = lib.ones(3, 4, dtype=lib.float64)
        out = lib.zeros(4 if op in ("sum", "prod") else (3, 4), dtype=lib.float64)
        return getattr(lib, op)(x, 0, dtype=getattr(lib, dtype), out=out)
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


@pytest.mark.parametrize("op", ["mode", "kthvalue", "sort", "topk", "max", "min", "cummax",
                                "cummin"])
@pytest.mark.parametrize("values,indices", [("float64", "int64"), ("float32", "int32"),
                                            ("float32", "int64")])
def test_values_indices_out_dtypes(op, values, indices):
    args = {"kthvalue": (1,), "topk": (2,), "sort": ()}.get(op, (0,))

    def fn(lib):
        x = lib.tensor([3.0, 1.0, 3.0, 2.0])
        out = (lib.empty(0, dtype=getattr(lib, values)), lib.empty(0, dtype=getattr(lib, indices)))
        getattr(lib, op)(x, *args, out=out)
        return out
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


def test_is_alias_of():
    for lib in (ember, torch):
        a, out = lib.ones(3, 4), lib.empty(4)
        r = lib.mean(a, 0, out=out)
        assert lib._C._is_alias_of(out, r)
        assert lib._C._is_alias_of(a, a[1]) and lib._C._is_alias_of(a.view(-1), a.t())
        assert not lib._C._is_alias_of(a, a.clone())


@pytest.mark.parametrize("sorter", [[0.0, 1.0, 2.0], [0, 1, 3], [-1, 1, 2], [1, 2, 0]])
def test_searchsorted_sorter_checks(sorter):
    def fn(lib):
        return lib.searchsorted(lib.tensor([3, 1, 2]), lib.tensor([2.5]), sorter=lib.tensor(sorter))
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


def test_searchsorted_warns_about_non_contiguous_arguments():
    import warnings
    messages = []
    for lib in (ember, torch):
        v = lib.tensor([[[1, 3, 5], [2, 4, 6]], [[1, 2, 3], [4, 5, 6]]]).permute(2, 1, 0)
        saved = lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = lib.searchsorted(v.to(lib.float64), v.to(lib.int32))
        finally:
            lib.set_warn_always(saved)
        messages.append(([str(x.message).split(" (Triggered")[0] for x in w], r.tolist()))
    assert messages[0] == messages[1]
    assert len(messages[0][0]) == 2
