"""torch.utils.swap_tensors: exchange the contents of two tensor objects in place.

After the call each Python object holds what the other held -- class, data, autograd state and
attributes -- while every reference to either object stays valid. Module.load_state_dict and
Module._apply use it under `torch.__future__.set_swap_module_params_on_conversion(True)`, so a
parameter keeps its identity (an optimizer holding it sees the new values) even when the new
value has another type, dtype or device.

An ember Tensor is its slots (the TensorImpl part: array, size, dtype, device, storage,
requires_grad, grad_fn) plus its `__dict__` (the rarer autograd state and user attributes);
swapping both, and the class, swaps everything. A leaf's AccumulateGrad node refers to the Python
object, so a live one (a graph built before the swap) is poisoned as PyTorch's is: running
backward through it raises.
"""
import copyreg
import weakref

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can "
             "happen when you try to run backward on a tensor that was swapped. For a module m "
             "with `torch.__future__.set_swap_module_params_on_conversion(True)` you should not "
             "change the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between "
             "running forward and backward. To resolve this, please only change the device/dtype "
             "before running forward (or after both forward and backward).")


def _poisoned(grad_outputs):
    raise RuntimeError(_POISONED)


def _poison_accumulator(t):
    ref = t.__dict__.pop("_grad_acc", None)
    node = ref() if ref is not None else None
    if node is not None:
        node.register_prehook(_poisoned)


def _slot_value(slot, t, missing):
    try:
        return slot.__get__(t)
    except AttributeError:
        return missing


def swap_tensors(t1, t2):
    from .._core.tensor import Tensor
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(t1.__class__)) - set(Tensor.__slots__)
    if slots != set(copyreg._slotnames(t2.__class__)) - set(Tensor.__slots__):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):
        _poison_accumulator(t)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    # the subclasses' own slots, then the tensor's (its "TensorImpl"); unset ones move too
    missing = object()
    for name in slots:
        a, b = getattr(t1, name, missing), getattr(t2, name, missing)
        for t, v in ((t1, b), (t2, a)):
            if v is missing:
                if hasattr(t, name):
                    delattr(t, name)
            else:
                setattr(t, name, v)
    for name in Tensor.__slots__:  # through the slots themselves (a Python-key class's mark
        if name in ("__dict__", "__weakref__"):  # shadows `_sparse`'s)
            continue
        slot = Tensor.__dict__[name]
        a, b = (_slot_value(slot, t, missing) for t in (t1, t2))
        for t, v in ((t1, b), (t2, a)):
            if v is missing:
                try:
                    slot.__delete__(t)
                except AttributeError:
                    pass
            else:
                slot.__set__(t, v)
