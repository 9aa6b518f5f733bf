"""ember: PyTorch's machinery rebuilt in readable Python on NumPy. `import ember as torch`.

This module is the public namespace, assembled layer by layer: the core data model (_core), the
dispatcher (_dispatch), the ops' schemas and kernels (_aten), autograd, the Python bindings
generated from the schemas (_bindings) and the composites written from ops (_refs), then the
libraries built on them (nn, optim, utils.data, linalg, serialization, distributed, ...).
"""
# ---- the core data model
from ._core.dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16,
                          float32, float64, complex64, complex128, uint16, uint32, uint64,
                          promote_types,
                          get_default_dtype, set_default_dtype, set_default_tensor_type)
from ._core.dtype import (qint8, quint8, qint32, quint4x2, quint2x4, bits1x8, bits2x4,  # noqa: F401
                          bits4x2, bits8, bits16, uint1, uint2, uint3, uint4, uint5, uint6, uint7,
                          int1, int2, int3, int4, int5, int6, int7, float8_e4m3fn,
                          float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
                          float4_e2m1fn_x2, complex32)
from ._core.dtype import uint1 as bit, complex32 as chalf  # noqa: F401
from ._core.dtype import float16 as half, float32 as float, float64 as double, int16 as short
from ._core.dtype import int32 as int, int64 as long, complex64 as cfloat, complex128 as cdouble
from ._core.type_info import finfo, iinfo
from ._core.device import device, set_default_device, get_default_device
from ._core.stream import Stream
from ._core.layout import (layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr,
                           sparse_bsc, _mkldnn)
from ._core.storage import UntypedStorage
from ._core.memory_overlap import _debug_has_internal_overlap  # noqa: F401
from ._core.memory_format import (memory_format, contiguous_format, channels_last,
                                  channels_last_3d, preserve_format)
from ._core.qscheme import (qscheme, per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                            per_channel_symmetric, per_channel_affine_float_qparams)
from ._core.tensor import Tensor, Size
from ._core.tensor_str import set_printoptions
from ._core.generator import (Generator, default_generator, manual_seed, seed, initial_seed,
                              get_rng_state, set_rng_state)
from ._core.matmul_precision import set_float32_matmul_precision, get_float32_matmul_precision
from ._core.deterministic import (use_deterministic_algorithms,
                                  are_deterministic_algorithms_enabled,
                                  is_deterministic_algorithms_warn_only_enabled,
                                  set_deterministic_debug_mode, get_deterministic_debug_mode)

# ---- ops: schemas and kernels, autograd, the bindings and composites
import sys as _sys

from . import _aten  # every op's schema and kernels
from ._aten._parallel import (get_num_threads, set_num_threads, get_num_interop_threads,
                              set_num_interop_threads, init_num_threads)
from ._core.flags import set_warn_always, is_warn_always_enabled, set_flush_denormal
from ._dispatch.ops import ops
from . import _ops  # noqa: F401  (torch._ops: the OpOverload classes)
from . import autograd
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                                 is_grad_enabled, is_inference_mode_enabled)
from .autograd.anomaly_mode import (is_anomaly_enabled, is_anomaly_check_nan_enabled,
                                    set_anomaly_enabled)
from ._bindings import *  # noqa: F401,F403  (the torch.* functions: generated and hand-written)
from ._refs import *  # noqa: F401,F403  (the torch.* functions written from ops)
from ._refs.elementwise import _complex as complex  # noqa: F401  (torch.complex)
from ._refs.composites import *  # noqa: F401,F403  (diff, cov, windows, ...)
from ._refs.copy_variants import *  # noqa: F401,F403  (view_copy, ...)
from ._bindings.tensor_methods import resize_as_  # noqa: F401
from ._refs.sampling import binomial, _standard_gamma, _sample_dirichlet  # noqa: F401
from .autograd import derivatives as _derivatives  # noqa: F401  (every op's backward formula)
from ._bindings import generated as _generated, codegen as _codegen
from ._bindings.legacy_tensor_types import CPU_TYPES as _legacy_types
globals().update(_legacy_types)  # torch.FloatTensor, torch.LongTensor, ...
from ._bindings.legacy_tensor_types import CUDA_TYPES as _cuda_legacy_types
_tensor_classes = set(_legacy_types.values()) | set(_cuda_legacy_types.values())
from ._dispatch.explain import explain
from ._dispatch import python_dispatch as _python_dispatch  # noqa: F401  (the Python key)
from ._dispatch import math_bits as _math_bits  # noqa: F401  (the Conjugate and Negative keys)
from ._refs.checks import (_check, _check_with, _check_is_size, _check_index, _check_value,  # noqa: F401
                           _check_type, _check_not_implemented, _check_tensor_all,
                           _check_tensor_all_with, _assert_async)
