"""optim.Optimizer: parameter groups, per-parameter state, step hooks and state dicts, as PyTorch.

An optimizer holds `param_groups` (a list of dicts: "params" plus that group's hyperparameters,
filled in from `defaults`) and `state` (a dict keyed by parameter tensor: that parameter's
buffers, e.g. Adam's `step`, `exp_avg`, `exp_avg_sq`). `step()` is the algorithm; everything else
lives here. `state_dict()` replaces every parameter by its index in group order, so a state dict
saved by PyTorch loads into ember's optimizer and the other way round.
"""
import functools
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from typing import Any, Dict, Tuple, Union
from copy import deepcopy
from itertools import chain

import numpy as np

from .._core import dtype as _dtype
from .._core.tensor import Tensor, _wrap
from ..autograd.graph import RemovableHandle
from .._dynamo.eval_frame import _compiling, graph_break
from .._dynamo.optimizer import current as _compiled_step
from ..autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..utils._foreach_utils import (_get_foreach_kernels_supported_devices,
                                    _get_fused_kernels_supported_devices)

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


class _RequiredParameter:
    """The default of a hyperparameter that every group must give (e.g. a required lr)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _add_hook(hooks, hook, prepend=False):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) -> None or (args, kwargs), before every optimizer's step."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) -> None, after every optimizer's step."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def _get_scalar_dtype(is_fused=None):
    """The dtype of scalar state such as `step`: float32 for fused optimizers, else float64
    under a float64 default and float32 otherwise."""
    if is_fused:
        return _dtype.float32
    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


def _to_scalar(x):
    """A 1-element hyperparameter tensor squeezed to 0-d; anything else unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_value(x):
    """A hyperparameter as a Python number (0-d tensors are read out)."""
    return x.item() if isinstance(x, Tensor) else x


def _lr(group):
    """The group's learning rate as a Python float (a tensor lr is read out)."""
    return _get_value(_to_scalar(group["lr"]))


_VALUE_NAMES = {"eps": "epsilon"}


def _check_hyperparameters(**values):
    """PyTorch's argument checks, in the order given: every value >= 0 (lr may be a 1-element
    tensor), each beta in [0, 1). The error names the first bad one, with PyTorch's message."""
    for name, value in values.items():
        if name == "lr":
            if isinstance(value, Tensor) and value.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            if not 0.0 <= value:
                raise ValueError(f"Invalid learning rate: {value}")
        elif name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {_VALUE_NAMES.get(name, name)} value: {value}")


