"""Checks ported from PyTorch's test/test_nn.py (losses with reduction modes and bad shapes,
padding modes, interpolate sizes/scale factors, RNN/LSTM/GRU argument checks and state shapes,
conv argument checks and padding='same', embedding max_norm, nn.utils gradient clipping and
parameter vectors, Module.apply/to/half, nn.init fan computations), run against torch and ember."""
import math
import re

import numpy as np
import pytest

from _ported import same


def _rand(L, *shape, seed=0, requires_grad=False):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return L.tensor(x, requires_grad=requires_grad)


class TypeOnly:
    """A case whose error message is ember's own wording (compared by exception class only)."""
    def __init__(self, make):
        self.make = make

    def __call__(self):
        return self.make()


class SetInMessage(TypeOnly):
    """A case whose message prints a Python set: its order is hash order, which differs between
    processes (and between the two libraries' compiled files), so the items are compared sorted."""


def _sorted_sets(msg):
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", msg)


def _errs(L, makes):
    """Each case's result, or its exception's class and message (class only for TypeOnly)."""
    out = []
    for make in makes:
        L.manual_seed(0)
        try:
            r = make()
            out.append(("ok", r))
        except Exception as e:
            msg = _sorted_sets(str(e)) if isinstance(make, SetInMessage) else \
                None if isinstance(make, TypeOnly) else str(e)
            out.append((type(e).__name__, msg))
    return out


# ---- losses -------------------------------------------------------------------------------------

def _loss(name, make_inputs, **kw):
    def check(L):
        out = []
        for reduction in ["none", "mean", "sum"]:
            ins = make_inputs(L)
            loss = getattr(L.nn.functional, name)(*ins, reduction=reduction, **kw)
            g = L.autograd.grad(loss.sum(), ins[0])[0]
            out.append((loss, g))
        return out
    return check


def _xt(shape, target="float", classes=4):
    def make(L):
        x = _rand(L, *shape, requires_grad=True)
        if target == "float":
            t = _rand(L, *shape, seed=1)
        elif target == "prob":
            t = L.sigmoid(_rand(L, *shape, seed=1))
        elif target == "class":
            t = L.tensor(np.random.RandomState(2).randint(0, classes, shape[:1] + shape[2:]))
        elif target == "sign":
            t = L.tensor(np.sign(np.random.RandomState(3).randn(*shape)).astype(np.float32))
        return x, t
    return make


def _sigmoid_x(shape):
    def make(L):
        x = L.sigmoid(_rand(L, *shape)).requires_grad_()
        return x, L.sigmoid(_rand(L, *shape, seed=1))
    return make


def _log_softmax_x(shape):
    def make(L):
        x = L.log_softmax(_rand(L, *shape), 1).requires_grad_()
        return x, L.softmax(_rand(L, *shape, seed=1), 1)
    return make


def _nll_inputs(L):
    x = L.log_softmax(_rand(L, 5, 4), 1).requires_grad_()
    return x, L.tensor([0, 3, -100, 1, 2])


def _margin_ranking(L):
    return _rand(L, 6, requires_grad=True), _rand(L, 6, seed=1), \
        L.tensor([1., -1., 1., 1., -1., -1.])


def _triplet(L):
    return _rand(L, 4, 5, requires_grad=True), _rand(L, 4, 5, seed=1), _rand(L, 4, 5, seed=2)


def _cosine_emb(L):
    return _rand(L, 4, 5, requires_grad=True), _rand(L, 4, 5, seed=1), L.tensor([1, -1, 1, -1])


def _multilabel_margin(L):
    return _rand(L, 3, 4, requires_grad=True), L.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])


def _ctc(L):
    lp = L.log_softmax(_rand(L, 12, 2, 5), 2).requires_grad_()
    return lp, L.tensor([[1, 2, 2, 3], [4, 1, 0, 0]]), L.tensor([12, 10]), L.tensor([4, 2])


