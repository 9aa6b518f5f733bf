"""torch.nn: modules, parameters, functional forms and initialisation."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
del utils  # noqa: F821  the star import bound nn.modules.utils here; nn.utils is the package below
from . import functional, init, utils, grad, common_types
del attention  # noqa: F821  the star import bound nn.modules.attention; nn.attention is the package
from . import attention
from . import parallel
from .parallel import DataParallel
