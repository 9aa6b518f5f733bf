"""ember.vision.models: torchvision's classification models with its module names, so its
state dicts load, and its weights enums (`ResNet18_Weights.DEFAULT`: url, meta, transforms()),
registry (get_model, list_models, get_model_weights, get_weight) and legacy `pretrained=`.
ember does not download: pretrained weights load only from the hub cache (see _api)."""
from ._api import (Weights, WeightsEnum, get_model, get_model_builder,  # noqa: F401
                   get_model_weights, get_weight, list_models)
from .alexnet import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv3 import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .shufflenetv2 import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .efficientnet import *  # noqa: F401,F403
from .convnext import *  # noqa: F401,F403
from .vision_transformer import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .googlenet import *  # noqa: F401,F403
from .regnet import *  # noqa: F401,F403
from . import detection, segmentation, video, optical_flow, quantization  # noqa: F401,E402
