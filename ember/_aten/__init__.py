"""ATen's role: operator schemas (native_functions.py) and their CPU and Meta kernels, one module
per op family. Importing the package defines every op and registers every kernel; in-place ops
that no family implements itself get kernels derived from their out-of-place op last, and the
ops on PyTorch's autocast lists get their cast policies (autocast.py). The ops PyTorch computes
for real dtypes only refuse complex inputs first (real_only.py), so the derived in-place kernels
refuse them too."""
from . import native_functions
from ._parallel import quiet_floating_point
from . import elementwise, special, reduction, sorting, linalg  # noqa: F401
from . import conv, pooling, norm, nn_ops, embedding_bag, shape, indexing, factory  # noqa: F401
from . import loss, ctc, rnn, fft, amp, sparse, sparse_ops, sparse_compressed  # noqa: F401
from . import scalar_overloads, tensor_metadata  # noqa: F401
from .inplace import register_inplace_kernels
from .autocast import apply_policies
from .real_only import refuse_complex

refuse_complex()
register_inplace_kernels()
apply_policies()
quiet_floating_point()
