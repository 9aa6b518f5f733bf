"""The nn ops with a backward kernel of their own (_aten/loss.py, ctc.py, rnn.py, conv.py),
beyond their rows in op_db_nn_fused.py: Meta kernels against torch's meta device (or, for
ember's own ops, against their CPU kernels), first-order gradcheck where there is no second
order, and the saved outputs the backward kernels read."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _pair(shape, dtype="float32", low=0.1, high=0.9):
    data = RNG.uniform(low, high, shape).astype(dtype)
    return ember.from_numpy(data.copy()), torch.from_numpy(data.copy())


def _assert_meta_like(e, t):
    """ember's meta results have the shapes and dtypes of `t` (torch's or ember's own)."""
    e = e if isinstance(e, (tuple, list)) else [e]
    t = t if isinstance(t, (tuple, list)) else [t]
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert a.device.type == "meta"
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype), (a, b)


# ---- Meta kernels -------------------------------------------------------------------------
TORCH_META_CASES = {
    "binary_cross_entropy": lambda L, x, y: L.ops.aten.binary_cross_entropy(x, y, None, 0),
    "binary_cross_entropy_mean": lambda L, x, y: L.ops.aten.binary_cross_entropy(x, y),
    "binary_cross_entropy_backward": lambda L, x, y: L.ops.aten.binary_cross_entropy_backward(
        x, x, y, y, 0),
    "binary_cross_entropy_with_logits": lambda L, x, y:
        L.ops.aten.binary_cross_entropy_with_logits(x, y, None, y[0], 0),
    "binary_cross_entropy_with_logits_sum": lambda L, x, y:
        L.ops.aten.binary_cross_entropy_with_logits(x, y, y, None, 2),
}


