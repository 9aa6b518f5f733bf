"""Neural-network functions and layers beyond the op table: running statistics, layer
initialisation and reprs, padding modes, output sizes, in-place weight renormalisation, double
backward through convolution and batch norm, and the torch.* forms -- each against PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")


def both(fn):
    """fn(m) for m = ember and torch."""
    return fn(ember), fn(torch)


def close(e, t, rtol=1e-5, atol=1e-6):
    e = e.detach().numpy() if hasattr(e, "detach") else np.asarray(e)
    t = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    assert e.shape == t.shape, f"shape {e.shape} != torch's {t.shape}"
    np.testing.assert_allclose(e, t, rtol=rtol, atol=atol)


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- batch norm: running statistics -----------------------------------------------------------
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
def test_batch_norm_module_running_stats(shape, momentum):
    """Training updates running_mean/var (unbiased variance, cumulative average for momentum
    None) and counts batches; evaluation uses the running statistics."""
    cls = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d"}[len(shape)]

    def run(m):
        bn = getattr(m.nn, cls)(3, momentum=momentum)
        outs = []
        for seed in range(3):
            outs.append(bn(m.from_numpy(data(*shape, seed=seed) * (seed + 1))))
        bn.eval()
        outs.append(bn(m.from_numpy(data(*shape, seed=9))))
        return bn, outs
    (e_bn, e_outs), (t_bn, t_outs) = both(run)
    for e, t in zip(e_outs, t_outs):
        close(e, t, atol=1e-5)
    close(e_bn.running_mean, t_bn.running_mean)
    close(e_bn.running_var, t_bn.running_var)
    assert int(e_bn.num_batches_tracked) == int(t_bn.num_batches_tracked) == 3
    assert list(e_bn.state_dict()) == list(t_bn.state_dict())


def test_batch_norm_without_running_stats():
    def run(m):
        bn = m.nn.BatchNorm2d(3, affine=False, track_running_stats=False).eval()
        return bn(m.from_numpy(data(2, 3, 4, 4))), bn
    (e, e_bn), (t, t_bn) = both(run)
    close(e, t, atol=1e-5)
    assert e_bn.running_mean is None and e_bn.weight is None and repr(e_bn) == repr(t_bn)


def test_functional_batch_norm_updates_in_place_and_keeps_version():
    """F.batch_norm writes the running statistics in place; like PyTorch it does not bump
    their version counters (the op's own backward reads them)."""
    def run(m):
        mean, var = m.zeros(3), m.ones(3)
        x = m.from_numpy(data(5, 3, 2)).requires_grad_()
        v = mean._version
        y = m.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.3)
        y.sum().backward()
        return mean, var, mean._version - v, x.grad
    (em, ev, e_dv, e_g), (tm, tv, t_dv, t_g) = both(run)
    close(em, tm)
    close(ev, tv)
    close(e_g, t_g, atol=1e-5)
    assert e_dv == t_dv


def test_instance_norm_running_stats():
    def run(m):
        mean, var = m.zeros(3), m.ones(3)
        out = m.nn.functional.instance_norm(m.from_numpy(data(2, 3, 5)), mean, var,
                                            momentum=0.2)
        return out, mean, var
    for e, t in zip(*both(run)):
        close(e, t, atol=1e-5)


# ---- double backward --------------------------------------------------------------------------
@pytest.mark.parametrize("transposed", [False, True])
def test_conv_gradient_penalty(transposed):
    """The gradient of a function of a gradient (create_graph) through convolution."""
    def run(m):
        F = m.nn.functional
        x = m.from_numpy(data(2, 3, 6, 5)).requires_grad_()
        shape = (3, 4, 3, 3) if transposed else (4, 3, 3, 3)
        w = m.from_numpy(data(*shape, seed=1) * 0.3).requires_grad_()
        conv = F.conv_transpose2d if transposed else F.conv2d
        y = conv(x, w, stride=2, padding=1)
        gx, gw = m.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        return x.grad, w.grad
    for e, t in zip(*both(run)):
        close(e, t, rtol=1e-4, atol=1e-4)


def test_batch_norm_gradient_penalty():
    def run(m):
        F = m.nn.functional
        x = m.from_numpy(data(4, 3, 5)).requires_grad_()
        w = m.from_numpy(data(3, seed=1)).requires_grad_()
        b = m.from_numpy(data(3, seed=2)).requires_grad_()
        y = F.batch_norm(x, None, None, w, b, training=True)
        gx, = m.autograd.grad((y.sin()).sum(), (x,), create_graph=True)
        (gx * gx).sum().backward()
        return x.grad, w.grad
    for e, t in zip(*both(run)):
        close(e, t, rtol=1e-4, atol=1e-4)


