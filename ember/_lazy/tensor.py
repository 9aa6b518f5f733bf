"""The Lazy dispatch key (PyTorch's LazyTensor core): ops on lazy tensors are recorded, not run.

A lazy tensor is an ember Tensor on device `lazy:0` with shape, dtype and strides but no array
(as a meta tensor), plus `_lazy`, its LazyTensor (ember/_lazy/graph_executor.py). The Lazy key
has one boxed kernel for every op, registered as the key's fallback:

    1. the op's Meta kernel runs on meta stand-ins of the lazy arguments: it checks the
       arguments (raising eager mode's errors at the line that made them) and gives the
       outputs' shapes, dtypes and strides, and which outputs are views of which inputs;
    2. a Call is appended to the pending graph, reading the arguments' Values;
    3. the outputs are new lazy tensors naming the Call's results (an in-place op returns its
       argument, still naming the same Value: the recorded call writes it).

Autograd needs nothing of its own: the Autograd kernel sits above Lazy, so the forward ops, and
in backward the derivative formulas (ember ops too), are recorded alike, and gradients are lazy.

Not recorded: an op with no lazy argument (a factory with `device="lazy"`, a copy from CPU) runs
on CPU at once and its result becomes device data; a copy to CPU runs the pending graph first;
an op whose output shape depends on the values (its Meta kernel says so: nonzero, unique,
boolean-mask indexing) or that returns a Python value runs the pending graph and then runs
eagerly on the device data (PyTorch's eager fallback, counted as `aten::<op>`). An op without a
Meta kernel, or an in-place op that changes its argument's shape or strides, raises
NotImplementedError naming it.
"""
from .._core.device import device as _device, cpu as _CPU, lazy as _LAZY
from .._core.tensor import Tensor, _meta
from .._dispatch import dispatcher as _dispatcher
from .graph_executor import LazyTensor, executor
from .._dispatch.recorder import Call
from . import metrics


def lazy_from_data(data):
    """A lazy tensor holding CPU tensor `data` (owned by it from now on) as its device data."""
    t = _meta(data._size, data.dtype, data.stride(), data.storage_offset(), None, _LAZY)
    t._lazy = LazyTensor(data)
    return t


def device_data(t):
    """The CPU tensor holding lazy tensor `t`'s values, after running the pending graph."""
    executor.sync()
    return t._lazy.data


def _lazy_tensors(op, args):
    found = [args[i] for i in op._tensor_pos if isinstance(args[i], Tensor)]
    for i in op._list_pos:
        found.extend(x for x in args[i] if isinstance(x, Tensor))
    return [t for t in found if t._lazy is not None]


def lazy_kernel(op, key, args):
    """The Lazy key's fallback: record `op(*args)` (see the module docstring)."""
    if not _lazy_tensors(op, args):
        return _from_cpu(op, args)
    if op.schema.name == "_to_copy" and args[2] is not None and _device(args[2]).type != "lazy":
        if _device(args[2]).type == "meta":
            return _meta(args[0]._size, args[1] or args[0].dtype)
        return op.redispatch("CPU", (device_data(args[0]), args[1], _CPU, args[3]))
    if "Meta" not in op._table:
        raise NotImplementedError(
            f"the lazy device cannot record '{op.name}': it has no Meta kernel to compute its "
            "outputs' shapes (register one with ember.library.register_fake)")
    recording = _Recording()
    meta_args, operands = list(args), list(args)
    for i, a in enumerate(args):  # a tensor passed as a Scalar (fill_(t)) is its value
        if isinstance(a, Tensor) and i not in op._tensor_pos and i not in op._list_pos:
            meta_args[i] = operands[i] = a.item()
    for i in op._tensor_pos:
        meta_args[i], operands[i] = recording.argument(args[i])
    for i in op._list_pos:
        pairs = [recording.argument(x) for x in args[i]]
        meta_args[i], operands[i] = [m for m, _ in pairs], [v for _, v in pairs]
    try:
        out = op.redispatch("Meta", tuple(meta_args))
    except NotImplementedError:  # the output's shape depends on the values
        return _eager_fallback(op, args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if not all(o is None or isinstance(o, Tensor) for o in outs):
        return _eager_fallback(op, args)
    results = [None if o is None else recording.result(o, op) for o in outs]
    values = tuple(None if r is None else r._lazy.value for r in results)
    executor.graph.calls.append(Call(op, tuple(operands), values if op.schema.returns else ()))
    metrics._count("lazy::" + op.schema.name)
    if out is None or isinstance(out, Tensor):
        return results[0]
    if type(out) in (tuple, list):
        return type(out)(results)
    return type(out)(results)  # a torch.return_types tuple


class _Recording:
    """The lazy arguments of one op call, their meta stand-ins, and what the outputs view."""

    def __init__(self):
        self.stand_ins = {}   # id(meta stand-in) -> the lazy tensor it stands for
        self.storages = {}    # id(storage) -> a lazy argument with that storage

    def argument(self, a):
        """(what the Meta kernel gets, what the Call records) for one argument."""
        if not isinstance(a, Tensor):
            return a, a
        if a._lazy is None:  # a CPU tensor (a 0-dim one, or copy_'s source): copied in now
            return a, executor.add_input(a.detach().clone(), a)
        storage = a._storage_()
        m = _meta(a._size, a.dtype, a._stride_, a._offset_, storage)
        self.stand_ins[id(m)] = a
        self.storages[id(storage)] = a
        return m, executor.value_of(a._lazy, a)

    def result(self, m, op):
        same = self.stand_ins.get(id(m))
        if same is not None:  # an in-place op returning its argument
            if m._size != same._size or m._stride_ != same._stride_:
                raise NotImplementedError(
                    f"the lazy device cannot record '{op.name}': it changes the shape or "
                    "strides of a tensor in place")
            return same
        src = self.storages.get(id(m._storage)) if m._storage is not None else None
        t = _meta(m._size, m.dtype, m._stride_, m._offset_,
                  src._storage_() if src is not None else None, _LAZY)
        if src is not None:  # a view: same memory, and autograd's view base
            t._base = src._base if src._base is not None else src
        t._lazy = executor.new_pending(t, src._lazy.value if src is not None else None)
        return t


def _from_cpu(op, args):
    """An op with no lazy argument (a factory, a copy from CPU): run it on CPU now."""
    dp = op._device_pos
    if dp is not None and args[dp] is not None:
        args = args[:dp] + (_CPU,) + args[dp + 1:]
    return _to_lazy(op.redispatch("CPU", tuple(args)))


def _to_lazy(out):
    if isinstance(out, Tensor):
        return lazy_from_data(out)
    if type(out) in (tuple, list):
        return type(out)(_to_lazy(o) for o in out)
    return out


def _eager_fallback(op, args):
    """Run the pending graph, then `op` on the device data; tensor results become device data."""
    metrics._count("aten::" + op.schema.name)
    executor.sync()
    data = {}

    def cpu(a):
        if isinstance(a, Tensor) and a._lazy is not None:
            data[id(a._lazy.data)] = a
            return a._lazy.data
        return a
    cpu_args = [cpu(a) if not isinstance(a, list) else [cpu(x) for x in a] for a in args]
    out = op.redispatch("CPU", tuple(cpu_args))
    if op._mutates:
        args[0]._bump_version()
    if isinstance(out, Tensor):
        return data[id(out)] if id(out) in data else lazy_from_data(out)
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        results = [data[id(o)] if id(o) in data else lazy_from_data(o) for o in out]
        return type(out)(results) if type(out) in (tuple, list) else type(out)(*results)
    return out


_dispatcher.register_fallback("Lazy", lazy_kernel)
