"""Forward-mode AD (torch.autograd.forward_ad): dual tensors carry a tangent through every op.

Inside `dual_level()`, `make_dual(x, t)` gives a view of `x` whose tangent is `t`. A dispatch
mode (pushed when the level is entered) sees every op call; when an argument has a tangent, it
runs the op on the primals (below itself, so reverse-mode autograd still records the primal
computation) and attaches to each floating output its tangent, the Jacobian-vector product of
the op at the primals. `unpack_dual` reads it back; leaving the level drops every tangent.

Note [one mechanism for every op's tangent]
    A tangent needs a forward derivative for each op. PyTorch writes one per op beside the
    backward one in derivatives.yaml. ember derives it from the backward formula instead, by
    the "double vjp" (transpose) trick: the vjp `v = J^T u` is linear in the cotangent `u`, so
    differentiating `<v, t>` with respect to `u` gives `J t`. With `u` a zero tensor that
    requires grad, one backward with `create_graph=True` builds `v(u)`, and a second backward
    of `v` with grad_outputs `t` yields the tangent. It costs a forward, a backward and a
    double backward, and needs the backward formulas to be differentiable (they are written
    with ops, so double backward works). Direct formulas (`_JVP` below) serve the ops on the
    hot path of ordinary models, where the three passes would be paid on every call:
    elementwise arithmetic and the common unary functions, the matrix products, and the
    ops that are linear in their tensor argument (views, reshapes, sums, joins, copies), whose
    tangent is the same op applied to the tangent. Ops with a composite kernel decompose, so
    their pieces carry the tangent.

Only one level exists at a time, as in PyTorch. A view's tangent is the same view of its base's
tangent, and an in-place op writes the tangent in place (`_write_tangent`), so writing through a
view updates its base's tangent; make_dual's and unpack_dual's aliases are views that do not
carry tangents to their base.
"""
import weakref
from collections import namedtuple

from .._core.tensor import Tensor, _require_grad
from .._core.grad_mode import _grad_state
from .._dispatch import dispatcher as _dispatcher
from .._dispatch.dispatcher import cached_lookup as _op
from .._dispatch.vmap_state import refuse_batched, transforms_active as _transforms_active, \
    levels as _vmap_levels, legacy_levels as _legacy_levels

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1
_duals = []  # weakrefs to the tensors given a tangent at the current level
_fwd_grad_enabled = [True]  # torch._C._set_fwd_grad_enabled: off, ops give no tangents


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """unpack_dual's result: the primal (a view without tangent) and the tangent (or None)."""
    __slots__ = ()


def enter_dual_level():
    """Enter a new forward grad level (only one may exist); returns its index, 0."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _dispatcher._modes.append(forward_ad_mode)
    return _current_level


def exit_dual_level(*, level=None):
    """Leave the level: every tangent made in it is deleted."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level or level < 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in _duals:
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw_grad", None)
    _duals.clear()
    modes = _dispatcher._modes
    for i in range(len(modes) - 1, -1, -1):
        if modes[i] is forward_ad_mode:
            del modes[i]
            break
    _current_level = level - 1


class dual_level:
    """Context manager (and decorator) for a forward AD level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose tangent is `tangent` at the current level. Called directly
    inside torch.func.vmap on batched tensors, it is refused as PyTorch refuses it (functorch's
    jvp makes its duals with `_make_dual`, under its own level); inside torch._vmap_internals'
    vmap (gradcheck's check_batched_forward_grad) a batched tangent is taken, as PyTorch's
    legacy batching does."""
    if not (_vmap_levels and _vmap_levels[-1][0] in _legacy_levels):
        refuse_batched((tensor, tangent), "aten::_make_dual",
                       "; the fallback path doesn't work on out= or view ops.")
    return _make_dual(tensor, tangent, level=level)


