"""The op test table's rows for the nn ops with a backward kernel of their own: binary
cross-entropy (with logits), the fused softmax cross-entropy, CTC, the recurrent layer and the
training convolution that keeps its columns (_aten/loss.py, ctc.py, rnn.py, conv.py).

Same conventions as op_db.py, which appends these rows to its OPS. Where PyTorch has the op
(`binary_cross_entropy`, `_ctc_loss`, ...) both libraries call `ops.aten.<name>`; where the op
is ember's own, torch computes the same thing the way PyTorch does (cross_entropy, a step-by-
step recurrence, a convolution, autograd.grad for a backward) and the two are compared.
"""
import numpy as np

from op_db import ErrorInput, OpInfo, Sample, T, f32, make

F_ONLY = ("float16", "bfloat16", "float32", "float64")
F32_64 = ("float32", "float64")
HALF_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


def _is_torch(m):
    return m.__name__ == "torch"


def _unit(rng, shape, dtype, low=0.0, high=1.0, **kw):
    """Values in [low, high] (floats); small integers for other dtypes, which must raise."""
    if dtype in F_ONLY:
        return make(rng, shape, dtype, low=low, high=high, **kw)
    return make(rng, shape, dtype, low=0, high=1, **kw)


def _idx(values):
    return T(np.asarray(values, dtype=np.int64), "int64")


# ---- binary cross-entropy -----------------------------------------------------------------
def bce_samples(dtype, rng, backward=False):
    """(x, y, weight, reduction) with x in (0, 1); for the backward a grad_output first."""
    out = []
    for r in (0, 1, 2):
        for shape, weighted, layout in (((5,), False, "contiguous"), ((3, 4), True, "contiguous"),
                                        ((), False, "contiguous"), ((0, 3), False, "contiguous"),
                                        ((3, 4), False, "transposed")):
            x = _unit(rng, shape, dtype, 0.05, 0.95, layout=layout)
            y = _unit(rng, shape, dtype)
            w = _unit(rng, shape, dtype, 0.5, 2.0, grad=False) if weighted else None
            args = (x, y, w, r)
            if backward:
                args = (make(rng, shape if r == 0 else (), dtype),) + args
            out.append(Sample(*args))
    return out


def bce_logits_samples(dtype, rng, backward=False):
    """(x, y, weight, pos_weight, reduction); pos_weight broadcast over the last dim."""
    out = []
    for r in (0, 1, 2):
        for shape, w, pw in (((5,), False, False), ((3, 4), True, True), ((3, 4), False, True),
                             ((), False, False), ((0, 4), False, False)):
            x = make(rng, shape, dtype)
            y = _unit(rng, shape, dtype)
            weight = _unit(rng, shape, dtype, 0.5, 2.0, grad=False) if w else None
            pos_weight = _unit(rng, shape[-1:], dtype, 0.5, 3.0, grad=False) if pw else None
            args = (x, y, weight, pos_weight, r)
            if backward:
                args = (make(rng, shape if r == 0 else (), dtype),) + args
            out.append(Sample(*args))
    return out


def bce_logits_backward(m, grad, x, y, weight, pos_weight, reduction):
    if _is_torch(m):  # PyTorch composes this backward of ops: its autograd.grad
        with m.enable_grad():
            x = x if x.requires_grad else x.detach().requires_grad_()
            loss = m.ops.aten.binary_cross_entropy_with_logits(x, y, weight, pos_weight,
                                                               reduction)
            return m.autograd.grad(loss, x, grad, create_graph=True)[0]
    return m.ops.aten._binary_cross_entropy_with_logits_backward(grad, x, y, weight, pos_weight,
                                                                 reduction)


def _bce_errors():
    return [ErrorInput(T(np.array([0.5, 1.5], np.float32), "float32"),
                       T(np.array([0.2, 0.3], np.float32), "float32"), None, 1,
                       match="input should be between 0 and 1"),
            ErrorInput(T(np.array([0.5, 0.5], np.float32), "float32"),
                       T(np.array([0.2, -0.3], np.float32), "float32"), None, 1,
                       match="target should be between 0 and 1")]


