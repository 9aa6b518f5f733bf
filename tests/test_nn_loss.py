"""Every loss of nn.functional and nn against PyTorch: values, dtype and shape for each reduction,
the gradients of inputs and float targets, gradcheck in float64, the exception type on bad
input, the legacy size_average/reduce arguments and the module reprs."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
from _torch_oracle import _weighted_loss, assert_same, check_raises, make  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")
REDUCTIONS = ("none", "mean", "sum")
RNG = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def rand(*shape, low=0.0, high=1.0, dtype=np.float32):
    return RNG.uniform(low, high, shape).astype(dtype)


def labels(*shape, high):
    return RNG.integers(0, high, shape).astype(np.int64)


def signs(*shape, dtype=np.float32):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0).astype(dtype)


def check(fn, *arrays, grad=(0,), atol=1e-5, rtol=1e-4):
    """fn(F, *tensors) in ember and torch gives the same value, dtype and shape, and the same
    gradients for the positions in `grad` (through a fixed weighting of the output)."""
    ins_e = [make(ember, a, i in grad) for i, a in enumerate(arrays)]
    ins_t = [make(torch, a, i in grad) for i, a in enumerate(arrays)]
    out_t = fn(torch.nn.functional, *ins_t)
    out_e = fn(ember.nn.functional, *ins_e)
    assert_same(out_e, out_t, atol=atol, rtol=rtol)
    if any(x.requires_grad for x in ins_t):
        _weighted_loss([out_t]).backward()
        _weighted_loss([out_e]).backward()
        for i in grad:
            if ins_t[i].requires_grad:
                assert ins_e[i].grad is not None, f"input {i}: ember has no grad"
                assert_same(ins_e[i].grad, ins_t[i].grad, atol=atol, rtol=rtol, path=f"grad[{i}]")


# Each row: (name, fn(F, *tensors, reduction), arrays, positions whose gradient is compared).
CASES = [
    ("l1", lambda F, x, y, r: F.l1_loss(x, y, reduction=r), (randn(4, 5), randn(4, 5)), (0, 1)),
    ("l1_broadcast", lambda F, x, y, r: F.l1_loss(x, y, reduction=r), (randn(4, 5), randn(5)),
     (0, 1)),
    ("l1_weight", lambda F, x, y, w, r: F.l1_loss(x, y, reduction=r, weight=w),
     (randn(3, 4), randn(3, 4), rand(3, 4)), (0, 1, 2)),
    ("mse", lambda F, x, y, r: F.mse_loss(x, y, reduction=r), (randn(4, 5), randn(4, 5)),
     (0, 1)),
    ("mse_weight", lambda F, x, y, w, r: F.mse_loss(x, y, reduction=r, weight=w),
     (randn(3, 4), randn(3, 4), rand(3, 4)), (0, 1, 2)),
    ("smooth_l1", lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r),
     (randn(6, 5) * 2, randn(6, 5)), (0, 1)),
    ("smooth_l1_beta", lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.3),
     (randn(6, 5), randn(6, 5)), (0, 1)),
    ("smooth_l1_beta0", lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0),
     (randn(6, 5), randn(6, 5)), (0, 1)),
    ("huber", lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=0.7),
     (randn(6, 5) * 2, randn(6, 5)), (0, 1)),
    ("huber_weight", lambda F, x, y, w, r: F.huber_loss(x, y, reduction=r, weight=w),
     (randn(6, 5) * 2, randn(6, 5), rand(6, 5)), (0, 1, 2)),
    ("huber_f64_target", lambda F, x, y, r: F.huber_loss(x, y, reduction=r),
     (randn(4) * 2, randn(4, dtype=np.float64)), ()),  # torch's backward fails on this
    ("soft_margin", lambda F, x, y, r: F.soft_margin_loss(x, y, reduction=r),
     (randn(4, 3), signs(4, 3)), (0,)),
    ("bce", lambda F, x, y, r: F.binary_cross_entropy(x, y, reduction=r),
     (rand(4, 3, low=0.02, high=0.98), rand(4, 3)), (0, 1)),
    ("bce_weight", lambda F, x, y, w, r: F.binary_cross_entropy(x, y, w, reduction=r),
     (rand(4, 3, low=0.02, high=0.98), rand(4, 3), rand(3)), (0, 1)),
    ("bce_saturated", lambda F, x, y, r: F.binary_cross_entropy(x, y, reduction=r),
     (np.array([0.0, 1.0, 1e-45, 0.5, 1.0], np.float32),
      np.array([1.0, 0.0, 1.0, 0.3, 1.0], np.float32)), (0,)),
    ("bce_logits", lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y, reduction=r),
     (randn(4, 3) * 3, rand(4, 3)), (0, 1)),
    ("bce_logits_large", lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y, reduction=r),
     (np.array([-200.0, 200.0, 90.0, -90.0], np.float32), rand(4)), (0, 1)),
    ("bce_logits_weights", lambda F, x, y, w, pw, r: F.binary_cross_entropy_with_logits(
        x, y, w, reduction=r, pos_weight=pw), (randn(4, 3), rand(4, 3), rand(3), rand(3) * 3),
     (0, 1)),
    ("bce_logits_f64_target", lambda F, x, y, w, r: F.binary_cross_entropy_with_logits(
        x, y, w, reduction=r), (randn(4, 3), rand(4, 3, dtype=np.float64), rand(3)), (0, 1)),
    ("kl_div", lambda F, x, y, r: F.kl_div(x, y, reduction=r),
     (np.log(rand(3, 5, low=0.05)), rand(3, 5, low=0.05)), (0, 1)),
    ("kl_div_zero_target", lambda F, x, y, r: F.kl_div(x, y, reduction=r),
     (randn(3, 4), np.array([[0.0, 0.5, 0.5, 0.0]] * 3, np.float32)), (0,)),
    ("kl_div_log_target", lambda F, x, y, r: F.kl_div(x, y, reduction=r, log_target=True),
     (randn(3, 5), randn(3, 5)), (0, 1)),
    ("poisson", lambda F, x, y, r: F.poisson_nll_loss(x, y, reduction=r),
     (randn(4, 3), rand(4, 3, high=4)), (0, 1)),
    ("poisson_rate", lambda F, x, y, r: F.poisson_nll_loss(x, y, log_input=False, eps=1e-3,
                                                           reduction=r),
     (rand(4, 3, low=0.1, high=3), rand(4, 3, high=4)), (0, 1)),
    ("poisson_full", lambda F, x, y, r: F.poisson_nll_loss(x, y, full=True, reduction=r),
     (randn(4, 3), rand(4, 3, low=0.5, high=6)), (0,)),
    ("gaussian", lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, reduction=r),
     (randn(4, 3), randn(4, 3), rand(4, 3, low=0.1)), (0, 1, 2)),
    ("gaussian_full_clamped", lambda F, x, y, v, r: F.gaussian_nll_loss(
        x, y, v, full=True, eps=0.3, reduction=r),
     (randn(4, 3), randn(4, 3), rand(4, 3, high=0.6)), (0, 1, 2)),
    ("gaussian_var_per_sample", lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, reduction=r),
     (randn(4, 3), randn(4, 3), rand(4, low=0.1)), (0, 1, 2)),
    ("gaussian_var_one_dim", lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, reduction=r),
     (randn(4, 3, 2), randn(4, 3, 2), rand(4, 1, 2, low=0.1)), (0, 1, 2)),
    ("gaussian_var_float", lambda F, x, y, r: F.gaussian_nll_loss(x, y, 0.7, reduction=r),
     (randn(4, 3), randn(4, 3)), (0, 1)),
    ("margin_ranking", lambda F, a, b, y, r: F.margin_ranking_loss(a, b, y, margin=0.3,
                                                                   reduction=r),
     (randn(6), randn(6), signs(6)), (0, 1, 2)),
    ("hinge_embedding", lambda F, x, y, r: F.hinge_embedding_loss(x, y, margin=0.8, reduction=r),
     (randn(4, 5), signs(4, 5)), (0,)),
    ("hinge_embedding_int_target", lambda F, x, y, r: F.hinge_embedding_loss(x, y, reduction=r),
     (randn(5), signs(5).astype(np.int64)), (0,)),
    ("cosine_embedding", lambda F, a, b, y, r: F.cosine_embedding_loss(a, b, y, margin=0.2,
                                                                       reduction=r),
     (randn(5, 4), randn(5, 4), np.array([1, -1, 1, -1, 0])), (0, 1)),
    ("cosine_embedding_unbatched", lambda F, a, b, y, r: F.cosine_embedding_loss(
        a, b, y, reduction=r), (randn(4), randn(4), np.array(-1)), (0, 1)),
    ("triplet", lambda F, a, p, n, r: F.triplet_margin_loss(a, p, n, margin=1.5, reduction=r),
     (randn(5, 4), randn(5, 4), randn(5, 4)), (0, 1, 2)),
    ("triplet_p1_swap", lambda F, a, p, n, r: F.triplet_margin_loss(a, p, n, p=1, swap=True,
                                                                    margin=2.0, reduction=r),
     (randn(5, 4), randn(5, 4), randn(5, 4)), (0, 1, 2)),
    ("triplet_distance", lambda F, a, p, n, r: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.5,
        swap=True, reduction=r), (randn(5, 4), randn(5, 4), randn(5, 4)), (0, 1, 2)),
    ("triplet_distance_default", lambda F, a, p, n, r: F.triplet_margin_with_distance_loss(
        a, p, n, reduction=r), (randn(5, 4), randn(5, 4), randn(5, 4)), (0, 1, 2)),
    ("multilabel_soft_margin", lambda F, x, y, r: F.multilabel_soft_margin_loss(x, y,
                                                                                reduction=r),
     (randn(4, 5), (rand(4, 5) > 0.5).astype(np.float32)), (0, 1)),
    ("multilabel_soft_margin_weight", lambda F, x, y, w, r: F.multilabel_soft_margin_loss(
        x, y, weight=w, reduction=r), (randn(4, 5), rand(4, 5), rand(5)), (0, 1, 2)),
    ("multi_margin", lambda F, x, y, r: F.multi_margin_loss(x, y, reduction=r),
     (randn(6, 4), labels(6, high=4)), (0,)),
    ("multi_margin_p2_weight", lambda F, x, y, w, r: F.multi_margin_loss(
        x, y, p=2, margin=0.5, weight=w, reduction=r), (randn(6, 4), labels(6, high=4), rand(4)),
     (0,)),
    ("multi_margin_unbatched", lambda F, x, y, r: F.multi_margin_loss(x, y, reduction=r),
     (randn(4), np.array(2)), (0,)),
    ("multi_margin_unbatched_1d_target", lambda F, x, y, r: F.multi_margin_loss(x, y,
                                                                                reduction=r),
     (randn(4), np.array([3])), (0,)),
    ("multilabel_margin", lambda F, x, y, r: F.multilabel_margin_loss(x, y, reduction=r),
     (randn(3, 5), np.array([[3, 0, -1, 1, 4], [1, 1, 2, 4, -1], [-1, 2, 3, 0, 0]])), (0,)),
    ("multilabel_margin_all_labels", lambda F, x, y, r: F.multilabel_margin_loss(x, y,
                                                                                reduction=r),
     (randn(2, 3), np.array([[2, 0, 1], [0, -1, 1]])), (0,)),
    ("multilabel_margin_unbatched", lambda F, x, y, r: F.multilabel_margin_loss(x, y,
                                                                               reduction=r),
     (randn(4), np.array([2, 0, -1, 3])), (0,)),
    ("nll", lambda F, x, y, r: F.nll_loss(x, y, reduction=r),
     (randn(5, 4), labels(5, high=4)), (0,)),
    ("nll_weight_ignore", lambda F, x, y, w, r: F.nll_loss(x, y, w, ignore_index=1, reduction=r),
     (randn(6, 4), labels(6, high=4), rand(4)), (0,)),
    ("nll_nd", lambda F, x, y, w, r: F.nll_loss(x, y, w, ignore_index=0, reduction=r),
     (randn(2, 3, 4, 2), labels(2, 4, 2, high=3), rand(3)), (0,)),
    ("nll_unbatched", lambda F, x, y, r: F.nll_loss(x, y, reduction=r),
     (randn(4), np.array(2)), (0,)),
    ("cross_entropy", lambda F, x, y, r: F.cross_entropy(x, y, reduction=r),
     (randn(5, 4), labels(5, high=4)), (0,)),
    ("cross_entropy_weight_ignore", lambda F, x, y, w, r: F.cross_entropy(
        x, y, w, ignore_index=1, reduction=r), (randn(8, 4), labels(8, high=4), rand(4)), (0,)),
    ("cross_entropy_f64_large_logits", lambda F, x, y, r: F.cross_entropy(x, y, reduction=r),
     (randn(5, 4, dtype=np.float64) * 300, labels(5, high=4)), (0,)),
    ("cross_entropy_all_ignored", lambda F, x, y, r: F.cross_entropy(x, y, ignore_index=2,
                                                                     reduction=r),
     (randn(3, 4), np.array([2, 2, 2])), (0,)),
    ("cross_entropy_weight_ignore_smoothing", lambda F, x, y, w, r: F.cross_entropy(
        x, y, w, ignore_index=2, label_smoothing=0.2, reduction=r),
     (randn(6, 4), labels(6, high=4), rand(4)), (0,)),
    ("cross_entropy_nd_smoothing", lambda F, x, y, r: F.cross_entropy(
        x, y, label_smoothing=0.1, reduction=r), (randn(2, 3, 4), labels(2, 4, high=3)), (0,)),
    ("cross_entropy_nd_weight_ignore", lambda F, x, y, w, r: F.cross_entropy(
        x, y, w, ignore_index=1, label_smoothing=0.3, reduction=r),
     (randn(2, 3, 2, 2), labels(2, 2, 2, high=3), rand(3)), (0,)),
    ("cross_entropy_unbatched", lambda F, x, y, r: F.cross_entropy(x, y, reduction=r),
     (randn(4), np.array(1)), (0,)),
    ("cross_entropy_probs", lambda F, x, y, r: F.cross_entropy(x, y, reduction=r),
     (randn(5, 4), rand(5, 4)), (0, 1)),
    ("cross_entropy_probs_weight_smoothing", lambda F, x, y, w, r: F.cross_entropy(
        x, y, w, label_smoothing=0.25, reduction=r), (randn(3, 4, 2), rand(3, 4, 2), rand(4)),
     (0, 1)),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, fn, arrays, grad", CASES, ids=[c[0] for c in CASES])
def test_loss_matches_torch(name, fn, arrays, grad, reduction):
    check(lambda F, *ts: fn(F, *ts, reduction), *arrays, grad=grad)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_kl_div_batchmean(reduction):
    check(lambda F, x, y: F.kl_div(x, y, reduction="batchmean"), randn(3, 4), rand(3, 4),
          grad=(0, 1))


def test_multi_margin_empty_batch():
    """Only 'none': PyTorch's sum and mean over no samples read uninitialised memory."""
    check(lambda F, x, y: F.multi_margin_loss(x, y, reduction="none"), randn(0, 4),
          labels(0, high=4))


