"""torch.func transforms (grad, vjp, jvp, jacrev) compared with PyTorch: argnums checking
(_slice_argnums), aux/output checks, and the transforms under no_grad / inference_mode
(pytorch test/functorch/test_eager_transforms.py, TestSliceArgnums and TestGradTransform)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

from ember._functorch.eager_transforms import _slice_argnums as e_slice  # noqa: E402
from torch._functorch.eager_transforms import _slice_argnums as t_slice  # noqa: E402


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:   # the exception type and message are what is compared
        return ("raise", type(e).__name__, str(e))


def _np(t):
    return np.asarray(t.detach().numpy())


ARGNUMS = [0, 4, -1, -5, (0, -3), (1, 0), 5, -6, (-6,), 0.0, [0], (0.0,), ((0, 1), 2), (),
           (0, 0), (0, -5)]


@pytest.mark.parametrize("argnums", ARGNUMS, ids=repr)
def test_slice_argnums_matches_torch(argnums):
    args = (0.1, 1.1, 2.1, 3.1, 4.1)
    assert _outcome(lambda: e_slice(args, argnums)) == _outcome(lambda: t_slice(args, argnums))
    assert (_outcome(lambda: e_slice(args, argnums, as_tuple=False))
            == _outcome(lambda: t_slice(args, argnums, as_tuple=False)))


@pytest.mark.parametrize("argnums", [-3, 2, [0], ("0",), (0, 0), (0, -2), (1, 0), -1])
def test_grad_argnums_errors_match_torch(argnums):
    def run(lib):
        x, y = lib.tensor(2.0), lib.tensor(3.0)
        return _outcome(lambda: [float(g) for g in lib.func.grad(lib.mul, argnums=argnums)(x, y)]
                        if isinstance(argnums, tuple) else
                        float(lib.func.grad(lib.mul, argnums=argnums)(x, y)))
    assert run(ember) == run(torch)


@pytest.mark.parametrize("aux", [1, 1.0, "abc"])
def test_non_tensor_aux_raises_like_torch(aux):
    for wrap in (lambda x: aux, lambda x: [x, aux]):
        def run(lib):
            x = lib.ones(3)
            return (_outcome(lambda: lib.func.grad(lambda x: (x.sum(), wrap(x)), has_aux=True)(x)),
                    _outcome(lambda: lib.func.vjp(lambda x: (x, wrap(x)), x, has_aux=True)))
        e, t = run(ember), run(torch)
        assert e == t and e[0][0] == "raise"


@pytest.mark.parametrize("output", [None, (), 1, True, "abc"], ids=repr)
def test_vjp_output_checks_match_torch(output):
    def run(lib):
        return _outcome(lambda: lib.func.vjp(lambda _: output, lib.ones(2)))
    e, t = run(ember), run(torch)
    assert e[:2] == t[:2] == ("raise", "RuntimeError")
    assert e[2].split(" (got")[0].split(", got")[0] == t[2].split(" (got")[0].split(", got")[0]


def test_vjp_cotangent_structure_checked_like_torch():
    def run(lib):
        x = lib.tensor(1.0)
        _, vjp_fn = lib.func.vjp(lambda x: (x, (x, x)), x)
        return _outcome(lambda: vjp_fn(((x, (x, x)),)))
    e, t = run(ember), run(torch)
    assert e[:2] == t[:2] == ("raise", "RuntimeError")
    assert "Expected pytree structure" in e[2]


def _no_grad_cases(lib):
    f = lambda x: x ** 2   # noqa: E731
    out = {}
    x = lib.tensor(1.5, requires_grad=True)
    with lib.no_grad():
        y = lib.func.grad(lib.sin)(x)
    out["outside"] = (float(y), y.requires_grad)

    def shifted(x):
        with lib.no_grad():
            shift = lib.func.grad(lambda x: 0.25 * x ** 4)(x)
        return x ** 3 - shift
    y = lib.func.grad(shifted)(x)
    (z,) = lib.autograd.grad(y, x)
    out["nested"] = (float(y), float(z))

    with lib.no_grad():
        o, vjp_fn = lib.func.vjp(f, x)
        (g,) = vjp_fn(lib.tensor(1.0))
    out["vjp_all"] = (o.requires_grad, g.requires_grad, float(g))
    o, vjp_fn = lib.func.vjp(f, x)
    with lib.no_grad():
        (g,) = vjp_fn(lib.tensor(1.0))
    out["vjp_fn"] = (o.requires_grad, g.requires_grad, float(lib.autograd.grad(o, x)[0]))
    with lib.no_grad():
        o, vjp_fn = lib.func.vjp(f, x)
    (g,) = vjp_fn(lib.tensor(1.0))
    out["vjp_only"] = (o.requires_grad, g.requires_grad, float(lib.autograd.grad(g, x)[0]))
    return out


def test_transforms_under_no_grad_match_torch():
    e, t = _no_grad_cases(ember), _no_grad_cases(torch)
    assert e.keys() == t.keys()
    for k in t:
        assert e[k] == pytest.approx(t[k], rel=1e-6), k


def _inference_cases(lib):
    x = lib.tensor([0.5, -1.0, 2.0])
    res = []
    with lib.inference_mode():
        res.append(lib.func.grad(lambda x: (x ** 2).sum())(x))
        res.append(lib.func.vjp(lambda x: (x ** 2).sum(), x)[1](lib.tensor(1.0))[0])
        res.append(lib.func.jvp(lambda x: (x ** 2).sum(), (x,), (lib.ones(3),))[1])
        res.append(lib.func.jacrev(lambda x: x ** 2)(x))
        res.append(lib.func.jacrev(lib.func.grad(lambda x: (x ** 3).sum()))(x))
        res.append(lib.func.grad(lambda x: (x ** 2).sum())(lib.tensor([1.0, 3.0])))  # inference input
        still_on = lib.is_inference_mode_enabled()
    return [_np(r) for r in res], still_on, lib.is_inference_mode_enabled()


def test_transforms_under_inference_mode_match_torch():
    e, t = _inference_cases(ember), _inference_cases(torch)
    assert e[1:] == t[1:] == (True, False)
    for a, b in zip(e[0], t[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
