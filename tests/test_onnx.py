"""ember.onnx.export: each model is exported, passes onnx.checker, and ONNX Runtime reproduces
ember's eager outputs (float32, atol 1e-4); the node types match torch.onnx.export's (TorchScript
exporter, same opset) for the same model written for torch; Function.symbolic, custom symbolics,
dynamic axes and the errors behave as PyTorch's."""
import io
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx", reason="ember.onnx needs the onnx extra")
ort = pytest.importorskip("onnxruntime", reason="ember.onnx needs the onnx extra")

ATOL = 1e-4


def _run(model, args, dynamic_axes=None, **kwargs):
    """Export, check, run in ONNX Runtime; (ORT outputs, node types)."""
    f = io.BytesIO()
    ember.onnx.export(model, args, f, dynamic_axes=dynamic_axes, **kwargs)
    proto = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(proto)
    session = ort.InferenceSession(f.getvalue(), providers=["CPUExecutionProvider"])
    return session, [n.op_type for n in proto.graph.node]


def _check(model, *args, **kwargs):
    infos = ember.onnx.verify(model, args, atol=ATOL, rtol=0, **kwargs)
    assert infos and all(i.max_abs_diff <= ATOL for i in infos), infos
    return infos


def _randomize_batch_norm(model):
    """Running stats and affine parameters away from their initial values, so eval-mode batch
    norm (folded into Conv by the export) does something."""
    g = np.random.default_rng(0)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            c = m.num_features
            m.running_mean.copy_(ember.tensor(g.normal(0, 0.1, c).astype(np.float32)))
            m.running_var.copy_(ember.tensor(g.uniform(0.5, 1.5, c).astype(np.float32)))
            with ember.no_grad():
                m.weight.copy_(ember.tensor(g.uniform(0.5, 1.5, c).astype(np.float32)))
                m.bias.copy_(ember.tensor(g.normal(0, 0.1, c).astype(np.float32)))
    return model


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = ember.flatten(x, 1)
        return F.log_softmax(self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))), dim=1)


# ---- models: export -> checker -> ONNX Runtime == eager ------------------------------------
def test_lenet():
    ember.manual_seed(0)
    _check(LeNet(), ember.randn(2, 1, 28, 28))


def test_resnet18_and_batch_norm_folded_into_conv():
    from ember.vision import models
    ember.manual_seed(0)
    model = _randomize_batch_norm(models.resnet18(num_classes=10))
    _check(model, ember.randn(2, 3, 32, 32))
    _, types = _run(model, (ember.randn(1, 3, 32, 32),))
    assert "BatchNormalization" not in types and types.count("Conv") == 20
    assert model.training  # exported in eval mode, then given back its own mode


@pytest.mark.slow  # resnet18 exercises the same ops in a third of the time
def test_resnet50():
    from ember.vision import models
    ember.manual_seed(0)
    _check(_randomize_batch_norm(models.resnet50(num_classes=10)), ember.randn(1, 3, 32, 32))


def test_mobilenet_v2():
    from ember.vision import models
    ember.manual_seed(0)
    model = _randomize_batch_norm(models.mobilenet_v2(num_classes=10))
    with ember.no_grad():
        model.classifier[1].weight.normal_(0, 1)
    _check(model, ember.randn(1, 3, 32, 32))


def test_vgg_features_with_its_adaptive_pool():
    # vgg11's own classifier (25088 x 4096) takes minutes to initialise here; its feature stack,
    # its 7x7 adaptive pool and a small classifier are exported instead
    from ember.vision.models import vgg
    ember.manual_seed(0)
    model = nn.Sequential(vgg.make_layers(vgg.cfgs["A"], batch_norm=True),
                          nn.AdaptiveAvgPool2d((7, 7)), nn.Flatten(),
                          nn.Linear(512 * 49, 10))
    _check(_randomize_batch_norm(model), ember.randn(1, 3, 32, 32))


class WordLM(nn.Module):
    """pytorch/examples' word_language_model: embedding, LSTM or GRU, decoder tied to the
    embedding."""

    def __init__(self, rnn="LSTM", ntoken=20, ninp=8, nlayers=2):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn)(ninp, ninp, nlayers, dropout=0.2)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden


