"""Adding two sparse COO tensors against torch (Note [Adding two sparse tensors]): the merge
walk over uncoalesced entries in stored order, the coalesced flag, operands without entries,
hybrid and mixed-dtype operands, non-contiguous values, in-place add_, and the errors."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse invariant checks")


def _sp(T, i, v, size, c=None):
    return T.sparse_coo_tensor(T.tensor(i), T.tensor(v), size, is_coalesced=c)


def _operands(T):
    a = _sp(T, [[3, 1, 3]], [1., 2., 3.], (5,))
    b = _sp(T, [[1, 3, 0]], [10., 20., 30.], (5,))
    empty = T.sparse_coo_tensor(T.zeros(1, 0, dtype=T.long), T.zeros(0), (5,))
    empty_u = T.sparse_coo_tensor(T.zeros(1, 0, dtype=T.long), T.zeros(0), (5,),
                                  is_coalesced=False)
    m1 = _sp(T, [[1, 0, 1], [0, 2, 0]], [1., 2., 3.], (3, 3))
    m2 = _sp(T, [[0, 1], [2, 0]], [5., 6.], (3, 3))
    h1 = T.sparse_coo_tensor(T.tensor([[2, 0]]), T.tensor([[1., 2.], [3., 4.]]), (3, 2))
    h2 = T.sparse_coo_tensor(T.tensor([[0, 2]]), T.ones(2, 2), (3, 2))
    ints = _sp(T, [[1]], [2], (5,))
    strided = T.sparse_coo_tensor(T.tensor([[2, 0]]), T.arange(6.).reshape(3, 2).t(), (3, 3))
    ones = T.sparse_coo_tensor(T.tensor([[0, 2]]), T.ones(2, 3), (3, 3))
    small = _sp(T, [[0, 1]], [1., 1.], (2,))
    small_strided = T.sparse_coo_tensor(T.tensor([[1, 0]]), T.arange(4.).reshape(2, 2).t()[0],
                                        (2,))
    return {
        "uncoalesced": (a, b, 1), "uncoalesced swapped": (b, a, 1), "same entries": (a, a, 1),
        "coalesced + uncoalesced": (a.coalesce(), b, 1),
        "coalesced": (a.coalesce(), b.coalesce(), 1), "alpha": (a, b, 2),
        "empty + uncoalesced": (empty, a, 1), "uncoalesced + empty": (a, empty, 1),
        "empty uncoalesced + coalesced": (empty_u, a.coalesce(), 1),
        "coalesced + empty uncoalesced": (a.coalesce(), empty_u, 1),
        "empty + empty": (empty, empty, 1), "uncoalesced empties": (empty_u, empty_u, 1),
        "empty + alpha": (empty, a, 3), "2 sparse dims": (m1, m2, 1),
        "2 sparse dims coalesced": (m1.coalesce(), m2.coalesce(), 1), "hybrid": (h1, h2, 1),
        "float + int": (a, ints, 1), "int + float": (ints, a, 1),
        "strided values": (strided, ones, 1), "strided values second": (ones, strided, 2),
        "strided, more entries than elements": (small, small_strided, 1),
        "strided twice": (small_strided, small_strided, 1),
    }


def _describe(r):
    return (str(r.dtype), r.is_coalesced(), r._nnz(), r._indices().tolist(),
            r._values().tolist(), tuple(r.shape))


@pytest.mark.parametrize("case", list(_operands(torch)))
def test_sparse_add_equals_torch(case):
    results = []
    for T in (ember, torch):
        x, y, alpha = _operands(T)[case]
        results.append(_describe(T.add(x, y, alpha=alpha)))
    assert results[0] == results[1]


def test_sparse_add_in_place_equals_torch():
    results = []
    for T in (ember, torch):
        ops = _operands(T)
        x = ops["uncoalesced"][0].clone()
        version = x._version
        assert x.add_(ops["uncoalesced"][1]) is x
        dense = T.zeros(5)
        dense.add_(ops["uncoalesced"][0], alpha=2)
        results.append((_describe(x), x._version > version, dense.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("fn", [
    lambda T: _operands(T)["uncoalesced"][0] + _sp(T, [[0]], [1.], (6,)),
    lambda T: _sp(T, [[0], [0]], [1.], (5, 1)) + T.sparse_coo_tensor(T.tensor([[0]]),
                                                                    T.ones(1, 1), (5, 1)),
    lambda T: _sp(T, [[1]], [True], (3,)) + _sp(T, [[0]], [True], (3,)),
    lambda T: _sp(T, [[1]], [2], (5,)).add_(_operands(T)["uncoalesced"][0]),
    lambda T: T.zeros(2, 3) + _sp(T, [[0]], [1.], (3,)),
    lambda T: T.zeros(4).add_(_sp(T, [[0]], [1.], (3,))),
    lambda T: T.zeros(3, dtype=T.long).add_(_sp(T, [[0]], [1.], (3,))),
], ids=["sizes", "density", "bool", "in-place cast", "dense sizes", "dense in-place sizes",
        "dense in-place cast"])
def test_sparse_add_errors_equal_torch(fn):
    messages = []
    for T in (ember, torch):
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            fn(T)
        messages.append((info.type.__name__, str(info.value).split("\n")[0]))
    assert messages[0] == messages[1]


def _m(T):
    return T.sparse_coo_tensor(T.tensor([[0, 1, 1], [2, 0, 2]]), T.tensor([1., 2., 3.]), (2, 3))


@pytest.mark.parametrize("fn", [
    lambda T: _m(T).mul_(2), lambda T: _m(T).div_(2), lambda T: _m(T).neg_(),
    lambda T: _m(T).t_(), lambda T: _m(T).mul_(_m(T)), lambda T: _m(T) * _m(T),
    lambda T: _m(T).coalesce() * _m(T).coalesce(),
    lambda T: T.ones(2, 2).addmm_(_m(T), T.ones(3, 2)),
], ids=["mul_", "div_", "neg_", "t_", "mul_ sparse", "mul", "mul coalesced", "addmm_ dense"])
def test_sparse_in_place_ops_equal_torch(fn):
    results = []
    for T in (ember, torch):
        r = fn(T)
        results.append((str(r.layout), tuple(r.shape), r.to_dense().tolist() if r.is_sparse
                        else r.tolist(), r.is_coalesced() if r.is_sparse else None))
    assert results[0] == results[1]
