"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn packing, against PyTorch: the same module in
both libraries with torch's weights copied into ember's must give torch's outputs, final states,
input and state gradients and every parameter gradient, for every layout the modules accept."""
import numpy as np
import pytest

import ember
from _torch_oracle import _tensors, _weighted_loss, assert_same

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")

ATOL, RTOL = 2e-5, 1e-4
T, B, I, H = 5, 3, 4, 6

MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("LSTM", {"proj_size": 3}),
         ("GRU", {}), ("GRU", {"bias": False}), ("LSTM", {"bias": False, "proj_size": 2})]
MODE_IDS = ["rnn_tanh", "rnn_relu", "lstm", "lstm_proj", "gru", "gru_nobias", "lstm_proj_nobias"]


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def pair(name, *args, **kwargs):
    """The same module in ember and torch, ember's parameters loaded from torch's."""
    tm = getattr(torch.nn, name)(*args, **kwargs)
    em = getattr(ember.nn, name)(*args, **kwargs)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return em, tm


def leaf(lib, a):
    return lib.tensor(a.copy(), requires_grad=True)


def state_arrays(name, kwargs, num_states, batch, seed=1):
    """h0 (and c0 for LSTM) of shape (num_states, batch, size); batch None drops that dim."""
    size = kwargs.get("proj_size") or H
    shapes = [(num_states, size)] if batch is None else [(num_states, batch, size)]
    if name in ("LSTM", "LSTMCell"):
        shapes.append(shapes[0][:-1] + (H,))
    return [data(*s, seed=seed + k) for k, s in enumerate(shapes)]


def compare_run(em, tm, x, states, call):
    """call(lib, module, x, hx) in both; compares outputs, then the gradients of a weighted sum
    of every float output w.r.t. x, the initial states and all parameters."""
    results = {}
    for lib, m in ((ember, em), (torch, tm)):
        xs = leaf(lib, x)
        hs = [leaf(lib, s) for s in states]
        hx = None if not hs else (tuple(hs) if len(hs) == 2 else hs[0])
        out = call(lib, m, xs, hx)
        _weighted_loss(_tensors(out)).backward()
        results[lib] = (out, xs, hs, m)
    (out_e, x_e, h_e, m_e), (out_t, x_t, h_t, m_t) = results[ember], results[torch]
    assert_same(out_e, out_t, atol=ATOL, rtol=RTOL)
    assert_same(x_e.grad, x_t.grad, atol=ATOL, rtol=RTOL, path="input.grad")
    for k, (a, b) in enumerate(zip(h_e, h_t)):
        assert_same(a.grad, b.grad, atol=ATOL, rtol=RTOL, path=f"hx[{k}].grad")
    grads_t = {n: p.grad for n, p in m_t.named_parameters()}
    for n, p in m_e.named_parameters():
        assert_same(p.grad, grads_t[n], atol=ATOL, rtol=RTOL, path=f"{n}.grad")
    return out_e, out_t


def forward(lib, m, x, hx):
    return m(x) if hx is None else m(x, hx)


# ---- the three recurrent modules --------------------------------------------------------------
@pytest.mark.parametrize("batch_first,with_h0", [(False, False), (True, True)],
                         ids=["seq_first-zeros", "batch_first-h0"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_module_matches_torch(name, kwargs, num_layers, bidirectional, batch_first, with_h0):
    em, tm = pair(name, I, H, num_layers=num_layers, bidirectional=bidirectional,
                  batch_first=batch_first, **kwargs)
    x = data(B, T, I) if batch_first else data(T, B, I)
    states = state_arrays(name, kwargs, num_layers * (1 + bidirectional), B) if with_h0 else []
    compare_run(em, tm, x, states, forward)


@pytest.mark.parametrize("batch_first,with_h0", [(False, True), (True, False)],
                         ids=["seq_first-h0", "batch_first-zeros"])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_unbatched_input(name, kwargs, batch_first, with_h0):
    em, tm = pair(name, I, H, num_layers=2, bidirectional=True, batch_first=batch_first, **kwargs)
    states = state_arrays(name, kwargs, 4, None) if with_h0 else []
    out_e, _ = compare_run(em, tm, data(T, I), states, forward)
    assert tuple(out_e[0].shape) == (T, 2 * (kwargs.get("proj_size") or H))


@pytest.mark.parametrize("enforce_sorted,bidirectional,with_h0",
                         [(True, False, True), (False, True, False), (False, True, True)],
                         ids=["sorted-uni-h0", "unsorted-bi-zeros", "unsorted-bi-h0"])
@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_packed_input(name, kwargs, enforce_sorted, bidirectional, with_h0):
    """Variable-length sequences in a PackedSequence give a PackedSequence with torch's data
    and the final state of each sequence at its own last step, in the caller's order."""
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    em, tm = pair(name, I, H, num_layers=2, bidirectional=bidirectional, **kwargs)
    states = state_arrays(name, kwargs, 2 * (1 + bidirectional), 4) if with_h0 else []

    def call(lib, m, x, hx):
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        out, h = forward(lib, m, packed, hx)
        assert type(out).__name__ == "PackedSequence"
        return tuple(out), h

    compare_run(em, tm, data(5, 4, I), states, call)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers(name):
    """Dropout acts on every layer's output but the last, only in training: p=1 zeroes the
    second layer's input exactly as in torch; eval mode ignores dropout."""
    em, tm = pair(name, I, H, num_layers=2, dropout=1.0)
    compare_run(em, tm, data(T, B, I), [], forward)
    em.eval(), tm.eval()
    compare_run(em, tm, data(T, B, I), [], forward)
    em.dropout = 0.5
    em.train()
    x = ember.tensor(data(T, B, I))
    assert not np.allclose(em(x)[0].detach().numpy(), em.eval()(x)[0].detach().numpy())