def test_fused_losses_on_strided_and_empty_inputs():
    """cross_entropy and binary_cross_entropy_with_logits run in NumPy on the tensors'
    strided data; empty batches give PyTorch's nan mean and empty gradients."""
    check(lambda F, x, y: F.cross_entropy(x.t(), y), randn(4, 5), labels(5, high=4))
    check(lambda F, x, y: F.cross_entropy(x.flip(0), y, reduction="none"), randn(5, 4),
          labels(5, high=4))
    check(lambda F, x, y: F.binary_cross_entropy_with_logits(x.t(), y.t(), reduction="none"),
          randn(4, 5), rand(4, 5), grad=(0, 1))
    check(lambda F, x, y: F.cross_entropy(x, y), randn(0, 4), labels(0, high=4))
    check(lambda F, x, y: F.binary_cross_entropy_with_logits(x, y), randn(0, 4), rand(0, 4))


def test_loss_float64_and_dtype_promotion():
    check(lambda F, x, y: F.l1_loss(x, y), randn(3), randn(3, dtype=np.float64), grad=(0, 1))
    check(lambda F, x, y: F.smooth_l1_loss(x, y), randn(3), randn(3, dtype=np.float64))
    check(lambda F, x, y: F.binary_cross_entropy(x, y), rand(3, dtype=np.float64),
          rand(3, dtype=np.float64), grad=(0, 1))


