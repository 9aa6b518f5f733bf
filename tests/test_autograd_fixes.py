"""Fixes found by running PyTorch's test/autograd/test_functional.py and test/test_autograd.py
on ember, checked against PyTorch on the same inputs."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shapes", [[(2, 3)], [()], [(1,), (), ()], [(2, 3), (3,), (3, 4, 2)]])
def test_construct_standard_basis_for(shapes):
    def run(L):
        ts = tuple(L.ones(s, dtype=L.float64 if i % 2 else L.float32)
                   for i, s in enumerate(shapes))
        return L.autograd.functional._construct_standard_basis_for(
            ts, tuple(t.numel() for t in ts))
    for e, t in zip(run(ember), run(torch)):
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("api", ["vjp", "jvp"])
def test_functional_strict_create_graph_constant_jacobian(api):
    """strict=True with create_graph=True refuses a function whose Jacobian is constant."""
    for L in (ember, torch):
        inp, v = L.rand(4, requires_grad=True), L.rand(4)
        fn = getattr(L.autograd.functional, api)
        with pytest.raises(RuntimeError, match="jacobian of the user-provided function is "
                                               "independent of input 0"):
            fn(lambda a: a.clone(), inp, v, create_graph=True, strict=True)
        out = fn(lambda a: a.clone(), inp, v, create_graph=True, strict=False)[1]
        np.testing.assert_allclose(out.detach().numpy(), v.numpy())
