"""x[key] and x[key] = value against torch: basic and advanced indexing, masks, values,
gradients and errors; index_select, gather, scatter_add, masked_fill, index_put_."""
import numpy as np
import pytest
import torch

import ember
from _torch_oracle import check, check_raises

pytestmark = pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")

X = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)


def _idx(L, k):
    """Turn the NumPy arrays of an index key into tensors of library L (lists stay lists)."""
    if isinstance(k, tuple):
        return tuple(_idx(L, i) for i in k)
    if isinstance(k, np.ndarray) and k.dtype != object:
        return L.tensor(k)
    return k


I = np.array
KEYS = [
    1, -1, (0, 2), (1, -2, 3, -5), (-2,),
    slice(None), slice(1, None), slice(None, None, 2), slice(-3, -1), slice(1, 100),
    slice(-100, 1), slice(5, 10), slice(3, 1), (slice(None), slice(None, None, 3)),
    (Ellipsis, 1), (1, Ellipsis), (0, Ellipsis, 2), (Ellipsis,), (Ellipsis, None),
    None, (None, 1), (1, None, slice(None), None, 2), (None, Ellipsis, None),
    True, False, (1, True), (slice(None), False),
    I([0, 1, 0]), I([[1], [0]]), I([-1, 0]), [0, 1, 1], [[0, 1], [1, 1]],
    (I([0, 1]), I([2, 0])), (I([[0], [1]]), I([0, 1, 2])),
    (slice(None), I([0, 2])), (slice(None), I([2, 0]), I([1, 3])),
    # non-adjacent advanced indices go to the front (like NumPy)
    (I([0, 1]), slice(None), I([1, 2])),
    (I([1]), slice(1, 3), I([0, 3]), slice(None, None, 2)),
    (0, slice(None), I([1, 2])),                              # int splits the advanced group
    (I([0, 1]), 1, I([0, 2])),
    (Ellipsis, I([0, 4])), (None, I([1, 0]), None),
    (1, I([2, 0, 1])), (slice(None), 2, I([[1, 0]])),
    I(True), I(False), (I(0), I(1)), I(1),
    I([True, False]), (slice(None), I([True, False, True])),
    I([[True, False, True], [False, False, True]]),
    (I([[True, False, True], [False, False, True]]), I([0, 1, 0])),
    (I([[True, False, True], [False, False, True]]), 0, slice(1, None)),
    (slice(None), I([[True] * 4, [False] * 4, [True, False] * 2])),
    (I([1, 0]), Ellipsis, I([True, False, True, False, False])),
    (Ellipsis, I([True, False, True, True, False])),
    I(np.zeros((2, 3, 4, 5), bool)), I(X > 100),
    np.int64(1), (np.int64(1), np.int32(-1)), [True, False], I([], dtype=np.int64),
    (Ellipsis, Ellipsis), (Ellipsis, 0, Ellipsis), (Ellipsis, 0, Ellipsis, 1, 1, 1),
    [0.5, 1.7], [0, slice(None), [1, 2]],
    [I([1, 0])], (True, I([0, 1])), (slice(None), True, I([1, 2])), (None, True),
    (I([[1, 0]]), I(True)),
]


def _plain(k):
    return k.values[0] if isinstance(k, type(pytest.param(0))) else k


PLAIN_KEYS = [_plain(k) for k in KEYS]


def _key_id(k):
    k = _plain(k)
    return repr(k).replace("\n", "").replace(" ", "")[:40]


@pytest.mark.parametrize("key", KEYS, ids=[_key_id(k) for k in KEYS])
def test_getitem(key):
    check(lambda L, x: x[_idx(L, key)], X)


@pytest.mark.parametrize("key", PLAIN_KEYS, ids=[_key_id(k) for k in KEYS])
def test_getitem_view_or_copy(key):
    """Basic indexing gives a view with torch's strides; advanced indexing a fresh tensor."""
    def f(L, x):
        r = x[_idx(L, key)]
        return r._base is x, r.stride(), r.storage_offset(), r.is_contiguous()
    check(f, X, grad=False)


