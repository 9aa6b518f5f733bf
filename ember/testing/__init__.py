"""torch.testing: `assert_close` for comparing results in tests and `make_tensor` for
making random inputs of any dtype (and the deprecated `assert_allclose`, outside `__all__`
as in PyTorch)."""
from ._comparison import assert_allclose, assert_close  # noqa: F401
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
