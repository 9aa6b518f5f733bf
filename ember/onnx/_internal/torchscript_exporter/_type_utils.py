"""JitScalarType: PyTorch's scalar types numbered as c10::ScalarType, with their names, ember
dtypes and ONNX TensorProto element types (torch.onnx's _type_utils)."""
import enum


class JitScalarType(enum.IntEnum):
    """A scalar type by its c10::ScalarType number."""
    UINT8 = 0
    INT8 = 1
    INT16 = 2
    INT = 3
    INT64 = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    COMPLEX32 = 8
    COMPLEX64 = 9
    COMPLEX128 = 10
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15
    FLOAT8E5M2 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E5M2FNUZ = 18
    FLOAT8E4M3FNUZ = 19
    UNDEFINED = 20

    @classmethod
    def from_dtype(cls, dtype):
        """The JitScalarType of an ember dtype."""
        if dtype is None:
            raise ValueError("Unknown dtype: None")
        name = str(dtype).rpartition(".")[2]
        for jit_type, row in _TABLE.items():
            if row[2] == name:
                return jit_type
        raise ValueError(f"Unknown dtype: {dtype}")

    @classmethod
    def from_onnx_type(cls, onnx_type):
        """The JitScalarType of an ONNX TensorProto element type."""
        for jit_type, row in _TABLE.items():
            if row[3] == onnx_type and row[3]:
                return jit_type
        raise ValueError(f"Unknown onnx_type: {onnx_type}")

    def scalar_name(self):
        return _TABLE[self][0]

    def torch_name(self):
        if self == JitScalarType.UNDEFINED:
            raise KeyError(self)
        return _TABLE[self][1]

    def dtype(self):
        import ember
        if self == JitScalarType.UNDEFINED:
            raise KeyError(self)
        return getattr(ember, _TABLE[self][2])

    def onnx_type(self):
        """The ONNX element type (0, UNDEFINED, where ONNX has none)."""
        return _TABLE[self][3]

    def onnx_compatible(self):
        return self not in (JitScalarType.UNDEFINED, JitScalarType.COMPLEX32)


# scalar name, C++ type name, ember dtype name, ONNX TensorProto element type
_TABLE = {
    JitScalarType.UINT8: ("Byte", "uint8_t", "uint8", 2),
    JitScalarType.INT8: ("Char", "int8_t", "int8", 3),
    JitScalarType.INT16: ("Short", "int16_t", "int16", 5),
    JitScalarType.INT: ("Int", "int", "int32", 6),
    JitScalarType.INT64: ("Long", "int64_t", "int64", 7),
    JitScalarType.HALF: ("Half", "half", "float16", 10),
    JitScalarType.FLOAT: ("Float", "float", "float32", 1),
    JitScalarType.DOUBLE: ("Double", "double", "float64", 11),
    JitScalarType.COMPLEX32: ("ComplexHalf", "complex32", "complex32", 0),
    JitScalarType.COMPLEX64: ("ComplexFloat", "complex64", "complex64", 14),
    JitScalarType.COMPLEX128: ("ComplexDouble", "complex128", "complex128", 15),
    JitScalarType.BOOL: ("Bool", "bool", "bool", 9),
    JitScalarType.QINT8: ("QInt8", "qint8", "qint8", 3),
    JitScalarType.QUINT8: ("QUInt8", "quint8", "quint8", 2),
    JitScalarType.QINT32: ("QInt32", "qint32", "qint32", 6),
    JitScalarType.BFLOAT16: ("BFloat16", "bfloat16", "bfloat16", 16),
    JitScalarType.FLOAT8E5M2: ("Float8E5M2", "float8_e5m2", "float8_e5m2", 19),
    JitScalarType.FLOAT8E4M3FN: ("Float8E4M3FN", "float8_e4m3fn", "float8_e4m3fn", 17),
    JitScalarType.FLOAT8E5M2FNUZ: ("Float8E5M2FNUZ", "float8_e5m2fnuz", "float8_e5m2fnuz", 20),
    JitScalarType.FLOAT8E4M3FNUZ: ("Float8E4M3FNUZ", "float8_e4m3fnuz", "float8_e4m3fnuz", 18),
    JitScalarType.UNDEFINED: ("Undefined", "undefined", "undefined", 0),
}
