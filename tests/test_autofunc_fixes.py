"""Fixes found by running PyTorch's test/autograd/test_functional.py, test/autograd/test_complex.py
and test/test_autograd.py's classes after TestAutograd on ember, each checked against PyTorch on
the same inputs."""
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = (ember, torch)


def _logging_tensor(L):
    return importlib.import_module(L.__name__ + ".testing._internal.logging_tensor").LoggingTensor


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_of_wrapper_subclass_inputs(fast_mode):
    """gradcheck perturbs a wrapper subclass (no data of its own) through its own dispatch and
    reads its outputs the same way; the version counter autograd saved is left alone."""
    def run(L):
        LT = _logging_tensor(L)
        x = LT(L.tensor([0.3, 0.7, 1.1], dtype=L.double), requires_grad=True)
        y = LT(L.tensor([0.5, -0.2, 0.9], dtype=L.double), requires_grad=True)
        ok = L.autograd.gradcheck(lambda a, b: (a.exp() * b, a.sum() * b), (x, y),
                                  fast_mode=fast_mode)
        okgg = L.autograd.gradgradcheck(lambda a, b: (a.exp() * b).sum(), (x, y),
                                        fast_mode=fast_mode)
        return ok, okgg, x._version, x.elem.tolist()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_of_wrapper_subclass_finds_a_wrong_gradient(fast_mode):
    def run(L):
        LT = _logging_tensor(L)

        class Wrong(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * a

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = LT(L.tensor([0.3, 0.7], dtype=L.double), requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            L.autograd.gradcheck(Wrong.apply, (x,), fast_mode=fast_mode)
        return x.elem.tolist()
    a, b = run(ember), run(torch)
    np.testing.assert_allclose(a, b)
