"""torch.types: the type aliases PyTorch's signatures are annotated with (Number, Device, ...)."""
import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex  # noqa: F401
from builtins import float as _float, int as _int, str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, Union

from ._core.device import device as _device
from ._core.dtype import dtype as _dtype  # noqa: F401
from ._core.layout import layout as _layout  # noqa: F401
from ._core.tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = Union[Size, Sequence[int]]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
Number = Union[int, float, bool]
_Number = (int, float, bool)
FileLike = Union[str, os.PathLike, IO[bytes]]
Device = Union[_device, str, int, None]


class Storage:
    """The interface a storage offers (torch.types.Storage is an annotation-only class)."""