# ---- CTC --------------------------------------------------------------------------------------
def _ctc_inputs(t=12, n=3, c=5, s=4, seed=1):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((t, n, c)).astype(np.float32)
    targets = rng.integers(1, c, (n, s)).astype(np.int64)
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank in between
    return logits, targets


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("as_tensors", [True, False])
def test_ctc_padded_targets(reduction, as_tensors):
    logits, targets = _ctc_inputs()
    il, tl = (12, 9, 7), (4, 3, 0)

    def fn(F, x, y):
        lengths = (torch if F is torch.nn.functional else ember).tensor
        a, b = (lengths(il), lengths(tl)) if as_tensors else (il, tl)
        return F.ctc_loss(x.log_softmax(2), y, a, b, reduction=reduction)
    check(fn, logits, targets)


@pytest.mark.parametrize("blank", [0, 4])
def test_ctc_concatenated_targets_and_blank(blank):
    logits, _ = _ctc_inputs(t=10, n=3, c=6)
    tl = (3, 5, 2)
    targets = RNG.integers(0, 5, sum(tl)).astype(np.int64)
    targets[targets >= blank] += 1  # labels other than the blank
    check(lambda F, x, y: F.ctc_loss(x.log_softmax(2), y, (10, 10, 6), tl, blank=blank,
                                     reduction="sum"), logits, targets)


