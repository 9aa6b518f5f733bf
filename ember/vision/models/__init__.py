"""ember.vision.models: torchvision's classification models with its module names, so its
state dicts load (from local files: ember does not download weights)."""
from .resnet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
