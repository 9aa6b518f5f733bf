"""nn.RNN, nn.LSTM, nn.GRU and their single-step cells RNNCell, LSTMCell, GRUCell.

The modules keep PyTorch's parameters (`weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`,
`bias_hh_l{k}`, `weight_hr_l{k}` for LSTM projections, `_reverse` for the backward direction)
and run every layer and direction through one fused op, `_RecurrentLayer`, the counterpart of
ATen's RNN.cpp. It works on the packed layout (see nn/utils/rnn.py): a padded (T, B, *) input
is the special case where all B sequences run for all T steps, so packed and padded inputs take
the same path.

Why a fused op: a step of an LSTM is a dozen small tensor ops, and a training step of a 2-layer
LSTM over 35 steps would put ~1000 autograd nodes in the graph. The fused op does the time loop
in NumPy instead: the input projection x W_ih^T + b for all steps is one matmul, each step is one
h W_hh^T matmul plus the gate arithmetic, and backward runs backpropagation through time over
the gate values saved in forward, finishing with one matmul per weight gradient over all steps.
Its backward is not itself differentiable: double backward through it raises.
"""
import math
import numbers
import warnings

import numpy as np

from .module import Module
from ..parameter import Parameter
from .. import init, functional as F
from ..utils.rnn import PackedSequence
from ... import _refs as E
from ..._core.tensor import _wrap
from ...autograd.function import Function
from ..._core.grad_mode import _grad_state

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _sigmoid(a):
    """Logistic function written through tanh, which cannot overflow."""
    return np.tanh(a * 0.5) * 0.5 + 0.5


def _reset_uniform(module):
    """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), in registration order
    (so that the same seed gives PyTorch's values)."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


def _dtype_name(dtype):
    """The C++ scalar type name PyTorch's matmul errors use (Float, Double, ...)."""
    return {"float32": "Float", "float64": "Double", "float16": "Half",
            "bfloat16": "BFloat16"}.get(str(dtype).replace("torch.", ""), str(dtype))


def _check_dtypes(matmul_inputs, cell, weight):
    """Input and hidden state must have the weights' dtype (PyTorch's first matmul says so).
    PyTorch's cells promote an LSTM cell state of a wider dtype; ember refuses it instead."""
    for t in matmul_inputs:
        if t.dtype != weight.dtype:
            raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                               f"{_dtype_name(t.dtype)} and {_dtype_name(weight.dtype)}")
    if cell is not None and cell.dtype != weight.dtype:
        raise RuntimeError(f"LSTM cell state has dtype {cell.dtype} but the weights have "
                           f"{weight.dtype}: ember does not promote the cell state, convert it "
                           f"with .to({weight.dtype})")


def _array(t):
    if t is None:
        return None
    if t._np is None:
        raise NotImplementedError(f"recurrent layers are implemented for CPU tensors only, got "
                                  f"a tensor on {t.device}")
    return t._np


