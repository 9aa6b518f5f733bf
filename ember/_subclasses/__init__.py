"""torch._subclasses: in PyTorch, the tensor subclasses its tracing uses (FakeTensor, the meta
converter). ember keeps here only what PyTorch's test files import from it: meta_utils'
`assert_metadata_eq`, and fake_tensor's FakeTensorMode name."""
from .fake_tensor import FakeTensorMode  # noqa: F401,E402
