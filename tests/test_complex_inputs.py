"""Complex inputs to ops PyTorch computes for real dtypes only: the same exception type and
message as torch (ember/_aten/real_only.py and the ops' own checks), and the values where
torch does compute them (F.normalize, logdet)."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")

_X = np.array([[1 + 2j, -3 + 0.5j, 2 - 1j], [0.5 + 0j, 4 - 4j, -1 + 1j]], dtype=np.complex64)
_F = lambda m: m.nn.functional  # noqa: E731
_IDX = lambda m: m.zeros(2, 3, dtype=m.long)  # noqa: E731

CASES = {
    "div_floor": lambda m, a: m.div(a, 2, rounding_mode="floor"),
    "div_trunc": lambda m, a: m.div(a, a, rounding_mode="trunc"),
    "unique_consecutive": lambda m, a: m.unique_consecutive(a),
    "hardsigmoid": lambda m, a: _F(m).hardsigmoid(a),
    "hardswish": lambda m, a: _F(m).hardswish(a),
    "mish": lambda m, a: _F(m).mish(a),
    "prelu": lambda m, a: _F(m).prelu(a, m.ones(1, dtype=a.dtype)),
    "special_i1": lambda m, a: m.special.i1(a),
    "scatter_reduce_amax": lambda m, a: a.scatter_reduce(0, _IDX(m), a, "amax"),
    "scatter_reduce_amin": lambda m, a: a.scatter_reduce(0, _IDX(m), a, "amin",
                                                         include_self=False),
    "scatter_reduce_max": lambda m, a: a.scatter_reduce(0, _IDX(m), a, reduce="max"),
    "unique_dim": lambda m, a: m.unique(a, dim=0),
    "binomial": lambda m, a: m.binomial(a, a),
    "binomial_long": lambda m, a: m.binomial(a.real.long(), a.real.long()),
    "index_reduce_amax": lambda m, a: a.index_reduce(0, m.tensor([0, 1]), a, "amax"),
    "index_reduce_amin": lambda m, a: a.index_reduce(0, m.tensor([0, 1]), a, "amin"),
    "median_dim": lambda m, a: m.median(a, 1),
    "nanmedian_dim": lambda m, a: m.nanmedian(a, 1),
    "nanquantile": lambda m, a: m.nanquantile(a, 0.5),
    "bernoulli": lambda m, a: m.bernoulli(a),
    "bernoulli_p": lambda m, a: m.bernoulli(a, 0.5),
    "random_": lambda m, a: a.random_(),
    "random_to": lambda m, a: a.random_(5),
    "random_from_to": lambda m, a: a.random_(0, 5),
    "randint_like": lambda m, a: m.randint_like(a, 5),
    "log_normal_": lambda m, a: a.log_normal_(),
    "log_normal_long": lambda m, a: a.real.long().log_normal_(),
    "cauchy_": lambda m, a: a.cauchy_(),
    "cauchy_long": lambda m, a: a.real.long().cauchy_(),
    "kl_div": lambda m, a: _F(m).kl_div(a, a, reduction="sum"),
    "pdist": lambda m, a: _F(m).pdist(a),
    "arange": lambda m, a: m.arange(3, dtype=a.dtype),
    "arange_bool": lambda m, a: m.arange(0, 3, 1, dtype=m.bool),
    "range": lambda m, a: m.range(0, 3, dtype=a.dtype),
    "float": lambda m, a: float(a[0, 0]),
    "int": lambda m, a: int(a[1, 1]),
    # computed for complex input: scatter_reduce sums, index_reduce products, true division
    "scatter_reduce_sum": lambda m, a: a.scatter_reduce(0, _IDX(m), a, "sum"),
    "index_reduce_prod": lambda m, a: a.index_reduce(0, m.tensor([0, 1]), a, "prod"),
    "div": lambda m, a: m.div(a, a, rounding_mode=None),
    "normalize": lambda m, a: _F(m).normalize(a),
    "normalize_inf": lambda m, a: _F(m).normalize(a, float("inf"), 0),
    "logdet": lambda m, a: m.logdet(a[:, :2]),
    "float_of_real": lambda m, a: np.array(float(a[1, 0])),
    "int_of_real": lambda m, a: np.array(int(a[1, 0])),
}


def _outcome(m, case):
    a = m.from_numpy(_X.astype(np.complex128 if "logdet" in case else np.complex64))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CASES[case](m, a).numpy()
    except Exception as e:  # noqa: BLE001 -- the error is what is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_input_as_torch(case):
    got, want = _outcome(ember, case), _outcome(torch, case)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        assert got.dtype == want.dtype and np.allclose(got, want, atol=1e-6)
