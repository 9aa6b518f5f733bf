"""Fixes found by running PyTorch's test/distributions/ files on ember, each checked against torch
on the same inputs."""
import itertools

import numpy as np
import pytest

import ember
import ember.distributions as ED
from _torch_oracle import assert_same

torch = pytest.importorskip("torch")
import torch.distributions as TD  # noqa: E402

# self == 0 meets every kind of `other`: log(other) finite, 0, negative, nan, inf
_VALS = [0.0, 1.0, 2.0, -1.0, 0.3, float("nan"), float("inf"), -2.0]
_SELF, _OTHER = zip(*itertools.product(_VALS, _VALS))


@pytest.mark.parametrize("name", ["xlogy", "special_xlog1py"])
def test_xlogy_grad_of_self_where_self_is_zero(name):
    # d/dself is log(other) even where self is 0; only where that log is -inf or nan is it 0
    def grads(lib):
        fn = lib.xlogy if name == "xlogy" else lib.special.xlog1py
        s = lib.tensor(_SELF, dtype=lib.float64, requires_grad=True)
        o = lib.tensor(_OTHER, dtype=lib.float64, requires_grad=True)
        return lib.autograd.grad(fn(s, o).sum(), (s, o))

    for e, t in zip(grads(ember), grads(torch)):
        assert_same(e, t)


def test_dirichlet_log_prob_grad_at_unit_concentration():
    # concentration 1 makes xlogy's self 0 in log_prob; its gradient is still log(x)
    x = np.array([[0.3, 0.5, 0.2], [0.1, 0.1, 0.8]])
    a = np.array([[1.0, 0.5, 2.0], [1.0, 1.0, 3.0]])

    def grad(lib, D):
        alpha = lib.tensor(a, requires_grad=True)
        return lib.autograd.grad(D.Dirichlet(alpha).log_prob(lib.tensor(x)).sum(), alpha)[0]

    assert_same(grad(ember, ED), grad(torch, TD))


def test_binomial_with_a_probability_that_underflows_log1p():
    # log1p(-p) is a denormal, so the inversion sampler's geometric draw is inf: no successes
    for lib in (ember, torch):
        count = lib.tensor([10.0, 3.0], dtype=lib.float64)
        prob = lib.tensor([1e-320, 1e-310], dtype=lib.float64)
        assert lib.binomial(count, prob).tolist() == [0.0, 0.0]
