"""What torchvision's model builders share: `weights=` / legacy `pretrained=` handling and the
model registry entry.

`weights` is None (random init, torchvision's default), a member of the builder's weights enum
(or its name, "IMAGENET1K_V1" / "ResNet18_Weights.DEFAULT"), whose checkpoint is read from the
hub cache only (ember does not download: see _api.WeightsEnum.get_state_dict), or -- ember's
addition -- the path of a local state-dict file, loaded with strict key matching.
"""
import functools
import os
import typing
import warnings

from ... import nn, serialization
from ._api import WeightsEnum, register_model

def _is_norm(module):
    """torchvision initialises BatchNorm and GroupNorm layers to weight 1, bias 0."""
    return isinstance(module, (nn.BatchNorm2d, nn.GroupNorm))


def _init_mobile_weights(model, init_linear):
    """The initialisation torchvision's MobileNet and EfficientNet families share: convolutions
    Kaiming-normal (fan_out) with zero bias, norms weight 1 / bias 0, and each Linear layer by
    `init_linear(layer)` (the one part in which the families differ)."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif _is_norm(m):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            init_linear(m)
            nn.init.zeros_(m.bias)


def _normal_001(linear):
    """MobileNet's Linear weights: normal(0, 0.01)."""
    nn.init.normal_(linear.weight, 0, 0.01)


def _verify_weights(weights, weights_enum=None):
    """None, a local file path, or a member of `weights_enum` (checked before the model is
    built, so a bad argument fails fast)."""
    if weights is None:
        return None
    if isinstance(weights, (str, os.PathLike)) and os.path.isfile(os.fspath(weights)):
        return os.fspath(weights)
    looks_like_path = isinstance(weights, os.PathLike) or (
        isinstance(weights, str) and (os.sep in weights or weights.endswith(
            (".pt", ".pth", ".bin", ".ckpt", ".tar"))))
    if weights_enum is not None and not looks_like_path:
        return weights_enum.verify(weights)  # torchvision's KeyError / TypeError
    if isinstance(weights, (str, os.PathLike)):
        raise FileNotFoundError(
            f"weights={os.fspath(weights)!r} is not a local file (ember.vision does not "
            f"download weights)")
    raise ValueError(f"weights={weights!r}: ember.vision cannot download pretrained weights; "
                     f"pass weights=None or the path of a local state-dict file")


def _build(model_fn, weights, _remap=None, **kwargs):
    """Build the model and load the state dict of `weights` (already checked by the builder's
    `_builder` wrapper; strict: every key must match). A weights enum member fixes num_classes
    to its number of categories."""
    if not isinstance(weights, WeightsEnum):
        weights = _verify_weights(weights)
    if isinstance(weights, WeightsEnum):
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = model_fn(**kwargs)
    if isinstance(weights, WeightsEnum):
        state_dict = weights.get_state_dict(progress=True, check_hash=True)
    elif weights is not None:
        state_dict = serialization.load(weights, map_location="cpu", weights_only=True)
    else:
        return model
    model.load_state_dict(_remap(state_dict) if _remap is not None else state_dict)
    return model


def _builder(weights_enum, name=None):
    """Decorator of a model builder: registers it (get_model/list_models), annotates `weights`
    with its enum (get_model_weights), and maps the legacy `pretrained=True/False` to
    `weights=<enum>.DEFAULT/None` with torchvision's deprecation warnings."""
    def wrap(fn):
        @functools.wraps(fn)
        def builder(*args, **kwargs):
            if args:
                raise TypeError(f"{fn.__name__}() takes its arguments by keyword only")
            if "pretrained" in kwargs and kwargs.get("weights", None) is None:
                pretrained = kwargs.pop("pretrained")
                default = weights_enum.DEFAULT if pretrained else None
                warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be "
                              "removed in the future, please use 'weights' instead.")
                msg = ("Arguments other than a weight enum or `None` for 'weights' are "
                       "deprecated since 0.13 and may be removed in the future. The current "
                       f"behavior is equivalent to passing `weights={default}`.")
                if pretrained:
                    msg += (f" You can also use `weights={weights_enum.__name__}.DEFAULT` to "
                            f"get the most up-to-date weights.")
                warnings.warn(msg)
                kwargs["weights"] = default
            kwargs["weights"] = _verify_weights(kwargs.get("weights"), weights_enum)
            return fn(**kwargs)
        builder.__annotations__ = {**getattr(fn, "__annotations__", {}),
                                   "weights": typing.Optional[weights_enum]}
        return register_model(name)(builder)
    return wrap


def _ovewrite_named_param(kwargs, param, new_value):
    """Set a builder's fixed argument (resnext50_32x4d's groups=32); a different value the
    caller passed for it is an error, not silently replaced. (torchvision's name, typo and all.)"""
    if param in kwargs and kwargs[param] != new_value:
        raise ValueError(f"The parameter '{param}' expected value {new_value} but got "
                         f"{kwargs[param]} instead.")
    kwargs[param] = new_value


def _make_divisible(v, divisor, min_value=None):
    """Round a channel count `v` to a multiple of `divisor` (MobileNet's width multiplier),
    never going below `min_value` nor more than 10% below `v`."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v
