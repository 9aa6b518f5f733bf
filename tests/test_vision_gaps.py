"""The torchvision names ember.vision added for real training scripts: the weights enums and model
registry, the classification models beyond ResNet/VGG/MobileNetV2 (parameter counts and
state-dict keys as read in torchvision 0.28's source), FiveCrop/TenCrop/RandomAffine/
RandomErasing against torchvision's formulas replayed with torch's generator under the same
seed, transforms.v2 on plain images, and the ops layers against torch arithmetic.
torchvision itself is not importable here."""
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
import ember.vision as V
import ember.vision.models as M
import ember.vision.transforms as T
import ember.vision.transforms.functional as F
from ember.vision import ops

torch = pytest.importorskip("torch")


@pytest.fixture
def no_init(monkeypatch):
    """Parameter counts and keys do not need random initialisation (seconds for big models)."""
    for name in ("kaiming_normal_", "kaiming_uniform_", "normal_", "uniform_", "constant_",
                 "ones_", "zeros_", "trunc_normal_", "xavier_uniform_"):
        monkeypatch.setattr(ember.nn.init, name, lambda tensor, *args, **kwargs: tensor)


def n_params(model):
    return sum(p.numel() for p in model.parameters())


# ---- models: parameter counts and keys from torchvision's source ---------------------------------

# (builder, num_params in torchvision's weights meta, keys spelled as torchvision names them)
MODELS = [
    ("alexnet", 61100840, ["features.0.weight", "features.10.bias", "classifier.6.weight"]),
    ("squeezenet1_0", 1248424, ["features.3.squeeze.weight", "features.12.expand3x3.bias",
                                "classifier.1.weight"]),
    ("squeezenet1_1", 1235496, ["features.3.expand1x1.weight", "classifier.1.bias"]),
    ("shufflenet_v2_x1_0", 2278604, ["conv1.0.weight", "stage2.0.branch1.0.weight",
                                     "stage2.1.branch2.6.running_var", "conv5.1.weight",
                                     "fc.weight"]),
    ("mobilenet_v3_small", 2542856, ["features.0.0.weight", "features.1.block.1.fc1.weight",
                                     "features.12.1.running_mean", "classifier.3.weight"]),
    ("mobilenet_v3_large", 5483032, ["features.4.block.2.fc2.bias", "classifier.0.weight"]),
    ("densenet121", 7978856, ["features.conv0.weight", "features.norm0.running_var",
                              "features.denseblock1.denselayer1.norm1.weight",
                              "features.denseblock4.denselayer16.conv2.weight",
                              "features.transition3.conv.weight", "features.norm5.bias",
                              "classifier.weight"]),
    ("efficientnet_b0", 5288548, ["features.0.0.weight", "features.1.0.block.1.fc1.weight",
                                  "features.2.1.block.3.1.running_var", "features.8.0.weight",
                                  "classifier.1.weight"]),
    ("efficientnet_v2_s", 21458488, ["features.1.0.block.0.0.weight",
                                     "features.4.0.block.2.fc1.weight", "classifier.1.bias"]),
    ("convnext_tiny", 28589128, ["features.0.0.weight", "features.0.1.weight",
                                 "features.1.0.layer_scale", "features.1.0.block.0.weight",
                                 "features.1.0.block.2.weight", "features.2.1.weight",
                                 "classifier.0.weight", "classifier.2.weight"]),
    ("regnet_y_400mf", 4344144, ["stem.0.weight", "stem.1.running_mean",
                                 "trunk_output.block1.block1-0.proj.0.weight",
                                 "trunk_output.block1.block1-0.f.a.0.weight",
                                 "trunk_output.block2.block2-1.f.se.fc1.weight",
                                 "trunk_output.block4.block4-0.f.c.1.running_var", "fc.weight"]),
    ("regnet_x_400mf", 5495976, ["trunk_output.block3.block3-6.f.b.0.weight", "fc.bias"]),
    ("vit_b_32", 88224232, ["class_token", "conv_proj.weight", "encoder.pos_embedding",
                            "encoder.layers.encoder_layer_0.self_attention.in_proj_weight",
                            "encoder.layers.encoder_layer_11.mlp.3.weight",
                            "encoder.ln.weight", "heads.head.weight"]),
]


@pytest.mark.parametrize("name,count,keys", MODELS, ids=[m[0] for m in MODELS])
def test_param_count_and_keys(no_init, name, count, keys):
    model = M.get_model(name)
    assert n_params(model) == count == M.get_model_weights(name).DEFAULT.meta["num_params"]
    sd = model.state_dict()
    missing = [k for k in keys if k not in sd]
    assert not missing, missing


@pytest.mark.parametrize("name,size", [("squeezenet1_1", 64), ("shufflenet_v2_x0_5", 32),
                                       ("mobilenet_v3_small", 32), ("efficientnet_b0", 32),
                                       ("densenet121", 32)])
def test_forward_shape(no_init, name, size):
    ember.manual_seed(0)
    model = M.get_model(name, num_classes=7).eval()
    for p in model.parameters():
        p.data.fill_(0.01)
    with ember.no_grad():
        out = model(ember.randn(2, 3, size, size))
    assert out.shape == (2, 7) and bool(ember.isfinite(out).all())


