"""torch.torch_version.TorchVersion: `__version__` is a str that also compares as a version, against
strings ("1.10"), tuples ((1, 10)) and packaging's Version, so `torch.__version__ >= (2, 0)` and
`torch.__version__ < "1.10"` mean what they say rather than comparing characters."""
import re

__all__ = ["TorchVersion"]

_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)(?:(a|b|rc)(\d*))?(?:\.?(post|dev)(\d*))?(?:\+(.*))?$")
_PHASE = {"dev": -4, "a": -3, "b": -2, "rc": -1, None: 0, "post": 1}


def _key(text):
    """A sort key for a PEP 440-style version string, or None when it is not one."""
    m = _RELEASE.match(str(text).strip().lower())
    if m is None:
        return None
    release = [int(p) for p in m.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()  # 1.10 == 1.10.0
    pre = (_PHASE[m.group(2)], int(m.group(3) or 0)) if m.group(2) else (0, 0)
    post = (_PHASE[m.group(4)], int(m.group(5) or 0)) if m.group(4) else (0, 0)
    local = m.group(6) is not None  # 2.13.0+cpu sorts after 2.13.0
    return tuple(release), pre, post, local


class TorchVersion(str):
    """A version string comparing by version order; anything that is not a version compares as
    a plain string."""
    __slots__ = ()

    def _other_key(self, other):
        if isinstance(other, str):
            return _key(other)
        if hasattr(other, "release"):  # packaging.version.Version
            return _key(str(other))
        try:
            return _key(".".join(str(item) for item in other))
        except TypeError:
            return None

    def _compare(self, other, method):
        mine, theirs = _key(self), self._other_key(other)
        if mine is None or theirs is None:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    __hash__ = str.__hash__
