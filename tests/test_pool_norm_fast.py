"""The fast paths of max pooling (separable stages) and batch norm (backward in two reads over
contiguous pieces): values, indices, gradients and strides equal PyTorch's, on ties, padding,
-inf / NaN windows, channels-last and contiguous memory; native_batch_norm_backward's
output_mask and the saved statistics' dtype as PyTorch's."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")

MEMORY = {4: "channels_last", 5: "channels_last_3d"}


def _inputs(shape, cl, kind, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if kind == "ties":       # a ReLU's output: many equal (zero) maxima in a window
        a = np.maximum(rng.standard_normal(shape), 0)
    elif kind == "integers":  # few distinct values: ties between non-zero maxima too
        a = rng.integers(-2, 3, shape)
    else:
        a = rng.standard_normal(shape)
    a = a.astype(np.float32)
    if kind == "nan":
        a.reshape(-1)[::7] = np.nan
    elif kind == "-inf":
        a.reshape(-1)[::3] = -np.inf
    t = torch.from_numpy(a.copy()).to(getattr(torch, dtype))
    e = ember.from_numpy(a.copy()).to(getattr(ember, dtype))
    if cl:
        t = t.contiguous(memory_format=getattr(torch, MEMORY[len(shape)]))
        e = e.contiguous(memory_format=getattr(ember, MEMORY[len(shape)]))
    return e, t


POOL_ARGS = [(3, 2, 1), (3, 1, 1), (2, 1), (3, 2, 1, 1, True), (3, 3, 1, 2), (4, 3, 2, 1, True),
             (3, 2, 0, 2), (5, 2, 2, 1, True), ((3, 2), (2, 1), (1, 0))]


@pytest.mark.parametrize("cl", [False, True], ids=["contiguous", "channels_last"])
@pytest.mark.parametrize("kind", ["random", "ties", "integers", "nan", "-inf"])
@pytest.mark.parametrize("args", POOL_ARGS, ids=str)
def test_max_pool2d_separable(args, kind, cl):
    for shape in [(2, 3, 9, 9), (2, 5, 8, 11)]:
        e, t = _inputs(shape, cl, kind)
        ev, ei = ember.nn.functional.max_pool2d(e, *args, return_indices=True)
        tv, ti = torch.nn.functional.max_pool2d(t, *args, return_indices=True)
        assert ev.stride() == tv.stride() and ei.stride() == ti.stride()
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        np.testing.assert_array_equal(ev.numpy(), tv.numpy())


@pytest.mark.parametrize("cl", [False, True], ids=["contiguous", "channels_last"])
def test_max_pool2d_separable_gradient(cl):
    e, t = _inputs((2, 4, 10, 9), cl, "ties")
    e.requires_grad_(), t.requires_grad_()
    g = np.random.default_rng(1).standard_normal((2, 4, 5, 5)).astype(np.float32)
    ember.nn.functional.max_pool2d(e, 3, 2, 1).backward(ember.from_numpy(g.copy()))
    torch.nn.functional.max_pool2d(t, 3, 2, 1).backward(torch.from_numpy(g.copy()))
    assert e.grad.stride() == t.grad.stride()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int32", "int64"])
@pytest.mark.parametrize("cl", [False, True], ids=["contiguous", "channels_last"])
def test_max_pool2d_separable_dtypes(dtype, cl):
    e, t = _inputs((2, 3, 9, 7), cl, "integers" if dtype.startswith("int") else "ties", dtype)
    ev, ei = ember.nn.functional.max_pool2d(e, 3, 2, 1, return_indices=True)
    tv, ti = torch.nn.functional.max_pool2d(t, 3, 2, 1, return_indices=True)
    assert str(ev.dtype) == str(tv.dtype)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    np.testing.assert_array_equal(ev.float().numpy(), tv.float().numpy())


@pytest.mark.parametrize("cl", [False, True], ids=["contiguous", "channels_last_3d"])
@pytest.mark.parametrize("args", [(3, 2, 1), (3, 1, 1, 2, True), ((2, 3, 1), (1, 2, 2), (1, 1, 0))],
                         ids=str)
def test_max_pool3d_and_1d_separable(args, cl):
    e, t = _inputs((2, 3, 6, 7, 8), cl, "ties")
    ev, ei = ember.nn.functional.max_pool3d(e, *args, return_indices=True)
    tv, ti = torch.nn.functional.max_pool3d(t, *args, return_indices=True)
    assert ev.stride() == tv.stride()
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    e, t = _inputs((2, 3, 17), False, "ties")
    k = args[0] if isinstance(args[0], int) else args[0][0]
    ev, ei = ember.nn.functional.max_pool1d(e, k, 2, 1, return_indices=True)
    tv, ti = torch.nn.functional.max_pool1d(t, k, 2, 1, return_indices=True)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


# ---- batch norm ---------------------------------------------------------------------------------
def _bn_case(shape, cl, train, weight, seed=0):
    """(ember args, torch args) of native_batch_norm_backward for one input."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2 + 3).astype(np.float32)
    c = shape[1]
    w = rng.standard_normal(c).astype(np.float32) if weight else None
    rm, rv = rng.standard_normal(c).astype(np.float32), (rng.random(c) + 0.5).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    out = []
    for lib in (ember, torch):
        def t(a):
            return None if a is None else lib.from_numpy(a.copy())
        xt, gt = t(x), t(g)
        if cl and len(shape) in MEMORY:
            fmt = getattr(lib, MEMORY[len(shape)])
            xt, gt = xt.contiguous(memory_format=fmt), gt.contiguous(memory_format=fmt)
        _, mean, invstd = lib.ops.aten.native_batch_norm(xt, t(w), None, t(rm), t(rv), train,
                                                         0.1, 1e-5)
        out.append((gt, xt, t(w), t(rm), t(rv), mean, invstd, train, 1e-5))
    return out


