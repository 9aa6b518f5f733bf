"""Checks ported from PyTorch's test_ops.py (test_dtypes: an op either computes a dtype or raises
for it) and test_unary_ufuncs.py / test_binary_ufuncs.py (complex inputs to real-only ops),
run against torch and ember: the same result, or the same exception class and message."""
import pytest

from _ported import same

CALLS = {
    "clamp": lambda L, x: L.clamp(x, 0, 1), "clamp_min": lambda L, x: L.clamp_min(x, 0),
    "clip_": lambda L, x: x.clip_(0, 1), "max": lambda L, x: L.max(x), "min": lambda L, x: L.min(x),
    "max_dim": lambda L, x: L.max(x, 0), "sort": lambda L, x: L.sort(x), "topk": lambda L, x: L.topk(x, 1),
    "cummax": lambda L, x: L.cummax(x, 0), "kthvalue": lambda L, x: L.kthvalue(x, 1),
    "median": lambda L, x: L.median(x), "argsort": lambda L, x: L.argsort(x), "round": lambda L, x: L.round(x),
    "round_decimals": lambda L, x: L.round(x, decimals=1), "remainder": lambda L, x: L.remainder(x, x),
    "softplus": lambda L, x: L.nn.functional.softplus(x), "gelu": lambda L, x: L.nn.functional.gelu(x),
    "searchsorted": lambda L, x: L.searchsorted(x, x), "cummin": lambda L, x: L.cummin(x, 0),
    "unique": lambda L, x: L.unique(x), "nanmedian": lambda L, x: L.nanmedian(x),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x), "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "elu": lambda L, x: L.nn.functional.elu(x), "relu6": lambda L, x: L.nn.functional.relu6(x),
    "relu_": lambda L, x: x.relu_(), "threshold": lambda L, x: L.threshold(x, 0.5, 0.),
    "lt_scalar": lambda L, x: L.lt(x, 1), "gt": lambda L, x: x > x, "ge_": lambda L, x: x.ge_(x),
    "max_binary": lambda L, x: L.max(x, x), "maximum": lambda L, x: L.maximum(x, x), "fmin": lambda L, x: L.fmin(x, x),
    "amax": lambda L, x: L.amax(x), "aminmax": lambda L, x: L.aminmax(x), "argmax": lambda L, x: L.argmax(x),
    "atan2": lambda L, x: L.atan2(x, x), "bincount": lambda L, x: L.bincount(x), "ceil": lambda L, x: L.ceil(x),
    "floor_": lambda L, x: x.floor_(), "trunc": lambda L, x: L.trunc(x), "fix": lambda L, x: L.fix(x),
    "frac": lambda L, x: L.frac(x), "copysign": lambda L, x: L.copysign(x, x), "digamma": lambda L, x: L.digamma(x),
    "erf": lambda L, x: L.erf(x), "erf_": lambda L, x: x.erf_(), "erfinv": lambda L, x: L.erfinv(x),
    "floor_divide": lambda L, x: x // x, "fmod": lambda L, x: L.fmod(x, x), "heaviside": lambda L, x: L.heaviside(x, x),
    "hypot": lambda L, x: L.hypot(x, x), "i0": lambda L, x: L.i0(x), "igamma": lambda L, x: L.igamma(x, x),
    "isposinf": lambda L, x: L.isposinf(x), "lgamma": lambda L, x: L.lgamma(x), "logit": lambda L, x: L.logit(x),
    "logaddexp2": lambda L, x: L.logaddexp2(x, x), "mode": lambda L, x: L.mode(x), "nansum": lambda L, x: L.nansum(x),
    "relu": lambda L, x: L.relu(x), "sign": lambda L, x: L.sign(x), "signbit": lambda L, x: L.signbit(x),
    "xlogy": lambda L, x: L.xlogy(x, x), "hardshrink": lambda L, x: L.nn.functional.hardshrink(x),
    "abs_": lambda L, x: x.abs_(), "bernoulli_": lambda L, x: x.bernoulli_(0.5),
    # what stays allowed for complex numbers
    "abs": lambda L, x: L.abs(x), "sgn": lambda L, x: L.sgn(x), "eq": lambda L, x: x == x,
    "sigmoid": lambda L, x: L.sigmoid(x), "sum": lambda L, x: L.sum(x), "exp": lambda L, x: L.exp(x),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(CALLS))
def test_complex_inputs(name, dtype):
    same(lambda L: CALLS[name](L, L.tensor([1, 2, 0]).to(getattr(L, dtype))), match=".")


def _message(L, fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e).replace("ember", "torch")
    return None


@pytest.mark.parametrize("name", [n for n in CALLS if n not in ("abs", "sgn", "eq", "sigmoid", "sum", "exp")])
def test_complex_refusal_message(name):
    """The refusal is PyTorch's, word for word (the kernel name of AT_DISPATCH's message too)."""
    same(lambda L: _message(L, lambda: CALLS[name](L, L.tensor([1, 2, 0]).to(L.complex64))))


SET_CHECKS = {
    "set_no_args": lambda L: (lambda t: (t.set_(), t.shape, t.dtype))(L.ones(3, dtype=L.int16))[1:],
    "set_other_dtype": lambda L: L.ones(3, dtype=L.int64).set_(L.ones(2)),
    "set_same_dtype": lambda L: L.ones(3).set_(L.arange(2.)),
}


@pytest.mark.parametrize("name", list(SET_CHECKS))
def test_set_(name):
    same(SET_CHECKS[name], match="Could not set tensor of type float to a tensor of type long int"
         if name == "set_other_dtype" else None)
