"""PyTorch's `_refs` role: torch functions written as compositions of ops (reshape, einsum,
softmax's dtype handling, quantile, ...), so autograd, explain and tracing see the ops they
call. One module per op family; importing the package installs their Tensor methods. The
package namespace holds every function below nn (the bindings' too): code inside ember that
would write `torch.cat(...)` writes `E.cat(...)` with `from ember import _refs as E`."""
from .._bindings import install_methods
from .._bindings import *  # noqa: F401,F403  (so that `_refs` is every function below nn)
from .. import _bindings
from .elementwise import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from . import elementwise, reduction, shape, linalg, nn

__all__ = sorted(set(_bindings.__all__).union(*(m.__all__ for m in (elementwise, reduction,
                                                                     shape, linalg, nn))))
for _module in (elementwise, reduction, shape, linalg, nn):
    install_methods(_module.METHODS)
