"""torch._ops: the op namespace (`torch._ops.ops`, ember/_dispatch/ops.py) and
HigherOrderOperator, an operator written in Python with one implementation per functorch
transform and dispatch key.

`HigherOrderOperator(name)` registers implementations with `py_impl(key)`, key a
`torch._C._functorch.TransformType` or a `torch._C.DispatchKey`. A call runs the innermost
running vmap's implementation, unless autograd records one of the tensors (given an interpreter: `level()`, `batch_size()`,
`randomness()`, and `lower()`, the block run as if that vmap were not running); otherwise the
implementation of the tensors' autograd key (AutogradCPU, ...), or the first one registered
under a key.

ember's grad and jvp are autograd itself (ember/_functorch/eager_transforms.py): they need no
rule of the operator's, so its autograd-key implementation runs under them and is
differentiated like any Python code.
"""
import abc

from .._C._dispatch_keys import DispatchKey
from .._C._functorch import TransformType
from .._core.tensor import Tensor
from .._dispatch.ops import ops
from .._dispatch import dispatcher as _dispatcher
from .._functorch.vmap import _levels, lower
from ..utils._pytree import tree_flatten

OpOverload = _dispatcher.OpOverload   # torch._ops names the op classes
OpOverloadPacket = _dispatcher.OpOverloadPacket

__all__ = ["HigherOrderOperator", "ops"]

_AUTOGRAD_KEYS = {"cpu": DispatchKey.AutogradCPU, "cuda": DispatchKey.AutogradCUDA,
                  "meta": DispatchKey.AutogradMeta}


class _VmapInterpreter:
    def __init__(self, entry):
        self._entry = entry

    def key(self):
        return TransformType.Vmap

    def level(self):
        return self._entry[0]

    def batch_size(self):
        return self._entry[1]

    def randomness(self):
        return self._entry[2]

    def lower(self):
        return lower(self._entry)


class HigherOrderOperator(abc.ABC):
    """Subclasses define `__call__` (usually calling this one's, which dispatches)."""

    def __init__(self, name, *, cacheable=False, supports_training_input_mutation=False):
        if type(self) is HigherOrderOperator:
            raise RuntimeError("Direct instantiation of HigherOrderOperator is not allowed. "
                               "Please subclass it.")
        self._name = name
        self.__name__ = name
        self.py_kernels = {}

    def name(self):
        return self._name

    def py_impl(self, key):
        def register(fn):
            self.py_kernels[key] = fn
            return fn
        return register

    @abc.abstractmethod
    def __call__(self, *args, **kwargs):
        tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, Tensor)]
        # a batched tensor that autograd records (grad inside vmap) stays batched: ember's
        # autograd differentiates the autograd-key implementation on it directly
        if _levels and TransformType.Vmap in self.py_kernels and not any(
                t.requires_grad for t in tensors):
            return self.py_kernels[TransformType.Vmap](_VmapInterpreter(_levels[-1]), *args,
                                                       **kwargs)
        device = tensors[0].device.type if tensors else "cpu"
        for key in (_AUTOGRAD_KEYS.get(device), DispatchKey.CompositeImplicitAutograd,
                    DispatchKey.CompositeExplicitAutograd):
            if key in self.py_kernels:
                return self.py_kernels[key](*args, **kwargs)
        dispatch_keys = [k for k in self.py_kernels if isinstance(k, DispatchKey)]
        if not dispatch_keys:
            raise NotImplementedError(f"could not find kernel for HigherOrderOperator "
                                      f"{self._name}")
        return self.py_kernels[dispatch_keys[0]](*args, **kwargs)

    def __str__(self):
        return self._name
