"""Samplers PyTorch exposes for torch.distributions: binomial, _standard_gamma and
_sample_dirichlet. They draw from the given Generator (a 64-bit seed taken from its stream
seeds NumPy's samplers), so a seeded generator gives reproducible draws; the draws follow the
same distributions as PyTorch's but are not its bit stream.
"""
import numpy as np

from .._core import dtype as D
from .._core.grad_mode import _grad_state
from .. import _refs as B
from .._core.type_info import finfo

__all__ = ["binomial", "_standard_gamma", "_sample_dirichlet"]


def _numpy_rng(generator):
    words = B.empty(2, dtype=D.int64).random_(0, 2 ** 31, generator=generator).tolist()
    return np.random.default_rng(words)


def _check(name, *tensors):
    for t in tensors:
        if not t.is_floating_point():
            from .._aten.elementwise import not_implemented
            raise not_implemented(name, t.dtype)
        if t.requires_grad and _grad_state.enabled:
            raise NotImplementedError(f"{name}: gradients with respect to the parameters are "
                                      f"not supported in ember")


def binomial(count, prob, generator=None):
    _check("binomial_cpu", count, prob)
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"expected scalar type {count.dtype} but found {prob.dtype}")
    B.broadcast_shapes(count.shape, prob.shape)  # PyTorch's error for shapes that do not
    c = count.detach().numpy().astype(np.float64)
    p = prob.detach().numpy().astype(np.float64)
    c, p = np.broadcast_arrays(c, p)
    draws = _numpy_rng(generator).binomial(c.astype(np.int64), np.clip(p, 0, 1))
    draws = np.where(np.isnan(p) | np.isnan(c), np.nan, draws)
    return B.tensor(draws, dtype=count.dtype)


def _standard_gamma(input, generator=None):
    _check("_standard_gamma", input)
    alpha = input.detach().numpy().astype(np.float64)
    draws = _numpy_rng(generator).standard_gamma(alpha)
    # PyTorch keeps the draw away from zero: the smallest positive normal number
    return B.tensor(np.maximum(draws, finfo(input.dtype).tiny), dtype=input.dtype)


def _sample_dirichlet(input, generator=None):
    _check("_sample_dirichlet", input)
    gamma = _standard_gamma(input, generator).to(D.float64)
    return (gamma / gamma.sum(-1, keepdim=True)).to(input.dtype)