@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_seeded_init_matches_torch(name, kwargs):
    """uniform(-1/sqrt(hidden), 1/sqrt(hidden)) drawn in torch's parameter order."""
    args = (I, H)
    kw = dict(num_layers=2, bidirectional=True, **kwargs)
    torch.manual_seed(3)
    tm = getattr(torch.nn, name)(*args, **kw)
    ember.manual_seed(3)
    em = getattr(ember.nn, name)(*args, **kw)
    sd_e, sd_t = em.state_dict(), tm.state_dict()
    assert list(sd_e) == list(sd_t)
    for k in sd_t:
        assert_same(sd_e[k], sd_t[k], atol=0, rtol=0, path=k)


def test_float64_gradcheck():
    """The fused layer's hand-written backward against finite differences, in float64, for a
    packed bidirectional projected LSTM and a GRU and RNN with initial states."""
    R = ember.nn.utils.rnn
    lstm = ember.nn.LSTM(3, 4, proj_size=2, bidirectional=True).double()
    x = ember.randn(4, 3, 3, dtype=ember.float64, requires_grad=True)
    h0 = ember.randn(2, 3, 2, dtype=ember.float64, requires_grad=True)
    c0 = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    w = list(lstm.parameters())

    def lstm_fn(x, h0, c0, *params):
        out, (h, c) = ember.func.functional_call(
            lstm, dict(zip([n for n, _ in lstm.named_parameters()], params)),
            (R.pack_padded_sequence(x, [4, 3, 1]), (h0, c0)))
        return out.data, h, c

    assert ember.autograd.gradcheck(lstm_fn, (x, h0, c0, *w))
    for name in ("GRU", "RNN"):
        m = getattr(ember.nn, name)(3, 4, num_layers=2).double()
        h0 = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
        params = list(m.parameters())
        assert ember.autograd.gradcheck(
            lambda x, h0, *p: ember.func.functional_call(
                m, dict(zip([n for n, _ in m.named_parameters()], p)), (x, h0)),
            (x, h0, *params))


def test_wider_lstm_cell_state_is_refused():
    """torch's LSTMCell promotes a float64 cell state with float32 weights; ember refuses it with
    an error that names the case instead of returning a different dtype."""
    for m, hx in ((ember.nn.LSTMCell(3, 4), (ember.zeros(2, 4), ember.zeros(2, 4).double())),
                  (ember.nn.LSTM(3, 4), (ember.zeros(1, 2, 4), ember.zeros(1, 2, 4).double()))):
        with pytest.raises(RuntimeError, match="cell state has dtype torch.float64"):
            m(ember.zeros(2, 3) if isinstance(m, ember.nn.LSTMCell) else ember.zeros(5, 2, 3), hx)