def test_word_language_model_lstm_with_tied_weights():
    ember.manual_seed(0)
    model = WordLM("LSTM")
    hidden = (ember.randn(2, 3, 8), ember.randn(2, 3, 8))
    infos = _check(model, ember.randint(0, 20, (5, 3)), hidden)
    assert len(infos) == 3
    proto = ember.onnx.export(model, (ember.randint(0, 20, (5, 3)), hidden), None)
    names = [i.name for i in proto.graph.initializer]
    assert "encoder.weight" in names and "decoder.weight" not in names  # tied: one tensor
    assert [n.op_type for n in proto.graph.node].count("LSTM") == 2


def test_gru_and_lstm_layers():
    ember.manual_seed(0)
    _check(nn.GRU(4, 5, batch_first=True), ember.randn(2, 3, 4))
    _check(nn.LSTM(4, 5, 2, bidirectional=True), ember.randn(3, 2, 4))
    _check(nn.RNN(4, 5, nonlinearity="relu"), ember.randn(3, 2, 4), ember.randn(1, 2, 5))
    _check(WordLM("GRU"), ember.randint(0, 20, (4, 2)), ember.randn(2, 2, 8))


def test_lstm_with_projection_is_refused_by_name():
    with pytest.raises(ember.onnx.errors.SymbolicValueError, match="proj_size"):
        ember.onnx.export(nn.LSTM(4, 5, proj_size=3), (ember.randn(3, 2, 4),), io.BytesIO())


def test_transformer_encoder():
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    _check(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), ember.randn(2, 3, 8))
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True)
    _check(nn.TransformerEncoder(layer, 1, enable_nested_tensor=False), ember.randn(3, 2, 8),
           opset_version=17)


class CausalEncoder(nn.Module):
    """pytorch/examples' TransformerModel core: embedding scaled, encoder under an additive
    causal mask built in forward, log-softmax decoder."""

    def __init__(self, ntoken=20, d=8):
        super().__init__()
        self.emb, self.dec = nn.Embedding(ntoken, d), nn.Linear(d, ntoken)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 16), 2,
                                             enable_nested_tensor=False)

    def forward(self, src):
        mask = ember.log(ember.tril(ember.ones(len(src), len(src))))
        out = self.encoder(self.emb(src) * 8 ** 0.5, mask=mask)
        return F.log_softmax(self.dec(out), dim=-1)


def test_transformer_with_causal_mask():
    ember.manual_seed(0)
    _check(CausalEncoder(), ember.randint(0, 20, (5, 3)))


def test_dynamic_batch_size_and_path_output(tmp_path):
    from ember.vision import models
    ember.manual_seed(0)
    for model, shape in ((LeNet(), (1, 28, 28)),
                         (_randomize_batch_norm(models.resnet18(num_classes=10)), (3, 16, 16))):
        path = tmp_path / "model.onnx"
        ember.onnx.export(model, (ember.randn(2, *shape),), str(path), input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        proto = onnx.load(str(path))
        assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        x = ember.randn(5, *shape)
        model.eval()
        with ember.no_grad():
            expected = model(x).numpy()
        np.testing.assert_allclose(session.run(None, {"x": x.numpy()})[0], expected, atol=ATOL)


def test_dropout_and_training_mode_restored():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU())
    model.train()
    _, types = _run(model, (ember.randn(3, 4),))
    assert types == ["Gemm", "Relu"] and model.training
    with pytest.raises(RuntimeError, match="draws random numbers"):
        ember.onnx.export(model, (ember.randn(3, 4),), io.BytesIO(),
                          training=ember.onnx.TrainingMode.TRAINING)
    assert model.training


# ---- autograd.Function.symbolic and custom symbolics ----------------------------------------
class ClipBySymbolic(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi) * 2

    @staticmethod
    def symbolic(g, x, lo, hi):
        clipped = g.op("Clip", x, g.op("Constant", value_t=ember.tensor(lo)),
                       g.op("Constant", value_t=ember.tensor(hi)))
        return g.op("Mul", clipped, g.op("Constant", value_t=ember.tensor(2.0)))


