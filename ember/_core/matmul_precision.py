"""torch.set_float32_matmul_precision / get_float32_matmul_precision. The setting lets PyTorch
use TF32 or bfloat16 inside float32 matmuls on GPUs; ember's NumPy matmuls are always full
float32 ("highest"), so only the recorded value changes."""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

_precision = "highest"


def set_float32_matmul_precision(precision):
    global _precision
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"setFloat32MatmulPrecision call has no effect.", stacklevel=_user_stacklevel())
        return
    _precision = precision


def get_float32_matmul_precision():
    return _precision
