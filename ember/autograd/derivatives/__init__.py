"""Every op's backward formula (PyTorch's derivatives.yaml), one module per op family.

Rules for a formula:
- `derivative(op, {input: formula})` gives one formula per differentiable input; a key
  "a, b" gives one formula for several inputs that returns one gradient each and may take
  `needs` (which of them are wanted).
- A formula's parameter names say what it reads, and so what the forward saves: the op's
  argument names, `result` (or `result1`, ... for further outputs), `<arg>_shape` (the shape
  only, so the tensor itself is not kept alive), and `grad` (or `grads` for several outputs).
- Formulas are written with differentiable ember ops, so double backward works. Broadcasting
  is undone by the engine: a gradient larger than its input is summed down to the input's shape.
- Ops listed in `not_differentiable` produce outputs that never require grad; ops listed in
  `not_implemented` have no derivative in PyTorch either: backward through them raises.
- An in-place op derived from its schema line (`exp_` from `exp`) needs no entry: it reuses its
  out-of-place op's formulas and node name. An entry of its own overrides that.
- A view's copy (`slice_copy` of `slice`) needs none either: it reuses its view's formulas.
"""
from ..variable_type import derive_inplace_derivatives, derive_view_copy_derivatives, \
    not_implemented
from ..._aten.shape import VIEW_COPIES
from .complex_allowlist import mark_complex_refusals
from . import elementwise, special, reduction, sorting, linalg, nn, shape, indexing  # noqa: F401
from . import factory, fft, sparse  # noqa: F401


derive_inplace_derivatives()
derive_view_copy_derivatives(VIEW_COPIES)
not_implemented("detach_copy", listed=False)  # (PyTorch's result requires grad, backward raises)
mark_complex_refusals()
