"""nn.utils.weight_norm and parametrizations.weight_norm go through the fused
`_weight_norm_interface` op where torch's `_weight_norm` does (the first or last dim):
the same grad_fn names, values, gradients and double-backward gradients as torch."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

W = np.arange(24.0).reshape(3, 2, 4) / 11 - 0.9


def _conv(m, dim, dtype="float32"):
    c = m.nn.Conv1d(2, 3, 4, bias=False)
    with m.no_grad():
        c.weight.copy_(m.tensor(W))
    c = c.to(getattr(m, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.nn.utils.weight_norm(c, dim=dim)


X = np.linspace(-1, 1, 2 * 2 * 6).reshape(2, 2, 6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, None])
def test_weight_norm_hook_form(dim, dtype):
    results = []
    for m in (torch, ember):
        c = _conv(m, dim, dtype)
        x = m.tensor(X).to(getattr(m, dtype))
        y = c(x)
        (y.float() * m.tensor(X[:, :1, :3]).float().sum()).sum().backward()
        results.append((type(c.weight.grad_fn).__name__, y, c.weight_g.grad, c.weight_v.grad))
    (t_name, *t), (e_name, *e) = results
    assert e_name == t_name
    tol = 2e-2 if dtype in ("bfloat16", "float16") else 1e-5
    for a, b in zip(e, t):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_parametrization_form(dim):
    results = []
    for m in (torch, ember):
        lin = m.nn.Linear(4, 3)
        with m.no_grad():
            lin.weight.copy_(m.tensor(W.reshape(6, 4)[:3]))
        p = m.nn.utils.parametrizations.weight_norm(lin, dim=dim)
        w = p.weight
        (w * w.detach().cos()).sum().backward()
        o = p.parametrizations.weight
        results.append((type(w.grad_fn).__name__, w, o.original0.grad, o.original1.grad))
    (t_name, *t), (e_name, *e) = results
    assert e_name == t_name
    for a, b in zip(e, t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 2])
def test_double_backward_like_torch(dim):
    v = np.random.default_rng(0).uniform(0.5, 1.5, (3, 2, 4))
    g = np.random.default_rng(1).normal(size=[3 if dim == 0 else 1, 1, 4 if dim == 2 else 1])
    out = []
    for m in (torch, ember):
        vt, gt = m.tensor(v, requires_grad=True), m.tensor(g, requires_grad=True)
        w = m._weight_norm(vt, gt, dim)
        assert type(w.grad_fn).__name__ == "WeightNormInterfaceBackward0"
        gv, gg = m.autograd.grad((w * w.detach().sin()).sum(), [vt, gt], create_graph=True)
        out.append(m.autograd.grad((gv * gv).sum() + gg.sum(), [vt, gt]))
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_fused_backward_op_has_no_derivative():
    for m in (torch, ember):
        v = m.tensor(W, requires_grad=True)
        g = m.ones(3, 1, 1, dtype=m.float64, requires_grad=True)
        w, norms = m._weight_norm_interface(v, g, 0)
        assert not norms.requires_grad
        gv, _ = m.ops.aten._weight_norm_interface_backward(w, v, g, norms, 0)
        with pytest.raises(RuntimeError, match="derivative for aten::_weight_norm_interface_"
                                               "backward is not implemented"):
            gv.sum().backward()
