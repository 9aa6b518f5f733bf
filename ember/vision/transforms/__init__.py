"""ember.vision.transforms: torchvision's image transforms, on PIL images and ember tensors."""
from .transforms import *  # noqa: F401,F403
from . import functional  # noqa: F401
from . import v2  # noqa: F401,E402
from .autoaugment import (AutoAugment, AutoAugmentPolicy, RandAugment,  # noqa: F401,E402
                          TrivialAugmentWide)
