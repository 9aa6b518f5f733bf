"""In-place ops on view_as_real / view_as_complex views (and views of them) under autograd, and
forward AD's make_dual under torch._vmap_internals' vmap (gradcheck's check_batched_forward_grad),
compared with torch: gradients, grad_fn names, tangents, gradcheck's verdicts and messages."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

RNG = np.random.default_rng(0)
CX = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4))
RE = RNG.standard_normal((4, 2))
W = RNG.standard_normal((4, 2))


def _name(fn):
    return None if fn is None else fn.name()


def _run(lib, case):
    """case(lib, x, w) -> (loss, tensors whose grad_fn names are compared); returns the
    gradients of the leaves and the names."""
    x = lib.tensor(CX if case.complex_leaf else RE).requires_grad_()
    w = lib.tensor(W).requires_grad_()
    loss, shown = case(lib, x, w)
    names = [(_name(t.grad_fn), [_name(e[0]) for e in t.grad_fn.next_functions])
             for t in shown]
    gx, gw = lib.autograd.grad(loss, (x, w), allow_unused=True)
    return [g if g is None else g.detach().numpy() for g in (gx, gw)], names


def complex_leaf(fn):
    fn.complex_leaf = True
    return fn


def real_leaf(fn):
    fn.complex_leaf = False
    return fn


@complex_leaf
def real_view_mul(lib, x, w):
    y = x.clone()
    v = lib.view_as_real(y)
    v.mul_(w)
    return (y * y).sum().abs(), [y, v]


@real_leaf
def complex_view_mul(lib, x, w):
    y = x.clone()
    v = lib.view_as_complex(y)
    v.mul_(lib.view_as_complex(w))
    return (y * w).sum(), [y, v]


@complex_leaf
def select_of_real_view(lib, x, w):  # the chain ends in an as_strided replay
    y = x.clone()
    v = lib.view_as_real(y)[1]
    v.mul_(w[0])
    return (y * y).sum().abs(), [y, v]


@complex_leaf
def real_view_of_slice(lib, x, w):  # an as_strided step first, then view_as_real
    y = x.clone()
    v = lib.view_as_real(y[1:])
    v.mul_(w[1:])
    return (y * y.conj() * y).sum().abs(), [y, v]


@complex_leaf
def real_and_imag(lib, x, w):
    y = x.clone()
    r, i = y.real, y.imag
    r.mul_(w[:, 0])
    i.add_(w[:, 1] ** 2)
    return (y * y * r.sum()).sum().abs(), [y, r, i]


@complex_leaf
def complex_of_real_view(lib, x, w):  # both steps replayed
    y = x.clone()
    v = lib.view_as_complex(lib.view_as_real(y))
    v.mul_(lib.view_as_complex(w))
    return (y * y).sum().abs(), [y, v]


@real_leaf
def narrow_of_complex_view(lib, x, w):
    y = x.clone()
    v = lib.view_as_complex(y).narrow(0, 1, 2)
    v.mul_(lib.view_as_complex(w)[:2])
    return (y * w).sum(), [y, v]


@complex_leaf
def base_written_then_view_used(lib, x, w):
    y = x.clone()
    v = lib.view_as_real(y)
    y.mul_(lib.view_as_complex(w))
    return (v * w).sum(), [y]


@complex_leaf
def other_view_written(lib, x, w):
    y = x.clone()
    v = lib.view_as_real(y)
    y[1:].mul_(2)
    return (v * w).sum(), [y]


@complex_leaf
def base_without_grad_written_through_view(lib, x, w):
    y = lib.zeros(4, dtype=lib.complex128)
    v = lib.view_as_real(y)
    v.copy_(w * 2)
    return (y * x).sum().abs(), [y, v]


CASES = [real_view_mul, complex_view_mul, select_of_real_view, real_view_of_slice, real_and_imag,
         complex_of_real_view, narrow_of_complex_view, base_written_then_view_used,
         other_view_written, base_without_grad_written_through_view]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_inplace_on_dtype_changing_view(case):
    eg, en = _run(ember, case)
    tg, tn = _run(torch, case)
    assert en == tn
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def _modified_saved_view(lib):
    x = lib.tensor(CX).requires_grad_()
    w = lib.tensor(W).requires_grad_()
    y = x.clone()
    r, i = y.real, y.imag
    r.mul_(w[:, 0])
    i.add_(r * w[:, 1])  # saves r, a view whose memory the add_ then writes
    with pytest.raises(RuntimeError) as info:
        (y * y).sum().abs().backward()
    return str(info.value)


def test_saved_regenerated_view_modified_error():
    assert _modified_saved_view(ember) == _modified_saved_view(torch)


def _double_backward(lib):
    x = lib.tensor(CX).requires_grad_()
    w = lib.tensor(W).requires_grad_()
    y = x.clone()
    lib.view_as_real(y).mul_(w)
    y.real.add_(w[:, 1] ** 2)
    loss = (y * y).sum().abs()
    gx, gw = lib.autograd.grad(loss, (x, w), create_graph=True)
    return [g.detach().numpy() for g in lib.autograd.grad((gx.abs() ** 2).sum() + gw.sum(),
                                                          (x, w))]


def test_double_backward_through_replayed_copyslices():
    for e, t in zip(_double_backward(ember), _double_backward(torch)):
        np.testing.assert_allclose(e, t, rtol=1e-10)


def _tangents(lib):
    fw = lib.autograd.forward_ad
    out = []
    with fw.dual_level():
        # a base without a tangent gets one when written through its view_as_real view
        y = lib.zeros(4, dtype=lib.complex128)
        v = lib.view_as_real(y)
        v.copy_(fw.make_dual(lib.tensor(RE), lib.tensor(W)))
        out += [fw.unpack_dual(y).tangent, fw.unpack_dual(v).tangent]
        # a view made before its base had a tangent reads the base's
        z = lib.zeros(4, 2, dtype=lib.float64)
        c = lib.view_as_complex(z)
        c[1:].copy_(fw.make_dual(lib.tensor(CX), lib.tensor(CX * 1j))[1:])
        out += [fw.unpack_dual(z).tangent, fw.unpack_dual(c).tangent,
                fw.unpack_dual(c * 2).tangent]
        # reverse mode recording the tangents: the write still reaches the base's tangent
        x0 = lib.tensor(CX).requires_grad_()
        p = fw.make_dual(lib.tensor(CX.imag), lib.tensor([1.0, 0, 0, 0]))
        q = (x0.real + p * 1j).clone()
        lib.view_as_real(q).mul_(fw.make_dual(lib.tensor(W), lib.zeros(4, 2,
                                                                      dtype=lib.float64)))
        q.real.add_(lib.tensor(W[:, 1]))
        out.append(fw.unpack_dual(q).tangent)
    return [t.detach().numpy() for t in out]


def test_forward_ad_through_dtype_changing_views():
    for e, t in zip(_tangents(ember), _tangents(torch)):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_gradcheck_of_inplace_on_real_view():
    def f(lib):
        def fn(x, w):
            y = x.clone()
            lib.view_as_real(y).mul_(w)
            y.real.add_(w[:, 1] ** 2)
            return (y * y).sum().abs()
        return fn
    for lib in (ember, torch):
        x = lib.tensor(CX).requires_grad_()
        w = lib.tensor(W).requires_grad_()
        assert lib.autograd.gradcheck(f(lib), (x, w), check_forward_ad=True)
        assert lib.autograd.gradgradcheck(f(lib), (x, w))


def _legacy_vmap_jvp(lib):
    from importlib import import_module
    _vmap = import_module(lib.__name__ + "._vmap_internals")._vmap
    fw = lib.autograd.forward_ad
    x = lib.tensor(CX)

    def jvp(t):
        with fw.dual_level():
            y = lib.view_as_real(fw.make_dual(x, t).sin() * 2)
            return fw.unpack_dual(y).tangent
    return _vmap(jvp)(lib.tensor(np.stack([CX * 1j, CX]))).numpy()


def test_make_dual_takes_batched_tangents_in_legacy_vmap():
    np.testing.assert_allclose(_legacy_vmap_jvp(ember), _legacy_vmap_jvp(torch), rtol=1e-12)


def test_make_dual_refused_under_func_vmap():
    msgs = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad

        def jvp(t, lib=lib, fw=fw):
            with fw.dual_level():
                return fw.unpack_dual(fw.make_dual(lib.ones(3), t)).tangent
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(jvp)(lib.ones(2, 3))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_legacy_vmap_refusals():
    from ember import _vmap_internals as E
    from torch import _vmap_internals as T
    calls = [lambda V: V._vmap(lambda a: a, in_dims=-1)(_ones(V, 2, 3)),
             lambda V: V._vmap(lambda a: [a])(_ones(V, 2, 3)),
             lambda V: V._vmap(lambda a: (a, a), out_dims=(0,))(_ones(V, 2, 3)),
             lambda V: V._vmap(lambda a: a, out_dims="x")(_ones(V, 2, 3))]
    for call in calls:
        errors = []
        for V in (E, T):
            with pytest.raises(ValueError) as info:
                call(V)
            errors.append(str(info.value).replace("<lambda>", "f"))
        assert errors[0] == errors[1]
    out = [V._vmap(lambda a: (a * 2, None), allow_none_pass_through=True)(_ones(V, 2, 3))
           for V in (E, T)]
    assert out[0][1] is None and out[1][1] is None
    np.testing.assert_array_equal(out[0][0].numpy(), out[1][0].numpy())


def _ones(V, *shape):
    return (ember if V.__name__.startswith("ember") else torch).ones(*shape)


def _batched_forward_grad(lib, fn):
    x = lib.tensor(RE).requires_grad_()
    try:
        return lib.autograd.gradcheck(fn(lib), (x,), check_forward_ad=True,
                                      check_backward_ad=False, check_undefined_grad=False,
                                      check_batched_forward_grad=True)
    except RuntimeError as e:
        return type(e).__name__, str(e).split(" got:")[0], "forward-mode AD." in str(e)


def test_gradcheck_runs_check_batched_forward_grad():
    def good(lib):
        return lambda x: (x.sin() * x).sum(0)

    def bad(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def jvp(ctx, t):
                return t * (2 + 0 * t.sum().item())  # a data read vmap cannot batch

        return F.apply

    assert _batched_forward_grad(ember, good) is True
    assert _batched_forward_grad(torch, good) is True
    assert _batched_forward_grad(ember, bad) == _batched_forward_grad(torch, bad)


def test_views_of_a_primal_carry_no_tangent():
    # forward AD's primal (unpack_dual(x).primal) is tangent-free, and so is any view of it:
    # otherwise a backward formula run on it (the double-vjp forward rule) sees a dual again
    # and recurses without end
    def run(lib):
        import importlib
        fwAD = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        with fwAD.dual_level():
            x = fwAD.make_dual(lib.ones(3, 3, dtype=lib.float64), lib.ones(3, 3, dtype=lib.float64))
            p = fwAD.unpack_dual(x).primal
            views = [p.mT, p[1:], p.reshape(9), p.mT.diagonal()]
            return [fwAD.unpack_dual(v).tangent is None for v in views]
    assert run(ember) == run(torch) == [True] * 4


def test_batched_forward_grad_of_a_triangular_solve_finishes():
    # lu_solve's forward rule differentiates solve_triangular's backward formula, which
    # calls solve_triangular on views of the primal (the case that recursed); in a
    # subprocess with a time limit, so a regression fails instead of hanging the suite
    import subprocess
    import sys
    code = """
import ember as torch
A = (torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)).requires_grad_()
B = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
f = lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b)
g = lambda a, b: torch.linalg.solve_triangular(a.triu(), b, upper=True)
for fn in (f, g):
    assert torch.autograd.gradcheck(fn, (A, B), check_forward_ad=True, check_backward_ad=False,
                                    check_batched_forward_grad=True)
print("ok")
"""
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]