@pytest.mark.parametrize("key", PLAIN_KEYS, ids=[_key_id(k) for k in KEYS])
def test_setitem_scalar_and_tensor(key):
    def set_scalar(L, x):
        y = x.detach().clone()
        y[_idx(L, key)] = -1.5
        return y

    def set_tensor(L, x):
        y = x.detach().clone()
        target = y[_idx(L, key)]
        y[_idx(L, key)] = L.arange(target.shape[-1] if target.dim() else 1,
                                   dtype=L.float64) * 10
        return y
    check(set_scalar, X, grad=False)
    check(set_tensor, X, grad=False)


BAD_KEYS = [
    5, -3, (0, 3), (0, 0, 4), (0, 0, 0, 5), (0, 0, 0, 0, 0), (Ellipsis, 0, Ellipsis, 1, 1, 1, 0),
    I([2]), I([0, -3]), (slice(None), I([3])), I([0.5]), I([[True, False]]),
    (I([0, 1]), I([0, 1, 2])), I([True, False, True]), "a", 1.5, slice(None, None, -1),
    slice(None, None, 0), (I([0]),) * 5, {1: 2}, [2.5], (0, [[0], [4]]),
]


@pytest.mark.parametrize("key", BAD_KEYS, ids=[_key_id(k) for k in BAD_KEYS])
def test_bad_getitem(key):
    check_raises(lambda L, x: x[_idx(L, key)], X)


@pytest.mark.parametrize("key", BAD_KEYS, ids=[_key_id(k) for k in BAD_KEYS])
def test_bad_setitem(key):
    def f(L, x):
        x[_idx(L, key)] = 0
    check_raises(f, X)


def test_list_of_sequences_is_a_tuple_and_warns():
    for L in (ember, torch):
        x = L.arange(24).reshape(2, 3, 4)
        with pytest.warns(UserWarning, match="non-tuple sequence"):
            assert x[[[0, 1], [1, 2]]].tolist() == x[[0, 1], [1, 2]].tolist()
        with pytest.warns(UserWarning, match="non-tuple sequence"):
            x[[0, slice(None), 1]] = -1
        assert (x[0, :, 1] == -1).all()


def test_zero_dim_and_one_dim():
    v = np.arange(5.0)
    for key in [0, -1, slice(1, 3), None, Ellipsis, [1, 3], (None, 2), I([True, False] * 2 +
                                                                        [True])]:
        check(lambda L, x: x[_idx(L, key)], v)
    s = np.array(3.0)
    for key in [Ellipsis, None, (), True, (None, Ellipsis), I(True)]:
        check(lambda L, x: x[_idx(L, key)], s)
    check_raises(lambda L, x: x[0], s)
    check_raises(lambda L, x: x[:], s)


def test_integer_index_dtypes():
    check(lambda L, x: x[:, L.tensor([1, 0, 1], dtype=L.int32)], X)
    check(lambda L, x: x[L.tensor([1, 0], dtype=L.int32), L.tensor([2, 2])], X)
    check(lambda L, x: x[L.tensor(1, dtype=L.int16), L.tensor(-1, dtype=L.int8)], X)
    for dt in ("int16", "int8"):
        check_raises(lambda L, x: x[L.tensor([1, 0], dtype=getattr(L, dt))], X)


SET_VALUES = [
    ((0,), lambda L: 7.0),
    ((slice(None), 1), lambda L: L.arange(20.0).reshape(4, 5)),
    ((Ellipsis, 0), lambda L: L.tensor([1.0, 2.0, 3.0, 4.0]).unsqueeze(0)),
    ((I([0, 1]), 1), lambda L: L.ones(4, 5) * 3),
    ((I([[0], [1]]), I([0, 2])), lambda L: L.arange(5.0)),
    ((slice(None), I([0, 2]), slice(None), I([1, 3])), lambda L: L.arange(8.0).reshape(2, 1, 4)),
    ((I([True, False]),), lambda L: L.tensor(-2.0)),
    ((slice(None), I([True, False, True]), 0), lambda L: L.arange(5.0)),
    ((X > 50,), lambda L: 0.0),
    ((X > 50,), lambda L: L.arange(float((X > 50).sum()))),
    ((1, 2, 3, 4), lambda L: L.tensor(9)),
    ((1, 2), lambda L: L.tensor([1, 2, 3, 4, 5], dtype=L.int32)),
]


