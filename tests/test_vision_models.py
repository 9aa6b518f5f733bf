"""ember.vision.models against the same architectures written here from torch.nn with
torchvision's module names (torchvision itself is not installed): state-dict keys equal, the
torch weights load with strict=True, and the outputs agree in eval mode."""
import numpy as np
import pytest

import ember
import ember.vision.models as M

torch = pytest.importorskip("torch")
tnn = torch.nn


# --- torch references, written the way torchvision writes them (names matter) ---------------

class TBasic(tnn.Module):
    expansion = 1

    def __init__(self, cin, planes, stride, down, groups, width, dilation):
        super().__init__()
        self.conv1 = tnn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(planes)
        self.relu = tnn.ReLU(inplace=True)
        self.conv2 = tnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(planes)
        self.downsample = down

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class TBottleneck(tnn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride, down, groups, width_per_group, dilation):
        super().__init__()
        width = int(planes * width_per_group / 64) * groups
        self.conv1 = tnn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(width)
        self.conv2 = tnn.Conv2d(width, width, 3, stride, dilation, dilation, groups, bias=False)
        self.bn2 = tnn.BatchNorm2d(width)
        self.conv3 = tnn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = tnn.BatchNorm2d(planes * 4)
        self.relu = tnn.ReLU(inplace=True)
        self.downsample = down

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn3(self.conv3(self.relu(self.bn2(self.conv2(out)))))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class TResNet(tnn.Module):
    def __init__(self, block, layers, num_classes=1000, groups=1, width_per_group=64,
                 dilate=(False, False, False)):
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = tnn.BatchNorm2d(64)
        self.relu = tnn.ReLU(inplace=True)
        self.maxpool = tnn.MaxPool2d(3, 2, 1)
        cin, dilation = 64, 1
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), layers)):
            stride, prev = (1 if i == 0 else 2), dilation
            if i > 0 and dilate[i - 1]:
                dilation, stride = dilation * stride, 1
            down = None
            if stride != 1 or cin != planes * block.expansion:
                down = tnn.Sequential(tnn.Conv2d(cin, planes * block.expansion, 1, stride,
                                                 bias=False),
                                      tnn.BatchNorm2d(planes * block.expansion))
            blocks = [block(cin, planes, stride, down, groups, width_per_group, prev)]
            cin = planes * block.expansion
            blocks += [block(cin, planes, 1, None, groups, width_per_group, dilation)
                       for _ in range(n - 1)]
            setattr(self, f"layer{i + 1}", tnn.Sequential(*blocks))
        self.avgpool = tnn.AdaptiveAvgPool2d((1, 1))
        self.fc = tnn.Linear(512 * block.expansion, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def t_cna(cin, cout, k=3, stride=1, groups=1):
    """torchvision's Conv2dNormActivation with ReLU6: a Sequential of conv, bn, relu6."""
    return tnn.Sequential(tnn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups,
                                     bias=False),
                          tnn.BatchNorm2d(cout), tnn.ReLU6(inplace=True))


