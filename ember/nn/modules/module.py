"""nn.Module: parameters, buffers and submodules registered through attribute assignment.

PyTorch's Module keeps three ordered dicts, `_parameters`, `_buffers` and `_modules`; assigning a
Parameter, a Module or a Buffer to an attribute files it in the right dict (`__setattr__`), reading
falls back to those dicts (`__getattr__`), and everything else (iteration, `state_dict`, `to`,
`train`, hooks, `repr`) walks them.  `__call__` runs the forward pre-hooks, `forward` and the
forward hooks, the global hooks (`register_module_forward_hook` ...) before the module's own.
"""
import functools
import inspect
import warnings
import weakref
from ember._core._warnings import user_stacklevel as _user_stacklevel
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..parameter import Parameter, Buffer, is_lazy
from ..._core.tensor import Tensor
from ...utils.hooks import RemovableHandle, BackwardHook

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_backward_hook",
           "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

# Global hooks: run for every module, before the module's own hooks.
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()  # {hook id: True}, as PyTorch keeps them
_global_forward_hooks_with_kwargs = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
# Whether _global_backward_hooks holds full (True) or legacy (False) backward hooks; one kind only.
_global_is_full_backward_hook = None


def _typename(obj):
    """torch.typename: 'torch.FloatTensor' for tensors, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__ or ""
    if module in ("", "builtins"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


class _WrappedHook:
    """A hook called with its module first, holding the module weakly (no reference cycle
    module -> hook -> module) and picklable with it."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook, self.with_module = state["hook"], state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


class _LegacyBackwardHook(_WrappedHook):
    """Module.register_backward_hook's hook as a post-hook of the node that made the module's
    output: (module, grad_input, grad_output) are that node's gradients."""

    def __call__(self, grad_input, grad_output):
        result = super().__call__(grad_input, grad_output)
        if result is not None:
            result = (result,) if isinstance(result, Tensor) else tuple(result)
            if len(result) != len(grad_input):
                name = getattr(self.hook, "__name__", type(self.hook).__name__)
                raise RuntimeError(f"hook '{name}' has returned an incorrect number of values "
                                   f"(got {len(result)}, but expected {len(grad_input)})")
        return result


def _warn_non_full_backward_hook(inputs, result, grad_fn):
    """The legacy hooks see one node's gradients: warn when that node is not the module's whole
    forward (PyTorch's messages)."""
    def warn(message):
        warnings.warn(message + " Please use register_full_backward_hook to get the documented "
                      "behavior.", FutureWarning, stacklevel=_user_stacklevel())

    tail = " is deprecated and will be removed in future versions."
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        return warn("Using non-full backward hooks on a Module that does not return a single "
                    "Tensor or a tuple of Tensors" + tail + " This hook will be missing some of "
                    "the grad_output.")
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        return warn("Using non-full backward hooks on a Module that does not take as input a "
                    "single Tensor or a tuple of Tensors" + tail + " This hook will be missing "
                    "some of the grad_input.")
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warn("Using a non-full backward hook when outputs are nested in python data structure"
             + tail + " This hook will be missing some grad_output.")
    elif len(out_grad_fn) > 1:
        warn("Using a non-full backward hook when outputs are generated by different autograd "
             "Nodes" + tail + " This hook will be missing some grad_output.")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != \
            {n for n, _ in grad_fn.next_functions}:
        warn("Using a non-full backward hook when the forward contains multiple autograd Nodes"
             + tail + " This hook will be missing some grad_input.")


def _add_hook(hooks_dict, hook, prepend=False, flags=()):
    """Store `hook` under a fresh handle id; `flags` are (dict, on) pairs recording its options
    ({id: True}), which the handle clears on remove."""
    handle = RemovableHandle(hooks_dict, extra_dict=[d for d, _ in flags])
    hooks_dict[handle.id] = hook
    if prepend:
        hooks_dict.move_to_end(handle.id, last=False)
    for d, on in flags:
        if on:
            d[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook):
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    return _add_hook(_global_forward_hooks, hook,
                     flags=((_global_forward_hooks_with_kwargs, with_kwargs),
                            (_global_forward_hooks_always_called, always_call)))


def register_module_full_backward_pre_hook(hook):
    return _add_hook(_global_backward_pre_hooks, hook)


def _backward_hook_kind(current, full, where):
    """A module (or the global registry) holds full or legacy backward hooks, not both."""
    if current is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                           f"{where}. Please use only one of them.")
    return full


