"""Recurrent layers (CPU and Meta): `_rnn_layer`, one layer and one direction of an RNN, LSTM
or GRU over a whole (packed or padded) sequence, and its backward `_rnn_layer_backward`.

This is the counterpart of the fused per-layer op PyTorch's CPU build runs for nn.LSTM,
`mkldnn_rnn_layer` (its node, MkldnnRnnLayerBackward0, is the name ember's node has too).
ember uses it for all four modes ("RNN_TANH", "RNN_RELU", "LSTM", "GRU"; gate order as
PyTorch: LSTM (i, f, g, o), GRU (r, z, n)), with an optional LSTM projection `weight_hr`, and
for the cells (one step).

Why a fused op: a step of an LSTM is a dozen small tensor ops, and a training step of a 2-layer
LSTM over 35 steps would put ~1000 autograd nodes in the graph. The fused op does the time loop
in NumPy instead: the input projection x W_ih^T + b for all steps is one matmul, each step is one
h W_hh^T matmul plus the gate arithmetic, and backward runs backpropagation through time over
the gate values saved in forward, finishing with one matmul per weight gradient over all steps.

Layout. `input` is (N, input_size) rows of all steps (step t is rows offsets[t] : offsets[t] +
batch_sizes[t], the packed layout of nn/utils/rnn.py), or (T, B, input_size) with batch_sizes
[B] * T. The results are the output (rows like the input's, H_out features), the final hidden
state hy (B, H_out), the final cell state cy (B, H) for LSTM (an empty tensor otherwise), and
the workspace: one flat buffer of what the forward computed and the backward reads --

    acts    (N, gates * H)   gate values after their nonlinearity
    h_prev  (N, H_out)       the hidden state each step started from
    c_prev  (N, H)           LSTM: the cell state each step started from
    c_all   (N, H)           LSTM: the cell state each step ended with
    gh_n    (N, H)           GRU: h W_hn^T + b_hn, which the reset gate multiplies

State lives in (B, ...) arrays whose first batch_sizes[t] rows are the sequences running at
step t. Sequences are sorted longest first, so in forward order a finished sequence's row
simply stops being updated and ends as its h_n; in reverse order a row still holds h0 until
its sequence starts. Backward walks the steps the other way with the same row bookkeeping,
which makes dh_n flow into the right steps and dh0 come out in the same arrays.

The backward kernel is not differentiable: under create_graph the backward formula instead
differentiates `rnn_layer_by_steps` (below), the same steps in tensor ops (see
autograd/derivatives/nn.py).
"""
import math

import numpy as np

from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap, _meta
from .elementwise import not_implemented
from .linalg import _matmul  # the products over all steps, split over the intra-op threads

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _sigmoid(a):
    """The logistic function. exp is several times cheaper than tanh in NumPy's float32 loops;
    for a large negative `a` it overflows to inf and the result is exactly 0 (the overflow
    warning is off process-wide, see _parallel.py)."""
    return 1 / (1 + np.exp(-a))


def _array(t):
    return None if t is None else t._np


def _check(input, weight_ih, weight_hh, weight_hr, hx, cx, mode, batch_sizes):
    """(rows N, hidden size H, output features H_out), after PyTorch-style checks."""
    if mode not in GATES:
        raise ValueError(f"Unknown RNN mode: {mode}")
    if not input.dtype.is_floating_point:
        raise not_implemented("_rnn_layer", input.dtype)
    if input.dim() == 0:                     # the features, input.size(-1), are read first
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    for name, w in (("weight_ih", weight_ih), ("weight_hh", weight_hh), ("weight_hr", weight_hr)):
        if w is not None and w.dim() != 2:   # PyTorch's linear(x, w) of each step refuses it
            raise RuntimeError(f"_rnn_layer: {name} should be a matrix, but got a tensor of "
                               f"size {list(w.shape)}")
    hidden = weight_hh.shape[0] // GATES[mode]
    rows = math.prod(input.shape[:-1])
    if input.dim() not in (2, 3) or sum(batch_sizes) != rows:
        raise RuntimeError(f"_rnn_layer: input of size {list(input.shape)} does not hold the "
                           f"{sum(batch_sizes)} rows of batch_sizes")
    if (mode == "LSTM") != (cx is not None):
        raise RuntimeError(f"_rnn_layer: mode {mode} " + ("needs" if mode == "LSTM" else
                                                           "takes no") + " cell state cx")
    return rows, hidden, hx.shape[1]


