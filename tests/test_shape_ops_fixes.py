"""Fixes found by running PyTorch's test_shape_ops.py on ember, checked against PyTorch: flip of a
0-d tensor, nonzero's out= checks, unfold / unfold_backward argument errors, torch.Storage."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    """(exception class, message) if fn raises, else ("ok", its value as a list)."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the class itself is what is compared
        return type(e).__name__, str(e).split(" (Triggered")[0].strip()
    return "ok", r.tolist() if hasattr(r, "tolist") else r


def _same(fn):
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


@pytest.mark.parametrize("dims", [0, -1, (0,), (), 1, (0, 0)])
def test_flip_of_a_0d_tensor(dims):
    _same(lambda lib: lib.tensor(2.5).flip(dims))


def test_nonzero_out_must_be_long():
    _same(lambda lib: lib.nonzero(lib.tensor([0.0, 1.0, 2.0]), out=lib.empty(0)))


def test_nonzero_out_with_as_tuple_raises():
    _same(lambda lib: lib.nonzero(lib.tensor([0, 3]), as_tuple=True,
                                  out=lib.empty(0, dtype=lib.long)))


def test_nonzero_long_out_is_written():
    def fn(lib):
        out = lib.empty(0, dtype=lib.long)
        lib.nonzero(lib.tensor([[0, 3], [4, 0]]), out=out)
        return out
    _same(fn)


@pytest.mark.parametrize("size,step", [(-1, 1), (1, -1), (1, 0), (8, 1)])
def test_unfold_argument_errors(size, step):
    _same(lambda lib: lib.arange(1.0, 8).unfold(0, size, step))


@pytest.mark.parametrize("size,step", [(3, 0), (-1, 1)])
def test_unfold_backward_argument_errors(size, step):
    _same(lambda lib: lib.ops.aten.unfold_backward(lib.ones(2, 3), [6], 0, size, step))


def test_storage_is_the_default_dtype_legacy_storage():
    assert ember.Storage.__name__ == torch.Storage.__name__ == "FloatStorage"
    assert ember.Storage([1.0, 2.0]).tolist() == torch.Storage([1.0, 2.0]).tolist()
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.Storage.__name__ == "DoubleStorage"
    finally:
        ember.set_default_dtype(old)
