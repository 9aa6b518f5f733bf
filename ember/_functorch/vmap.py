"""vmap: a function of one example run on a batch (torch.func.vmap, functorch's batching).

Inside `vmap(f)(x)`, `f` sees a BatchedTensor: a wrapper whose size is one example's (the
*logical* tensor) around the whole batch (the *physical* tensor, `_value`), with the batch
dimension `_bdim` of `_value` hidden, at a vmap `_level` (nested vmaps wrap wrappers, one level
each). While a vmap runs, a dispatch mode (PyTorch's DynamicLayerFrontMode) sees every op call:
an op whose arguments include a BatchedTensor goes to the `FuncTorchBatched` dispatch key --
the op's batching rule (ember/_functorch/batching_rules.py: move the batch dim to the front,
shift `dim` arguments, call the same op once on the physical tensors, wrap the result) or, for
ops without one, the fallback below, which runs the op once per example and stacks the results
(PyTorch's slow fallback). Autograd sits above the batching: an op on BatchedTensors that
require grad (a `grad` inside the vmap) records its node at the logical level, and the node's
backward formulas, run on batched gradients, are batched in turn -- which is how
`vmap(grad(f))` gives per-example gradients.
"""
import contextlib
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core.grad_mode import _grad_state
from .._core.tensor import Tensor, _wrap_dim
from .._core.torch_function import _disabled_torch_function_impl
from .._dispatch import dispatcher as _dispatcher
from .._dispatch.dispatcher import cached_lookup as _op, lookup as _lookup
from ..utils._pytree import tree_flatten, tree_unflatten, _broadcast_to_and_flatten

KEY = "FuncTorchBatched"

from .._dispatch import vmap_state as _vmap_state
from .._dispatch.vmap_state import levels as _levels, drawing as _drawing, RULES as _RULES
_fallback_warning = [True]


def _set_vmap_fallback_warning_enabled(enabled):
    """Warn when an op runs through the per-example fallback (on by default, as in PyTorch)."""
    _fallback_warning[0] = bool(enabled)


class BatchedTensor(Tensor):
    """One example's view of a batch: `_value` with its dim `_bdim` hidden, at vmap `_level`.
    (No __slots__ of its own: the fields live in the instance dict, so the layout equals
    Tensor's and a fresh tensor can become batched in place -- see `_random_op`.)
    Like PyTorch's C++ BatchedTensorImpl it is invisible to `__torch_function__`: ops reach the
    vmap dispatch mode, which unwraps it."""
    __torch_function__ = _disabled_torch_function_impl
    _plain_tensor_in_torch = True   # a torch.Tensor in PyTorch (C++ BatchedTensorImpl)

    @property
    def _stride_(self):
        st = list(self._value.stride())
        del st[self._bdim]
        return tuple(st)

    @property
    def _offset_(self):
        return self._value.storage_offset()

    def stride(self, dim=None):
        st = self._stride_
        return st if dim is None else st[dim if dim >= 0 else dim + len(st)]

    def storage_offset(self):
        return self._value.storage_offset()

    def _storage_(self):
        return self._value._storage_()

    def is_contiguous(self, memory_format=None):
        return _dispatch_free_contiguous(self._size, self._stride_)

    def _functorch_alias(self):
        """A new wrapper of the same batch, cut from logical-level autograd (SavedTensor and
        detach use it; the physical tensor's own history, an outer transform's, is kept)."""
        return _wrap(self._value, self._bdim, self._level)

    def detach(self):
        return self._functorch_alias()

    def item(self):
        raise _vmap_state.reads_data(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file "
            "a bug report.")

    def __bool__(self):
        raise _vmap_state.reads_data(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")

    def tolist(self):
        self.item()

    def numpy(self, *, force=False):
        raise _vmap_state.reads_data("vmap: numpy() is not supported on a BatchedTensor (the function "
                           "being vmapped reads a tensor's data; rewrite it with tensor ops)")

    __array__ = numpy

    def __repr__(self, *, tensor_contents=None):
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n{self._value!r})"


def _dispatch_free_contiguous(size, stride):
    expected = 1
    for s, st in zip(reversed(size), reversed(stride)):
        if s == 1:
            continue
        if s == 0:
            return True
        if st != expected:
            return False
        expected *= s
    return True