LOSSES = {
    "mse": _loss("mse_loss", _xt((3, 4))),
    "l1": _loss("l1_loss", _xt((3, 4))),
    "smooth_l1": _loss("smooth_l1_loss", _xt((3, 4)), beta=0.5),
    "smooth_l1_beta0": _loss("smooth_l1_loss", _xt((3, 4)), beta=0.0),
    "huber": _loss("huber_loss", _xt((3, 4)), delta=0.7),
    "bce": _loss("binary_cross_entropy", _sigmoid_x((3, 4))),
    "bce_with_logits_pos_weight": _loss("binary_cross_entropy_with_logits", _xt((3, 4), "prob"),
                                        pos_weight=None),
    "kl_div_batchmean": lambda L: [L.nn.functional.kl_div(*_log_softmax_x((3, 4))(L), reduction=r)
                                   for r in ["batchmean", "sum", "mean", "none"]],
    "kl_div_log_target": _loss("kl_div", _log_softmax_x((3, 4)), log_target=True),
    "nll_ignore_index": _loss("nll_loss", _nll_inputs),
    "nll_weight": lambda L: [L.nn.functional.nll_loss(*_nll_inputs(L), weight=L.tensor([1., 2., 3., 4.]),
                                                      reduction=r) for r in ["none", "mean", "sum"]],
    "nll_2d": _loss("nll_loss", lambda L: (L.log_softmax(_rand(L, 2, 3, 4, 5), 1).requires_grad_(),
                                            _xt((2, 3, 4, 5), "class", 3)(L)[1])),
    "cross_entropy_label_smoothing": _loss("cross_entropy", _xt((5, 4), "class"), label_smoothing=0.2),
    "cross_entropy_probs": _loss("cross_entropy", lambda L: (_rand(L, 5, 4, requires_grad=True),
                                                             L.softmax(_rand(L, 5, 4, seed=1), 1))),
    "cross_entropy_probs_smoothing": _loss("cross_entropy", lambda L: (
        _rand(L, 5, 4, requires_grad=True), L.softmax(_rand(L, 5, 4, seed=1), 1)), label_smoothing=0.1),
    "cross_entropy_weight_ignore": _loss("cross_entropy", lambda L: (
        _rand(L, 5, 4, requires_grad=True), L.tensor([0, 3, 1, 1, 2])), weight=None, ignore_index=1),
    "cross_entropy_unbatched": _loss("cross_entropy", lambda L: (_rand(L, 4, requires_grad=True),
                                                                 L.tensor(2))),
    "poisson_nll": _loss("poisson_nll_loss", _xt((3, 4), "prob")),
    "poisson_nll_full": _loss("poisson_nll_loss", lambda L: (_rand(L, 3, 4).abs().add(0.5).requires_grad_(),
                                                             L.tensor([[0., 1, 2, 3]] * 3)),
                              log_input=False, full=True),
    "gaussian_nll": lambda L: [L.nn.functional.gaussian_nll_loss(_rand(L, 3, 4), _rand(L, 3, 4, seed=1),
                                                                 L.ones(3, 1) * 0.5, full=True, reduction=r)
                               for r in ["none", "mean", "sum"]],
    "hinge_embedding": _loss("hinge_embedding_loss", _xt((3, 4), "sign"), margin=0.5),
    "soft_margin": _loss("soft_margin_loss", _xt((3, 4), "sign")),
    "multilabel_soft_margin": _loss("multilabel_soft_margin_loss", _xt((3, 4), "sign")),
    "multi_margin": _loss("multi_margin_loss", _xt((5, 4), "class"), p=2, margin=0.5),
    "multilabel_margin": _loss("multilabel_margin_loss", _multilabel_margin),
    "margin_ranking": _loss("margin_ranking_loss", _margin_ranking, margin=0.1),
    "triplet_margin": _loss("triplet_margin_loss", _triplet, swap=True),
    "cosine_embedding": _loss("cosine_embedding_loss", _cosine_emb, margin=0.2),
    "ctc": _loss("ctc_loss", _ctc, zero_infinity=True),
}


def _loss_bad_shapes(L):
    F = L.nn.functional
    return _errs(L, [
        lambda: F.nll_loss(L.zeros(3, 4), L.zeros(2, dtype=L.long)),
        lambda: F.nll_loss(L.zeros(3, 4), L.zeros(3)),
        lambda: F.nll_loss(L.zeros(3, 4, 5), L.zeros(3, 5, dtype=L.long).view(3, 5)[:, :4]),
        lambda: F.cross_entropy(L.zeros(3, 4), L.zeros(3, 3)),
        lambda: F.cross_entropy(L.zeros(3, 4), L.tensor([0, 1, 4])),
        lambda: F.binary_cross_entropy(L.rand(3), L.rand(4)),
        lambda: F.binary_cross_entropy_with_logits(L.rand(3), L.rand(4)),
        lambda: F.kl_div(L.rand(3), L.rand(4)),
        lambda: F.mse_loss(L.rand(3), L.rand(3), reduction="average"),
        lambda: F.poisson_nll_loss(L.rand(3), L.rand(3), reduction="elementwise_mean"),
        lambda: F.multilabel_soft_margin_loss(L.rand(3), L.rand(3), reduction="elementwise_mean"),
        lambda: F.cross_entropy(L.rand(3, 2), L.tensor([0, 1, 1]), reduction="elementwise_mean"),
        lambda: F.pad(L.rand(2, 3), (1, 1, 1, 1, 1, 1)),
        lambda: F.pad(L.rand(2, 3), (1, 1, 1), mode="wrap"),
        lambda: F.l1_loss(L.rand(3), L.rand(3), reduction="elementwise_mean"),
        lambda: F.margin_ranking_loss(L.rand(3), L.rand(3), L.rand(4)),
        lambda: F.multi_margin_loss(L.rand(3, 4), L.tensor([0, 1, 2]), p=3),
        lambda: F.cosine_embedding_loss(L.rand(3, 4), L.rand(3, 5), L.ones(3)),
        lambda: F.ctc_loss(L.rand(5, 2, 3).log_softmax(2), L.tensor([[1, 1]] * 2), L.tensor([5, 5]),
                           L.tensor([2, 2]), reduction="bogus"),
        lambda: F.gaussian_nll_loss(L.rand(3, 4), L.rand(3, 4), -L.ones(3, 4)),
        lambda: F.gaussian_nll_loss(L.rand(3, 4), L.rand(3, 4), L.ones(3, 2)),
        lambda: F.huber_loss(L.rand(3), L.rand(3), delta=-1.0),
        lambda: F.smooth_l1_loss(L.rand(3), L.rand(3), beta=-1.0),
    ])


