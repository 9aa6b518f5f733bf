"""torch.backends.cuda without CUDA: the switches scripts and PyTorch's tests flip for cuBLAS
(`torch.backends.cuda.matmul.allow_tf32`), for the linear-algebra and BLAS library choice
(`preferred_linalg_library`) and for the attention kernels (`enable_flash_sdp`). The library is
reported not built; the cuBLAS flags keep PyTorch's defaults and record writes, the library
choice accepts only "default" (as a CPU-only PyTorch does), and the attention switches are the
flags torch.nn.attention.sdpa_kernel sets."""
import contextlib
import enum
import warnings


class _LinalgBackend(enum.Enum):
    """PyTorch's torch._C._LinalgBackend."""
    Default = 0
    Cusolver = 1
    Magma = 2

    def __repr__(self):
        return f"<_LinalgBackend.{self.name}: {self.value}>"

    def __str__(self):
        return f"_LinalgBackend.{self.name}"


class _BlasBackend(enum.Enum):
    """PyTorch's torch._C._BlasBackend."""
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3

    def __repr__(self):
        return f"<_BlasBackend.{self.name}: {self.value}>"

    def __str__(self):
        return f"_BlasBackend.{self.name}"


def is_built():
    """Whether PyTorch was built with CUDA: ember never is."""
    return False


class cuBLASModule:
    """`torch.backends.cuda.matmul`: cuBLAS's precision switches, read and written by name."""

    def __init__(self):
        object.__setattr__(self, "_flags", {
            "allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
            "allow_fp16_reduced_precision_reduction_split_k": True,
            "allow_bf16_reduced_precision_reduction": True,
            "allow_bf16_reduced_precision_reduction_split_k": True,
            "allow_fp16_accumulation": False, "fp32_precision": "none"})

    @staticmethod
    def _parse_reduction_setting(value, attr_name):
        def as_bool(obj, which):
            if isinstance(obj, bool):
                return obj
            raise TypeError(f"{attr_name} expects a bool for {which}, but got {type(obj)!r}")
        if isinstance(value, bool):
            return value, True
        if isinstance(value, (list, tuple)):
            if not value:
                raise TypeError(f"{attr_name} expects at least one boolean argument")
            if len(value) > 2:
                raise TypeError(f"{attr_name} expects at most two boolean arguments")
            reduced = as_bool(value[0], "allow_reduced_precision")
            return reduced, (as_bool(value[1], "allow_splitk") if len(value) == 2 else True)
        raise TypeError(f"{attr_name} expects a bool or a tuple/list of bools, but got "
                        f"{type(value)!r}")

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name in flags:
            return flags[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        flags = self._flags
        if name in ("allow_fp16_reduced_precision_reduction",
                    "allow_bf16_reduced_precision_reduction"):
            flags[name], flags[name + "_split_k"] = self._parse_reduction_setting(value, name)
        elif name in ("allow_tf32", "allow_fp16_accumulation"):
            flags[name] = bool(value)
        elif name == "fp32_precision":
            if value not in ("none", "ieee", "tf32"):
                raise RuntimeError(f"{value} is not supported in cuda matmul. Only "
                                   "'none', 'ieee' and 'tf32' are supported.")
            flags[name] = value
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()

_LinalgBackends = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver,
                   "magma": _LinalgBackend.Magma}
_LinalgBackends_str = ", ".join(_LinalgBackends)
_BlasBackends = {"default": _BlasBackend.Default, "cublas": _BlasBackend.Cublas,
                 "hipblas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt,
                 "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
_BlasBackends_str = ", ".join(_BlasBackends)
_LIBRARY_NAMES = {_LinalgBackend.Cusolver: "cuSOLVER", _LinalgBackend.Magma: "MAGMA"}
_preferred = {"linalg": _LinalgBackend.Default, "blas": _BlasBackend.Cublas}


def preferred_linalg_library(backend=None):
    """The library CUDA linear algebra prefers (cuSOLVER or MAGMA); ember has neither, so only
    "default" can be chosen, as on a CPU-only PyTorch."""
    if backend is None:
        return _preferred["linalg"]
    if isinstance(backend, str):
        if backend not in _LinalgBackends:
            raise RuntimeError(f"Unknown input value. Choose from: {_LinalgBackends_str}.")
        backend = _LinalgBackends[backend]
    elif not isinstance(backend, _LinalgBackend):
        raise RuntimeError("Unknown input value type.")
    if backend is not _LinalgBackend.Default:
        name = _LIBRARY_NAMES[backend]
        raise RuntimeError(f"Cannot set preferred backend to {name} if PyTorch has not been "
                           f"compiled with {name}.")
    _preferred["linalg"] = backend
    return backend


def preferred_blas_library(backend=None):
    """The library CUDA BLAS prefers; recorded only (ember's products run on the CPU)."""
    if backend is None:
        return _preferred["blas"]
    if isinstance(backend, str):
        if backend not in _BlasBackends:
            raise RuntimeError(f"Unknown input value. Choose from: {_BlasBackends_str}.")
        backend = _BlasBackends[backend]
    elif not isinstance(backend, _BlasBackend):
        raise RuntimeError("Unknown input value type.")
    _preferred["blas"] = backend
    return backend


def _sdp_flag(name):
    from ember.nn import attention
    return attention.SDPBackend[name]


def _sdp_enabled(name):
    from ember.nn import attention
    return attention._enabled[_sdp_flag(name)]


def _sdp_set(name, enabled):
    from ember.nn import attention
    attention._enabled[_sdp_flag(name)] = bool(enabled)


def flash_sdp_enabled():
    return _sdp_enabled("FLASH_ATTENTION")


def enable_flash_sdp(enabled):
    _sdp_set("FLASH_ATTENTION", enabled)


def mem_efficient_sdp_enabled():
    return _sdp_enabled("EFFICIENT_ATTENTION")


def enable_mem_efficient_sdp(enabled):
    _sdp_set("EFFICIENT_ATTENTION", enabled)


def math_sdp_enabled():
    return _sdp_enabled("MATH")


def enable_math_sdp(enabled):
    _sdp_set("MATH", enabled)


def cudnn_sdp_enabled():
    return _sdp_enabled("CUDNN_ATTENTION")


def enable_cudnn_sdp(enabled):
    _sdp_set("CUDNN_ATTENTION", enabled)


def is_flash_attention_available():
    """Whether the CUDA FlashAttention kernels were built: not in ember."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated form of torch.nn.attention.sdpa_kernel taking one switch per backend."""
    from ember.nn.attention import sdpa_kernel, SDPBackend
    from ember._core._warnings import user_stacklevel
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for "
                  "the new context manager, with updated signature.", FutureWarning,
                  stacklevel=user_stacklevel())
    switches = [(enable_flash, SDPBackend.FLASH_ATTENTION),
                (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION),
                (enable_math, SDPBackend.MATH), (enable_cudnn, SDPBackend.CUDNN_ATTENTION)]
    with sdpa_kernel([backend for on, backend in switches if on]) as context:
        yield context