# ---- fused softmax cross-entropy ----------------------------------------------------------
def softmax_ce_samples(dtype, rng, backward=False):
    """(x (N, C), t (N,), weight, reduction, ignore_index)."""
    out = []
    for r in (0, 1, 2):
        t = _idx(rng.integers(0, 5, 4))
        cases = [(make(rng, (4, 5), dtype), t, None, -100),
                 (make(rng, (4, 5), dtype), _idx([1, 2, 1, 0]), None, 1),
                 (make(rng, (4, 5), dtype), t, _unit(rng, (5,), dtype, 0.5, 2.0, grad=False),
                  3),
                 (make(rng, (3, 3), dtype), _idx([2, 2, 2]), None, 2),   # all ignored
                 (make(rng, (5, 4), dtype, "transposed"), _idx(rng.integers(0, 4, 5)), None,
                  -100),
                 (make(rng, (0, 4), dtype), _idx(np.zeros(0)), None, -100)]
        if backward:  # PyTorch's derivative of its backward is nan where the weights sum to 0
            del cases[5], cases[3]
        smoothed = [case + (0.2,) for case in cases[:3]]   # label_smoothing
        for x, target, w, ignore, *smoothing in cases + smoothed:
            args = (x, target, w, r, ignore)
            if backward:
                args = (make(rng, (x.data.shape[0],) if r == 0 else (), dtype),) + args
            out.append(Sample(*args, *smoothing))
    return out


def softmax_ce(m, x, target, weight, reduction, ignore_index, label_smoothing=0.0):
    if _is_torch(m):
        reduction_name = ("none", "mean", "sum")[reduction]
        loss = m.nn.functional.cross_entropy(x, target, weight, ignore_index=ignore_index,
                                             reduction=reduction_name,
                                             label_smoothing=label_smoothing)
        return loss, x.detach().softmax(1)
    return tuple(m.ops.aten._softmax_cross_entropy(x, target, weight, reduction, ignore_index,
                                                   label_smoothing))


def softmax_ce_backward(m, grad, x, target, weight, reduction, ignore_index,
                        label_smoothing=0.0):
    if _is_torch(m):
        with m.enable_grad():
            x = x if x.requires_grad else x.detach().requires_grad_()
            loss = softmax_ce(m, x, target, weight, reduction, ignore_index, label_smoothing)[0]
            return m.autograd.grad(loss, x, grad, create_graph=True)[0]
    # (the saved softmax only exists for (N, C) logits; the op refuses any other shape)
    softmax = x.detach().softmax(1) if x.dim() == 2 else x.detach()
    return m.ops.aten._softmax_cross_entropy_backward(grad, x, target, weight, reduction,
                                                      ignore_index, softmax, label_smoothing)


# ---- CTC ----------------------------------------------------------------------------------
def ctc_samples(dtype, rng):
    """(logits (T, N, C), targets, input_lengths, target_lengths, blank, zero_infinity); the op
    sees the logits through log_softmax, as CTC's gradient assumes."""
    def logits(t, n, c):
        return make(rng, (t, n, c), dtype)
    padded = _idx([[1, 1, 2], [3, 2, 0]])
    return [Sample(logits(6, 2, 4), padded, [6, 5], [3, 2], 0, False),
            Sample(logits(6, 2, 4), _idx([1, 2, 1, 3, 1]), [6, 4], [3, 2], 0, False),
            Sample(logits(5, 3, 5), _idx([[0, 1], [2, 0], [3, 3]]), [5, 5, 4], [2, 1, 2], 4,
                   False),
            Sample(logits(3, 2, 4), _idx([[2, 2, 2], [1, 0, 0]]), [3, 3], [3, 1], 0, True),
            Sample(logits(4, 2, 3), _idx([[1, 2], [2, 1]]), [0, 4], [0, 2], 0, False)]


def ctc_loss(m, x, targets, input_lengths, target_lengths, blank, zero_infinity):
    return m.ops.aten._ctc_loss(x.log_softmax(2), targets, input_lengths, target_lengths, blank,
                                zero_infinity)[0]


