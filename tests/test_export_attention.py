"""ember.export of attention and recurrent layers against torch.export (torch 2.13,
non-strict): nn.MultiheadAttention (batch_first either way, need_weights either way, float and
boolean attention masks, key padding masks, train and eval), F.scaled_dot_product_attention,
TransformerEncoderLayer/TransformerEncoder and nn.GRU/RNN/LSTM record torch's graph node for node
(targets, arguments, names, node.meta["val"] shapes and dtypes) before run_decompositions; the
programs' outputs equal torch's before and after it. Then the same models through
ember.onnx.export in ONNX Runtime, against ember's eager results, with dynamic batch axes."""
import warnings

import numpy as np
import pytest

import ember
from ember.utils import _pytree as pytree

torch = pytest.importorskip("torch", reason="torch is the oracle for ember.export")
from test_export import (twins, pair, t_export, node_sequence, signature, readable,  # noqa: E402
                         assert_close)


def values(ep):
    """Each node's node.meta["val"] as (shape, dtype name), tuples for several results."""
    def one(v):
        return None if v is None else (tuple(v.shape), str(v.dtype).split(".")[-1])
    out = []
    for n in ep.graph.nodes:
        v = n.meta.get("val")
        if isinstance(v, (tuple, list)):
            out.append((n.name, [one(x) for x in v]))
        elif hasattr(v, "shape"):
            out.append((n.name, one(v)))
    return out


def assert_same_graph(eep, tep):
    """Two exported programs with the same nodes, signature, code and node values."""
    assert node_sequence(eep) == node_sequence(tep)
    assert signature(eep) == signature(tep)
    assert readable(eep) == readable(tep)
    assert values(eep) == values(tep)


def bool_pair(a):
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def causal_bool():
    return bool_pair(np.triu(np.ones((3, 3), bool), 1))


def padding_mask():
    a = np.zeros((2, 3), bool)
    a[0, 2] = True
    return bool_pair(a)


def assert_exports_equal(make, inputs, training=False, decompose=True, decomposed_graph=False):
    """The exported graphs equal torch's (and the decomposed ones too with decomposed_graph);
    the programs (and the decomposed ones) compute torch's results."""
    em, tm = twins(make)
    em.train(training), tm.train(training)
    eargs, targs = zip(*inputs)
    eep, tep = ember.export.export(em, eargs), t_export(tm, targs)
    assert_same_graph(eep, tep)
    programs = [(eep, tep)]
    if decompose:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            programs.append((eep.run_decompositions(), tep.run_decompositions()))
        if decomposed_graph:
            assert_same_graph(*programs[1])
    for e, t in programs:
        ember.manual_seed(3), torch.manual_seed(3)
        for eo, to in zip(pytree.tree_leaves(e.module()(*eargs)),
                          pytree.tree_leaves(t.module()(*targs))):
            if training:   # dropout draws differ between the libraries: compare shapes
                assert tuple(eo.shape) == tuple(to.shape)
            else:
                assert_close(eo, to)
    return eep


def attention(batch_first, need_weights, mask=None, key_padding=False, average=True):
    def make(lib):
        lib.manual_seed(0)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = lib.nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=batch_first)

            def forward(self, x, *masks):
                kw = {}
                if mask is not None:
                    kw["attn_mask"] = masks[0]
                if key_padding:
                    kw["key_padding_mask"] = masks[-1]
                out = self.attn(x, x, x, need_weights=need_weights,
                                average_attn_weights=average, **kw)
                return out if need_weights else out[0]
        return M()
    return make


def masks(mask, key_padding):
    out = []
    if mask == "float":
        out.append(pair(3, 3, seed=5))
    if mask == "bool":
        out.append(causal_bool())
    if key_padding:
        out.append(padding_mask())
    return out


@pytest.mark.parametrize("batch_first,need_weights,mask,key_padding,training", [
    (True, False, None, False, False), (False, False, None, False, True),
    (True, True, None, False, False), (False, True, "float", False, True),
    (True, False, "bool", True, False), (True, True, "bool", True, False),
    (False, False, "float", True, True), (True, True, None, True, False),
    (False, False, "float", False, False), (False, True, None, False, False)])