# ---- layers -----------------------------------------------------------------------------------
LAYERS = [
    "Conv1d(3, 4, 3, stride=2, padding=1)", "Conv2d(3, 4, (3, 2), padding='same', bias=False)",
    "Conv2d(4, 6, 3, groups=2, dilation=2, padding_mode='reflect', padding=2)",
    "Conv2d(3, 4, 3, padding=1, padding_mode='circular')",
    "Conv2d(3, 4, 3, padding=(1, 2), padding_mode='replicate')",
    "Conv3d(2, 3, 2)", "ConvTranspose1d(3, 4, 3, stride=2)",
    "ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)",
    "ConvTranspose3d(2, 3, 2, stride=2)", "BatchNorm3d(3, eps=1e-3, bias=False)",
    "MaxPool2d(3, 2, 1, ceil_mode=True)", "MaxPool1d(2)", "MaxPool3d(2)",
    "AvgPool2d(3, 2, 1, count_include_pad=False)", "AvgPool1d(3)", "AvgPool3d(2)",
    "AdaptiveAvgPool2d((3, None))", "AdaptiveAvgPool1d(2)", "AdaptiveAvgPool3d(1)",
    "AdaptiveMaxPool2d(2)", "AdaptiveMaxPool1d(3)", "AdaptiveMaxPool3d((1, 2, 2))",
    "Dropout(0.3)", "Dropout1d(0.3)", "Dropout2d(0.3)", "Dropout3d(0.3)", "AlphaDropout(0.3)",
    "FeatureAlphaDropout(0.3)", "Flatten()", "Unflatten(1, (1, 2))",
    "Embedding(10, 3, padding_idx=2)", "EmbeddingBag(10, 3, mode='max')",
]
INPUT_RANK = {"1d": 3, "2d": 4, "3d": 5, "Flatten": 4, "Unflatten": 3, "Dropout(": 3,
              "AlphaDropout": 3, "FeatureAlphaDropout": 3}


def _layer_input(m, spec):
    if spec.startswith("Embedding"):
        return m.tensor([[1, 2, 9], [0, 2, 2]])
    rank = next(r for key, r in INPUT_RANK.items() if key in spec.split("(")[0] + "(")
    channels = int(spec.split("(")[1].split(",")[0]) if spec.startswith(("Conv", "Batch")) \
        else 2
    shape = (2, channels) + (5, 6, 4)[:rank - 2]
    return m.from_numpy(data(*shape)).requires_grad_()


@pytest.mark.parametrize("spec", LAYERS)
def test_layer(spec):
    """Same parameters from the same seed, same repr, same output and input gradient."""
    def run(m):
        m.manual_seed(0)
        layer = eval(f"m.nn.{spec}", {"m": m})
        x = _layer_input(m, spec)
        m.manual_seed(1)
        y = layer(x)
        y = y[0] if isinstance(y, tuple) else y
        if x.is_floating_point():
            y.backward(m.ones_like(y))
        return layer, y, x
    (e_layer, e_y, e_x), (t_layer, t_y, t_x) = both(run)
    assert repr(e_layer) == repr(t_layer)
    e_params, t_params = dict(e_layer.named_parameters()), dict(t_layer.named_parameters())
    assert list(e_params) == list(t_params)
    for name in t_params:
        close(e_params[name], t_params[name])
    close(e_y, t_y, atol=1e-5)
    if t_x.grad is not None:
        close(e_x.grad, t_x.grad, atol=1e-5)


def test_conv_transpose_output_size():
    def run(m):
        m.manual_seed(0)
        layer = m.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        x = m.from_numpy(data(1, 3, 4, 5))
        return layer(x, output_size=[8, 10]), layer(x, output_size=(1, 2, 7, 9))
    for e, t in zip(*both(run)):
        close(e, t, atol=1e-5)
    layer = ember.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    with pytest.raises(ValueError, match="output size"):
        layer(ember.zeros(1, 3, 4, 5), output_size=[11, 10])


@pytest.mark.parametrize("bad", ["Conv2d(3, 4, 3, groups=2)", "Conv2d(4, 3, 3, groups=2)",
                                 "Conv2d(3, 4, 3, padding='full')",
                                 "Conv2d(3, 4, 3, stride=2, padding='same')",
                                 "Conv2d(3, 4, 3, padding_mode='mirror')",
                                 "ConvTranspose2d(3, 4, 3, padding_mode='reflect')",
                                 "Dropout(1.5)", "BatchNorm2d(3)"])
