"""What torchvision's model builders share: `weights=` handling.

torchvision's `weights=` names a pretrained checkpoint that it downloads. ember has no network,
so `weights` is either None (random init, torchvision's default) or the path of a local
state-dict file -- for example one written by `torch.save(torchvision_model.state_dict(), p)` --
which is loaded with strict key matching.
"""
import os

from ... import nn, serialization

def _is_norm(module):
    """torchvision initialises BatchNorm and GroupNorm layers to weight 1, bias 0."""
    return isinstance(module, (nn.BatchNorm2d, nn.GroupNorm))


def _verify_weights(weights):
    """None, or the path of an existing local file; anything else is an error (checked before
    the model is built, so a bad argument fails fast)."""
    if weights is None:
        return None
    if not isinstance(weights, (str, os.PathLike)):
        raise ValueError(
            f"weights={weights!r}: ember.vision cannot download pretrained weights; pass "
            f"weights=None or the path of a local state-dict file")
    path = os.fspath(weights)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"weights={path!r} is not a local file (ember.vision does not download weights)")
    return path


def _build(model_fn, weights, **kwargs):
    """Check `weights`, build the model, and load the state dict from `weights` if given
    (strict: every key must match)."""
    path = _verify_weights(weights)
    model = model_fn(**kwargs)
    if path is not None:
        model.load_state_dict(serialization.load(path, map_location="cpu", weights_only=True))
    return model


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