def _wrap(value, bdim, level):
    t = object.__new__(BatchedTensor)
    size = value._size
    t._value, t._bdim, t._level = value, bdim, level
    t._np = None
    t._size = size[:bdim] + size[bdim + 1:]
    t.dtype = value.dtype
    t._device = value._device
    t._storage = None
    t._rg = False
    t.grad_fn = None
    t._output_nr = 0
    t._sparse = None
    return t


def is_batched(t):
    return type(t) is BatchedTensor


def max_level(args):
    """The innermost vmap level among the arguments (0: none is batched)."""
    level = 0
    for a in args:
        if type(a) is BatchedTensor:
            if a._level > level:
                level = a._level
        elif isinstance(a, (list, tuple)):
            for t in a:
                if type(t) is BatchedTensor and t._level > level:
                    level = t._level
    return level


def batch_size(level):
    for lvl, size, _, _ in _levels:
        if lvl == level:
            return size
    raise RuntimeError(f"vmap: no vmap level {level} is running (a BatchedTensor escaped the "
                       "vmap that made it)")


def batched_at(t, level):
    return type(t) is BatchedTensor and t._level == level


def to_front(t, level):
    """The physical tensor of `t` at `level` with its batch dim first; None if `t` is not
    batched at that level."""
    if type(t) is not BatchedTensor or t._level != level:
        return None
    v = t._value
    if t._bdim:
        v = _movedim(v, t._bdim, 0)
    return v


def physical(t, level, size):
    """`t` at `level` as a physical tensor with the batch first: an unbatched tensor is
    expanded to the batch size (for ops whose inputs must all carry the batch)."""
    v = to_front(t, level)
    if v is not None:
        return v
    return _op("expand")(_op("unsqueeze")(t, 0), (size,) + tuple(t._size))


def wrap(out, level, bdim=0):
    """Wrap an op's physical result(s), batch at `bdim`, as BatchedTensors at `level`."""
    if isinstance(out, Tensor):
        return _wrap(out, bdim, level)
    if isinstance(out, (tuple, list)):
        items = [_wrap(o, bdim, level) if isinstance(o, Tensor) else o for o in out]
        if hasattr(out, "_fields"):
            return type(out)(*items)
        return type(out)(items)
    return out




def _movedim(v, src, dst):
    n = v.ndim
    perm = [d for d in range(n) if d != src]
    perm.insert(dst, src)
    return _op("permute")(v, perm)


# ---- the dispatch mode and the fallback ------------------------------------------------------
_RANDOM = set()


def _random_ops():
    names = ("uniform_", "normal_", "random_.from", "random_", "bernoulli_.float", "bernoulli",
             "exponential_", "geometric_", "cauchy_", "log_normal_", "multinomial", "poisson",
             "randperm")
    for n in names:
        _RANDOM.add(_lookup(n))


def vmap_mode(op, args, mode_level):
    """The mode every op call passes while a vmap runs. Each vmap pushes it once and it acts
    only for that vmap's level: an op whose innermost batched argument belongs to an outer vmap
    goes down the stack first, through whatever transform was entered in between (a forward-AD
    level inside the outer vmap sees its dual tensors before the outer batch is unwrapped)."""
    entry = _entry_at(mode_level)
    if op in _RANDOM:
        return _random_op(op, args, mode_level, entry)
    level = max_level(args)
    if not level or level != entry[0]:
        return _dispatcher.call_in_modes(op, args, mode_level - 1)
    if op._composite is not None and KEY not in op._table:
        try:
            return op._composite(*args)
        except RuntimeError as e:
            # ember's decomposition reads data where PyTorch's op is a kernel: run the op
            # per example instead, as PyTorch's fallback would (not an in-place op, whose
            # decomposition may have written part of its result already)
            if op._mutates or not _vmap_state.is_data_read(e):
                raise
            try:
                return _fallback(op, KEY, args)
            except Exception:
                raise e from None
    if _grad_state.enabled and _requires_grad(op, args):
        return _dispatcher._fallbacks["Autograd"](op, KEY, args)
    return op.redispatch(KEY, args)


def _entry_at(mode_level):
    """The running vmap ([level, size, randomness, stack index]) whose mode sits at
    `mode_level` of the dispatcher's mode stack."""
    for entry in _levels:
        if entry[3] == mode_level:
            return entry
    raise RuntimeError("vmap: the dispatch mode stack no longer matches the running vmaps")