def test_double_backward():
    """create_graph through the fused layer differentiates its steps as tensor ops, so the
    second-order gradients are complete (gradgradcheck compares them with finite differences;
    tests/test_modules_fixes3.py compares them with torch's)."""
    m = ember.nn.GRU(3, 4).double()
    x = ember.randn(2, 1, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: m(x)[0], (x,))


# ---- module structure, repr, errors -----------------------------------------------------------
COMMON_ARGS = [((10, 20), {}), ((10, 20, 2), {"bidirectional": True}), ((10, 20), {"bias": False}),
               ((10, 20), {"batch_first": True, "dropout": 0.25, "num_layers": 3})]


@pytest.mark.parametrize("name,args,kwargs", [
    (name, args, kwargs) for name in ("RNN", "LSTM", "GRU") for args, kwargs in COMMON_ARGS
] + [("LSTM", args, dict(kwargs, proj_size=5)) for args, kwargs in COMMON_ARGS] + [
    ("RNN", (10, 20, 1, "relu"), {}), ("RNN", (10, 20), {"nonlinearity": "relu", "bias": False}),
])
def test_repr_and_parameter_names(name, args, kwargs):
    em, tm = pair(name, *args, **kwargs)
    assert repr(em) == repr(tm)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert em._flat_weights_names == tm._flat_weights_names
    assert em._all_weights == tm._all_weights
    assert [[tuple(p.shape) for p in ws] for ws in em.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in tm.all_weights]


@pytest.mark.parametrize("name,kwargs", [
    (name, kwargs) for name in ("RNNCell", "LSTMCell", "GRUCell")
    for kwargs in ({}, {"bias": False})
] + [("RNNCell", {"nonlinearity": "relu"})])
def test_cell_repr_and_parameters(name, kwargs):
    em, tm = pair(name, 10, 20, **kwargs)
    assert repr(em) == repr(tm)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]


def test_flat_weights_follow_assignment():
    em = ember.nn.LSTM(3, 4, num_layers=2)
    assert [id(w) for w in em._flat_weights] == [id(p) for p in em.parameters()]
    new = ember.nn.Parameter(ember.zeros(16, 3))
    em.weight_ih_l0 = new
    assert em._flat_weights[0] is new
    em.flatten_parameters()
    out, _ = em(ember.ones(2, 1, 3))
    assert tuple(out.shape) == (2, 1, 4)


def test_functional_call_swaps_weights():
    em, tm = pair("GRU", I, H, num_layers=2)
    w = data(3 * H, H, seed=5)

    def call(lib, m, x, hx):
        return lib.func.functional_call(m, {"weight_hh_l1": lib.tensor(w)}, (x,))
    compare_run(em, tm, data(T, B, I), [], call)
    em.zero_grad(), tm.zero_grad()
    compare_run(em, tm, data(T, B, I), [], forward)  # the module's own weights are back


@pytest.mark.parametrize("name,kwargs", MODES, ids=MODE_IDS)
def test_meta_device_shapes(name, kwargs):
    """On the meta device a module and a forward give torch's shapes without any data."""
    def run(lib):
        m = getattr(lib.nn, name)(I, H, num_layers=2, bidirectional=True, device="meta", **kwargs)
        out, hidden = m(lib.empty(T, B, I, device="meta"))
        cell = getattr(lib.nn, name + "Cell")(I, H, device="meta")(lib.empty(B, I, device="meta"))
        return [out] + list(hidden if isinstance(hidden, tuple) else [hidden]) + \
            list(cell if isinstance(cell, tuple) else [cell])
    assert_same(run(ember), run(torch), strides=True)


def test_double_and_dtype_conversion():
    em, tm = pair("LSTM", I, H, num_layers=2)
    em.double(), tm.double()
    compare_run(em, tm, data(T, B, I).astype(np.float64), [], forward)


