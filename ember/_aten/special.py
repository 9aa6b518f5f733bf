"""CPU/Meta kernels of the `special_*` ops that have no older ATen name
(torch.special.xlog1py, erfcx, i0e, i1e, ndtri, log_ndtr, entr, zeta, the Bessel and Airy
functions). The ops torch.special shares with torch (expit = sigmoid, gammaln = lgamma, ...)
are the existing ops; `ember/special.py` aliases them.

SciPy computes the values; it is imported on first use (see elementwise._scipy_special), so a
missing SciPy is an error naming the op, not a failure of `import ember`. Like PyTorch, most of
these kernels are compiled for float32 and float64 only (integers compute in the default float
dtype); the rest also take float16 and bfloat16, computed in float32.
"""
import numpy as np

from .elementwise import unary, binary, not_implemented, _float_result, _scipy_special

def _real_float_check(kernel, reduced_too):
    """PyTorch's dtype coverage: real types only; float16/bfloat16 only if reduced_too."""
    def check(dt, *extra):
        if dt.is_complex or (not reduced_too and dt.is_floating_point and dt.itemsize == 2):
            raise not_implemented(kernel, dt)
    return check


def _scipy_unary(scipy_name, pick=None):
    def compute(a):
        with np.errstate(all="ignore"):
            r = _scipy_special(scipy_name)(a)
        if pick is not None:
            r = r[pick]
        return np.asarray(r).astype(a.dtype, copy=False)
    compute.__name__ = scipy_name
    return compute


def _spherical_j0(a):
    """sin(x) / x: 1 at 0, 0 at the infinities."""
    with np.errstate(all="ignore"):
        r = np.where(a == 0, a.dtype.type(1), np.sin(a) / a)
    return np.where(np.isinf(a), a.dtype.type(0), r)


# (op, computation, float16/bfloat16 accepted)
for _name, _compute, _reduced in (
        ("erfcx", _scipy_unary("erfcx"), False),
        ("i0e", _scipy_unary("i0e"), True),
        ("i1e", _scipy_unary("i1e"), True),
        ("ndtri", _scipy_unary("ndtri"), False),
        ("log_ndtr", _scipy_unary("log_ndtr"), False),
        ("entr", _scipy_unary("entr"), True),
        ("bessel_j0", _scipy_unary("j0"), False),
        ("bessel_j1", _scipy_unary("j1"), False),
        ("bessel_y0", _scipy_unary("y0"), False),
        ("bessel_y1", _scipy_unary("y1"), False),
        ("modified_bessel_i0", _scipy_unary("i0"), False),
        ("modified_bessel_i1", _scipy_unary("i1"), False),
        ("modified_bessel_k0", _scipy_unary("k0"), False),
        ("modified_bessel_k1", _scipy_unary("k1"), False),
        ("scaled_modified_bessel_k0", _scipy_unary("k0e"), False),
        ("scaled_modified_bessel_k1", _scipy_unary("k1e"), False),
        ("airy_ai", _scipy_unary("airy", pick=0), False),
        ("spherical_bessel_j0", _spherical_j0, False)):
    unary("special_" + _name, _compute, result=_float_result,
          check=_real_float_check(_name + "_cpu", _reduced))


def _binary_check(kernel, reduced_too):
    unary_check = _real_float_check(kernel, reduced_too)
    return lambda self, other, dt: unary_check(dt)


def _xlog1py(a, b, dt):
    with np.errstate(all="ignore"):
        return np.asarray(_scipy_special("xlog1py")(a, b)).astype(dt._np, copy=False)


def _zeta(x, q, dt):
    """The Hurwitz zeta function; NaN at q = +inf unless x = 1 (SciPy's limit there is 0;
    PyTorch's kernel tests x = 1, the pole, first)."""
    with np.errstate(all="ignore"):
        r = _scipy_special("zeta")(x, q)
    return np.where(np.isposinf(q) & (x != 1), np.nan, r).astype(dt._np, copy=False)


binary("special_xlog1py", _xlog1py, operands=_float_result,
       check=_binary_check("xlog1py_cpu", True))
binary("special_zeta", _zeta, operands=_float_result, check=_binary_check("zeta_cpu", False))