class TInvertedResidual(tnn.Module):
    def __init__(self, inp, oup, stride, t):
        super().__init__()
        hidden = int(round(inp * t))
        self.use_res_connect = stride == 1 and inp == oup
        layers = [t_cna(inp, hidden, 1)] if t != 1 else []
        layers += [t_cna(hidden, hidden, 3, stride, hidden),
                   tnn.Conv2d(hidden, oup, 1, 1, 0, bias=False), tnn.BatchNorm2d(oup)]
        self.conv = tnn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class TMobileNetV2(tnn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                   [6, 160, 3, 2], [6, 320, 1, 1]]
        features, cin = [t_cna(3, 32, stride=2)], 32
        for t, c, n, s in setting:
            for i in range(n):
                features.append(TInvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        features.append(t_cna(cin, 1280, 1))
        self.features = tnn.Sequential(*features)
        self.classifier = tnn.Sequential(tnn.Dropout(0.2), tnn.Linear(1280, num_classes))

    def forward(self, x):
        x = tnn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


def t_vgg_features(cfg, batch_norm):
    layers, cin = [], 3
    for v in cfg:
        if v == "M":
            layers.append(tnn.MaxPool2d(2, 2))
            continue
        layers += [tnn.Conv2d(cin, v, 3, padding=1)] + ([tnn.BatchNorm2d(v)] if batch_norm else [])
        layers.append(tnn.ReLU(inplace=True))
        cin = v
    return tnn.Sequential(*layers)




# --- helpers ---------------------------------------------------------------------------------

@pytest.fixture
def no_init(monkeypatch):
    """Skip random initialisation where the test loads torch's weights anyway: ember draws
    normals bit-exactly like torch's generator, which costs seconds for a ResNet."""
    for name in ("kaiming_normal_", "kaiming_uniform_", "normal_", "uniform_", "constant_",
                 "ones_", "zeros_"):
        monkeypatch.setattr(ember.nn.init, name, lambda tensor, *args, **kwargs: tensor)


def randomize_bn(model):
    """Give BatchNorm non-trivial statistics so eval mode tests them."""
    g = torch.Generator().manual_seed(0)
    for m in model.modules():
        if isinstance(m, tnn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model


def to_ember_state(t_model):
    return {k: ember.tensor(v.detach().numpy()) for k, v in t_model.state_dict().items()}


def compare_eval(e_model, t_model, size=64, atol=1e-4):
    randomize_bn(t_model)
    assert list(e_model.state_dict()) == list(t_model.state_dict())
    result = e_model.load_state_dict(to_ember_state(t_model), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    e_model.eval(), t_model.eval()
    x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)
    with ember.no_grad(), torch.no_grad():
        out_e, out_t = e_model(ember.tensor(x)), t_model(torch.tensor(x))
    assert out_e.shape == out_t.shape and out_e.dtype == ember.float32
    np.testing.assert_allclose(out_e.numpy(), out_t.numpy(), atol=atol, rtol=1e-3)


# --- tests -----------------------------------------------------------------------------------

def test_resnet18_keys_and_eval_output(no_init):
    e, t = M.resnet18(), TResNet(TBasic, [2, 2, 2, 2])
    # a few of torchvision's published resnet18 keys, spelled out
    keys = list(e.state_dict())
    for k in ("conv1.weight", "bn1.num_batches_tracked", "layer1.0.conv1.weight",
              "layer2.0.downsample.0.weight", "layer2.0.downsample.1.running_var",
              "layer4.1.bn2.bias", "fc.weight", "fc.bias"):
        assert k in keys
    assert "layer1.0.downsample.0.weight" not in keys
    compare_eval(e, t)


def test_resnet50_eval_output(no_init):
    compare_eval(M.resnet50(), TResNet(TBottleneck, [3, 4, 6, 3]), size=32)


@pytest.mark.parametrize("kwargs", [dict(groups=4, width_per_group=16),
                                    dict(width_per_group=128),
                                    dict(replace_stride_with_dilation=[False, True, True])])
def test_bottleneck_variants(no_init, kwargs):
    """resnext / wide_resnet / dilated ResNet, on a one-block-per-stage network."""
    e = M.ResNet(M.Bottleneck, [1, 1, 1, 1], num_classes=10, **kwargs)
    t = TResNet(TBottleneck, [1, 1, 1, 1], 10, kwargs.get("groups", 1),
                kwargs.get("width_per_group", 64),
                kwargs.get("replace_stride_with_dilation", (False,) * 3))
    compare_eval(e, t, size=48)


@pytest.mark.parametrize("builder, block, layers, fixed", [
    ("resnet34", "BasicBlock", [3, 4, 6, 3], {}),
    ("resnet152", "Bottleneck", [3, 8, 36, 3], {}),
    ("resnext50_32x4d", "Bottleneck", [3, 4, 6, 3], dict(groups=32, width_per_group=4)),
    ("resnext101_32x8d", "Bottleneck", [3, 4, 23, 3], dict(groups=32, width_per_group=8)),
    ("wide_resnet101_2", "Bottleneck", [3, 4, 23, 3], dict(width_per_group=128))])
def test_builders_pass_torchvisions_arguments(monkeypatch, builder, block, layers, fixed):
    """Each builder's block, depths and fixed arguments (recorded, not built: big models take
    long to initialise)."""
    calls = []
    monkeypatch.setattr(M.resnet, "ResNet", lambda *args, **kw: calls.append((args, kw)))
    getattr(M, builder)(num_classes=3)
    (), kw = calls[0]
    blk, depths = kw.pop("block"), kw.pop("layers")
    assert blk.__name__ == block and depths == layers and kw == {"num_classes": 3, **fixed}
    for name, value in fixed.items():
        with pytest.raises(ValueError, match=f"'{name}' expected value {value} but got 1"):
            getattr(M, builder)(**{name: 1})


def test_resnet_argument_errors():
    with pytest.raises(ValueError, match="BasicBlock only supports groups=1"):
        M.ResNet(M.BasicBlock, [1, 1, 1, 1], groups=2)
    with pytest.raises(ValueError, match="3-element tuple"):
        M.ResNet(M.BasicBlock, [1, 1, 1, 1], replace_stride_with_dilation=[True])
    with pytest.raises(NotImplementedError, match="Dilation > 1"):
        M.ResNet(M.BasicBlock, [1, 1, 1, 2], replace_stride_with_dilation=[False, False, True])


def test_resnet_train_step_gradients(no_init):
    """Training mode (batch statistics) forward and backward on a small ResNet."""
    # float64: batch statistics over few values (layer4 is 2x2) make float32 gradients
    # sensitive to summation order
    e = M.ResNet(M.BasicBlock, [1, 1, 1, 1], num_classes=5).double()
    t = TResNet(TBasic, [1, 1, 1, 1], 5).double()
    e.load_state_dict(to_ember_state(t))
    x = np.random.default_rng(1).standard_normal((3, 3, 40, 40))
    out_e, out_t = e(ember.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), atol=1e-10)
    out_e.square().sum().backward()
    out_t.square().sum().backward()
    for (name, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
        scale = np.abs(pt.grad.numpy()).max()
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), atol=1e-9 * scale,
                                   rtol=1e-7, err_msg=name)
    for (name, be), (_, bt) in zip(e.named_buffers(), t.named_buffers()):
        np.testing.assert_allclose(be.numpy(), bt.numpy(), atol=1e-10, err_msg=name)


