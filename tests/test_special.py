"""ember.special against torch.special: the namespace is complete, each function runs the op
PyTorch's does (the same grad_fn), out= works, and errors PyTorch raises are raised.

Values, dtypes and gradients of every function are in the op table (tests/op_db_special.py).
"""
import numpy as np
import pytest

import ember
from _torch_oracle import check, check_meta, check_raises

torch = pytest.importorskip("torch")

# names in dir(torch.special) that are not functions of the namespace
_NOT_FUNCTIONS = {"Tensor", "torch", "common_args", "multi_dim_common"}


def test_namespace_complete():
    wanted = {n for n in dir(torch.special) if not n.startswith("_")} - _NOT_FUNCTIONS
    missing = sorted(n for n in wanted if not hasattr(ember.special, n))
    assert missing == []
    assert sorted(ember.special.__all__) == sorted(wanted)


def _call(lib, name, x):
    f = getattr(lib.special, name)
    if name in ("xlogy", "xlog1py", "gammainc", "gammaincc"):
        return f(x, x + 1)
    if name == "zeta":
        return f(x + 2, x + 1)
    if name == "polygamma":
        return f(2, x)
    if name == "multigammaln":
        return f(x + 2, 3)
    if name in ("softmax", "log_softmax", "logsumexp"):
        return f(x, 0)
    if "polynomial" in name:
        return f(x, 3)
    return f(x)


# multigammaln: ember's mvlgamma is a composite, so its grad_fn is not MvlgammaBackward0
@pytest.mark.parametrize("name", sorted(set(ember.special.__all__) - {"multigammaln"}))
def test_grad_fn_name(name):
    data = np.array([0.3, 0.6, 0.9])
    names = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        if name == "gammainc" or name == "gammaincc":   # no gradient for the first argument
            x = x.detach()
        y = _call(lib, name, x)
        names.append((y.requires_grad, y.grad_fn and type(y.grad_fn).__name__))
    if name == "ndtr":
        # PyTorch multiplies by a Python number through mul.Scalar (MulBackward1), which
        # ember's mul.Tensor with a wrapped number stands for (MulBackward0)
        assert names[0] == (True, "MulBackward0") and names[1] == (True, "MulBackward1")
        return
    assert names[0] == names[1]


@pytest.mark.parametrize("name", ["xlog1py", "erfcx", "i0e", "i1", "i1e", "ndtr", "ndtri",
                                  "log_ndtr", "entr", "zeta", "bessel_j0", "airy_ai",
                                  "scaled_modified_bessel_k1", "expit", "gammaln", "round",
                                  "chebyshev_polynomial_t", "laguerre_polynomial_l"])
def test_out(name):
    data = np.array([0.25, 0.5, 0.75])

    def fn(lib, x):
        out = lib.empty(3, dtype=lib.float64)
        binary = name in ("xlog1py", "zeta")
        args = (x + 1, x) if binary else (x, 4) if "polynomial" in name else (x,)
        r = getattr(lib.special, name)(*args, out=out)
        assert r is out
        return out
    check(fn, data, grad=False)


def test_zeta_first_argument_has_no_gradient():
    def fn(lib, x, q):
        lib.special.zeta(x, q.detach()).sum().backward()
    check_raises(fn, np.array([2.0, 3.0]), np.array([1.0, 2.0]))


@pytest.mark.parametrize("name", ["erfcx", "zeta", "bessel_j0", "airy_ai",
                                  "modified_bessel_k0"])
def test_half_refused(name):
    def fn(lib, x):
        x = x.half()
        return getattr(lib.special, name)(*((x, x) if name == "zeta" else (x,)))
    check_raises(fn, np.array([1.0, 2.0]))


def test_integer_round_refused():
    check_raises(lambda lib, x: lib.special.round(x), np.array([1, 2]))


_OWN_OPS = ("erfcx", "i0e", "i1e", "ndtri", "log_ndtr", "entr", "bessel_j0", "bessel_j1",
            "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
            "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
            "scaled_modified_bessel_k1", "airy_ai", "spherical_bessel_j0")


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_meta(dtype):
    for name in _OWN_OPS:
        check_meta(lambda lib, x: getattr(lib.special, name)(x), (3, 4), dtype=dtype)
    for name in ("xlog1py", "zeta"):
        check_meta(lambda lib, x, y: getattr(lib.special, name)(x, y), (3, 1), (4,),
                   dtype=dtype)