def _mse_broadcast_warns(L):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = L.nn.functional.mse_loss(L.ones(3, 1), L.zeros(3))
    return r, [str(x.message) for x in w]


def _loss_modules(L):
    nn = L.nn
    x = _rand(L, 4, 3)
    t = L.tensor([0, 2, 1, 2])
    return (nn.CrossEntropyLoss(weight=L.tensor([1., 2., 3.]), label_smoothing=0.1)(x, t),
            nn.NLLLoss(ignore_index=2, reduction="sum")(x.log_softmax(1), t),
            nn.BCEWithLogitsLoss(pos_weight=L.tensor([1., 2., 3.]))(x, L.sigmoid(x)),
            nn.MSELoss(reduction="sum")(x, x * 2), nn.L1Loss()(x, x + 1),
            nn.CrossEntropyLoss(size_average=False)(x, t), nn.MSELoss(reduce=False)(x, x * 2).shape,
            nn.CrossEntropyLoss(size_average=False).reduction, nn.L1Loss(reduce=False, size_average=True).reduction)


# ---- padding ------------------------------------------------------------------------------------

def _pad(mode, shape, pad, value=None):
    def check(L):
        x = _rand(L, *shape, requires_grad=True)
        kw = {} if value is None else {"value": value}
        y = L.nn.functional.pad(x, pad, mode=mode, **kw)
        g = L.autograd.grad((y * L.arange(y.numel()).view(y.shape).float()).sum(), x)[0]
        return y, g
    return check


PADS = {
    "constant_1d": _pad("constant", (2, 3, 4), (1, 2), 1.5),
    "constant_negative": _pad("constant", (2, 3, 4), (-1, 2, 0, -1)),
    "constant_3d_all_dims": _pad("constant", (2, 3), (1, 1, 2, 0)),
    "reflect_1d": _pad("reflect", (2, 3, 5), (2, 3)),
    "reflect_2d": _pad("reflect", (1, 2, 4, 5), (1, 2, 3, 1)),
    "reflect_3d": _pad("reflect", (1, 1, 3, 3, 4), (1, 1, 2, 0, 1, 2)),
    "reflect_unbatched": _pad("reflect", (3, 5), (2, 1)),
    "replicate_1d": _pad("replicate", (2, 3, 4), (3, 1)),
    "replicate_2d": _pad("replicate", (1, 2, 3, 4), (2, 2, 1, 3)),
    "replicate_3d": _pad("replicate", (1, 1, 2, 3, 2), (1, 2, 1, 0, 2, 2)),
    "circular_1d": _pad("circular", (2, 3, 4), (2, 1)),
    "circular_2d": _pad("circular", (1, 2, 3, 4), (1, 2, 2, 1)),
    "circular_3d": _pad("circular", (1, 1, 2, 3, 4), (1, 1, 1, 2, 0, 1)),
    "circular_negative": _pad("circular", (1, 2, 3, 4), (-1, 1, 0, -1)),
}


def _pad_errors(L):
    F = L.nn.functional
    return _errs(L, [
        lambda: F.pad(L.rand(1, 2, 3), (4, 0), mode="reflect"),
        lambda: F.pad(L.rand(1, 2, 3), (1, 2, 3), mode="constant"),
        lambda: F.pad(L.rand(1, 2, 3), (1, 1, 1, 1), mode="reflect"),
        lambda: F.pad(L.rand(1, 2, 3), (1, 1), mode="wrap"),
        lambda: F.pad(L.rand(1, 2, 3), (4, 4), mode="circular"),
        lambda: F.pad(L.rand(2, 3), (1, 1), mode="constant", value=2).shape,
        lambda: F.pad(L.rand(1, 2, 3), (1, 1), mode="replicate", value=2),
        TypeOnly(lambda: F.pad(L.rand(1, 2, 3), (-4, 0))),  # torch: "narrow(): length must be ..."
        lambda: L.nn.ReflectionPad2d(3)(L.rand(1, 1, 3, 3)),
        lambda: L.nn.ZeroPad2d((1, 2, 3, 4))(L.rand(1, 1, 2, 2)).shape,
        lambda: L.nn.CircularPad1d(2)(L.rand(1, 1, 2)),
    ])


def _pad_modules(L):
    nn = L.nn
    x = L.arange(24.).view(1, 2, 3, 4)
    return [m(x) for m in [nn.ReflectionPad2d((1, 2, 0, 1)), nn.ReplicationPad2d(1), nn.CircularPad2d((1, 0, 2, 1)),
                           nn.ConstantPad2d(1, -1.0), nn.ZeroPad2d((0, 1, 1, 0))]] + \
        [repr(nn.ReflectionPad2d((1, 2, 0, 1))), repr(nn.ConstantPad1d(2, 3.5)), repr(nn.ZeroPad2d(1))]


# ---- interpolate --------------------------------------------------------------------------------

def _interp(shape, grad=True, **kw):
    def check(L):
        x = _rand(L, *shape, requires_grad=True)
        y = L.nn.functional.interpolate(x, **kw)
        if not grad:
            return y
        g = L.autograd.grad((y * L.cos(L.arange(y.numel()).float()).view(y.shape)).sum(), x)[0]
        return y, g
    return check