def _requires_grad(op, args):
    for i in op._tensor_pos:
        a = args[i]
        if isinstance(a, Tensor) and a._rg:
            return True
    for i in op._list_pos:
        for a in args[i]:
            if isinstance(a, Tensor) and a._rg:
                return True
    return False


def inplace_error(name):
    """PyTorch's refusal of an in-place op `name` whose `self` is not batched while another
    argument is (the result could not hold every example)."""
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to "
        "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
        f"use out-of-place operators instead of {name}. If said operator is being called "
        "inside the PyTorch framework, please file a bug report instead.")


_ERROR_MODE = ("vmap: called random operation while in randomness error mode. Please either use "
               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
               "operation out of vmap")
_SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. "
                 "Please file an issue with functorch")
_DIFFERENT_INPLACE = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
    "like same randomness. If this is necessary for your usage, please file an issue with "
    "functorch.")
_unbatched_inputs = {}   # level -> ids of the vmap's inputs given in_dim None


def _random_op(op, args, mode_level, entry):
    """A random op under vmap, by the vmap's randomness flag: 'error' refuses; 'same' draws one
    example's worth for the whole batch (only an in-place fill may have a batched `self`);
    'different' draws once over the whole batch -- the physical tensors, batch first, unbatched
    inputs expanded to the batch -- so example i gets what a loop's i-th draw would."""
    if _drawing[0]:
        return _dispatcher.call_in_modes(op, args, mode_level - 1)
    randomness = entry[2]
    if randomness == "error":
        raise RuntimeError(_ERROR_MODE)
    level = max_level(args)
    if level and level != entry[0]:
        return _dispatcher.call_in_modes(op, args, mode_level - 1)
    below = mode_level - 1
    if op._mutates:
        self = args[0]
        others_batched = any(batched_at(a, entry[0]) for a in args[1:])
        if not batched_at(self, entry[0]):
            if others_batched:
                raise inplace_error("inplace " + op.name.split("::")[-1].rstrip("_"))
            if randomness == "same":
                return _dispatcher.call_in_modes(op, args, below)
            return _batched_draw(op, args, mode_level, entry)
        if randomness == "same":
            if others_batched:
                raise RuntimeError(_SAME_BATCHED)
            sample = _op("clone")(_op("select.int")(self._value, self._bdim, 0))
            op(sample, *args[1:])
            _op("copy_")(self, sample)
            return self
        ndim = self.ndim
        physical_args = [_front_aligned(a, entry[0], ndim) if batched_at(a, entry[0]) else a
                         for a in args]
        _dispatcher.call_in_modes(op, tuple(physical_args), below)
        return self
    if randomness == "same":
        if level:
            raise RuntimeError(_SAME_BATCHED)
        return _dispatcher.call_in_modes(op, args, below)
    size = entry[1]
    tensors = [i for i in op._tensor_pos if isinstance(args[i], Tensor)]
    if not tensors:   # randperm: one draw per example
        return _wrap(_op("stack")([_dispatcher.call_in_modes(op, args, below)
                                   for _ in range(size)], 0), 0, entry[0])
    physical_args = list(args)
    for i in tensors:
        physical_args[i] = physical(args[i], entry[0], size)
    if op.name == "aten::multinomial":   # takes at most 2 dims: the batch joins the rows
        x = physical_args[0]
        physical_args[0] = _op("reshape")(x, (-1, x._size[-1]))
        out = _dispatcher.call_in_modes(op, tuple(physical_args), below)
        return _wrap(_op("reshape")(out, tuple(x._size[:-1]) + (out._size[-1],)), 0, entry[0])
    return _wrap(_dispatcher.call_in_modes(op, tuple(physical_args), below), 0, entry[0])


def _check_inplace_draw(self, *others):
    """For an in-place random fill composed of other ops (bernoulli_ with a tensor p): PyTorch's
    refusals under vmap, in its order -- 'error' randomness, 'same' with a batched argument,
    then for an unbatched `self` a batched argument or 'different' randomness (one draw would
    fill every example alike)."""
    level, _, randomness, _ = _levels[-1]
    others_batched = any(batched_at(o, level) for o in others)
    if randomness == "error":
        raise RuntimeError(_ERROR_MODE)
    if randomness == "same" and others_batched:
        raise RuntimeError(_SAME_BATCHED)
    if batched_at(self, level):
        return
    if others_batched:
        raise inplace_error("inplace bernoulli")
    if randomness == "different":
        raise RuntimeError(_DIFFERENT_INPLACE)


