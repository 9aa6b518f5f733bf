"""torch._C.DispatchKey, DispatchKeySet and the thread-local include/exclude sets.

PyTorch's dispatcher picks a kernel from the highest-priority key in a tensor's key set, after
adding the thread's local include set and removing its local exclude set
(`_ExcludeDispatchKeyGuard` adds keys to the exclude set for a block). ember's dispatcher
chooses kernels by its own rules (ember/_dispatch/dispatcher.py) and does not consult these
sets: they are kept so code that names keys, guards a block, or reads the sets back runs as
written.
"""
import enum
import threading

# PyTorch's functionality and per-backend keys, in PyTorch's order
_NAMES = (
    "Undefined CompositeExplicitAutogradNonFunctional CompositeExplicitAutograd "
    "CompositeImplicitAutogradNestedTensor CompositeImplicitAutograd AutogradNestedTensor "
    "AutogradOther Autograd Conjugate ZeroTensor Negative BackendSelect ADInplaceOrView "
    "PythonTLSSnapshot Python FuncTorchDynamicLayerFrontMode FuncTorchDynamicLayerBackMode "
    "FuncTorchBatchedDecomposition FuncTorchBatched FuncTorchVmapMode FuncTorchGradWrapper "
    "PythonDispatcher PreDispatch Functionalize AutocastCPU AutocastMPS AutocastXPU AutocastHPU "
    "AutocastIPU AutocastCUDA AutocastPrivateUse1 Dense CPU CUDA HIP XLA MPS IPU XPU HPU VE Lazy "
    "MTIA MAIA PrivateUse1 PrivateUse2 PrivateUse3 Meta Quantized QuantizedCPU QuantizedCUDA "
    "QuantizedMeta Sparse SparseCPU SparseCUDA SparseMeta SparseCsr SparseCsrCPU SparseCsrCUDA "
    "SparseCsrMeta NestedTensor NestedTensorCPU NestedTensorCUDA NestedTensorMeta "
    "AutogradFunctionality AutogradCPU AutogradCUDA AutogradHIP AutogradXLA AutogradMPS "
    "AutogradIPU AutogradXPU AutogradHPU AutogradVE AutogradLazy AutogradMTIA AutogradMAIA "
    "AutogradPrivateUse1 AutogradPrivateUse2 AutogradPrivateUse3 AutogradMeta").split()

DispatchKey = enum.IntEnum("DispatchKey", [(name, i) for i, name in enumerate(_NAMES)],
                           module=__name__)


class DispatchKeySet:
    """A set of dispatch keys: `DispatchKeySet(key)`, `has`, `add`, `remove`, `|`, `&`, `-`."""

    def __init__(self, keys=()):
        if isinstance(keys, DispatchKey):
            keys = (keys,)
        elif isinstance(keys, DispatchKeySet):
            keys = keys._keys
        self._keys = frozenset(keys)

    def has(self, key):
        return key in self._keys

    def add(self, key):
        return DispatchKeySet(self._keys | {key})

    def remove(self, key):
        return DispatchKeySet(self._keys - {key})

    def empty(self):
        return not self._keys

    def __or__(self, other):
        return DispatchKeySet(self._keys | other._keys)

    def __and__(self, other):
        return DispatchKeySet(self._keys & other._keys)

    def __sub__(self, other):
        return DispatchKeySet(self._keys - other._keys)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self):
        return hash(self._keys)

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in sorted(self._keys, key=_print_rank))})"


def _print_rank(key):
    """PyTorch prints a key set in its C++ order: backend keys, then the functionality keys from
    the lowest priority up (Python, ADInplaceOrView, Autograd, Autocast, ..., PythonTLSSnapshot)."""
    name = key.name
    for prefix, rank in _PRINT_RANKS:
        if name.startswith(prefix):
            return rank, key
    return 0, key


# most specific prefix first: PythonTLSSnapshot before Python
_PRINT_RANKS = (("PythonTLSSnapshot", 10), ("PythonDispatcher", 11), ("PreDispatch", 12),
                ("Python", 1), ("Functionalize", 2), ("Conjugate", 3), ("Negative", 3),
                ("ZeroTensor", 3), ("ADInplaceOrView", 4), ("Autograd", 5), ("Autocast", 6),
                ("FuncTorch", 7))


class _LocalSets(threading.local):
    include = DispatchKeySet()
    exclude = DispatchKeySet()


_local = _LocalSets()


def _dispatch_tls_local_include_set():
    return _local.include


def _dispatch_tls_local_exclude_set():
    return _local.exclude


class _ExcludeDispatchKeyGuard:
    """Add `keyset` to the thread's local exclude set for the block."""

    def __init__(self, keyset):
        self.keyset = DispatchKeySet(keyset)

    def __enter__(self):
        self.prev = _local.exclude
        _local.exclude = _local.exclude | self.keyset
        return self

    def __exit__(self, *exc):
        _local.exclude = self.prev


class _IncludeDispatchKeyGuard:
    """Add `key` to the thread's local include set for the block."""

    def __init__(self, key):
        self.keyset = DispatchKeySet(key)

    def __enter__(self):
        self.prev = _local.include
        _local.include = _local.include | self.keyset
        return self

    def __exit__(self, *exc):
        _local.include = self.prev