def register_module_full_backward_hook(hook):
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(
        _global_is_full_backward_hook, True, "as a global Module hook")
    return _add_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """The legacy global backward hook (deprecated for register_module_full_backward_hook):
    a post-hook on the autograd node that made each module's first output."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _backward_hook_kind(
        _global_is_full_backward_hook, False, "as a global Module hook")
    return _add_hook(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook):
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    return _add_hook(_global_parameter_registration_hooks, hook)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns; prints like PyTorch's when nothing is missing."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _set_data_compatible(old, new):
    """torch._has_compatible_shallow_copy_type: whether `old.data = new` can keep `old` (the
    same kind of tensor: both with data or both meta, and the same layout)."""
    return old.is_meta == new.is_meta and old.layout == new.layout


class Module:
    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and (args or kwargs):
            if kwargs:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                                f"argument '{next(iter(kwargs))}'")
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        object.__setattr__(self, "training", True)
        self._init_internal_state()
        if self.call_super_init:   # cooperative __init__ through a mixin after Module in the MRO
            super().__init__(*args, **kwargs)

    _DICT_ATTRS = ("_parameters", "_buffers", "_modules", "_forward_hooks", "_forward_pre_hooks",
                   "_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks",
                   "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                   "_load_state_dict_post_hooks", "_forward_hooks_with_kwargs",
                   "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs")
    _SET_ATTRS = ("_non_persistent_buffers_set",)

    def _init_internal_state(self):
        """The registries every Module has; missing ones are added (unpickling old modules)."""
        d = self.__dict__
        for name in self._DICT_ATTRS:
            d.setdefault(name, OrderedDict())
        for name in self._SET_ATTRS:
            d.setdefault(name, set())
        d.setdefault("_is_full_backward_hook", None)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_internal_state()

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    # ---- calling ----------------------------------------------------------------------------
    def compile(self, *args, **kwargs):
        """Compile this module's forward with ember.compile, in place (hooks stay eager)."""
        from ..._dynamo.eval_frame import compile_forward
        self.__dict__["forward"] = compile_forward(self, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_hooks or _global_forward_pre_hooks
                or _global_backward_hooks or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        result = None
        called_always = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if not (isinstance(r, tuple) and len(r) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {r}.")
                        args, kwargs = r
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
            bw_hook = None
            full = _global_is_full_backward_hook, self._is_full_backward_hook
            backward_hooks = [*(_global_backward_hooks.values() if full[0] else ()),
                              *(self._backward_hooks.values() if full[1] else ())]
            legacy_hooks = [*(_global_backward_hooks.values() if full[0] is False else ()),
                            *(self._backward_hooks.values() if full[1] is False else ())]
            backward_pre_hooks = [*_global_backward_pre_hooks.values(),
                                  *self._backward_pre_hooks.values()]
            if backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or \
                        hook_id in _global_forward_hooks_always_called:
                    called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or \
                        hook_id in _global_forward_hooks_with_kwargs:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  "Tensor or a tuple of Tensors but received "
                                  f"{type(result)}")
                result = bw_hook.setup_output_hook(result)
            if legacy_hooks:
                self._add_legacy_backward_hooks(legacy_hooks, args, result)
            return result
        except Exception:
            # always_call hooks still run when forward (or an earlier hook) raised; their own
            # errors are only warned about so the original exception is what propagates.
            for hooks, always, with_kwargs, who in (
                    (_global_forward_hooks, _global_forward_hooks_always_called,
                     _global_forward_hooks_with_kwargs, "global module forward hook"),
                    (self._forward_hooks, self._forward_hooks_always_called,
                     self._forward_hooks_with_kwargs, "module forward hook")):
                for hook_id, hook in hooks.items():
                    if hook_id not in always or hook_id in called_always:
                        continue
                    try:
                        r = hook(self, args, kwargs, result) if hook_id in with_kwargs \
                            else hook(self, args, result)
                        if r is not None:
                            result = r
                    except Exception as e:
                        warnings.warn(f"{who} with ``always_call=True`` raised an exception "
                                      f"that was silenced as another error was raised in "
                                      f"forward: {str(e)}")
            raise

    # ---- registration -----------------------------------------------------------------------
    def _add_legacy_backward_hooks(self, hooks, args, result):
        """register_backward_hook's hooks go on the node that made the first output tensor."""
        var = result
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) \
                if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(_LegacyBackwardHook(hook, self))
            _warn_non_full_backward_hook(args, result, grad_fn)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        for hook in _global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    def _remove_from(self, name, *stores):
        for store in stores:
            if isinstance(store, dict):
                store.pop(name, None)
            else:
                store.discard(name)

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules,
                              self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, self._parameters, self._buffers,
                              self._non_persistent_buffers_set)
            for hook in _global_module_registration_hooks.values():
                output = hook(self, name, value)
                if output is not None:
                    value = output
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
            return
        buffers = d.get("_buffers")
        is_buffer = isinstance(value, Buffer)
        if buffers is not None and (is_buffer or name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if is_buffer:
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            if getattr(self.register_buffer, "__func__", None) is Module.register_buffer or \
                    "persistent" in inspect.signature(self.register_buffer).parameters:
                self.register_buffer(name, value, persistent)
            elif not persistent:
                raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                                   "implements register_buffer() without the persistent argument "
                                   "is not allowed.")
            else:   # a subclass's register_buffer(name, tensor) of before `persistent` existed
                self.register_buffer(name, value)
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def _get_attr_at(self, target):
        """The module that owns the dotted `target`, the last name, and the object it names."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name, getattr(mod, name)

    def get_parameter(self, target):
        _, name, param = self._get_attr_at(target)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        mod, name, buffer = self._get_attr_at(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    # ---- iteration --------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Pre-order walk with an explicit stack (no recursion)."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if remove_duplicate:
                if m in memo:
                    continue
                memo.add(m)
            yield name, m
            children = [(name + ("." if name else "") + n, c) for n, c in m._modules.items()
                        if c is not None]
            stack.extend(reversed(children))

    def modules(self, remove_duplicate=True):
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for k, v in get(m):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and conversions --------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        # Each child's own train() runs, so subclasses that override it (to freeze a part) work.
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        if getattr(self, "_is_replica", False):
            warnings.warn(
                "Calling .zero_grad() from a module created with nn.DataParallel() has no effect. "
                "The parameters are copied (in a differentiable manner) from the original module. "
                "This means they are not leaf nodes in autograd and so don't accumulate gradients. "
                "If you need gradients in your forward method, consider using autograd.grad "
                "instead.", stacklevel=2)
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def _replicate_for_data_parallel(self):
        """A shallow copy for DataParallel: it shares the submodules and buffers and has no
        parameters of its own (the caller sets them, as differentiable copies)."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    def share_memory(self):
        return self._apply(lambda t: t.share_memory_())

    def apply(self, fn):
        """`fn` on every submodule, children before their parent (post-order, no recursion)."""
        stack = [(self, False)]
        while stack:
            m, children_done = stack.pop()
            if children_done:
                fn(m)
                continue
            stack.append((m, True))
            stack.extend((c, False) for c in reversed(list(m.children())))
        return self

    def _apply(self, fn, recurse=True):
        """Convert every parameter (and its grad) and buffer with `fn`. A parameter object is
        kept and given the new data (`.data = `), or, under torch.__future__'s flags, replaced
        by a new Parameter (overwrite) or swapped with one (swap_tensors). As in PyTorch, a
        conversion `.data =` cannot express (meta <-> data, dense <-> sparse) makes a new
        Parameter: an optimizer built before `to_empty()` on a meta module keeps the old ones."""
        from ...autograd.grad_mode import no_grad
        from ...utils._swap_tensors import swap_tensors
        from ... import __future__ as future
        swap = future.get_swap_module_params_on_conversion()
        overwrite = future.get_overwrite_module_params_on_conversion()
        for m in (self.modules() if recurse else (self,)):
            for k, p in list(m._parameters.items()):
                if p is None:
                    continue
                with no_grad():
                    new = fn(p)
                grad = p.grad
                if swap:
                    m._swap_parameter(k, p, new)
                elif overwrite or not _set_data_compatible(p, new):
                    m._parameters[k] = Parameter(new, p.requires_grad)
                elif new is not p:
                    p.data = new
                if grad is not None:
                    with no_grad():
                        g = fn(grad)
                    if swap:
                        g.requires_grad_(grad.requires_grad)
                        try:
                            swap_tensors(grad, g)
                        except Exception as e:
                            raise RuntimeError(f"_apply(): Couldn't swap {m._get_name()}.{k}"
                                               ".grad") from e
                        g = grad
                    out = m._parameters[k]
                    if swap or out is not p or g is not grad:
                        out.grad = g
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = fn(b)
        return self

    def _swap_parameter(self, key, param, new):
        from ...utils._swap_tensors import swap_tensors
        grad = param.grad
        try:
            if grad is not None:
                param.grad = None
            swap_tensors(param, Parameter(new, requires_grad=param.requires_grad))
        except Exception as e:
            if grad is not None:
                param.grad = grad
            raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e

    def to(self, *args, **kwargs):
        from ..._C._nn import _parse_to
        device, dtype, _, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")
        if dtype is not None and dtype.is_complex:
            warnings.warn("Complex modules are a new feature under active development whose "
                          "design may change, and some modules might not work as expected when "
                          "using complex tensors as parameters or buffers. Please file an issue at "
                          "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                          "if a complex module does not work as expected.", stacklevel=2)

        def convert(t):
            dt = dtype if (dtype is not None and (t.is_floating_point() or t.is_complex())) \
                else None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device=device, dtype=dt, memory_format=memory_format)
            return t.to(device=device, dtype=dt)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialized tensors of the same shape and dtype
        on `device` (nothing is copied): how a model built on the meta device gets memory."""
        from ..._bindings import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    # ---- state dict -------------------------------------------------------------------------
    def _has_extra_state(self, method):
        return getattr(type(self), method) is not getattr(Module, method)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=_user_stacklevel())
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        from ...autograd.grad_mode import no_grad
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        from ... import __future__ as future
        swap = future.get_swap_module_params_on_conversion()
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            src = state_dict[key]
            if not isinstance(src, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(src)}')
                continue
            # an uninitialized (lazy) parameter has no shape yet: the module's own load hook
            # has checked the source, and copy_ below materializes it
            lazy = is_lazy(param)
            if not lazy and param.dim() == 0 and src.shape == (1,):  # saved before 0-dim tensors
                src = src[0]
            if not lazy and src.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{src.shape} from checkpoint, the shape in current model is "
                                  f"{param.shape}.")
                continue
            if assign and not swap:
                self._assign_from_state_dict(name, param, src)
                continue
            if param.is_meta and not src.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                              "to a meta parameter in the current model, which is a no-op. (Did "
                              "you mean to pass `assign=True` to assign items in the state "
                              "dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=_user_stacklevel())
                continue
            try:
                with no_grad():
                    if swap:
                        self._swap_from_state_dict(param, src, assign)
                    else:
                        param.copy_(src)
            except Exception as ex:
                error_msgs.append(f'While {"swapping" if swap else "copying"} the parameter '
                                  f'named "{key}", whose dimensions in the model are '
                                  f'{param.size()} and whose dimensions in the checkpoint are '
                                  f'{src.size()}, an exception occurred : {ex.args}.')
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    # a dotted rest names something inside a submodule; a plain one, a tensor
                    name = key[len(prefix):].split(".", 1)
                    if name[0] not in (self._modules if len(name) > 1 else local_state):
                        unexpected_keys.append(key)

    @staticmethod
    def _swap_from_state_dict(param, src, assign):
        """The swap path (torch.__future__): the parameter object stays, its contents become
        `param.module_load(src, assign)` (a Parameter again if it was one)."""
        from ...utils._swap_tensors import swap_tensors
        new = param.module_load(src, assign=assign)
        if new is src or new is param:
            raise RuntimeError("module_load returned one of self or other, please .detach() the "
                               "result if returning one of the inputs in module_load")
        if isinstance(param, Parameter):
            if not isinstance(new, Parameter):
                new = Parameter(new, requires_grad=param.requires_grad)
            else:
                new.requires_grad_(param.requires_grad)
        swap_tensors(param, new)

    def _assign_from_state_dict(self, name, current, value):
        """load_state_dict(assign=True): the module takes the checkpoint's tensor itself (no
        copy), so a model built on the meta device is filled from a (mapped) checkpoint."""
        if isinstance(current, Parameter):
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=current.requires_grad)
            else:
                value.requires_grad_(current.requires_grad)
            self._parameters[name] = value
        else:
            self._buffers[name] = value

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)

        def load(module, local_state, prefix=""):
            # Each module sees only the keys under its own prefix; post hooks run children first.
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, keys)
                assert out is None, ("Hooks registered with "
                                     "``register_load_state_dict_post_hook`` are not expected "
                                     "to return new values, if incompatible_keys need to be "
                                     "modified, it should be done inplace.")

        load(self, dict(state_dict))
        load = None   # the closure refers to itself: break the cycle so nothing waits for gc
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ---- hooks ------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return _add_hook(self._forward_pre_hooks, hook, prepend,
                         ((self._forward_pre_hooks_with_kwargs, with_kwargs),))

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        return _add_hook(self._forward_hooks, hook, prepend,
                         ((self._forward_hooks_with_kwargs, with_kwargs),
                          (self._forward_hooks_always_called, always_call)))

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        self._is_full_backward_hook = _backward_hook_kind(
            self._is_full_backward_hook, True, "on a single Module")
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """The legacy backward hook (deprecated for register_full_backward_hook): a post-hook
        on the autograd node that made the module's first output."""
        self._is_full_backward_hook = _backward_hook_kind(
            self._is_full_backward_hook, False, "on a single Module")
        return _add_hook(self._backward_hooks, hook)

    def register_state_dict_pre_hook(self, hook):
        return _add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        def must_return_none(module, state_dict, prefix, local_metadata):
            if hook(module, state_dict, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return _add_hook(self._state_dict_hooks, must_return_none)

    def _register_state_dict_hook(self, hook):
        """The older form: the hook may return a new state dict."""
        return _add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        return _add_hook(self._load_state_dict_pre_hooks,
                         _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook):
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # ---- repr -------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        keys = set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | \
            set(self._modules)
        return sorted(k for k in keys if not k[0].isdigit())


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)