def test_resnet_init_like_torchvision():
    ember.manual_seed(0)
    e = M.ResNet(M.BasicBlock, [1, 1, 1, 1], zero_init_residual=True)
    # kaiming_normal_(mode="fan_out", nonlinearity="relu"): std = sqrt(2 / (out * kh * kw))
    t_w = torch.empty(64, 3, 7, 7)
    tnn.init.kaiming_normal_(t_w, mode="fan_out", nonlinearity="relu")
    assert abs(e.conv1.weight.std().item() / t_w.std().item() - 1) < 0.1
    assert (e.bn1.weight.detach().numpy() == 1).all() and (e.bn1.bias.detach().numpy() == 0).all()
    assert (e.layer1[0].bn2.weight.detach().numpy() == 0).all()
    assert (e.layer1[0].bn1.weight.detach().numpy() == 1).all()
    m = M.ResNet(M.Bottleneck, [1, 1, 1, 1], zero_init_residual=True)
    assert (m.layer1[0].bn3.weight.detach().numpy() == 0).all()


def test_norm_layer_argument():
    m = M.ResNet(M.BasicBlock, [1, 1, 1, 1], num_classes=3,
                 norm_layer=lambda c: ember.nn.GroupNorm(4, c))
    assert isinstance(m.layer2[0].downsample[1], ember.nn.GroupNorm)
    assert not any("running" in k for k in m.state_dict())
    assert (m.layer3[0].bn1.weight.detach().numpy() == 1).all()
    assert m(ember.randn(1, 3, 32, 32)).shape == (1, 3)


