"""torch._foreach_*: one op applied to every tensor of a list. In PyTorch these are the
multi-tensor kernels the optimizers use (on CUDA they fuse a whole list into a few launches; on
the CPU they loop over the per-tensor op); here each is that loop over ember's per-tensor op, so
autograd sees the per-tensor ops.

`_foreach_X(tensors, ...)` returns a tuple of new tensors; `_foreach_X_(tensors, ...)` changes
the tensors in place and returns the list. A binary op's second operand is a list of tensors or
of numbers (one per tensor), or one number or one tensor for every tensor of the list."""
from .._core.tensor import Tensor
from .._core.dtype import promote_types
from .._aten.elementwise import _check_sub, broadcast_shape, check_inplace
from .._dispatch.dispatcher import lookup as _op
from .. import _refs as R   # imported after the op families: their functions are all there

UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p "
         "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()
BINARY = "add sub mul div pow clamp_max clamp_min maximum minimum".split()
METHODS = {}


def _check_lengths(tensors, *others):
    """PyTorch's foreach argument checks: a non-empty tensor list, and every other list (tensors
    or numbers) of its length."""
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if isinstance(other, (list, tuple)) and len(other) != len(tensors):
            # an empty list reads as an empty scalar list, as PyTorch's overload resolution has it
            if other and all(isinstance(o, Tensor) for o in other):
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                                   f"{len(tensors)} and {len(other)}")
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")


def _per_tensor(operand, n):
    """The operand for each of n tensors: a list's elements, else the one value n times."""
    return operand if isinstance(operand, (list, tuple)) else [operand] * n


def _elementwise(name):
    """The per-tensor function and its in-place form (the Tensor's in-place method)."""
    if name in ("maximum", "minimum"):
        return _extremum(name)

    def fn(*args, **kwargs):
        return getattr(R, name)(*args, **kwargs)

    def inplace(a, *args, **kwargs):
        return getattr(a, name + "_")(*args, **kwargs)
    return fn, inplace


def _extremum(name):
    """maximum / minimum: a number (or 0-dim tensor) second operand is the clamp of that side, as
    in PyTorch's Scalar overloads; a tensor operand has no in-place Tensor method, so its result
    is copied in after the same cast check every in-place op makes."""
    clamp = "clamp_min" if name == "maximum" else "clamp_max"

    def fn(a, b):
        if isinstance(b, Tensor) and b.dim():
            return getattr(R, name)(a, b)
        return getattr(R, clamp)(a, b)

    def inplace(a, b):
        if isinstance(b, Tensor) and b.dim():
            check_inplace(a, promote_types(a.dtype, b.dtype), name + "_")
            return a.copy_(getattr(R, name)(a, b))
        return getattr(a, clamp + "_")(b)
    return fn, inplace


def _define_unary(name):
    fn, inplace = _elementwise(name)

    def foreach(self):
        _check_lengths(self)
        return tuple(fn(t) for t in self)

    def foreach_(self):
        _check_lengths(self)
        for t in self:
            inplace(t)
        return self
    return foreach, foreach_


def _define_binary(name):
    fn, inplace = _elementwise(name)

    def foreach(self, other, **kwargs):
        if not isinstance(self, (list, tuple)):   # _foreach_pow(scalar, tensors)
            _check_lengths(other)
            return tuple(fn(self, t) for t in other)
        _check_lengths(self, other)
        return tuple(fn(a, b, **kwargs) for a, b in _pairs(name, self, other))

    def foreach_(self, other, **kwargs):
        _check_lengths(self, other)
        for a, b in _pairs(name, self, other):
            inplace(a, b, **kwargs)
        return self
    return foreach, foreach_


def _pairs(name, self, other):
    """The (tensor, operand) pairs of a binary foreach op, checked in PyTorch's order: its
    foreach sub refuses bool operands first (sub_check), then with a list of tensors each pair
    must broadcast, so a size mismatch is the error reported even where the per-tensor op would
    refuse the dtype first (maximum of complex, pow of bool)."""
    if isinstance(other, Tensor) and other.dim() and name in ("add", "mul", "div"):
        # the `.Tensor` overload: one 0-dim tensor for every tensor of the list
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                           f"dimensions and {other.numel()} elements.")
    others = _per_tensor(other, len(self))
    if isinstance(other, (list, tuple)):
        for a, b in zip(self, others):
            if name == "sub":
                _check_sub(a, b, None)
            if isinstance(b, Tensor):
                broadcast_shape(a._size, b._size)
    return zip(self, others)