def _make_dual(tensor, tangent, *, level=None):
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if _tangent(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if _tangent(tangent) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if tangent._size != tensor._size:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor._size)} "
            f"while the given forward gradient is of size {list(tangent._size)}.")
    if not _transforms_active() and not _overlaps(tensor) and not _has_same_meta(tangent, tensor):
        tangent = _laid_out_as(tensor, tangent)
    dual = _primal(tensor)
    _set_tangent(dual, tangent)
    return dual


def _has_same_meta(tangent, primal):
    """Whether `tangent` is laid out in memory as `primal` is: sizes, strides (of dims longer
    than 1), storage offset (of a non-empty tensor), storage size, conj and neg bits. Then
    every view of the primal is the same view of the tangent, and make_dual keeps the tangent
    itself; otherwise it gets a copy laid out so."""
    if tangent._size != primal._size or tangent.is_conj() != primal.is_conj() or \
            tangent.is_neg() != primal.is_neg():
        return False
    if any(a != b and n > 1 for a, b, n in zip(tangent.stride(), primal.stride(), primal._size)):
        return False
    if primal.numel() and tangent.storage_offset() != primal.storage_offset():
        return False
    return tangent.untyped_storage().nbytes() // tangent.element_size() == \
        primal.untyped_storage().nbytes() // primal.element_size()


def _overlaps(t):
    """Whether elements of `t` share memory (an expanded dim): nothing can be written into it."""
    return any(st == 0 and n > 1 for st, n in zip(t.stride(), t._size))


def _laid_out_as(primal, values):
    """A copy of `values` laid out as `primal` (see _has_same_meta)."""
    out = _op("_new_zeros_with_same_feature_meta")(values, primal)
    if primal.is_conj():
        out = out.conj()
    if primal.is_neg():
        out = out._neg_view()
    _op("copy_")(out, values)
    return out


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor: the primal is a view with no tangent."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    t = _tangent(tensor)
    if t is None and tensor._base is not None:
        t = _tangent_through_base(tensor)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_primal(tensor), t)


def _is_fwd_grad_enabled():
    """Whether ops compute tangents for dual inputs (torch._C._is_fwd_grad_enabled)."""
    return _fwd_grad_enabled[0]


def _set_fwd_grad_enabled_flag(mode):
    _fwd_grad_enabled[0] = bool(mode)


