"""torch.nn: modules, parameters, functional forms and initialisation."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from . import functional, init, utils, grad, common_types
from . import parallel
from .parallel import DataParallel