def ctc_loss_backward(m, grad, x, targets, input_lengths, target_lengths, blank,
                      zero_infinity):
    """Each library's backward kernel from its own forward's outputs."""
    lp = x.log_softmax(2)
    nll, log_alpha = m.ops.aten._ctc_loss(lp, targets, input_lengths, target_lengths, blank,
                                          zero_infinity)
    return m.ops.aten._ctc_loss_backward(grad, lp, targets, input_lengths, target_lengths, nll,
                                         log_alpha, blank, zero_infinity)


def ctc_backward_samples(dtype, rng):
    return [Sample(make(rng, (s.args[0].data.shape[1],), dtype), *s.args)
            for s in ctc_samples(dtype, rng)[:3]]


def _ctc_errors():
    lp, t = f32(6, 2, 4), _idx([[1, 2], [1, 2]])
    return [ErrorInput(lp, t, [6, 6], [2, 2], 4, False, match="blank must be in label range"),
            ErrorInput(lp, t, [6], [2, 2], 0, False, match="input_lengths must be of size"),
            ErrorInput(lp, t, [7, 6], [2, 2], 0, False, match="at most 6"),
            ErrorInput(lp, t, [6, 6], [3, 2], 0, False, match="at least 3")]


# ---- the recurrent layer ------------------------------------------------------------------
def rnn_layer_reference(m, x, w_ih, w_hh, b_ih, b_hh, w_hr, hx, cx, mode, batch_sizes,
                        reverse):
    """One layer written step by step with the library's ops: the oracle for _rnn_layer."""
    rows = x.reshape(sum(batch_sizes), x.shape[-1])   # (no -1: a layer may have 0 features)
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
    h, c, outs = hx, cx, [None] * len(batch_sizes)
    steps = range(len(batch_sizes))
    for t in (reversed(steps) if reverse else steps):
        n = batch_sizes[t]
        hp = h[:n]
        gi = rows[offsets[t]:offsets[t] + n] @ w_ih.T
        gh = hp @ w_hh.T
        if b_ih is not None:
            gi, gh = gi + b_ih, gh + b_hh
        if mode == "LSTM":
            i, f, g, o = (gi + gh).chunk(4, 1)
            c_new = f.sigmoid() * c[:n] + i.sigmoid() * g.tanh()
            h_new = o.sigmoid() * c_new.tanh()
            if w_hr is not None:
                h_new = h_new @ w_hr.T
            c = m.cat([c_new, c[n:]])
        elif mode == "GRU":
            (ri, zi, ni), (rh, zh, nh) = gi.chunk(3, 1), gh.chunk(3, 1)
            r, z = (ri + rh).sigmoid(), (zi + zh).sigmoid()
            new = (ni + r * nh).tanh()
            h_new = (1 - z) * new + z * hp
        else:
            h_new = (gi + gh).tanh() if mode == "RNN_TANH" else (gi + gh).relu()
        h = m.cat([h_new, h[n:]])
        outs[t] = h_new
    out = m.cat(outs).reshape(tuple(x.shape[:-1]) + (h.shape[-1],))
    return (out, h, c) if mode == "LSTM" else (out, h)


def rnn_layer(m, x, w_ih, w_hh, b_ih, b_hh, w_hr, hx, cx, *, mode, batch_sizes, reverse):
    if _is_torch(m):
        return rnn_layer_reference(m, x, w_ih, w_hh, b_ih, b_hh, w_hr, hx, cx, mode,
                                   batch_sizes, reverse)
    out = m.ops.aten._rnn_layer(x, w_ih, w_hh, b_ih, b_hh, w_hr, hx, cx, mode, batch_sizes,
                                reverse)
    return tuple(out[:3]) if mode == "LSTM" else tuple(out[:2])


