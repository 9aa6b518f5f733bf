"""Complex autograd refused for ops off PyTorch's complex-differentiable list: the same
RuntimeError, with the same op name, in the forward, as torch; in-place ops, ops on the list,
no_grad and inputs that do not require grad are not refused."""
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

Z = np.array([[0.3 + 0.4j, 0.5 - 0.2j, -0.6 + 0.1j], [0.2 + 0.7j, -0.1 - 0.3j, 0.4 + 0.05j]])


def _leaf(m, dtype="complex64"):
    return m.from_numpy(Z.copy()).to(getattr(m, dtype)).requires_grad_()


REFUSED = {
    "silu": lambda m, z: m.nn.functional.silu(z),
    "gelu": lambda m, z: m.nn.functional.gelu(z),
    "softplus": lambda m, z: m.nn.functional.softplus(z),
    "elu_or_kernel_error": lambda m, z: m.nn.functional.elu(z),
    "softmax": lambda m, z: m.softmax(z, 0),
    "cumsum_then_silu": lambda m, z: m.nn.functional.silu(z.cumsum(0)),
    "sum_then_silu_backward": lambda m, z: m.nn.functional.silu(z).sum().abs(),
}

ALLOWED = {
    "exp": lambda m, z: m.exp(z), "sigmoid": lambda m, z: m.sigmoid(z),
    "tanh": lambda m, z: m.tanh(z), "matmul": lambda m, z: z @ z.T,
    "einsum": lambda m, z: m.einsum("ij,kj->ik", z, z), "narrow": lambda m, z: z.narrow(1, 0, 2),
    "conj_physical": lambda m, z: m.conj_physical(z), "abs": lambda m, z: z.abs(),
    "cumsum": lambda m, z: z.cumsum(1), "mean": lambda m, z: z.mean(0),
    "inplace_silu": lambda m, z: m.nn.functional.silu(z.clone(), inplace=True),
    "inplace_sigmoid": lambda m, z: z.clone().sigmoid_(),
    "det": lambda m, z: m.linalg.det(z[:, :2]), "svdvals": lambda m, z: m.linalg.svdvals(z),
}


def _outcome(m, fn, dtype="complex64"):
    try:
        out = fn(m, _leaf(m, dtype))
    except Exception as e:  # noqa: BLE001 -- the outcome compared with torch's
        return type(e).__name__, str(e)
    return "ok", type(out.grad_fn).__name__


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_like_torch(name, dtype):
    t = _outcome(torch, REFUSED[name], dtype)
    e = _outcome(ember, REFUSED[name], dtype)
    assert t[0] != "ok", f"torch records {name}: {t}"
    assert e[0] == t[0], f"ember {e} != torch {t}"
    if "does not support automatic differentiation" in t[1]:
        assert e[1] == t[1]


def test_silu_message_names_op():
    z = _leaf(ember)
    with pytest.raises(RuntimeError, match=re.escape(
            "silu does not support automatic differentiation for outputs with complex dtype.")):
        ember.nn.functional.silu(z).sum().abs().backward()


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_allowed_like_torch(name):
    t = _outcome(torch, ALLOWED[name])
    e = _outcome(ember, ALLOWED[name])
    assert t[0] == "ok" and e[0] == "ok", f"ember {e}, torch {t}"


def test_not_refused_without_grad():
    for m in (torch, ember):
        z = m.from_numpy(Z.copy())
        out = m.nn.functional.silu(z)            # no input requires grad
        assert not out.requires_grad
        with m.no_grad():
            out = m.nn.functional.silu(_leaf(m))
        assert not out.requires_grad
        assert m.nn.functional.silu(_leaf(m).detach()).dtype == m.complex64


def test_real_outputs_not_refused():
    # silu of a real tensor requiring grad: recorded as usual
    for m in (torch, ember):
        x = m.tensor([0.5, -1.0], requires_grad=True)
        m.nn.functional.silu(x).sum().backward()
        assert x.grad is not None