INTERP = {
    "nearest_1d_size": _interp((2, 3, 5), size=8, mode="nearest"),
    "nearest_1d_scale": _interp((2, 3, 5), scale_factor=1.7, mode="nearest"),
    "nearest_2d_scale_down": _interp((1, 2, 7, 9), scale_factor=0.45, mode="nearest"),
    "nearest_2d_recompute": _interp((1, 2, 5, 6), scale_factor=(1.3, 2.1), mode="nearest",
                                    recompute_scale_factor=True),
    "nearest_exact_2d": _interp((1, 2, 5, 6), size=(7, 4), mode="nearest-exact"),
    "nearest_exact_scale": _interp((1, 2, 5, 6), scale_factor=1.5, mode="nearest-exact"),
    "nearest_3d": _interp((1, 1, 3, 4, 2), scale_factor=(2, 1.5, 3), mode="nearest"),
    "linear_align": _interp((2, 3, 5), size=9, mode="linear", align_corners=True),
    "linear_scale": _interp((2, 3, 5), scale_factor=2.5, mode="linear", align_corners=False),
    "bilinear": _interp((1, 2, 4, 5), size=(7, 3), mode="bilinear", align_corners=False),
    "bilinear_align": _interp((1, 2, 4, 5), scale_factor=1.6, mode="bilinear", align_corners=True),
    "bilinear_recompute": _interp((1, 2, 4, 5), scale_factor=1.7, mode="bilinear",
                                  recompute_scale_factor=True),
    "bilinear_antialias": _interp((1, 2, 9, 8), size=(4, 3), mode="bilinear", antialias=True),
    "bicubic": _interp((1, 2, 4, 5), size=(6, 8), mode="bicubic", align_corners=False),
    "bicubic_align": _interp((1, 2, 4, 5), scale_factor=(1.5, 0.8), mode="bicubic", align_corners=True),
    "trilinear": _interp((1, 1, 3, 4, 2), size=(5, 3, 4), mode="trilinear"),
    "lanczos_down": _interp((1, 2, 9, 11), size=(4, 5), mode="lanczos", antialias=True),
    "lanczos_up_scale": _interp((1, 2, 5, 4), scale_factor=(2.5, 1.7), mode="lanczos", antialias=True),
    # a dim whose size the scale factor leaves unchanged: copied by linear and antialiased modes
    # and by nearest, resampled by the scale in bicubic and nearest-exact
    "same_size_linear": _interp((1, 2, 3), scale_factor=1.3, mode="linear"),
    "same_size_bilinear": _interp((1, 2, 2, 4), scale_factor=1.3, mode="bilinear"),
    "same_size_trilinear": _interp((1, 1, 3, 2, 2), scale_factor=(1.3, 1.0, 1.5), mode="trilinear"),
    "same_size_bicubic": _interp((1, 2, 3, 4), scale_factor=(1.3, 1.5), mode="bicubic"),
    # (forward only: torch's antialiased backward does not skip the unchanged dim its forward
    # skipped, so its gradient is not the derivative of its output)
    "same_size_bicubic_aa": _interp((1, 2, 3, 4), scale_factor=(1.3, 1.5), mode="bicubic", antialias=True,
                                    grad=False),
    "same_size_nearest_exact": _interp((1, 2, 3, 4), scale_factor=(1.3, 1.5), mode="nearest-exact"),
    "nearest_double_size": _interp((1, 2, 3, 4), scale_factor=(2.2, 2.4), mode="nearest"),
    "area": _interp((1, 2, 7, 9), size=(3, 4), mode="area"),
    "area_1d": _interp((1, 2, 7), scale_factor=0.5, mode="area"),
}


def _interp_errors(L):
    F = L.nn.functional
    x3, x4 = _rand(L, 1, 2, 4), _rand(L, 1, 2, 4, 4)
    return _errs(L, [
        lambda: F.interpolate(x4, size=(3, 3), scale_factor=2),
        lambda: F.interpolate(x4),
        lambda: F.interpolate(x4, size=(3, 3, 3)),
        lambda: F.interpolate(x4, scale_factor=(2, 2, 2)),
        lambda: F.interpolate(x3, size=5, mode="bilinear"),
        lambda: F.interpolate(x4, size=5, mode="linear"),
        lambda: F.interpolate(x4, size=5, mode="nearest", align_corners=True),
        lambda: F.interpolate(x4, size=5, mode="cubic"),
        lambda: F.interpolate(L.rand(2, 4), size=5),
        lambda: F.interpolate(x4, size=(0, 3)),
        lambda: F.interpolate(x4, scale_factor=-1.0),
        lambda: F.interpolate(x4, size=(3, 3), mode="nearest", antialias=True),
        lambda: F.interpolate(x4, size=5, recompute_scale_factor=True),
        lambda: F.interpolate(x4, size=5, mode="lanczos"),
        lambda: F.interpolate(x4, size=5, mode="lanczos", antialias=True, align_corners=True),
        lambda: F.interpolate(x3, size=5, mode="lanczos", antialias=True),
        lambda: F.interpolate(x3, size=5, mode="lanczos"),
        lambda: F.interpolate(x3, size=5, mode="linear", antialias=True),
        lambda: F.interpolate(x4, size=[3, 5]).shape,
        lambda: F.interpolate(x4, size=L.Size([3, 5])).shape,
        lambda: L.nn.Upsample(scale_factor=2, mode="bilinear")(x4).shape,
        lambda: repr(L.nn.Upsample(scale_factor=2.0, mode="bilinear")),
        lambda: repr(L.nn.UpsamplingNearest2d(size=(3, 4))),
        lambda: L.nn.UpsamplingBilinear2d(scale_factor=2)(x4)[0, 0, 1],
    ])


