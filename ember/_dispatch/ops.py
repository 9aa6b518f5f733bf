"""`ember.ops.<namespace>.<op>`: every registered operator, by namespace (torch.ops)."""
from . import dispatcher as _dispatcher


class _Namespace:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, op):
        packet = _dispatcher._packets.get((self._name, op)) or _alias_packet(self._name, op)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op}'")
        return packet

    def __dir__(self):
        return sorted(n for ns, n in _dispatcher._packets if ns == self._name)


# aliases whose schema line does not name them (their Python binding is the aliased function)
_BOUND_ALIASES = {"clip": "clamp"}
_alias_packets = {}   # (namespace, alias) -> its OpOverloadPacket, made on first use


def _alias_packet(namespace, name):
    """`ops.aten.arccos`: PyTorch registers an alias (`alias arccos` in a schema) as an operator
    of its own; ember gives it a packet of that name over the aliased op's overloads (its in-place
    form `arccos_` over `acos_`'s), so calls run the same kernels."""
    key = (namespace, name)
    if key not in _alias_packets:
        base, inplace = (name[:-1], "_") if name.endswith("_") else (name, "")
        target = None
        for op in _dispatcher._registry.values():
            if op.namespace == namespace and base in op.schema.aliases:
                target = _dispatcher._packets.get((namespace, op._opname + inplace))
                break
        if base in _BOUND_ALIASES:
            target = _dispatcher._packets.get((namespace, _BOUND_ALIASES[base] + inplace))
        packet = None
        if target is not None:
            packet = _dispatcher.OpOverloadPacket(namespace, name)
            packet._overloads = target._overloads
        _alias_packets[key] = packet
    return _alias_packets[key]


class _Ops:
    def load_library(self, path):
        """torch.ops.load_library: load a shared library that registers operators. ember's
        operators are Python, so a library can load but registers none with ember."""
        import ctypes
        try:
            ctypes.CDLL(path)
        except OSError as e:
            raise OSError(f"Could not load this library: {path}") from e

    def __getattr__(self, namespace):
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        ns = _Namespace(namespace)
        setattr(self, namespace, ns)
        return ns


ops = _Ops()