from . import library
from ._C import Tag  # torch.Tag
from . import _subclasses  # noqa: F401  (torch._subclasses: FakeTensorMode)
from ._refs.control_flow import cond, while_loop
from ._refs.sym import *  # noqa: F401,F403  (torch.sym_int, sym_max, ...)

# ---- libraries
from . import linalg  # torch.linalg
from .linalg.composites import *  # noqa: F401,F403  (cholesky_solve, matrix_exp, ...)
from .linalg.lu import lu, lu_unpack, lu_solve  # noqa: F401
from .linalg.householder import geqrf, orgqr, ormqr  # noqa: F401
from .linalg.lowrank import svd_lowrank, pca_lowrank  # noqa: F401
from .linalg.lobpcg import lobpcg  # noqa: F401
from . import special  # torch.special
from . import nn, optim
from .nn.functional import TORCH_LEVEL as _nn_torch_level
from .nn._rnn import *  # noqa: F401,F403  (torch.lstm, gru, lstm_cell, ...)
from . import multiprocessing, random, utils, func, storage, __config__, __future__  # noqa: F401
from .utils.dlpack import to_dlpack  # noqa: F401
from ._functorch.apis import vmap  # torch.vmap
from . import _vmap_internals  # noqa: F401  (the prototype vmap of batched forward grads)
from . import fft, signal, functional, masked  # torch.fft, torch.signal, torch.functional, torch.masked
from ._core import torch_function as _torch_function


def _assert(condition, message):
    """A Python assert that symbolic tracing can record: a condition with `__torch_function__`
    (an fx Proxy) hands the call over, so the check stays in the traced graph."""
    if type(condition) is not Tensor and type(condition) not in _torch_function.FAST_TYPES:
        result = _torch_function.torch_function_dispatch(_assert, (condition,),
                                                         (condition, message), {})
        if result is not _torch_function.NOT_HANDLED:
            return result
    assert condition, message


from . import fx  # torch.fx
from . import sparse  # torch.sparse
from .functional import stft, istft
from . import serialization
from .storage import TypedStorage, is_storage, _LEGACY_STORAGES as _legacy_storages
globals().update({cls.__name__: cls for cls in _legacy_storages.values()})  # torch.FloatStorage
_storage_classes = {UntypedStorage, TypedStorage, *_legacy_storages.values(),
                    *storage._CUDA_LEGACY_STORAGES.values()}
from .serialization import save, load
from . import distributed, distributions, testing
from . import cuda, backends, accelerator  # no GPU: is_available() is False, flags are recorded
cuda.__dict__.update(_cuda_legacy_types)  # torch.cuda.FloatTensor (which cannot be called)
cuda.__dict__.update({c.__name__: c for c in storage._CUDA_LEGACY_STORAGES.values()})
from . import mps, xpu  # no Metal or Intel GPU either
from . import futures, nested  # torch.futures, torch.nested (strided layout)
from .nested import (_nested_tensor_from_mask, _nested_tensor_from_mask_left_aligned,
                     _nested_from_padded, _nested_from_padded_and_nested_example)
