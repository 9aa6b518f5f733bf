"""ember: PyTorch's machinery rebuilt in readable Python on NumPy. `import ember as torch`."""
from ._core import dtype as _dtype
from ._core.dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16,
                          float32, float64, complex64, complex128, promote_types,
                          get_default_dtype, set_default_dtype)
from ._core.dtype import float16 as half, float32 as float, float64 as double, int16 as short
from ._core.dtype import int32 as int, int64 as long, complex64 as cfloat, complex128 as cdouble
from ._core.type_info import finfo, iinfo
from ._aten._parallel import get_num_threads, set_num_threads
from ._core.device import device
from ._core.storage import UntypedStorage
from ._core.memory_format import (memory_format, contiguous_format, channels_last,
                                  channels_last_3d, preserve_format)
from . import autograd
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                              is_grad_enabled, is_inference_mode_enabled)
from ._core.tensor import Tensor, Size
from ._dispatch import dispatcher as _dispatcher
from . import _aten  # every op's schema and kernels
from ._dispatch.ops import ops
from ._bindings import *  # noqa: F401,F403  (the torch.* functions: generated and hand-written)
from ._refs import *  # noqa: F401,F403  (the torch.* functions written from ops)
from ._refs.elementwise import _complex as complex  # noqa: F401  (torch.complex)
from .autograd import derivatives as _derivatives  # noqa: F401
from ._bindings import generated as _generated, codegen as _codegen
_codegen.document_all((_generated.FUNCTIONS, _generated.METHODS))
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from ._core.generator import (Generator, default_generator, manual_seed, seed, initial_seed,
                              get_rng_state, set_rng_state)
from ._core.tensor_str import set_printoptions
from ._dispatch.explain import explain
from . import library
from . import nn, optim
from . import multiprocessing
from . import distributed
from .nn.functional import TORCH_LEVEL as _nn_torch_level
globals().update(_nn_torch_level)  # torch.conv2d, torch.dropout, ... (issue 3d)
from . import random
from . import linalg  # torch.linalg (issue 3, linalg)
from ._refs.composites import *  # noqa: F401,F403  (diff, cov, windows, ...: coverage)
from ._refs.copy_variants import *  # noqa: F401,F403  (view_copy, ...)
from .linalg.composites import *  # noqa: F401,F403  (cholesky_solve, matrix_exp, ...)
from ._refs.sampling import binomial, _standard_gamma, _sample_dirichlet  # noqa: F401
from .linalg.lu import lu, lu_unpack, lu_solve  # noqa: F401
from .linalg.householder import geqrf, orgqr, ormqr  # noqa: F401
from .linalg.lowrank import svd_lowrank, pca_lowrank  # noqa: F401
from . import utils
from . import func  # torch.func (functional_call)
from . import special  # torch.special
from . import fft  # torch.fft
from . import signal  # torch.signal
from . import functional  # torch.functional: stft, istft
from .functional import stft, istft
from . import serialization
from . import cuda  # torch.cuda.is_available() == False: ember is CPU-only
from . import backends, accelerator  # cudnn/mps flags and device queries: no GPU either
from ._core.matmul_precision import set_float32_matmul_precision, get_float32_matmul_precision
from .serialization import save, load
from . import distributions  # torch.distributions
from . import testing  # torch.testing


from ._core.layout import layout, strided, sparse_coo

__version__ = "0.1.0"


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__qualname__




from ._core.deterministic import (use_deterministic_algorithms,  # noqa: E402
                                  are_deterministic_algorithms_enabled,
                                  is_deterministic_algorithms_warn_only_enabled,
                                  set_deterministic_debug_mode, get_deterministic_debug_mode)
