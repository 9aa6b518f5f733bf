"""Fixes found by running the slower kinds of PyTorch's test_modules.py (test_memory_format,
test_non_contiguous_tensors, test_pickle, test_grad, ...) on ember, each checked against PyTorch
on the same inputs: the memory layout of padding results and their gradients."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _layouts(lib, mode, shape, fmt_name, pad):
    """Strides of F.pad's result and of its input gradient, and the values of both."""
    g = np.random.default_rng(0)
    x = lib.tensor(g.standard_normal(shape).astype(np.float32))
    if fmt_name is not None:
        x = x.to(memory_format=getattr(lib, fmt_name))
    x.requires_grad_()
    out = lib.nn.functional.pad(x, pad, mode=mode)
    grad_out = lib.tensor(g.standard_normal(tuple(out.shape)).astype(np.float32))
    (grad,) = lib.autograd.grad(out, x, grad_out)
    return out.stride(), grad.stride(), out.detach().numpy(), grad.numpy()


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("shape,fmt_name,pad", [
    ((2, 3, 4, 4), "channels_last", (1, 2, 2, 1)),
    ((2, 3, 4, 4), None, (1, 2, 2, 1)),
    ((2, 3, 3, 4, 4), "channels_last_3d", (1, 2, 2, 1, 1, 1)),
    ((3, 4, 4), None, (2, 1, 1, 2)),
    ((2, 3, 4, 4), "channels_last", (0, 0, 0, 0)),
])
def test_pad_result_and_gradient_keep_pytorchs_layout(mode, shape, fmt_name, pad):
    # reflection and replication pads lay out both in the input's suggested memory format;
    # circular padding always returns a contiguous tensor
    got, want = (_layouts(lib, mode, shape, fmt_name, pad) for lib in (ember, torch))
    assert got[:2] == want[:2]
    np.testing.assert_allclose(got[2], want[2])
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_meta_results_are_contiguous(mode):
    def strides(lib):
        x = lib.empty(2, 3, 4, 4, device="meta").to(memory_format=lib.channels_last)
        return lib.nn.functional.pad(x, (1, 2, 1, 0), mode=mode).stride()
    assert strides(ember) == strides(torch)


@pytest.mark.parametrize("dtype_name", [None, "float64"])
@pytest.mark.parametrize("shape,fmt_name", [((1, 2, 1, 2, 1), "channels_last_3d"),
                                            ((1, 3, 1, 1), "channels_last"),
                                            ((2, 1, 3, 1), "channels_last")])
def test_to_memory_format_strides_of_size_one_dims(shape, fmt_name, dtype_name):
    # the strides of size-1 dims decide suggest_memory_format, so padding the result of
    # .to(memory_format=channels_last_3d) gave a contiguous tensor where PyTorch's is channels-last
    def strides(lib):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        dtype = None if dtype_name is None else getattr(lib, dtype_name)
        y = x.to(dtype=dtype, memory_format=getattr(lib, fmt_name))
        return y.stride(), lib.constant_pad_nd(y, (1, 2) * (len(shape) - 2), 7.).stride()
    assert strides(ember) == strides(torch)