def _front_aligned(a, level, ndim):
    """The physical tensor of `a` (batched at `level`), batch first, with ones after the batch
    dim so that it broadcasts against an example of `ndim` dims."""
    v = to_front(a, level)
    for _ in range(ndim - a.ndim):
        v = _op("unsqueeze")(v, 1)
    return v


def _draw_levels(fn, args, kwargs, depth, like):
    if depth < 0:
        _drawing[0] = True
        try:
            return fn(*args, **kwargs)
        finally:
            _drawing[0] = False
    level, size, randomness, _ = _levels[depth]
    if randomness == "error":
        raise RuntimeError(_ERROR_MODE)
    if randomness == "same":
        if any(batched_at(a, level) for a in args):
            if not like:
                raise RuntimeError(_SAME_BATCHED)
            args = [_op("select.int")(a._value, a._bdim, 0) if batched_at(a, level) else a
                    for a in args]
        return _draw_levels(fn, args, kwargs, depth - 1, like)
    physical_args = [physical(a, level, size) if isinstance(a, Tensor) else a for a in args]
    return _wrap(_draw_levels(fn, physical_args, kwargs, depth - 1, like), 0, level)


def _batched_draw(op, args, mode_level, entry):
    """randomness='different' and a random fill of a tensor made inside the vmap (rand_like,
    dropout's mask): each example gets its own draw, so the tensor becomes batched at the
    innermost level -- in place, as the op's contract is to fill `self`."""
    self = args[0]
    level, size = entry[0], entry[1]
    if self._base is not None or self._version or id(self) in _unbatched_inputs.get(level, ()):
        # PyTorch refuses every unbatched tensor; ember batches only one made in the vmap
        raise RuntimeError(_DIFFERENT_INPLACE)
    value = _op("empty.memory_format")((size,) + tuple(self._size), dtype=self.dtype,
                                        device=self._device)
    _dispatcher.call_in_modes(op, (value,) + tuple(args[1:]), mode_level - 1)
    self.__class__ = BatchedTensor
    self._value, self._bdim, self._level = value, 0, level
    self._np, self._storage = None, None
    return self


def _slice(a, level, b):
    if type(a) is BatchedTensor and a._level == level:
        return _op("select.int")(a._value, a._bdim, b)
    if isinstance(a, (list, tuple)) and any(type(t) is BatchedTensor for t in a):
        return [_slice(t, level, b) for t in a]
    return a


def _refuse_batched(tensors, opname, why):
    if any(type(t) is BatchedTensor for t in tensors):
        raise RuntimeError(f"Batching rule not implemented for {opname}{why}")


def _new_like(self, out, make):
    """Tensor.new_empty/new_zeros/new_ones/new_full on a BatchedTensor: one new tensor per
    example, batched at each of `self`'s levels (PyTorch's batching rule materializes the
    batch dims, so writing a batched tensor into it works). `out` is the unbatched result;
    `make(shape)` builds one of another shape."""
    chain = []
    while type(self) is BatchedTensor:
        chain.append(self)
        self = self._value
    if not chain:
        return out
    chain.reverse()   # outermost level first
    result = make(tuple(batch_size(b._level) for b in chain) + tuple(out._size))
    for b in chain:
        result = _wrap(result, 0, b._level)
    return result


def _per_example(fn, args, kwargs, error):
    """See vmap_state.per_example."""
    flat, spec = tree_flatten((args, kwargs))
    level = max_level(flat)
    name = getattr(fn, "__name__", "")
    if (not level or name.endswith("_") or kwargs.get("out") is not None
            or any(callable(a) and not isinstance(a, Tensor) for a in flat)):
        raise error
    results = []
    for b in range(batch_size(level)):
        a, k = tree_unflatten([_slice(t, level, b) for t in flat], spec)
        out, out_spec = tree_flatten(fn(*a, **k))
        if not all(isinstance(o, Tensor) for o in out):
            raise error
        results.append(out)
    if not results:
        raise error
    stack = _op("stack")
    outs = [_wrap(stack([r[k] for r in results], 0), 0, level) for k in range(len(results[0]))]
    return tree_unflatten(outs, out_spec)