def test_weights_from_local_file_only(no_init, tmp_path):
    t = TResNet(TBasic, [2, 2, 2, 2], num_classes=7)
    path = tmp_path / "resnet18.pt"
    torch.save(randomize_bn(t).state_dict(), path)
    e = M.resnet18(weights=str(path), num_classes=7)
    np.testing.assert_array_equal(e.layer3[1].bn1.running_var.numpy(),
                                  t.layer3[1].bn1.running_var.numpy())
    with pytest.raises(RuntimeError, match="size mismatch for fc.weight"):
        M.resnet18(weights=path)  # 1000 classes against a 7-class checkpoint
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received object"):
        M.resnet18(weights=object())
    with pytest.raises(FileNotFoundError, match="does not download"):
        M.resnet18(weights=str(tmp_path / "missing.pt"))


def test_mobilenet_v2_keys_and_eval_output(no_init):
    e, t = M.mobilenet_v2(), TMobileNetV2()
    keys = list(e.state_dict())
    for k in ("features.0.0.weight", "features.0.1.running_mean", "features.1.conv.0.0.weight",
              "features.1.conv.1.weight", "features.2.conv.0.0.weight",
              "features.2.conv.2.weight", "features.18.0.weight", "classifier.1.weight"):
        assert k in keys
    assert len(keys) == len(t.state_dict())
    compare_eval(e, t, size=32)
    assert e.features[2].use_res_connect is False and e.features[3].use_res_connect is True


def test_mobilenet_v2_width_mult_and_errors():
    m = M.mobilenet_v2(width_mult=0.5, num_classes=4)
    assert m.features[0][0].out_channels == 16 and m.last_channel == 1280
    assert m.features[1].conv[1].out_channels == 8
    with pytest.raises(ValueError, match="non-empty or a 4-element list"):
        M.MobileNetV2(inverted_residual_setting=[[1, 16, 1]])
    with pytest.raises(ValueError, match="stride should be 1 or 2 instead of 3"):
        M.InvertedResidual(8, 8, 3, 6)


def test_make_divisible():
    from ember.vision.models._utils import _make_divisible
    assert [_make_divisible(v, 8) for v in (3, 16, 20, 32 * 0.35, 1280 * 1.4)] == \
        [8, 16, 24, 16, 1792]


@pytest.mark.parametrize("cfg", ["A", "D", "E"])
@pytest.mark.parametrize("batch_norm", [False, True])
def test_vgg_feature_layouts(cfg, batch_norm):
    from ember.vision.models.vgg import cfgs
    e, t = M.vgg.make_layers(cfgs[cfg], batch_norm), t_vgg_features(cfgs[cfg], batch_norm)
    assert [repr(m) for m in e] == [repr(m) for m in t]
    assert list(e.state_dict()) == list(t.state_dict())


def test_vgg_eval_output_on_features(no_init):
    """VGG-11-BN's features on a 32x32 image against torch (the 100M-parameter classifier is
    left out: building it twice would dominate this file's run time)."""
    from ember.vision.models.vgg import cfgs
    e, t = M.vgg.make_layers(cfgs["A"], True), randomize_bn(t_vgg_features(cfgs["A"], True))
    e.load_state_dict(to_ember_state(t))
    e.eval(), t.eval()
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    with ember.no_grad(), torch.no_grad():
        np.testing.assert_allclose(e(ember.tensor(x)).numpy(), t(torch.tensor(x)).numpy(),
                                   atol=1e-4, rtol=1e-4)
