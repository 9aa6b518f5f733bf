"""ember: PyTorch's machinery rebuilt in readable Python on NumPy. `import ember as torch`."""
from . import _dtype
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32,
                     float64, complex64, complex128, promote_types, get_default_dtype,
                     set_default_dtype)
from ._dtype import float16 as half, float32 as float, float64 as double, int16 as short
from ._dtype import int32 as int, int64 as long, complex64 as cfloat, complex128 as cdouble
from ._type_info import finfo, iinfo
from ._aten._parallel import get_num_threads, set_num_threads
from ._device import device
from ._storage import UntypedStorage
from ._memory_format import (memory_format, contiguous_format, channels_last, channels_last_3d,
                             preserve_format)
from . import autograd
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                                 is_grad_enabled, is_inference_mode_enabled)
from ._tensor import Tensor, Size
from . import _dispatcher
from ._aten import native_functions as _native_functions
from ._aten import elementwise as _k1, shape as _k2, reduction as _k3, linalg as _k4  # noqa
from ._aten import nn_ops as _k5, factory as _k6, indexing as _k7, sorting as _k8  # noqa: F401
from ._aten import conv as _nn_conv, pooling as _nn_pooling, norm as _nn_norm  # noqa: F401
from ._aten import special as _k_special  # noqa: F401  (torch.special's own ops)
from ._ops import ops
from ._python_bindings import *  # noqa: F401,F403  (the torch.* functions)
from ._python_bindings import (tensor, as_tensor, asarray, from_numpy, from_dlpack, empty,
                               zeros, ones, full, arange, linspace, eye, rand, randn, randint,
                               randperm, normal, sum, max, min, all, any, abs, pow)
from ._python_bindings import _complex as complex  # noqa: F401  (torch.complex)
from .autograd import derivatives as _derivatives  # noqa: F401
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from ._generator import (Generator, default_generator, manual_seed, seed, initial_seed,
                         get_rng_state, set_rng_state)
from ._tensor_str import set_printoptions, get_printoptions, printoptions
from ._explain import explain
from . import library
from . import nn, optim
from . import multiprocessing
from . import distributed
from .nn.functional import TORCH_LEVEL as _nn_torch_level
globals().update(_nn_torch_level)  # torch.conv2d, torch.dropout, ... (issue 3d)
from . import random
from . import linalg  # torch.linalg (issue 3, linalg)
from ._composites import *  # noqa: F401,F403  (diff, cov, windows, ...: coverage)
from ._copy_variants import *  # noqa: F401,F403  (view_copy, ...)
from ._linalg_composites import *  # noqa: F401,F403  (cholesky_solve, matrix_exp, ...)
from ._sampling import binomial, _standard_gamma, _sample_dirichlet  # noqa: F401
from ._lu import lu, lu_unpack, lu_solve  # noqa: F401
from ._householder import geqrf, orgqr, ormqr  # noqa: F401
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: F401
from . import utils
from . import func  # torch.func (functional_call)
from . import special  # torch.special
from . import serialization
from . import cuda  # torch.cuda.is_available() == False: ember is CPU-only
from . import backends, accelerator  # cudnn/mps flags and device queries: no GPU either
from ._matmul_precision import set_float32_matmul_precision, get_float32_matmul_precision
from .serialization import save, load


class _Layout:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


strided = _Layout("strided")
sparse_coo = _Layout("sparse_coo")

__version__ = "0.1.0"


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__qualname__




def use_deterministic_algorithms(mode, *, warn_only=False):
    pass


def are_deterministic_algorithms_enabled():
    return False
