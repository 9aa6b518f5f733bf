"""torch.ao.nn.qat: no module classes in ember (see ember.ao)."""
from . import modules  # noqa: F401
from .modules import *  # noqa: F401,F403

__all__ = []