class _RecurrentLayer(Function):
    """One layer, one direction, over a packed sequence.

    x: (N, input) rows of all steps (step t is rows offsets[t] : offsets[t] + batch_sizes[t]);
    h0: (B, H_out), c0: (B, H) for LSTM; returns out (N, H_out), h_n and (LSTM) c_n.
    `mode` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU"; gate order as PyTorch: LSTM (i, f, g, o),
    GRU (r, z, n). `reverse` runs the steps last to first.

    State lives in (B, ...) arrays whose first batch_sizes[t] rows are the sequences running at
    step t. Sequences are sorted longest first, so in forward order a finished sequence's row
    simply stops being updated and ends as its h_n; in reverse order a row still holds h0 until
    its sequence starts. Backward walks the steps the other way with the same row bookkeeping,
    which makes dh_n flow into the right steps and dh0 come out in the same arrays.
    """

    @staticmethod
    def forward(ctx, mode, batch_sizes, reverse, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
        if x.device.type == "meta":  # shapes only
            states = (h0, c0) if mode == "LSTM" else (h0,)
            return tuple(E.empty(shape, dtype=x.dtype, device="meta")
                         for shape in [(x.shape[0], h0.shape[1])] + [s.shape for s in states])
        X, W_ih, W_hh = _array(x), _array(w_ih), _array(w_hh)
        W_hr = _array(w_hr)
        G = W_hh.shape[0]
        hidden = c0.shape[1] if mode == "LSTM" else h0.shape[1]
        gi = X @ W_ih.T
        gh_bias = None
        if b_ih is not None:
            gi += _array(b_ih)
            if mode == "GRU":
                gh_bias = _array(b_hh)
            else:
                gi += _array(b_hh)
        offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
        steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
        h = _array(h0).copy()
        h_prev = np.empty((X.shape[0], h.shape[1]), dtype=X.dtype)
        out = np.empty_like(h_prev)
        acts = np.empty((X.shape[0], G), dtype=X.dtype)  # gate values after their nonlinearity
        if mode == "LSTM":
            c = _array(c0).copy()
            c_prev = np.empty((X.shape[0], hidden), dtype=X.dtype)
            c_all = np.empty_like(c_prev)
        if mode == "GRU":
            gh_n = np.empty((X.shape[0], hidden), dtype=X.dtype)
        for t in steps:
            n = int(batch_sizes[t])
            rows = slice(offsets[t], offsets[t] + n)
            hp = h[:n]
            h_prev[rows] = hp
            if mode == "GRU":
                gh = hp @ W_hh.T
                if gh_bias is not None:
                    gh += gh_bias
                a = acts[rows]
                a[:, :2 * hidden] = _sigmoid(gi[rows, :2 * hidden] + gh[:, :2 * hidden])
                r, z = a[:, :hidden], a[:, hidden:2 * hidden]
                gh_n[rows] = gh[:, 2 * hidden:]
                a[:, 2 * hidden:] = np.tanh(gi[rows, 2 * hidden:] + r * gh[:, 2 * hidden:])
                new = a[:, 2 * hidden:]
                new = new + z * (hp - new)
            else:
                pre = gi[rows] + hp @ W_hh.T
                if mode == "LSTM":
                    a = acts[rows]
                    a[:] = _sigmoid(pre)
                    a[:, 2 * hidden:3 * hidden] = np.tanh(pre[:, 2 * hidden:3 * hidden])
                    i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
                    c_prev[rows] = c[:n]
                    c[:n] = f * c[:n] + i * g
                    c_all[rows] = c[:n]
                    new = o * np.tanh(c[:n])
                    if W_hr is not None:
                        new = new @ W_hr.T
                elif mode == "RNN_TANH":
                    new = np.tanh(pre)
                else:
                    new = np.maximum(pre, 0)
            h[:n] = new
            out[rows] = new
        ctx.save_for_backward(x, w_ih, w_hh, w_hr)
        ctx.arrays = dict(acts=acts, h_prev=h_prev, out=out)
        if mode == "LSTM":
            ctx.arrays.update(c_prev=c_prev, c_all=c_all)
        if mode == "GRU":
            ctx.arrays.update(gh_n=gh_n)
        ctx.setup = (mode, batch_sizes, offsets, steps, hidden, b_ih is not None)
        if mode == "LSTM":
            return _wrap(out), _wrap(h), _wrap(c)
        return _wrap(out), _wrap(h)

    @staticmethod
    def backward(ctx, d_out, d_hn, d_cn=None):
        if _grad_state.enabled:
            raise RuntimeError("double backward (create_graph=True) through ember's RNN, LSTM "
                               "and GRU layers and cells is not supported: their backward runs "
                               "in NumPy")
        x, w_ih, w_hh, w_hr = ctx.saved_tensors
        X, W_ih, W_hh, W_hr = _array(x), _array(w_ih), _array(w_hh), _array(w_hr)
        mode, batch_sizes, offsets, steps, hidden, has_bias = ctx.setup
        s = ctx.arrays
        acts, h_prev, out = s["acts"], s["h_prev"], s["out"]
        dOut = _array(d_out)
        dh_state = _array(d_hn).copy()
        d_pre = np.empty_like(acts)  # gradient of the pre-activations, through x W_ih^T
        if mode == "GRU":
            d_gh = np.empty_like(acts)  # ... and through h W_hh^T (differs from d_pre for GRU)
        if mode == "LSTM":
            dc_state = _array(d_cn).copy()
            c_prev, c_all = s["c_prev"], s["c_all"]
            dW_hr = None if W_hr is None else np.zeros_like(W_hr)
        for t in reversed(steps):
            n = int(batch_sizes[t])
            rows = slice(offsets[t], offsets[t] + n)
            dh = dh_state[:n] + dOut[rows]
            a = acts[rows]
            da = d_pre[rows]
            if mode == "LSTM":
                i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
                tc = np.tanh(c_all[rows])
                if W_hr is not None:
                    dW_hr += dh.T @ (o * tc)
                    dh = dh @ W_hr
                dc = dc_state[:n] + dh * o * (1 - tc * tc)
                da[:, :hidden] = dc * g * i * (1 - i)
                da[:, hidden:2 * hidden] = dc * c_prev[rows] * f * (1 - f)
                da[:, 2 * hidden:3 * hidden] = dc * i * (1 - g * g)
                da[:, 3 * hidden:] = dh * tc * o * (1 - o)
                dc_state[:n] = dc * f
                dh_state[:n] = da @ W_hh
            elif mode == "GRU":
                r, z, new = a[:, :hidden], a[:, hidden:2 * hidden], a[:, 2 * hidden:]
                d_new = dh * (1 - z) * (1 - new * new)
                da[:, :hidden] = d_new * s["gh_n"][rows] * r * (1 - r)
                da[:, hidden:2 * hidden] = dh * (h_prev[rows] - new) * z * (1 - z)
                da[:, 2 * hidden:] = d_new
                dg = d_gh[rows]
                dg[:, :2 * hidden] = da[:, :2 * hidden]
                dg[:, 2 * hidden:] = d_new * r
                dh_state[:n] = dh * z + dg @ W_hh
            else:
                h = out[rows]
                da[:] = dh * (1 - h * h) if mode == "RNN_TANH" else dh * (h > 0)
                dh_state[:n] = da @ W_hh
        if mode != "GRU":
            d_gh = d_pre
        need = ctx.needs_input_grad
        dx = _wrap(d_pre @ W_ih) if need[3] else None
        dw_ih = _wrap(d_pre.T @ X) if need[6] else None
        dw_hh = _wrap(d_gh.T @ h_prev) if need[7] else None
        db_ih = _wrap(d_pre.sum(0)) if has_bias and need[8] else None
        db_hh = _wrap(d_gh.sum(0)) if has_bias and need[9] else None
        dc0 = _wrap(dc_state) if mode == "LSTM" else None
        dw_hr = _wrap(dW_hr) if mode == "LSTM" and W_hr is not None else None
        return (None, None, None, dx, _wrap(dh_state), dc0, dw_ih, dw_hh, db_ih, db_hh, dw_hr)


def _run_layer(mode, batch_sizes, reverse, x, h0, c0, weights):
    """(out, h_n, c_n or None) of one layer and direction; weights = (w_ih, w_hh, b_ih, b_hh,
    w_hr) with None for the absent ones."""
    result = _RecurrentLayer.apply(mode, batch_sizes, reverse, x, h0, c0, *weights)
    return result if mode == "LSTM" else (result[0], result[1], None)


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters per layer and direction, their
    initialisation, the argument checks and the stacked layer loop."""

    _GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in self._GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = self._GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size

        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = [pattern.format(layer, suffix) for pattern, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name, Parameter(E.empty(shape, **factory)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, name, None) for name in self._flat_weights_names]

    def _update_flat_weights(self):
        """Pick up parameters swapped in behind __setattr__'s back (func.functional_call)."""
        if any(getattr(self, name, None) is not w
               for name, w in zip(self._flat_weights_names, self._flat_weights)):
            self._init_flat_weights()

    def __setattr__(self, attr, value):
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value  # keep `rnn.weight_ih_l0 = ...` live
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """A no-op: packing the weights into one buffer only matters for cuDNN."""

    def reset_parameters(self):
        _reset_uniform(self)

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- argument checks (PyTorch's messages) -------------------------------------------------
    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes):
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes), size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ---- the forward pass shared by the three modules -----------------------------------------
    def _zeros_state(self, input, batch, size):
        num_directions = 2 if self.bidirectional else 1
        return E.zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype,
                       device=input.device)

    def _unpack_input(self, input, hx, check_hx_dims):
        """Common front half of forward: (data, batch_sizes, hx, sorted_indices,
        unsorted_indices, is_batched), with a batch dimension added to unbatched input.
        `check_hx_dims(hx, is_batched)` raises on wrong ranks and adds hx's batch dimension."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
            return data, batch_sizes, hx, sorted_indices, unsorted_indices, True
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{tensor} instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            hx = check_hx_dims(hx, is_batched)
        return input, None, hx, None, None, is_batched

    def _run(self, input, batch_sizes, hx, cx):
        """Every layer and direction over `input` (packed data when batch_sizes is given,
        else a (T, B, *) or batch-first batch): (output, h_n, c_n or None)."""
        _check_dtypes((hx,), cx, self._flat_weights[0])
        padded_shape = None
        if batch_sizes is None:
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[:2]
            padded_shape = (steps, batch)
            input = input.reshape(steps * batch, input.shape[2])
            sizes = np.full(steps, batch, dtype=np.int64)
        else:
            sizes = batch_sizes.numpy()
        num_directions = 2 if self.bidirectional else 1
        per_direction = len(self._flat_weights) // (self.num_layers * num_directions)
        has_proj = self.proj_size > 0
        layer_input = input
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                w = self._flat_weights[k * per_direction:(k + 1) * per_direction]
                weights = (w[0], w[1], w[2] if self.bias else None,
                           w[3] if self.bias else None, w[-1] if has_proj else None)
                out, h, c = _run_layer(self.mode, sizes, direction == 1, layer_input, hx[k],
                                       None if cx is None else cx[k], weights)
                outputs.append(out)
                h_n.append(h)
                c_n.append(c)
            layer_input = outputs[0] if num_directions == 1 else E.cat(outputs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input
        if padded_shape is not None:
            output = output.reshape(padded_shape + (output.shape[1],))
            if self.batch_first:
                output = output.transpose(0, 1)
        return output, E.stack(h_n), None if cx is None else E.stack(c_n)

    def _finish(self, orig_input, output, hidden, batch_sizes, sorted_indices,
                unsorted_indices, is_batched):
        """Common back half of forward: repack, undo the sort, drop the added batch dim."""
        if isinstance(orig_input, PackedSequence):
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        elif not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = tuple(h.squeeze(1) for h in hidden)
        if unsorted_indices is not None:
            hidden = tuple(h.index_select(1, unsorted_indices) for h in hidden)
        return output, hidden


def _check_single_hx(hx, is_batched):
    if is_batched and hx.dim() != 3:
        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D "
                           "tensor")
    if not is_batched:
        if hx.dim() != 2:
            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                               f"{hx.dim()}-D tensor")
        hx = hx.unsqueeze(1)
    return hx


class _SingleStateRNN(RNNBase):
    """RNN and GRU: one hidden state tensor."""

    def forward(self, input, hx=None):
        self._update_flat_weights()
        data, batch_sizes, hx, sorted_indices, unsorted_indices, is_batched = \
            self._unpack_input(input, hx, _check_single_hx)
        if hx is None:
            hx = self._zeros_state(data, self._mini_batch(data, batch_sizes), self.hidden_size)
        self.check_forward_args(data, hx, batch_sizes)
        output, h_n, _ = self._run(data, batch_sizes, hx, None)
        output, (h_n,) = self._finish(input, output, (h_n,), batch_sizes, sorted_indices,
                                      unsorted_indices, is_batched)
        return output, h_n


class RNN(_SingleStateRNN):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class GRU(_SingleStateRNN):
    """Gated recurrent unit, gates (r, z, n) as PyTorch: n uses r * (h W_hn^T + b_hn)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, gates (i, f, g, o); with proj_size > 0 the hidden state is
    projected by weight_hr to proj_size features (the cell state keeps hidden_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes),
                self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    @staticmethod
    def _check_hx_dims(hx, is_batched):
        rank = 3 if is_batched else 2
        if hx[0].dim() != rank or hx[1].dim() != rank:
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {rank}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        return hx if is_batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))

    def forward(self, input, hx=None):
        self._update_flat_weights()
        data, batch_sizes, hx, sorted_indices, unsorted_indices, is_batched = \
            self._unpack_input(input, hx, self._check_hx_dims)
        if hx is None:
            batch = self._mini_batch(data, batch_sizes)
            hx = (self._zeros_state(data, batch, self.proj_size or self.hidden_size),
                  self._zeros_state(data, batch, self.hidden_size))
        self.check_forward_args(data, hx, batch_sizes)
        output, h_n, c_n = self._run(data, batch_sizes, hx[0], hx[1])
        return self._finish(input, output, (h_n, c_n), batch_sizes, sorted_indices,
                            unsorted_indices, is_batched)


