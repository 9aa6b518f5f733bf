"""torch.utils.hooks: the handle every register_*hook returns, and the machinery behind
nn.Module's full backward hooks (BackwardHook).

RemovableHandle is defined with the autograd graph (the lowest layer that hands handles out)
and is this same class; Module, Tensor, Node and Optimizer hooks all return it.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core.tensor import Tensor
from ..autograd.graph import RemovableHandle, _tensor_hooks

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Mark `f` as a hook that is not expected to survive serialization (no warning on save)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn, once per hook, that a tensor's backward hooks are not saved with it (pickling and
    `torch.save` call this)."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                          "expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=_user_stacklevel())


class BackwardHook:
    """Full backward hooks for one call of a module (Module.register_full_backward_hook).

    The call wraps the tensors going into forward and the tensors coming out of it in
    `BackwardHookFunction` (an identity whose node marks the module's boundary in the graph).
    When backward reaches the output node, a node pre-hook records grad_output and runs the
    backward pre-hooks (which may replace it); when it reaches the input node, a node post-hook
    runs the full backward hooks with (grad_input, grad_output), and they may replace
    grad_input. Non-tensor arguments appear as None. If no input requires grad, the backward
    hooks run from the output node with grad_input all None.
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[i] for i in indices)

    def _set_user_hook(self, grad_fn):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None  # the gradient reached the input without passing the output
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        """Pass the tensors among `args` through BackwardHookFunction and hand its node to `fn`;
        (new args, indices of the tensors), or (args, None) when no gradient will flow."""
        from ..autograd.grad_mode import is_grad_enabled
        from ..nn.modules._functions import BackwardHookFunction
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in tensors_idx)):
            return args, None
        new_tensors = BackwardHookFunction.apply(*(args[i] for i in tensors_idx))
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors if t.grad_fn is not None
                    and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue "
                               "with a code sample to reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        res, self.input_tensors_index = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, args):
        def output_pre_hook(grad_output):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                     self.n_outputs)
            for user_pre_hook in self.user_pre_hooks:
                out = user_pre_hook(self.module, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(self.grad_outputs):
                    raise RuntimeError("Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(out)}, but expected "
                                       f"{len(self.grad_outputs)}")
                self.grad_outputs = out
            grad_outputs = self.grad_outputs
            if self.input_tensors_index is None:
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. See "
                              "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                              "#torch.nn.Module.register_full_backward_hook for more details.",
                              stacklevel=_user_stacklevel())
                grad_inputs = (None,) * self.n_inputs
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if out is not None and not (isinstance(out, tuple) and
                                                all(g is None for g in out)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients.")
                self.grad_outputs = None
            return self._unpack_none(self.output_tensors_index, grad_outputs)

        single = not isinstance(args, tuple)
        outputs = (args,) if single else args
        res, self.output_tensors_index = self._apply_on_tensors(
            lambda grad_fn: grad_fn.register_prehook(output_pre_hook), outputs)
        self.n_outputs = len(outputs)
        return res[0] if single else res
