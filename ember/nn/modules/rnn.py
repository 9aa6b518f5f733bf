"""nn.RNN, nn.LSTM, nn.GRU and their single-step cells RNNCell, LSTMCell, GRUCell.

The modules keep PyTorch's parameters (`weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`,
`bias_hh_l{k}`, `weight_hr_l{k}` for LSTM projections, `_reverse` for the backward direction)
and run every layer and direction through one fused op, `_rnn_layer` (see _aten/rnn.py), the
counterpart of ATen's per-layer CPU op. It works on the packed layout (see nn/utils/rnn.py):
a padded (T, B, *) input is the special case where all B sequences run for all T steps, so
packed and padded inputs take the same path.
"""
import math
import numbers
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .module import Module
from ..parameter import Parameter
from .. import init
from ..utils.rnn import PackedSequence
from ... import _refs as E
from .._rnn import check_cell as _check_cell, run_layer as _run_layer, run_stack as _run_stack
from .._rnn import lstm_input as _lstm_input
from .. import _rnn

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

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
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=_user_stacklevel())
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
        return _run_stack(self.mode, input, batch_sizes, hx, cx, self._flat_weights, self.bias,
                          self.proj_size > 0, self.num_layers, self.dropout, self.training,
                          self.bidirectional, self.batch_first)

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
        if batch_sizes is None:     # the op aten.gru.input / rnn_tanh.input / rnn_relu.input
            _check_dtypes((hx,), None, self._flat_weights[0])
            output, h_n = _PADDED_OPS[self.mode](data, hx, self._flat_weights, self.bias,
                                                 self.num_layers, self.dropout, self.training,
                                                 self.bidirectional, self.batch_first)
        else:
            output, h_n, _ = self._run(data, batch_sizes, hx, None)
        output, (h_n,) = self._finish(input, output, (h_n,), batch_sizes, sorted_indices,
                                      unsorted_indices, is_batched)
        return output, h_n


_PADDED_OPS = {"GRU": _rnn.gru_input, "RNN_TANH": _rnn.rnn_tanh_input,
               "RNN_RELU": _rnn.rnn_relu_input}


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
        if batch_sizes is None:     # the op aten.lstm.input, as PyTorch's LSTM calls it
            _check_dtypes((hx[0],), hx[1], self._flat_weights[0])
            output, h_n, c_n = _lstm_input(data, list(hx), self._flat_weights, self.bias,
                                           self.num_layers, self.dropout, self.training,
                                           self.bidirectional, self.batch_first)
        else:
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
        _check_cell(input, states, self.weight_ih, self.weight_hh)
        _check_dtypes((input, states[0]), states[1] if mode == "LSTM" else None, self.weight_ih)
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)
        _, h, c = _run_layer(mode, [input.size(0)], False, input, states[0],
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
