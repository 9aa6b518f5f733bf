"""Names of torch's namespace and torch.Tensor that plain programs use, against torch: the
math constants, newaxis, is_distributed, the removed `volatile` flag, and the moves to devices
this build lacks (xpu, ipu, mtia)."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")


def test_constants_as_torch():
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        assert repr(getattr(ember, name)) == repr(getattr(torch, name)), name
    assert ember.ones(2)[ember.newaxis].shape == torch.ones(2)[torch.newaxis].shape
    assert ember.is_distributed(ember.ones(1)) is torch.is_distributed(torch.ones(1))
    assert ember.ones(1).is_distributed() is torch.ones(1).is_distributed()


def _warnings_of(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = m.ones(2, requires_grad=True)
        value = t.volatile
        t.volatile = True
    return value, [(w.category, str(w.message), w.filename) for w in caught]


def test_volatile_warns_as_torch():
    assert _warnings_of(ember) == _warnings_of(torch)
    assert _warnings_of(ember)[1][0][2] == __file__  # the warning points at the caller


@pytest.mark.parametrize("move", ["xpu", "ipu", "mtia"])
def test_moves_to_absent_devices_raise_as_torch(move):
    def error(m):
        with pytest.raises(Exception) as info:
            getattr(m.ones(1), move)()
        return type(info.value), str(info.value)
    assert error(ember) == error(torch)


@pytest.mark.parametrize("method", ["expand", "permute", "flip", "repeat", "tile", "sum_to_size",
                                    "view", "reshape", "new_empty", "new_zeros", "new_ones"])
def test_size_methods_without_their_size_raise_as_torch(method):
    """x.expand() and friends with no ints at all: torch's parser's TypeError, not an empty size."""
    def error(m):
        with pytest.raises(Exception) as info:
            getattr(m.ones(2, 3), method)()
        return type(info.value), str(info.value)
    assert error(ember) == error(torch)


def test_functional_reexports_the_torch_function_helpers():
    """torch.nn.functional carries has_torch_function(_unary/_variadic) and handle_torch_function,
    which extension code calls from there."""
    import ember.nn.functional as F

    class Sub(ember.Tensor):
        pass
    assert F.has_torch_function is ember.overrides.has_torch_function
    assert F.handle_torch_function is ember.overrides.handle_torch_function
    assert not F.has_torch_function_unary(ember.ones(1))
    assert F.has_torch_function_variadic(ember.ones(1), ember.ones(1).as_subclass(Sub))