def rnn_layer_samples(dtype, rng):
    """Each mode, padded (T, B, in) and packed (rows, in) input, both directions, no bias, an
    LSTM projection."""
    out = []
    gates = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
    for mode, k in gates.items():
        for packed, reverse, bias, proj in ((False, False, True, False),
                                            (True, True, True, mode == "LSTM"),
                                            (True, False, False, False)):
            hidden, inp = 3, 2
            h_out = 2 if proj else hidden
            batch_sizes = [3, 2, 2, 1] if packed else [2, 2, 2]
            x_shape = (sum(batch_sizes), inp) if packed else (3, 2, inp)
            batch = batch_sizes[0]
            args = [make(rng, x_shape, dtype, low=-1, high=1),
                    make(rng, (k * hidden, inp), dtype, low=-1, high=1),
                    make(rng, (k * hidden, h_out), dtype, low=-1, high=1),
                    make(rng, (k * hidden,), dtype, low=-1, high=1) if bias else None,
                    make(rng, (k * hidden,), dtype, low=-1, high=1) if bias else None,
                    make(rng, (h_out, hidden), dtype, low=-1, high=1) if proj else None,
                    make(rng, (batch, h_out), dtype, low=-1, high=1),
                    make(rng, (batch, hidden), dtype, low=-1, high=1) if mode == "LSTM"
                    else None]
            out.append(Sample(*args, mode=mode, batch_sizes=batch_sizes, reverse=reverse))
    return out


# ---- the training convolution -------------------------------------------------------------
def conv_with_columns(m, x, w, b, stride, padding, dilation, groups):
    if _is_torch(m):
        return m.convolution(x, w, b, stride, padding, dilation, False, [0] * len(stride),
                             groups)
    return m.ops.aten._convolution_with_columns(x, w, b, stride, padding, dilation, groups)[0]


def conv_with_columns_samples(dtype, rng):
    def t(*shape):
        return make(rng, shape, dtype)
    return [Sample(t(1, 1, 3, 3), t(1, 1, 2, 2), None, [1, 1], [0, 0], [1, 1], 1),
            Sample(t(1, 2, 3), t(2, 2, 2), t(2), [1], [1], [1], 1),
            Sample(t(2, 3, 5, 5), t(4, 3, 3, 3), t(4), [1, 1], [1, 1], [1, 1], 1),
            Sample(t(1, 4, 5, 5), t(6, 2, 3, 3), None, [2, 1], [0, 1], [2, 1], 2),
            Sample(t(1, 2, 3, 3, 3), t(2, 2, 2, 2, 2), t(2), [1, 1, 1], [0, 1, 0], [1, 1, 1], 1),
            Sample(make(rng, (2, 3, 5, 5), dtype, "transposed"), t(2, 3, 3, 3), None, [1, 1],
                   [0, 0], [1, 1], 1),
            Sample(t(0, 3, 5, 5), t(2, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], 1)]


def amp_unscale(m, a, b, found, inv_scale):
    grads, found = [a.detach().clone(), b.detach().clone()], found.detach().clone()
    m.ops.aten._amp_foreach_non_finite_check_and_unscale_(grads, found, inv_scale)
    return grads[0], grads[1], found


def amp_unscale_samples(dtype, rng):
    def scalar(v):
        return T(np.array(v, dtype=np.float64), "float32", grad=False)
    finite = make(rng, (2,), dtype, grad=False)
    return [Sample(make(rng, (3, 4), dtype, grad=False), finite, scalar(0.0), scalar(0.25)),
            Sample(make(rng, (5,), dtype, grad=False),
                   T(np.array([1.0, np.inf, -2.0]), dtype, grad=False), scalar(0.0), scalar(0.5)),
            Sample(make(rng, (2, 2), dtype, grad=False),
                   T(np.array([np.nan, 3.0]), dtype, grad=False), scalar(1.0), scalar(1.0))]


def amp_update(m, scale, tracker, found, growth, backoff, interval):
    scale, tracker = scale.clone(), tracker.clone()
    m.ops.aten._amp_update_scale_(scale, tracker, found, growth, backoff, interval)
    return scale, tracker


def amp_update_samples(dtype, rng):
    def t(v, dt="float32"):
        return T(np.array(v), dt, grad=False)
    return [Sample(t(8.0), t(1, "int32"), t(0.0), 2.0, 0.5, 2),    # grows after 2 clean steps
            Sample(t(8.0), t(0, "int32"), t(0.0), 2.0, 0.5, 3),    # counts a clean step
            Sample(t(8.0), t(2, "int32"), t(1.0), 4.0, 0.25, 3),   # backs off after inf/NaN
            Sample(t(3e38), t(0, "int32"), t(0.0), 2.0, 0.5, 1)]   # a growth to inf is refused


