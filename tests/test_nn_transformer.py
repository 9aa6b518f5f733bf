"""nn.MultiheadAttention and the Transformer layers against PyTorch: each module is built in
both libraries with torch's state dict copied into ember's, run on the same inputs and masks,
and compared in outputs, attention weights, input gradients and parameter gradients; seeded
initialisation, reprs, state-dict keys, warnings and errors on bad input as well."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
from _torch_oracle import assert_same, check_raises, _tensors, _weighted_loss  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True",
                                        "ignore:The PyTorch API of nested tensors")

ATOL, RTOL = 2e-5, 1e-4
L, S, N, E, H = 4, 5, 3, 8, 2  # target length, source length, batch, embed dim, heads


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _lib_of(mod):
    return torch if isinstance(mod, torch.nn.Module) else ember


def _pair(make, seed=0):
    """make(lib) in both libraries, torch's parameters and buffers copied into ember's."""
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod, e_mod = make(torch), make(ember)
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                           for k, v in t_mod.state_dict().items()})
    return t_mod, e_mod


def _assert_same_init(e_mod, t_mod):
    """The same repr, state-dict keys and (seeded) parameter values, exactly."""
    assert repr(e_mod) == repr(t_mod)
    e_sd, t_sd = e_mod.state_dict(), t_mod.state_dict()
    assert list(e_sd) == list(t_sd)
    for k in t_sd:
        assert_same(e_sd[k], t_sd[k], atol=0, rtol=0, path=k)


def _compare(t_mod, e_mod, call, inputs, consts=None, grad=True, atol=ATOL, rtol=RTOL):
    """call(module, *inputs, **consts) in both: outputs, then the gradients of a fixed
    weighted sum of the outputs with respect to every float input and every parameter."""
    consts = consts or {}
    outs = []
    for mod in (e_mod, t_mod):
        lib = _lib_of(mod)
        ins = [lib.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f") for a in inputs]
        kw = {k: lib.tensor(v.copy()) for k, v in consts.items()}
        out = call(mod, *ins, **kw)
        if grad:
            _weighted_loss(_tensors(out)).backward()
        outs.append((out, ins))
    (out_e, ins_e), (out_t, ins_t) = outs
    assert_same(out_e, out_t, atol=atol, rtol=rtol)
    if not grad:
        return
    for i, (xe, xt) in enumerate(zip(ins_e, ins_t)):
        if xt.requires_grad:
            assert_same(xe.grad, xt.grad, atol=atol, rtol=rtol, path=f"input {i} grad")
    e_params = dict(e_mod.named_parameters())
    for name, pt in t_mod.named_parameters():
        assert_same(e_params[name].grad, pt.grad, atol=atol, rtol=rtol, path=f"{name}.grad")


# ---- MultiheadAttention ------------------------------------------------------------------------
def _self(m, x, **kw):
    return m(x, x, x, **kw)


def _cross(m, q, kv, **kw):
    return m(q, kv, kv, **kw)


def _separate(m, q, k, v, **kw):
    return m(q, k, v, **kw)


def _causal(n):
    return np.triu(np.ones((n, n), bool), 1)


def _padding(n, s):
    """A key-padding mask (True = padded) that leaves every sequence some keys."""
    mask = np.zeros((n, s), bool)
    mask[0, -2:] = True
    mask[-1, -1] = True
    return mask


def _float(mask, seed=1):
    """An additive mask: -inf where `mask` is True, small finite values elsewhere."""
    return np.where(mask, -np.inf, 0.1 * _data(*mask.shape, seed=seed)).astype(np.float32)


_BOOL_LS = _causal(S)[:L] & ~np.eye(L, S, dtype=bool)  # keeps column 0 in every row

MHA_CASES = {
    "self": ({}, _self, [_data(L, N, E)], {}),
    "self_bool_causal": ({}, _self, [_data(L, N, E)], {"attn_mask": _causal(L)}),
    "self_float_mask_and_padding": ({}, _self, [_data(L, N, E)],
                                    {"attn_mask": _float(_causal(L)),
                                     "key_padding_mask": _float(_padding(N, L), seed=2)}),
    "cross_padding": ({}, _cross, [_data(L, N, E), _data(S, N, E, seed=1)],
                      {"key_padding_mask": _padding(N, S)}),
    "separate_3d_float_mask": ({}, _separate,
                               [_data(L, N, E), _data(S, N, E, seed=1), _data(S, N, E, seed=2)],
                               {"attn_mask": _float(np.zeros((N * H, L, S), bool)),
                                "key_padding_mask": _float(_padding(N, S), seed=3)}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, _separate,
                  [_data(L, N, E), _data(S, N, 3, seed=1), _data(S, N, 5, seed=2)],
                  {"attn_mask": _BOOL_LS}),
    "bias_kv": ({"add_bias_kv": True}, _self, [_data(L, N, E)],
                {"attn_mask": _causal(L), "key_padding_mask": _padding(N, L)}),
    "zero_attn": ({"add_zero_attn": True}, _cross, [_data(L, N, E), _data(S, N, E, seed=1)],
                  {"attn_mask": _float(_BOOL_LS), "key_padding_mask": _float(_padding(N, S))}),
    "bias_kv_zero_attn_no_bias": ({"add_bias_kv": True, "add_zero_attn": True, "bias": False},
                                  _self, [_data(L, N, E)], {}),
    "batch_first_self": ({"batch_first": True}, _self, [_data(N, L, E)],
                         {"key_padding_mask": _padding(N, L)}),
    "batch_first_separate": ({"batch_first": True}, _separate,
                             [_data(N, L, E), _data(N, S, E, seed=1), _data(N, S, E, seed=2)],
                             {"attn_mask": _BOOL_LS}),
    "unbatched_cross": ({}, _cross, [_data(L, E), _data(S, E, seed=1)],
                        {"key_padding_mask": _padding(1, S)[0]}),
    "unbatched_3d_mask": ({"batch_first": True}, _self, [_data(L, E)],
                          {"attn_mask": np.broadcast_to(_causal(L), (H, L, L)).copy()}),
    "kdim_vdim_unbatched_bias_kv": ({"kdim": 3, "vdim": 5, "add_bias_kv": True}, _separate,
                                    [_data(L, E), _data(S, 3, seed=1), _data(S, 5, seed=2)],
                                    {}),
}

WEIGHT_MODES = [(True, True), (True, False), (False, True)]


@pytest.mark.parametrize("need_weights,average", WEIGHT_MODES,
                         ids=["avg_weights", "head_weights", "no_weights"])
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention(case, need_weights, average):
    kwargs, call, inputs, masks = MHA_CASES[case]
    t_mod, e_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, H, **kwargs))
    _compare(t_mod, e_mod,
             lambda m, *ins, **kw: call(m, *ins, need_weights=need_weights,
                                        average_attn_weights=average, **kw),
             inputs, masks)


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_is_causal_hint(need_weights):
    t_mod, e_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, H, batch_first=True))
    _compare(t_mod, e_mod, lambda m, x, attn_mask: m(x, x, x, attn_mask=attn_mask,
                                                     is_causal=True, need_weights=need_weights),
             [_data(N, L, E)], {"attn_mask": _causal(L)})


def test_multihead_attention_fully_padded_sequence_gives_zeros():
    """Without weights, a query that may attend to no key gets zeros (PyTorch's safe softmax),
    with zero gradient, not NaN."""
    padding = np.zeros((N, S), bool)
    padding[1] = True
    t_mod, e_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, H))
    _compare(t_mod, e_mod, lambda m, q, kv, mask: m(q, kv, kv, key_padding_mask=mask,
                                                    need_weights=False),
             [_data(L, N, E), _data(S, N, E, seed=1)], {"mask": padding})


def test_multihead_attention_eval_matches_fast_path():
    """In eval mode without grad PyTorch runs its fused kernel; ember's composite computation
    gives the same numbers."""
    t_mod, e_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, H, batch_first=True))
    t_mod.eval(), e_mod.eval()
    with torch.no_grad(), ember.no_grad():
        _compare(t_mod, e_mod, lambda m, x, mask: m(x, x, x, key_padding_mask=mask),
                 [_data(N, L, E)], {"mask": _padding(N, L)}, grad=False)


def test_multihead_attention_dropout_is_off_in_eval():
    t_mod, e_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, H, dropout=0.5))
    t_mod.eval(), e_mod.eval()
    _compare(t_mod, e_mod, _self, [_data(L, N, E)])


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True},
                                    {"bias": False, "dtype": "float64"}],
                         ids=["packed", "separate", "bias_kv", "no_bias_float64"])
def test_multihead_attention_seeded_init_state_dict_and_repr(kwargs):
    def make(lib):
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(lib, kw["dtype"])
        lib.manual_seed(7)
        return lib.nn.MultiheadAttention(E, H, **kw)
    e_mod, t_mod = make(ember), make(torch)
    _assert_same_init(e_mod, t_mod)
    for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                 "in_proj_bias", "bias_k", "bias_v"):
        assert (getattr(e_mod, name) is None) == (getattr(t_mod, name) is None), name
    for attr in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads", "head_dim",
                 "dropout", "batch_first", "add_zero_attn"):
        assert getattr(e_mod, attr) == getattr(t_mod, attr), attr


def test_multihead_attention_gradcheck_float64():
    ember.manual_seed(0)
    mha = ember.nn.MultiheadAttention(4, 2, add_bias_kv=True, dtype=ember.float64)
    q = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    kv = ember.randn(5, 2, 4, dtype=ember.float64, requires_grad=True)
    mask = ember.tensor(_padding(2, 5))
    assert ember.autograd.gradcheck(
        lambda q, kv: mha(q, kv, kv, key_padding_mask=mask, average_attn_weights=False),
        (q, kv))


MHA_ERRORS = {
    "zero_embed_dim": lambda lib: lib.nn.MultiheadAttention(0, 2),
    "heads_do_not_divide": lambda lib: lib.nn.MultiheadAttention(7, 2),
    "4d_query": lambda lib: lib.nn.MultiheadAttention(4, 2)(*[lib.zeros(1, 3, 2, 4)] * 3),
    "key_dims_differ": lambda lib: lib.nn.MultiheadAttention(4, 2)(
        lib.zeros(3, 2, 4), lib.zeros(3, 4), lib.zeros(3, 4)),
    "int_mask": lambda lib: _self(lib.nn.MultiheadAttention(4, 2), lib.zeros(3, 2, 4),
                                  attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
    "attn_mask_shape": lambda lib: _self(lib.nn.MultiheadAttention(4, 2), lib.zeros(3, 2, 4),
                                         attn_mask=lib.zeros(3, 2)),
    "attn_mask_3d_shape": lambda lib: _self(lib.nn.MultiheadAttention(4, 2),
                                            lib.zeros(3, 2, 4), attn_mask=lib.zeros(2, 3, 3)),
    "padding_shape": lambda lib: _self(lib.nn.MultiheadAttention(4, 2), lib.zeros(3, 2, 4),
                                       key_padding_mask=lib.zeros(2, 4, dtype=lib.bool)),
    "is_causal_without_mask": lambda lib: _self(lib.nn.MultiheadAttention(4, 2),
                                                lib.zeros(3, 2, 4), is_causal=True),
    "embed_dim_mismatch": lambda lib: _self(lib.nn.MultiheadAttention(4, 2),
                                            lib.zeros(3, 2, 6)),
}


@pytest.mark.parametrize("case", list(MHA_ERRORS))
def test_multihead_attention_errors(case):
    check_raises(MHA_ERRORS[case])


def test_mismatched_mask_types_warn_like_torch():
    for lib in (torch, ember):
        mha = lib.nn.MultiheadAttention(4, 2)
        x = lib.zeros(3, 2, 4)
        with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                             "attn_mask is deprecated"):
            mha(x, x, x, key_padding_mask=lib.zeros(2, 3, dtype=lib.bool),
                attn_mask=lib.zeros(3, 3))


# ---- encoder and decoder layers ---------------------------------------------------------------
def _activation(lib, name):
    return {"relu": "relu", "gelu": "gelu", "gelu_module": lib.nn.GELU(),
            "silu_fn": lib.nn.functional.silu}[name]


LAYER_OPTIONS = [(False, "relu", False), (True, "gelu", False), (False, "gelu_module", True),
                 (True, "silu_fn", True)]
LAYER_IDS = ["post_norm_relu", "pre_norm_gelu", "post_norm_gelu_module_batch_first",
             "pre_norm_silu_batch_first"]


def _seq(batch_first, length, seed=0):
    return _data(N, length, E, seed=seed) if batch_first else _data(length, N, E, seed=seed)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("norm_first,activation,batch_first", LAYER_OPTIONS, ids=LAYER_IDS)
def test_encoder_layer(norm_first, activation, batch_first, train):
    t_mod, e_mod = _pair(lambda lib: lib.nn.TransformerEncoderLayer(
        E, H, dim_feedforward=16, dropout=0.0, activation=_activation(lib, activation),
        batch_first=batch_first, norm_first=norm_first, layer_norm_eps=1e-6))
    t_mod.train(train), e_mod.train(train)
    _compare(t_mod, e_mod,
             lambda m, x, mask, padding: m(x, src_mask=mask, src_key_padding_mask=padding),
             [_seq(batch_first, L)], {"mask": _causal(L), "padding": _padding(N, L)})
    assert e_mod.activation_relu_or_gelu == t_mod.activation_relu_or_gelu


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("norm_first,activation,batch_first", LAYER_OPTIONS, ids=LAYER_IDS)
def test_decoder_layer(norm_first, activation, batch_first, train):
    t_mod, e_mod = _pair(lambda lib: lib.nn.TransformerDecoderLayer(
        E, H, dim_feedforward=16, dropout=0.0, activation=_activation(lib, activation),
        batch_first=batch_first, norm_first=norm_first))
    t_mod.train(train), e_mod.train(train)
    _compare(t_mod, e_mod,
             lambda m, tgt, mem, mask, padding: m(tgt, mem, tgt_mask=mask,
                                                  memory_key_padding_mask=padding,
                                                  tgt_is_causal=True),
             [_seq(batch_first, L), _seq(batch_first, S, seed=1)],
             {"mask": _float(_causal(L)), "padding": _padding(N, S)})


def test_encoder_layer_bias_false_and_unbatched():
    t_mod, e_mod = _pair(lambda lib: lib.nn.TransformerEncoderLayer(
        E, H, dim_feedforward=16, dropout=0.0, bias=False))
    _compare(t_mod, e_mod, lambda m, x: m(x), [_data(L, E)])


def test_encoder_layer_eval_matches_fast_path():
    t_mod, e_mod = _pair(lambda lib: lib.nn.TransformerEncoderLayer(
        E, H, dim_feedforward=16, batch_first=True))
    t_mod.eval(), e_mod.eval()
    with torch.no_grad(), ember.no_grad():
        _compare(t_mod, e_mod, lambda m, x, padding: m(x, src_key_padding_mask=padding),
                 [_data(N, L, E)], {"padding": _padding(N, L)}, grad=False)


def test_bad_activation_raises():
    check_raises(lambda lib: lib.nn.TransformerEncoderLayer(E, H, activation="tanh"))
    check_raises(lambda lib: lib.nn.TransformerDecoderLayer(E, H, activation="tanh"))


# ---- stacks and nn.Transformer ----------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack_clones_layers_and_matches(batch_first):
    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, batch_first=batch_first)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(E),
                                         enable_nested_tensor=False)
    t_mod, e_mod = _pair(make)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    first, second = e_mod.layers[0].linear1.weight, e_mod.layers[1].linear1.weight
    assert first is not second and first.data_ptr() != second.data_ptr()
    _compare(t_mod, e_mod, lambda m, x, mask: m(x, mask=mask), [_seq(batch_first, L)],
             {"mask": _float(_causal(L))})


def test_encoder_nested_tensor_path_zeros_padded_positions():
    """In eval mode without grad, PyTorch's encoder packs a padded batch into a nested tensor
    and pads the result with zeros; ember gives the same output."""
    padding = np.zeros((N, L), bool)
    padding[0, 2:] = True
    padding[2, 3:] = True

    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=True)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(E))
    t_mod, e_mod = _pair(make)
    t_mod.eval(), e_mod.eval()
    with torch.no_grad(), ember.no_grad():
        _compare(t_mod, e_mod, lambda m, x, padding: m(x, src_key_padding_mask=padding),
                 [_data(N, L, E)], {"padding": padding}, grad=False)


def test_encoder_nested_tensor_warning_matches_torch():
    messages = []
    for lib in (torch, ember):
        layer = lib.nn.TransformerEncoderLayer(E, H, 16, norm_first=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            enc = lib.nn.TransformerEncoder(layer, 1)
        messages.append(([str(w.message) for w in caught], enc.use_nested_tensor))
    assert messages[0] == messages[1]


def test_decoder_stack():
    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(E, H, 16, dropout=0.0, norm_first=True)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(E))
    t_mod, e_mod = _pair(make)
    _compare(t_mod, e_mod, lambda m, tgt, mem, mask: m(tgt, mem, tgt_mask=mask),
             [_data(L, N, E), _data(S, N, E, seed=1)], {"mask": _float(_causal(L))})


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_forward_with_masks(batch_first):
    t_mod, e_mod = _pair(lambda lib: lib.nn.Transformer(
        E, H, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16, dropout=0.0,
        batch_first=batch_first, activation="gelu"))
    src_padding = _padding(N, S)

    def call(m, src, tgt, tgt_mask, src_padding):
        return m(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_padding,
                 memory_key_padding_mask=src_padding)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(L).numpy()
    _compare(t_mod, e_mod, call, [_seq(batch_first, S), _seq(batch_first, L, seed=1)],
             {"tgt_mask": tgt_mask, "src_padding": src_padding})


SEEDED = {
    "transformer": lambda lib: lib.nn.Transformer(E, H, 1, 1, 16),
    "encoder_layer": lambda lib: lib.nn.TransformerEncoderLayer(
        E, H, 16, activation="gelu", norm_first=True, layer_norm_eps=1e-6, bias=False),
    "decoder_stack": lambda lib: lib.nn.TransformerDecoder(
        lib.nn.TransformerDecoderLayer(E, H, 16, dropout=0.2, batch_first=True), 2),
}


@pytest.mark.parametrize("case", list(SEEDED))
def test_seeded_init_and_repr(case):
    def make(lib):
        lib.manual_seed(3)
        return SEEDED[case](lib)
    e_mod, t_mod = make(ember), make(torch)
    _assert_same_init(e_mod, t_mod)


@pytest.mark.parametrize("dtype", [None, "float64"])
def test_generate_square_subsequent_mask(dtype):
    e = ember.nn.Transformer.generate_square_subsequent_mask(
        4, dtype=None if dtype is None else getattr(ember, dtype))
    t = torch.nn.Transformer.generate_square_subsequent_mask(
        4, dtype=None if dtype is None else getattr(torch, dtype))
    assert_same(e, t, atol=0, rtol=0)


def test_transformer_errors():
    check_raises(lambda lib: lib.nn.Transformer(E, H, 1, 1, 16)(lib.zeros(3, 2, E),
                                                                lib.zeros(3, 4, E)))
    check_raises(lambda lib: lib.nn.Transformer(E, H, 1, 1, 16)(lib.zeros(3, 2, E),
                                                                lib.zeros(3, 2, 6)))


# ---- a small classifier: embedding, encoder, mean-pool, linear ---------------------------------
def _classifier(lib):
    class Classifier(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = lib.nn.Embedding(20, 16)
            layer = lib.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
            self.encoder = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(16))
            self.head = lib.nn.Linear(16, 3)

        def forward(self, tokens, padding):
            h = self.encoder(self.embed(tokens), src_key_padding_mask=padding)
            return self.head(h.mean(1))
    return Classifier()


def test_transformer_classifier_output_and_gradients():
    t_mod, e_mod = _pair(_classifier)
    tokens = np.random.default_rng(0).integers(0, 20, (4, 7))
    labels = np.array([0, 2, 1, 2])
    padding = np.zeros((4, 7), bool)
    padding[1, 5:] = True

    def loss(m, tokens, labels, padding):
        lib = _lib_of(m)
        logits = m(tokens, padding)
        return logits, lib.nn.functional.cross_entropy(logits, labels)
    _compare(t_mod, e_mod, loss, [tokens, labels], {"padding": padding})


def test_functional_multi_head_attention_forward():
    """The functional form with explicit weights, in eval mode (no dropout), per-head weights."""
    t_mod, e_mod = _pair(lambda lib: lib.nn.MultiheadAttention(E, H, add_bias_kv=True))

    def call(m, q, kv, mask):
        lib = _lib_of(m)
        return lib.nn.functional.multi_head_attention_forward(
            q, kv, kv, E, H, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, True, 0.5,
            m.out_proj.weight, m.out_proj.bias, training=False, attn_mask=mask,
            average_attn_weights=False)
    _compare(t_mod, e_mod, call, [_data(L, N, E), _data(S, N, E, seed=1)], {"mask": _BOOL_LS})


@pytest.mark.parametrize("mask_dims", [None, 2, 3])
@pytest.mark.parametrize("with_padding", [False, True])
def test_merge_masks(mask_dims, with_padding):
    masks = {}
    if mask_dims is not None:
        masks["attn_mask"] = _float(_causal(L) if mask_dims == 2 else
                                    np.broadcast_to(_causal(L), (N * H, L, L)).copy())
    if with_padding:
        masks["key_padding_mask"] = _float(_padding(N, L), seed=2)
    results = []
    for lib in (ember, torch):
        mha = lib.nn.MultiheadAttention(E, H, batch_first=True)
        kw = {k: lib.tensor(v) for k, v in masks.items()}
        results.append(mha.merge_masks(kw.get("attn_mask"), kw.get("key_padding_mask"),
                                       lib.zeros(N, L, E)))
    assert_same(*results)
