"""torch.testing: `assert_close` for comparing results in tests, `make_tensor` for
making random inputs of any dtype, `FileCheck` for ordered checks on printed text (and the
deprecated `assert_allclose`, outside `__all__` as in PyTorch)."""
from ._comparison import assert_allclose, assert_close  # noqa: F401
from ._creation import make_tensor
from ._filecheck import FileCheck

__all__ = ["assert_close", "make_tensor", "FileCheck"]
