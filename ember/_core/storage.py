"""UntypedStorage: a flat byte buffer on one device, and the allocator interface behind it.

PyTorch's Storage is an untyped run of bytes; every Tensor is a strided view (offset, size,
stride, dtype) of one. Here the bytes are a NumPy array on `cpu` and nothing at all on `meta`.
Memory comes from the device's `Allocator` object so that a caching allocator can be swapped in
later; arrays produced by NumPy kernels are *adopted* (the storage wraps them without a copy).
"""
import numpy as np

from . import caching_allocator


class Allocator:
    """The raw allocator interface: `allocate(nbytes)` gives a buffer for a new storage."""

    def allocate(self, nbytes):
        raise NotImplementedError


class CPUAllocator(Allocator):
    """A block of the caching allocator (ember._core.caching_allocator), or plain NumPy memory
    when it is switched off."""

    def allocate(self, nbytes):
        return caching_allocator.empty((nbytes,), np.uint8)


class MetaAllocator(Allocator):
    def allocate(self, nbytes):
        return None


_allocators = {"cpu": CPUAllocator(), "meta": MetaAllocator()}


def get_allocator(device_type):
    return _allocators[device_type]


def set_allocator(device_type, allocator):
    """Replace a device's allocator (the hook the caching allocator uses)."""
    _allocators[device_type] = allocator