def test_ctc_log_probs_gradient_directly():
    """PyTorch's gradient with respect to log_probs themselves (not through log_softmax)."""
    logits, targets = _ctc_inputs(t=8, n=2, c=4, s=3)
    lp = torch.from_numpy(logits).log_softmax(2).numpy()
    check(lambda F, x, y: F.ctc_loss(x, y, (8, 6), (3, 2), reduction="none"), lp, targets)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_impossible_alignment(zero_infinity):
    """Too few time steps for the target: infinite loss, or zero with zero_infinity."""
    logits, targets = _ctc_inputs(t=4, n=2, c=4, s=3)
    targets[1] = [2, 2, 2]  # needs 5 steps

    def fn(F, x, y):
        return F.ctc_loss(x.log_softmax(2), y, (4, 4), (2, 3), reduction="none",
                          zero_infinity=zero_infinity)
    if zero_infinity:
        check(fn, logits, targets)
    else:
        check(fn, logits, targets, grad=())


@pytest.mark.parametrize("where", ["start", "end", "masked"])
def test_ctc_underflow_uses_log_space(where):
    """Log-probabilities 1000 below the step's best underflow in probability space: the loss
    stays finite and exact, as in PyTorch's log-space recursion."""
    logits, targets = _ctc_inputs(t=6, n=2, c=4, s=2)
    targets[:] = [[1, 2], [3, 1]]
    lp = torch.from_numpy(logits).log_softmax(2).numpy()
    if where == "start":    # the reachable blank and first label against an unreachable label
        lp[0, :, :2] = -1000.0
    elif where == "end":    # the final blank and last label against the first label
        lp[5, 0, 0] = lp[5, 0, 2] = -1000.0
    else:                   # a class no path may use
        lp[:, :, 3] = -np.inf
        targets[1] = [2, 1]
    # in float64: PyTorch's float32 recursion loses digits at a likelihood of exp(-1000)
    check(lambda F, x, y: F.ctc_loss(x, y, (6, 6), (2, 2), reduction="none"),
          lp.astype(np.float64), targets)


def test_ctc_unbatched_and_empty_input():
    logits, targets = _ctc_inputs(t=7, n=1, c=5, s=3)
    check(lambda F, x, y: F.ctc_loss(x.log_softmax(1), y, ember.tensor(7) if F is
                                     ember.nn.functional else torch.tensor(7),
                                     ember.tensor(3) if F is ember.nn.functional
                                     else torch.tensor(3)), logits[:, 0], targets[0])
    check(lambda F, x, y: F.ctc_loss(x.log_softmax(2), y, (0, 0), (0, 2), reduction="none"),
          *_ctc_inputs(t=3, n=2, c=4, s=2), grad=())


def test_ctc_float64_gradcheck():
    logits, targets = _ctc_inputs(t=6, n=2, c=4, s=2)
    x = ember.tensor(logits.astype(np.float64), requires_grad=True)
    y = ember.tensor(targets)
    assert ember.autograd.gradcheck(
        lambda v: ember.nn.functional.ctc_loss(v.log_softmax(2), y, (6, 5), (2, 2)), (x,))


CTC_ERRORS = [
    lambda F, x, y: F.ctc_loss(x, y, (6, 5), (3, 2), reduction="bad"),
    lambda F, x, y: F.ctc_loss(x, y, (7, 5), (3, 2)),
    lambda F, x, y: F.ctc_loss(x, y, (6,), (3, 2)),
    lambda F, x, y: F.ctc_loss(x, y, (6, 5), (5, 2)),
    lambda F, x, y: F.ctc_loss(x, y, (6, 5), (-1, 2)),
    lambda F, x, y: F.ctc_loss(x, y, (6, 5), (3, 2), blank=4),
    lambda F, x, y: F.ctc_loss(x, y.reshape(-1)[:4], (6, 5), (3, 2)),
    lambda F, x, y: F.ctc_loss(x[None], y, (6, 5), (3, 2)),
    lambda F, x, y: F.ctc_loss(x.half(), y, (6, 5), (3, 2)),
    lambda F, x, y: F.ctc_loss(x, y, x.new_tensor([6.0, 5.0]), x.new_tensor([3, 2]).long()),
    lambda F, x, y: F.ctc_loss(x, y[:, :, None], (6, 5), (3, 2)),
    lambda F, x, y: F.ctc_loss(x, y, x.new_tensor([6, 5]).long(), (3, 2)),
]


@pytest.mark.parametrize("fn", CTC_ERRORS)
def test_ctc_errors(fn):
    logits, targets = _ctc_inputs(t=6, n=2, c=4, s=3)
    check_raises(lambda lib, *ts: fn(lib.nn.functional, *ts), logits, targets)


