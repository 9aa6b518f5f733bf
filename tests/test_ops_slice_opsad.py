"""Regressions from running PyTorch's test_ops.py (TestCommon) on op_db's ops a..d under ember:
each case runs the same expression in ember and in torch and compares values, dtypes, grads,
warnings and exceptions."""
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from _torch_oracle import assert_same, check, check_raises  # noqa: E402


def _ints(*shape, seed=0):
    return np.random.default_rng(seed).integers(-5, 5, shape)


@pytest.mark.parametrize("alpha,beta", [(1.7, 2.6), (-1.5, -0.5), (0.6, 0.2)])
def test_matrix_products_truncate_float_scalars_on_integer_tensors(alpha, beta):
    kw = dict(alpha=alpha, beta=beta)
    m, b1, b2 = _ints(3, 3), _ints(2, 3, 4, seed=1), _ints(2, 4, 3, seed=2)
    v, w = _ints(3, seed=3), _ints(3, seed=4)
    check(lambda lib, m, b1, b2: lib.addbmm(m, b1, b2, **kw), m, b1, b2)
    check(lambda lib, m, b1, b2: lib.baddbmm(m, b1, b2, **kw), _ints(2, 3, 3), b1, b2)
    check(lambda lib, m, b1, b2: lib.addmm(m, b1[0], b2[0], **kw), m, b1, b2)
    check(lambda lib, v, m, w: lib.addmv(v, m, w, **kw), v, m, w)


def test_cat_backward_with_legacy_empty_operand_along_dim_1():
    check(lambda lib, a, b: lib.cat([a, b], dim=1), np.zeros(0), np.random.rand(2, 3))
    check(lambda lib, a, b: lib.cat([b, a], dim=-1), np.zeros(0), np.random.rand(2, 3))


@pytest.mark.parametrize("fn", ["dsplit", "hsplit", "vsplit"])
def test_split_size_zero_is_indivisible(fn):
    check_raises(lambda lib, x: getattr(lib, fn)(x, 0), np.random.rand(5, 5, 5))
    with pytest.raises(RuntimeError, match="not divisible by the split_size 0"):
        getattr(ember, fn)(ember.rand(5, 5, 5), 0)


def _same_error(fn):
    """fn raises the same exception type with the same message in ember and torch."""
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(type(t_info.value), match=re.escape(str(t_info.value))):
        fn(ember)


@pytest.mark.parametrize("kwargs", [
    dict(aweights=[1, 1]),                 # dtype is checked before numel
    dict(fweights=[1.0, 1.0]),
    dict(fweights=[-1, -2, -3, -4, -5]),
    dict(aweights=[-1.0, 2.0, 3.0, 4.0, 5.0]),
    dict(fweights=[-1, -2]),               # numel is checked before the sign
])
def test_cov_weight_checks(kwargs):
    (name, w), = kwargs.items()
    _same_error(lambda lib: lib.cov(lib.arange(5.0), **{name: lib.tensor(w)}))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.cov(x), lambda lib, x: lib.corrcoef(x.reshape(2, 2)),
    lambda lib, x: lib.trapezoid(x), lambda lib, x: lib.cumulative_trapezoid(x, dx=3.0),
])
def test_bool_input_refused(fn):
    _same_error(lambda lib: fn(lib, lib.tensor([True, False, True, True])))


def _cat_into_own_input(lib):
    x = lib.zeros(0)
    return lib.cat((x, lib.ones(4, 6)), dim=0, out=x)


def test_cat_out_that_is_an_empty_input_is_refused():
    _same_error(_cat_into_own_input)


def _out_and_warnings(lib, fn, out):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = fn(lib, out)
    return r, [str(w.message)[:60] for w in caught]


@pytest.mark.parametrize("fn,shape", [
    (lambda lib, out: lib.diff(lib.arange(10.0).reshape(2, 5), out=out), (0,)),
    (lambda lib, out: lib.diff(lib.arange(10.0).reshape(2, 5), n=2, dim=1,
                               prepend=lib.ones(2, 1), out=out), (2, 4)),
    (lambda lib, out: lib.diff(lib.arange(10.0).reshape(2, 5), out=out), (3,)),
    # addbmm resizes out= like self, without the deprecation warning
    (lambda lib, out: lib.addbmm(lib.ones(3, 4), lib.ones(2, 3, 5), lib.ones(2, 5, 4),
                                 out=out), (3, 5)),
])
def test_out_values_and_resize_warnings(fn, shape):
    out_e, out_t = ember.zeros(shape), torch.zeros(shape)
    r_e, w_e = _out_and_warnings(ember, fn, out_e)
    r_t, w_t = _out_and_warnings(torch, fn, out_t)
    assert r_e is out_e and r_t is out_t
    assert_same(out_e, out_t)
    assert w_e == w_t


def test_diff_out_refuses_unsafe_cast():
    _same_error(lambda lib: lib.diff(lib.arange(5.0), out=lib.empty(4, dtype=lib.long)))


def test_bernoulli_records_a_zero_gradient():
    p_e = ember.rand(3, requires_grad=True)
    p_t = torch.tensor(p_e.detach().numpy(), requires_grad=True)
    r_e, r_t = ember.bernoulli(p_e), torch.bernoulli(p_t)
    assert type(r_e.grad_fn).__name__ == type(r_t.grad_fn).__name__ == "BernoulliBackward0"
    r_e.backward(ember.ones(3))
    r_t.backward(torch.ones(3))
    assert_same(p_e.grad, p_t.grad)