def test_layer_errors(bad):
    """Bad constructor arguments (and a 3-D input to BatchNorm2d) raise torch's error type."""
    errors = []
    for m in (ember, torch):
        try:
            layer = eval(f"m.nn.{bad}", {"m": m})
            layer(m.zeros(2, 3, 4))
        except Exception as exc:  # noqa: BLE001 -- the type is compared
            errors.append(type(exc))
    assert len(errors) == 2 and errors[0] is errors[1], errors


def test_embedding_max_norm_renormalizes_rows_in_place():
    def run(m):
        m.manual_seed(0)
        emb = m.nn.Embedding(6, 4, max_norm=1.0, norm_type=2.0)
        out = emb(m.tensor([[0, 2], [2, 5]]))
        out.sum().backward()
        return emb.weight, out, emb.weight.grad
    for e, t in zip(*both(run)):
        close(e, t, atol=1e-5)


def test_embedding_from_pretrained():
    def run(m):
        w = m.from_numpy(data(5, 3))
        emb = m.nn.Embedding.from_pretrained(w, padding_idx=1)
        bag = m.nn.EmbeddingBag.from_pretrained(w, mode="sum")
        return (emb(m.tensor([1, 4])), bag(m.tensor([[1, 4], [0, 0]])),
                emb.weight.requires_grad, bag.weight.requires_grad)
    (e, e_bag, *e_rg), (t, t_bag, *t_rg) = both(run)
    close(e, t)
    close(e_bag, t_bag)
    assert e_rg == t_rg == [False, False]


# ---- torch.* forms and the meta device ----------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "m.conv2d(x, w, None, 1, 1)", "m.dropout(x, 0.4, True)", "m.feature_dropout(x, 0.4, True)",
    "m.alpha_dropout(x, 0.4, True)", "m.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, "
    "False)", "m.layer_norm(x, (6,))", "m.group_norm(x, 3)", "m.pixel_shuffle(x, 1)",
    "m.max_pool2d(x, 2)", "m.avg_pool1d(x[0], 2)", "m.adaptive_max_pool1d(x[0], 2)[1]",
    "m.cosine_similarity(x, x + 1)", "m.cdist(x[0], x[1])", "m.pdist(x[0, 0])",
    "m.embedding(x[0, 0], m.tensor([[1, 2]]))", "m.constant_pad_nd(x, [1, 2], 3.0)",
    "m.rms_norm(x, [6])",
])
def test_torch_level_functions(expr):
    def run(m):
        m.manual_seed(0)
        x = m.from_numpy(data(2, 3, 5, 6))
        w = m.from_numpy(data(4, 3, 3, 3, seed=1))
        return eval(expr, {"m": m, "x": x, "w": w})
    close(*both(run), atol=1e-5)


@pytest.mark.parametrize("expr", [
    "F.conv2d(x, w, stride=2, padding=1)", "F.conv_transpose2d(x, w.transpose(0, 1), stride=2)",
    "F.max_pool2d(x, 3, 2, 1, return_indices=True)[1]", "F.avg_pool2d(x, 2, ceil_mode=True)",
    "F.adaptive_avg_pool2d(x, (3, 2))", "F.batch_norm(x, None, None, training=True)",
    "F.layer_norm(x, (8,))", "F.interpolate(x, scale_factor=2, mode='bilinear')",
    "F.pad(x, (1, 2, 3, 4), mode='reflect')", "F.unfold(x, 3)",
    "F.embedding(m.zeros(2, 5, dtype=m.int64, device='meta'), w.reshape(-1, 3))",
    "F.scaled_dot_product_attention(x, x, x)", "F.pixel_unshuffle(x, 2)",
])
def test_meta_shapes(expr):
    """On the meta device: the shape and dtype torch computes, no data."""
    def run(m):
        F = m.nn.functional
        x = m.empty(2, 3, 8, 8, device="meta")
        w = m.empty(4, 3, 3, 3, device="meta")
        return eval(expr, {"m": m, "F": F, "x": x, "w": w})
    e, t = both(run)
    assert e.device.type == "meta"
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)


def test_linear_refuses_non_tensors_as_pytorchs_parser():
    for args in ((5, "w"), ("x", 5), ("x", "w", 3)):
        got = []
        for L in (ember, torch):
            vals = [L.ones(2, 2) if a in ("x", "w") else a for a in args]
            with pytest.raises(TypeError) as e:
                L.nn.functional.linear(*vals)
            got.append(str(e.value))
        assert got[0] == got[1]