# ---- gradcheck in float64 ---------------------------------------------------------------------
GRADCHECK = [
    ("smooth_l1", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.5), (3, 4), 2),
    ("huber", lambda F, x, y: F.huber_loss(x, y, delta=0.5), (3, 4), 2),
    ("bce", lambda F, x, y: F.binary_cross_entropy(F.sigmoid(x), F.sigmoid(y)), (3, 4), 2),
    ("bce_logits", lambda F, x, y: F.binary_cross_entropy_with_logits(
        x, F.sigmoid(y), pos_weight=ember.tensor([0.5, 2.0, 1.0, 3.0], dtype=ember.float64)),
     (3, 4), 2),
    ("kl_div", lambda F, x, y: F.kl_div(x, y, reduction="batchmean", log_target=True), (3, 4), 2),
    ("gaussian", lambda F, x, y: F.gaussian_nll_loss(x, y, y.exp()), (3, 4), 2),
    ("cosine_embedding", lambda F, x, y: F.cosine_embedding_loss(
        x, y, ember.tensor([1, -1, 1])), (3, 4), 2),
    ("triplet", lambda F, x, y: F.triplet_margin_loss(x, y, x.flip(0), margin=3.0), (3, 4), 2),
    ("multi_margin", lambda F, x: F.multi_margin_loss(x, ember.tensor([0, 2, 1]), p=2), (3, 4),
     1),
    ("cross_entropy", lambda F, x: F.cross_entropy(
        x, ember.tensor([0, 3, 1]), ember.tensor([1.0, 2.0, 0.5, 1.5], dtype=ember.float64)),
     (3, 4), 1),
    ("multilabel_margin", lambda F, x: F.multilabel_margin_loss(
        x, ember.tensor([[0, 3, -1, 0], [1, -1, 0, 0], [2, 1, 0, 3]])), (3, 4), 1),
]


@pytest.mark.parametrize("name, fn, shape, n_inputs", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, shape, n_inputs):
    rng = np.random.default_rng(3)
    ins = [ember.tensor(rng.standard_normal(shape), requires_grad=True) for _ in range(n_inputs)]
    assert ember.autograd.gradcheck(lambda *xs: fn(ember.nn.functional, *xs), tuple(ins))


@pytest.mark.parametrize("name", ["bce", "bce_logits", "gaussian", "kl_div", "cross_entropy"])
def test_gradgradcheck(name):
    """Second derivatives: binary cross-entropy's own backward is written in ember ops too."""
    fn = {g[0]: g[1] for g in GRADCHECK}[name]
    rng = np.random.default_rng(4)
    ins = [ember.tensor(rng.standard_normal((3, 4)), requires_grad=True) for _ in range(2)]
    ins = ins[:1] if name == "cross_entropy" else ins
    assert ember.autograd.gradgradcheck(lambda *xs: fn(ember.nn.functional, *xs), tuple(ins))