def _interp_align_warning(L):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        L.nn.functional.upsample(L.rand(1, 1, 2, 2), scale_factor=2, mode="bilinear")
    return sorted({x.category.__name__ for x in w})


# ---- RNNs ---------------------------------------------------------------------------------------

def _rnn_run(cls, batch_first=False, bidirectional=False, num_layers=2, proj_size=0, unbatched=False,
             packed=False, **kw):
    def check(L):
        L.manual_seed(0)
        extra = {"proj_size": proj_size} if proj_size else {}
        m = getattr(L.nn, cls)(3, 5, num_layers=num_layers, batch_first=batch_first,
                               bidirectional=bidirectional, **extra, **kw)
        with L.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(_rand(L, *p.shape, seed=10 + i) * 0.3)
        shape = (4, 3) if unbatched else ((2, 4, 3) if batch_first else (4, 2, 3))
        x = _rand(L, *shape, requires_grad=True)
        if packed:
            inp = L.nn.utils.rnn.pack_padded_sequence(x, L.tensor([4, 2]), batch_first=batch_first)
            out, h = m(inp)
            out, lens = L.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        else:
            out, h = m(x)
        hs = list(h) if isinstance(h, tuple) else [h]
        g = L.autograd.grad(out.sum() + sum(t.sum() for t in hs), x)[0]
        return out, hs, g, [p.shape for p in m.parameters()], list(m._flat_weights_names)
    return check


RNNS = {
    "rnn_tanh": _rnn_run("RNN"),
    "rnn_relu_bidir": _rnn_run("RNN", nonlinearity="relu", bidirectional=True),
    "rnn_unbatched": _rnn_run("RNN", unbatched=True),
    "lstm": _rnn_run("LSTM"),
    "lstm_batch_first_bidir": _rnn_run("LSTM", batch_first=True, bidirectional=True),
    "lstm_proj": _rnn_run("LSTM", proj_size=2),
    "lstm_proj_bidir_unbatched": _rnn_run("LSTM", proj_size=2, bidirectional=True, unbatched=True),
    "lstm_packed": _rnn_run("LSTM", packed=True, bidirectional=True),
    "gru": _rnn_run("GRU", num_layers=1),
    "gru_no_bias_batch_first": _rnn_run("GRU", batch_first=True, bias=False),
    "gru_packed_batch_first": _rnn_run("GRU", packed=True, batch_first=True),
}


def _rnn_arg_errors(L):
    nn = L.nn
    return _errs(L, [
        lambda: nn.RNN(3, 4, nonlinearity="sigmoid"),
        lambda: nn.LSTM(3, 4, dropout=1.5),
        lambda: nn.LSTM(3, 4, num_layers=0),
        lambda: nn.LSTM(3, 0),
        lambda: nn.GRU(3, 4, proj_size=2),
        lambda: nn.LSTM(3, 4, proj_size=4),
        lambda: nn.LSTM(3, 4, proj_size=-1),
        lambda: nn.LSTM(3, 4.0),
        lambda: nn.LSTM(3, 4, num_layers=2.5),
        lambda: nn.LSTM(3, 4)(L.rand(2, 3, 5)),
        lambda: nn.LSTM(3, 4)(L.rand(2, 3, 3), (L.rand(1, 3, 4),)),
        lambda: nn.LSTM(3, 4)(L.rand(2, 3, 3), (L.rand(1, 2, 4), L.rand(1, 2, 4))),
        lambda: nn.LSTM(3, 4)(L.rand(2, 3, 3), (L.rand(1, 3, 4), L.rand(2, 3, 4))),
        lambda: nn.GRU(3, 4)(L.rand(2, 3, 3), L.rand(1, 3, 5)),
        lambda: nn.RNN(3, 4)(L.rand(2, 3, 3), L.rand(1, 4)),
        lambda: nn.RNN(3, 4)(L.rand(3, 3), L.rand(1, 1, 4)),
        lambda: nn.RNN(3, 4)(L.rand(2, 2, 2, 3)),
        lambda: nn.LSTM(3, 4, proj_size=2)(L.rand(2, 3, 3), (L.rand(1, 3, 4), L.rand(1, 3, 4))),
        lambda: nn.RNNCell(3, 4)(L.rand(2, 4)),
        lambda: nn.LSTMCell(3, 4)(L.rand(2, 3), (L.rand(3, 4), L.rand(2, 4))),
        lambda: nn.GRUCell(3, 4)(L.rand(1, 2, 3)),
    ])


def _rnn_dropout_warning(L):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        L.nn.LSTM(3, 4, num_layers=1, dropout=0.5)
    return [str(x.message) for x in w]


def _rnn_cells(L):
    L.manual_seed(0)
    out = []
    for cls in ["RNNCell", "LSTMCell", "GRUCell"]:
        m = getattr(L.nn, cls)(3, 4)
        with L.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(_rand(L, *p.shape, seed=i) * 0.3)
        out.append(m(_rand(L, 2, 3)))
        out.append(m(_rand(L, 3)))
    return out