def _workspace_blocks(mode, hidden, h_out):
    blocks = [("acts", GATES[mode] * hidden), ("h_prev", h_out)]
    if mode == "LSTM":
        blocks += [("c_prev", hidden), ("c_all", hidden)]
    elif mode == "GRU":
        blocks.append(("gh_n", hidden))
    return blocks


def _workspace_size(mode, rows, hidden, h_out):
    return rows * sum(width for _, width in _workspace_blocks(mode, hidden, h_out))


def _split_workspace(ws, mode, rows, hidden, h_out):
    """The workspace's blocks as (rows, width) arrays, each contiguous."""
    out, start = {}, 0
    for name, width in _workspace_blocks(mode, hidden, h_out):
        out[name] = ws[start:start + rows * width].reshape(rows, width)
        start += rows * width
    return out


def _steps(batch_sizes, reverse):
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).astype(np.int64)
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    return offsets, order


@impl("_rnn_layer", "CPU")
def rnn_layer(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, mode,
              batch_sizes, reverse):
    """(output, hy, cy, workspace) of one layer and direction; see the module docstring."""
    rows, hidden, h_out = _check(input, weight_ih, weight_hh, weight_hr, hx, cx, mode,
                                 batch_sizes)
    X = input._np.reshape(rows, input.shape[-1])
    W_ih, W_hh, W_hr = weight_ih._np, weight_hh._np, _array(weight_hr)
    gi = _matmul(X, W_ih.T)
    gh_bias = None
    if bias_ih is not None:
        gi += bias_ih._np
        if mode == "GRU":
            gh_bias = bias_hh._np
        else:
            gi += bias_hh._np
    # the step's product h @ W_hh^T with W_hh^T laid out once: OpenBLAS multiplies a few rows
    # by a transposed view 1.5x slower (LSTM 256: 228 -> 147 us a step, one thread)
    W_hh_T = np.ascontiguousarray(W_hh.T)
    W_hr_T = None if W_hr is None else np.ascontiguousarray(W_hr.T)
    offsets, steps = _steps(batch_sizes, reverse)
    ws_array = np.empty(_workspace_size(mode, rows, hidden, h_out), X.dtype)
    ws = _split_workspace(ws_array, mode, rows, hidden, h_out)
    acts, h_prev = ws["acts"], ws["h_prev"]
    h = hx._np.copy()
    out = np.empty((rows, h_out), dtype=X.dtype)
    if mode == "LSTM":
        c = cx._np.copy()
        c_prev, c_all = ws["c_prev"], ws["c_all"]
    for t in steps:
        n = int(batch_sizes[t])
        r = slice(offsets[t], offsets[t] + n)
        hp = h[:n]
        h_prev[r] = hp
        if mode == "GRU":
            gh = hp @ W_hh_T
            if gh_bias is not None:
                gh += gh_bias
            a = acts[r]
            a[:, :2 * hidden] = _sigmoid(gi[r, :2 * hidden] + gh[:, :2 * hidden])
            reset, z = a[:, :hidden], a[:, hidden:2 * hidden]
            ws["gh_n"][r] = gh[:, 2 * hidden:]
            a[:, 2 * hidden:] = np.tanh(gi[r, 2 * hidden:] + reset * gh[:, 2 * hidden:])
            new = a[:, 2 * hidden:]
            new = new + z * (hp - new)
        else:
            pre = gi[r] + hp @ W_hh_T
            if mode == "LSTM":
                a = acts[r]
                a[:] = _sigmoid(pre)
                a[:, 2 * hidden:3 * hidden] = np.tanh(pre[:, 2 * hidden:3 * hidden])
                i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
                c_prev[r] = c[:n]
                c[:n] = f * c[:n] + i * g
                c_all[r] = c[:n]
                new = o * np.tanh(c[:n])
                if W_hr_T is not None:
                    new = new @ W_hr_T
            elif mode == "RNN_TANH":
                new = np.tanh(pre)
            else:
                new = np.maximum(pre, 0)
        h[:n] = new
        out[r] = new
    cy = c if mode == "LSTM" else np.empty((0,), X.dtype)
    return (_wrap(out.reshape(tuple(input.shape[:-1]) + (h_out,))), _wrap(h), _wrap(cy),
            _wrap(ws_array))