@pytest.mark.parametrize("k", range(len(SET_VALUES)))
def test_setitem_values(k):
    key, value = SET_VALUES[k]

    def f(L, x):
        y = x.detach().clone()
        v = value(L)
        y[_idx(L, key)] = v.to(y.dtype) if isinstance(v, L.Tensor) else v
        return y
    check(f, X, grad=False)


def test_setitem_dtypes():
    def f(L):
        y = L.zeros(5, dtype=L.int64)
        y[L.tensor([1, 3])] = 2.7                       # a Python number is cast
        y[0] = L.tensor(-1.9)                           # basic indexing copies (casts)
        y[L.tensor([True, False] * 2 + [False])] = L.tensor([6.5])  # one value, one mask
        z = L.zeros(3)
        z[L.tensor([2, 0, 2])] = L.tensor([1.0, 2.0, 3.0])  # duplicates: the last write wins
        b = L.zeros(3, dtype=L.bool)
        b[1] = 5
        b[L.tensor([2])] = 0.5
        return y, z, b
    check(f, grad=False)

    def int_into_float(L, x):
        x[L.tensor([0, 1])] = L.tensor([4, 5])

    def float32_into_float64(L, x):
        x[:, L.tensor([0, 1])] = L.ones(3, 4, 5)

    def accumulate_casts_not(L, x):
        x.index_put_((x > 3,), L.tensor(1.0), accumulate=True)
    check_raises(int_into_float, np.zeros(3, np.float32))
    check_raises(float32_into_float64, X)
    check_raises(accumulate_casts_not, X)


def test_setitem_value_shapes():
    def leading_ones(L, x):
        y = x.detach().clone()
        y[0] = L.ones(1, 1, 3, 4, 5, dtype=L.float64)
        y[L.tensor([0, 1]), 2] = L.arange(5.0, dtype=L.float64).reshape(1, 1, 5)
        return y
    check(leading_ones, X, grad=False)
    check_raises(lambda L, x: x.__setitem__(0, L.ones(3)), X)
    check_raises(lambda L, x: x.__setitem__(L.tensor([0, 1]), L.ones(3, dtype=L.float64)), X)
    check_raises(lambda L, x: x.__setitem__(0, L.ones(2, 1, 3, 4, 5, dtype=L.float64)), X)
    for bad in ("a", [1.0, 2.0], None, np.float32(1)):
        check_raises(lambda L, x: x.__setitem__(0, bad), X)
        check_raises(lambda L, x: x.__setitem__(L.tensor([0]), bad), X)


def test_setitem_through_view_is_visible():
    for L in (ember, torch):
        x = L.zeros(3, 4)
        v = x[1:]
        v[:, L.tensor([0, 3])] = 1.0
        v[L.tensor([True, False]), 1] = 2.0
        assert x.tolist() == [[0, 0, 0, 0], [1, 2, 0, 1], [1, 0, 0, 1]]
        assert x._version == 2


GRAD_CASES = [
    lambda L, x: x[1, :, ::2],
    lambda L, x: x[:, L.tensor([0, 0, 2])],                   # repeated index accumulates
    lambda L, x: x[L.tensor([[1, 0], [1, 1]]), :, L.tensor([3, 3])],
    lambda L, x: x[x > 60],
    lambda L, x: x[:, L.tensor([True, False, True])][..., 1:],
    lambda L, x: x[None, ..., None, 1],
    lambda L, x: x.view(6, 20).t()[1:, ::3][L.tensor([0, 2, 2])],
    lambda L, x: x[1][L.tensor([2, 0])][:, L.tensor([1, 1, 3])],
]


