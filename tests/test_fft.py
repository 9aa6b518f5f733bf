"""torch.fft, stft/istft, torch.signal.windows and the orthogonal polynomials beyond the op table
(tests/op_db_fft.py, op_db_special.py): round trips through every pair of inverse transforms in
every norm, Parseval's identity, the nodes autograd records, meta tensors, explain, warnings,
and the places where ember knowingly differs from PyTorch's CPU build.
"""
import warnings

import numpy as np
import pytest

import ember
from _torch_oracle import assert_same, check

torch = pytest.importorskip("torch")

NORMS = (None, "backward", "forward", "ortho")
# (forward, inverse, input kind, keyword naming the signal size)
ROUND_TRIPS = [("fft", "ifft", "complex", "n"), ("ifft", "fft", "complex", "n"),
               ("rfft", "irfft", "real", "n"), ("ihfft", "hfft", "real", "n"),
               ("fft2", "ifft2", "complex", "s"), ("fftn", "ifftn", "complex", "s"),
               ("rfft2", "irfft2", "real", "s"), ("rfftn", "irfftn", "real", "s"),
               ("ihfft2", "hfft2", "real", "s"), ("ihfftn", "hfftn", "real", "s")]


def _signal(kind, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if kind == "complex" else x


@pytest.mark.parametrize("forward, inverse, kind, size", ROUND_TRIPS,
                         ids=[f"{f}-{i}" for f, i, _, _ in ROUND_TRIPS])
@pytest.mark.parametrize("norm", NORMS)
def test_round_trip(forward, inverse, kind, size, norm):
    """inverse(forward(x)) is x when both use the same norm, in ember as in torch; odd and
    even last sizes (the real-signal inverses need the size to recover an odd one)."""
    for shape in ((3, 6), (2, 3, 5)):
        x = _signal(kind, shape)
        n = shape[-1] if size == "n" else shape[-2:] if forward[-1] == "2" else shape

        def fn(lib, t):
            spectrum = getattr(lib.fft, forward)(t, norm=norm)
            y = getattr(lib.fft, inverse)(spectrum, **{size: n}, norm=norm)
            return lib.view_as_real(y.resolve_conj()) if y.is_complex() else y
        check(fn, x, atol=1e-10, rtol=1e-10)
        y = fn(ember, ember.tensor(x))
        np.testing.assert_allclose(y.numpy(), np.stack([x.real, x.imag], -1)
                                   if kind == "complex" else x, atol=1e-12)


@pytest.mark.parametrize("norm, factor", [(None, 8), ("forward", 1 / 8), ("ortho", 1)])
def test_parseval(norm, factor):
    """sum |X|^2 = n sum |x|^2 unnormalized, sum |x|^2 / n forward-normalized, and the
    transform keeps the norm with norm="ortho"."""
    x = ember.tensor(_signal("complex", (8,)))
    energy = (x.abs() ** 2).sum().item()
    assert (ember.fft.fft(x, norm=norm).abs() ** 2).sum().item() == pytest.approx(energy * factor)


def test_zero_dim_inputs():
    """fftn transforms no dim of a 0-d tensor (a complex copy); the 1-d transforms have no dim
    to transform (IndexError), the real-signal n-d ones need one (RuntimeError): as in torch,
    whose errors the op table checks."""
    for name in ("fftn", "ifftn"):
        check(lambda lib: lib.view_as_real(getattr(lib.fft, name)(lib.tensor(2.5), norm="ortho")),
              grad=False)


def test_fftshift_centers_fftfreq():
    """fftshift(fftfreq(n)) runs from the most negative frequency up; ifftshift undoes it."""
    for n in (5, 6):
        check(lambda lib: lib.fft.fftshift(lib.fft.fftfreq(n, 0.5)))
        f = ember.fft.fftfreq(n)
        assert np.all(np.diff(ember.fft.fftshift(f).numpy()) > 0)
        assert ember.equal(ember.fft.ifftshift(ember.fft.fftshift(f)), f)


def _node_names(y):
    names, stack = [], [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and type(node).__name__ != "AccumulateGrad":
            names.append(type(node).__name__)
            stack.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.parametrize("name, expected", [
    ("fft", "FftR2CBackward0"), ("rfft", "FftR2CBackward0"), ("irfft", "FftC2RBackward0"),
    ("fftn", "FftC2CBackward0"), ("irfftn", "FftC2RBackward0"), ("ihfftn", "FftC2CBackward0")])
def test_nodes_are_pytorchs(name, expected):
    """The transform's node is the one PyTorch records, with the same producers below it
    (ember's conj is conj_physical, whose node has that name)."""
    chains = []
    for lib in (torch, ember):
        x = lib.tensor(_signal("real", (4, 6)), requires_grad=True)
        y = getattr(lib.fft, name)(x)
        chains.append([n.replace("ConjPhysical", "Conj") for n in _node_names(y)])
    assert chains[0][0] == expected
    assert chains[1] == chains[0]


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2",
                                  "rfftn", "irfftn", "hfftn", "ihfftn"])
def test_meta(name):
    """Shapes and dtypes without data. (Not strides: PyTorch's MKL transforms over a dim
    other than the last return transposed layouts, and its meta kernels other ones still;
    ember's results are contiguous.)"""
    e, t = (getattr(lib.fft, name)(lib.empty(3, 8, device="meta")) for lib in (ember, torch))
    assert_same(e, t)