def test_small_convnext_forward(no_init):
    from ember.vision.models.convnext import CNBlockConfig
    model = M.ConvNeXt([CNBlockConfig(8, 16, 1), CNBlockConfig(16, None, 1)], num_classes=3)
    for p in model.parameters():
        p.data.fill_(0.01)
    assert model.eval()(ember.randn(2, 3, 16, 16)).shape == (2, 3)
    assert model.features[1][0].layer_scale.shape == (8, 1, 1)


def test_vit_small_forward_and_image_size_check():
    model = M.VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2,
                                hidden_dim=8, mlp_dim=16, num_classes=5).eval()
    assert model.seq_length == 5
    assert model(ember.randn(2, 3, 32, 32)).shape == (2, 5)
    with pytest.raises(AssertionError, match="Wrong image height! Expected 32 but got 16!"):
        model(ember.randn(1, 3, 16, 32))


def test_densenet_old_checkpoint_keys_are_renamed(no_init, tmp_path):
    model = M.densenet121(num_classes=3)
    sd = {k: v.clone() for k, v in model.state_dict().items()}
    # checkpoints from before num_batches_tracked spelled norm1.weight as norm.1.weight
    old = {k.replace("denselayer1.norm1.", "denselayer1.norm.1."): v for k, v in sd.items()
           if not k.endswith("num_batches_tracked")}
    assert "features.denseblock1.denselayer1.norm.1.weight" in old
    path = tmp_path / "old.pth"
    ember.save(old, str(path))
    loaded = M.densenet121(weights=str(path), num_classes=3)
    assert set(loaded.state_dict()) == set(sd)


# ---- weights enums and the registry --------------------------------------------------------------

def test_weights_enum_members_and_meta():
    W = M.ResNet50_Weights
    assert [w.name for w in W] == ["IMAGENET1K_V1", "IMAGENET1K_V2"]
    assert W.DEFAULT is W.IMAGENET1K_V2
    assert W.IMAGENET1K_V1.url == "https://download.pytorch.org/models/resnet50-0676ba61.pth"
    assert W.IMAGENET1K_V2.meta["_metrics"]["ImageNet-1K"]["acc@1"] == 80.858
    assert len(W.DEFAULT.meta["categories"]) == 1000 and W.DEFAULT.meta["categories"][0] == \
        "tench"
    assert repr(W.DEFAULT) == "ResNet50_Weights.IMAGENET1K_V2"
    assert W.verify("IMAGENET1K_V1") is W.IMAGENET1K_V1
    assert W.verify("ResNet50_Weights.DEFAULT") is W.IMAGENET1K_V2
    with pytest.raises(TypeError, match="expected ResNet50_Weights but received "
                                        "ResNet18_Weights"):
        W.verify(M.ResNet18_Weights.DEFAULT)
    import copy
    import pickle
    assert copy.deepcopy(W.DEFAULT) is W.DEFAULT
    assert pickle.loads(pickle.dumps(W.DEFAULT)) is W.DEFAULT


def test_weights_transforms_preset():
    preset = M.ResNet50_Weights.IMAGENET1K_V2.transforms()
    assert preset.crop_size == [224] and preset.resize_size == [232]
    assert "interpolation=InterpolationMode.BILINEAR" in repr(preset)
    vit = M.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1.transforms()
    assert vit.crop_size == [384] and vit.interpolation == F.InterpolationMode.BICUBIC
    img = ember.randint(0, 256, (3, 40, 50), dtype=ember.uint8)
    small = M.AlexNet_Weights.DEFAULT.transforms().__class__(crop_size=8, resize_size=10)
    out = small(img)
    assert out.dtype == ember.float32 and out.shape == (3, 8, 8)
    # the last step is Normalize with ImageNet's statistics on [0, 1] values
    ref = F.center_crop(F.resize(img, [10]), [8]).numpy().astype(np.float32) / 255
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    np.testing.assert_allclose(out.numpy(), (ref - mean) / std, rtol=1e-5, atol=1e-6)


def test_registry():
    names = M.list_models()
    for n in ("alexnet", "resnet18", "vgg16_bn", "mobilenet_v3_small", "densenet121",
              "efficientnet_b0", "convnext_tiny", "vit_b_16", "squeezenet1_0",
              "shufflenet_v2_x1_0"):
        assert n in names
    assert names == sorted(names)
    assert M.list_models(include="resnet*", exclude="*101*") == [
        "resnet152", "resnet18", "resnet34", "resnet50"]
    assert M.list_models(module=M) == names
    assert M.get_model_weights("resnet18") is M.ResNet18_Weights
    assert M.get_model_weights(M.densenet121) is M.DenseNet121_Weights
    assert M.get_weight("MobileNet_V3_Large_Weights.IMAGENET1K_V2") is \
        M.MobileNet_V3_Large_Weights.IMAGENET1K_V2
    with pytest.raises(ValueError, match="Unknown model nope"):
        M.get_model("nope")
    with pytest.raises(ValueError, match="Invalid weight name provided: 'x'"):
        M.get_weight("x")