# ---- errors -----------------------------------------------------------------------------------
ERRORS = [
    (lambda F, x, y: F.l1_loss(x, y, reduction="bad"), (randn(3), randn(3))),
    (lambda F, x, y: F.l1_loss(x, y), (randn(3), randn(2))),
    (lambda F, x, y: F.l1_loss(x, y, weight=x[:2]), (randn(3), randn(3))),
    (lambda F, x, y: F.l1_loss(x, y), (np.array([1, 2]), np.array([2, 2]))),
    (lambda F, x, y: F.mse_loss(x, y), (np.array([1, 2]), np.array([2, 2]))),
    (lambda F, x, y: F.mse_loss(x, y, weight=x[:2]), (randn(3), randn(3))),
    (lambda F, x, y: F.smooth_l1_loss(x, y, beta=-1.0), (randn(3), randn(3))),
    (lambda F, x, y: F.smooth_l1_loss(x, y), (np.array([1, 2]), np.array([2, 2]))),
    (lambda F, x, y: F.huber_loss(x, y, delta=0.0), (randn(3), randn(3))),
    (lambda F, x, y: F.huber_loss(x, y), (np.array([1, 2]), np.array([2, 2]))),
    (lambda F, x, y: F.soft_margin_loss(x, y), (np.array([1, 2]), np.array([2, 2]))),
    (lambda F, x, y: F.soft_margin_loss(x, y), (randn(3), randn(3, 1))),
    (lambda F, x, y: F.binary_cross_entropy(x, y), (rand(3), rand(2))),
    (lambda F, x, y: F.binary_cross_entropy(x, y), (rand(2) + 1, rand(2))),
    (lambda F, x, y: F.binary_cross_entropy(x, y), (rand(2), rand(2) + 1)),
    (lambda F, x, y: F.binary_cross_entropy(x, y), (np.array([0.5, np.nan], np.float32),
                                                    rand(2))),
    (lambda F, x, y: F.binary_cross_entropy(x, y), (rand(2, dtype=np.float64), rand(2))),
    (lambda F, x, y: F.binary_cross_entropy(x, y.long()), (rand(2), rand(2))),
    (lambda F, x, y: F.binary_cross_entropy(x, y, reduction="bad"), (rand(2), rand(2))),
    (lambda F, x, y: F.binary_cross_entropy_with_logits(x, y), (randn(3), rand(2))),
    (lambda F, x, y: F.binary_cross_entropy_with_logits(x, y.long()), (randn(2), rand(2))),
    (lambda F, x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=y[:, 0]),
     (randn(2, 3), rand(2, 3))),
    (lambda F, x, y: F.binary_cross_entropy_with_logits(x[0], y[0], y),
     (randn(2, 3), rand(2, 3))),
    (lambda F, x, y: F.kl_div(x, y, reduction="bad"), (randn(3), rand(3))),
    (lambda F, x, y: F.poisson_nll_loss(x, y, reduction="bad"), (randn(3), rand(3))),
    (lambda F, x, y: F.poisson_nll_loss(x, y), (randn(4, 3), rand(4))),
    (lambda F, x, y: F.gaussian_nll_loss(x, y, y[:, :2]), (randn(4, 3), rand(4, 3))),
    (lambda F, x, y: F.gaussian_nll_loss(x, y, y[0]), (randn(4, 3), rand(4, 3))),
    (lambda F, x, y: F.gaussian_nll_loss(x, y, -1.0), (randn(4, 3), rand(4, 3))),
    (lambda F, x, y: F.gaussian_nll_loss(x, y, -y), (randn(4, 3), rand(4, 3) + 0.1)),
    (lambda F, x, y: F.gaussian_nll_loss(x, y, 1), (randn(4, 3), rand(4, 3))),
    (lambda F, x, y: F.gaussian_nll_loss(x, y, y, reduction="bad"), (randn(4, 3), rand(4, 3))),
    (lambda F, x, y: F.margin_ranking_loss(x, y, x), (randn(3), randn(3, 1))),
    (lambda F, x, y: F.margin_ranking_loss(x, x, y, reduction="bad"), (randn(3), randn(3))),
    (lambda F, x, y: F.hinge_embedding_loss(x, y), (randn(3, 4), signs(3))),
    (lambda F, x, y: F.cosine_embedding_loss(x, x, y), (randn(3, 4), signs(3, 1))),
    (lambda F, x, y: F.cosine_embedding_loss(x, x, y), (randn(3, 4), np.array(1.0))),
    (lambda F, x, y: F.cosine_embedding_loss(x, x, y), (randn(4), signs(1))),
    (lambda F, x, y: F.triplet_margin_loss(x, x, y), (randn(3, 4), randn(4))),
    (lambda F, x, y: F.triplet_margin_loss(x, x, y, margin=0.0), (randn(3, 4), randn(3, 4))),
    (lambda F, x, y: F.triplet_margin_loss(x, x, y, reduction="bad"), (randn(3, 4),
                                                                       randn(3, 4))),
    (lambda F, x, y: F.triplet_margin_with_distance_loss(x, x, y, margin=-1.0),
     (randn(3, 4), randn(3, 4))),
    (lambda F, x, y: F.triplet_margin_with_distance_loss(x, x, y), (randn(3, 4), randn(4))),
    (lambda F, x, y: F.triplet_margin_with_distance_loss(x, x, y, reduction="bad"),
     (randn(3, 4), randn(3, 4))),
    (lambda F, x, y: F.multilabel_soft_margin_loss(x, y, reduction="bad"), (randn(2, 3),
                                                                            rand(2, 3))),
    (lambda F, x, y: F.multi_margin_loss(x, y, p=3), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.multi_margin_loss(x, y, weight=x), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.multi_margin_loss(x, y, weight=x[0, :3]), (randn(3, 4),
                                                                   labels(3, high=4))),
    (lambda F, x, y: F.multi_margin_loss(x, y), (randn(3, 4), labels(2, high=4))),
    (lambda F, x, y: F.multi_margin_loss(x, y), (randn(3, 4), np.array([0, 1, 4]))),
    (lambda F, x, y: F.multi_margin_loss(x, y), (randn(3, 4), np.array([0, 1, -1]))),
    (lambda F, x, y: F.multi_margin_loss(x, y.float()), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.multi_margin_loss(x, y), (randn(2, 3, 4), labels(2, high=4))),
    (lambda F, x, y: F.multi_margin_loss(x, y), (randn(3, 0), labels(3, high=4))),
    (lambda F, x, y: F.multilabel_margin_loss(x, y), (randn(2, 4), np.array([[1, 5, -1, 0],
                                                                             [0, 1, 2, 3]]))),
    (lambda F, x, y: F.multilabel_margin_loss(x, y), (randn(2, 4), np.array([[1, -2, -1, 0],
                                                                             [0, 1, 2, 3]]))),
    (lambda F, x, y: F.multilabel_margin_loss(x, y), (randn(2, 4), labels(2, 3, high=3))),
    (lambda F, x, y: F.multilabel_margin_loss(x, y), (randn(2, 3, 4), labels(2, 3, 4, high=3))),
    (lambda F, x, y: F.nll_loss(x, y), (randn(3, 4), labels(2, high=4))),
    (lambda F, x, y: F.nll_loss(x, y), (randn(3, 4), np.array([0, 1, 4]))),
    (lambda F, x, y: F.nll_loss(x, y, reduction="bad"), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.cross_entropy(x, y, reduction="bad"), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.cross_entropy(x, y), (randn(3, 4), np.array([0, 1, 4]))),
    (lambda F, x, y: F.cross_entropy(x, y, label_smoothing=1.5), (randn(3, 4),
                                                                  labels(3, high=4))),
    (lambda F, x, y: F.cross_entropy(x, y), (randn(3, 4), rand(3, 5))),
    (lambda F, x, y: F.cross_entropy(x, y), (randn(3, 4), labels(3, 4, high=4))),
    (lambda F, x, y: F.cross_entropy(x, y, ignore_index=1), (randn(3, 4), rand(3, 4))),
    (lambda F, x, y: F.cross_entropy(x, y.int()), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.cross_entropy(x, y, x[0].double()), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.cross_entropy(x, y), (randn(2, 3, 4), labels(2, 3, high=3))),
    (lambda F, x, y: F.nll_loss(x, y.float()), (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.nll_loss(x, y), (randn(4), labels(2, high=4))),
    (lambda F, x, y: F.nll_loss(x, y, x[0].detach().requires_grad_()),
     (randn(3, 4), labels(3, high=4))),
    # arguments PyTorch has no derivative for must not require grad
    (lambda F, x, y: F.binary_cross_entropy(x, y, y.detach().requires_grad_()),
     (rand(3), rand(3))),
    (lambda F, x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=y.requires_grad_()),
     (randn(3), rand(3))),
    (lambda F, x, y: F.multi_margin_loss(x, y, weight=x[0].detach().requires_grad_()),
     (randn(3, 4), labels(3, high=4))),
    (lambda F, x, y: F.soft_margin_loss(x, y.requires_grad_()), (randn(3), signs(3))),
]