def test_stft_on_meta():
    e, t = (lib.stft(lib.empty(2, 40, device="meta"), 16, 4,
                     window=lib.empty(16, device="meta"), return_complex=True)
            for lib in (ember, torch))
    assert_same(e, t)


def test_explain_shows_the_spectral_ops():
    x = ember.randn(16, requires_grad=True)
    with ember.explain() as ex:
        ember.istft(ember.stft(x, 8, 2, window=ember.hann_window(8), return_complex=True), 8, 2,
                    window=ember.hann_window(8), length=16).sum().backward()
    ops = [r["op"] for r in ex.records]
    for op in ("unfold", "_fft_r2c", "_fft_c2r", "unfold_backward", "FftC2RBackward0",
               "UnfoldBackwardBackward0", "FftR2CBackward0"):
        assert op in ops, op


def test_stft_warnings_as_torch():
    """No window: a warning about spectral leakage; return_complex=False: deprecated."""
    x = _signal("real", (40,))
    caught = []
    for lib in (torch, ember):
        always = lib.is_warn_always_enabled()
        lib.set_warn_always(True)   # else torch warns once per process (an earlier test may have)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.stft(lib.tensor(x), 16, return_complex=False)
        finally:
            lib.set_warn_always(always)
        caught.append(sorted(str(m.message)[:40] for m in w))
    assert caught[0] == caught[1] and len(caught[1]) == 2


def test_istft_pads_a_longer_length_with_a_warning():
    """11 frames of 16 hop 4 cover 56 samples, 48 after the centering padding is cut off:
    beyond them, zeros."""
    x = _signal("real", (40,))
    ys = []
    for lib in (ember, torch):
        s = lib.stft(lib.tensor(x), 16, 4, window=lib.hann_window(16), return_complex=True)
        with pytest.warns(UserWarning, match="padded with zeros"):
            ys.append(lib.istft(s, 16, 4, window=lib.hann_window(16), length=60))
    assert_same(*ys, atol=1e-12)
    assert ys[0].shape == (60,) and not ys[0][48:].any()


def test_window_functions_record_pytorchs_nodes():
    """With requires_grad the window is the result of ops on a linspace leaf, as in PyTorch."""
    for name in ("bartlett", "cosine", "exponential", "gaussian", "hann", "kaiser"):
        nodes = [type(getattr(lib.signal.windows, name)(6, requires_grad=True).grad_fn).__name__
                 for lib in (torch, ember)]
        assert nodes[0] == nodes[1], name


def test_polynomials_are_not_differentiable():
    """Neither in x nor in n, as in PyTorch: the result does not require grad."""
    x = ember.tensor([0.25, 0.5], requires_grad=True)
    for name in ("chebyshev_polynomial_t", "hermite_polynomial_h", "legendre_polynomial_p"):
        y = getattr(ember.special, name)(x, x * 4)
        assert not y.requires_grad and y.grad_fn is None


def test_hermite_degree_limit():
    """Beyond degree 128 (float32) or 512 (float64) PyTorch gives NaN without recurring."""
    for dtype, n in ((torch.float32, 129), (torch.float64, 513), (torch.float64, 200)):
        check(lambda lib: lib.special.hermite_polynomial_he(
            lib.tensor([0.0, 0.5], dtype=getattr(lib, str(dtype)[6:])), n))


# ---- where ember differs from PyTorch's CPU build, on purpose --------------------------------
def test_transforms_of_empty_batches_are_empty():
    """PyTorch's MKL transforms raise "Inconsistent configuration parameters" for an empty batch
    dim (its pocketfft builds return an empty result); ember returns the empty result."""
    y = ember.fft.rfft(ember.randn(0, 8))
    assert y.shape == (0, 5) and y.dtype is ember.complex64
    assert ember.fft.ifftn(ember.randn(2, 0, 4), dim=(0, 2)).shape == (2, 0, 4)


def test_polynomials_at_nan_are_nan():
    """Several of PyTorch's recurrences stop at a NaN before writing their result and return an
    uninitialised value (laguerre_polynomial_l(nan, 2) is 4.6e-41 on CPU); ember returns NaN."""
    x = ember.tensor([float("nan")])
    for name in ("chebyshev_polynomial_u", "laguerre_polynomial_l", "legendre_polynomial_p"):
        assert ember.isnan(getattr(ember.special, name)(x, 2)).all()


def test_batched_stft_aligned_to_the_window():
    """align_to_window with a batch fails in PyTorch 2.13 (an as_strided past the storage);
    ember computes each signal of the batch as its unbatched stft."""
    x = ember.tensor(_signal("real", (2, 40)))
    w = ember.hann_window(9, dtype=ember.float64)
    batched = ember.stft(x, 16, 4, 9, w, center=False, align_to_window=True,
                         return_complex=True)
    for i in range(2):
        single = torch.stft(torch.tensor(x[i].numpy()), 16, 4, 9, torch.tensor(w.numpy()),
                            center=False, align_to_window=True, return_complex=True)
        assert_same(batched[i], single, atol=1e-12)
