"""torch.finfo / torch.iinfo against PyTorch: every attribute, the repr, and the errors."""
import pytest

import ember

torch = pytest.importorskip("torch")

FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "resolution", "smallest_normal", "tiny", "dtype"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert repr(e) == repr(t)


def test_finfo_default_dtype():
    assert repr(ember.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(e, attr) == getattr(t, attr), attr
        assert type(getattr(e, attr)) is type(getattr(t, attr)), attr
    assert repr(e) == repr(t)


@pytest.mark.parametrize("fn,name", [("finfo", "int32"), ("iinfo", "float32"),
                                     ("iinfo", "bool"), ("finfo", "bool")])
def test_errors(fn, name):
    with pytest.raises(TypeError) as t:
        getattr(torch, fn)(getattr(torch, name))
    with pytest.raises(TypeError) as e:
        getattr(ember, fn)(getattr(ember, name))
    assert str(e.value) == str(t.value)
