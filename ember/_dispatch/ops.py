"""`ember.ops.<namespace>.<op>`: every registered operator, by namespace (torch.ops)."""
from . import dispatcher as _dispatcher


class _Namespace:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, op):
        packet = _dispatcher._packets.get((self._name, op))
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op}'")
        return packet

    def __dir__(self):
        return sorted(n for ns, n in _dispatcher._packets if ns == self._name)


class _Ops:
    def __getattr__(self, namespace):
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        ns = _Namespace(namespace)
        setattr(self, namespace, ns)
        return ns


ops = _Ops()
