"""make_functional, make_functional_with_buffers, combine_state_for_ensemble (functorch's
deprecated module API, torch/_functorch/make_functional.py).

`make_functional(model)` returns `(func, params)`: `func` holds a deep copy of the model whose
parameters were taken out (each replaced by a meta-device Parameter of the same shape), and
`func(params, *args)` puts the given tensors in their place for one call, then takes them out
again. Tied parameters (one tensor under several names) appear once in `params`; every name
of the tie is filled from that one tensor. `torch.func.functional_call` is the replacement.
"""
import copy

from .._bindings.factories import empty_like as _empty_like
from .._dispatch.dispatcher import lookup as _lookup
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..nn.utils.stateless import _swap_tensor

__all__ = ["make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "functional_init", "functional_init_with_buffers", "FunctionalModule",
           "FunctionalModuleWithBuffers"]


def _extract(mod, named_members, as_parameter):
    """Take the tensors `named_members` lists out of `mod`, leaving meta-device stand-ins.
    Returns (unique tensors, their first names, {first name: every name of that tensor})."""
    unique = list(named_members(remove_duplicate=True))
    names_map = {name: [] for name, _ in unique}
    first_name = {id(t): name for name, t in unique}
    stand_ins = {}
    for name, t in list(named_members(remove_duplicate=False)):
        names_map[first_name[id(t)]].append(name)
        if id(t) not in stand_ins:
            meta = _empty_like(t, device="meta")
            stand_ins[id(t)] = Parameter(meta) if as_parameter else meta
        _swap_tensor(mod, name, stand_ins[id(t)])
    return tuple(t for _, t in unique), tuple(name for name, _ in unique), names_map


def _swap_state(mod, names_map, tensors):
    """Put `tensors` under the names of `names_map` (in order; a tied tensor under all of its
    names) and return what was under the first names before."""
    old = []
    for names, t in zip(names_map.values(), tensors):
        old.append(_swap_tensor(mod, names[0], t))
        for name in names[1:]:
            _swap_tensor(mod, name, t)
    return old


class FunctionalModule(Module):
    """The `func` of `make_functional`: `func(params, *args, **kwargs)` runs the model with
    `params` as its parameters."""

    def __init__(self, stateless_model, param_names, names_map):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        params, names, names_map = _extract(model_copy, model_copy.named_parameters, True)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return FunctionalModule(model_copy, names, names_map), params

    def forward(self, params, *args, **kwargs):
        old = _swap_state(self.stateless_model, self.names_map, params)
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.names_map, old)


class FunctionalModuleWithBuffers(Module):
    """The `func` of `make_functional_with_buffers`: `func(params, buffers, *args, **kwargs)`."""

    def __init__(self, stateless_model, param_names, buffer_names, param_names_map,
                 buffer_names_map):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**param_names_map, **buffer_names_map}

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        params, param_names, param_map = _extract(model_copy, model_copy.named_parameters, True)
        buffers, buffer_names, buffer_map = _extract(model_copy, model_copy.named_buffers, False)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        func = FunctionalModuleWithBuffers(model_copy, param_names, buffer_names, param_map,
                                           buffer_map)
        return func, params, buffers

    def forward(self, params, buffers, *args, **kwargs):
        old = _swap_state(self.stateless_model, self.all_names_map,
                          tuple(params) + tuple(buffers))
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.all_names_map, old)


def make_functional(model, disable_autograd_tracking=False):
    """(func, params) of `model`, which must have no buffers; `func(params, *args)` is
    `model(*args)` with `params` as its parameters."""
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(func, params, buffers) of `model`; `func(params, buffers, *args)` is `model(*args)`
    with those parameters and buffers."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def _stack_detached(per_model):
    stack = _lookup("stack")
    return tuple(stack(list(shards), 0).detach() for shards in zip(*per_model))


def combine_state_for_ensemble(models):
    """(func, params, buffers) for vmapping one model's `func` over `models`' stacked
    parameters and buffers (each with a new leading dim of size len(models))."""
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    return funcs[0], _stack_detached(params), _stack_detached(buffers)


def _functional_v1(model, with_buffers):
    """functorch's first API: (weights[, buffers], fun, names[, buffer names]) where
    `fun(weights[, buffers], args_tuple)` runs a fresh copy of `model` loaded with them."""
    weights, weight_names, _ = _extract(model, model.named_parameters, True)
    if not with_buffers:
        if len(list(model.buffers())) > 0:
            raise RuntimeError("make_functional_deprecated_v1(model): `model` has buffers. "
                               "Please use make_functional_with_buffers_deprecated_v1(model) "
                               "instead.")

        def fun(weights, data):
            mutable = copy.deepcopy(model)
            for name, w in zip(weight_names, weights):
                _swap_tensor(mutable, name, w)
            return mutable(*data)
        return weights, fun, weight_names
    buffers, buffer_names, _ = _extract(model, model.named_buffers, False)

    def fun_with_buffers(weights, buffers, data):
        mutable = copy.deepcopy(model)
        for name, t in zip(weight_names + buffer_names, tuple(weights) + tuple(buffers)):
            _swap_tensor(mutable, name, t)
        return mutable(*data)
    return weights, buffers, fun_with_buffers, weight_names, buffer_names


def _functional_init(model_class, ensemble_shape, device, with_buffers):
    def wrapped(*args, **kwargs):
        if len(ensemble_shape) >= 2:
            raise ValueError("NYI: ensemble_shape with more than 1 element")
        if len(ensemble_shape) == 0:    # PyTorch's with_buffers variant returns this too
            return _functional_v1(model_class(*args, **kwargs).to(device), False)
        num_models = ensemble_shape[0]
        if num_models <= 0:
            raise ValueError(f"num_models {num_models} should be > 0")
        models = [model_class(*args, **kwargs).to(device) for _ in range(num_models)]
        template = _functional_v1(model_class(*args, **kwargs), with_buffers)
        states = [_functional_v1(m, with_buffers) for m in models]
        if not with_buffers:
            return _stack_detached([s[0] for s in states]), template[1], template[2]
        return (_stack_detached([s[0] for s in states]), _stack_detached([s[1] for s in states]),
                template[2], template[3], template[4])
    return wrapped


def functional_init(model_class, ensemble_shape=(), device="cpu"):
    """A constructor of `model_class` returning `(weights, fun, names)` (weights stacked over
    `ensemble_shape[0]` fresh models when given), for vmap over an ensemble."""
    return _functional_init(model_class, ensemble_shape, device, with_buffers=False)


def functional_init_with_buffers(model_class, ensemble_shape=(), device="cpu"):
    """As functional_init, returning `(weights, buffers, fun, weight_names, buffer_names)`."""
    return _functional_init(model_class, ensemble_shape, device, with_buffers=True)
