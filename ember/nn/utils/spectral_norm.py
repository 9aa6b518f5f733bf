"""Spectral normalisation, the hook-based form: `W = W_orig / sigma(W_orig)`.

sigma, the largest singular value of the weight (viewed as a matrix with `dim` first), is
estimated by power iteration: buffers `u` and `v` hold the current left and right singular
vector estimates, and every forward in training mode refines them in place with
`n_power_iterations` steps of v <- normalize(W^T u), u <- normalize(W v), after which
sigma = u . W v. In eval mode the stored u and v are used as they are.

Why the vectors are updated in place and then cloned: in place, so that the refined estimates
persist in the module's buffers (and in any replica that shares their storage); cloned before
use, so that a second forward in the same step (a GAN's D(real) - D(fake)) does not modify
tensors the first forward's graph saved for backward.

The state dict carries a version number in its metadata; a version-0 state dict (which stored
`W` itself and no `v`) is converted on load by solving for `v`.
"""
from ... import _refs as E
from ..._core.memory_format import contiguous_format
from ... import linalg
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..parameter import Parameter, UninitializedParameter
from .weight_norm import _find_hook, _remove_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that sets `module.<name>` to `<name>_orig / sigma`."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(E.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(E.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone(memory_format=contiguous_format)
                v = v.clone(memory_format=contiguous_format)
        sigma = E.dot(u, E.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # a v with u = normalize(W v) (least squares through the pseudo-inverse of W^T W),
        # scaled so that u . W v = target_sigma
        v = linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                                u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / E.dot(u, E.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        if _find_hook(module._forward_pre_hooks, SpectralNorm, name) is not None:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter "
                               f"{name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # code that expects `module.weight` to exist still finds it, as a plain attribute
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 state dict (W stored, no v) on load: with W = W_orig / sigma,
    sigma is the mean of W_orig / W and v is solved for from u."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (version is None and weight_key not in state_dict
                and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))):
            return  # a current state dict that lost its metadata
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the spectral-norm version in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Normalise `module.<name>` by its spectral norm before every forward (see the module
    docstring). `dim` defaults to 1 for transposed convolutions, else 0. Returns the module."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Make `module.<name>` a plain parameter again (the current W_orig / sigma)."""
    _remove_hook(module, SpectralNorm, name, "spectral_norm")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[k]
                break
    return module