def check_same_error(fn):
    """fn(lib) raises in both libraries, the same builtin exception type and message."""
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(Exception) as e_info:
        fn(ember)
    expected = next(c for c in type(t_info.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(e_info.value, expected), (e_info.value, t_info.value)
    assert str(e_info.value) == str(t_info.value)


@pytest.mark.parametrize("name,args,kwargs", [
    ("RNN", (4, 6), {"nonlinearity": "sigmoid"}),
    ("RNN", (4, 6), {"proj_size": 2}),
    ("GRU", (4, 6), {"proj_size": 2}),
    ("LSTM", (4, 6), {"proj_size": 6}),
    ("LSTM", (4, 6), {"proj_size": -1}),
    ("LSTM", (4, 6), {"dropout": 1.5}),
    ("LSTM", (4, 6), {"dropout": True}),
    ("LSTM", (4, 6), {"bias": 1}),
    ("LSTM", (4, 6), {"batch_first": "yes"}),
    ("LSTM", (4.0, 6), {}),
    ("LSTM", (0, 6), {}),
    ("GRU", (4, 6.0), {}),
    ("GRU", (4, 0), {}),
    ("RNN", (4, 6, 0), {}),
])
def test_constructor_errors(name, args, kwargs):
    check_same_error(lambda lib: getattr(lib.nn, name)(*args, **kwargs))


def test_dropout_with_one_layer_warns():
    messages = []
    for lib in (ember, torch):
        with pytest.warns(UserWarning) as record:
            lib.nn.GRU(I, H, dropout=0.5)
        messages.append([str(w.message) for w in record])
    assert messages[0] == messages[1]


def hx_for(lib, name, *shape):
    h = lib.zeros(*shape)
    return (h, lib.zeros(*shape)) if name == "LSTM" else h


FORWARD_ERRORS = ["input_1d", "input_4d", "input_size", "dtype", "h0_dtype", "h0_batch",
                  "h0_layers", "h0_features", "h0_rank_batched", "h0_rank_unbatched"]


@pytest.mark.parametrize("name,case", [(name, case) for name in ("RNN", "LSTM", "GRU")
                                       for case in FORWARD_ERRORS] + [("LSTM", "c0_shape")])
def test_forward_errors(name, case):
    def fn(lib):
        m = getattr(lib.nn, name)(I, H, num_layers=2)
        x = lib.zeros(T, B, I)
        if case == "input_1d":
            return m(lib.zeros(I))
        if case == "input_4d":
            return m(lib.zeros(T, B, 1, I))
        if case == "input_size":
            return m(lib.zeros(T, B, I + 1))
        if case == "dtype":
            return m(x.double())
        if case == "h0_dtype":
            return m(x, hx_for(lib, name, 2, B, H).double() if name != "LSTM" else
                     (lib.zeros(2, B, H, dtype=lib.float64), lib.zeros(2, B, H)))
        if case == "h0_batch":
            return m(x, hx_for(lib, name, 2, B + 1, H))
        if case == "h0_layers":
            return m(x, hx_for(lib, name, 1, B, H))
        if case == "h0_features":
            return m(x, hx_for(lib, name, 2, B, H - 1))
        if case == "h0_rank_batched":
            return m(x, hx_for(lib, name, 2, H))
        if case == "h0_rank_unbatched":
            return m(lib.zeros(T, I), hx_for(lib, name, 2, 1, H))
        return m(x, (lib.zeros(2, B, H), lib.zeros(2, B, H + 1)))
    if (name, case) == ("LSTM", "h0_dtype"):  # torch's message comes from its mkldnn kernel
        with pytest.raises(RuntimeError, match="same dtype"):
            fn(ember)
        with pytest.raises(RuntimeError):
            fn(torch)
        return
    check_same_error(fn)


# ---- cells ------------------------------------------------------------------------------------
@pytest.mark.parametrize("with_hx", [False, True], ids=["zeros", "hx"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("name,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                         ("LSTMCell", {}), ("GRUCell", {}),
                                         ("GRUCell", {"bias": False}),
                                         ("LSTMCell", {"bias": False})])
def test_cell_matches_torch(name, kwargs, batched, with_hx):
    em, tm = pair(name, I, H, **kwargs)
    x = data(B, I) if batched else data(I)
    states = []
    if with_hx:
        shape = (B, H) if batched else (H,)
        states = [data(*shape, seed=1 + k) for k in range(2 if name == "LSTMCell" else 1)]
    compare_run(em, tm, x, states, forward)


def test_cell_unrolled_over_time_matches_torch():
    """The usual loop over an LSTMCell: gradients flow through every step's state."""
    em, tm = pair("LSTMCell", I, H)

    def call(lib, m, x, hx):
        h, c = hx
        outs = []
        for t in range(x.shape[0]):
            h, c = m(x[t], (h, c))
            outs.append(h)
        return lib.stack(outs), c

    compare_run(em, tm, data(T, B, I), [data(B, H, seed=1), data(B, H, seed=2)], call)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("case", ["input_3d", "hx_3d", "input_size", "hx_batch", "hx_features",
                                  "unbatched_input_batched_hx", "batched_input_1d_hx",
                                  "hx_dtype"])
def test_cell_errors(name, case):
    def fn(lib):
        m = getattr(lib.nn, name)(I, H)

        def hx(*shape):
            return (lib.zeros(*shape), lib.zeros(*shape)) if name == "LSTMCell" \
                else lib.zeros(*shape)
        if case == "input_3d":
            return m(lib.zeros(1, B, I))
        if case == "hx_3d":
            return m(lib.zeros(B, I), hx(1, B, H))
        if case == "input_size":
            return m(lib.zeros(B, I + 1))
        if case == "hx_batch":
            return m(lib.zeros(B, I), hx(B + 1, H))
        if case == "hx_features":
            return m(lib.zeros(B, I), hx(B, H + 1))
        if case == "hx_dtype":
            return m(lib.zeros(B, I), hx(B, H).double() if name != "LSTMCell" else
                     (lib.zeros(B, H, dtype=lib.float64), lib.zeros(B, H)))
        if case == "unbatched_input_batched_hx":
            return m(lib.zeros(I), hx(B, H))
        return m(lib.zeros(H, I), hx(H))
    check_same_error(fn)


# ---- a whole model: word_language_model's RNNModel --------------------------------------------
def test_lstm_language_model_matches_torch():
    """Embedding -> 2-layer LSTM -> Linear decoder with cross entropy over the next token, as
    pytorch/examples' word_language_model (dropout off); torch's weights loaded into ember give
    torch's loss, final state and every parameter gradient."""
    vocab, emsize, nhid, seq, batch = 50, 8, 10, 7, 4

    def model(lib):
        class RNNModel(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = lib.nn.Embedding(vocab, emsize)
                self.rnn = lib.nn.LSTM(emsize, nhid, 2)
                self.decoder = lib.nn.Linear(nhid, vocab)

            def forward(self, input, hidden):
                output, hidden = self.rnn(self.encoder(input), hidden)
                return self.decoder(output).view(-1, vocab), hidden
        return RNNModel()

    tm = model(torch)
    em = model(ember)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tokens = np.random.default_rng(0).integers(0, vocab, (seq + 1, batch))
    results = {}
    for lib, m in ((ember, em), (torch, tm)):
        src, tgt = lib.tensor(tokens[:-1]), lib.tensor(tokens[1:]).reshape(-1)
        hidden = (lib.zeros(2, batch, nhid), lib.zeros(2, batch, nhid))
        for _ in range(2):  # the second batch starts from the first one's detached state
            out, hidden = m(src, hidden)
            loss = lib.nn.functional.cross_entropy(out, tgt)
            m.zero_grad()
            loss.backward()
            hidden = tuple(h.detach() for h in hidden)
        results[lib] = (loss, hidden, {n: p.grad for n, p in m.named_parameters()})
    (loss_e, hid_e, grads_e), (loss_t, hid_t, grads_t) = results[ember], results[torch]
    assert_same(loss_e, loss_t, atol=ATOL, rtol=RTOL)
    assert_same(hid_e, hid_t, atol=ATOL, rtol=RTOL)
    assert list(grads_e) == list(grads_t)
    for n in grads_t:
        assert_same(grads_e[n], grads_t[n], atol=ATOL, rtol=RTOL, path=n)


# ---- nn.utils.rnn -----------------------------------------------------------------------------
def rnn_utils(lib):
    return lib.nn.utils.rnn


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_sequence(batch_first, enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = data(4, 5, 2) if batch_first else data(5, 4, 2)

    def call(lib, m, x, hx):
        return tuple(rnn_utils(lib).pack_padded_sequence(x, lib.tensor(lengths),
                                                         batch_first=batch_first,
                                                         enforce_sorted=enforce_sorted))
    compare_run(ember.nn.Identity(), torch.nn.Identity(), x, [], call)


@pytest.mark.parametrize("total_length", [None, 7])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pad_packed_sequence(enforce_sorted, batch_first, total_length):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]

    def call(lib, m, x, hx):
        R = rnn_utils(lib)
        packed = R.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        return R.pad_packed_sequence(packed, batch_first=batch_first, padding_value=-1.5,
                                     total_length=total_length)
    compare_run(ember.nn.Identity(), torch.nn.Identity(), data(5, 4, 3), [], call)


@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(batch_first, padding_side):
    seqs = [data(3, 2, seed=0), data(5, 2, seed=1), data(1, 2, seed=2)]
    results = {}
    for lib in (ember, torch):
        xs = [leaf(lib, s) for s in seqs]
        out = rnn_utils(lib).pad_sequence(xs, batch_first=batch_first, padding_value=2.0,
                                          padding_side=padding_side)
        _weighted_loss([out]).backward()
        results[lib] = (out, [x.grad for x in xs])
    assert_same(results[ember], results[torch])


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_unpack_sequence(enforce_sorted):
    seqs = [data(5, 2, seed=0), data(3, 2, seed=1), data(1, 2, seed=2)]
    if not enforce_sorted:
        seqs = seqs[::-1]
    results = {}
    for lib in (ember, torch):
        R = rnn_utils(lib)
        xs = [leaf(lib, s) for s in seqs]
        packed = R.pack_sequence(xs, enforce_sorted=enforce_sorted)
        unpacked = R.unpack_sequence(packed)
        padded, lengths = R.pad_packed_sequence(packed, batch_first=True)
        unpadded = R.unpad_sequence(padded, lengths, batch_first=True)
        _weighted_loss(unpacked + unpadded).backward()
        results[lib] = (tuple(packed), unpacked, unpadded, [x.grad for x in xs])
    assert_same(results[ember], results[torch])


def test_unpad_sequence_time_major():
    def call(lib, m, x, hx):
        return rnn_utils(lib).unpad_sequence(x * 1, lib.tensor([4, 2, 3]))  # torch transposes
        # its argument in place, which a leaf refuses
    compare_run(ember.nn.Identity(), torch.nn.Identity(), data(4, 3, 2), [], call)


def test_packed_sequence_fields_and_conversions():
    results = {}
    for lib in (ember, torch):
        R = rnn_utils(lib)
        packed = R.pack_sequence([lib.tensor(data(2, 3)), lib.tensor(data(4, 3, seed=1))],
                                 enforce_sorted=False)
        as_double = packed.double()
        results[lib] = (str(packed), packed._fields, as_double.data, as_double.sorted_indices,
                        as_double.unsorted_indices, packed.to(packed.data.dtype) is packed,
                        packed.float() is packed, packed.is_cuda,
                        tuple(R.PackedSequence(packed.data, packed.batch_sizes)),
                        tuple(R.PackedSequence((packed.data, packed.batch_sizes))),
                        R.invert_permutation(lib.tensor([2, 0, 1])))
    assert_same(results[ember], results[torch])


@pytest.mark.parametrize("case", ["unsorted", "zero_length", "too_many_lengths", "lengths_2d",
                                  "total_length", "empty_list", "padding_side", "not_iterable",
                                  "feature_mismatch"])
def test_packing_errors(case):
    def fn(lib):
        R = rnn_utils(lib)
        x = lib.zeros(4, 3, 2)
        if case == "unsorted":
            return R.pack_padded_sequence(x, [1, 3, 2])
        if case == "zero_length":
            return R.pack_padded_sequence(x, [3, 0, 0])
        if case == "too_many_lengths":
            return R.pack_padded_sequence(x, [3, 2])
        if case == "lengths_2d":
            return R.pack_padded_sequence(x, lib.tensor([[3, 2, 1]]))
        if case == "total_length":
            return R.pad_packed_sequence(R.pack_padded_sequence(x, [4, 2, 1]), total_length=3)
        if case == "empty_list":
            return R.pad_sequence([])
        if case == "padding_side":
            return R.pad_sequence([lib.zeros(2, 3)], padding_side="middle")
        if case == "not_iterable":
            return R.pad_sequence(5)
        return R.pad_sequence([lib.zeros(2, 3), lib.zeros(3, 4)])
    check_same_error(fn)
