"""The dtype lists PyTorch's tests parametrize over (`all_types_and(torch.half)`, ...), in
PyTorch's order: floating, then integral, then complex, then the extras asked for."""
import ember


def _checked(*dtypes):
    for dtype in dtypes:
        if not isinstance(dtype, ember.dtype):
            raise AssertionError(f"Expected dtype to be torch.dtype, got {type(dtype)}")
    return dtypes


class _dispatch_dtypes(tuple):
    """A tuple of dtypes whose `+` stays one."""
    __slots__ = ()

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise AssertionError(f"Expected other to be a tuple, got {type(other)}")
        return _dispatch_dtypes(tuple.__add__(self, other))


_FLOATING = _dispatch_dtypes((ember.float32, ember.float64))
_INTEGRAL = _dispatch_dtypes((ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64))
_COMPLEX = _dispatch_dtypes((ember.complex64, ember.complex128))


def _named(*names):
    """Dtypes by name, for those ember may lack (float8, quantized): an unsupported one raises
    an error naming it."""
    missing = [n for n in names if not hasattr(ember, n)]
    if missing:
        raise NotImplementedError(f"ember has no dtype {', '.join(missing)}")
    return _dispatch_dtypes(getattr(ember, n) for n in names)


def _float8():
    return _named("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")


def empty_types():
    return _dispatch_dtypes(())


def custom_types(*dtypes):
    return _dispatch_dtypes(()) + _checked(*dtypes)


def floating_types():
    return _FLOATING


def floating_types_and_half():
    return _FLOATING + (ember.half,)


def floating_types_and(*dtypes):
    return _FLOATING + _checked(*dtypes)


def floating_and_complex_types():
    return _FLOATING + _COMPLEX


def floating_and_complex_types_and(*dtypes):
    return _FLOATING + _COMPLEX + _checked(*dtypes)


def double_types():
    return _dispatch_dtypes((ember.float64, ember.complex128))


def integral_types():
    return _INTEGRAL


def integral_types_and(*dtypes):
    return _INTEGRAL + _checked(*dtypes)


def all_types():
    return _FLOATING + _INTEGRAL


def all_types_and(*dtypes):
    return _FLOATING + _INTEGRAL + _checked(*dtypes)


def complex_types():
    return _COMPLEX


def complex_types_and(*dtypes):
    return _COMPLEX + _checked(*dtypes)


def all_types_and_complex():
    return _FLOATING + _INTEGRAL + _COMPLEX


def all_types_and_complex_and(*dtypes):
    return _FLOATING + _INTEGRAL + _COMPLEX + _checked(*dtypes)


def all_types_and_half():
    return _FLOATING + _INTEGRAL + (ember.half,)


def all_mps_types():
    """The dtypes PyTorch's tests run on its MPS device (ember has none; the list is imported)."""
    return _dispatch_dtypes((ember.float32, ember.half, ember.bfloat16)) + _INTEGRAL


def all_mps_types_and(*dtypes):
    return all_mps_types() + _checked(*dtypes)


def float8_types():
    return _float8()


def float8_types_and(*dtypes):
    return _float8() + _checked(*dtypes)


def all_types_complex_float8_and(*dtypes):
    return _FLOATING + _INTEGRAL + _COMPLEX + _float8() + _checked(*dtypes)


def get_all_int_dtypes():
    return list(_INTEGRAL)


def get_all_fp_dtypes(include_half=True, include_bfloat16=True):
    return list(_FLOATING) + [ember.float16] * include_half + [ember.bfloat16] * include_bfloat16


def get_all_complex_dtypes(include_complex32=False):
    return list(_named("complex32") if include_complex32 else ()) + list(_COMPLEX)


def get_all_qint_dtypes():
    return list(_named("qint8", "quint8", "qint32", "quint4x2", "quint2x4"))


def get_all_dtypes(include_half=True, include_bfloat16=True, include_bool=True,
                   include_complex=True, include_complex32=False, include_qint=False):
    dtypes = get_all_int_dtypes() + get_all_fp_dtypes(include_half, include_bfloat16)
    dtypes += [ember.bool] * include_bool
    if include_complex:
        dtypes += get_all_complex_dtypes(include_complex32)
    if include_qint:
        dtypes += get_all_qint_dtypes()
    return dtypes


def get_all_math_dtypes(device):
    return get_all_int_dtypes() + get_all_fp_dtypes(include_half=device.startswith("cuda"),
                                                    include_bfloat16=False) + \
        get_all_complex_dtypes()


def highest_precision_float(device):
    return ember.float64


def highest_precision_complex(device):
    return ember.complex128


float_to_corresponding_complex_type_map = {ember.float32: ember.complex64,
                                           ember.float64: ember.complex128}
if hasattr(ember, "complex32"):
    float_to_corresponding_complex_type_map[ember.float16] = ember.complex32