@pytest.mark.parametrize("case", list(TORCH_META_CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_meta_matches_torch(case, dtype):
    e = [ember.empty(3, 4, dtype=getattr(ember, dtype), device="meta") for _ in range(2)]
    t = [torch.empty(3, 4, dtype=getattr(torch, dtype), device="meta") for _ in range(2)]
    _assert_meta_like(TORCH_META_CASES[case](ember, *e), TORCH_META_CASES[case](torch, *t))


@pytest.mark.parametrize("targets", [(2, 3), (5,)])
def test_ctc_meta_matches_torch(targets):
    """_ctc_loss's (N,) losses and (N, T, 2 * max target length + 1) log_alpha; its backward
    (which has no Meta kernel in PyTorch) gives the log_probs' shape."""
    outs = []
    lengths = [3, 2] if len(targets) == 1 else [3, 1]
    for L in (ember, torch):
        lp = L.empty(7, 2, 5, device="meta")
        tg = L.zeros(targets, dtype=L.int64, device="meta")
        outs.append(L.ops.aten._ctc_loss(lp, tg, [7, 6], lengths))
    _assert_meta_like(*outs)
    lp, tg = ember.empty(7, 2, 5, device="meta"), ember.zeros(targets, dtype=ember.int64,
                                                              device="meta")
    grad = ember.ops.aten._ctc_loss_backward(ember.empty(2, device="meta"), lp, tg, [7, 6],
                                             lengths, *outs[0], 0)
    _assert_meta_like(grad, lp)


def _to_meta(args):
    return [a.to("meta") if isinstance(a, ember.Tensor) else a for a in args]


def _own_op_cases():
    """ember's own ops: (name, arguments) whose Meta results must match their CPU results."""
    x, t = ember.randn(4, 5), ember.tensor([0, 3, 1, 4])
    w, g = ember.rand(5), ember.randn(4)
    y = ember.rand(4, 5)
    rnn = []
    for mode, k in (("LSTM", 4), ("GRU", 3), ("RNN_TANH", 1)):
        x_rnn, h0 = ember.randn(3, 2, 3), ember.randn(2, 4)
        c0 = ember.randn(2, 4) if mode == "LSTM" else None
        w_ih, w_hh, b = ember.randn(4 * k, 3), ember.randn(4 * k, 4), ember.randn(4 * k)
        fwd = (x_rnn, w_ih, w_hh, b, b, None, h0, c0, mode, [2, 2, 2], False)
        out, hy, cy, ws = ember.ops.aten._rnn_layer(*fwd)
        bwd = (x_rnn, w_ih, w_hh, None, out, ws, out, hy, cy if mode == "LSTM" else None, mode,
               [2, 2, 2], False, [True] * 8)
        rnn += [("_rnn_layer", fwd), ("_rnn_layer_backward", bwd)]
    return [("_softmax_cross_entropy", (x, t, w, 0, -100)),
            ("_softmax_cross_entropy", (x, t, None, 1, 2)),
            ("_softmax_cross_entropy_backward", (g, x, t, w, 0, -100, x.softmax(1))),
            ("_binary_cross_entropy_with_logits_backward", (g.sum(), x, y, None, w, 1)),
            ("_convolution_with_columns", (ember.randn(2, 4, 6, 5), ember.randn(6, 2, 3, 3),
                                           ember.randn(6), [2, 1], [1, 0], [1, 2], 2)),
            ("_convolution_with_columns", (ember.randn(2, 3, 7), ember.randn(4, 3, 2), None,
                                           [1], [0], [1], 1))] + rnn


@pytest.mark.parametrize("case", range(len(_own_op_cases())))
def test_own_ops_meta_matches_cpu(case):
    name, args = _own_op_cases()[case]
    op = getattr(ember.ops.aten, name)
    _assert_meta_like(op(*_to_meta(args)), op(*args))


# ---- first-order gradcheck where PyTorch has no second order ------------------------------
def test_ctc_loss_gradcheck_and_no_double_backward():
    """_ctc_loss's gradient is with respect to the logits behind log_softmax (as PyTorch's), so
    gradcheck goes through log_softmax; _ctc_loss_backward has no derivative, in PyTorch
    neither: the second backward raises (NotImplementedError is a RuntimeError)."""
    x = ember.randn(6, 2, 4, dtype=ember.float64, requires_grad=True)
    targets = ember.tensor([[1, 2, 1], [3, 1, 0]])

    def loss(v):
        return ember.ops.aten._ctc_loss(v.log_softmax(2), targets, [6, 5], [3, 2])[0]
    assert ember.autograd.gradcheck(loss, (x,))
    for L, v, tg in ((ember, x, targets), (torch, torch.from_numpy(x.detach().numpy()),
                                          torch.from_numpy(targets.numpy()))):
        v = v.detach().requires_grad_()
        nll = L.ops.aten._ctc_loss(v.log_softmax(2), tg, [6, 5], [3, 2])[0]
        g, = L.autograd.grad(nll.sum(), v, create_graph=True)
        with pytest.raises(RuntimeError, match="_ctc_loss_backward.* not implemented"):
            g.sum().backward()


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_rnn_layer_gradcheck(mode):
    """Every input of one layer, packed and run in reverse; with a projection for LSTM."""
    k = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    h_out = 2 if mode == "LSTM" else 3

    def r(*shape):
        return ember.rand(*shape, dtype=ember.float64).sub(0.5).requires_grad_()
    inputs = [r(6, 2), r(3 * k, 2), r(3 * k, h_out), r(3 * k), r(3 * k),
              r(h_out, 3) if mode == "LSTM" else None, r(3, h_out),
              r(3, 3) if mode == "LSTM" else None]
    tensors = [t for t in inputs if t is not None]

    def layer(*ts):
        it = iter(ts)
        args = [None if t is None else next(it) for t in inputs]
        out = ember.ops.aten._rnn_layer(*args, mode, [3, 2, 1], True)
        return tuple(out[:3]) if mode == "LSTM" else tuple(out[:2])
    assert ember.autograd.gradcheck(layer, tensors)


# ---- saved outputs the backward kernels read ----------------------------------------------
def test_training_convolution_keeps_im2col_columns():
    """The columns _convolution_with_columns returns are F.unfold's, laid out (groups,
    C / groups * kh * kw, N * L); its node saves them (the weight gradient reads them) and the
    weight gradient equals the one built from the input again."""
    x, w = ember.randn(2, 4, 6, 5), ember.randn(6, 2, 3, 3, requires_grad=True)
    out, cols = ember.ops.aten._convolution_with_columns(x, w, None, [2, 1], [1, 0], [1, 2], 2)
    tx = torch.from_numpy(x.numpy())
    unfolded = torch.nn.functional.unfold(tx, (3, 3), dilation=(1, 2), padding=(1, 0),
                                          stride=(2, 1))                        # (N, C*K, L)
    expected = unfolded.transpose(0, 1).reshape(2, 2 * 9, -1)
    np.testing.assert_allclose(cols.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    assert out.grad_fn.name() == "ConvolutionBackward0" and not cols.requires_grad
    assert out.grad_fn._saved_result1.shape == cols.shape
    g = ember.randn(*out.shape)
    out.backward(g)
    again = ember.ops.aten._convolution_backward_weight(g, x, list(w.shape), [2, 1], [1, 0],
                                                         [1, 2], False, [0, 0], 2)
    np.testing.assert_allclose(w.grad.numpy(), again.numpy(), rtol=1e-5, atol=1e-5)


def test_conv_layers_keep_no_columns():
    """Training convolutions rebuild their columns in backward rather than hold them (Note
    [Keeping the forward's columns for the weight gradient] in _aten/conv.py)."""
    conv = ember.nn.Conv2d(3, 4, 3)
    x = ember.randn(1, 3, 5, 5)
    with ember.explain() as ex:
        conv(x)
        with ember.no_grad():
            conv(x)
        conv.requires_grad_(False)
        conv(x)
    # conv2d is a composite op (as in PyTorch): each call records it, then its convolution
    assert [r["op"] for r in ex.records] == ["conv2d", "convolution"] * 3


def test_ctc_log_alpha_is_the_log_forward_variable():
    """_ctc_loss's second output holds log(alpha) where defined (PyTorch leaves the rest
    unwritten; ember writes -inf there): compare the defined part with torch's."""
    lp = torch.randn(6, 2, 4, dtype=torch.float64).log_softmax(2)
    tg = torch.tensor([[1, 2, 1], [3, 1, 0]])
    _, t_alpha = torch.ops.aten._ctc_loss(lp, tg, [6, 4], [3, 2])
    _, e_alpha = ember.ops.aten._ctc_loss(ember.from_numpy(lp.numpy()),
                                          ember.from_numpy(tg.numpy()), [6, 4], [3, 2])
    e_alpha = e_alpha.numpy()
    for n, (steps, symbols) in enumerate(((6, 7), (4, 5))):
        np.testing.assert_allclose(e_alpha[n, :steps, :symbols], t_alpha[n, :steps, :symbols],
                                   rtol=1e-10, atol=1e-10)
        assert np.isneginf(e_alpha[n, steps:]).all() and np.isneginf(e_alpha[n, :, symbols:]).all()


def test_fused_cross_entropy_saves_its_softmax():
    x = ember.randn(3, 5, requires_grad=True)
    loss = ember.nn.functional.cross_entropy(x, ember.tensor([0, 4, 2]))
    node = loss.grad_fn
    assert node.name() == "NllLossBackward0"
    np.testing.assert_allclose(node._saved_result1.detach().numpy(),
                               x.detach().softmax(1).numpy(), rtol=1e-6)


@pytest.mark.parametrize("loss", [
    lambda F, x: F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid() * 0 + 0.3),
    lambda F, x: F.binary_cross_entropy_with_logits(x, x.detach() * 0 + 0.3),
    lambda F, x: F.binary_cross_entropy_with_logits(x, x.detach() * 0 + 0.3,
                                                    pos_weight=x.detach()[0].abs()),
    lambda F, x: F.cross_entropy(x, x.detach().argmax(1)),
    lambda F, x: F.ctc_loss(x.unsqueeze(1).log_softmax(2), x.detach().argmax(1)[None, :2].clamp(
        min=1), [3], [2]),
])
def test_gradients_accumulate(loss):
    """The gradient kernels give fresh, writable arrays: a second backward adds into .grad."""
    x = ember.randn(3, 4, requires_grad=True)
    for _ in range(2):
        loss(ember.nn.functional, x).backward()
    first = x.grad.clone()
    x.grad = None
    loss(ember.nn.functional, x).backward()
    np.testing.assert_allclose(first.numpy(), 2 * x.grad.numpy(), rtol=1e-6, atol=1e-7)
