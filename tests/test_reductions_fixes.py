"""Fixes found by running PyTorch's test_reductions.py on ember, checked against PyTorch: the
complex logcumsumexp scan (starts from -inf + 0j, keeps the larger term's phase unwrapped, and
PyTorch's rules for infinite and NaN parts)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

inf, nan = float("inf"), float("nan")
CASES = [
    [-inf + 4j, -inf + 1j, 1.2 + 2.1j, 1e10 + 1e20j, inf + 0j, inf + 1j, inf + 3j, nan + 2j],
    [complex(-inf, inf), complex(-inf, inf), -inf + 1j, 1.2 + 2.1j, complex(2.4, inf)],
    [1e3 + 0j, 1e-18 + 1e4j, 1e2 + 1e-8j],
    [complex(nan, 0.0), 1 + 1j],
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_complex_logcumsumexp_special_values(case, dtype):
    e = ember.logcumsumexp(ember.tensor(CASES[case], dtype=getattr(ember, dtype)), 0)
    t = torch.logcumsumexp(torch.tensor(CASES[case], dtype=getattr(torch, dtype)), 0)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_complex_logcumsumexp_along_each_dim(dim):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))
    e = ember.logcumsumexp(ember.tensor(x), dim).numpy()
    t = torch.logcumsumexp(torch.tensor(x), dim).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)
    assert ember.logcumsumexp(ember.tensor(1 + 2j), 0).item() == \
        torch.logcumsumexp(torch.tensor(1 + 2j), 0).item()