def test_multihead_attention_graph_equals_torchs(batch_first, need_weights, mask, key_padding,
                                                  training):
    """torch's ops inside: unflatten/unsqueeze/transpose/squeeze/contiguous and select for the
    packed projection, view + transpose into heads, scaled_dot_product_attention (or bmm /
    baddbmm, softmax and mean for the weights), masks made float by zeros_like + masked_fill_.
    Without masks made from booleans or key padding (and a float mask only for sdpa),
    run_decompositions gives torch's graph too: linear as addmm or expand/bmm + add, the heads'
    transposes as permutes, sdpa as mul.Scalar-scaled q and k^T, bmm, _safe_softmax and the
    fused CPU kernel's permute/clone/permute."""
    shape = (2, 3, 8) if batch_first else (3, 2, 8)
    lowered_as_torch = not training and not key_padding and (
        mask is None or mask == "float" and not need_weights)
    ep = assert_exports_equal(attention(batch_first, need_weights, mask, key_padding),
                              [pair(*shape)] + masks(mask, key_padding), training,
                              decompose=not training, decomposed_graph=lowered_as_torch)
    code = ep.graph_module.code
    assert ("scaled_dot_product_attention" in code) != need_weights
    assert "unflatten.int" in code and "contiguous.default" in code


def test_per_head_weights_equal_torchs():
    assert_exports_equal(attention(True, True, average=False), [pair(2, 3, 8)])


@pytest.mark.parametrize("kind", ["plain", "causal", "float", "bool"])
def test_scaled_dot_product_attention_is_one_node_as_in_torch(kind):
    def make(lib):
        F = lib.nn.functional

        class M(lib.nn.Module):
            def forward(self, q, k, v, *m):
                if kind == "plain":
                    return F.scaled_dot_product_attention(q, k, v)
                if kind == "causal":
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
                return F.scaled_dot_product_attention(q, k, v, attn_mask=m[0])
        return M()
    inputs = [pair(2, 2, 3, 4, seed=i) for i in range(3)]
    if kind == "float":
        inputs.append(pair(3, 3, seed=7))
    if kind == "bool":
        inputs.append(bool_pair(np.tril(np.ones((3, 3), bool))))
    ep = assert_exports_equal(make, inputs, decomposed_graph=kind in ("plain", "float"))
    assert [n.name for n in ep.graph.nodes if n.op == "call_function"] == \
        ["scaled_dot_product_attention"]


def encoder_layer(batch_first, norm_first, activation="relu", layers=0, mask=False,
                  key_padding=False):
    def make(lib):
        lib.manual_seed(0)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1,
                                                       batch_first=batch_first,
                                                       norm_first=norm_first,
                                                       activation=activation)
                self.enc = lib.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False) \
                    if layers else layer

            def forward(self, x, *masks):
                kw = {}
                if mask:
                    kw["mask" if layers else "src_mask"] = masks[0]
                if key_padding:
                    kw["src_key_padding_mask"] = masks[-1]
                return self.enc(x, **kw)
        return M()
    return make


@pytest.mark.parametrize("batch_first,norm_first,training", [
    (True, False, True), (True, False, False), (False, True, True), (False, True, False)])
def test_transformer_encoder_layer_graph_equals_torchs(batch_first, norm_first, training):
    shape = (2, 3, 8) if batch_first else (3, 2, 8)
    assert_exports_equal(encoder_layer(batch_first, norm_first), [pair(*shape)], training,
                         decompose=not training, decomposed_graph=not training)


def test_transformer_encoder_layer_with_masks_and_gelu_equals_torchs():
    assert_exports_equal(encoder_layer(True, False, "gelu", mask=True, key_padding=True),
                         [pair(2, 3, 8), causal_bool(), padding_mask()])


def test_transformer_encoder_stack_equals_torchs():
    assert_exports_equal(encoder_layer(True, False, layers=2, key_padding=True),
                         [pair(2, 3, 8), padding_mask()], training=True, decompose=False)


def test_encoder_mask_without_is_causal_is_data_dependent_in_both():
    """TransformerEncoder compares a given mask with the causal one in Python
    (`_detect_is_causal_mask`): torch.export and ember.export both refuse to guard on it."""
    em, tm = twins(encoder_layer(True, False, layers=2, mask=True))
    (ex, tx), (em_, tm_) = pair(2, 3, 8), causal_bool()
    with pytest.raises(torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode):
        t_export(tm, (tx, tm_))
    with pytest.raises(ember.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode,
                       match="aten.all"):
        ember.export.export(em, (ex, em_))


@pytest.mark.parametrize("kind", ["GRU", "RNN", "LSTM"])
@pytest.mark.parametrize("batch_first,layers,bidirectional", [(True, 1, False),
                                                              (False, 2, True)])