def _rnn_repr_and_state(L):
    return [repr(L.nn.LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)),
            repr(L.nn.GRU(3, 4, bias=False)), repr(L.nn.RNN(3, 4, nonlinearity="relu")),
            repr(L.nn.LSTM(3, 4, proj_size=2)), repr(L.nn.LSTMCell(3, 4, bias=False)),
            list(L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2).state_dict())]


# ---- conv ---------------------------------------------------------------------------------------

def _conv_same(dim, k, dilation=1, stride=1, groups=1):
    def check(L):
        shape = (2, 2 * groups) + (6, 7, 5)[:dim]
        x = _rand(L, *shape, requires_grad=True)
        w = _rand(L, *((2 * groups, 2) + (k,) * dim), seed=1, requires_grad=True)
        f = getattr(L.nn.functional, f"conv{dim}d")
        y = f(x, w, padding="same", dilation=dilation, stride=stride, groups=groups)
        gx, gw = L.autograd.grad((y * y).sum(), (x, w))
        return y, gx, gw
    return check


CONVS = {
    "same_1d_even": _conv_same(1, 4),
    "same_1d_dilated": _conv_same(1, 3, dilation=2),
    "same_2d_odd": _conv_same(2, 3),
    "same_2d_even_dilated_groups": _conv_same(2, 2, dilation=3, groups=2),
    "same_3d": _conv_same(3, 2),
    "valid_2d": lambda L: L.nn.functional.conv2d(_rand(L, 1, 2, 5, 5), _rand(L, 3, 2, 3, 3), padding="valid"),
    "padding_mode_modules": lambda L: [
        (L.manual_seed(0), L.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=m)(_rand(L, 1, 2, 5, 6)))[1]
        for m in ["zeros", "reflect", "replicate", "circular"]],
    "conv_module_same_modes": lambda L: [
        (L.manual_seed(0), L.nn.Conv1d(2, 3, 4, padding="same", padding_mode=m, dilation=2)(_rand(L, 1, 2, 9)))[1]
        for m in ["zeros", "reflect", "circular"]],
    "conv_transpose_output_size": lambda L: (L.manual_seed(0), L.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)(
        _rand(L, 1, 2, 4, 4), output_size=[8, 8]))[1],
}


def _conv_arg_errors(L):
    nn, F = L.nn, L.nn.functional
    return _errs(L, [
        lambda: nn.Conv2d(4, 4, 3, groups=3),
        lambda: nn.Conv2d(4, 6, 3, groups=4),
        lambda: nn.Conv2d(4, 4, 3, groups=0),
        lambda: nn.Conv2d(4, 4, 3, padding="same", stride=2),
        SetInMessage(lambda: nn.Conv2d(4, 4, 3, padding="full")),
        SetInMessage(lambda: nn.Conv2d(4, 4, 3, padding_mode="wrap")),
        lambda: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
        lambda: F.conv2d(L.rand(1, 2, 5, 5), L.rand(3, 2, 3, 3), padding="same", stride=2),
        lambda: F.conv2d(L.rand(1, 2, 5, 5), L.rand(3, 2, 3, 3), padding="other"),
        lambda: F.conv2d(L.rand(1, 3, 5, 5), L.rand(3, 2, 3, 3)),
        lambda: F.conv2d(L.rand(1, 2, 2, 2), L.rand(3, 2, 3, 3)),
        TypeOnly(lambda: F.conv2d(L.rand(1, 2, 5, 5), L.rand(3, 2, 3))),  # torch names the stride
        lambda: F.conv2d(L.rand(1, 2, 5, 5), L.rand(3, 2, 3, 3), stride=0),
        lambda: F.conv2d(L.rand(1, 2, 5, 5), L.rand(3, 2, 3, 3), padding=-1),
        lambda: F.conv2d(L.rand(1, 2, 5, 5), L.rand(3, 2, 3, 3), bias=L.rand(4)),
        lambda: F.conv1d(L.rand(1, 2, 5), L.rand(3, 2, 3).double()),
        lambda: F.conv2d(L.rand(2, 5, 5), L.rand(3, 2, 3, 3)).shape,
        lambda: F.conv_transpose2d(L.rand(1, 2, 4, 4), L.rand(2, 3, 3, 3), stride=2, output_padding=2),
        lambda: nn.ConvTranspose2d(2, 3, 3, stride=2)(L.rand(1, 2, 4, 4), output_size=[20, 20]),
        lambda: nn.Conv2d(2, 3, 3, padding="same", dilation=2).padding,
        lambda: repr(nn.Conv2d(2, 4, (3, 5), stride=2, padding=(1, 2), groups=2, bias=False,
                               padding_mode="reflect")),
        lambda: repr(nn.ConvTranspose1d(2, 4, 3, output_padding=1, stride=2, dilation=2)),
    ])


# ---- embedding ----------------------------------------------------------------------------------

def _embedding_max_norm(L):
    w = _rand(L, 6, 4) * 3
    idx = L.tensor([[0, 2, 2], [5, 1, 0]])
    emb = L.nn.Embedding.from_pretrained(w.clone(), freeze=False, max_norm=1.0, norm_type=1.5)
    out = emb(idx)
    g = L.autograd.grad(out.sum(), emb.weight)[0]
    out2 = L.nn.functional.embedding(idx, w, max_norm=2.0)
    return out, emb.weight, g, out2, w


