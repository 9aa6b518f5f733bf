"""torchvision's model registry and pretrained-weight enums: `Weights`, `WeightsEnum` (one enum per
model builder, e.g. `ResNet18_Weights.IMAGENET1K_V1` with `.url`, `.meta`, `.transforms()`),
`get_model`, `get_model_builder`, `get_model_weights`, `get_weight`, `list_models`.

ember has no network access for weights: `WeightsEnum.get_state_dict` loads the checkpoint only
when it already sits in the hub cache directory under torchvision's file name
(`<hub dir>/checkpoints/<basename of url>`, where `torch.hub`/torchvision put it); otherwise it
raises a RuntimeError that names the file to place there.
"""
import fnmatch
import os
import typing
from dataclasses import dataclass
from enum import Enum
from functools import partial
from urllib.parse import urlparse

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights",
           "get_weight", "list_models"]


@dataclass
class Weights:
    """A pretrained checkpoint: where it lives (`url`), the constructor of its preprocessing
    (`transforms`, called with no argument) and its `meta` (categories, num_params, metrics)."""
    url: str
    transforms: typing.Callable
    meta: dict

    def __eq__(self, other):
        # partial objects compare by identity; compare their parts so that a deep-copied or
        # unpickled enum member finds its definition again.
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        a, b = self.transforms, other.transforms
        if isinstance(a, partial) and isinstance(b, partial):
            return a.func == b.func and a.args == b.args and a.keywords == b.keywords
        return a == b

    __hash__ = None


def _cached_file(url):
    from ... import hub
    return os.path.join(hub.get_dir(), "checkpoints", os.path.basename(urlparse(url).path))


class WeightsEnum(Enum):
    """Parent of every model's weights enum; the members' values are `Weights`."""

    @classmethod
    def verify(cls, obj):
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but "
                                f"received {obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        """The checkpoint's state dict, from the hub cache only (ember does not download)."""
        path = _cached_file(self.url)
        if not os.path.isfile(path):
            raise RuntimeError(
                f"{self!r}: ember cannot download pretrained weights. Download {self.url} "
                f"yourself and put it at {path} (the hub cache torchvision uses), or pass "
                f"weights=None")
        from ... import hub
        kwargs.pop("progress", None)
        kwargs.pop("check_hash", None)
        return hub.load_state_dict_from_url(self.url, *args, weights_only=True, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


def _weights_enum(name, module):
    """The enum class `name` built from the table of torchvision's entries (_weights_table)."""
    from ._weights_table import WEIGHTS
    from ._meta import IMAGENET_CATEGORIES
    from ...vision.transforms._presets import ImageClassification
    from ...vision.transforms.functional import InterpolationMode
    members, values = [], {}
    for entry in WEIGHTS[name]:
        if len(entry) == 2:  # an alias such as DEFAULT
            members.append((entry[0], values[entry[1]]))
            continue
        member, url, tkw, meta = entry
        tkw = dict(tkw)
        if "interpolation" in tkw:
            tkw["interpolation"] = InterpolationMode[tkw["interpolation"]]
        meta = {**meta, "categories": IMAGENET_CATEGORIES}
        values[member] = Weights(url=url, transforms=partial(ImageClassification, **tkw),
                                 meta=meta)
        members.append((member, values[member]))
    return WeightsEnum(name, members, module=module, qualname=name)


def get_weight(name):
    """The weights enum member named like "ResNet50_Weights.IMAGENET1K_V1"."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    from ... import vision
    for module in (vision.models,):
        cls = module.__dict__.get(enum_name)
        if isinstance(cls, type) and issubclass(cls, WeightsEnum):
            return cls[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                     f"retrieved.")


def get_model_weights(name):
    """The weights enum class of a model builder (the builder or its registered name)."""
    fn = get_model_builder(name) if isinstance(name, str) else name
    return _get_enum_from_fn(fn)


def _get_enum_from_fn(fn):
    hints = getattr(fn, "__annotations__", {})
    if "weights" not in hints:
        raise ValueError("The method is missing the 'weights' argument.")
    ann = hints["weights"]
    candidates = [ann] + list(typing.get_args(ann))
    for t in candidates:
        if isinstance(t, type) and issubclass(t, WeightsEnum):
            return t
    raise ValueError("The WeightsEnum class for the specific method couldn't be retrieved. "
                     "Make sure the typing info is correct.")


BUILTIN_MODELS = {}


def register_model(name=None):
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered models, from `module` if given (e.g.
    `torchvision.models`), kept by the fnmatch filters `include`, then dropped by `exclude`."""
    all_models = {k for k, v in BUILTIN_MODELS.items()
                  if module is None or v.__module__.rsplit(".", 1)[0] == module.__name__}
    if include:
        models = set()
        for f in ([include] if isinstance(include, str) else include):
            models |= set(fnmatch.filter(all_models, f))
    else:
        models = all_models
    if exclude:
        for f in ([exclude] if isinstance(exclude, str) else exclude):
            models -= set(fnmatch.filter(all_models, f))
    return sorted(models)


def get_model_builder(name):
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    """The model registered under `name`, built with `config` (weights=..., num_classes=...)."""
    return get_model_builder(name)(**config)