class ScaleInDomain(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def symbolic(g, x):
        return g.op("mydomain::Scale", x, alpha_f=3.0, mode_s="fast")


class TracedBody(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return ember.tanh(x) + 1


class NumpyBody(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return ember.from_numpy(np.tanh(x.numpy()))


class Wrap(nn.Module):
    def __init__(self, fn, *extra):
        super().__init__()
        self.fn, self.extra, self.lin = fn, extra, nn.Linear(4, 4)

    def forward(self, x):
        return self.fn.apply(self.lin(x), *self.extra)


def test_function_symbolic_is_the_exported_node():
    model = Wrap(ClipBySymbolic, -0.5, 0.25)
    _check(model, ember.randn(3, 4))
    _, types = _run(model, (ember.randn(3, 4),))
    assert types == ["Gemm", "Constant", "Constant", "Clip", "Constant", "Mul"]


def test_function_symbolic_in_a_custom_domain():
    proto = ember.onnx.export(Wrap(ScaleInDomain), (ember.randn(3, 4),), None)
    node = proto.graph.node[-1]
    assert (node.domain, node.op_type) == ("mydomain", "Scale")
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == \
        {"alpha": 3.0, "mode": b"fast"}
    assert {(o.domain, o.version) for o in proto.opset_import} == {("", 20), ("mydomain", 1)}


def test_function_without_symbolic():
    _, types = _run(Wrap(TracedBody), (ember.randn(3, 4),))
    assert types == ["Gemm", "Tanh", "Constant", "Add"]
    _check(Wrap(TracedBody), ember.randn(3, 4))
    with pytest.raises(RuntimeError, match="NumpyBody has no symbolic"), \
            pytest.warns(ember.jit.TracerWarning, match="NumPy array"):
        ember.onnx.export(Wrap(NumpyBody), (ember.randn(3, 4),), io.BytesIO())


def test_unsupported_op_names_op_and_opset_and_custom_symbolic_supplies_it():
    class Cum(nn.Module):
        def forward(self, x):
            return ember.logcumsumexp(x, 1)

    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match="'aten::logcumsumexp' to ONNX opset version 18 is not supported"):
        ember.onnx.export(Cum(), (ember.randn(2, 3),), io.BytesIO(), opset_version=18)

    def logcumsumexp(g, self, dim):
        axis = g.op("Constant", value_t=ember.tensor(dim))
        return g.op("Log", g.op("CumSum", g.op("Exp", self), axis))

    ember.onnx.register_custom_op_symbolic("aten::logcumsumexp", logcumsumexp, 17)
    try:
        _check(Cum(), ember.randn(2, 3))
    finally:
        ember.onnx.unregister_custom_op_symbolic("aten::logcumsumexp", 17)
    with pytest.raises(ember.onnx.UnsupportedOperatorError):
        ember.onnx.export(Cum(), (ember.randn(2, 3),), io.BytesIO())
    with pytest.raises(ember.onnx.OnnxExporterError, match="domain::name"):
        ember.onnx.register_custom_op_symbolic("logcumsumexp", logcumsumexp, 17)


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _layer_cases():
    x, y, t = ember.randn(4, 5), ember.randn(4, 5), ember.randint(0, 5, (4,))
    img = ember.randn(2, 4, 6, 6)
    return {
        "multihead_attention": (nn.MultiheadAttention(8, 2, batch_first=True),
                                (ember.randn(2, 3, 8),) * 3),
        "transformer": (nn.Transformer(8, 2, 1, 1, 16, batch_first=True),
                        (ember.randn(2, 3, 8), ember.randn(2, 4, 8))),
        "cross_entropy": (Fn(F.cross_entropy), (x, t)),
        "nll_loss": (Fn(lambda a, b: F.nll_loss(F.log_softmax(a, 1), b)), (x, t)),
        "mse_l1_smooth_l1": (Fn(lambda a, b: F.mse_loss(a, b) + F.l1_loss(a, b, reduction="sum")
                                + F.smooth_l1_loss(a, b)), (x, y)),
        "huber_smooth_l1_beta_soft_margin": (Fn(lambda a, b: F.huber_loss(a, b, delta=0.7)
                                                + F.smooth_l1_loss(a, b, beta=0.3,
                                                                   reduction="sum")
                                                + F.smooth_l1_loss(a, b, beta=0.0).mean()
                                                + F.soft_margin_loss(a, b.sign())), (x, y)),
        "bce": (Fn(lambda a, b: F.binary_cross_entropy_with_logits(a, b)
                   + F.binary_cross_entropy(ember.sigmoid(a), b)), (x, ember.rand(4, 5))),
        "kl_div": (Fn(lambda a, b: F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1),
                                            reduction="batchmean")), (x, y)),
        "norms": (nn.Sequential(nn.GroupNorm(2, 4), nn.InstanceNorm2d(4, affine=True),
                                nn.LayerNorm(6)), (img,)),
        "activations": (nn.Sequential(nn.Tanh(), nn.SiLU(), nn.ELU(), nn.LeakyReLU(),
                                      nn.Softplus(), nn.Hardswish(), nn.Hardsigmoid(), nn.Mish(),
                                      nn.GELU(approximate="tanh"), nn.PReLU()), (x,)),
        "conv_pool_upsample": (nn.Sequential(nn.ConvTranspose2d(4, 4, 3, 2, output_padding=1),
                                             nn.AvgPool2d(2), nn.MaxPool2d(2, ceil_mode=True),
                                             nn.Upsample(scale_factor=2, mode="bilinear"),
                                             nn.PixelShuffle(2), nn.AdaptiveAvgPool2d(2)),
                               (img,)),
        "pixel_unshuffle_adaptive_pools": (Fn(lambda a: F.adaptive_avg_pool2d(
            F.pixel_unshuffle(a, 2), (2, 3)) + F.adaptive_avg_pool3d(a[:, None], (1, 2, 3))[:, 0]
            .mean(1, keepdim=True)), (img,)),
        "conv1d_pool1d": (nn.Sequential(nn.Conv1d(4, 3, 3, padding=1), nn.MaxPool1d(2)),
                          (ember.randn(2, 4, 8),)),
        "embedding_bag": (nn.EmbeddingBag(10, 3), (ember.tensor([[1, 2], [3, 4]]),)),
        "embedding_bag_padding": (nn.EmbeddingBag(10, 3, padding_idx=2),
                                  (ember.tensor([[1, 2], [2, 2], [3, 4]]),)),
        "views": (Fn(lambda a: a.view(a.size(0), a.size(1), -1).sum(-1)
                     + a.flatten(1).mean(1, keepdim=True) + a.flatten(2).amax(-1)), (img,)),
        "copy_into_buffer": (Fn(lambda a: ember.zeros(3, 4, 5, dtype=ember.float64).copy_(a) * 2),
                             (x,)),
        "repeat": (Fn(lambda a: a.repeat(2, 1)[1:5] + a.repeat(1, 1, 1).sum(0)), (x,)),
        "spatial_transformer": (Fn(lambda a, theta: F.grid_sample(
            a, F.affine_grid(theta, a.size(), align_corners=False), align_corners=False)),
            (img, ember.tensor([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]] * 2))),
        "reductions_indexing": (Fn(lambda a: a.std(1).sum() + a.var(0) + a[:, 1:3].mean()
                                   + a.topk(2)[0].sum() + a.cumsum(1)[[0, 2]].amax()
                                   + a.masked_fill(a > 0, 0.5).sum(0) + F.pad(a, (1, 2))[:, :5]),
                                (x,)),
    }