def _loss_row(name, samples, **kw):
    """A row for F.<name>: the op of the same name (a composite, as in PyTorch) is reached."""
    return OpInfo(f"F.{name}", lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k),
                  F32_64, samples, other_dtypes_raise=False, **kw)


def _two(extra=(dict(),), low=None, high=None, target=None):
    def samples(dtype, rng):
        def t(*shape):
            return make(rng, shape, dtype, low=low, high=high)
        tgt = target or (lambda rng, dtype: make(rng, (3, 4), dtype, grad=False))
        return [Sample(t(3, 4), tgt(rng, dtype), **k) for k in extra]
    return samples


def _signs(shape):
    return lambda rng, dtype: T(np.sign(rng.normal(size=shape)) + (rng.normal(size=shape) == 0),
                                dtype, grad=False)


def _pairs_with_sign(dtype, rng):
    t = T(np.array([1.0, -1.0, 1.0, -1.0, 1.0]), dtype, grad=False)
    return [Sample(make(rng, (5,), dtype), make(rng, (5,), dtype), t, margin=0.1),
            Sample(make(rng, (5,), dtype), make(rng, (5,), dtype), t, reduction="sum")]


def _cosine_samples(dtype, rng):
    t = T(np.array([1, -1, 1]), "int64")
    return [Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype), t, margin=0.2),
            Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype), t, reduction="none")]


def _triplet_samples(dtype, rng):
    def t():
        return make(rng, (3, 4), dtype)
    return [Sample(t(), t(), t()), Sample(t(), t(), t(), swap=True, reduction="sum")]


def _multi_margin_samples(dtype, rng):
    t = T(np.array([0, 3, 1]), "int64")
    return [Sample(make(rng, (3, 4), dtype), t), Sample(make(rng, (3, 4), dtype), t, p=2,
                                                         margin=0.5)]


def _multilabel_samples(dtype, rng):
    t = T(np.array([[3, 0, -1, 1], [1, 2, -1, 0]]), "int64")
    return [Sample(make(rng, (2, 4), dtype), t), Sample(make(rng, (2, 4), dtype), t,
                                                         reduction="none")]


def _kl_samples(dtype, rng):
    logp = make(rng, (3, 4), dtype, low=-3, high=-0.5)
    return [Sample(logp, make(rng, (3, 4), dtype, low=0.1, high=1, grad=False),
                   reduction="batchmean"),
            Sample(make(rng, (3, 4), dtype, low=-3, high=-0.5),
                   make(rng, (3, 4), dtype, low=-3, high=-0.5, grad=False), log_target=True,
                   reduction="sum")]


def _pool3d_samples(dtype, rng):
    return [Sample(make(rng, (1, 2, 2, 2), dtype), 2),
            Sample(make(rng, (1, 1, 3, 3, 2), dtype), 2, stride=1, padding=1),
            Sample(make(rng, (2, 5, 5, 5), dtype), 3, stride=2, padding=1)]


COMPOSITE_LOSS_OPS = [
    _loss_row("l1_loss", _two((dict(), dict(reduction="sum")))),
    _loss_row("smooth_l1_loss", _two((dict(beta=0.5), dict(beta=0.0)))),
    _loss_row("huber_loss", _two((dict(delta=0.7), dict(reduction="none")))),
    _loss_row("soft_margin_loss", _two((dict(), dict(reduction="none")), target=_signs((3, 4)))),
    _loss_row("kl_div", _kl_samples),
    _loss_row("poisson_nll_loss", _two((dict(), dict(log_input=False, full=True)), low=0.5,
                                       high=2.0, target=lambda rng, dtype: T(
                                           rng.integers(0, 4, (3, 4)).astype(float), dtype,
                                           grad=False))),
    _loss_row("margin_ranking_loss", _pairs_with_sign),
    _loss_row("hinge_embedding_loss", _two((dict(margin=0.5),), target=_signs((3, 4)))),
    _loss_row("cosine_embedding_loss", _cosine_samples),
    _loss_row("triplet_margin_loss", _triplet_samples),
    _loss_row("multi_margin_loss", _multi_margin_samples),
    _loss_row("multilabel_margin_loss", _multilabel_samples),
    OpInfo("F.max_pool3d_values", lambda m, *a, **k: m.nn.functional.max_pool3d(*a, **k),
           F32_64, _pool3d_samples, other_dtypes_raise=False),
]


