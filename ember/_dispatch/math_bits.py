"""The Conjugate and Negative dispatch keys: PyTorch's lazy conjugate and negative bits.

`x.conj()` of a complex tensor is a view of `x`'s memory with the conjugate bit set
(`is_conj()`); `torch._neg_view(x)` (and `x.conj().imag`) one with the negative bit. The value
the view stands for is its memory conjugated / negated; nothing is computed when it is made.
A tensor carrying a bit picks the key "Conjugate" or "Negative" (the bits are its `_sparse`
mark, ember/_core/math_bits.py), and the dispatcher sends the call here, to the keys' one
fallback (PyTorch's MathOpFallback, aten/src/ATen/native/MathBitsFallback.h):

- a view op (`transpose`, `select`, `view_as_real`, ...) runs on the memory as it is, and its
  outputs carry the input's bits: a view of a conjugate view is a conjugate view;
- any other op runs on materialized copies of the arguments with bits (the bits applied);
- an in-place op on a tensor with bits runs on its materialized copy, which is then written
  back through the bits (`x.conj().add_(1j)` adds -1j to x): PyTorch's desugaring of
  `x.add_(2)` into `x.conj_().add_(2).conj_()`, done with a copy so that an input sharing the
  memory reads the values from before the write;
- `copy_` understands the bits of both sides (a copy into a conjugate view stores the
  conjugates), and `_conj` / `_neg_view` toggle the bit of their input's view.

Autograd sits above these keys: it records the op as called, with the views, and the backward
formulas see them too (conj's derivative is `grad.conj()`, itself a lazy view).
"""
from .._core.grad_mode import no_grad
from .._core.math_bits import math_bits, set_math_bits, MathBits, MATH_KEYS
from .._core.tensor import Tensor, _alias
from . import dispatcher as _dispatcher
from .dispatcher import cached_lookup


def plain(t):
    """`t`'s memory as a tensor without bits (an alias: the same storage and view)."""
    return _alias(t)


def resolved(t):
    """A new tensor holding the values `t` stands for (its bits applied), without bits. Runs
    below Autograd: the caller's op is the one the graph records."""
    bits = math_bits(t)
    key = t._device._key
    out = plain(t)
    if bits.conj:
        out = cached_lookup("conj_physical").redispatch(key, (out,))
        if bits.neg:
            cached_lookup("neg_").redispatch(key, (out,))
    elif bits.neg:
        out = cached_lookup("neg").redispatch(key, (out,))
    return out


def copy_into(dst, src, non_blocking=False):
    """`dst.copy_(src)` for tensors with bits: `src`'s values, and `dst`'s memory holding
    them with `dst`'s bits undone (conjugation and negation are their own inverses)."""
    if type(src._sparse) is MathBits:
        src = resolved(src)
    bits = math_bits(dst)
    target = dst
    if bits is not None:
        target = plain(dst)
        if src.dtype is not dst.dtype:   # (a bool can be copied into a negative view)
            with no_grad():
                src = src.to(dst.dtype)
        src = resolved(set_math_bits(_alias(src), bits.conj, bits.neg))
    args = (target, src, non_blocking)
    _copy.redispatch(_copy._key_and_grad(args)[0], args)
    return dst


def _toggle(conj, neg):
    """The kernel wrapper of `_conj` / `_neg_view`: the alias of its input, with its bit
    flipped (a conjugate view's conj() is a view of plain values again)."""
    def wrap(kernel):
        def toggled(self):
            out = kernel(self)
            bits = math_bits(self)
            if bits is None:
                return set_math_bits(out, conj, neg)
            return set_math_bits(out, bits.conj ^ conj, bits.neg ^ neg)
        return toggled
    return wrap


def math_bits_fallback(op, key, args):
    handler = _HANDLERS.get(op)
    if handler is not None:
        return handler(*args)
    if op._is_view or _is_inplace_view(op):
        return _view(op, args)
    mutated = None
    new = list(args)
    for i in op._tensor_pos:
        a = args[i]
        if isinstance(a, Tensor) and type(a._sparse) is MathBits:
            new[i] = resolved(a)
            if op._mutates and i == 0:
                mutated = a
    for i in op._list_pos:
        tensors = args[i]
        if tensors and any(type(t._sparse) is MathBits for t in tensors if t is not None):
            if op.schema.arguments[i].mutable:
                raise RuntimeError(
                    f"The math bits' fallback doesn't support mutable TensorLists with "
                    f"conjugate or negative inputs. Please materialize the tensors of the "
                    f"mutable TensorList before calling {op.name}")
            new[i] = [resolved(t) if t is not None and type(t._sparse) is MathBits else t
                      for t in tensors]
    new = tuple(new)
    out = op.redispatch(op._key_and_grad(new)[0], new)
    if mutated is not None:
        copy_into(mutated, new[0])
        return mutated if out is new[0] else out
    return out


def _view(op, args):
    """A view op (or an in-place view op, `t_`) on the memory as it is; its outputs carry the
    bits of the tensor they view."""
    source = args[op._tensor_pos[0]]
    bits = math_bits(source)
    first = source._device._key
    out = op.redispatch(first, args)
    if bits is not None and out is not source:
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, Tensor):
                set_math_bits(t, bits.conj and t.dtype.is_complex, bits.neg)
    return out


_inplace_views = {}


def _is_inplace_view(op):
    """Whether `op` is the in-place form of a view op (`t_`, `unsqueeze_`, `as_strided_`):
    it changes the tensor's view, not its values."""
    known = _inplace_views.get(op)
    if known is None:
        known = False
        if op._mutates and op.schema.name.endswith("_"):
            base = _dispatcher._packets.get((op.namespace, op.schema.name[:-1]))
            known = base is not None and any(o._is_view for o in base._overloads.values())
        _inplace_views[op] = known
    return known


_copy = cached_lookup("copy_")


def _run_as_is(op):
    """An op whose kernel reads the bits itself."""
    def run(*args):
        return op.redispatch(args[0]._device._key, args)
    return run


_HANDLERS = {_copy: copy_into}
for _name in ("_conj", "_neg_view"):
    _HANDLERS[cached_lookup(_name)] = _run_as_is(cached_lookup(_name))

for _key in MATH_KEYS:
    _dispatcher.register_fallback(_key, math_bits_fallback)

for _name, _bits in (("_conj", (True, False)), ("_neg_view", (False, True))):
    for _backend in ("CPU", "Meta"):
        _dispatcher.register_kernel(cached_lookup(_name), _backend,
                                    _toggle(*_bits)(cached_lookup("alias")._table[_backend]))
