"""optests.autograd_registration_check: is the op's autograd support registered at an autograd
key?

An op gets gradients either from a kernel at the Autograd key (an autograd.Function around
the op), or by decomposing into differentiable ops (CompositeImplicitAutograd). An
autograd.Function registered at a *backend* key (CPU) also produces outputs that require grad,
but only by accident of running under grad mode: that registration is wrong and this check
says so.
"""
from ...._library.opcheck import _tensors
from ...._core.tensor import Tensor
from ...._dispatch.dispatcher import OpOverload


def autograd_registration_check(op, args, kwargs):
    if not isinstance(op, OpOverload):
        raise AssertionError(f"Expected op to be OpOverload, got {type(op)}")
    flat = _tensors((args, kwargs))
    if not any(t.requires_grad for t in flat):
        raise RuntimeError(
            "autograd_registration_check: no inputs have requires_grad=True so we are unable "
            "to actually perform this test. Please pass inputs that do require grad.")
    if op.derivative is not None or op._composite is not None:
        return
    out = op(*args, **kwargs)
    inputs = {id(t) for t in flat}
    if not any(o.requires_grad and id(o) not in inputs for o in _tensors(out)
               if isinstance(o, Tensor)):
        return
    raise AssertionError(
        f"{op.name()}: at least one output of this operator has requires_grad=True but the "
        f"operator does not have an autograd kernel defined at an autograd key (e.g. "
        f"DispatchKey::Autograd). This could mean that you have incorrectly registered an "
        f"autograd kernel to a non-Autograd DispatchKey, which may lead to silently incorrect "
        f"results. If your operator consists of regular PyTorch operations, consider not "
        f"using an operator at all or registering your operator as "
        f"CompositeImplicitAutograd. If you have an autograd.Function registered to a backend "
        f"(CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")