# ---- cells: one time step, the same fused op with a single step --------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(E.empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(E.empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(E.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(E.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        _reset_uniform(self)

    def _step(self, mode, input, hx):
        """Checks as PyTorch's cells do, then one step of the fused op."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = None
        if hx is not None:
            states = tuple(hx) if mode == "LSTM" else (hx,)
            for idx, value in enumerate(states):
                if value.dim() not in (1, 2):
                    what = f"hx[{idx}]" if mode == "LSTM" else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            states = None if states is None else tuple(s.unsqueeze(0) for s in states)
        if states is None:
            zeros = E.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                            device=input.device)
            states = (zeros,) * (2 if mode == "LSTM" else 1)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for k, s in enumerate(states):
            if s.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} "
                                   f"batch size {s.size(0)}")
            if s.size(1) != self.hidden_size or s.dim() != 2:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.size(1)}, "
                                   f"expected {self.hidden_size}")
        _check_dtypes((input, states[0]), states[1] if mode == "LSTM" else None, self.weight_ih)
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)
        _, h, c = _run_layer(mode, np.array([input.size(0)]), False, input, states[0],
                             states[1] if mode == "LSTM" else None, weights)
        result = (h, c) if mode == "LSTM" else (h,)
        if not is_batched:
            result = tuple(r.squeeze(0) for r in result)
        return result if mode == "LSTM" else result[0]


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, hx)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("LSTM", input, hx)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", input, hx)