_RULES.update(draw=_draw_levels, refuse=_refuse_batched, inplace_draw=_check_inplace_draw,
              per_example=_per_example, new_like=_new_like)


def _fallback(op, key, args):
    """PyTorch's slow vmap fallback: the op once per example, the results stacked."""
    level = max_level(args)
    size = batch_size(level)
    if _fallback_warning[0]:
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {op.name}. Please file us an issue on GitHub so that we can prioritize "
            "its implementation.", UserWarning, stacklevel=_user_stacklevel())
    if op._mutates:
        self = args[0]
        if not batched_at(self, level):
            raise RuntimeError(
                f"vmap: {op.name}(self, *extra_args) is not possible because there exists a "
                "Tensor in extra_args that is vmapped over while `self` is not. Please try to "
                f"use out-of-place operators instead of {op.name}.")
        for b in range(size):
            op(*[_slice(a, level, b) for a in args])
        return self
    if size == 0:
        raise RuntimeError(f"vmap: the op {op.name} has no batching rule in ember, and the "
                           "per-example fallback cannot run on a batch of size 0")
    results = [op(*[_slice(a, level, b) for a in args]) for b in range(size)]
    first = results[0]
    stack = _op("stack")
    if isinstance(first, Tensor):
        return _wrap(stack(results, 0), 0, level)
    if isinstance(first, (tuple, list)) and all(isinstance(r, Tensor) for r in first):
        outs = [_wrap(stack([r[k] for r in results], 0), 0, level) for k in range(len(first))]
        return type(first)(*outs) if hasattr(first, "_fields") else type(first)(outs)
    raise RuntimeError(f"vmap: {op.name} returned {type(first).__name__}, which vmap's "
                       "fallback cannot batch")


_dispatcher.register_fallback(KEY, _fallback)


def pop_mode(mode):
    """Remove the innermost entry of `mode` from the dispatcher's mode stack."""
    modes = _dispatcher._modes
    for i in range(len(modes) - 1, -1, -1):
        if modes[i] is mode:
            del modes[i]
            return


# ---- vmap itself ------------------------------------------------------------------------------
def _get_name(func):
    name = getattr(func, "__name__", None)
    if name is None and hasattr(func, "func"):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return name or repr(func)


def vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    name = _get_name(func)
    _check_out_dims(out_dims, name)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    sizes = []
    for arg, d in zip(flat_args, flat_dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective "
                             "in_dim")
        if not -arg.dim() <= d < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for some input, but that input is a Tensor of dimensionality "
                             f"{arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= in_dim "
                             f"< {arg.dim()}.")
        sizes.append(arg.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    size = sizes[0]
    flat_dims = [d if d is None or d >= 0 else d + a.dim() for a, d in zip(flat_args, flat_dims)]
    if chunk_size is not None and chunk_size < size:
        return _chunked(func, flat_args, flat_dims, spec, out_dims, randomness, chunk_size,
                        size, kwargs, name)
    return _run(func, flat_args, flat_dims, spec, out_dims, randomness, size, kwargs, name)


def _chunked(func, flat_args, flat_dims, spec, out_dims, randomness, chunk_size, size, kwargs,
             name):
    pieces = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        chunk = [a if d is None else _op("narrow")(a, d, start, n)
                 for a, d in zip(flat_args, flat_dims)]
        pieces.append(_run(func, chunk, flat_dims, spec, out_dims, randomness, n, kwargs, name))
    leaves0, out_spec = tree_flatten(pieces[0])
    flat_out_dims = _out_dims(out_dims, pieces[0], out_spec, name)
    leaves = [tree_flatten(p)[0] for p in pieces]
    joined = []
    for k, d in enumerate(flat_out_dims):
        parts = [lv[k] for lv in leaves]
        joined.append(parts[0] if d is None else _op("cat")(parts, d))
    return tree_unflatten(joined, out_spec)


@contextlib.contextmanager
def _new_level(size, randomness):
    """A vmap level of batch `size` for the block: its entry in `_levels` and its mode."""
    level = push_level(size, randomness)
    try:
        yield level
    finally:
        pop_level()


def push_level(size, randomness):
    """Enter a vmap level (its entry, its mode); returns the level."""
    level = (_levels[-1][0] if _levels else 0) + 1
    _levels.append([level, size, randomness, len(_dispatcher._modes)])
    _dispatcher._modes.append(vmap_mode)
    _grad_state.transforms += 1
    return level


def pop_level():
    """Leave the innermost vmap level."""
    _grad_state.transforms -= 1
    pop_mode(vmap_mode)
    _levels.pop()


@contextlib.contextmanager
def lower(entry):
    """The block runs as if the vmap level `entry` were not running (PyTorch's
    interpreter.lower()): its entry and its mode leave the stacks and come back afterwards."""
    modes = _dispatcher._modes
    i, k = _levels.index(entry), entry[3]
    del _levels[i]
    mode = modes.pop(k)
    for e in _levels:
        if e[3] > k:
            e[3] -= 1
    try:
        yield
    finally:
        for e in _levels:
            if e[3] >= k:
                e[3] += 1
        modes.insert(k, mode)
        _levels.insert(i, entry)


def _run(func, flat_args, flat_dims, spec, out_dims, randomness, size, kwargs, name):
    with _new_level(size, randomness) as level:
        wrapped = [a if d is None else _wrap(a, d, level) for a, d in zip(flat_args, flat_dims)]
        _unbatched_inputs[level] = {id(a) for a, d in zip(flat_args, flat_dims)
                                    if d is None and isinstance(a, Tensor)}
        try:
            out = func(*tree_unflatten(wrapped, spec), **(kwargs or {}))
        finally:
            del _unbatched_inputs[level]
    leaves, out_spec = tree_flatten(out)
    flat_out_dims = _out_dims(out_dims, out, out_spec, name)
    result = []
    for o, d in zip(leaves, flat_out_dims):
        batched = batched_at(o, level)
        if d is None:
            if batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            result.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(o)}. Did you mean to set out_dims= to None for output?")
        if batched:
            v = o._value
            d = _wrap_dim(d, v.ndim)
            result.append(v if o._bdim == d else _movedim(v, o._bdim, d))
        else:
            d = _wrap_dim(d, o.ndim + 1)
            e = _op("expand")(_op("unsqueeze")(o, 0), (size,) + tuple(o._size))
            result.append(e if d == 0 else _movedim(e, 0, d))
    return tree_unflatten(result, out_spec)


def restore_vmap(func, in_dims, batch_size, randomness):
    """`func` run once on its inputs batched (per `in_dims`) at a new vmap level; returns its
    outputs as physical tensors with their batch dims, and those dims (None for an output that
    is not batched) -- vmap without moving or expanding the batch dims (torch._functorch.vmap's
    helper for autograd.Function under vmap)."""
    def inner(*args, **kwargs):
        flat_args, spec = tree_flatten(args)
        flat_dims = _broadcast_to_and_flatten(in_dims, spec)
        if flat_dims is None:
            raise ValueError(f"restore_vmap: in_dims {in_dims} do not match the inputs {spec}")
        with _new_level(batch_size, randomness) as level:
            wrapped = [a if d is None else _wrap(a, d + a.dim() if d < 0 else d, level)
                       for a, d in zip(flat_args, flat_dims)]
            return unwrap_batched(func(*tree_unflatten(wrapped, spec), **kwargs), level)
    return inner


def unwrap_batched(outputs, level):
    """(outputs with each tensor batched at `level` as its physical tensor, their batch dims)."""
    leaves, spec = tree_flatten(outputs)
    if not leaves:
        return outputs, ()
    pairs = [(o._value, o._bdim) if batched_at(o, level) else (o, None) for o in leaves]
    return (tree_unflatten([p[0] for p in pairs], spec),
            tree_unflatten([p[1] for p in pairs], spec))


def _check_out_dims(out_dims, name):
    """out_dims is an int, None, or a pytree of ints and Nones (checked before `func` runs)."""
    if isinstance(out_dims, int):
        return
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an "
                             "int, None or a python collection of ints representing where in "
                             "the outputs the vmapped dimension should appear.")


def _out_dims(out_dims, out, out_spec, name):
    """One out_dim per output leaf. A single Tensor output takes an int, None or a 1-tuple;
    otherwise out_dims is broadcast against the outputs' pytree (a list of out_dims does not
    match a tuple of outputs, as in PyTorch)."""
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        flat = None
    else:
        flat = _broadcast_to_and_flatten(out_dims, out_spec)
    if flat is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}.")
    return flat


_random_ops()
