"""The blocked layer/group norm kernels and binary cross-entropy with logits against torch at
sizes where their fast paths run: several blocks of samples (on one and on two intra-op
threads), and the reduced BCE loss summed term by term with its vectorised float32 log1p."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle these tests compare against")
import ember  # noqa: E402


def _run(lib, fn, arrays, grad):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    out.backward(lib.tensor(grad))
    return [out.detach().numpy()] + [t.grad.numpy() for t in ts]


def _close(got, want, tol):
    for e, t in zip(got, want):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    before = ember.get_num_threads()
    ember.set_num_threads(request.param)
    yield
    ember.set_num_threads(before)


NORMS = [
    # (input shape, parameter shape, call): each input spans several blocks of samples
    ((1200, 512), (512,), lambda L, x, w, b: L.nn.functional.layer_norm(x, (512,), w, b)),
    ((3, 700, 8, 16), (8, 16), lambda L, x, w, b: L.nn.functional.layer_norm(x, (8, 16), w, b)),
    ((9, 64, 32, 32), (64,), lambda L, x, w, b: L.nn.functional.group_norm(x, 16, w, b)),
    ((700, 12, 50), (12,), lambda L, x, w, b: L.nn.functional.group_norm(x, 3, w, b)),
]


@pytest.mark.parametrize("case", NORMS, ids=lambda c: str(c[0]))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_norms_match_torch(case, dtype, threads):
    shape, pshape, fn = case
    rng = np.random.default_rng(len(shape))
    arrays = [(rng.standard_normal(shape) * 2 + 3).astype(dtype),
              rng.standard_normal(pshape).astype(dtype), rng.standard_normal(pshape).astype(dtype)]
    grad = rng.standard_normal(shape).astype(dtype)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    _close(_run(ember, fn, arrays, grad), _run(torch, fn, arrays, grad), tol)


def test_blocked_norm_without_affine_and_half_input():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1100, 256)).astype(np.float32)
    for lib_dtype in ("float32", "bfloat16"):
        got, want = [lib.nn.functional.layer_norm(lib.tensor(x).to(getattr(lib, lib_dtype)),
                                                  (256,)).float().numpy()
                     for lib in (ember, torch)]
        np.testing.assert_allclose(got, want, rtol=1e-2 if lib_dtype == "bfloat16" else 1e-5,
                                   atol=1e-2 if lib_dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("pos_weight", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_with_logits_matches_torch(reduction, pos_weight, dtype):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((300, 40)) * np.array([1, 10, 40, 90])[:, None].repeat(75, 0)
         ).astype(dtype)        # logits up to far in both tails, where log1p(exp(-|x|)) is tiny
    y = rng.random((300, 40)).astype(dtype)
    pw = (rng.random(40) * 2).astype(dtype)

    def fn(lib, x):
        kw = dict(pos_weight=lib.tensor(pw)) if pos_weight else {}
        return lib.nn.functional.binary_cross_entropy_with_logits(x, lib.tensor(y),
                                                                  reduction=reduction, **kw)
    grad = np.ones(()) if reduction != "none" else rng.standard_normal((300, 40))
    grad = grad.astype(dtype)
    got, want = _run(ember, fn, [x], grad), _run(torch, fn, [x], grad)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for e, t in zip(got, want):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol * np.abs(t).max())


def test_bce_with_logits_small_losses_keep_their_digits():
    """-log(sigmoid(x)) for large x is exp(-x), not 0 (log1p, not log(1 + e))."""
    x = np.array([20.0, 30.0, 16.0, 1e-3, -5.0], np.float32)
    y = np.ones(5, np.float32)
    got, want = [lib.nn.functional.binary_cross_entropy_with_logits(
        lib.tensor(x), lib.tensor(y), reduction="none").numpy() for lib in (ember, torch)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
