"""Composite linear-algebra functions of the torch namespace (PyTorch's _refs role): outer,
einsum, tensordot, kron, cross and the torch.* forms of the torch.linalg decompositions."""
from ember._core._warnings import user_stacklevel as _user_stacklevel
from ember._core.flags import warn_once
import builtins
import math

from .._core.tensor import Tensor, _wrap_dim
from .._dispatch.dispatcher import lookup as _op
from .._bindings.factories import zeros_like
from .._refs.shape import broadcast_shapes
from .._bindings.out import _finish, _finish_tuple
from .._bindings.overloads import where


def outer(input, vec2, *, out=None):
    """The outer product: a column times a row (a broadcast product, so autograd sees mul)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.dim()}-D")
    return _finish(input.reshape(-1, 1) * vec2, False, out, "outer", (input, vec2))


ger = outer
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # sublist labels 0..51


def _sublist_equation(args):
    """einsum(op0, [0, 1], op1, [1, 2], [0, 2]) -> ('ab,bc->ac', [op0, op1])."""
    def letter(s):
        if s is Ellipsis:
            return "..."
        if not 0 <= s < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
        return _LETTERS[s]

    def subs(sub):
        return "".join(letter(s) for s in sub)
    operands, parts = list(args[0:-1:2]) if len(args) % 2 else list(args[0::2]), []
    for sub in args[1::2][:len(operands)]:
        parts.append(subs(sub))
    eq = ",".join(parts)
    if len(args) % 2:
        eq += "->" + subs(args[-1])
    return eq, operands


def einsum(*args):
    """einsum(equation, *operands), einsum(equation, [operands]) or the sublist format."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            return einsum(equation, *operands[0])
    return _op("einsum")(equation, operands, None)


def tensordot(a, b, dims=2, out=None):
    """Contract dims of a with dims of b: permute both so the contracted dims meet, then one mm."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a = [_wrap_dim(d, a.dim()) for d in dims_a]
    dims_b = [_wrap_dim(d, b.dim()) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        # a contracted dim of size 1 broadcasts: the other side's dim is summed first
        if a.shape[da] == 1 and b.shape[db] != 1:
            b = b.sum(db, keepdim=True)
        elif b.shape[db] == 1 and a.shape[da] != 1:
            a = a.sum(da, keepdim=True)
        elif a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in "
                               f"dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = math.prod(a.shape[d] for d in dims_a)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    m, n = math.prod(shape[:len(free_a)]), math.prod(shape[len(free_a):])  # not -1: may be 0
    pa = a.permute(free_a + dims_a).reshape(m, k) if a.dim() else a.reshape(1, 1)
    pb = b.permute(dims_b + free_b).reshape(k, n) if b.dim() else b.reshape(1, 1)
    return _finish(pa.mm(pb).reshape(shape), False, out, "tensordot", (a, b))


def kron(input, other, *, out=None):
    """Every element of input times all of other: interleave the dims, multiply, merge pairs."""
    n = builtins.max(input.dim(), other.dim())
    sa = (1,) * (n - input.dim()) + tuple(input.shape)
    sb = (1,) * (n - other.dim()) + tuple(other.shape)
    a, b = input, other
    for _ in range(n - input.dim()):
        a = a.unsqueeze(0)
    for _ in range(n - other.dim()):
        b = b.unsqueeze(0)
    for d in range(n):
        a, b = a.unsqueeze(2 * d + 1), b.unsqueeze(2 * d)
    return _finish((a * b).reshape([x * y for x, y in zip(sa, sb)]), False, out)


def cross(input, other, dim=None, *, out=None):
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=_user_stacklevel())
        shape = broadcast_shapes(input.shape, other.shape)
        dim = next((d for d, s in enumerate(shape) if s == 3), -1)
    return _finish(_op("linalg_cross")(input, other, dim), False, out, "cross", (input, other))


def inverse(input, *, out=None):
    return _finish(_op("linalg_inv")(input), False, out, "linalg_inv", (input,))


def det(input):
    return _op("linalg_det")(input)


def logdet(input):
    """log(det): NaN for a negative determinant, -inf for a zero one (like PyTorch); for a
    complex input log(sign) + log|det|, the principal branch."""
    sign, logabsdet = _op("linalg_slogdet")(input)
    if input.is_complex():
        return sign.log() + logabsdet
    return where(sign < 0, math.nan, logabsdet)


def slogdet(input, *, out=None):
    return _finish_tuple("slogdet", ["sign", "logabsdet"], _op("linalg_slogdet")(input), out)


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
    "equivalent results for all valid (symmetric positive definite) inputs.")
def cholesky(input, upper=False, *, out=None):
    """The deprecated torch.cholesky: linalg.cholesky, warning once per process, its errors
    named "cholesky"."""
    warn_once(_CHOLESKY_DEPRECATED)
    try:
        return _finish(_op("linalg_cholesky")(input, upper), False, out, "cholesky", (input,))
    except RuntimeError as e:
        if not str(e).startswith("linalg.cholesky: "):
            raise
        raise type(e)(str(e).removeprefix("linalg.")) from None


def qr(input, some=True, *, out=None):
    return _finish_tuple("qr", ["Q", "R"],
                         _op("linalg_qr")(input, "reduced" if some else "complete"), out)


def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: U, S and V (not Vh); without compute_uv, U and V are zeros."""
    U, S, Vh = _op("linalg_svd")(input, not some if compute_uv else False, None)
    V = Vh.mH
    if not compute_uv:
        U, V = zeros_like(U), zeros_like(V)
    return _finish_tuple("svd", ["U", "S", "V"], (U, S, V), out)


METHODS = dict(outer=outer, ger=outer, cross=cross, kron=kron, inverse=inverse, det=det,
               logdet=logdet, slogdet=slogdet, cholesky=cholesky, qr=qr, svd=svd)

__all__ = ["cholesky", "cross", "det", "einsum", "ger", "inverse", "kron", "logdet", "outer", "qr",
           "slogdet", "svd", "tensordot"]