def _embedding_options(L):
    L.manual_seed(0)
    e = L.nn.Embedding(5, 3, padding_idx=-2, scale_grad_by_freq=True)
    with L.no_grad():
        e.weight.copy_(_rand(L, 5, 3))
    idx = L.tensor([1, 3, 3, 4, 1, 1])
    out = e(idx)
    g = L.autograd.grad(out.pow(2).sum(), e.weight)[0]
    return out, g, e.padding_idx, repr(e), repr(L.nn.Embedding(4, 2, max_norm=1.0, sparse=True))


def _embedding_errors(L):
    return _errs(L, [
        lambda: L.nn.Embedding(5, 3, padding_idx=5),
        lambda: L.nn.Embedding(5, 3, padding_idx=-6),
        lambda: L.nn.Embedding(5, 3)(L.tensor([5])),
        lambda: L.nn.Embedding(5, 3)(L.tensor([0.5])),
        lambda: L.nn.Embedding.from_pretrained(L.rand(5)),
        lambda: L.nn.Embedding(5, 3, _weight=L.rand(4, 3)),
        lambda: L.nn.functional.embedding(L.tensor([1]), L.rand(3, 2), padding_idx=3),
        lambda: L.nn.EmbeddingBag(5, 3, mode="median")(L.tensor([[1, 2]])),
        # torch's message prints the class as <class 'torch.Tensor'>
        TypeOnly(lambda: L.nn.EmbeddingBag(5, 3)(L.tensor([[1, 2]]), L.tensor([0]))),
        lambda: L.nn.EmbeddingBag(5, 3)(L.tensor([1, 2])),
        lambda: L.nn.EmbeddingBag(5, 3, mode="max")(L.tensor([1, 2]), L.tensor([0]),
                                                    per_sample_weights=L.rand(2)),
    ])


# ---- nn.utils -----------------------------------------------------------------------------------

def _params(L, n=3):
    L.manual_seed(0)
    ps = [L.nn.Parameter(_rand(L, 3, 4, seed=i)) for i in range(n)]
    for i, p in enumerate(ps):
        p.grad = _rand(L, 3, 4, seed=20 + i) * (i + 1)
    return ps


def _clip_grad_norm(L):
    out = []
    for norm_type in [2.0, 1, "inf", 0.5, 0]:
        ps = _params(L)
        total = L.nn.utils.clip_grad_norm_(ps, max_norm=1.5, norm_type=float(norm_type))
        out.append((total, [p.grad for p in ps]))
    ps = _params(L)
    total = L.nn.utils.clip_grad_norm_(ps[0], 100.0)
    out.append((total, ps[0].grad))
    ps = _params(L)
    ps[1].grad = None
    out.append((L.nn.utils.clip_grad_norm_(ps, 1.0, foreach=False), [p.grad for p in ps]))
    out.append(L.nn.utils.clip_grad_norm_([], 1.0))
    out.append(L.nn.utils.get_total_norm([p.grad for p in _params(L)], norm_type=3.0))
    ps = _params(L)
    L.nn.utils.clip_grads_with_norm_(ps, 1.0, L.tensor(10.0))
    out.append([p.grad for p in ps])
    return out


def _clip_grad_norm_nonfinite(L):
    ps = _params(L)
    ps[0].grad[0, 0] = float("nan")
    total = L.nn.utils.clip_grad_norm_(ps, 1.0)
    ps2 = _params(L)
    ps2[1].grad[0, 0] = float("inf")
    return total, L.nn.utils.clip_grad_norm_(ps2, 1.0, error_if_nonfinite=True)


def _clip_grad_value(L):
    ps = _params(L)
    L.nn.utils.clip_grad_value_(ps, 0.7)
    ps2 = _params(L)
    ps2[2].grad = None
    L.nn.utils.clip_grad_value_(ps2, clip_value=0.2, foreach=False)
    ps3 = _params(L)
    L.nn.utils.clip_grad_value_(ps3[0], -0.5)
    return [p.grad for p in ps + ps2 + ps3]


def _params_to_vector(L):
    m = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.Conv1d(2, 1, 2))
    L.manual_seed(0)
    v = L.nn.utils.parameters_to_vector(m.parameters())
    L.nn.utils.vector_to_parameters(L.arange(v.numel()).float(), m.parameters())
    return v.shape, [p for p in m.parameters()], _errs(L, [
        lambda: L.nn.utils.vector_to_parameters(L.arange(3.), m.parameters()),
        lambda: L.nn.utils.vector_to_parameters([1.0], m.parameters()),
        lambda: L.nn.utils.parameters_to_vector([L.ones(2), L.ones(2, dtype=L.float64)]),
    ])


# ---- Module.apply / to / half / share_memory -----------------------------------------------------

def _module_conversions(L):
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    w = m[0].weight
    m.half()
    half = (m[0].weight.dtype, m[1].running_mean.dtype, m[1].num_batches_tracked.dtype, m[0].weight is w)
    m.double()
    dbl = m[0].weight.dtype
    m.to(L.float32)
    m.to(dtype=L.bfloat16)
    bf = (m[0].weight.dtype, m[1].num_batches_tracked.dtype)
    m.float()
    m.to("cpu", L.float64, non_blocking=True)
    m.type(L.float32)
    sm = m.share_memory()
    return seen, half, dbl, bf, m[0].weight.dtype, sm is m, m[0].weight.is_shared(), m[1].running_var.is_shared(), \
        _errs(L, [lambda: m.to(L.int32), lambda: m.to("cpu", L.long), TypeOnly(lambda: m.to(1, 2, 3, 4))])


