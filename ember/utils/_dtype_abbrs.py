"""torch.utils._dtype_abbrs: each dtype's short name as graph printouts and logs write it
(`f32[2, 3]`)."""
from .._core import dtype as _D

_ABBRS = {
    "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "float16": "f16", "float32": "f32", "float64": "f64", "complex32": "c32",
    "complex64": "c64", "complex128": "c128", "bool": "b8", "bfloat16": "bf16",
    "bits1x8": "b1x8", "bits2x4": "b2x4", "bits4x2": "b4x2", "bits8": "b8x1", "bits16": "b16x1",
    "float8_e5m2": "f8e5m2", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2fnuz": "f8e5m2fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float8_e8m0fnu": "f8e8m0fnu", "float4_e2m1fn_x2": "f4e2m1fnx2",
}

dtype_abbrs = {getattr(_D, name): abbr for name, abbr in _ABBRS.items() if hasattr(_D, name)}