AMP_OPS = [
    OpInfo("aten._amp_foreach_non_finite_check_and_unscale_", amp_unscale, F_ONLY,
           amp_unscale_samples, grad=False, other_dtypes_raise=False),
    OpInfo("aten._amp_update_scale_", amp_update, ("float32",), amp_update_samples, grad=False,
           other_dtypes_raise=False),
]


FUSED_NN_OPS = [
    OpInfo("aten.binary_cross_entropy",
           lambda m, *a: m.ops.aten.binary_cross_entropy(*a), F_ONLY, bce_samples,
           errors=_bce_errors, tol=HALF_TOL),
    OpInfo("aten.binary_cross_entropy_backward",
           lambda m, *a: m.ops.aten.binary_cross_entropy_backward(*a), F_ONLY,
           lambda dtype, rng: bce_samples(dtype, rng, backward=True),
           tol={"float16": (3e-2, 3e-2), "bfloat16": (5e-2, 5e-2)}),
    OpInfo("aten.binary_cross_entropy_with_logits",
           lambda m, *a: m.ops.aten.binary_cross_entropy_with_logits(*a), F_ONLY,
           bce_logits_samples, tol=HALF_TOL,
           errors=lambda: [ErrorInput(f32(3, 4), f32(3), None, None, 1, match="size")]),
    OpInfo("aten._binary_cross_entropy_with_logits_backward", bce_logits_backward, F32_64,
           lambda dtype, rng: bce_logits_samples(dtype, rng, backward=True),
           other_dtypes_raise=False),
    OpInfo("aten._softmax_cross_entropy", softmax_ce, F32_64, softmax_ce_samples,
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(3, 5), _idx([0, 1, 7]), None, 1, -100, match="7"),
                           ErrorInput(f32(3, 5), _idx([0, 1]), None, 1, -100,
                                      match=r"3.*2")]),
    OpInfo("aten._softmax_cross_entropy_backward", softmax_ce_backward, F32_64,
           lambda dtype, rng: softmax_ce_samples(dtype, rng, backward=True),
           other_dtypes_raise=False),
    # gradcheck=False: PyTorch has no derivative of _ctc_loss_backward (the first order is
    # gradchecked in test_nn_fused_ops.py)
    OpInfo("aten._ctc_loss", ctc_loss, F32_64, ctc_samples, errors=_ctc_errors,
           gradcheck=False),
    OpInfo("aten._ctc_loss_backward", ctc_loss_backward, F32_64, ctc_backward_samples,
           gradcheck=False),
    # F.ctc_loss: the ctc_loss op (a composite over _ctc_loss) with each reduction, lengths as
    # lists and as tensors
    OpInfo("F.ctc_loss", lambda m, x, targets, il, tl, blank, zero_infinity, reduction, as_tensors:
           m.nn.functional.ctc_loss(x.log_softmax(2), targets,
                                    *([m.tensor(il), m.tensor(tl)] if as_tensors else [il, tl]),
                                    blank, reduction, zero_infinity),
           F32_64, lambda dtype, rng: [Sample(*s.args, reduction, as_tensors)
                                       for s, reduction, as_tensors in zip(
                                           ctc_samples(dtype, rng)[:4],
                                           ("mean", "sum", "none", "mean"),
                                           (False, True, False, True))],
           gradcheck=False),
    # gradcheck=False: no double backward through the recurrent layer (test_nn_fused_ops.py)
    OpInfo("aten._rnn_layer", rnn_layer, F32_64, rnn_layer_samples, gradcheck=False,
           other_dtypes_raise=False),
    OpInfo("aten._convolution_with_columns", conv_with_columns, F32_64,
           conv_with_columns_samples, other_dtypes_raise=False),
]