def _check_fused(fused, foreach, differentiable):
    """ember has one implementation; `fused` and `foreach` are accepted and checked as PyTorch
    checks them."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _device_dtype_check_for_fused(p, cuda_unsupported=False):
    """PyTorch's check, at the first step of a fused optimizer, that a parameter can take the
    fused kernel: floating point, on a device that has one."""
    devices = _get_fused_kernels_supported_devices()
    if cuda_unsupported:
        devices.remove("cuda")
    if not (p.device.type in devices and p.is_floating_point()):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of "
                           f"supported devices: {devices} but {p.dtype} and {p.device.type}")


def _get_capturable_supported_devices(supports_xla=True):
    """The device types on which an optimizer may be capturable=True (not the CPU)."""
    return ["cuda", "xpu", "hpu", "privateuseone"] + ["xla"] * supports_xla


def _default_to_fused_or_foreach(params, differentiable, use_fused=False):
    """(fused, foreach): the implementation a functional optimizer picks when given neither,
    fused (if `use_fused`) or foreach when every parameter is on a device with such kernels;
    the for-loop on the CPU and with differentiable=True."""
    if differentiable:
        return False, False
    fused = use_fused and all(p is None or (type(p) is Tensor and p.device.type in
                                            _get_fused_kernels_supported_devices()
                                            and p.is_floating_point()) for p in params)
    foreach = not fused and all(p is None or (type(p) is Tensor and p.device.type in
                                              _get_foreach_kernels_supported_devices())
                                for p in params)
    return fused, foreach


def _use_grad_for_differentiable(func):
    """Decorate an optimizer's `step`: run it with grad mode on only when the optimizer is
    `differentiable` (its `defaults["differentiable"]`), as every built-in step runs."""
    @functools.wraps(func)
    def _use_grad(*args, **kwargs):
        prev = is_grad_enabled()
        try:
            set_grad_enabled(args[0].defaults.get("differentiable", False))
            return func(*args, **kwargs)
        finally:
            set_grad_enabled(prev)
    return _use_grad


def _disable_dynamo_if_unsupported(single_tensor_fn=None):
    """Decorate a functional optimizer; PyTorch sends some compiled calls to its for-loop
    implementation, and ember has only that one, so the function is returned as it is."""
    return lambda func: func


def _stack_if_compiling(x):
    return x


def _view_as_real(params, *state_and_grads):
    """Replace, in the lists, each complex parameter and its state and gradient by its real
    view."""
    from .._bindings.generated import view_as_real
    for i, p in enumerate(params):
        if p.is_complex():
            params[i] = view_as_real(p)
            for s in state_and_grads:
                s[i] = view_as_real(s[i])


_params_doc = ("params (iterable): iterable of parameters or named_parameters to optimize\n"
               "            or iterable of dicts defining parameter groups. When using "
               "named_parameters,\n            all parameters in all groups should be named")
_foreach_doc = ("foreach (bool, optional): whether the multi-tensor (foreach) implementation "
                "is used (default: None)")
_fused_doc = "fused (bool, optional): whether the fused implementation is used (default: None)"
_capturable_doc = ("capturable (bool, optional): whether this instance is safe to capture in a "
                   "graph (default: False)")
_differentiable_doc = ("differentiable (bool, optional): whether autograd should occur through "
                       "the optimizer step in training (default: False)")
_maximize_doc = ("maximize (bool, optional): maximize the objective with respect to the\n"
                 "            params, instead of minimizing (default: False)")

ParamsT = Union[Iterable[Tensor], Iterable[Dict[str, Any]], Iterable[Tuple[str, Tensor]]]


# ---- state tensors ------------------------------------------------------------------------------
# State is made of plain ember tensors with PyTorch's dtypes and layouts, so that it pickles and
# state-dict-loads either way; the update kernels work on their NumPy arrays. `_wrap` makes a
# tensor that owns a fresh NumPy array, without a copy.

def _zeros_like(p):
    """torch.zeros_like(p, memory_format=torch.preserve_format)."""
    return _full_like(p, 0)


def _full_like(p, value):
    if p._lazy is not None:
        from .._lazy.optimizer import state_like
        return state_like(p, value)
    if p._np is None:  # a meta parameter (no data): its state is meta too, as in PyTorch
        from .._bindings.factories import full_like
        return full_like(p, value)
    return _wrap(np.full_like(p._np, value))


def _empty_like(p):
    if p._lazy is not None:
        from .._lazy.optimizer import state_like
        return state_like(p)
    if p._np is None:
        from .._bindings.factories import empty_like
        return empty_like(p)
    return _wrap(np.empty_like(p._np))


def _scalar_tensor(value):
    """A 0-d state tensor such as `step`: torch.tensor(value, dtype=_get_scalar_dtype())."""
    return _wrap(np.array(value, dtype=_get_scalar_dtype()._np))


def _increment(step_t):
    """`step_t += 1` on a 0-d step tensor; returns the new value as a Python float."""
    a = step_t._np
    a += 1
    step_t._bump_version()
    return float(a)


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of tensors, of (name, tensor) pairs, or of dicts (parameter groups).
        defaults: the hyperparameters a group gets when it does not specify them.
    """

    # Options a group saved by an older PyTorch may lack, filled in by __setstate__ (and so by
    # load_state_dict); and the per-parameter state such checkpoints kept as Python numbers.
    _group_defaults = {}
    _scalar_state = ()

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + params.type())
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, {})
                for key in self._scalar_state:
                    if key in p_state and not isinstance(p_state[key], Tensor):
                        p_state[key] = _scalar_tensor(float(p_state[key]))

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ---- step and its hooks ---------------------------------------------------------------------
    # Like PyTorch, the first optimizer of a class replaces the class's `step` by a wrapper that
    # runs the global and per-instance pre hooks (which may replace args and kwargs), the step
    # itself with grad mode set to `defaults["differentiable"]`, then the post hooks.

    @staticmethod
    def profile_hook_step(func):
        step = _use_grad_for_differentiable(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self, *_ = args
            if _compiling[0]:  # the update writes NumPy arrays: a capture would not see it
                graph_break(f"{type(self).__name__}.step() updates the parameters outside the "
                            "dispatcher (ember.compile runs it eagerly)")
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            out = step(*args, **kwargs)
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self):
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step()."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after step()."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _eval_closure(closure):
        """Run the closure (re-evaluating the loss) with grad enabled, as PyTorch's step does."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ---- state dicts ----------------------------------------------------------------------------

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, before state_dict() builds the dict."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, after state_dict()."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, before load_state_dict()."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, after load_state_dict()."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self):
        """{"state": {index: per-parameter state}, "param_groups": [group with "params" as
        indices]}: parameters are numbered in group order, first appearance wins."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index = {}
        param_groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            param_groups.append(packed)
        packed_state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        """A loaded state tensor, cast to the parameter's device and (if floating) dtype; `step`
        keeps its dtype unless the group is fused or capturable (then float32)."""
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dtype.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Load a state dict from `state_dict()` (ember's or PyTorch's): groups are matched by
        position and parameters by index; state tensors are cast to their parameter's dtype."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- groups and gradients -------------------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        """Drop every parameter's gradient (set_to_none=True) or fill it with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def add_param_group(self, param_group):
        """Add a group (a dict with "params" and optional hyperparameters) to `param_groups`."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                from .. import typename
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf
                                                                       or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=_user_stacklevel())
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


class _ElementwiseOptimizer(Optimizer):
    """The optimizers whose update acts on each parameter on its own, elementwise (all but LBFGS).

    Their step is PyTorch's: per group, the parameters that have gradients go to
    `_step_group(group, params, grads, has_sparse_grad)`, which creates their state where it is
    missing (PyTorch's `_init_group`) and calls the functional form (`adam(...)`, in the
    optimizer's module) on lists of the parameters, gradients and state tensors. The functional
    form runs the update, written on NumPy arrays, over each parameter (_implementations.py).
    """

    def step(self, closure=None):
        """Perform a single optimization step. closure: re-evaluates the model, returns loss."""
        compiled = _compiled_step(self)  # under ember.compile: _dynamo/optimizer.py
        if compiled is not None and compiled.run(closure):
            return None
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            has_sparse_grad = any(p.grad.is_sparse for p in params)
            if has_sparse_grad and not self._takes_sparse_grads:
                self._refuse_sparse()
            if group.get("fused"):
                for p in params:
                    # (state.get: reading an absent entry must not create one, as SGD without
                    # momentum keeps no state)
                    if not self.state.get(p) or getattr(
                            self, "_need_device_dtype_check_for_fused", True):
                        _device_dtype_check_for_fused(p)
                        self._need_device_dtype_check_for_fused = False
            self._step_group(group, params, [p.grad for p in params], has_sparse_grad)
        return loss

    def _step_group(self, group, params, grads, has_sparse_grad):
        raise NotImplementedError

    def _amp_args(self):
        """The `grad_scale` and `found_inf` that GradScaler sets on an optimizer whose step
        takes them (PyTorch's fused ones)."""
        return dict(grad_scale=getattr(self, "grad_scale", None),
                    found_inf=getattr(self, "found_inf", None))

    # SGD and Adagrad take sparse gradients (their functional forms refuse the options that
    # do not); the others raise PyTorch's error before any parameter of the group moves.
    _takes_sparse_grads = False

    def _refuse_sparse(self):
        raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")

    def _state_of(self, p, *zeros, **scalars):
        """p's state, created on first use as PyTorch creates it: a 0-d `step`, the 0-d tensors
        given in `scalars` (name=initial value), and a zero tensor like p for each name in
        `zeros`."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0)
            for name, value in scalars.items():
                state[name] = _scalar_tensor(value)
            for name in zeros:
                state[name] = _zeros_like(p)
        return state

    def _state_lists(self, params, *zeros, **scalars):
        """{name: [each parameter's state tensor of that name]}, for "step", `zeros` and
        `scalars`, the state created where missing (`_state_of`)."""
        states = [self._state_of(p, *zeros, **scalars) for p in params]
        return {name: [state[name] for state in states] for name in ("step",) + zeros
                + tuple(scalars)}
