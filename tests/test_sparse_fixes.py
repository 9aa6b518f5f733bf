"""Sparse COO behaviour found by running PyTorch's test_sparse.py on ember, each compared with
torch on the same inputs: constructors and their invariant checks, elementwise functions of the
values, shape ops on entries, broadcasting products, copies and legacy constructors."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

I = [[0, 0, 1, 1, 2, 0], [0, 1, 0, 1, 1, 0]]
V = [1.5, -2.0, 3.0, 0.25, -0.5, 0.75]


def both(fn):
    """fn(lib) with ember and with torch."""
    return fn(ember), fn(torch)


def same_sparse(e, t):
    assert e.layout == ember.sparse_coo and t.layout == torch.sparse_coo
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    assert e.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_allclose(e._values().numpy(), t._values().numpy())


def same_dense(e, t):
    e, t = (x.to_dense() if x.is_sparse else x for x in (e, t))
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy())


def same_error(fn):
    """fn raises the same exception type and message under ember and torch."""
    errors = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append(info.value)
    assert type(errors[0]).__name__ == type(errors[1]).__name__, errors
    assert str(errors[0]).split("\n")[0] == str(errors[1]).split("\n")[0], errors


def uncoalesced(lib, dtype=None):
    return lib.sparse_coo_tensor(I, V, (3, 2), dtype=dtype or lib.float64)


@pytest.fixture(autouse=True)
def checks_on():
    for lib in (ember, torch):
        lib.sparse.check_sparse_tensor_invariants.enable()
    yield


def test_constructor_forms():
    same_sparse(*both(lambda lib: lib.sparse_coo_tensor((2, 3), dtype=lib.float64)))
    same_sparse(*both(lambda lib: lib.sparse_coo_tensor(size=(2, 0, 3))))
    same_sparse(*both(lambda lib: lib.sparse_coo_tensor(([0], [2]), 1.0)))
    same_sparse(*both(lambda lib: lib.sparse_coo_tensor(lib.zeros(0, 1), 12.3, [])))


def test_invariant_checks_switch():
    def invalid(lib, **kw):
        return lib.sparse_coo_tensor([[0], [3]], [1], (2, 2), **kw)
    for lib in (ember, torch):
        with lib.sparse.check_sparse_tensor_invariants(False):
            assert invalid(lib).layout == lib.sparse_coo
            assert invalid(lib, check_invariants=False).layout == lib.sparse_coo
            assert not lib.sparse.check_sparse_tensor_invariants.is_enabled()
        assert lib.sparse.check_sparse_tensor_invariants.is_enabled()
    same_error(lambda lib: invalid(lib, check_invariants=True))
    same_error(lambda lib: lib.sparse_coo_tensor([[0, 0]], [1., 2.], (2,), is_coalesced=True,
                                                 check_invariants=True))

    def reuse(lib):
        ctx = lib.sparse.check_sparse_tensor_invariants(True)
        with ctx:
            with ctx:
                pass
    same_error(reuse)
    for lib in (ember, torch):
        @lib.sparse.check_sparse_tensor_invariants(enable=False)
        def decorated():
            return lib.sparse.check_sparse_tensor_invariants.is_enabled()
        assert decorated() is False
        lib._validate_sparse_coo_tensor_args(lib.tensor(I), lib.tensor(V), (3, 2))


@pytest.mark.parametrize("name", ["asin", "log1p", "sqrt", "sign", "isnan", "frac", "round"])
def test_elementwise_on_coalesced_values(name):
    same_sparse(*both(lambda lib: getattr(uncoalesced(lib).abs(), name)()))
    same_error(lambda lib: getattr(uncoalesced(lib), "log1p_")())


def test_elementwise_in_place_and_out():
    same_sparse(*both(lambda lib: uncoalesced(lib).coalesce().asin_()))
    same_error(lambda lib: uncoalesced(lib, lib.int64).coalesce().log1p_())

    def out(lib):
        x = uncoalesced(lib)
        o = lib.sparse_coo_tensor(x.shape, dtype=x.dtype)
        lib.asin(x / 4, out=o)
        return o
    same_sparse(*both(out))


def test_shape_ops():
    same_sparse(*both(lambda lib: uncoalesced(lib).select(0, 1)))
    same_dense(*both(lambda lib: uncoalesced(lib).coalesce()[0, 1]))
    same_dense(*both(lambda lib: lib.sparse_coo_tensor([[0, 1, 1]], [1, 2, 3], (3,))[1]))
    same_sparse(*both(lambda lib: uncoalesced(lib).coalesce().index_select(
        0, lib.tensor([2, 0, 2]))))
    same_dense(*both(lambda lib: uncoalesced(lib).index_select(1, lib.tensor([-1, 0]))))
    same_sparse(*both(lambda lib: uncoalesced(lib).unsqueeze(1)))
    same_sparse(*both(lambda lib: uncoalesced(lib).coalesce().permute(1, 0)))
    same_sparse(*both(lambda lib: uncoalesced(lib).coalesce().permute(0, 1)))
    same_sparse(*both(lambda lib: uncoalesced(lib).narrow_copy(0, 1, 2)))
    same_error(lambda lib: uncoalesced(lib).narrow_copy(-1, 0, 1))
    same_error(lambda lib: uncoalesced(lib).narrow_copy(0, 2, 3))
    same_error(lambda lib: uncoalesced(lib).permute(0, 0))
    hybrid = lambda lib: lib.sparse_coo_tensor([[0, 2]], [[1., 2.], [3., 4.]], (3, 2))  # noqa
    same_error(lambda lib: hybrid(lib).permute(1, 0))
    same_sparse(*both(lambda lib: lib._sparse_broadcast_to(hybrid(lib).unsqueeze(1),
                                                           (2, 3, 4, 2))))


def test_products_broadcast():
    dense = np.arange(12.).reshape(2, 3, 2)
    same_dense(*both(lambda lib: uncoalesced(lib) * lib.tensor(dense)))
    same_dense(*both(lambda lib: lib.tensor(dense[0, :, :1]) * uncoalesced(lib)))
    scalar = lambda lib: lib.sparse_coo_tensor(lib.zeros(0, 4, dtype=lib.long),  # noqa
                                               lib.tensor([1., 2, 3, 4]), ())
    for fn in (lambda lib: scalar(lib) * lib.tensor(2.).to_sparse(),
               lambda lib: lib.tensor(2.).to_sparse() * scalar(lib)):
        same_sparse(*both(fn))
    same_sparse(*both(lambda lib: uncoalesced(lib) // 2))
    same_error(lambda lib: lib.tensor(1.).to_sparse() / lib.tensor(1.).to_sparse())
    same_error(lambda lib: lib.tensor(1.).to_sparse() // lib.tensor(1.).to_sparse())
    same_error(lambda lib: uncoalesced(lib).matmul(lib.ones(3, dtype=lib.float64)))
    same_error(lambda lib: uncoalesced(lib).mv(uncoalesced(lib)))
    same_dense(*both(lambda lib: lib.any(uncoalesced(lib))))


def test_copies_and_legacy_constructors():
    def copy(lib):
        x = lib.sparse_coo_tensor([[0], [0]], [1.], (3, 2), dtype=lib.float32)
        return x.copy_(uncoalesced(lib))
    same_sparse(*both(copy))
    same_error(lambda lib: uncoalesced(lib).copy_(lib.randn(3, 2)))
    same_error(lambda lib: lib.zeros(3, 2).copy_(uncoalesced(lib)))
    s = both(uncoalesced)
    same_sparse(ember.Tensor.new(s[0], s[0]._indices(), s[0]._values()),
                torch.Tensor.new(s[1], s[1]._indices(), s[1]._values()))
    same_sparse(s[0].new(ember.Size([2, 3])), s[1].new(torch.Size([2, 3])))
    same_sparse(s[0].new_empty((2, 3)), s[1].new_empty((2, 3)))
    same_error(lambda lib: uncoalesced(lib).new([6]))

    def zeros_out(lib):
        out = uncoalesced(lib)
        return lib.zeros((4, 5), out=out)
    same_sparse(*both(zeros_out))


def test_harness_pieces():
    from ember.testing._internal.common_utils import TestCase, is_coalesced_indices

    class Case(TestCase):
        def runTest(self):
            pass
    case = Case()
    coo = list(case.generate_simple_inputs(ember.sparse_coo, dtype=ember.float64))
    strided = list(case.generate_simple_inputs(ember.strided, dtype=ember.float64))
    assert len(coo) == len(strided) > 10
    for s, d in zip(coo, strided):
        np.testing.assert_array_equal(s.to_dense().numpy(), d.numpy())
    assert is_coalesced_indices(uncoalesced(ember).coalesce())
    assert not is_coalesced_indices(uncoalesced(ember))
    np.testing.assert_array_equal(case.safeToDense(uncoalesced(ember)).numpy(),
                                  uncoalesced(torch).to_dense().numpy())