@pytest.mark.parametrize("fn", GRAD_CASES)
def test_getitem_grad(fn):
    check(fn, X)


@pytest.mark.parametrize("fn", GRAD_CASES)
def test_getitem_gradcheck(fn):
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 3, 4, 5))).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: fn(ember, t), (x,))


# ---- index ops ---------------------------------------------------------------------------
def _ints(L, seed, high, shape):
    """The same random int64 index tensor on every call."""
    return L.tensor(np.random.default_rng(seed).integers(0, high, shape))


OPS = [
    lambda L, x: L.index_select(x, 1, L.tensor([2, 0, 2])),
    lambda L, x: x.index_select(-1, L.tensor([4, 4, 0])),
    lambda L, x: x.index_select(0, L.tensor([1], dtype=L.int32)),
    lambda L, x: x.index_select(2, L.tensor([], dtype=L.int64)),
    lambda L, x: L.gather(x, 2, _ints(L, 0, 4, (2, 3, 2, 5))),
    lambda L, x: x.gather(-1, _ints(L, 1, 5, (1, 2, 3, 4))),
    lambda L, x: x.gather(0, L.zeros(1, 1, 1, 1, dtype=L.int64)),
    lambda L, x: L.scatter_add(x, 1, _ints(L, 2, 3, (2, 2, 4, 5)), x[:, :2] * 2),
    lambda L, x: x.scatter_add(3, L.tensor([[[[0, 0, 4]]]]), x[:1, :1, :1, :3]),
    lambda L, x: x.masked_fill(x > 30, -1.0),
    lambda L, x: x.masked_fill(L.tensor([True, False, False, True, False]), 2),
    lambda L, x: L.masked_fill(x, L.tensor(True), L.tensor(0.5)),
    lambda L, x: (x * 1).masked_fill_(x[0, 0] > 7, 3.0),
    lambda L, x: (x * 1).index_put_((L.tensor([0, 1, 0]), L.tensor([2, 2, 2])),
                                    L.tensor(5).to(x.dtype), accumulate=True),
    lambda L, x: (x * 1).index_put_((L.tensor([1, 0]),), x[:, :1] * 3),
    lambda L, x: x.index_put((L.tensor([0, 0]), L.tensor([1, 1])),
                             L.ones(4, 5, dtype=x.dtype), accumulate=True),
    lambda L, x: x.index_put((L.tensor([[True, False, True], [False] * 3]),),
                             L.tensor(2).to(x.dtype)),
    lambda L, x: (x * 1).masked_fill_(x[0, 0] > 7, 3.0).index_put_(
        (L.tensor([1]), L.tensor([0, 2])), x[0, :2] * 2),
    lambda L, x: x.index_select(0, L.tensor(1)),
    lambda L, x: x.gather(1, L.zeros(2, 5, 4, 5, dtype=L.int32)),
    lambda L, x: x.scatter_add(0, L.ones(1, 3, 4, 1, dtype=L.int32), x[1:, :, :, 2:3]),
]


@pytest.mark.parametrize("k", range(len(OPS)))
def test_index_ops(k):
    check(OPS[k], X)


@pytest.mark.parametrize("k", range(len(OPS)))
def test_index_ops_int_and_bool_values(k):
    check(OPS[k], X.astype(np.int64), grad=False)


def test_index_put_values_grad():
    def f(L, x, v):
        y = x * 1
        y.index_put_((L.tensor([0, 1, 1]), L.tensor([2, 0, 0])), v, accumulate=True)
        z = x * 1
        z.index_put_((L.tensor([1, 0]),), v[:2, None, :] * 2)
        return y, z
    check(f, X, np.random.default_rng(0).standard_normal((3, 4, 5)))


