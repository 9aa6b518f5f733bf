"""ember.vision: torchvision's role -- datasets, transforms, models, detection ops and the image
utilities (`make_grid`, `save_image`) on ember. Under `python -m ember`, `import torchvision`
is this package."""
from . import datasets  # noqa: F401
from . import models, transforms, ops, utils, io  # noqa: F401

__version__ = "0.28.0"  # the torchvision release matching the PyTorch ember follows