@pytest.mark.parametrize("name", list(_layer_cases()))
def test_layers_and_losses(name):
    ember.manual_seed(0)
    model, args = _layer_cases()[name]
    _check(model, *args)


def test_roi_align_exports_and_nms_warns():
    from ember.vision.ops import nms, roi_align
    x = ember.randn(2, 4, 10, 10)
    boxes = ember.tensor([[0, 1., 1., 8., 9.], [1, 0., 2., 5., 7.5], [0, 3., 3., 4., 4.]])
    for aligned in (True, False):
        _check(Fn(lambda a, b: roi_align(a, b, (3, 3), 0.5, 2, aligned)), x, boxes)
    with pytest.warns(ember.jit.TracerWarning, match="NumPy array"):
        ember.onnx.export(Fn(lambda b, s: nms(b, s, 0.5)),
                          (ember.tensor([[0., 0, 1, 1], [0, 0, 1, 1.1]]), ember.tensor([.9, .8])),
                          io.BytesIO())


def test_deform_conv2d_from_opset_19():
    from ember.vision.ops import deform_conv2d
    ember.manual_seed(0)
    w, b = ember.randn(4, 2, 3, 3), ember.randn(4)
    x, offset, mask = ember.randn(1, 2, 5, 5), ember.randn(1, 18, 5, 5), ember.rand(1, 9, 5, 5)
    with_mask = Fn(lambda a, o, m: deform_conv2d(a, o, w, b, padding=1, mask=m))
    _check(with_mask, x, offset, mask, opset_version=19)
    _check(Fn(lambda a, o: deform_conv2d(a, o, w, b, stride=2)), x, ember.randn(1, 18, 2, 2),
           opset_version=19)
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="added in version 19"):
        ember.onnx.export(with_mask, (x, offset, mask), io.BytesIO(), opset_version=18)