def _module_to_complex(L):
    m = L.nn.Linear(2, 2)
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.to(L.complex64)
    return m.weight.dtype, m.weight.requires_grad, len(w) >= 1


# ---- nn.init ------------------------------------------------------------------------------------

def _init_fans(L):
    init = L.nn.init
    out = []
    for shape in [(5, 3), (6, 4, 3), (6, 4, 3, 2), (2, 3, 4, 5, 6)]:
        w = L.empty(*shape)
        out.append(init._calculate_fan_in_and_fan_out(w))
        for mode in ["fan_in", "fan_out"]:
            out.append(init._calculate_correct_fan(w, mode))
    for nl, p in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None)]:
        out.append(init.calculate_gain(nl, p))
    out.extend(_errs(L, [
        lambda: init._calculate_fan_in_and_fan_out(L.empty(3)),
        lambda: init._calculate_correct_fan(L.empty(3, 3), "fan_avg"),
        lambda: init.calculate_gain("softplus"),
        lambda: init.calculate_gain("leaky_relu", "x"),
        lambda: init.calculate_gain("leaky_relu", True),
        lambda: init.xavier_uniform_(L.empty(3)),
        lambda: init.kaiming_normal_(L.empty(0, 3)),
        lambda: init.orthogonal_(L.empty(3)),
        lambda: init.sparse_(L.empty(3, 3, 3), 0.1),
        lambda: init.eye_(L.empty(3, 3, 3)),
        lambda: init.dirac_(L.empty(3, 3)),
        lambda: init.dirac_(L.empty(3, 2, 3), groups=2),
    ]))
    return out


def _init_deterministic(L):
    init = L.nn.init
    out = []
    for fn in [lambda w: init.eye_(w), lambda w: init.constant_(w, 0.3), lambda w: init.ones_(w),
               lambda w: init.zeros_(w)]:
        out.append(fn(L.empty(3, 5)))
    w = L.empty(4, 2, 3)
    out.append(init.dirac_(w))
    out.append(init.dirac_(L.empty(4, 2, 3, 3), groups=2))
    return out


def _init_statistics(L):
    """Random inits have the bounds/std the fan computation implies (test_nn's TestNNInit)."""
    init = L.nn.init
    L.manual_seed(0)
    w = L.empty(200, 300)
    out = []
    for fn, kw in [(init.xavier_uniform_, dict(gain=2.0)), (init.kaiming_uniform_, dict(a=0.1, mode="fan_out")),
                   (init.uniform_, dict(a=-0.3, b=0.7))]:
        fn(w, **kw)
        out.append(round(float(w.abs().max()), 2))
    for fn, kw in [(init.xavier_normal_, {}), (init.kaiming_normal_, dict(nonlinearity="linear")),
                   (init.normal_, dict(std=0.2)), (init.trunc_normal_, dict(std=1.0, a=-0.5, b=0.5))]:
        fn(w, **kw)
        out.append(round(float(w.std()), 2))
    init.orthogonal_(w[:100, :150], gain=1.0)
    q = w[:100, :150]
    out.append(bool(L.allclose(q @ q.t(), L.eye(100), atol=1e-4)))
    init.sparse_(w, sparsity=0.3)
    out.append((w == 0).sum(0).tolist()[:5])
    return out


CHECKS = {f"loss_{k}": v for k, v in LOSSES.items()}
CHECKS.update({f"pad_{k}": v for k, v in PADS.items()})
CHECKS.update({f"interp_{k}": v for k, v in INTERP.items()})
CHECKS.update({f"rnn_{k}": v for k, v in RNNS.items()})
CHECKS.update({f"conv_{k}": v for k, v in CONVS.items()})
CHECKS.update({
    "loss_bad_shapes": _loss_bad_shapes,
    "loss_mse_broadcast_warns": _mse_broadcast_warns,
    "loss_modules": _loss_modules,
    "pad_errors": _pad_errors,
    "pad_modules": _pad_modules,
    "interp_errors": _interp_errors,
    "interp_upsample_deprecation": _interp_align_warning,
    "rnn_arg_errors": _rnn_arg_errors,
    "rnn_dropout_warning": _rnn_dropout_warning,
    "rnn_cells": _rnn_cells,
    "rnn_repr_and_state": _rnn_repr_and_state,
    "conv_arg_errors": _conv_arg_errors,
    "embedding_max_norm": _embedding_max_norm,
    "embedding_options": _embedding_options,
    "embedding_errors": _embedding_errors,
    "utils_clip_grad_norm": _clip_grad_norm,
    "utils_clip_grad_norm_nonfinite": (_clip_grad_norm_nonfinite, "The total norm of order 2.0 for gradients"),
    "utils_clip_grad_value": _clip_grad_value,
    "utils_parameters_to_vector": _params_to_vector,
    "module_conversions": _module_conversions,
    "module_to_complex": _module_to_complex,
    "init_fans": _init_fans,
    "init_deterministic": _init_deterministic,
    "init_statistics": _init_statistics,
})


@pytest.mark.parametrize("name", list(CHECKS))
def test_nn_functional(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)
