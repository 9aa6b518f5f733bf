"""Fixes found by running PyTorch's test_nn.py TestNNDeviceType (CPU) on ember: each case runs
the same code in ember and torch and compares values, dtypes, layouts, gradients and errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402

LIBS = (ember, torch)


def _np(t):
    return t.detach().float().numpy() if t.dtype in (ember.bfloat16, torch.bfloat16) \
        else t.detach().numpy()


def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("mode, antialias, fmt", [
    ("bilinear", True, "contiguous_format"), ("bicubic", True, "contiguous_format"),
    ("bicubic", False, "channels_last"), ("bilinear", False, "contiguous_format")])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_interpolate_result_layout_and_uint8_values(mode, antialias, fmt, dtype):
    """The result is laid out in the input's suggested memory format (a fresh contiguous tensor
    for a contiguous input, not the strides the separable passes leave); uint8 resampling gives
    PyTorch's fixed-point values."""
    x = np.random.default_rng(0).integers(0, 256, (2, 3, 40, 36)).astype(np.uint8)
    got = []
    for lib in LIBS:
        t = lib.from_numpy(x).to(getattr(lib, dtype))
        t = t.contiguous(memory_format=getattr(lib, fmt))
        out = lib.nn.functional.interpolate(t, size=(23, 51), mode=mode, antialias=antialias,
                                            align_corners=False)
        got.append((out.dtype is getattr(lib, dtype),
                    out.is_contiguous(), out.is_contiguous(memory_format=lib.channels_last),
                    _np(out)))
    assert got[0][:3] == got[1][:3]
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-5, atol=1e-3)


def test_group_norm_statistics_on_long_rows():
    """A row of 2**21 float32 elements: the statistics stay as accurate as PyTorch's."""
    x = np.random.default_rng(1).random((1, 4, 1 << 20), dtype=np.float32)
    outs = [lib.nn.functional.group_norm(lib.from_numpy(x), 2) for lib in LIBS]
    ref = (x.reshape(1, 2, -1) - x.reshape(1, 2, -1).astype(np.float64).mean(-1, keepdims=True))
    ref = ref / np.sqrt(x.reshape(1, 2, -1).astype(np.float64).var(-1, keepdims=True) + 1e-5)
    for out in outs:
        np.testing.assert_allclose(out.numpy().reshape(ref.shape), ref, atol=2e-5, rtol=0)


def test_c_nn_pad_bindings():
    """torch._C._nn serves the nn-namespace operators: the pads with their own checks."""
    for name, n in [("replication_pad1d", 2), ("replication_pad2d", 4), ("replication_pad3d", 6),
                    ("reflection_pad1d", 2)]:
        errors = [_error(lambda: getattr(lib._C._nn, name)(lib.randn(2), padding=[]))
                  for lib in LIBS]
        assert errors[0] == errors[1] and errors[0][0] == "RuntimeError", (name, errors)
    x = np.random.default_rng(2).random((1, 2, 4, 5)).astype(np.float32)
    outs = [lib._C._nn.reflection_pad2d(lib.from_numpy(x), (1, 2, 2, 1)).numpy() for lib in LIBS]
    np.testing.assert_array_equal(*outs)
    assert not hasattr(ember._C._nn, "add") and not hasattr(torch._C._nn, "add")


@pytest.mark.parametrize("call", [
    lambda F, a: F.elu_(a.clone(), alpha=-2), lambda F, a: F.celu_(a.clone(), alpha=-2),
    lambda F, a: F.leaky_relu_(a.clone(), -2), lambda F, a: F.rrelu_(a.clone(), -5.0, 1.0),
    lambda F, a: F.elu_(a.clone(), alpha=2), lambda F, a: F.leaky_relu_(a.clone(), 0.0)])
def test_inplace_activation_negative_slope_backward(call):
    got = []
    for lib in LIBS:
        a = lib.tensor([-1., 1.], requires_grad=True)
        b = call(lib.nn.functional, a)
        err = _error(lambda: b.backward(lib.ones(2)))
        got.append((err, None if err else a.grad.numpy()))
    assert got[0][0] == got[1][0]
    if got[0][0] is None:
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)


def test_ctc_loss_empty_log_probs():
    errors = []
    for lib in LIBS:
        empty = lib.tensor([], dtype=lib.long)
        errors.append(_error(lambda: lib.nn.functional.ctc_loss(
            lib.rand(0, 0, 4), empty, empty, empty, reduction="none")))
    assert errors[0] == errors[1] == ("RuntimeError", "log_probs tensor must not be empty")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("module", ["LogSigmoid", "Hardswish", "Softplus", "SiLU", "Mish",
                                    "ELU", "GLU"])
def test_low_precision_activation_backward_rounds_once(dtype, module):
    """half/bfloat16 activation gradients as PyTorch's kernels compute them: in float, rounded
    to the input's dtype once (each step in half would round)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 64)) * 3).astype(np.float32)
    g = rng.standard_normal((4, 64 if module != "GLU" else 32)).astype(np.float32)
    grads = []
    for lib in LIBS:
        dt = getattr(lib, dtype)
        t = lib.from_numpy(x).to(dt).requires_grad_()
        getattr(lib.nn, module)()(t).backward(lib.from_numpy(g).to(dt))
        assert t.grad.dtype is dt
        grads.append(t.grad.float().numpy())
    eps = 2 ** -10 if dtype == "float16" else 2 ** -7
    np.testing.assert_allclose(grads[0], grads[1], rtol=eps, atol=1e-5)


def test_instance_norm_get_no_batch_dim():
    for lib in LIBS:
        dims = [getattr(lib.nn, f"InstanceNorm{k}d")(3)._get_no_batch_dim() for k in (1, 2, 3)]
        assert dims == [2, 3, 4]
        assert lib.nn.LazyInstanceNorm2d()._get_no_batch_dim() == 3


@pytest.mark.parametrize("shape, mask_shape, dim, mask_type", [
    ((2, 3, 5, 5), (2, 5), 3, 1), ((2, 3, 5, 5), (5, 5), 3, 0), ((2, 3, 5, 5), (5, 5), 0, 0),
    ((2, 3, 5, 5), (2, 3, 5, 5), None, 2), ((4, 6), (4, 6), 0, 1), ((1, 2, 8), (1, 2, 8), 2, 1)])
def test_masked_softmax(shape, mask_shape, dim, mask_type):
    """Values, and gradients for a mask of the input's shape (PyTorch's backward takes no
    other); a row masked entirely is NaN in the output and zeros in the gradient."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    mask = rng.random(mask_shape) < 0.5
    mask.reshape(-1, mask_shape[-1])[0] = True   # one row masked entirely
    g = rng.standard_normal(shape).astype(np.float32)
    got = []
    for lib in LIBS:
        t = lib.from_numpy(x).requires_grad_()
        out = lib._masked_softmax(t, lib.from_numpy(mask), dim, mask_type)
        if mask_shape == shape:
            out.backward(lib.from_numpy(g))
        got.append((out.detach().numpy(), None if t.grad is None else t.grad.numpy()))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-5, atol=1e-6)
    assert (got[0][1] is None) == (got[1][1] is None)
    if got[0][1] is not None:
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-5, atol=1e-6)
