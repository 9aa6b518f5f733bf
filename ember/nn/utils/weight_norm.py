"""Weight normalisation, the hook-based form: `w = g * v / ||v||`.

`weight_norm(module)` replaces the parameter `weight` by two parameters, `weight_g` (the
magnitude, one number per slice along `dim`) and `weight_v` (the direction), and registers a
forward pre-hook (the `WeightNorm` object itself) that recomputes the plain attribute `weight`
from them before every forward, so gradients reach g and v. The newer parametrization-based
form lives in `parametrizations.weight_norm` and shares `_weight_norm` below.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of every slice of `v` along `dim`, shaped to broadcast against `v`
    (size 1 everywhere but `dim`); `dim=-1` takes the norm of the whole tensor."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    kept = [1] * v.dim()
    kept[dim] = v.size(dim)
    moved = v.movedim(dim, 0).reshape(v.size(dim), -1)
    return moved.norm(pow, 1).view(kept)


def _weight_norm(v, g, dim=0):
    """w = v * g / ||v||, the norm taken over every dimension but `dim` (`torch._weight_norm`)."""
    from ember.linalg.composites import _weight_norm as weight_norm_op
    return weight_norm_op(v, g, dim)


def _find_hook(hooks, kind, name):
    """The key of the `kind` hook (WeightNorm, SpectralNorm) for tensor `name`, or None."""
    for k, hook in hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return k
    return None


def _remove_hook(module, kind, name, what):
    """Undo the `kind` forward pre-hook of tensor `name` and unregister it."""
    k = _find_hook(module._forward_pre_hooks, kind, name)
    if k is None:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    module._forward_pre_hooks[k].remove(module)
    del module._forward_pre_hooks[k]


class WeightNorm:
    """The forward pre-hook that recomputes `module.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=_user_stacklevel())
        if _find_hook(module._forward_pre_hooks, WeightNorm, name) is not None:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Split `module.<name>` into magnitude `<name>_g` and direction `<name>_v` (see the module
    docstring); `dim=None` normalises over the whole tensor. Returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Fold `<name>_g` and `<name>_v` back into one parameter `<name>` and drop the hook."""
    _remove_hook(module, WeightNorm, name, "weight_norm")
    return module
