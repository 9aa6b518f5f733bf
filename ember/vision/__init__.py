"""ember.vision: torchvision's role -- datasets, transforms, models and detection ops on ember."""
from . import datasets  # noqa: F401
from . import models, transforms, ops  # noqa: F401
