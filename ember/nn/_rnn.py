"""The functional recurrent ops torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu and their
single-step cells torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell (ATen's RNN.cpp).

They take the weights as a flat list (per layer and direction: w_ih, w_hh, then b_ih, b_hh when
`has_biases`, then w_hr for an LSTM with projections) and run every layer and direction through
the fused per-layer op `_rnn_layer` (_aten/rnn.py), the same path nn.RNN/LSTM/GRU take. Each has
two overloads as in PyTorch: a padded (T, B, *) input (batch-first optional), or the data and
batch sizes of a packed sequence.
"""
from .._core.tensor import Tensor
from .._core.torch_function import overloaded_args
from .._dispatch.dispatcher import impl, lookup as _lookup
from .. import _refs as E
from . import functional as F

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]

_rnn_layer = _lookup("_rnn_layer")


def run_layer(mode, batch_sizes, reverse, x, h0, c0, weights):
    """(out, h_n, c_n or None) of one layer and direction; weights = (w_ih, w_hh, b_ih, b_hh,
    w_hr) with None for the absent ones."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    out, h, c, _ = _rnn_layer(x, w_ih, w_hh, b_ih, b_hh, w_hr, h0, c0, mode, batch_sizes,
                              reverse)
    return out, h, (c if mode == "LSTM" else None)


_ACTIVATIONS = {"RNN_TANH": E.tanh, "RNN_RELU": E.relu}


def run_layer_stepwise(mode, batch_sizes, reverse, x, h0, c0, weights):
    """run_layer written as the public ops it is made of, one time step at a time: the
    weights meet F.linear only, on (batch, features) inputs. A Tensor subclass among the
    weights with its own __torch_function__ (ExpandedWeight) thus sees every use of itself as
    an op it knows, where the fused op would hide them (PyTorch's RNN decompositions).

    A packed batch keeps all B = batch_sizes[0] rows at every step: a row whose sequence is
    not running at this step gets zero input and keeps its state (so its output, which is
    dropped, gets no gradient). Sequences are sorted longest first, so the running rows are
    the first batch_sizes[t]."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    batch = batch_sizes[0]
    h, c = h0, c0
    starts, offset = [], 0
    for size in batch_sizes:
        starts.append(offset)
        offset += size
    outputs = [None] * len(batch_sizes)
    for t in (reversed if reverse else iter)(range(len(batch_sizes))):
        size = batch_sizes[t]
        x_t = x[t] if x.dim() == 3 else x[starts[t]:starts[t] + size]   # padded or packed
        if size < batch:
            x_t = F.pad(x_t, (0, 0, 0, batch - size))
        gates_x, gates_h = F.linear(x_t, w_ih, b_ih), F.linear(h, w_hh, b_hh)
        if mode == "LSTM":
            i, f, g, o = (gates_x + gates_h).chunk(4, 1)
            new_c = E.sigmoid(f) * c + E.sigmoid(i) * E.tanh(g)
            new_h = E.sigmoid(o) * E.tanh(new_c)
            if w_hr is not None:
                new_h = F.linear(new_h, w_hr)
        elif mode == "GRU":
            x_r, x_z, x_n = gates_x.chunk(3, 1)
            h_r, h_z, h_n = gates_h.chunk(3, 1)
            r, z = E.sigmoid(x_r + h_r), E.sigmoid(x_z + h_z)
            new_h = (1 - z) * E.tanh(x_n + r * h_n) + z * h
        else:
            new_h = _ACTIVATIONS[mode](gates_x + gates_h)
        if size < batch:
            running = (E.arange(batch, device=x.device) < size).unsqueeze(1)
            new_h = E.where(running, new_h, h)
            if mode == "LSTM":
                new_c = E.where(running, new_c, c)
        h = new_h
        if mode == "LSTM":
            c = new_c
        outputs[t] = h[:size]
    return (E.stack if x.dim() == 3 else E.cat)(outputs), h, c


def run_stack(mode, input, batch_sizes, hx, cx, params, has_biases, has_proj, num_layers,
              dropout, train, bidirectional, batch_first):
    """Every layer and direction over `input` (packed data when batch_sizes is given, else a
    (T, B, *) or batch-first batch): (output, h_n, c_n or None)."""
    if batch_sizes is None:  # (T, B, *): every sequence runs for all T steps
        if batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[:2]
        sizes = [batch] * steps
    else:
        sizes = batch_sizes.tolist() if isinstance(batch_sizes, Tensor) else list(batch_sizes)
    num_directions = 2 if bidirectional else 1
    per_direction = 2 + 2 * bool(has_biases) + bool(has_proj)
    if len(params) != num_layers * num_directions * per_direction:
        raise RuntimeError("got an incorrect number of RNN parameters")
    if hx.size(0) < num_layers * num_directions:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    # (weights' shapes read as .shape: an ExpandedWeight answers it without __torch_function__)
    for w in params:
        if len(w.shape) == 0:  # the input projection is PyTorch's linear
            raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                               f"{input.dim()}D and 0D")
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    w_hh_shape = params[1].shape
    if not has_proj and w_hh_shape[1] != w_hh_shape[0] // gates:
        raise RuntimeError(f"The size of tensor a ({w_hh_shape[0] // gates}) must match the "
                           f"size of tensor b ({w_hh_shape[1]}) at non-singleton dimension 1")
    hidden = params[-1].shape[0] if has_proj else w_hh_shape[1]  # w_hr: (proj, H)
    if hx.size(-1) != hidden:
        raise RuntimeError(f"The size of tensor a ({hidden}) must match the size of tensor b "
                           f"({hx.size(-1)}) at non-singleton dimension 1")
    layer_fn = run_layer_stepwise if overloaded_args(params, Tensor) else run_layer
    layer_input = input
    h_n, c_n = [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            w = params[k * per_direction:(k + 1) * per_direction]
            weights = (w[0], w[1], w[2] if has_biases else None, w[3] if has_biases else None,
                       w[-1] if has_proj else None)
            out, h, c = layer_fn(mode, sizes, direction == 1, layer_input, hx[k],
                                 None if cx is None else cx[k], weights)
            outputs.append(out)
            h_n.append(h)
            c_n.append(c)
        layer_input = outputs[0] if num_directions == 1 else E.cat(outputs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    output = layer_input
    if batch_sizes is None and batch_first:
        output = output.transpose(0, 1)
    return output, E.stack(h_n), None if cx is None else E.stack(c_n)


def _check_input_rank(input, batch_first):
    if input.dim() != 3:  # PyTorch reads input.size(2) and the batch dim unconditionally
        raise IndexError(f"Dimension out of range: the padded input must have 3 dimensions "
                         f"(sequence, batch, features), got {input.dim()}")
    if input.size(1 if batch_first else 0) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")


def _lstm_padded(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                 batch_first):
    _check_input_rank(input, batch_first)
    h0, c0 = _lstm_states(hx)
    return run_stack("LSTM", input, None, h0, c0, list(params), has_biases,
                     h0.size(2) != c0.size(2), num_layers, dropout, train, bidirectional,
                     batch_first)


# aten.lstm.input: an op (CompositeImplicitAutograd), so that graphs record the layer stack by
# name, as torch.export's do; nn.LSTM calls it for padded input
lstm_input = _lookup("lstm.input")
impl("lstm.input", "CompositeImplicitAutograd")(_lstm_padded)


def _lstm_packed(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                 bidirectional):
    h0, c0 = _lstm_states(hx)
    return run_stack("LSTM", data, batch_sizes, h0, c0, list(params), has_biases,
                     h0.size(2) != c0.size(2), num_layers, dropout, train, bidirectional, False)


def _lstm_states(hx):
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return hx[0], hx[1]


def lstm(*args, **kwargs):
    """torch.lstm: (output, h_n, c_n)."""
    second = args[1] if len(args) > 1 else kwargs.get("batch_sizes", kwargs.get("hx"))
    if isinstance(second, Tensor):  # the packed overload's batch sizes (hx is a tuple)
        return _lstm_packed(*args, **kwargs)
    return lstm_input(*args, **kwargs)


def _single_state(name, mode):
    def padded(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first):
        _check_input_rank(input, batch_first)
        output, h_n, _ = run_stack(mode, input, None, hx, None, list(params), has_biases, False,
                                   num_layers, dropout, train, bidirectional, batch_first)
        return output, h_n

    def packed(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
               bidirectional):
        output, h_n, _ = run_stack(mode, data, batch_sizes, hx, None, list(params), has_biases,
                                   False, num_layers, dropout, train, bidirectional, False)
        return output, h_n

    op = _lookup(f"{name}.input")   # as lstm.input: an op graphs record by name
    impl(op, "CompositeImplicitAutograd")(padded)

    def fn(*args, **kwargs):
        """The packed overload's third argument is hx (a tensor), the padded one's the
        parameter list."""
        third = args[2] if len(args) > 2 else kwargs.get("params", kwargs.get("hx"))
        is_packed = "batch_sizes" in kwargs or isinstance(third, Tensor)
        return (packed if is_packed else op)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: (output, h_n)."
    return fn, op


gru, gru_input = _single_state("gru", "GRU")
rnn_tanh, rnn_tanh_input = _single_state("rnn_tanh", "RNN_TANH")
rnn_relu, rnn_relu_input = _single_state("rnn_relu", "RNN_RELU")


# ---- cells: one time step of one layer -------------------------------------------------------
def check_cell(input, states, w_ih, w_hh):
    """PyTorch's cell checks: input (B, input_size), each state (B, hidden_size)."""
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")
    for k, s in enumerate(states):
        if s.size(0) != input.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch "
                               f"size {s.size(0)}")
        if s.dim() != 2 or s.size(1) != w_hh.size(1):
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.size(1)}, "
                               f"expected {w_hh.size(1)}")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: (h', c') after one step."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    check_cell(input, hx, w_ih, w_hh)
    _, h, c = run_layer("LSTM", [input.size(0)], False, input, hx[0], hx[1],
                        (w_ih, w_hh, b_ih, b_hh, None))
    return h, c


def _one_state_cell(name, mode):
    def fn(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        check_cell(input, (hx,), w_ih, w_hh)
        _, h, _ = run_layer(mode, [input.size(0)], False, input, hx, None,
                            (w_ih, w_hh, b_ih, b_hh, None))
        return h
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: h' after one step."
    return fn


gru_cell = _one_state_cell("gru_cell", "GRU")
rnn_tanh_cell = _one_state_cell("rnn_tanh_cell", "RNN_TANH")
rnn_relu_cell = _one_state_cell("rnn_relu_cell", "RNN_RELU")