class _set_fwd_grad_enabled:
    """Context manager (and decorator) turning tangent computation on or off."""

    def __init__(self, mode):
        self.prev = _is_fwd_grad_enabled()
        self.mode = mode
        _set_fwd_grad_enabled_flag(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set_fwd_grad_enabled_flag(self.prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _set_fwd_grad_enabled(self.mode):
                return fn(*args, **kwargs)
        return wrapper


def _zeros_like(t):
    from .graph import zeros
    return zeros(t._size, t.dtype, t._device)


# ---- the mode ---------------------------------------------------------------------------------
def _tangent(t):
    return t.__dict__.get("_fw_grad")


def _set_tangent(t, tangent):
    if tangent.dtype is not t.dtype:
        tangent = _op("_to_copy")(tangent, dtype=t.dtype)
    t.__dict__["_fw_grad"] = tangent
    _duals.append(weakref.ref(t))




def _below_mode(op, args):
    """Call `op` with this mode skipped (the primal computation and `_primal`'s alias)."""
    modes = _dispatcher._modes
    level = len(modes) - 1
    while level >= 0 and modes[level] is not forward_ad_mode:
        level -= 1
    return _dispatcher.call_in_modes(op, args, level - 1)


def _primal(t):
    """A view of `t` without its tangent (reverse-mode differentiable: an alias op). It is not
    a forward-differentiable view: an in-place op on it gives its base no tangent."""
    out = _below_mode(_op("alias"), (t,))
    out.__dict__["_fw_nondiff_view"] = True
    return out


def _write_tangent(self, t):
    """`self` was written in place and its new tangent is `t`. As in PyTorch, the tangent
    `self` has is written in place: a view's tangent is a view of its base's, so the base's
    tangent changes too, and a tangent passed to make_dual sees the change. A forward-
    differentiable view without a tangent first gets one, a view of its base's tangent
    (_view_tangent). Where there is no memory to write into (no tangent, or one that overlaps
    itself, or a leaf tangent that requires grad) `t` becomes the tangent; so it does under
    a functorch transform (jvp, vmap), whose tangents may be batched where `self`'s is not."""
    if _transforms_active():
        _set_tangent(self, t)
        return
    current = _tangent(self)
    if current is None:
        current = _view_tangent(self)
    if current is None or (current._rg and current.grad_fn is None) or _overlaps(current):
        _set_tangent(self, t)
        return
    _op("copy_")(current, t)


def _view_tangent(view):
    """The tangent of a view that has none, made a view of its base's tangent: a base without
    one gets zeros laid out as itself, so the view's tangent is the view's own strides on it.
    None where the view is not forward differentiable (make_dual's and unpack_dual's aliases,
    views that change the conj/neg bits). A view_as_real / view_as_complex view (or a view of
    one) has its replay steps run on the base's tangent instead (autograd/views.py)."""
    base = view._base
    recipe = view._view_fn
    if base is None or "_fw_nondiff_view" in view.__dict__ or \
            (view.dtype is not base.dtype and recipe is None) or \
            base.is_conj() or base.is_neg() or view.is_conj() or view.is_neg() or _overlaps(base):
        return None
    base_t = _tangent(base)
    if base_t is None or not _has_same_meta(base_t, base):
        base_t = _laid_out_as(base, base_t if base_t is not None else _zeros_like(base))
        _set_tangent(base, base_t)
    if recipe is not None:
        from .views import replay_view
        t = replay_view(recipe, base_t)
    else:
        t = _op("as_strided")(base_t, view._size, view.stride(), view.storage_offset())
    _set_tangent(view, t)
    return t


def _dual_inputs(op, args):
    """(positions, tangents) of the arguments carrying a tangent; list arguments by (i, k)."""
    found = []
    for i in op._tensor_pos:
        t = _tangent_of(args[i])
        if t is not None:
            found.append(((i, None), t))
    for i in op._list_pos:
        for k, a in enumerate(args[i]):
            t = _tangent_of(a)
            if t is not None:
                found.append(((i, k), t))
    return found


def _tangent_of(a):
    """The tangent an argument carries: its own, or (a view) its view of its base's."""
    if not isinstance(a, Tensor):
        return None
    t = a.__dict__.get("_fw_grad")
    if t is None and a._base is not None:
        t = _tangent_through_base(a)
    return t


def _tangent_through_base(view):
    """A view made before its base got a tangent (an in-place write through another view gave
    it one) has the same view of the base's tangent, as PyTorch's views read theirs."""
    if "_fw_grad" not in view._base.__dict__:
        return None
    return _view_tangent(view)


def forward_ad_mode(op, args, mode_level):
    duals = _dual_inputs(op, args)
    if not duals or not _fwd_grad_enabled[0]:
        return _dispatcher.call_in_modes(op, args, mode_level - 1)
    if op._composite is not None and op not in _JVP:
        return op._composite(*args)
    if op._mutates:
        return _inplace(op, args, duals)
    primals = list(args)
    for (i, k), _ in duals:
        if k is None:
            primals[i] = _primal(args[i])
        else:
            primals[i] = list(primals[i]) if primals[i] is args[i] else primals[i]
            primals[i][k] = _primal(args[i][k])
    # the primal call gets the dual tensors themselves: what reverse mode saves of them keeps
    # its tangent, so backward formulas run later (forward over reverse) carry tangents too
    out = _dispatcher.call_in_modes(op, args, mode_level - 1)
    tangents = {pos: t for pos, t in duals}
    rule = _JVP.get(op)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if rule is not None:
        result = rule(primals, tangents, out)
        result = result if isinstance(result, (tuple, list)) else (result,)
    else:
        result = _jvp_by_double_vjp(op, primals, tangents, outs)
    for o, t in zip(outs, result):
        if t is not None and isinstance(o, Tensor) and (o.dtype.is_floating_point or
                                                        o.dtype.is_complex):
            if t._size != o._size:
                t = _op("expand")(t, o._size)
            _set_tangent(o, t)
            _tangent_on_saved_output(o, t)
    return out


def _tangent_on_saved_output(o, t):
    """The copy of `o` its own node saved (SavedTensor keeps an alias of an output) gets the
    tangent too, for backward formulas that read `result`."""
    node = o.grad_fn
    saved = getattr(node, "_saved", None)
    if not saved:
        return
    from .graph import SavedTensor
    for value in saved.values():
        if isinstance(value, SavedTensor) and value._is_output and \
                value._output_nr == o._output_nr:
            value._t.__dict__["_fw_grad"] = t
            _duals.append(weakref.ref(value._t))


def _inplace(op, args, duals):
    """An in-place op with a dual argument: the tangent of its out-of-place twin, computed
    before `self` is overwritten, becomes `self`'s tangent."""
    self = args[0]
    functional = op.functional
    if functional is None and op.name == "aten::copy_":
        src = args[1]
        t = _tangent(src) if isinstance(src, Tensor) else None
        if t is None:
            t = _zeros_like(self) if _tangent(self) is not None else None
        _below_mode(op, args)
        if t is not None:
            _write_tangent(self, _op("expand")(t, self._size) if t._size != self._size else
                           _op("clone")(t))
        return self
    if functional is None and op.name in _ZEROING:
        _below_mode(op, args)
        _write_tangent(self, _zeros_like(self))
        return self
    if functional is None and op.name in _INPLACE_VIEWS:
        t = _tangent(self)
        _below_mode(op, args)
        if t is not None:
            t = _op("clone")(t)
            op(t, *args[1:])
            _set_tangent(self, t)
        return self
    if functional is None:
        functional = _FUNCTIONAL.get(op.name)
    if functional is None:
        raise NotImplementedError(f"Trying to use forward AD with {op.name} that does not "
                                  "support it because it has not been implemented yet.")
    functional = _op(functional) if isinstance(functional, str) else functional
    res = functional(args[1], args[0]) if op.name == "aten::polygamma_" else functional(*args)
    t = _tangent(res) if isinstance(res, Tensor) else None
    _below_mode(op, tuple(_primal(a) if isinstance(a, Tensor) and _tangent(a) is not None
                          else a for a in args))
    if t is None:
        return self
    if op.name in _INPLACE_VIEWS:   # self's sizes and strides changed: so do its tangent's
        _set_tangent(self, t)
    else:
        _write_tangent(self, t)
    return self


_ZEROING = ("aten::fill_.Scalar", "aten::zero_")
_INPLACE_VIEWS = ("aten::transpose_", "aten::swapdims_", "aten::swapaxes_", "aten::t_",
                  "aten::squeeze_", "aten::squeeze_.dim", "aten::squeeze_.dims", "aten::unsqueeze_")
# in-place ops declared on their own line: their out-of-place twin (polygamma takes n first)
_FUNCTIONAL = {"aten::pow_.Tensor": "pow.Tensor_Tensor", "aten::polygamma_": "polygamma",
               "aten::floor_divide_.Tensor": "floor_divide", "aten::fill_.Tensor": "fill.Tensor"}


def _jvp_by_double_vjp(op, primals, tangents, outs):
    """The tangents of `op`'s outputs from its backward formulas (Note [one mechanism])."""
    from ..autograd import variable_type as VT
    from . import grad as _grad
    d = op.derivative
    if d is VT._NONDIFF:
        return [None] * len(outs)
    if d is None or d is VT._NOT_IMPLEMENTED:
        raise NotImplementedError(f"Trying to use forward AD with {op.name.split('::')[-1]} "
                                  "that does not support it because it has not been "
                                  "implemented yet.")
    args = list(primals)
    leaves, ts = [], []
    keep_graph = False  # whether the tangent must stay differentiable (reverse over forward)
    for (i, k), t in tangents.items():
        x = args[i] if k is None else args[i][k]
        keep_graph = keep_graph or x._rg or t._rg
        if not x._rg:
            x = _require_grad(_primal(x))
            if k is None:
                args[i] = x
            else:
                args[i] = list(args[i])
                args[i][k] = x
        leaves.append(x)
        ts.append(t)
    prev = _grad_state.enabled
    _grad_state.enabled = True
    try:
        res = op(*args)
        res = res if isinstance(res, (tuple, list)) else (res,)
        diff = [k for k, r in enumerate(res) if isinstance(r, Tensor) and r._rg]
        if not diff:
            return [None] * len(outs)
        us = [_require_grad(_zeros_like(res[k])) for k in diff]
        vs = _grad([res[k] for k in diff], leaves, us, create_graph=True, allow_unused=True)
        pairs = [(v, t) for v, t in zip(vs, ts) if v is not None and v._rg]
        result = [None] * len(outs)
        if not pairs:
            return result
        jv = _grad([v for v, _ in pairs], us, [t for _, t in pairs], create_graph=True,
                   allow_unused=True)
    except NotImplementedError as e:  # a backward formula it needs is missing (igamma's input)
        raise NotImplementedError(f"Trying to use forward AD with {op.name.split('::')[-1]} "
                                  "that does not support it because it has not been "
                                  f"implemented yet. ({e})") from None
    finally:
        _grad_state.enabled = prev
    for k, t in zip(diff, jv):
        if t is None:
            t = _zeros_like(res[k])
        result[k] = t if keep_graph else t.detach()
    return result


# ---- direct formulas for the hot ops ----------------------------------------------------------
_JVP = {}


def _t(tangents, i):
    return tangents.get((i, None))


def _sum_tangents(*terms):
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else _op("add.Tensor")(total, term)
    return total


def _linear_in_first(op):
    """An op linear in its one tensor argument: the tangent is the op of the tangent."""
    def rule(primals, tangents, out):
        return op(_t(tangents, 0), *primals[1:])
    return rule


def _linear_in_list(op):
    """cat/stack: the op of the tangents, zeros standing in for primals without one."""
    def rule(primals, tangents, out):
        ts = [tangents.get((0, k)) for k in range(len(primals[0]))]
        ts = [t if t is not None else _zeros_like(p) for t, p in zip(ts, primals[0])]
        return op(ts, *primals[1:])
    return rule


def _add(sign):
    def rule(primals, tangents, out):
        ta, tb = _t(tangents, 0), _t(tangents, 1)
        alpha = primals[2] if len(primals) > 2 else 1
        if tb is not None and (alpha != 1 or sign < 0):
            tb = _op("mul.Tensor")(tb, alpha * sign)
        return _sum_tangents(ta, tb)
    return rule


def _apply(op, *args):
    """op(*args), or None when a tangent among them is missing (a tensor slot holding None;
    the bias of `linear` may be None and is passed through)."""
    return None if any(a is None for a in args[:2]) else op(*args)


def _mul(primals, tangents, out):
    a, b = primals[0], primals[1]
    mul = _op("mul.Tensor")
    return _sum_tangents(_apply(mul, _t(tangents, 0), b), _apply(mul, a, _t(tangents, 1)))


def _div(primals, tangents, out):
    if primals[2] is not None:  # rounding division: piecewise constant
        return _zeros_like(out)
    b = primals[1]
    ta, tb = _t(tangents, 0), _t(tangents, 1)
    num = _sum_tangents(ta, _apply(_op("mul.Tensor"), _apply(_op("neg"), tb), out))
    return _op("div.Tensor_mode")(num, b, None)


def _unary(formula):
    """f(x) with tangent t: t * f'(x), f' written from x and the result."""
    def rule(primals, tangents, out):
        return _op("mul.Tensor")(_t(tangents, 0), formula(primals[0], out))
    return rule


def _mm_like(primals, tangents, out, op):
    a, b = primals[0], primals[1]
    return _sum_tangents(_apply(op, _t(tangents, 0), b), _apply(op, a, _t(tangents, 1)))


def _addmm(primals, tangents, out):
    self, m1, m2, beta, alpha = primals
    mm = _op("mm")
    prod = _sum_tangents(_apply(mm, _t(tangents, 1), m2), _apply(mm, m1, _t(tangents, 2)))
    ts = _t(tangents, 0)
    terms = []
    if prod is not None:
        terms.append(prod if alpha == 1 else _op("mul.Tensor")(prod, alpha))
    if ts is not None and beta != 0:
        terms.append(ts if beta == 1 else _op("mul.Tensor")(ts, beta))
    return _sum_tangents(*terms)


def _linear(primals, tangents, out):
    x, w, b = primals
    tx, tw, tb = _t(tangents, 0), _t(tangents, 1), _t(tangents, 2)
    linear = _op("linear")
    return _sum_tangents(_apply(linear, tx, w, None), _apply(linear, x, tw, None), tb)


def _native_dropout(primals, tangents, out):
    """The output's tangent is the input's through the primal's own mask: re-running the op
    (as the double-vjp trick would) draws a second mask. Scaled by 1/(1-p) unless train is
    False, train=None included, as PyTorch's forward formula does."""
    t, p, train = _t(tangents, 0), primals[1], primals[2]
    if train is False:
        return t, None
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return _op("mul.Tensor")(_op("mul.Tensor")(t, out[1]), scale), None


def _install():
    mul = _op("mul.Tensor")
    one_minus = (lambda y: _op("rsub.Tensor")(y, 1, 1))
    unary = {
        "neg": lambda x, y: -1.0,
        "exp": lambda x, y: y,
        "log": lambda x, y: _op("reciprocal")(x),
        "sin": lambda x, y: _op("cos")(x),
        "cos": lambda x, y: _op("neg")(_op("sin")(x)),
        "tanh": lambda x, y: one_minus(mul(y, y)),
        "sigmoid": lambda x, y: mul(y, one_minus(y)),
        "sqrt": lambda x, y: _op("reciprocal")(mul(y, 2)),
        "relu": lambda x, y: _op("gt.Tensor")(x, 0).to(x.dtype),
    }
    for name, f in unary.items():
        _JVP[_op(name)] = _unary(f)
    _JVP[_op("add.Tensor")] = _add(1)
    _JVP[_op("sub.Tensor")] = _add(-1)
    _JVP[_op("mul.Tensor")] = _mul
    _JVP[_op("div.Tensor_mode")] = _div
    for name in ("mm", "bmm", "matmul", "mv", "dot"):
        op = _op(name)
        _JVP[op] = (lambda op: lambda p, t, o: _mm_like(p, t, o, op))(op)
    _JVP[_op("addmm")] = _addmm
    _JVP[_op("linear")] = _linear
    _JVP[_op("native_dropout")] = _native_dropout
    # PyTorch's auto_element_wise formula: its backward op on the tangent (that op has no
    # derivative of its own, so the double-vjp trick cannot run through it)
    _JVP[_op("hardsigmoid")] = lambda p, t, o: _op("hardsigmoid_backward")(_t(t, 0), p[0])
    for name in ("view", "_unsafe_view", "permute", "transpose.int", "expand", "squeeze.dims",
                 "squeeze.dim", "squeeze", "unsqueeze", "select.int", "slice.Tensor", "narrow",
                 "diagonal", "alias", "clone", "t", "split.Tensor", "split_with_sizes",
                 "unbind.int", "flip", "roll", "tril", "triu", "sum.dim_IntList", "mean.dim",
                 "cumsum", "diag_embed", "unfold", "_to_copy"):
        op = _op(name)
        _JVP[op] = _linear_in_first(op)
    for name in ("cat", "stack"):
        op = _op(name)
        _JVP[op] = _linear_in_list(op)


_install()