@impl("_rnn_layer", "Meta")
def rnn_layer_meta(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, mode,
                   batch_sizes, reverse):
    rows, hidden, h_out = _check(input, weight_ih, weight_hh, weight_hr, hx, cx, mode,
                                 batch_sizes)
    dt, dev = input.dtype, input.device
    return (_meta(tuple(input.shape[:-1]) + (h_out,), dt, device=dev),
            _meta(hx.shape, dt, device=dev),
            _meta(cx.shape if cx is not None else (0,), dt, device=dev),
            _meta((_workspace_size(mode, rows, hidden, h_out),), dt, device=dev))


@impl("_rnn_layer_backward", "CPU")
def rnn_layer_backward(input, weight_ih, weight_hh, weight_hr, output, workspace, grad_output,
                       grad_hy, grad_cy, mode, batch_sizes, reverse, output_mask):
    """Backpropagation through time: (grad_input, grad_weight_ih, grad_weight_hh, grad_bias_ih,
    grad_bias_hh, grad_weight_hr, grad_hx, grad_cx). Gradients output_mask leaves out are
    zeros (empty for an absent projection or cell state)."""
    gates = weight_hh.shape[0]
    hidden = gates // GATES[mode]
    h_out = weight_hh.shape[1]
    rows = sum(batch_sizes)  # (not output.numel() // h_out: h_out may be 0)
    X = input._np.reshape(rows, input.shape[-1])
    W_ih, W_hh, W_hr = weight_ih._np, weight_hh._np, _array(weight_hr)
    ws = _split_workspace(workspace._np, mode, rows, hidden, h_out)
    acts, h_prev = ws["acts"], ws["h_prev"]
    out = output._np.reshape(rows, h_out)
    offsets, steps = _steps(batch_sizes, reverse)
    dOut = grad_output._np.reshape(rows, h_out)
    dh_state = grad_hy._np.copy()
    d_pre = np.empty_like(acts)  # gradient of the pre-activations, through x W_ih^T
    if mode == "GRU":
        d_gh = np.empty_like(acts)  # ... and through h W_hh^T (differs from d_pre for GRU)
    if mode == "LSTM":
        dc_state = grad_cy._np.copy()
        c_prev, c_all = ws["c_prev"], ws["c_all"]
        dW_hr = None if W_hr is None else np.zeros_like(W_hr)
    for t in reversed(steps):
        n = int(batch_sizes[t])
        r = slice(offsets[t], offsets[t] + n)
        dh = dh_state[:n] + dOut[r]
        a = acts[r]
        da = d_pre[r]
        if mode == "LSTM":
            i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
            tc = np.tanh(c_all[r])
            if W_hr is not None:
                dW_hr += dh.T @ (o * tc)
                dh = dh @ W_hr
            dc = dc_state[:n] + dh * o * (1 - tc * tc)
            da[:, :hidden] = dc * g * i * (1 - i)
            da[:, hidden:2 * hidden] = dc * c_prev[r] * f * (1 - f)
            da[:, 2 * hidden:3 * hidden] = dc * i * (1 - g * g)
            da[:, 3 * hidden:] = dh * tc * o * (1 - o)
            dc_state[:n] = dc * f
            dh_state[:n] = da @ W_hh
        elif mode == "GRU":
            reset, z, new = a[:, :hidden], a[:, hidden:2 * hidden], a[:, 2 * hidden:]
            d_new = dh * (1 - z) * (1 - new * new)
            da[:, :hidden] = d_new * ws["gh_n"][r] * reset * (1 - reset)
            da[:, hidden:2 * hidden] = dh * (h_prev[r] - new) * z * (1 - z)
            da[:, 2 * hidden:] = d_new
            dg = d_gh[r]
            dg[:, :2 * hidden] = da[:, :2 * hidden]
            dg[:, 2 * hidden:] = d_new * reset
            dh_state[:n] = dh * z + dg @ W_hh
        else:
            h = out[r]
            da[:] = dh * (1 - h * h) if mode == "RNN_TANH" else dh * (h > 0)
            dh_state[:n] = da @ W_hh
    if mode != "GRU":
        d_gh = d_pre
    dt = X.dtype
    want = list(output_mask)
    dx = _matmul(d_pre, W_ih).reshape(input.shape) if want[0] else np.zeros(input.shape, dt)
    dw_ih = _matmul(d_pre.T, X) if want[1] else np.zeros(W_ih.shape, dt)
    dw_hh = _matmul(d_gh.T, h_prev) if want[2] else np.zeros(W_hh.shape, dt)
    db_ih = d_pre.sum(0) if want[3] else np.zeros(gates, dt)
    db_hh = d_gh.sum(0) if want[4] else np.zeros(gates, dt)
    if W_hr is None or mode != "LSTM":
        dw_hr = np.empty((0,), dt)
    else:
        dw_hr = dW_hr if want[5] else np.zeros(W_hr.shape, dt)
    dc0 = dc_state if mode == "LSTM" else np.empty((0,), dt)
    return tuple(_wrap(a) for a in (dx, dw_ih, dw_hh, db_ih, db_hh, dw_hr, dh_state, dc0))