def test_pretrained_needs_the_cached_file(no_init, tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", str(tmp_path))
    with pytest.raises(RuntimeError, match="ember cannot download pretrained weights.*"
                                           "squeezenet1_1-b8a52dc0.pth"):
        M.squeezenet1_1(weights=M.SqueezeNet1_1_Weights.DEFAULT)
    with pytest.raises(ValueError, match="expected value 1000 but got 10"):
        M.squeezenet1_1(weights="DEFAULT", num_classes=10)
    # the legacy pretrained=True asks for DEFAULT, with torchvision's two warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="cannot download"):
            M.squeezenet1_1(pretrained=True)
    msgs = [str(w.message) for w in caught]
    assert any("'pretrained' is deprecated since 0.13" in m for m in msgs)
    assert any("weights=SqueezeNet1_1_Weights.IMAGENET1K_V1" in m for m in msgs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(M.squeezenet1_1(pretrained=False), M.SqueezeNet)
    # a file already in the hub cache under torchvision's name is loaded
    model = M.squeezenet1_1()
    sd = {k: v + 1 for k, v in model.state_dict().items()}
    (tmp_path / "checkpoints").mkdir()
    ember.save(sd, str(tmp_path / "checkpoints" / "squeezenet1_1-b8a52dc0.pth"))
    loaded = M.squeezenet1_1(weights="IMAGENET1K_V1")
    np.testing.assert_array_equal(loaded.classifier[1].bias.detach().numpy(),
                                  sd["classifier.1.bias"].numpy())


# ---- transforms ----------------------------------------------------------------------------------

def chw(seed=0, shape=(3, 10, 13)):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def test_five_and_ten_crop():
    x = chw()
    crops = T.FiveCrop((4, 6))(ember.tensor(x))
    t = torch.tensor(x)
    expected = [t[:, :4, :6], t[:, :4, 7:], t[:, 6:, :6], t[:, 6:, 7:], t[:, 3:7, 4:10]]
    for got, ref in zip(crops, expected):
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
    ten = T.TenCrop(4, vertical_flip=True)(ember.tensor(x))
    assert len(ten) == 10
    np.testing.assert_array_equal(ten[5].numpy(), t.flip(-2)[:, :4, :4].numpy())
    with pytest.raises(ValueError, match=r"Requested crop size \(11, 4\) is bigger than input "
                                         r"size \(10, 13\)"):
        F.five_crop(ember.tensor(x), (11, 4))


def test_random_erasing_replays_torch_draws():
    x = chw(1)
    for seed in range(4):
        ember.manual_seed(seed)
        got = T.RandomErasing(p=0.7, value="random")(ember.tensor(x))
        torch.manual_seed(seed)
        ref = torch.tensor(x)
        if torch.rand(1) < 0.7:  # torchvision's draws, in its order
            log_ratio = torch.log(torch.tensor((0.3, 3.3)))
            for _ in range(10):
                area = 130 * torch.empty(1).uniform_(0.02, 0.33).item()
                ar = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
                h, w = int(round(math.sqrt(area * ar))), int(round(math.sqrt(area / ar)))
                if not (h < 10 and w < 13):
                    continue
                v = torch.empty([3, h, w], dtype=torch.float32).normal_()
                i = torch.randint(0, 10 - h + 1, size=(1,)).item()
                j = torch.randint(0, 13 - w + 1, size=(1,)).item()
                ref[..., i:i + h, j:j + w] = v
                break
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
    with pytest.raises(ValueError, match="either a single value or 3"):
        T.RandomErasing(p=1, value=(1, 2))(ember.tensor(x))
    with pytest.raises(TypeError, match="img should be Tensor Image"):
        F.erase(np.zeros((3, 4, 4)), 0, 0, 1, 1, ember.tensor(0.0))


def test_random_affine_params_replay_torch_draws():
    ember.manual_seed(3)
    got = T.RandomAffine.get_params([-30.0, 30.0], [0.2, 0.1], [0.8, 1.2], [-5.0, 5.0, 1.0, 2.0],
                                    [20, 10])
    torch.manual_seed(3)
    u = [torch.empty(1).uniform_(a, b).item() for a, b in
         [(-30.0, 30.0), (-4.0, 4.0), (-1.0, 1.0), (0.8, 1.2), (-5.0, 5.0), (1.0, 2.0)]]
    assert got == (u[0], (int(round(u[1])), int(round(u[2]))), u[3], (u[4], u[5]))


def test_affine_quarter_turn_is_rot90():
    x = chw(2, (3, 8, 8))
    # affine's angle turns clockwise (rotate's counter-clockwise)
    got = F.affine(ember.tensor(x), angle=90, translate=[0, 0], scale=1.0, shear=0.0)
    np.testing.assert_allclose(got.numpy(), torch.rot90(torch.tensor(x), -1, (1, 2)).numpy(),
                               atol=1e-6)
    # a whole-pixel translation moves the image and fills the rest
    got = F.affine(ember.tensor(x), angle=0, translate=[2, 1], scale=1.0, shear=[0.0],
                   fill=[0.0, 0.0, 0.0])
    ref = torch.zeros(3, 8, 8)
    ref[:, 1:, 2:] = torch.tensor(x)[:, :7, :6]
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="Argument scale should be positive"):
        F.affine(ember.tensor(x), 0, [0, 0], 0.0, 0.0)


def test_random_affine_pil_and_repr():
    Image = pytest.importorskip("PIL.Image")
    img = Image.fromarray((chw(3, (9, 9, 3)) * 255).astype(np.uint8))
    out = F.affine(img, angle=90, translate=[0, 0], scale=1.0, shear=0.0)
    np.testing.assert_array_equal(np.asarray(out), np.rot90(np.asarray(img), -1))
    assert repr(T.RandomAffine(10, scale=(0.5, 1.0), fill=1)) == \
        "RandomAffine(degrees=[-10.0, 10.0], scale=(0.5, 1.0), fill=1)"


def test_v2_on_plain_images():
    from ember.vision.transforms import v2
    assert v2.RandomErasing is T.RandomErasing and v2.Normalize is T.Normalize
    img = np.random.default_rng(0).integers(0, 256, (5, 6, 3), dtype=np.uint8)
    pipeline = v2.Compose([v2.ToImage(), v2.ToDtype(ember.float32, scale=True)])
    out = pipeline(img)
    ref = torch.tensor(img).permute(2, 0, 1).float() / 255
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    assert v2.ToDtype(ember.int64)(ember.tensor([1.7])).dtype == ember.int64
    with pytest.raises(NotImplementedError, match="SanitizeBoundingBoxes.*tv_tensors"):
        v2.SanitizeBoundingBoxes
    with pytest.raises(AttributeError):
        v2.NoSuchTransform


# ---- ops layers ----------------------------------------------------------------------------------

def test_sigmoid_focal_loss_matches_formula():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 5)).astype(np.float32), (rng.random((4, 5)) > 0.5)
    y = y.astype(np.float32)
    tx, ty = torch.tensor(x), torch.tensor(y)
    p = torch.sigmoid(tx)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(tx, ty, reduction="none")
    p_t = p * ty + (1 - p) * (1 - ty)
    ref = (0.25 * ty + 0.75 * (1 - ty)) * ce * (1 - p_t) ** 2
    got = ops.sigmoid_focal_loss(ember.tensor(x), ember.tensor(y))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-7)
    got = ops.sigmoid_focal_loss(ember.tensor(x), ember.tensor(y), alpha=-1, gamma=1,
                                 reduction="mean")
    np.testing.assert_allclose(got.item(), (ce * (1 - p_t)).mean().item(), rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid alpha value: 2"):
        ops.sigmoid_focal_loss(ember.tensor(x), ember.tensor(y), alpha=2)


def test_stochastic_depth_replays_torch_bernoulli():
    x = chw(4, (6, 2, 3))
    ember.manual_seed(0)
    got = ops.stochastic_depth(ember.tensor(x), 0.4, "row", training=True)
    torch.manual_seed(0)
    noise = torch.empty([6, 1, 1]).bernoulli_(0.6).div_(0.6)
    np.testing.assert_allclose(got.numpy(), (torch.tensor(x) * noise).numpy(), rtol=1e-6)
    assert ops.StochasticDepth(0.5, "batch").eval()(ember.tensor(x)) is not None
    assert repr(ops.StochasticDepth(0.5, "batch")) == "StochasticDepth(p=0.5, mode=batch)"
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row', but got x"):
        ops.stochastic_depth(ember.tensor(x), 0.5, "x")


def test_frozen_batchnorm_and_squeeze_excitation():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    bn = ops.FrozenBatchNorm2d(4)
    stats = {k: rng.random(4).astype(np.float32) + 0.1 for k in
             ("weight", "bias", "running_mean", "running_var")}
    bn.load_state_dict({**{k: ember.tensor(v) for k, v in stats.items()},
                        "num_batches_tracked": ember.tensor(3)})
    assert [n for n, _ in bn.named_parameters()] == []
    ref = torch.nn.functional.batch_norm(
        torch.tensor(x), torch.tensor(stats["running_mean"]), torch.tensor(stats["running_var"]),
        torch.tensor(stats["weight"]), torch.tensor(stats["bias"]), training=False, eps=1e-5)
    np.testing.assert_allclose(bn(ember.tensor(x)).numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(bn) == "FrozenBatchNorm2d(4, eps=1e-05)"

    se = ops.SqueezeExcitation(4, 2)
    w = {k: torch.tensor(v.detach().numpy()) for k, v in se.state_dict().items()}
    tx = torch.tensor(x)
    s = torch.nn.functional.conv2d(tx.mean((2, 3), keepdim=True), w["fc1.weight"], w["fc1.bias"])
    s = torch.nn.functional.conv2d(torch.relu(s), w["fc2.weight"], w["fc2.bias"])
    np.testing.assert_allclose(se(ember.tensor(x)).detach().numpy(),
                               (torch.sigmoid(s) * tx).numpy(), rtol=1e-5, atol=1e-6)


def test_mlp_layout():
    mlp = ops.MLP(3, [4, 5], norm_layer=ember.nn.LayerNorm, dropout=0.1)
    assert [type(m).__name__ for m in mlp] == ["Linear", "LayerNorm", "ReLU", "Dropout",
                                               "Linear", "Dropout"]
    assert list(mlp.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias", "4.weight",
                                      "4.bias"]


def test_version_and_torchvision_alias_names():
    assert V.__version__ == "0.28.0"
    code = ("import torchvision\n"
            "from torchvision.models import resnet18, ResNet18_Weights, get_model, list_models\n"
            "from torchvision.transforms import v2, RandomErasing, FiveCrop\n"
            "from torchvision.ops import sigmoid_focal_loss, StochasticDepth, MLP\n"
            "from torchvision.io import read_image\n"
            "from torchvision.utils import draw_bounding_boxes\n"
            "print(torchvision.__version__, ResNet18_Weights.DEFAULT)\n")
    out = subprocess.run([sys.executable, "-m", "ember", "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0.28.0", "ResNet18_Weights.IMAGENET1K_V1"]


# ---- AutoAugment family --------------------------------------------------------------------------

def u8(seed=0, shape=(3, 9, 11)):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_pointwise_augment_ops_match_formulas():
    x = u8()
    t = torch.tensor(x)
    e = ember.tensor(x)
    np.testing.assert_array_equal(F.invert(e).numpy(), (255 - t).numpy())
    np.testing.assert_array_equal(F.posterize(e, 3).numpy(), (t & -32).numpy())
    np.testing.assert_array_equal(F.solarize(e, 100).numpy(),
                                  torch.where(t >= 100, 255 - t, t).numpy())
    xf = x.astype(np.float32) / 255
    tf = torch.tensor(xf)
    lo, hi = tf.amin((-2, -1), keepdim=True), tf.amax((-2, -1), keepdim=True)
    np.testing.assert_allclose(F.autocontrast(ember.tensor(xf)).numpy(),
                               ((tf - lo) / (hi - lo)).clamp(0, 1).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="Only torch.uint8 image tensors are supported"):
        F.posterize(ember.tensor(xf), 3)
    with pytest.raises(ValueError, match=r"sharpness_factor \(-1\) is not non-negative"):
        F.adjust_sharpness(e, -1)


def test_equalize_and_sharpness_match_pillow():
    Image = pytest.importorskip("PIL.Image")
    ImageOps = pytest.importorskip("PIL.ImageOps")
    ImageEnhance = pytest.importorskip("PIL.ImageEnhance")
    x = u8(1, (3, 16, 16))
    x[:, :, :4] = 7  # a spike in the histogram
    pil = Image.fromarray(x.transpose(1, 2, 0))
    got = F.equalize(ember.tensor(x)).numpy().transpose(1, 2, 0)
    np.testing.assert_array_equal(got, np.asarray(ImageOps.equalize(pil)))
    sharp = F.adjust_sharpness(ember.tensor(x), 1.7).numpy().transpose(1, 2, 0).astype(int)
    ref = np.asarray(ImageEnhance.Sharpness(pil).enhance(1.7)).astype(int)
    assert np.abs(sharp - ref).max() <= 1  # rounding of the blend, as torchvision's tests allow


def test_trivial_augment_and_randaugment_replay_torch_draws():
    from ember.vision.transforms.autoaugment import _apply_op
    x = ember.tensor(u8(2))
    names = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
             "Color", "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast",
             "Equalize"]
    signed = set(names[1:10])
    for seed in range(6):
        ember.manual_seed(seed)
        got = T.TrivialAugmentWide()(x)
        torch.manual_seed(seed)
        op = names[int(torch.randint(14, (1,)).item())]
        space = T.TrivialAugmentWide()._augmentation_space(31)[op][0]
        mag = float(space[int(torch.randint(len(space), (1,)).item())].item()) \
            if space.ndim > 0 else 0.0
        if op in signed and torch.randint(2, (1,)):
            mag = -mag
        np.testing.assert_array_equal(
            got.numpy(), _apply_op(x, op, mag, T.InterpolationMode.NEAREST, None).numpy())
    ember.manual_seed(7)
    got = T.RandAugment(num_ops=2, magnitude=9)(x)
    torch.manual_seed(7)
    ref = x
    for _ in range(2):
        op = names[int(torch.randint(14, (1,)).item())]
        space = T.RandAugment()._augmentation_space(31, (9, 11))[op][0]
        mag = float(space[9].item()) if space.ndim > 0 else 0.0
        if op in signed and torch.randint(2, (1,)):
            mag = -mag
        ref = _apply_op(ref, op, mag, T.InterpolationMode.NEAREST, None)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_autoaugment_params_and_policies():
    ember.manual_seed(11)
    pid, probs, signs = T.AutoAugment.get_params(25)
    torch.manual_seed(11)
    assert pid == int(torch.randint(25, (1,)).item())
    np.testing.assert_array_equal(probs.numpy(), torch.rand((2,)).numpy())
    np.testing.assert_array_equal(signs.numpy(), torch.randint(2, (2,)).numpy())
    for policy in T.AutoAugmentPolicy:
        assert len(T.AutoAugment(policy).policies) == 25
    space = T.AutoAugment()._augmentation_space(10, (32, 32))
    assert space["Posterize"][0].tolist() == [8, 8, 7, 7, 6, 6, 5, 5, 4, 4]
    assert repr(T.AutoAugment()) == "AutoAugment(policy=AutoAugmentPolicy.IMAGENET, fill=None)"


def test_random_perspective_replays_torch_draws_and_maps_corners():
    ember.manual_seed(5)
    start, end = T.RandomPerspective.get_params(20, 10, 0.5)
    torch.manual_seed(5)
    r = [int(torch.randint(lo, hi, size=(1,)).item()) for lo, hi in
         [(0, 6), (0, 3), (14, 20), (0, 3), (14, 20), (7, 10), (0, 6), (7, 10)]]
    assert end == [r[0:2], r[2:4], r[4:6], r[6:8]]
    assert start == [[0, 0], [19, 0], [19, 9], [0, 9]]
    coeffs = F._get_perspective_coeffs(start, end)
    for (sx, sy), (ex, ey) in zip(start, end):  # each end point maps back to its start point
        den = coeffs[6] * ex + coeffs[7] * ey + 1
        assert abs((coeffs[0] * ex + coeffs[1] * ey + coeffs[2]) / den - sx) < 1e-3
        assert abs((coeffs[3] * ex + coeffs[4] * ey + coeffs[5]) / den - sy) < 1e-3
    # the identity warp leaves the image unchanged
    x = chw(6, (3, 10, 20))
    out = F.perspective(ember.tensor(x), start, start)
    np.testing.assert_allclose(out.numpy(), x, atol=1e-5)
    ember.manual_seed(0)
    assert T.RandomPerspective(p=1.0)(ember.tensor(x)).shape == (3, 10, 20)


# ---- io and drawing ------------------------------------------------------------------------------

def test_read_and_decode_image(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    x = u8(8, (5, 7, 3))
    Image.fromarray(x).save(tmp_path / "a.png")
    from ember.vision import io
    img = io.read_image(str(tmp_path / "a.png"))
    assert img.dtype == ember.uint8 and img.shape == (3, 5, 7)
    np.testing.assert_array_equal(img.numpy(), x.transpose(2, 0, 1))
    gray = io.decode_image(io.read_file(str(tmp_path / "a.png")), mode="GRAY")
    np.testing.assert_array_equal(gray.numpy()[0],
                                  np.asarray(Image.fromarray(x).convert("L")))
    io.write_png(img, str(tmp_path / "b.png"))
    np.testing.assert_array_equal(io.read_image(str(tmp_path / "b.png")).numpy(), img.numpy())
    with pytest.raises(NotImplementedError, match="video"):
        io.read_video


def test_draw_segmentation_masks_and_boxes():
    pytest.importorskip("PIL.Image")
    x = u8(9, (3, 6, 8))
    masks = np.zeros((2, 6, 8), dtype=bool)
    masks[0, :3] = True
    masks[1, 2:4] = True
    got = V.utils.draw_segmentation_masks(ember.tensor(x), ember.tensor(masks), alpha=0.5,
                                          colors=["red", (0, 0, 255)])
    t = torch.tensor(x)
    drawn = t.clone()
    drawn[:, torch.tensor(masks[0])] = torch.tensor([255, 0, 0], dtype=torch.uint8)[:, None]
    drawn[:, torch.tensor(masks[1])] = torch.tensor([0, 0, 255], dtype=torch.uint8)[:, None]
    drawn[:, torch.tensor(masks.sum(0) > 1)] = 0
    np.testing.assert_array_equal(got.numpy(), (t * 0.5 + drawn * 0.5).to(torch.uint8).numpy())
    img = ember.zeros((3, 10, 10), dtype=ember.uint8)
    out = V.utils.draw_bounding_boxes(img, ember.tensor([[1, 2, 6, 8]]), colors="white")
    ref = np.zeros((10, 10), bool)
    ref[2:9, 1] = ref[2:9, 6] = ref[2, 1:7] = ref[8, 1:7] = True
    np.testing.assert_array_equal(out.numpy()[0] == 255, ref)
    with pytest.raises(ValueError, match=r"Boxes need to be in \(xmin, ymin, xmax, ymax\)"):
        V.utils.draw_bounding_boxes(img, ember.tensor([[6, 2, 1, 8]]))
    palette = torch.tensor([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1])
    assert V.utils._generate_color_palette(5) == [tuple(int(v) for v in i * palette % 255)
                                                  for i in range(5)]


def test_inception_v3_and_googlenet(no_init):
    with pytest.warns(FutureWarning, match="default weight initialization of inception_v3"):
        inc = M.inception_v3()
    assert n_params(inc) == 27161264 == M.Inception_V3_Weights.DEFAULT.meta["num_params"]
    for k in ("Conv2d_1a_3x3.conv.weight", "Conv2d_1a_3x3.bn.running_mean",
              "Mixed_5b.branch5x5_2.conv.weight", "Mixed_6e.branch7x7dbl_5.bn.weight",
              "AuxLogits.conv1.conv.weight", "AuxLogits.fc.weight",
              "Mixed_7c.branch3x3dbl_3b.conv.weight", "fc.bias"):
        assert k in inc.state_dict(), k
    g = M.googlenet(init_weights=False, aux_logits=False)
    assert n_params(g) == 6624904 == M.GoogLeNet_Weights.DEFAULT.meta["num_params"]
    assert "inception4e.branch3.1.conv.weight" in g.state_dict()
    g = M.googlenet(init_weights=False, num_classes=4)
    assert "aux2.fc2.weight" in g.state_dict()
    for p in g.parameters():
        p.data.fill_(0.001)
    out = g.train()(ember.randn(2, 3, 64, 64))
    assert type(out).__name__ == "GoogLeNetOutputs" and out.aux_logits1.shape == (2, 4)
    assert g.eval()(ember.randn(1, 3, 64, 64)).shape == (1, 4)
    x = ember.rand(1, 3, 2, 2)
    t = torch.tensor(x.numpy())
    ref = torch.cat([t[:, 0:1] * (0.229 / 0.5) + (0.485 - 0.5) / 0.5,
                     t[:, 1:2] * (0.224 / 0.5) + (0.456 - 0.5) / 0.5,
                     t[:, 2:3] * (0.225 / 0.5) + (0.406 - 0.5) / 0.5], 1)
    g.transform_input = True
    np.testing.assert_allclose(g._transform_input(x).numpy(), ref.numpy(), rtol=1e-6)


def test_feature_pyramid_network_matches_torch_arithmetic():
    from collections import OrderedDict
    tF = torch.nn.functional
    ember.manual_seed(0)
    fpn = ops.FeaturePyramidNetwork([4, 6], 5, extra_blocks=ops.feature_pyramid_network
                                    .LastLevelMaxPool())
    assert list(fpn.state_dict()) == [f"{b}.{i}.0.{k}" for b in ("inner_blocks", "layer_blocks")
                                      for i in (0, 1) for k in ("weight", "bias")]
    w = {k: torch.tensor(v.numpy()) for k, v in fpn.state_dict().items()}
    rng = np.random.default_rng(0)
    c0 = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    c1 = rng.standard_normal((1, 6, 4, 4)).astype(np.float32)
    out = fpn(OrderedDict(a=ember.tensor(c0), b=ember.tensor(c1)))
    assert list(out) == ["a", "b", "pool"]
    inner1 = tF.conv2d(torch.tensor(c1), w["inner_blocks.1.0.weight"], w["inner_blocks.1.0.bias"])
    p1 = tF.conv2d(inner1, w["layer_blocks.1.0.weight"], w["layer_blocks.1.0.bias"], padding=1)
    inner0 = tF.conv2d(torch.tensor(c0), w["inner_blocks.0.0.weight"], w["inner_blocks.0.0.bias"])
    inner0 = inner0 + tF.interpolate(inner1, size=(8, 8), mode="nearest")
    p0 = tF.conv2d(inner0, w["layer_blocks.0.0.weight"], w["layer_blocks.0.0.bias"], padding=1)
    for got, ref in ((out["a"], p0), (out["b"], p1), (out["pool"], p1[:, :, ::2, ::2])):
        np.testing.assert_allclose(got.detach().numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_multiscale_roi_align_levels():
    from collections import OrderedDict
    rng = np.random.default_rng(1)
    feats = OrderedDict((k, ember.tensor(rng.standard_normal((1, 2, s, s)).astype(np.float32)))
                        for k, s in (("f0", 32), ("f1", 16), ("skip", 8), ("f2", 8)))
    boxes = np.array([[0, 0, 20, 20], [5, 5, 120, 100], [0, 0, 127, 127], [10, 20, 300, 310]],
                     np.float32)
    pool = ops.MultiScaleRoIAlign(["f0", "f1", "f2"], 2, 2)
    got = pool(feats, [ember.tensor(boxes)], [(128, 128)])
    assert pool.scales == [0.25, 0.125, 0.0625]
    # FPN eq. 1 in torch: level = clamp(floor(4 + log2(sqrt(area) / 224) + 1e-6), 2, 4) - 2
    t = torch.tensor(boxes)
    area = (t[:, 2] - t[:, 0]) * (t[:, 3] - t[:, 1])
    levels = torch.clamp(torch.floor(4 + torch.log2(torch.sqrt(area) / 224) +
                                     torch.tensor(1e-6)), 2, 4).long() - 2
    names = ["f0", "f1", "f2"]
    for i, lvl in enumerate(levels.tolist()):
        ref = ops.roi_align(feats[names[lvl]], [ember.tensor(boxes[i:i + 1])], 2,
                            spatial_scale=pool.scales[lvl], sampling_ratio=2)
        np.testing.assert_allclose(got[i:i + 1].numpy(), ref.numpy(), rtol=1e-6)
    assert repr(pool) == ("MultiScaleRoIAlign(featmap_names=['f0', 'f1', 'f2'], "
                          "output_size=(2, 2), sampling_ratio=2)")


# ---- datasets ------------------------------------------------------------------------------------

def test_svhn_and_stl10_from_local_files(tmp_path):
    sio = pytest.importorskip("scipy.io")
    pytest.importorskip("PIL.Image")
    from ember.vision import datasets
    X = u8(10, (32, 32, 3, 4))
    sio.savemat(str(tmp_path / "test_32x32.mat"), {"X": X, "y": np.array([[10], [1], [5], [9]])})
    ds = datasets.SVHN(str(tmp_path), split="test")
    assert len(ds) == 4 and ds.labels.tolist() == [0, 1, 5, 9]
    img, target = ds[0]
    np.testing.assert_array_equal(np.asarray(img), X[:, :, :, 0])
    assert target == 0
    with pytest.raises(RuntimeError, match="SVHN reads train_32x32.mat"):
        datasets.SVHN(str(tmp_path), split="train")

    folder = tmp_path / "stl10_binary"
    folder.mkdir()
    raw = u8(11, (3, 3, 96, 96))  # stored column-major: (N, C, W, H)
    (folder / "test_X.bin").write_bytes(raw.tobytes())
    (folder / "test_y.bin").write_bytes(bytes([1, 10, 4]))
    (folder / "class_names.txt").write_text("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
    stl = datasets.STL10(str(tmp_path), split="test")
    assert stl.labels.tolist() == [0, 9, 3] and stl.classes[9] == "j"
    img, target = stl[1]
    np.testing.assert_array_equal(np.asarray(img), raw[1].transpose(2, 1, 0))
    assert target == 9
    with pytest.raises(ValueError, match="folds should be in the range"):
        datasets.STL10(str(tmp_path), split="test", folds=11)


def test_voc_detection_and_segmentation_from_a_local_devkit(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    from ember.vision import datasets
    voc = tmp_path / "VOCdevkit" / "VOC2012"
    for d in ("ImageSets/Main", "ImageSets/Segmentation", "JPEGImages", "Annotations",
              "SegmentationClass"):
        (voc / d).mkdir(parents=True)
    (voc / "ImageSets/Main/val.txt").write_text("a\n")
    (voc / "ImageSets/Segmentation/val.txt").write_text("a\n")
    Image.fromarray(u8(12, (4, 5, 3))).save(voc / "JPEGImages/a.jpg")
    mask = Image.new("P", (5, 4))
    mask.putpalette([v for c in range(256) for v in (c, 255 - c, c // 2)])
    mask.putdata(list(range(20)))
    mask.save(voc / "SegmentationClass/a.png")
    (voc / "Annotations/a.xml").write_text(
        "<annotation><filename>a.jpg</filename><object><name>dog</name><bndbox><xmin>1</xmin>"
        "</bndbox></object></annotation>")
    det = datasets.VOCDetection(str(tmp_path), image_set="val")
    img, target = det[0]
    assert img.size == (5, 4)
    assert target == {"annotation": {"filename": "a.jpg", "object": [
        {"name": "dog", "bndbox": {"xmin": "1"}}]}}
    seg = datasets.VOCSegmentation(str(tmp_path), image_set="val",
                                   transforms=lambda i, t: (i, np.asarray(t)))
    assert seg[0][1].tolist() == np.arange(20).reshape(4, 5).tolist()
    with pytest.raises(RuntimeError, match="VOCDetection reads"):
        datasets.VOCDetection(str(tmp_path), image_set="train")
    with pytest.raises(ValueError):
        datasets.VOCDetection(str(tmp_path), year="2013")
    with pytest.raises(NotImplementedError, match="models.detection.fasterrcnn_resnet50_fpn"):
        M.detection.fasterrcnn_resnet50_fpn


def test_coco_detection_and_captions(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    import json
    from ember.vision import datasets
    for name in ("x.jpg", "y.jpg"):
        Image.fromarray(u8(13, (4, 6, 3))).save(tmp_path / name)
    anns = {"images": [{"id": 7, "file_name": "y.jpg"}, {"id": 3, "file_name": "x.jpg"}],
            "annotations": [{"id": 1, "image_id": 7, "category_id": 2, "caption": "b",
                             "bbox": [0, 0, 1, 1], "iscrowd": 0, "area": 1.0},
                            {"id": 2, "image_id": 3, "category_id": 1, "caption": "a",
                             "bbox": [1, 1, 2, 2], "iscrowd": 1, "area": 4.0},
                            {"id": 5, "image_id": 7, "category_id": 1, "caption": "c",
                             "bbox": [2, 2, 1, 1], "iscrowd": 0, "area": 1.0}],
            "categories": [{"id": 1, "name": "cat", "supercategory": "animal"},
                           {"id": 2, "name": "dog", "supercategory": "animal"}]}
    (tmp_path / "ann.json").write_text(json.dumps(anns))
    ds = datasets.CocoDetection(str(tmp_path), str(tmp_path / "ann.json"))
    assert ds.ids == [3, 7] and len(ds) == 2
    img, target = ds[1]
    assert img.size == (6, 4) and [a["id"] for a in target] == [1, 5]
    caps = datasets.CocoCaptions(str(tmp_path), str(tmp_path / "ann.json"))
    assert caps[1][1] == ["b", "c"]
    assert ds.coco.getAnnIds(imgIds=7, iscrowd=0) == [1, 5]
    assert ds.coco.getCatIds(catNms=["dog"]) == [2]
    with pytest.raises(ValueError, match="Index must be of type integer"):
        ds[0.0]


def test_random_pointwise_transforms_draw_once():
    x = ember.tensor(u8(14))
    t = torch.tensor(x.numpy())
    cases = [(T.RandomInvert(p=0.5), 255 - t), (T.RandomPosterize(2, p=0.5), t & -64),
             (T.RandomSolarize(128, p=0.5), torch.where(t >= 128, 255 - t, t))]
    for seed in range(4):
        for tr, applied in cases:
            ember.manual_seed(seed)
            torch.manual_seed(seed)
            expected = applied if torch.rand(1).item() < 0.5 else t
            np.testing.assert_array_equal(tr(x).numpy(), expected.numpy())
    assert repr(T.RandomPosterize(2)) == "RandomPosterize(bits=2,p=0.5)"
    assert repr(T.RandomEqualize()) == "RandomEqualize(p=0.5)"
    assert T.RandomAutocontrast(p=1.0).to(ember.float64)(x).shape == x.shape