def test_recurrent_layers_record_torchs_op(kind, batch_first, layers, bidirectional):
    """nn.GRU / nn.RNN / nn.LSTM on padded input record zeros states and one aten.gru.input /
    rnn_tanh.input / lstm.input, as torch's graphs do."""
    def make(lib):
        lib.manual_seed(0)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(lib.nn, kind)(4, 6, layers, batch_first=batch_first,
                                                 bidirectional=bidirectional)

            def forward(self, x):
                return self.rnn(x)
        return M()
    ep = assert_exports_equal(make, [pair(2, 5, 4) if batch_first else pair(5, 2, 4)],
                              decompose=False)
    op = {"GRU": "gru.input", "RNN": "rnn_tanh.input", "LSTM": "lstm.input"}[kind]
    assert f"aten.{op}(" in ep.graph_module.code
    edec = ep.run_decompositions()      # ember lowers to its per-layer _rnn_layer op
    x = ember.randn(*((2, 5, 4) if batch_first else (5, 2, 4)))
    for a, b in zip(pytree.tree_leaves(edec.module()(x)), pytree.tree_leaves(ep.module()(x))):
        assert_close(a, b)


# ---- ONNX ---------------------------------------------------------------------------------
def _onnx_session(model, args, **kwargs):
    pytest.importorskip("onnx", reason="ONNX export needs `pip install 'ember[onnx]'`")
    ort = pytest.importorskip("onnxruntime", reason="needs `pip install 'ember[onnx]'`")
    proto = ember.onnx.export(model, args, f=None, **kwargs)
    return ort.InferenceSession(proto.SerializeToString())


def _check_onnx(session, model, args):
    outs = session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})
    with ember.no_grad():
        ref = pytree.tree_leaves(model(*args))
    assert len(outs) == len(ref)
    for o, r in zip(outs, ref):
        np.testing.assert_allclose(o, r.numpy(), atol=1e-5)


class _Attention(ember.nn.Module):
    def __init__(self, need_weights):
        super().__init__()
        self.attn = ember.nn.MultiheadAttention(8, 2, batch_first=True)
        self.need_weights = need_weights

    def forward(self, x, *mask):
        out = self.attn(x, x, x, need_weights=self.need_weights,
                        attn_mask=mask[0] if mask else None)
        return out if self.need_weights else out[0]


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("mask", [None, "float", "bool"])
def test_attention_runs_in_onnx_runtime_with_a_dynamic_batch(need_weights, mask):
    """The heads' reshapes (batch * heads) follow the dynamic batch axis."""
    ember.manual_seed(0)
    model = _Attention(need_weights).eval()
    masks = ()
    if mask == "float":
        masks = (ember.randn(3, 3),)
    if mask == "bool":
        masks = (ember.triu(ember.ones(3, 3, dtype=ember.bool), 1),)
    x = ember.randn(2, 3, 8)
    session = _onnx_session(model, (x,) + masks, input_names=["x"],
                            dynamic_axes={"x": {0: "batch"}})
    for x in (x, ember.randn(5, 3, 8)):
        _check_onnx(session, model, (x,) + masks)


@pytest.mark.parametrize("exported", [False, True], ids=["module", "exported-program"])
def test_transformer_encoder_runs_in_onnx_runtime(exported):
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=exported,
                                             activation="gelu" if exported else "relu")
    model = ember.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = ember.randn(2, 3, 8)
    if exported:
        _check_onnx(_onnx_session(ember.export.export(model, (x,)), (x,)), model, (x,))
        return
    for axis in (0, 1):    # a dynamic batch, or a dynamic sequence length
        session = _onnx_session(model, (x,), input_names=["x"], dynamic_axes={"x": {axis: "n"}})
        for shape in ((2, 3, 8), (5, 3, 8) if axis == 0 else (2, 6, 8)):
            _check_onnx(session, model, (ember.randn(*shape),))


def test_reshape_with_two_dynamic_sizes_is_refused_by_name():
    model = _Attention(False).eval()
    with pytest.raises(ember.onnx.errors.OnnxExporterError, match="aten::view"):
        _onnx_session(model, (ember.randn(2, 3, 8),), input_names=["x"],
                      dynamic_axes={"x": {0: "batch", 1: "length"}})


@pytest.mark.parametrize("kind", ["GRU", "LSTM", "RNN"])
def test_recurrent_language_model_runs_in_onnx_runtime_with_dynamic_batch_and_length(kind):
    ember.manual_seed(0)

    class LM(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = ember.nn.Embedding(20, 8)
            self.rnn = getattr(ember.nn, kind)(8, 16, 2, batch_first=True)
            self.head = ember.nn.Linear(16, 20)

        def forward(self, tokens):
            out, _ = self.rnn(self.emb(tokens))
            return self.head(out)
    model = LM().eval()
    tokens = ember.randint(0, 20, (2, 5))
    session = _onnx_session(model, (tokens,), input_names=["tokens"],
                            dynamic_axes={"tokens": {0: "batch", 1: "length"}})
    for t in (tokens, ember.randint(0, 20, (4, 7))):
        _check_onnx(session, model, (t,))
