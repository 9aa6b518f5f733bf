"""ember.quasirandom.SobolEngine against torch.quasirandom.SobolEngine: points bit for bit."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch 2.13 is the oracle for these tests")
pytest.importorskip("scipy", reason="SobolEngine reads its direction numbers from SciPy (ember[scipy])")

import ember  # noqa: E402


def engines(*args, **kwargs):
    return ember.quasirandom.SobolEngine(*args, **kwargs), torch.quasirandom.SobolEngine(*args, **kwargs)


def same(e, t):
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dimension", [1, 2, 5, 50, 1000])
def test_unscrambled_draws(dimension, monkeypatch):
    monkeypatch.setattr(ember.quasirandom, "_state_cache", np.zeros((0, 30), dtype=np.int64))
    e, t = engines(dimension)
    same(e.sobolstate, t.sobolstate)
    for n in (1, 7, 1, 64, 0):
        same(e.draw(n), t.draw(n))
    same(e.draw(9, dtype=ember.float64), t.draw(9, dtype=torch.float64))
    assert e.num_generated == t.num_generated


@pytest.mark.parametrize("dimension,seed", [(1, 0), (2, 1), (5, 123), (50, 2024), (300, 7)])
def test_scrambled_draws(dimension, seed):
    e, t = engines(dimension, scramble=True, seed=seed)
    same(e.shift, t.shift)
    same(e.sobolstate, t.sobolstate)
    for n in (1, 5, 100):
        same(e.draw(n), t.draw(n))
    same(e.draw(6, dtype=ember.float64), t.draw(6, dtype=torch.float64))
    e.reset(), t.reset()
    same(e.draw(3, dtype=ember.float64), t.draw(3, dtype=torch.float64))


def test_unseeded_scramble_uses_the_default_generator():
    ember.manual_seed(11), torch.manual_seed(11)
    e, t = engines(4, scramble=True)
    same(e.draw(17), t.draw(17))


@pytest.mark.parametrize("scramble", [False, True])
def test_fast_forward_reset_draw_base2(scramble):
    e, t = engines(6, scramble=scramble, seed=3)
    e.fast_forward(0), t.fast_forward(0)
    e.fast_forward(5), t.fast_forward(5)
    same(e.draw(3), t.draw(3))
    e.fast_forward(21), t.fast_forward(21)
    same(e.draw(2), t.draw(2))
    assert e.reset() is e and e.num_generated == 0
    t.reset()
    same(e.draw_base2(3), t.draw_base2(3))
    same(e.draw_base2(3, dtype=ember.float64), t.draw_base2(3, dtype=torch.float64))
    same(e.draw_base2(4), t.draw_base2(4))
    e.fast_forward(1_000_003), t.fast_forward(1_000_003)
    same(e.draw(300, dtype=ember.float64), t.draw(300, dtype=torch.float64))


def test_first_point_uses_default_dtype_at_construction():
    prev = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64), torch.set_default_dtype(torch.float64)
    try:
        e, t = engines(3, scramble=True, seed=9)
        same(e.draw(1), t.draw(1))
        same(e.draw(4), t.draw(4))
    finally:
        ember.set_default_dtype(prev), torch.set_default_dtype(getattr(torch, str(prev).split(".")[1]))
    e, t = engines(3, scramble=True, seed=9)  # built in float32: its first point was rounded there
    same(e.draw(2, dtype=ember.float64), t.draw(2, dtype=torch.float64))


def test_out():
    e, t = engines(3)
    oe, ot = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    re_, rt = e.draw(5, out=oe), t.draw(5, out=ot)
    assert re_ is oe
    same(oe, ot)


def test_repr():
    for args in [(3,), (3, True), (3, True, 5), (3, False, 5)]:
        e, t = engines(*args)
        assert repr(e) == repr(t)
    assert ember.quasirandom.SobolEngine.MAXDIM == torch.quasirandom.SobolEngine.MAXDIM == 21201


def _raises_like(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.quasirandom.SobolEngine(0),
    lambda lib: lib.quasirandom.SobolEngine(21202),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(0),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(4, dtype=lib.int64),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(4, dtype=lib.float16),
    lambda lib: lib.quasirandom.SobolEngine(2).fast_forward(3).draw_base2(2),
    lambda lib: lib.quasirandom.SobolEngine(2, scramble=True, seed=1).draw(-2),
])
def test_errors(fn):
    _raises_like(fn)


def test_error_keeps_state():
    e, t = engines(2)
    e.draw(2), t.draw(2)
    with pytest.raises(NotImplementedError):
        e.draw(3, dtype=ember.int32)
    with pytest.raises(NotImplementedError):
        t.draw(3, dtype=torch.int32)
    same(e.draw(3), t.draw(3))


def test_missing_scipy_is_a_clear_import_error(monkeypatch):
    import sys
    from ember import quasirandom
    monkeypatch.setattr(quasirandom, "_direction_numbers", None)
    monkeypatch.setattr(quasirandom, "_state_cache", np.zeros((0, 30), dtype=np.int64))
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"ember\[scipy\]"):
        quasirandom.SobolEngine(2)