@impl("_rnn_layer_backward", "Meta")
def rnn_layer_backward_meta(input, weight_ih, weight_hh, weight_hr, output, workspace,
                            grad_output, grad_hy, grad_cy, mode, batch_sizes, reverse,
                            output_mask):
    dt, dev = input.dtype, input.device
    gates = weight_hh.shape[0]
    shapes = [input.shape, weight_ih.shape, weight_hh.shape, (gates,), (gates,),
              weight_hr.shape if mode == "LSTM" and weight_hr is not None else (0,),
              grad_hy.shape, grad_cy.shape if mode == "LSTM" else (0,)]
    return tuple(_meta(s, dt, device=dev) for s in shapes)


def rnn_layer_by_steps(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, mode,
                       batch_sizes, reverse):
    """(output, hy, cy) of `_rnn_layer` written with differentiable tensor ops, step by step as
    the kernel above (PyTorch's CPU layers are such ops for float64). The backward formula runs
    it when its own result must be differentiable (create_graph=True): the gradients are then
    taken through this graph, so double backward works, at the cost of the small ops the fused
    kernel avoids."""
    from .. import cat, sigmoid, tanh, relu
    gates = GATES[mode]
    hidden = weight_hh.shape[0] // gates
    x = input.reshape(-1, input.shape[-1])
    gi = x @ weight_ih.t()
    if bias_ih is not None:
        gi = gi + bias_ih if mode == "GRU" else gi + bias_ih + bias_hh
    offsets, steps = _steps(batch_sizes, reverse)
    h, c = hx, cx
    outs = [None] * len(batch_sizes)
    for t in steps:
        n, start = int(batch_sizes[t]), int(offsets[t])
        g, hp = gi[start:start + n], h[:n]
        if mode == "GRU":
            gh = hp @ weight_hh.t()
            if bias_hh is not None:
                gh = gh + bias_hh
            rz = sigmoid(g[:, :2 * hidden] + gh[:, :2 * hidden])
            reset, z = rz[:, :hidden], rz[:, hidden:]
            cand = tanh(g[:, 2 * hidden:] + reset * gh[:, 2 * hidden:])
            new = cand + z * (hp - cand)
        else:
            pre = g + hp @ weight_hh.t()
            if mode == "LSTM":
                i, f, gg, o = (pre[:, k * hidden:(k + 1) * hidden] for k in range(4))
                cn = sigmoid(f) * c[:n] + sigmoid(i) * tanh(gg)
                c = cat([cn, c[n:]]) if n < c.shape[0] else cn
                new = sigmoid(o) * tanh(cn)
                if weight_hr is not None:
                    new = new @ weight_hr.t()
            else:
                new = tanh(pre) if mode == "RNN_TANH" else relu(pre)
        h = cat([new, h[n:]]) if n < h.shape[0] else new
        outs[t] = new
    out = cat(outs).reshape(tuple(input.shape[:-1]) + (new.shape[-1],))
    return out, h, (c if mode == "LSTM" else None)