MASKS = [[True, True, True], [True, False, False], [False, True, True], [False, False, True],
         [False, True, False]]


@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("shape,cl", [((4, 3, 5, 5), False), ((4, 3, 5, 5), True), ((6, 3), False),
                                      ((2, 3, 4, 5, 6), True), ((3, 8, 70, 70), False),
                                      ((3, 8, 70, 70), True)], ids=str)
def test_batch_norm_backward_output_mask(shape, cl, train, mask):
    for weight in (True, False):
        eargs, targs = _bn_case(shape, cl, train, weight)
        er = ember.ops.aten.native_batch_norm_backward(*eargs, mask)
        tr = torch.ops.aten.native_batch_norm_backward(*targs, mask)
        for e, t in zip(er, tr):
            assert (e is None) == (t is None)
            if t is not None:
                assert e.stride() == t.stride() and str(e.dtype) == str(t.dtype)
                scale = max(1.0, float(t.abs().max()))
                np.testing.assert_allclose(e.numpy(), t.numpy(), atol=2e-5 * scale, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_batch_norm_half_statistics_dtype(dtype):
    """The saved mean / invstd are in the parameters' dtype, as PyTorch's CPU kernel keeps them:
    the input's with half (or no) parameters, float32 with float32 parameters. ember's Meta
    kernel gives what its CPU kernel does (PyTorch's Python meta function says float32 and
    (C,) statistics for every half case, unlike its CPU kernel)."""
    results = {}
    for lib, device in ((ember, "cpu"), (torch, "cpu"), (ember, "meta")):
        half = getattr(lib, dtype)
        x = lib.randn(4, 3, 5, 5, device=device).to(half)

        def h():
            return lib.ones(3, device=device).to(half)

        def f():
            return lib.ones(3, device=device)
        out = []
        for params in [(None,) * 4, (h(), h(), h(), h()), (f(), f(), f(), f()),
                       (h(), None, None, None), (None, None, h(), h())]:
            for train in (True, False):
                if not train and params[2] is None:
                    continue
                r = lib.ops.aten.native_batch_norm(x, *params, train, 0.1, 1e-5)
                out.append([(str(t.dtype), tuple(t.shape)) for t in r])
        results[lib.__name__, device] = out
    assert results["ember", "cpu"] == results["torch", "cpu"]
    assert results["ember", "meta"] == results["ember", "cpu"]


def test_batch_norm_double_backward_without_weight_grad():
    """create_graph through batch norm when the weight needs no gradient (the backward records
    a graph of all three outputs)."""
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        x = lib.from_numpy(np.random.default_rng(0).standard_normal((4, 3, 5, 5))
                           .astype(np.float32)).requires_grad_()
        w = lib.from_numpy(np.linspace(0.5, 1.5, 3, dtype=np.float32))
        y = lib.nn.functional.batch_norm(x, None, None, w, None, training=True)
        (gx,) = lib.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), x)
        grads.append((gx.detach().numpy(), ggx.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(grads[0][1], grads[1][1], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("cl", [False, True], ids=["contiguous", "channels_last"])
def test_batch_norm_eval_forward_pieces(cl):
    """Evaluation batch norm (x * scale + shift over contiguous pieces), float32 and float16."""
    for dtype in ("float32", "float16"):
        for shape in ((3, 8, 70, 70), (5, 4, 3, 3)):
            e, t = _inputs(shape, cl, "random", dtype)
            rng = np.random.default_rng(2)
            p = [rng.standard_normal(shape[1]).astype(np.float32) for _ in range(3)]
            p.append((rng.random(shape[1]) + 0.5).astype(np.float32))
            outs = []
            for lib, x in ((ember, e), (torch, t)):
                w, b, rm, rv = (lib.from_numpy(a.copy()).to(x.dtype) for a in p)
                outs.append(lib.nn.functional.batch_norm(x, rm, rv, w, b, training=False))
            assert outs[0].stride() == outs[1].stride()
            tol = 1e-5 if dtype == "float32" else 1e-2
            np.testing.assert_allclose(outs[0].float().numpy(), outs[1].float().numpy(),
                                       atol=tol, rtol=tol)