def test_data_dependent_control_flow_warns():
    class Branchy(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x - 1

    x = ember.ones(3)
    with pytest.warns(ember.jit.TracerWarning, match="Python boolean"):
        ember.onnx.export(Branchy(), (x,), io.BytesIO())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.onnx.export(nn.Linear(3, 2), (x,), io.BytesIO())  # no conversion, no warning


def test_opset_range_and_signature():
    with pytest.raises(ValueError, match="opset"):
        ember.onnx.export(nn.Linear(3, 2), (ember.ones(3),), io.BytesIO(), opset_version=16)
    newest = onnx.defs.onnx_opset_version()
    for opset in (17, 18, 20):
        _check(nn.Sequential(nn.Linear(3, 2), nn.GELU()), ember.ones(2, 3), opset_version=opset)
    proto = ember.onnx.export(nn.Linear(3, 2), (ember.ones(3),), None, opset_version=newest,
                              dynamo=True)
    assert proto.opset_import[0].version == newest
    proto = ember.onnx.export(nn.Linear(3, 2), (ember.ones(2, 3),), None,
                              keep_initializers_as_inputs=True)
    assert [i.name for i in proto.graph.input] == ["input", "weight", "bias"]
    assert not ember.onnx.is_in_onnx_export()


# ---- node types against torch.onnx.export (TorchScript exporter, same opset) ----------------
_PLUMBING = {"Constant", "Shape", "Gather", "Unsqueeze", "Squeeze", "Slice", "Concat", "Expand",
             "Identity", "Reshape", "Cast"}


def _torch_models(lib, kind):
    nn_, F_ = lib.nn, lib.nn.functional
    if kind == "lenet":
        class LeNetT(nn_.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.conv2 = nn_.Conv2d(1, 6, 5), nn_.Conv2d(6, 16, 5)
                self.fc1, self.fc2 = nn_.Linear(256, 120), nn_.Linear(120, 10)

            def forward(self, x):
                x = F_.max_pool2d(F_.relu(self.conv1(x)), 2)
                x = lib.flatten(F_.max_pool2d(F_.relu(self.conv2(x)), 2), 1)
                return F_.log_softmax(self.fc2(F_.relu(self.fc1(x))), dim=1)
        return LeNetT(), (np.ones((2, 1, 28, 28), np.float32),)
    if kind == "residual":
        class Res(nn_.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.b1 = nn_.Conv2d(3, 4, 3, padding=1, bias=False), nn_.BatchNorm2d(4)
                self.c2, self.fc, self.r6 = nn_.Conv2d(4, 4, 3, padding=1), nn_.Linear(4, 3), \
                    nn_.ReLU6(inplace=True)

            def forward(self, x):
                y = self.r6(self.b1(self.c1(x)))
                y = F_.relu(self.c2(y) + y)
                return self.fc(y.mean((2, 3)))
        return Res(), (np.ones((2, 3, 8, 8), np.float32),)
    if kind == "gru":
        return nn_.GRU(4, 5, batch_first=True), (np.ones((2, 3, 4), np.float32),)
    ntoken = 20

    class LM(nn_.Module):
        def __init__(self):
            super().__init__()
            self.enc, self.rnn = nn_.Embedding(ntoken, 8), nn_.LSTM(8, 8, 2)
            self.dec = nn_.Linear(8, ntoken)
            self.dec.weight = self.enc.weight

        def forward(self, x, h, c):
            out, (h, c) = self.rnn(self.enc(x), (h, c))
            return F_.log_softmax(self.dec(out).view(-1, ntoken), dim=1), h, c
    return LM(), (np.arange(6).reshape(3, 2) % ntoken, np.zeros((2, 2, 8), np.float32),
                  np.zeros((2, 2, 8), np.float32))


@pytest.mark.parametrize("kind", ["lenet", "residual", "gru", "lstm_lm"])
def test_node_types_match_torch_onnx_export(kind):
    torch = pytest.importorskip("torch")
    tm, arrays = _torch_models(torch, kind)
    em, _ = _torch_models(ember, kind)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.eval()
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(tm, tuple(torch.tensor(a) for a in arrays), f, dynamo=False,
                          opset_version=17)
    theirs = [n.op_type for n in onnx.load_from_string(f.getvalue()).graph.node]
    ours = [n.op_type for n in ember.onnx.export(em, tuple(ember.tensor(a) for a in arrays), None,
                                                  opset_version=17).graph.node]
    assert [t for t in ours if t not in _PLUMBING] == [t for t in theirs if t not in _PLUMBING]
    if kind in ("lenet", "residual"):
        assert ours == theirs  # no shape plumbing in either
    _check(em, *(ember.tensor(a) for a in arrays), opset_version=17)


# ---- the "onnxrt" compile backend ----------------------------------------------------------
def test_compile_backend_onnxrt_runs_inference_in_onnx_runtime_behind_guards():
    from ember._dynamo.utils import counters
    ember.manual_seed(0)
    model = _randomize_batch_norm(nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 26 * 26, 10)))
    model.eval()
    compiled = ember.compile(model, backend="onnxrt")
    assert "onnxrt" in ember.compiler.list_backends()
    before = counters["stats"]["unique_graphs"]
    with ember.no_grad():
        for batch in (3, 3, 5):  # the second call reuses the session, a new batch size recompiles
            x = ember.randn(batch, 1, 28, 28)
            out = compiled(x)
            np.testing.assert_allclose(out.numpy(), model(x).numpy(), rtol=1e-4, atol=1e-5)
        assert counters["stats"]["unique_graphs"] - before == 2
        model[0].weight.mul_(2)  # parameters are graph inputs: an update reaches the next call
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-4, atol=1e-5)
        assert counters["stats"]["unique_graphs"] - before == 2


