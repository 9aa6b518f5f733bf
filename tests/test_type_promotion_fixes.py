"""Fixes found by running PyTorch's test/test_type_promotion.py, test_type_info.py and
test_numpy_interop.py on ember: the operators' answer to an operand PyTorch's parser rejects
(NotImplemented, so `tensor + ndarray` is NumPy's sum wrapped back by __array_wrap__, and
`tensor + None` is Python's TypeError), NumPy ufuncs on tensors returning tensors, `==` with an
array, the deprecated `add(input, alpha, other)` with a 0-dim tensor alpha, sparse sub/sub_,
finfo/iinfo equality and dtype.to_complex's error. Each compares ember with torch."""
import operator
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    """What fn(lib) gives: (class name, dtype, values) of a tensor, the value of anything
    else, or the exception's class name."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return ("raises", type(e).__name__)
    if isinstance(r, (ember.Tensor, torch.Tensor)):
        if r.is_sparse:
            r = r.to_dense()
        return (type(r).__name__, str(r.dtype), r.tolist())
    if isinstance(r, np.ndarray):
        return ("ndarray", str(r.dtype), r.tolist())
    return r


_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
        operator.mod, operator.pow, operator.lt, operator.ge, operator.eq, operator.ne,
        operator.and_, operator.or_, operator.xor, operator.lshift, operator.matmul]


@pytest.mark.parametrize("op", _OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [np.array([1, 1], dtype=np.float32),
                                   np.array([True, False]), None, "s", [1, 2]],
                         ids=["f32array", "boolarray", "None", "str", "list"])
def test_operator_with_unparsed_operand(op, other):
    a = _outcome(lambda L: op(L.tensor([1, 2], dtype=L.int32), other), ember)
    b = _outcome(lambda L: op(L.tensor([1, 2], dtype=L.int32), other), torch)
    assert a == b
    a = _outcome(lambda L: op(other, L.tensor([1, 2], dtype=L.int32)), ember)
    b = _outcome(lambda L: op(other, L.tensor([1, 2], dtype=L.int32)), torch)
    assert a == b


@pytest.mark.parametrize("name", ["__iadd__", "__isub__", "__imul__", "__itruediv__",
                                  "__iand__", "__ior__", "__ilshift__", "__imod__"])
def test_inplace_operator_with_array_is_not_implemented(name):
    a = getattr(ember.ones(2, dtype=ember.int32), name)(np.ones(2, np.int32))
    b = getattr(torch.ones(2, dtype=torch.int32), name)(np.ones(2, np.int32))
    assert a is NotImplemented and b is NotImplemented


@pytest.mark.parametrize("case", [
    lambda L: np.sin(L.tensor([1.0, 2.0])),
    lambda L: np.abs(L.tensor([1, -2], dtype=L.int16)),
    lambda L: np.greater_equal(L.tensor([1.0, 3.0]), 2),
    lambda L: np.add(L.tensor([1], dtype=L.int32), np.float32(1.5)),
    lambda L: L.tensor([1, 2], dtype=L.int32) == np.array([1, 1], dtype=np.float32),
    lambda L: np.array([1, 1], dtype=np.float32) == L.tensor([1, 2], dtype=L.int32),
    lambda L: L.tensor([1.0, 2.0]) != np.array([1.0, 1.0]),
    lambda L: L.tensor([1, 2]) * np.int16(3),
    lambda L: np.float32(2.0) * L.tensor([1.0, 2.0], dtype=L.float64),
])
def test_numpy_ufuncs_and_comparisons(case):
    assert _outcome(case, ember) == _outcome(case, torch)


@pytest.mark.parametrize("case", [
    lambda L: L.add(L.tensor(True), L.tensor(True), True),
    lambda L: L.add(L.ones(2), L.tensor(2.0), L.ones(2)),
    lambda L: L.add(L.ones(2), L.tensor(2.0, requires_grad=True), L.ones(2)),
    lambda L: L.add(L.ones(2), L.tensor([2.0]), L.ones(2)),
    lambda L: L.addcmul(L.ones(2), L.tensor(3.0), L.ones(2), L.ones(2)),
])
def test_deprecated_overload_takes_a_zero_dim_tensor_scalar(case):
    assert _outcome(case, ember) == _outcome(case, torch)


def _sparse(L, dtype):
    return L.tensor([[1, 0, 3], [0, 5, 0]], dtype=dtype).to_sparse()


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32"])
@pytest.mark.parametrize("case", [
    lambda L, d: _sparse(L, d) - _sparse(L, d) * 2,
    lambda L, d: _sparse(L, d).sub_(_sparse(L, d) * 2),
    lambda L, d: L.ones(2, 3, dtype=d) - _sparse(L, d),
    lambda L, d: L.sub(_sparse(L, d), _sparse(L, d), alpha=3),
    lambda L, d: _sparse(L, d) - L.ones(2, 3, dtype=d),
    lambda L, d: _sparse(L, L.bool) - _sparse(L, L.bool),
])
def test_sparse_sub(case, dtype):
    assert _outcome(lambda L: case(L, getattr(L, dtype)), ember) == \
        _outcome(lambda L: case(L, getattr(L, dtype)), torch)


@pytest.mark.parametrize("case", [
    lambda L: L.finfo(L.float16) == L.finfo(L.float16),
    lambda L: L.finfo(L.float32) == L.finfo(L.float64),
    lambda L: L.finfo(L.get_default_dtype()) == L.finfo(),
    lambda L: L.iinfo(L.int8) == L.iinfo(L.int8),
    lambda L: L.iinfo(L.int8) == L.iinfo(L.uint8),
    lambda L: hash(L.finfo(L.float32)),
    lambda L: L.int64.to_complex(),
    lambda L: L.bool.to_complex(),
    lambda L: L.bfloat16.to_complex(),
    lambda L: L.float32.to_complex(),
    lambda L: L.int32.to_real(),
])
def test_type_info_and_to_complex(case):
    a, b = _outcome(case, ember), _outcome(case, torch)
    assert str(a) == str(b)


# ---- test_numpy_interop.py ----------------------------------------------------------------------
def _strided_bytes(a, stride):
    return np.lib.stride_tricks.as_strided(a, a.shape, (stride,))


@pytest.mark.parametrize("case", [
    lambda L: L.ones(2, 2, 2, 2).mean(np.int16(3)),
    lambda L: L.ones(2, 3).sum(np.int64(1)),
    lambda L: L.ones(2, 3).amax(np.int8(0)),
    lambda L: L.FloatStorage(np.int16(3)).size(),
    lambda L: L.zeros(2, dtype=L.int32).__setitem__(0, np.int16(5)),
    lambda L: L.zeros(2).__setitem__(0, np.float32(1.5)),
    lambda L: L.zeros(2).__setitem__(0, np.bool_(True)),
    lambda L: L.tensor([np.ones(3), np.ones(0)]),
    lambda L: L.tensor([[np.ones(3), 0.5]]),
    lambda L: L.tensor([[1, 2, 3], np.ones(2)]),
    lambda L: L.tensor([np.ones(2), np.zeros(2)]),
    lambda L: L.from_numpy(_strided_bytes(np.zeros(6), 3)),
])
def test_numpy_arguments(case):
    assert _outcome(case, ember) == _outcome(case, torch)


def _setitem_result(L, value):
    t = L.zeros(2, dtype=L.int32)
    t[0] = value
    return t


def test_setitem_numpy_int_value():
    assert _outcome(lambda L: _setitem_result(L, np.int16(5)), ember) == \
        _outcome(lambda L: _setitem_result(L, np.int16(5)), torch)


def test_from_numpy_non_writeable_warns():
    arr = np.zeros(3)
    arr.flags.writeable = False
    ember.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
            ember.from_numpy(arr)
    finally:
        ember.set_warn_always(False)


def _grow_after_numpy(L, how):
    if how == "from_numpy":
        t = L.from_numpy(np.zeros(4))
    else:
        t = L.zeros(4)
        t.numpy()
    t.resize_(2)            # shrinking is allowed
    t.resize_(10)


@pytest.mark.parametrize("how", ["from_numpy", "numpy"])
def test_storage_shared_with_numpy_does_not_grow(how):
    assert _outcome(lambda L: _grow_after_numpy(L, how), ember) == \
        _outcome(lambda L: _grow_after_numpy(L, how), torch)
    t = ember.zeros(3)
    t.resize_(10)            # a storage no array shares still grows
    assert t.shape == (10,)


# ---- uint16/uint32/uint64: PyTorch's barebones unsigned dtypes ----------------------------------
@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("case", [
    lambda L, d: L.tensor([1, 2, 3], dtype=d) * L.tensor([4, 5, 6], dtype=d),
    lambda L, d: L.tensor([1, 2, 3], dtype=d).sum(),
    lambda L, d: L.tensor([1, 2, 3], dtype=d) * 2.5,
    lambda L, d: L.tensor([1, 2, 3], dtype=d) == L.ones(3),
    lambda L, d: L.tensor([1, 2, 3], dtype=d) + L.tensor([1], dtype=L.int8),
    lambda L, d: L.promote_types(d, L.int32),
    lambda L, d: L.promote_types(d, L.float16),
    lambda L, d: L.promote_types(L.complex64, d),
    lambda L, d: L.promote_types(d, d),
    lambda L, d: L.result_type(L.tensor([1], dtype=d), 1),
    lambda L, d: L.from_numpy(np.array([1, 2], dtype=str(d)[6:])),
    lambda L, d: L.tensor(np.array([7], dtype=str(d)[6:])),
    lambda L, d: L.tensor([1, 2], dtype=d).numpy().dtype,
    lambda L, d: L.tensor([1, 2], dtype=d).type(),
    lambda L, d: repr(L.tensor([1, 2], dtype=d)),
    lambda L, d: (L.iinfo(d).min, L.iinfo(d).max, L.iinfo(d).bits, d.is_signed, d.itemsize),
])
def test_barebones_unsigned_dtypes(case, name):
    assert str(_outcome(lambda L: case(L, getattr(L, name)), ember)) == \
        str(_outcome(lambda L: case(L, getattr(L, name)), torch))


@pytest.mark.parametrize("case", [
    lambda L: L.add(_sparse(L, L.int64), _sparse(L, L.int64), alpha=0.5),
    lambda L: L.ones(2, 3, dtype=L.long).add_(_sparse(L, L.int64), alpha=0.5),
    lambda L: L.sub(_sparse(L, L.float32), _sparse(L, L.int64), alpha=0.5),
    lambda L: L.add(_sparse(L, L.float32), _sparse(L, L.float32), alpha=True),
])
def test_sparse_add_alpha_checks(case):
    assert _outcome(case, ember) == _outcome(case, torch)