from . import memory  # the CPU caching allocator's statistics and snapshots
from .memory import OutOfMemoryError
from . import jit, compiler  # torch.jit, torch.compiler
from .jit._trace import ScriptMethod  # torch.ScriptMethod
from . import export  # torch.export
from . import return_types, types, version  # torch.return_types, torch.types, torch.version
from . import hub  # torch.hub
from .compiler import compile  # torch.compile
from . import _lazy  # torch._lazy: the lazy device's dispatch key, mark_step, metrics
from . import quasirandom  # torch.quasirandom: SobolEngine
from . import amp, cpu, profiler  # torch.amp, torch.cpu, torch.profiler
from .amp import autocast, GradScaler
from ._core.autocast_state import (
    is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
    set_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_gpu_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, autocast_increment_nesting,
    autocast_decrement_nesting, clear_autocast_cache)

globals().update(_nn_torch_level)  # torch.conv2d, torch.dropout, ...: nn functions torch has too
_codegen.document_all((_generated.FUNCTIONS, _generated.METHODS))  # derivatives are in by now
_codegen.give_numpy_names({"ember": _sys.modules[__name__], "ember.nn.functional": nn.functional,
                           "ember.special": special, "ember.linalg": linalg, "ember.fft": fft,
                           "Tensor": Tensor})
from . import overrides, _C  # torch.overrides, torch._C's __torch_function__ switches
overrides.install()  # the hand-written functions and methods dispatch __torch_function__ too

__version__ = version.__version__

from math import e, inf, nan, pi  # noqa: E402  (torch.e, torch.inf, torch.nan, torch.pi)
newaxis = None  # torch.newaxis, NumPy's alias for None in indexing


def get_device_module(device=None):
    """The module for a device type: ember.cpu for the CPU (and with no argument, no accelerator
    being present), ember.cuda for "cuda", ember.mps and ember.xpu for theirs."""
    import importlib
    if device is None:
        return cpu
    kind = device.type if isinstance(device, _core.device.device) else str(device).split(":")[0]
    if kind not in ("cpu", "cuda", "meta", "mps", "xpu"):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'torch.{kind}'.")
    return importlib.import_module(f".{kind}", __name__) if kind != "meta" else cpu


def is_distributed(input):
    """False: ember's tensors are never distributed (torch's legacy THD check)."""
    return False


def _nnpack_available():
    """False: ember's convolutions are its own NumPy kernels, with no NNPACK behind them."""
    return False


def typename(obj):
    """The qualified name of obj's type ('torch.FloatTensor' for a tensor); a class or function
    passed itself is named, not its type ('__main__.Net' for the class Net)."""
    if isinstance(obj, Tensor):
        return obj.type()
    if hasattr(obj, "__qualname__"):
        module, qualname = getattr(obj, "__module__", "") or "", obj.__qualname__
    elif hasattr(obj, "__name__"):
        module, qualname = getattr(obj, "__module__", "") or "", obj.__name__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


# the submodules imported on first use, as PyTorch's torch.onnx is (`import ember.onnx` works
# as well); PyTorch names its own set torch._lazy_modules
_lazy_modules = frozenset({"onnx", "_utils", "_VF", "ao", "_ops", "_prims_common", "_prims"})

_FUNCTIONALIZATION = {"_to_functional_tensor": "to_functional_tensor",
                      "_from_functional_tensor": "from_functional_tensor",
                      "_is_functional_tensor": "is_functional_tensor", "_sync": "sync",
                      "_freeze_functional_tensor": "freeze_functional_tensor",
                      "_enable_functionalization": "enable_functionalization",
                      "_disable_functionalization": "disable_functionalization"}


def __getattr__(name):
    if name in _lazy_modules:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    if name == "torch":  # PyTorch's namespace holds itself (names like 'torch.ops.aten.x' resolve)
        return _sys.modules[__name__]
    if name in _FUNCTIONALIZATION:   # torch._to_functional_tensor, torch._sync, ...
        from ._subclasses import functional_tensor
        return getattr(functional_tensor, _FUNCTIONALIZATION[name])
    if name == "Storage":  # the legacy storage class of the default dtype (torch.FloatStorage)
        return _legacy_storages[get_default_dtype()]
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
