"""Fixes found by running PyTorch's test/test_foreach.py on ember (torch._foreach_* ops), each
checked against PyTorch on the same inputs."""
import numpy as np
import pytest

import ember
from _torch_oracle import assert_same, check, same_error

torch = pytest.importorskip("torch")

_A = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
_B = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)
_C = np.linspace(0.5, 3, 6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("name", ["_foreach_addcmul", "_foreach_addcdiv"])
@pytest.mark.parametrize("scalars, grad", [  # (PyTorch has no derivative for the Tensor one)
    (lambda L: [2.0, -0.5], True), (lambda L: L.tensor([2.0, -0.5]), False),
    (lambda L: L.tensor([3, 1]), False)])
def test_pointwise_scalars_keyword_and_tensor_overload(name, scalars, grad):
    def fn(L, a, b, c, a2, b2, c2):
        return getattr(L, name)([a, a2], [b, b2], [c, c2], scalars=scalars(L))
    check(fn, _A, _B, _C, _A.T.copy(), _B.T.copy(), _C.T.copy(), grad=grad)

    def fn_(L, a, b, c, a2, b2, c2):
        xs = [a.clone(), a2.clone()]
        getattr(L, name + "_")(xs, [b, b2], [c, c2], scalars(L))
        return xs
    check(fn_, _A, _B, _C, _A.T.copy(), _B.T.copy(), _C.T.copy(), grad=grad)


@pytest.mark.parametrize("scalars", [
    lambda L: L.tensor(1.0),                          # 0-dim
    lambda L: L.tensor([1.0, 2.0, 3.0]),              # wrong length
    lambda L: L.tensor([[0, 1], [2, 3]])[:, 1],       # not contiguous
    lambda L: L.tensor([[0, 1, 2], [2, 3, 4]])[:, 1]])  # not contiguous, wrong length
def test_pointwise_packed_scalars_errors(scalars):
    def fn(L):
        x = [L.ones(2), L.ones(2)]
        return L._foreach_addcmul(x, x, x, scalars(L))
    same_error(fn)


@pytest.mark.parametrize("value", [1 + 1j, 3 + 0j])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_addcmul_complex_value_on_real_tensors(value, dtype):
    # c10's checked conversion refuses to drop an imaginary part (RuntimeError, not TypeError)
    def fn(L):
        x = L.ones(2, dtype=getattr(L, dtype))
        return L.addcmul(x, x, x, value=value), L._foreach_addcmul([x], [x], [x], [value])
    same_error(fn) if value.imag else assert_same(fn(ember), fn(torch))


@pytest.mark.parametrize("name", ["_foreach_maximum_", "_foreach_minimum_"])
def test_extremum_inplace_refuses_a_result_it_cannot_hold(name):
    same_error(lambda L: getattr(L, name)([L.ones(3)], [L.ones(3, dtype=L.complex64)]))
    same_error(lambda L: getattr(L, name)([L.ones(3, dtype=L.int64)], [L.ones(3)]))


@pytest.mark.parametrize("name", ["_foreach_maximum_", "_foreach_minimum_"])
def test_extremum_inplace_values_and_version(name):
    def fn(L):
        xs = [L.tensor([1.0, 5.0, -2.0]), L.tensor([0.0, 3.0])]
        versions = [t._version for t in xs]
        out = getattr(L, name)(xs, [L.tensor([2.0, 2.0, 2.0]), L.tensor([1.0, 1.0])])
        return xs, out is xs, [t._version > v for t, v in zip(xs, versions)]
    assert_same(fn(ember), fn(torch))


def test_empty_list_operand_reads_as_scalar_list():
    same_error(lambda L: L._foreach_add([L.ones(1)], []))
    same_error(lambda L: L._foreach_mul_([L.ones(1)], []))
    same_error(lambda L: L._foreach_add([L.ones(1)], [L.ones(1), L.ones(1)]))


@pytest.mark.parametrize("name", ["add", "sub", "div_", "pow", "pow_", "clamp_max", "clamp_min_",
                                  "maximum", "minimum_"])
@pytest.mark.parametrize("dtype", ["complex64", "int8", "bool"])
def test_list_size_mismatch_is_reported_first(name, dtype):
    def fn(L):
        dt = getattr(L, dtype)
        return getattr(L, "_foreach_" + name)([L.zeros(10, 10, dtype=dt)],
                                              [L.ones(11, 11, dtype=dt)])
    same_error(fn)


@pytest.mark.parametrize("dtype", ["int8", "int64", "bool", "float32"])
def test_randn_of_no_elements_any_dtype(dtype):
    def fn(L):
        t = L.randn([0], dtype=getattr(L, dtype))
        return t, L._foreach_add([t], 1)
    assert_same(fn(ember), fn(torch))
    same_error(lambda L: L.randn(2, dtype=L.int8))
    same_error(lambda L: L.empty(0, dtype=L.int8).normal_(0, -1))


@pytest.mark.parametrize("name", ["_foreach_add", "_foreach_mul_", "_foreach_div"])
@pytest.mark.parametrize("other", [lambda L: L.tensor([2.0, 3.0]), lambda L: L.tensor([[2.0]])])
def test_tensor_overload_wants_a_0dim_tensor(name, other):
    same_error(lambda L: getattr(L, name)([L.ones(2)], other(L)))


def test_tensor_overload_0dim_values():
    def fn(L, a, b):
        return L._foreach_add([a, b], L.tensor(2.0), alpha=3), L._foreach_mul([a, b], L.tensor(-1.5))
    check(fn, _A, _B)


def test_foreach_max_of_an_empty_tensor():
    same_error(lambda L: L._foreach_max([L.ones(2), L.ones(0)]))
    assert_same(ember._foreach_max([ember.tensor([1.0, 4.0])]),
                torch._foreach_max([torch.tensor([1.0, 4.0])]))


@pytest.mark.parametrize("fn", [
    lambda L: L.clamp_min(L.ones(3), 1 + 1j), lambda L: L.ones(3).clamp_max_(2 + 0j),
    lambda L: L.clamp(L.ones(3), 1 + 1j), lambda L: L.clamp(L.ones(3), max=2 + 1j),
    lambda L: L.clamp_max(L.ones(3, dtype=L.int32), 1 + 0j),
    lambda L: L._foreach_maximum([L.ones(3)], 1 + 1j), lambda L: L._foreach_minimum_([L.ones(3)], [2 + 1j]),
    lambda L: L._foreach_clamp_min([L.ones(3)], [1 + 0j])])
def test_clamp_refuses_complex_number_bounds(fn):
    same_error(fn)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_lerp_refuses_a_complex_weight_on_real_tensors(dtype):
    def fn(L):
        x = L.ones(3, dtype=getattr(L, dtype))
        return L.lerp(x, x, 1 + 1j)
    same_error(fn)
    same_error(lambda L: L._foreach_lerp([L.ones(3, dtype=L.float64)], [L.ones(3, dtype=L.float64)], [0.5 + 1j]))
    assert_same(ember.lerp(ember.ones(2), ember.zeros(2), 0.25 + 0j), torch.lerp(torch.ones(2), torch.zeros(2), 0.25 + 0j))
