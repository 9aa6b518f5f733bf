"""torch.finfo / torch.iinfo: the numerical limits of a floating-point or integer dtype.

Values come from NumPy's (and ml_dtypes' for bfloat16 and float8) limit tables; the repr prints each number
with six significant digits, as PyTorch's C++ stream formatting does."""
import math

import numpy as np

from . import dtype as D


def _g(x):
    return f"{x:g}"


class finfo:
    """Limits of a floating dtype (a complex dtype reports its real component's)."""
    __slots__ = ("bits", "eps", "max", "min", "resolution", "smallest_normal", "tiny", "dtype")

    def __init__(self, type=None):
        d = D.get_default_dtype() if type is None else type
        if not isinstance(d, D.dtype) or not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. "
                            "Use torch.iinfo to handle 'torch.finfo'")
        d = d.to_real()
        info = _ml_finfo(d) if d in D.ml_dtypes_dtypes else np.finfo(D.np_dtype(d))
        self.bits = d.itemsize * 8
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        if d is D.float8_e5m2fnuz:  # c10's numeric_limits say 2**-3 (the spacing at 1 is 2**-2)
            self.eps = 0.125
        # 10**-digits10 (the decimal digits the mantissa always holds), an exact decimal as in torch
        self.resolution = 10.0 ** -int(info.nmant * math.log10(2))
        self.smallest_normal = self.tiny = float(info.smallest_normal)
        self.dtype = d.name

    def __eq__(self, other):   # equal limits, as PyTorch's finfo objects compare (unhashable)
        return type(other) is finfo and all(getattr(self, k) == getattr(other, k)
                                            for k in finfo.__slots__)

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


def _ml_finfo(d):
    import ml_dtypes  # bfloat16 tensors already need it
    return ml_dtypes.finfo(D.np_dtype(d))


# A quantized dtype's limits are those of the integers it stores (quint4x2 and quint2x4 pack
# sub-byte values into a uint8); PyTorch's iinfo of one has no `dtype` name.
_QUANTIZED_STORAGE = {"qint8": np.int8, "quint8": np.uint8, "qint32": np.int32,
                      "quint4x2": np.uint8, "quint2x4": np.uint8}


class iinfo:
    """Limits of an integer dtype."""
    __slots__ = ("bits", "max", "min", "_dtype")

    def __init__(self, type):
        if not isinstance(type, D.dtype) or type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. "
                            "Use torch.finfo to handle 'torch.iinfo'")
        if type is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        quantized = _QUANTIZED_STORAGE.get(type.name)
        info = np.iinfo(quantized if quantized is not None else type._np)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self._dtype = type if quantized is not None else type.name

    @property
    def dtype(self):
        if not isinstance(self._dtype, str):
            from .dtype import scalar_type_name
            raise NotImplementedError(f'"dtype" not implemented for '
                                      f"'{scalar_type_name(self._dtype)}'")
        return self._dtype

    def __eq__(self, other):   # as finfo's
        return type(other) is iinfo and all(getattr(self, k) == getattr(other, k)
                                            for k in iinfo.__slots__)

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