BAD_OPS = [
    lambda L, x: x.index_select(0, L.tensor([2])),
    lambda L, x: x.index_select(0, L.tensor([0.0])),
    lambda L, x: x.index_select(4, L.tensor([0])),
    lambda L, x: x.index_select(0, L.tensor([[0]])),
    lambda L, x: x.gather(0, L.tensor([[[[2]]]])),
    lambda L, x: x.gather(0, L.tensor([0])),
    lambda L, x: x.gather(0, L.zeros(1, 1, 1, 1, dtype=L.int16)),
    lambda L, x: x.gather(1, L.zeros(3, 1, 1, 1, dtype=L.int64)),
    lambda L, x: x.scatter_add(0, L.zeros(1, 1, 1, 1, dtype=L.int64), L.ones(1)),
    lambda L, x: x.masked_fill(x, 1.0),
    lambda L, x: x.masked_fill(L.ones(3, dtype=L.bool), 1.0),
    lambda L, x: x.masked_fill(x > 1, L.ones(2)),
    lambda L, x: x.index_put_((L.tensor([5]),), L.tensor(1.0, dtype=L.float64)),
    lambda L, x: x.index_put_((L.tensor([0, 1]),), L.ones(2, 4, 5, dtype=L.float64)),
    lambda L, x: x.index_put_((L.tensor([0, 1]),), L.ones(3, 4, 5)),
    lambda L, x: x.index_select(0, L.tensor([-1])),
    lambda L, x: x.gather(1, -L.ones(1, 1, 1, 1, dtype=L.int64)),
    lambda L, x: x.gather(1, L.zeros(1, 1, 5, 1, dtype=L.int64)),
    lambda L, x: x.scatter_add(1, L.tensor([[[[3]]]]), x),
    lambda L, x: x.scatter_add(1, L.zeros(1, 2, 1, 1, dtype=L.int64), x[:, :1]),
    lambda L, x: x.scatter_add(1, L.zeros(1, 1, 1, dtype=L.int64), x),
    lambda L, x: x.masked_fill_(L.ones(2, 2, 3, 4, 5, dtype=L.bool), 1.0),
    lambda L, x: x.masked_fill(L.ones(3, 4, 5, dtype=L.uint8), 1.0),
    lambda L, x: x.masked_fill(x > 1, L.ones(2)),
]


@pytest.mark.parametrize("k", range(len(BAD_OPS)))
def test_bad_index_ops(k):
    check_raises(BAD_OPS[k], X)


# ---- autograd through assignment into a view (PyTorch's CopySlices) -----------------------
def _assign_into_clone(L, x, w):
    y = x.clone()
    y[0] = w * 2
    y[1, :, 1:3] += w[:, :2]
    return y


def test_setitem_autograd_copy_slices():
    """Writing into a view of a tensor with history rebases the base's history (CopySlices)."""
    check(_assign_into_clone, X[:2, :, :, 0], X[0, :, :, 0] + 0.5)

    def through_mask_and_index(L, x, w):
        y = x * 1
        y[y > 30] = w[0, 0]
        y[:, L.tensor([0, 2])] *= w[:2, :1]
        v = y[1]
        v.add_(w)
        return y, v
    check(through_mask_and_index, X[:2, :, :, 0], X[0, :, :, 0] + 0.5)


def test_setitem_autograd_on_whole_tensor():
    def f(L, x, w):
        y = x.clone()
        y.mul_(w)
        y.masked_fill_(x > 5, 0.0)
        y.index_put_((L.tensor([0, 2]),), w * 3, accumulate=True)
        return y
    check(f, np.arange(12.0).reshape(4, 3), np.ones(3) * 1.5)


def test_setitem_on_leaf_requiring_grad_raises():
    def f(L, x):
        x.requires_grad_()
        x[0] = 1.0
    check_raises(f, X)