@pytest.mark.parametrize("fn, arrays", ERRORS)
def test_loss_errors(fn, arrays):
    check_raises(lambda lib, *ts: fn(lib.nn.functional, *ts), *arrays)


def test_size_mismatch_warns_like_torch():
    for lib in (torch, ember):
        F = lib.nn.functional
        for fn in (F.l1_loss, F.mse_loss, F.smooth_l1_loss, F.huber_loss):
            with pytest.warns(UserWarning, match="target size"):
                fn(lib.ones(3, 2), lib.ones(2))
        with pytest.warns(UserWarning, match="batchmean"):
            F.kl_div(lib.ones(3), lib.ones(3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            F.kl_div(lib.ones(3), lib.ones(3), reduction="batchmean")
            F.l1_loss(lib.ones(3), lib.ones(3))


@pytest.mark.parametrize("size_average, reduce", [(None, False), (False, None), (True, True),
                                                   (False, True)])
def test_legacy_size_average_and_reduce(size_average, reduce):
    x, y = randn(3, 4), randn(3, 4)
    for fn in ("l1_loss", "mse_loss", "smooth_l1_loss", "soft_margin_loss", "poisson_nll_loss",
               "multilabel_soft_margin_loss", "kl_div"):
        with pytest.warns(UserWarning, match="size_average and reduce"):
            check(lambda F, a, b: getattr(F, fn)(a, b, size_average=size_average, reduce=reduce),
                  x, y, grad=())
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="size_average and reduce"):
            loss = lib.nn.L1Loss(size_average=size_average, reduce=reduce)
        assert loss.reduction == torch.nn.L1Loss(size_average, reduce).reduction


# ---- modules ----------------------------------------------------------------------------------
MODULES = [
    ("L1Loss", {}, (randn(3, 4), randn(3, 4))),
    ("MSELoss", {"reduction": "sum"}, (randn(3, 4), randn(3, 4))),
    ("NLLLoss", {"ignore_index": 1}, (randn(5, 3), labels(5, high=3))),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "reduction": "none"},
     (randn(5, 3), labels(5, high=3))),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, (rand(3, 4, low=0.1), rand(3, 4) * 3)),
    ("GaussianNLLLoss", {"full": True}, (randn(3, 4), randn(3, 4), rand(3, 4, low=0.1))),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, (randn(3, 4), randn(3, 4))),
    ("BCELoss", {}, (rand(3, 4, low=0.1, high=0.9), rand(3, 4))),
    ("BCEWithLogitsLoss", {}, (randn(3, 4), rand(3, 4))),
    ("HingeEmbeddingLoss", {"margin": 2.0}, (randn(3, 4), signs(3, 4))),
    ("MultiLabelMarginLoss", {}, (randn(2, 3), np.array([[2, -1, 0], [0, 1, -1]]))),
    ("SmoothL1Loss", {"beta": 0.5}, (randn(3, 4), randn(3, 4))),
    ("HuberLoss", {"delta": 0.5}, (randn(3, 4), randn(3, 4))),
    ("SoftMarginLoss", {}, (randn(3, 4), signs(3, 4))),
    ("MultiLabelSoftMarginLoss", {}, (randn(3, 4), rand(3, 4))),
    ("CosineEmbeddingLoss", {"margin": 0.1}, (randn(3, 4), randn(3, 4), signs(3))),
    ("MarginRankingLoss", {"margin": 0.1}, (randn(3), randn(3), signs(3))),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5}, (randn(3, 4), labels(3, high=4))),
    ("TripletMarginLoss", {"margin": 2.0, "swap": True}, (randn(3, 4), randn(3, 4),
                                                          randn(3, 4))),
]


@pytest.mark.parametrize("name, kwargs, arrays", MODULES, ids=[m[0] for m in MODULES])
def test_loss_modules(name, kwargs, arrays):
    mods = {}

    def fn(F, *ts):
        lib = torch if F is torch.nn.functional else ember
        mods[lib] = getattr(lib.nn, name)(**kwargs)
        return mods[lib](*ts)
    check(fn, *arrays, grad=(0,))
    assert repr(mods[ember]) == repr(mods[torch])
    assert list(mods[ember].state_dict()) == list(mods[torch].state_dict())
    assert mods[ember].reduction == mods[torch].reduction


def test_weighted_loss_modules_keep_weight_buffers():
    w, pw = rand(3), rand(3)
    for name, args in (("CrossEntropyLoss", {"weight": w}), ("NLLLoss", {"weight": w}),
                       ("BCELoss", {"weight": w}), ("MultiMarginLoss", {"weight": w}),
                       ("MultiLabelSoftMarginLoss", {"weight": w}),
                       ("BCEWithLogitsLoss", {"weight": w, "pos_weight": pw})):
        e = getattr(ember.nn, name)(**{k: ember.tensor(v) for k, v in args.items()})
        t = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in args.items()})
        assert repr(e) == repr(t)
        assert list(e.state_dict()) == list(t.state_dict())
        assert e.double().weight.dtype == ember.float64


def test_ctc_module_and_invalid_reduction_at_call():
    logits, targets = _ctc_inputs(t=6, n=2, c=4, s=3)
    mods = {lib: lib.nn.CTCLoss(blank=0, zero_infinity=True) for lib in (torch, ember)}
    check(lambda F, x, y: mods[torch if F is torch.nn.functional else ember](
        x.log_softmax(2), y, (6, 4), (3, 2)), logits, targets)
    assert repr(mods[ember]) == repr(mods[torch]) == "CTCLoss()"
    for lib in (torch, ember):  # the reduction is only checked when the loss is computed
        loss = lib.nn.L1Loss(reduction="bad")
        with pytest.raises(ValueError):
            loss(lib.ones(2), lib.ones(2))


