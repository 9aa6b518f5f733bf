"""torch._check and its family: the Python form of ATen's TORCH_CHECK. `_check(cond, message)`
raises RuntimeError (the `_check_index` / `_check_type` / `_check_value` / ... variants raise
IndexError / TypeError / ValueError / NotImplementedError) when a bool condition is False, with
the text of `message()`, a callable so that the text is built only on failure;
`_check_tensor_all` asks it of every element of a bool tensor."""
import builtins

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? "
            "If so, please report an enhancement request to PyTorch.)")


def _check_with(error_type, cond, message=None):
    from .._core.tensor import Tensor
    import numpy as np
    if not isinstance(cond, (builtins.bool, np.bool_)):   # ember has no symbolic bools
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if builtins.bool(cond):
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got "
                             f"{error_type}")
    if message is None:
        raise error_type(_DEFAULT)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond, message=None):
    _check_with(RuntimeError, cond, message)


def _check_is_size(i, message=None, *, max=None):
    """That `i` can be a size: 0 <= i (<= max)."""
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _check_index(cond, message=None):
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    _check_with(NotImplementedError, cond, message)


def _check_tensor_all_with(error_type, cond, message=None):
    from .._core import dtype as D
    from .._core.tensor import Tensor
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype is not D.bool:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, builtins.bool(cond.all().item()), message)


def _check_tensor_all(cond, message=None):
    _check_tensor_all_with(RuntimeError, cond, message)


def _assert_async(tensor, assert_msg=None):
    """torch._assert_async: that a one-element tensor is nonzero (on the CPU nothing is
    asynchronous, so this is `assert tensor.is_nonzero()` with PyTorch's messages)."""
    if not tensor.is_nonzero():
        raise RuntimeError(assert_msg if assert_msg is not None else
                           "Expected Tensor with single nonzero value, but got zero")

