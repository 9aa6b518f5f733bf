"""torch._vendor.packaging.version: `parse` / `Version` as far as code compares versions and
reads their parts (`parse(scipy.__version__) < parse("1.4.0")`, `.major`, `.release`). The
ordering is TorchVersion's PEP 440 key."""
from ...torch_version import _RELEASE, TorchVersion, _key

__all__ = ["InvalidVersion", "Version", "parse"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


class Version(TorchVersion):
    __slots__ = ()

    def __new__(cls, version):
        if _key(version) is None:
            raise InvalidVersion(f"Invalid version: '{version}'")
        return super().__new__(cls, str(version).strip())

    def __repr__(self):
        return f"<Version('{self}')>"

    @property
    def release(self):
        return tuple(int(p) for p in self.base_version.split("."))

    @property
    def base_version(self):
        return _RELEASE.match(self.lower()).group(1)

    @property
    def major(self):
        return self.release[0]

    @property
    def minor(self):
        return (self.release + (0,))[1]

    @property
    def micro(self):
        return (self.release + (0, 0))[2]

    @property
    def is_prerelease(self):
        return _key(self)[1] != (0, 0) or ".dev" in self.lower()

    @property
    def local(self):
        return self.split("+", 1)[1] if "+" in self else None


parse = Version