def test_loss_module_constructor_errors():
    for name, kwargs in (("MultiMarginLoss", {"p": 3}), ("TripletMarginLoss", {"margin": 0}),
                         ("TripletMarginWithDistanceLoss", {"margin": -1.0}),
                         ("HuberLoss", {"delta": "1"})):
        for lib in (torch, ember):
            with pytest.raises((ValueError, TypeError)) as info:
                getattr(lib.nn, name)(**kwargs)
            if lib is torch:
                expected = type(info.value)
        with pytest.raises(expected):
            getattr(ember.nn, name)(**kwargs)
    with pytest.raises(ValueError):
        ember.nn.MultiMarginLoss(weight=ember.ones(2, 2))
    with pytest.warns(FutureWarning):
        ember.nn.NLLLoss2d()


def test_triplet_margin_with_distance_module():
    mods = {lib: lib.nn.TripletMarginWithDistanceLoss(swap=True) for lib in (torch, ember)}
    check(lambda F, a, p, n: mods[torch if F is torch.nn.functional else ember](a, p, n),
          randn(3, 4), randn(3, 4), randn(3, 4), grad=(0, 1, 2))
    assert repr(mods[ember]) == repr(mods[torch])


# ---- the torch.* forms (reduction as its code) -------------------------------------------------
TORCH_LEVEL = [
    (lambda m, x, y: m.kl_div(x, y, 0, log_target=True), (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.kl_div(x, y.abs()), (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.hinge_embedding_loss(x, y.sign()), (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.triplet_margin_loss(x, y, x.flip(0)), (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.binary_cross_entropy_with_logits(x, y), (randn(3, 4), rand(3, 4))),
    (lambda m, x, y: m.binary_cross_entropy_with_logits(x, y, None, y[0] + 2, 2),
     (randn(3, 4), rand(3, 4))),
    (lambda m, x, y: m.poisson_nll_loss(x, y, False, True, 1e-3, 0),
     (rand(3, 4, low=0.1), rand(3, 4) * 3)),
    (lambda m, x, y: m.hinge_embedding_loss(x, y.sign(), 0.5, 0), (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.margin_ranking_loss(x[0], x[1], y[0].sign(), margin=0.2),
     (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.cosine_embedding_loss(x, y, y[:, 0].sign(), 0.1, 2),
     (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.triplet_margin_loss(x, y, x.flip(0), 2.0, 1, 1e-6, True, 0),
     (randn(3, 4), randn(3, 4))),
    (lambda m, x, y: m.ctc_loss(x.log_softmax(2), y.long(), [4, 3], [2, 1], 0, 2, False),
     (randn(4, 2, 3), np.array([[1, 2], [2, 0]]))),
]


@pytest.mark.parametrize("fn, arrays", TORCH_LEVEL)
def test_torch_level_loss_functions(fn, arrays):
    """Called from Python, PyTorch's default reduction for these is 'none'."""
    check(lambda F, *ts: fn(torch if F is torch.nn.functional else ember, *ts), *arrays)


# ---- linear_cross_entropy ----------------------------------------------------------------------
LINEAR_CE = [
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y), (randn(5, 4), randn(3, 4),
                                                          labels(5, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y, linear_bias=w[:, 0] * 0.5,
                                               reduction="sum", ignore_index=1,
                                               label_smoothing=0.1),
     (randn(6, 4), randn(3, 4), labels(6, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y, reduction="none"),
     (randn(4), randn(3, 4), np.array(2))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y, linear_bias=w[..., 0]),
     (randn(5, 4), randn(3, 2, 4), labels(5, 2, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y), (randn(5, 4), randn(3, 4),
                                                          rand(5, 3))),
]


@pytest.mark.parametrize("fn, arrays", LINEAR_CE)
def test_linear_cross_entropy(fn, arrays):
    check(fn, *arrays, grad=(0, 1))


LINEAR_CE_ERRORS = [
    (lambda F, x, w, y: F.linear_cross_entropy(x[None], w, y), (randn(5, 4), randn(3, 4),
                                                                labels(5, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w[0], y), (randn(5, 4), randn(3, 4),
                                                             labels(5, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y), (randn(5, 4), randn(3, 5),
                                                          labels(5, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y, linear_bias=w[0]),
     (randn(5, 4), randn(3, 4), labels(5, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y), (randn(4), randn(3, 2, 4),
                                                          labels(2, high=3))),
    (lambda F, x, w, y: F.linear_cross_entropy(x, w, y, ignore_index=0),
     (randn(5, 4), randn(3, 4), rand(5, 3))),
]


@pytest.mark.parametrize("fn, arrays", LINEAR_CE_ERRORS)
def test_linear_cross_entropy_errors(fn, arrays):
    check_raises(lambda lib, *ts: fn(lib.nn.functional, *ts), *arrays)


@pytest.mark.parametrize("kwargs", [{}, {"bias": True, "out_features": (2,),
                                         "label_smoothing": 0.2, "reduction": "sum"}])
def test_linear_cross_entropy_module(kwargs):
    mods = {}

    def fn(F, x, y):
        lib = torch if F is torch.nn.functional else ember
        m = mods[lib] = lib.nn.LinearCrossEntropyLoss(4, 3, **kwargs)
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(np.cos(np.arange(p.numel())).reshape(tuple(p.shape)),
                                   dtype=p.dtype))
        return m(x, y)
    target = labels(5, 2, high=3) if kwargs else labels(5, high=3)
    check(fn, randn(5, 4), target)
    assert repr(mods[ember]) == repr(mods[torch])
    assert list(mods[ember].state_dict()) == list(mods[torch].state_dict())
    for name, p in mods[torch].named_parameters():
        assert_same(dict(mods[ember].named_parameters())[name].grad, p.grad, atol=1e-5)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError):
            lib.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=2.0)
