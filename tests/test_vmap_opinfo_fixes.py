"""vmap behaviours found by running PyTorch's test/functorch/test_vmap.py OpInfo class
(test_vmap_exhaustive) on ember: ops whose ember decomposition reads a tensor's data run per
example under vmap, as PyTorch's fallback does; diag of a 1-D input batches. Each test runs the
same call in ember and torch and compares values or the exception."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")
from _torch_oracle import assert_same, make, same_error  # noqa: E402

R = np.random.default_rng(0)


def _both(fn, *arrays, in_dims=0, atol=1e-5):
    outs = []
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(lib.vmap(fn(lib), in_dims=in_dims)(*[make(lib, a) for a in arrays]))
    assert_same(*outs, atol=atol)


@pytest.mark.parametrize("in_dims", [0, 1])
def test_diag_of_batched_vector(in_dims):
    _both(lambda lib: lambda x: lib.diag(x, 1), R.standard_normal((3, 4)).astype("float32"),
          in_dims=in_dims)


def test_diag_into_unbatched_vector_nested():
    x = R.standard_normal((2, 3, 4)).astype("float32")
    _both(lambda lib: lib.vmap(lambda v: lib.diag(v, -2)), x)


def _spd(n, b):
    a = R.standard_normal((b, n, n))
    return (a @ a.transpose(0, 2, 1) + n * np.eye(n)).astype("float32")


def test_cholesky_inverse_reads_data_runs_per_example():
    L = np.linalg.cholesky(_spd(3, 2).astype("float64")).astype("float32")
    _both(lambda lib: lib.cholesky_inverse, L, atol=1e-4)


def test_quantile_and_lu_unpack():
    x = R.standard_normal((2, 5)).astype("float32")
    q = np.array([0.25, 0.5], dtype="float32")
    _both(lambda lib: lambda t, qq: lib.quantile(t, qq), x, q, in_dims=(0, None))
    a = R.standard_normal((2, 3, 3)).astype("float32")
    _both(lambda lib: lambda m: lib.lu_unpack(*lib.linalg.lu_factor(m)), a, atol=1e-4)


def test_multi_margin_loss_batched_target():
    x = R.standard_normal((2, 3, 4)).astype("float32")
    tgt = np.array([[0, 3, 1], [2, 2, 0]])
    _both(lambda lib: lib.nn.functional.multi_margin_loss, x, tgt)


def test_data_read_by_the_function_itself_still_raises():
    x = R.standard_normal((2, 3)).astype("float32")
    same_error(lambda lib: lib.vmap(lambda t: t.sum().item())(make(lib, x)))
    same_error(lambda lib: lib.vmap(lambda t: t if t.sum() > 0 else -t)(make(lib, x)))
    # a function taking a function is not run per example: the read still raises
    same_error(lambda lib: lib.vmap(lambda t: lib.vmap(lambda u: u * (1 if u.sum() > 0 else 2))(t))(
        make(lib, R.standard_normal((2, 3, 4)).astype("float32"))))


def test_unfold_of_zero_dim_examples():
    _both(lambda lib: lambda t: t.unfold(0, 1, 1), R.standard_normal(3).astype("float32"))


def test_isin_batched_elements_and_test_elements():
    x = R.integers(0, 5, (2, 4))
    y = R.integers(0, 5, (2, 3))
    _both(lambda lib: lib.isin, x, y)
    _both(lambda lib: lib.isin, x, y[0], in_dims=(0, None))


def test_unbind_and_select_of_zero_dim_examples_raise():
    x = R.standard_normal(3).astype("float32")
    for fn in (lambda lib, t: lib.unbind(t, 0), lambda lib, t: t.select(0, 0)):
        for lib in (ember, torch):
            with warnings.catch_warnings(), pytest.raises(IndexError):
                warnings.simplefilter("ignore")
                lib.vmap(lambda t, lib=lib: fn(lib, t))(make(lib, x))