def _scalars(values, n):
    """addcmul's/addcdiv's `value`/`scalars`: a number, a list of numbers, or a 1-d contiguous
    tensor of n numbers (PyTorch's `Tensor scalars` overload, read on the host)."""
    if isinstance(values, Tensor):
        if values.dim() != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got "
                               f"{values.dim()} instead.")
        if not values.is_contiguous():
            raise RuntimeError("Expected scalars to be contiguous.")
        if values.numel() != n:
            raise RuntimeError(f"Expected length of scalars to match input of length {n} but "
                               f"got {values.numel()} instead.")
        values = values.tolist()
    return _per_tensor(values, n)


def _define_pointwise(name):
    """addcmul / addcdiv: self + value * (tensor1 op tensor2), per tensor. The fourth argument is
    `value` (one number) or `scalars` (a list of numbers or a tensor of them, one per tensor)."""
    fn, inplace = _elementwise(name)

    def foreach(self, tensor1, tensor2, value=1, *, scalars=None):
        value = value if scalars is None else scalars
        _check_lengths(self, tensor1, tensor2, value)
        return tuple(fn(a, b, c, value=v) for a, b, c, v in
                     zip(self, tensor1, tensor2, _scalars(value, len(self))))

    def foreach_(self, tensor1, tensor2, value=1, *, scalars=None):
        value = value if scalars is None else scalars
        _check_lengths(self, tensor1, tensor2, value)
        for a, b, c, v in zip(self, tensor1, tensor2, _scalars(value, len(self))):
            inplace(a, b, c, value=v)
        return self
    return foreach, foreach_


_foreach_addcmul, _foreach_addcmul_ = _define_pointwise("addcmul")
_foreach_addcdiv, _foreach_addcdiv_ = _define_pointwise("addcdiv")


def _foreach_lerp(self, tensors1, weight):
    _check_lengths(self, tensors1, weight)
    return tuple(R.lerp(a, b, w) for a, b, w in zip(self, tensors1, _per_tensor(weight, len(self))))


def _foreach_lerp_(self, tensors1, weight):
    _check_lengths(self, tensors1, weight)
    for a, b, w in zip(self, tensors1, _per_tensor(weight, len(self))):
        a.lerp_(b, w)
    return self


def _foreach_clone(self, *, memory_format=None):
    _check_lengths(self)
    return tuple(t.clone(memory_format=memory_format) if memory_format is not None
                 else t.clone() for t in self)


def _foreach_copy_(self, src, non_blocking=False):
    _check_lengths(self, src)
    for a, b in zip(self, src):
        a.copy_(b, non_blocking)
    return self


def _foreach_zero_(self):
    _check_lengths(self)
    for t in self:
        t.zero_()
    return self


def _foreach_norm(self, ord=2, dtype=None):
    _check_lengths(self)
    norm = _op("linalg_vector_norm")
    return tuple(norm(t, ord, None, False, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """The sum of |x| ** ord over each tensor (a norm before its root)."""
    _check_lengths(self)
    return tuple(R.sum(R.abs(t if dtype is None else t.to(dtype)) ** ord)
                 for t in self)


def _foreach_max(self):
    _check_lengths(self)
    if any(t.numel() == 0 for t in self):
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over "
                           "zero elements is undefined.")
    return tuple(R.amax(t) for t in self)


def _foreach_mm(self, mat2):
    _check_lengths(self, mat2)
    return tuple(R.mm(a, b) for a, b in zip(self, mat2))


for _name in UNARY:
    globals()[f"_foreach_{_name}"], globals()[f"_foreach_{_name}_"] = _define_unary(_name)
for _name in BINARY:
    globals()[f"_foreach_{_name}"], globals()[f"_foreach_{_name}_"] = _define_binary(_name)
for _name in [n for n in globals() if n.startswith("_foreach_")]:
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
del _name

__all__ = sorted(n for n in globals() if n.startswith("_foreach_"))
