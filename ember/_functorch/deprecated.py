"""The `functorch.*` transforms (torch/_functorch/deprecated.py): the torch.func ones, each
first warning (FutureWarning) that functorch's copy is deprecated and naming its replacement."""
import warnings

from . import apis
from . import eager_transforms as _impl
from . import make_functional as _nn_impl


def _warning(api, new_api=None):
    new_api = new_api or f"torch.func.{api}"
    return (f"We've integrated functorch into PyTorch. As the final step of the integration, "
            f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
            f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
            f"release notes and/or the `torch.func` migration guide for more details "
            f"https://pytorch.org/docs/main/func.migrating.html")


def warn_deprecated(api, new_api=None):
    warnings.warn(_warning(api, new_api), FutureWarning, stacklevel=3)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    warn_deprecated("vmap", "torch.vmap")
    return apis.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func, argnums=0, has_aux=False):
    warn_deprecated("grad")
    return _impl.grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    warn_deprecated("grad_and_value")
    return _impl.grad_and_value(func, argnums, has_aux)


def vjp(func, *primals, has_aux=False):
    warn_deprecated("vjp")
    return _impl.vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    warn_deprecated("jvp")
    return _impl.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    warn_deprecated("jacrev")
    return _impl.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size,
                        _preallocate_and_copy=_preallocate_and_copy)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    warn_deprecated("jacfwd")
    return _impl.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    warn_deprecated("hessian")
    return _impl.hessian(func, argnums=argnums)


def functionalize(func, *, remove="mutations"):
    warn_deprecated("functionalize")
    return _impl.functionalize(func, remove=remove)


def make_functional(model, disable_autograd_tracking=False):
    warn_deprecated("make_functional", "torch.func.functional_call")
    return _nn_impl.make_functional(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    warn_deprecated("make_functional_with_buffers", "torch.func.functional_call")
    return _nn_impl.make_functional_with_buffers(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    warn_deprecated("combine_state_for_ensemble", "torch.func.stack_module_state")
    return _nn_impl.combine_state_for_ensemble(models)


def _docs(wrapper, original, new_api=None):
    if original.__doc__:
        wrapper.__doc__ = original.__doc__ + "\n\n.. warning::\n\n    " + _warning(
            wrapper.__name__, new_api)


for _wrapper, _original, _new in (
        (vmap, apis.vmap, "torch.vmap"), (grad, _impl.grad, None),
        (grad_and_value, _impl.grad_and_value, None), (vjp, _impl.vjp, None),
        (jvp, _impl.jvp, None), (jacrev, _impl.jacrev, None), (jacfwd, _impl.jacfwd, None),
        (hessian, _impl.hessian, None), (functionalize, _impl.functionalize, None),
        (make_functional, _nn_impl.make_functional, "torch.func.functional_call"),
        (make_functional_with_buffers, _nn_impl.make_functional_with_buffers,
         "torch.func.functional_call"),
        (combine_state_for_ensemble, _nn_impl.combine_state_for_ensemble,
         "torch.func.stack_module_state")):
    _docs(_wrapper, _original, _new)