def test_compile_backend_onnxrt_hands_training_graphs_to_the_ember_backend():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    compiled = ember.compile(model, backend="onnxrt")
    x = ember.randn(4, 8)
    with pytest.warns(UserWarning, match="needs gradients"):
        loss = compiled(x).square().sum()
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).square().sum().backward()
    for g, p in zip(grads, model.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_spconv_functions_export_through_their_symbolic():
    """spconv's sparse convolutions export as the custom-domain nodes their Functions' `symbolic`
    emits; the rulebook, computed from the indices on NumPy, is a constant of the graph (with a
    TracerWarning), and onnx.checker accepts the model."""
    import ember.spconv as spconv

    class SparseNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = spconv.SparseSequential(spconv.SubMConv3d(2, 4, 3, indice_key="s1"),
                                               nn.ReLU(), spconv.SparseConv3d(4, 4, 3, stride=2))

        def forward(self, features, indices):
            return self.net(spconv.SparseConvTensor(features, indices, [8, 8, 8], 1)).features

    ember.manual_seed(0)
    sites = ember.unique(ember.randint(0, 8, (30, 3)), dim=0).int()
    indices = ember.cat([ember.zeros(sites.shape[0], 1, dtype=ember.int32), sites], 1)
    with pytest.warns(ember.jit.TracerWarning, match="NumPy array"):
        proto = ember.onnx.export(SparseNet(), (ember.randn(sites.shape[0], 2), indices), None)
    onnx.checker.check_model(proto)
    custom = [(n.domain, n.op_type) for n in proto.graph.node if n.domain]
    assert custom == [("spconv", "SubMConv"), ("spconv", "SparseConv")]
    assert ("spconv", 1) in [(o.domain, o.version) for o in proto.opset_import]
