"""Vision Transformer B/16, B/32, L/16, L/32, H/14 (Dosovitskiy et al. 2020) as torchvision builds
them: `conv_proj` (patchify), `class_token`, `encoder` (pos_embedding, layers.encoder_layer_N
with ln_1 / self_attention / ln_2 / mlp, final ln), `heads` (head, or pre_logits + act + head
with representation_size). Pretrained weights fix image_size to their meta["min_size"]."""
import math
from collections import OrderedDict, namedtuple
from functools import partial

import ember
from ... import nn
from ..ops.misc import Conv2dNormActivation, MLP
from ._api import WeightsEnum, _weights_enum
from ._utils import _build, _builder, _ovewrite_named_param

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "ViT_B_32_Weights", "ViT_L_16_Weights",
           "ViT_L_32_Weights", "ViT_H_14_Weights", "vit_b_16", "vit_b_32", "vit_l_16",
           "vit_l_32", "vit_h_14"]

ConvStemConfig = namedtuple("ConvStemConfig", ["out_channels", "kernel_size", "stride",
                                               "norm_layer", "activation_layer"],
                            defaults=[nn.BatchNorm2d, nn.ReLU])


class MLPBlock(MLP):
    """The transformer's MLP (Linear, GELU, Dropout, Linear, Dropout); checkpoints from before
    version 2 named its layers linear_1 / linear_2, renamed on loading."""
    _version = 2

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(2):
                for kind in ["weight", "bias"]:
                    old_key = f"{prefix}linear_{i + 1}.{kind}"
                    if old_key in state_dict:
                        state_dict[f"{prefix}{3 * i}.{kind}"] = state_dict.pop(old_key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _check_3d(input):
    if input.dim() != 3:
        raise AssertionError(f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        _check_3d(input)
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                 attention_dropout, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(
            ember.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers = OrderedDict()
        for i in range(num_layers):
            layers[f"encoder_layer_{i}"] = EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                        attention_dropout, norm_layer)
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        _check_3d(input)
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
                 dropout=0.0, attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise AssertionError("Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        if conv_stem_configs is not None:
            seq_proj = nn.Sequential()
            prev = 3
            for i, cfg in enumerate(conv_stem_configs):
                seq_proj.add_module(f"conv_bn_relu_{i}", Conv2dNormActivation(
                    in_channels=prev, out_channels=cfg.out_channels, kernel_size=cfg.kernel_size,
                    stride=cfg.stride, norm_layer=cfg.norm_layer,
                    activation_layer=cfg.activation_layer))
                prev = cfg.out_channels
            seq_proj.add_module("conv_last", nn.Conv2d(in_channels=prev, out_channels=hidden_dim,
                                                       kernel_size=1))
            self.conv_proj = seq_proj
        else:
            self.conv_proj = nn.Conv2d(in_channels=3, out_channels=hidden_dim,
                                       kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # + the class token
        self.class_token = nn.Parameter(ember.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        if isinstance(self.conv_proj, nn.Conv2d):
            k = self.conv_proj.kernel_size
            fan_in = self.conv_proj.in_channels * k[0] * k[1]
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            if self.conv_proj.bias is not None:
                nn.init.zeros_(self.conv_proj.bias)
        elif isinstance(getattr(self.conv_proj, "conv_last", None), nn.Conv2d):
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            if last.bias is not None:
                nn.init.zeros_(last.bias)
        if hasattr(self.heads, "pre_logits") and isinstance(self.heads.pre_logits, nn.Linear):
            nn.init.trunc_normal_(self.heads.pre_logits.weight,
                                  std=math.sqrt(1 / self.heads.pre_logits.in_features))
            nn.init.zeros_(self.heads.pre_logits.bias)
        if isinstance(self.heads.head, nn.Linear):
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        if h != self.image_size:
            raise AssertionError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise AssertionError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        x = self.conv_proj(x).reshape(n, self.hidden_dim, (h // p) * (w // p))
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        batch_class_token = self.class_token.expand(x.shape[0], -1, -1)
        x = self.encoder(ember.cat([batch_class_token, x], dim=1))
        return self.heads(x[:, 0])


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights,
                        kwargs):
    if isinstance(weights, WeightsEnum):
        assert weights.meta["min_size"][0] == weights.meta["min_size"][1]
        _ovewrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
    image_size = kwargs.pop("image_size", 224)
    return _build(VisionTransformer, weights, image_size=image_size, patch_size=patch_size,
                  num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
                  mlp_dim=mlp_dim, **kwargs)


ViT_B_16_Weights = _weights_enum("ViT_B_16_Weights", __name__)
ViT_B_32_Weights = _weights_enum("ViT_B_32_Weights", __name__)
ViT_L_16_Weights = _weights_enum("ViT_L_16_Weights", __name__)
ViT_L_32_Weights = _weights_enum("ViT_L_32_Weights", __name__)
ViT_H_14_Weights = _weights_enum("ViT_H_14_Weights", __name__)


@_builder(ViT_B_16_Weights)
def vit_b_16(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(16, 12, 12, 768, 3072, weights, kwargs)


@_builder(ViT_B_32_Weights)
def vit_b_32(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(32, 12, 12, 768, 3072, weights, kwargs)


@_builder(ViT_L_16_Weights)
def vit_l_16(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(16, 24, 16, 1024, 4096, weights, kwargs)


@_builder(ViT_L_32_Weights)
def vit_l_32(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(32, 24, 16, 1024, 4096, weights, kwargs)


@_builder(ViT_H_14_Weights)
def vit_h_14(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(14, 32, 16, 1280, 5120, weights, kwargs)