def _root_array(arr):
    """The ndarray that owns the memory `arr` looks into (follows `.base` through views)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


class UntypedStorage:
    """Bytes on a device. `_array` owns the memory (any dtype, C-contiguous) or is None on meta.

    The storage also carries the version counter that PyTorch keeps per tensor-and-its-views:
    every in-place op bumps it, and autograd compares it with the version it saved.
    """
    __slots__ = ("_array", "_nbytes", "device", "_version", "_grad_claimed", "__weakref__")

    def __init__(self, size=0, *, device="cpu"):
        from .device import device as _dev
        dev = _dev(device)
        data = None
        if not isinstance(size, (int, np.integer)):   # UntypedStorage([byte, ...])
            data = np.asarray(list(size), dtype=np.uint8)
            size = data.size
        self._array = get_allocator(dev.type).allocate(int(size))
        if data is not None and self._array is not None:
            self._array[:] = data
        self._nbytes = int(size)
        self.device = dev
        self._version = 0
        self._grad_claimed = False

    @classmethod
    def _adopt(cls, array, device):
        s = object.__new__(cls)
        s._array = array
        s._nbytes = array.nbytes if array is not None else 0
        s.device = device
        s._version = 0
        s._grad_claimed = False
        return s

    @classmethod
    def _meta(cls, nbytes, device):
        s = cls._adopt(None, device)
        s._nbytes = nbytes
        return s

    def _bytes(self):
        """The storage as a flat uint8 array (a view, no copy)."""
        a = self._array
        if a is None:
            raise NotImplementedError(f"Not available for '{self.device.type}' device type")
        # in memory order: a clone of a transposed tensor owns an F-ordered array
        return np.ravel(a, order="K").view(np.uint8)

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    __len__ = size

    def element_size(self):
        return 1

    def data_ptr(self):
        if self._array is None:
            return 0
        return self._array.__array_interface__["data"][0]

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, i):
        return self._bytes()[i].tolist()

    def __setitem__(self, i, v):
        self._bytes()[i] = v

    def fill_(self, value):
        self._bytes()[:] = value
        return self

    def copy_(self, other):
        if other.nbytes() != self._nbytes:
            raise RuntimeError(f"size mismatch: storage of {self._nbytes} bytes, "
                               f"source of {other.nbytes()} bytes")
        self._bytes()[:] = other._bytes()
        return self

    def clone(self):
        s = UntypedStorage._adopt(caching_allocator.copy(self._array)
                                  if self._array is not None else None,
                                  self.device)
        s._nbytes = self._nbytes
        return s

    def resize_(self, nbytes):
        nbytes = int(nbytes)
        if self._array is not None:
            new = get_allocator(self.device.type).allocate(nbytes)
            n = min(nbytes, self._nbytes)
            new[:n] = self._bytes()[:n]
            self._array = new
        self._nbytes = nbytes
        return self

    def is_shared(self):
        from ..multiprocessing.shared_memory import segment_of
        return segment_of(self) is not None

    def share_memory_(self):
        """Move the bytes into shared memory in place (every tensor over them follows)."""
        from ..multiprocessing.shared_memory import share_storage
        return share_storage(self)

    @classmethod
    def _new_shared(cls, size, *, device="cpu"):
        """A new storage of `size` bytes in shared memory."""
        from ..multiprocessing.shared_memory import new_shared_storage
        return new_shared_storage(int(size))

    def __reduce__(self):
        from ..serialization.pickling import _reduce_storage
        return _reduce_storage(self)

    def __copy__(self):
        return self.clone()

    def __sizeof__(self):
        return object.__sizeof__(self) + self._nbytes

    def type(self):
        return "torch.storage.UntypedStorage"

    def byteswap(self, dtype):
        """Reverse the byte order of every element of `dtype` in place (of each of the two
        halves of a complex element)."""
        width = dtype.itemsize // (2 if dtype.is_complex else 1)
        if width > 1:
            b = self._bytes()
            b[:] = b.reshape(-1, width)[:, ::-1].reshape(-1)

    @classmethod
    def from_buffer(cls, buffer, byte_order=None, count=-1, offset=0, *, dtype=None):
        """The bytes of `count` elements of `dtype` read from a Python buffer at byte `offset`,
        stored in native byte order (`byte_order` 'little', 'big' or 'native' says how the
        buffer holds them; one-byte dtypes need none). Bool elements are 1 where the byte is
        nonzero."""
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        if byte_order is None and dtype.itemsize > 1:
            raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
        if byte_order not in (None, "native", "little", "big"):
            raise ValueError(f"invalid byte_order '{byte_order}' (expected 'big', 'little', or "
                             f"'native')")
        nbytes = len(memoryview(buffer).cast("B")) - offset
        if count < 0:
            if nbytes % dtype.itemsize:
                raise ValueError(f"buffer size ({nbytes}) must be a multiple of element size "
                                 f"({dtype.itemsize})")
            count = nbytes // dtype.itemsize
        if dtype.is_floating_point or dtype.is_complex or dtype.itemsize > 1:
            order = {"little": "<", "big": ">"}.get(byte_order, "=")
            values = np.frombuffer(buffer, dtype=dtype._np.newbyteorder(order), count=count,
                                   offset=offset).astype(dtype._np)
        else:
            values = np.frombuffer(buffer, dtype=np.uint8, count=count, offset=offset)
            values = (values != 0) if dtype._np == np.bool_ else values.view(dtype._np)
        from .device import cpu, meta
        from .._subclasses.fake_tensor import active_fake_mode
        if active_fake_mode() is not None:   # made within a FakeTensorMode: no bytes kept
            return cls._meta(values.nbytes, meta)
        return cls._adopt(np.array(values).view(np.uint8), cpu)

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """A CPU storage of `nbytes` bytes mapped from a file: with `shared`, writes go to the
        file (created or grown as needed) and to every other mapping of it; without, the file
        must hold the bytes and writes stay private to this storage."""
        import os
        from .device import cpu
        nbytes = int(nbytes)
        if shared:
            with open(filename, "ab") as f:    # create it if needed, never truncate
                if os.fstat(f.fileno()).st_size < nbytes:
                    f.truncate(nbytes)
            mode = "r+"
        else:
            try:
                size = os.path.getsize(filename)
            except OSError as e:
                raise RuntimeError(f"unable to open file <{filename}> in read-only mode: "
                                   f"{e.strerror} ({e.errno})") from None
            if size < nbytes:
                raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required "
                                   f"mapping size <{nbytes}>")
            mode = "c"
        if nbytes == 0:
            return cls._adopt(np.zeros(0, np.uint8), cpu)
        return cls._adopt(np.memmap(filename, dtype=np.uint8, mode=mode, shape=(nbytes,)), cpu)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def __repr__(self):
        # a meta storage has no bytes to show: PyTorch prints "..." in their place
        data = "...\n" if self._array is None else "\n".join(f" {b}" for b in self.tolist()) + "\n"
        return f"{data}[torch.storage.UntypedStorage(device={self.device}) of size {self._nbytes}]"
