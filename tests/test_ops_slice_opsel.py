"""ember against torch on the ops of test_ops.py's slice e..l, linalg.*, fft.* (helper opsel):
dtype refusals, error messages, out= checks and complex gradients that differed."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(ember) and fn(torch): each its result or (exception type, message)."""
    out = []
    for m in (ember, torch):
        try:
            out.append(fn(m))
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            out.append((type(e).__name__, str(e)))
    return out


def _same_error(fn):
    e, t = _both(fn)
    assert isinstance(t, tuple), f"torch did not raise: {t}"
    assert e == t


ERRORS = {
    "geometric_bool": lambda m: m.ones(3, dtype=m.bool).geometric_(0.5),
    "linspace_float_steps": lambda m: m.linspace(0, 3, 1.0),
    "logspace_float_steps": lambda m: m.logspace(0, 3, 1.0),
    "linspace_tensor_float_steps": lambda m: m.linspace(m.tensor(0.), 3, 1.0),
    "linspace_1d_start": lambda m: m.linspace(m.ones(2), 3, 4),
    "linspace_1d_both": lambda m: m.linspace(m.ones(2), m.ones(2, 2), 4),
    "logspace_1d_end": lambda m: m.logspace(0, m.ones(1), 4),
    "gradient_spacing_dim_lengths": lambda m: m.gradient(m.ones(3, 3), spacing=(0.1,),
                                                         dim=(1, 0)),
    "gradient_spacing_no_dim": lambda m: m.gradient(m.ones(3, 3), spacing=[1.]),
    "gradient_repeated_dim": lambda m: m.gradient(m.ones(3, 3), spacing=0.1, dim=(1, 1)),
    "gradient_uint8": lambda m: m.gradient(m.ones(3, dtype=m.uint8)),
    "gradient_spacing_device": lambda m: m.gradient(
        m.ones(3), spacing=[m.arange(3., device="meta")]),
    "hsplit_zero": lambda m: m.hsplit(m.ones(5, 5, 5), 0),
    "vsplit_zero": lambda m: m.vsplit(m.ones(5, 5, 5), 0),
    "empty_permuted_lengths": lambda m: m.empty_permuted((2, 3), (0,)),
    "empty_permuted_range": lambda m: m.empty_permuted((2,), (3,)),
    "empty_permuted_duplicate": lambda m: m.empty_permuted((2, 3), (0, 0)),
    "gather_out_dtype": lambda m: m.gather(m.ones(2, 2), 1, m.zeros(2, 2, dtype=m.long),
                                           out=m.ones(2, 2, dtype=m.float64)),
    "index_select_expanded_out": lambda m: m.index_select(
        m.ones(3, 6), 1, m.tensor([0, 1]), out=m.ones(1, 6).expand(2, 6)),
    "gather_expanded_out": lambda m: m.gather(m.ones(3, 6), 1, m.tensor([[0, 1]] * 3),
                                              out=m.ones(1, 2).expand(3, 2)),
    "take_expanded_out": lambda m: m.take(m.ones(3, 6), m.tensor([0, 1]),
                                          out=m.ones(1).expand(2)),
    "kthvalue_out_is_input": lambda m: (lambda t: m.kthvalue(
        t, 5, out=(t, m.empty((), dtype=m.long))))(m.arange(10.)),
    "histogram_half_count": lambda m: m.histogram(m.ones(3, dtype=m.half), 4),
    "histogram_long_edges": lambda m: m.histogram(m.ones(3, dtype=m.long),
                                                  m.arange(3)),
    "histogramdd_bf16_count": lambda m: m.histogramdd(m.ones(3, 2, dtype=m.bfloat16), [2, 2]),
    "vander_half": lambda m: m.linalg.vander(m.ones(3, dtype=m.half)),
    "vander_bool_before_N": lambda m: m.linalg.vander(m.ones((), dtype=m.bool)),
    "vecdot_long": lambda m: m.linalg.vecdot(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
    "geqrf_complex_grad": lambda m: m.geqrf(m.eye(3, dtype=m.complex128).requires_grad_()),
}


@pytest.mark.parametrize("name", ERRORS)
def test_same_error(name):
    _same_error(ERRORS[name])


def _np(t):
    return t.detach().cpu().double().numpy() if not t.is_complex() else t.detach().numpy()


def test_histogram_edges_in_low_precision():
    """Given bin edges, histogram and histogramdd count half and bfloat16 inputs as torch."""
    for dt in ("float16", "bfloat16"):
        e, t = _both(lambda m: m.histogram(m.tensor([0.5, 1.5, 1.7]).to(getattr(m, dt)),
                                           m.arange(3).to(getattr(m, dt))))
        assert str(e.hist.dtype) == str(t.hist.dtype)
        np.testing.assert_array_equal(_np(e.hist), _np(t.hist))
        e, t = _both(lambda m: m.histogramdd(m.tensor([[0.5], [1.5]]).to(getattr(m, dt)),
                                             [m.arange(3).to(getattr(m, dt))]))
        np.testing.assert_array_equal(_np(e.hist), _np(t.hist))


def test_out_variants():
    """isin, hash_tensor and linalg.lstsq take out= as in torch."""
    e, t = _both(lambda m: m.isin(m.arange(4), m.tensor([1, 2]),
                                  out=m.empty(4, dtype=m.bool)))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    e, t = _both(lambda m: m.hash_tensor(m.ones(3), out=m.empty((), dtype=m.uint64)).item())
    assert e == t
    a = np.array([[1., 2.], [3., 4.], [5., 7.]])
    b = np.array([[1.], [2.], [4.]])
    e, t = _both(lambda m: m.linalg.lstsq(m.tensor(a), m.tensor(b), out=(
        m.empty(0, dtype=m.float64), m.empty(0, dtype=m.float64), m.empty(0, dtype=m.long),
        m.empty(0, dtype=m.float64))).solution)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_gradient_spacing_none_is_unit():
    e, t = _both(lambda m: m.gradient(m.arange(5.) ** 2, spacing=None, dim=None)[0])
    np.testing.assert_allclose(e.numpy(), t.numpy())


def test_linspace_tensor_steps_still_accepted():
    e, t = _both(lambda m: m.linspace(0, 1, m.tensor(3)))
    np.testing.assert_allclose(e.numpy(), t.numpy())


@pytest.mark.parametrize("ord", [1, 2, 3, 1.5, 0.5, float("inf")])
def test_vector_norm_complex_grad(ord):
    """The norm's backward uses sgn (z/|z|) for complex inputs, as torch's norm_backward."""
    z0 = np.array([[0.3 + 0.4j, -1.5 + 0.2j, 0.5j], [0.7 - 0.1j, 0.2 + 0.9j, -0.4 - 0.4j]])
    grads = []
    for m in (ember, torch):
        z = m.tensor(z0).requires_grad_()
        m.linalg.vector_norm(z, ord, dim=1).sum().backward()
        grads.append(z.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_not_implemented_backward_messages():
    """derivatives.yaml's not_implemented names the op bare; an op it does not list falls back
    with PyTorch's RuntimeError."""
    a = np.array([[2., 1.], [1., 3.]])
    for fn in (lambda m, x: m.geqrf(x)[0], lambda m, x: m.linalg.ldl_factor_ex(x)[0]):
        errs = []
        for m in (ember, torch):
            x = m.tensor(a).requires_grad_()
            try:
                fn(m, x).sum().backward()
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e)))
        assert errs[0] == errs[1]


def test_full_and_eye_resize_out_without_warning():
    """full's and eye's kernels resize out= themselves: no deprecation warning, as in torch."""
    import warnings
    for m in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            o = m.empty(3)
            assert m.full((2, 2), 1.5, out=o) is o and tuple(o.shape) == (2, 2)
            o = m.empty(2, 4)
            m.eye(3, out=o)
            np.testing.assert_array_equal(o.numpy(), np.eye(3, dtype=np.float32))
