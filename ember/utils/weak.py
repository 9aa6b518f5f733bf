"""Weak references keyed by identity (PyTorch's torch.utils.weak).

The standard library's `weakref.WeakKeyDictionary` looks keys up with their `__hash__` and
`__eq__`. A Tensor's `__eq__` is elementwise and returns a Tensor, so a tensor cannot be such a
key. `WeakIdKeyDictionary` keys by identity instead: each key is wrapped in a `WeakIdRef`, a
`weakref.ref` whose hash is the referent's `id()` and which equals another ref only when both
point at the same live object. The wrapper is stored in an ordinary dict; the weakref's callback
removes the entry when its key dies.

Removal while iterating: a key can die (and its callback fire) while `items()`/`keys()`/`copy()`
walks the dict, which would change the dict's size mid-iteration. Each walk therefore registers
an `_IterationGuard`; while one is active, dead keys are queued in `_pending_removals` and
deleted when the last guard exits. `len()` subtracts the queued ones, so it stays right meanwhile.
"""
import weakref
from collections.abc import Mapping, MutableMapping

from ember._core.tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]

WeakRef = weakref.ref


class _IterationGuard:
    """While active, the container defers deleting dead keys (see the module docstring)."""

    def __init__(self, container):
        self._container = weakref.ref(container)     # no cycle container -> guard -> container

    def __enter__(self):
        container = self._container()
        if container is not None:
            container._iterating.add(self)
        return self

    def __exit__(self, *exc_info):
        container = self._container()
        if container is not None:
            container._iterating.discard(self)
            if not container._iterating:
                container._commit_removals()


class WeakIdRef(weakref.ref):
    """A weak reference hashed by its referent's id() and equal only to refs to the same object.

    Two dead refs compare equal only if they are the same ref: an id can be reused by a new
    object after the old one died, and that new object must not match the old entry."""
    __slots__ = ["_id"]
    _key_of = staticmethod(id)   # what hashes and compares a live referent

    def __init__(self, key, callback=None):
        self._id = self._key_of(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        mine, theirs = self(), other()
        if mine is not None and theirs is not None:
            return self._key_of(mine) == self._key_of(theirs)
        return self is other


class _WeakHashRef(WeakIdRef):
    """As WeakIdRef, but hashed and compared by the referent's own hash() (ScriptObject keys)."""
    __slots__ = ()
    _key_of = staticmethod(hash)


class WeakIdKeyDictionary(MutableMapping):
    """A dict whose keys are held weakly and matched by identity (`ref_type` wraps each key)."""

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data = {}
        self.ref_type = ref_type
        self._pending_removals = []
        self._iterating = set()
        self._dirty_len = False

        def remove(wr, selfref=weakref.ref(self)):
            owner = selfref()
            if owner is None:
                return
            if owner._iterating:
                owner._pending_removals.append(wr)
            else:
                owner.data.pop(wr, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def _commit_removals(self):
        pending, data = self._pending_removals, self.data
        while pending:
            data.pop(pending.pop(), None)

    def _scrub_removals(self):
        # an explicit del/pop may have removed a key that is also queued: drop it from the queue
        self._pending_removals = [wr for wr in self._pending_removals if wr in self.data]
        self._dirty_len = False

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key):
        self._dirty_len = True
        del self.data[self.ref_type(key)]

    def __len__(self):
        if self._dirty_len and self._pending_removals:
            self._scrub_removals()
        return len(self.data) - len(self._pending_removals)

    def __contains__(self, key):
        try:
            wr = self.ref_type(key)
        except TypeError:        # not weakly referenceable: cannot be a key
            return False
        return wr in self.data

    def __repr__(self):
        return f"<{type(self).__name__} at {id(self):#x}>"

    def get(self, key, default=None):
        return self.data.get(self.ref_type(key), default)

    def items(self):
        with _IterationGuard(self):
            for wr, value in self.data.items():
                key = wr()
                if key is not None:
                    yield key, value

    def keys(self):
        with _IterationGuard(self):
            for wr in self.data:
                key = wr()
                if key is not None:
                    yield key

    __iter__ = keys

    def values(self):
        with _IterationGuard(self):
            for wr, value in self.data.items():
                if wr() is not None:
                    yield value

    def keyrefs(self):
        """The weak references to the keys (each may be dead by the time it is called)."""
        return list(self.data)

    def popitem(self):
        self._dirty_len = True
        while True:
            wr, value = self.data.popitem()      # KeyError when empty, as dict's
            key = wr()
            if key is not None:
                return key, value

    def pop(self, key, *default):
        self._dirty_len = True
        return self.data.pop(self.ref_type(key), *default)

    def setdefault(self, key, default=None):
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def update(self, dict=None, **kwargs):
        if dict is not None:
            if not hasattr(dict, "items"):
                dict = {}.__class__(dict)        # a sequence of pairs, as dict() reads it
            for key, value in dict.items():
                self.data[self.ref_type(key, self._remove)] = value
        if kwargs:
            self.update(kwargs)

    def _copy_with(self, convert):
        new = type(self)()
        with _IterationGuard(self):
            for wr, value in self.data.items():
                key = wr()
                if key is not None:
                    new[key] = convert(value)
        return new

    def copy(self):
        return self._copy_with(lambda value: value)

    __copy__ = copy

    def __deepcopy__(self, memo):
        from copy import deepcopy
        return self._copy_with(lambda value: deepcopy(value, memo))

    def __ior__(self, other):
        self.update(other)
        return self

    def __or__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = type(self)()
        merged.update(other)
        merged.update(self)
        return merged

    def __eq__(self, other):
        # Mapping's == compares keys with ==, which for tensors is elementwise: compare ids
        if not isinstance(other, Mapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a Tensor (calling it returns the tensor, or None once it died)."""

    def __init__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        out = self.ref()
        if out is not None and not isinstance(out, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(out)}.")
        return out
