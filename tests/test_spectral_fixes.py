"""torch.fft's out= checks: each spectral kernel refuses an out of the wrong kind (complex vs
floating point) under its family's name, and 1-D ihfft wants out's exact dtype."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _torch_oracle import check, same_error  # noqa: E402

_REAL_INPUT = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
_NAMES = ["fft", "ifft", "rfft", "ihfft", "irfft", "hfft", "fft2", "ifft2", "rfft2", "ihfft2",
          "irfft2", "hfft2", "fftn", "ifftn", "rfftn", "ihfftn", "irfftn", "hfftn"]


def _input(lib, name):
    return lib.ones(4, 4) if name in _REAL_INPUT else lib.ones(4, 4, dtype=lib.complex64)


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("out_dtype", ["float32", "complex64", "float64", "complex128", "int64"])
def test_fft_out_dtype(name, out_dtype):
    def run(lib):
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        getattr(lib.fft, name)(_input(lib, name), out=out)
        return out

    t_err = None
    try:
        t_out = run(torch)
    except RuntimeError as err:
        t_err = err
    if t_err is not None:
        same_error(run)
        return
    import ember
    e_out = run(ember)
    assert str(e_out.dtype) == str(t_out.dtype) and tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), atol=1e-6)


def test_fft_out_widening_values():
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    check(lambda lib, t: lib.fft.rfft(t, out=lib.empty(0, dtype=lib.complex128)), x,
          grad=False)
    check(lambda lib, t: lib.fft.irfftn(lib.fft.rfftn(t), s=(3, 6),
                                        out=lib.empty(0, dtype=lib.float64)), x, grad=False)


def _warning_of(lib, fn):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.fft.fftfreq(n=10, d=.5, out=lib.empty(())),
    lambda lib: lib.fft.rfftfreq(n=10, d=.5, out=lib.empty(3, dtype=lib.float64)),
    lambda lib: lib.istft(lib.ones(3, 5, dtype=lib.complex64), n_fft=4, length=4),
], ids=["fftfreq_out_resized", "rfftfreq_out_resized", "istft_no_window"])
def test_spectral_warnings(fn):
    import ember
    expected = _warning_of(torch, fn)
    assert expected and _warning_of(ember, fn) == [m.split(" (Triggered internally")[0]
                                                   for m in expected]
