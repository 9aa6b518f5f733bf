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
from .linear_algebra import *  # noqa: F401,F403
from .activations import *  # noqa: F401,F403
from . import elementwise, reduction, shape, linear_algebra, activations
from .foreach import *  # noqa: F401,F403,E402  (torch._foreach_*: loops over the ops above)
from . import foreach

_FAMILIES = (elementwise, reduction, shape, linear_algebra, activations, foreach)
__all__ = sorted(set(_bindings.__all__).union(*(m.__all__ for m in _FAMILIES)))
for _module in _FAMILIES:
    install_methods(_module.METHODS)

# torch._refs as PyTorch's test code reaches it: the names ember's code defines above, then any
# other of ember's operators (see _namespaces), and the torch._refs.<namespace> modules.
from . import _namespaces  # noqa: E402
from ._namespaces import cauchy, exponential, geometric, log_normal  # noqa: F401,E402
from . import _conversions, fft, linalg, nn, special  # noqa: F401,E402
__getattr__ = _namespaces.namespace_getattr(__name__, "ember", tensor_methods=True)