# ---- scatter, index_add, index_fill, masked_select ---------------------------------------
SCATTERS = [
    lambda L, x: x.scatter(1, _ints(L, 3, 3, (2, 2, 4, 5)), x[:, :2] * 3),
    lambda L, x: L.scatter(x, -1, L.tensor([[[[4, 0]]]]), 7.5),
    lambda L, x: x.scatter(0, L.zeros(1, 3, 4, 5, dtype=L.int64), value=-1.0),
    lambda L, x: (x * 1).scatter_(2, L.tensor([[[[3], [0]]]]), x[:1, :1, :2, :1] * 2),
    lambda L, x: (x * 1).scatter_(2, L.tensor([[[[3], [0]]]]), 0.5),
    lambda L, x: (x * 1).scatter_add_(1, _ints(L, 4, 3, (2, 3, 4, 5)), x * x),
    lambda L, x: x.index_add(1, L.tensor([0, 2, 0]), x[:, :3] * 2),
    lambda L, x: L.index_add(x, 3, L.tensor([4, 4], dtype=L.int32), x[..., :2], alpha=-0.5),
    lambda L, x: (x * 1).index_add_(0, L.tensor([1]), x[:1] + 1),
    lambda L, x: x.index_add(2, L.tensor(1), x[:, :, 1:2]),
    lambda L, x: x.index_fill(1, L.tensor([0, 2]), -2.0),
    lambda L, x: L.index_fill(x, -1, L.tensor([-1]), 3),
    lambda L, x: (x * 1).index_fill_(0, L.tensor(1), 0.25),
    lambda L, x: x.masked_select(x > 60),
    lambda L, x: L.masked_select(x, L.tensor([True, False, True, False, True])),
    lambda L, x: x[0].masked_select(L.ones(2, 3, 4, 1, dtype=L.bool)),
    lambda L, x: x.transpose(0, 3).index_fill(0, L.tensor([1]), 0.0).stride(),
    lambda L, x: x.transpose(0, 3).index_put((L.tensor([1]),), x[0, 0, 0, 0]).stride(),
    lambda L, x: x.transpose(0, 3).scatter(0, L.zeros(1, 1, 1, 1, dtype=L.int64), 0.0).stride(),
    lambda L, x: x.transpose(0, 3).index_add(0, L.tensor([0]), x[..., :1].transpose(0, 3)).stride(),
]


@pytest.mark.parametrize("k", range(len(SCATTERS)))
def test_scatter_family(k):
    check(SCATTERS[k], X)


BAD_SCATTERS = [
    lambda L, x: x.scatter(0, L.tensor([[[[2]]]]), 1.0),
    lambda L, x: x.scatter(0, L.tensor([[[[-1]]]]), 1.0),
    lambda L, x: x.scatter(0, L.zeros(1, 1, 1, 1, dtype=L.int64), L.ones(1)),
    lambda L, x: x.index_add(0, L.tensor([0, 2]), x),
    lambda L, x: x.index_add(0, L.tensor([0]), x),
    lambda L, x: x.index_add(0, L.tensor([0, 1]), x[:, :2]),
    lambda L, x: x.index_add(0, L.tensor([0.0, 1.0]), x),
    lambda L, x: x.index_fill(1, L.tensor([3]), 1.0),
    lambda L, x: x.index_fill(1, L.tensor([1], dtype=L.int32), 1.0),
    lambda L, x: x.masked_select(L.tensor([1, 0, 1, 0, 1])),
    lambda L, x: x.masked_select(L.ones(3, dtype=L.bool)),
    lambda L, x: x.index_add(0, L.tensor([0]), x[:1].float()),
]


@pytest.mark.parametrize("k", range(len(BAD_SCATTERS)))
def test_bad_scatter_family(k):
    check_raises(BAD_SCATTERS[k], X)


@pytest.mark.parametrize("key", [(0, 5), (5,), (slice(None), 7), 5, -3, (None, 0, 9), (..., 9),
                                 (0, ..., 7), (True, 1, 5), (None, None, 1, None, 6)],
                         ids=repr)
def test_integer_index_out_of_bounds_message(key):
    """PyTorch names the key position as the dimension; ember's message is the same."""
    messages = []
    for lib in (torch, ember):
        with pytest.raises(IndexError) as info:
            lib.ones(2, 3, 4)[key]
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_index_of_a_0_dim_tensor_message():
    messages = []
    for lib in (torch, ember):
        with pytest.raises(IndexError) as info:
            lib.tensor(1.0)[0]
        messages.append(str(info.value))
    assert messages[0] == messages[1]
