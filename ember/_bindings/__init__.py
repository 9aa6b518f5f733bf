"""The Python face of the ops: `ember.*` functions and `Tensor` methods with PyTorch's
signatures. Most are generated from the schema lines (codegen.py -> generated.py); the rest are
written by hand, one module per kind: factories.py (creation and sampling), overloads.py (names
whose Python overloads no single schema describes), tensor_methods.py (operators, conversions,
properties) and indexing.py (`t[...]` and `t[...] = v`). Composite functions written from ops
are PyTorch's `_refs` role and live in `ember/_refs/`.

Importing the package installs the methods on Tensor, generated ones first so that a hand-written
method of the same name (an irregular overload) is the one that stays.
"""
from .._core.tensor import Tensor
from .generated import *  # noqa: F401,F403
from .factories import *  # noqa: F401,F403
from .overloads import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .sparse_compressed import *  # noqa: F401,F403
from . import generated, factories, overloads, tensor_methods, sparse, sparse_compressed
from .legacy_tensor_types import tensor_new


def install_methods(methods, properties=None):
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    for name, prop in (properties or {}).items():
        setattr(Tensor, name, prop)


__all__ = sorted(set(generated.__all__) | set(factories.__all__) | set(overloads.__all__)
                 | set(sparse.__all__) | set(sparse_compressed.__all__))
install_methods(generated.METHODS)
install_methods(factories.METHODS)
install_methods(overloads.METHODS)
install_methods(tensor_methods.METHODS, tensor_methods.PROPERTIES)
install_methods(sparse.METHODS)
install_methods(sparse_compressed.METHODS)
Tensor.__new__ = staticmethod(tensor_new)
