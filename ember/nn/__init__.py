"""torch.nn: modules, parameters, functional forms and initialisation."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
del utils  # noqa: F821  the star import bound nn.modules.utils here; nn.utils is the package below
from . import functional, init, utils, grad, common_types
del attention  # noqa: F821  the star import bound nn.modules.attention; nn.attention is the package
from . import attention
from . import parallel
from .parallel import DataParallel


def factory_kwargs(kwargs):
    """The factory keywords (device, dtype, memory_format) among a module's `kwargs`, as one dict
    for `ember.empty(..., **r)`: those given under `factory_kwargs={...}` merged with those
    given directly; an unknown keyword, or one given both ways, is a TypeError."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
