"""Fixes found by running PyTorch's test/nn/test_pooling.py and test/nn/test_embedding.py on
ember: adaptive max pooling's empty-dim and output-size errors (forward and backward), the
overflowing output size (RuntimeError), fractional max pooling to an empty output,
max_unpool2d keeping a channels_last input's layout, max_pool3d keeping the channels_last_3d
layout of an unbatched input, Embedding's sparse gradient with 0 features and its copy of
the indices, max_norm under forward AD, EmbeddingBag's padding_idx message, and the harness
pieces those files import (common_nn, common_cuda, torch._dynamo.disable, sparse
assertEqual). Each compares ember with torch."""
import numpy as np
import pytest

import ember
from _torch_oracle import check

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    """(exception class name, first line) of fn(lib), or the result's shape and strides."""
    try:
        r = fn(lib)
    except Exception as e:
        return type(e).__name__, str(e).split("\n")[0]
    rs = r if isinstance(r, tuple) else (r,)
    return [(tuple(t.shape), t.stride()) for t in rs]


def _backward(out):
    (out[0] if isinstance(out, tuple) else out).sum().backward()


@pytest.mark.parametrize("case", [
    # empty non-batch dims: refused by the adaptive max pools (3-d too), allowed as the batch
    lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(1, 0, 4, 4, 4), 2),
    lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(0, 5, 5), 3),
    lambda L: L.nn.functional.adaptive_max_pool1d(L.ones(0, 5), 3),
    # an output size whose element count overflows int64
    lambda L: L.nn.AdaptiveMaxPool1d(0x3FFFFFFFFFFFFFFF)(L.empty([2, 2, 2])),
    # output size 0: the forward works, the backward refuses
    lambda L: _backward(L.nn.functional.adaptive_max_pool2d(
        L.ones(1, 4, 5, 5, requires_grad=True), 0)),
    lambda L: _backward(L.nn.functional.adaptive_max_pool1d(L.ones(1, 4, requires_grad=True), 0)),
    lambda L: L.nn.FractionalMaxPool2d([2, 2], output_size=[0, 1])(L.rand([3, 5, 8, 8])),
    lambda L: L.nn.FractionalMaxPool3d([3, 2, 2], output_size=[0, 1, 1])(L.rand([3, 8, 8, 8])),
    # layouts: max_unpool2d keeps channels_last (max_unpool3d does not); max_pool3d of an
    # unbatched input that is channels_last_3d once unsqueezed keeps that layout
    lambda L: L.nn.functional.max_unpool2d(*L.nn.functional.max_pool2d(
        L.arange(2 * 3 * 36.).reshape(2, 3, 6, 6).contiguous(memory_format=L.channels_last), 2,
        return_indices=True), 2),
    lambda L: L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(
        L.arange(2 * 3 * 64.).reshape(2, 3, 4, 4, 4).contiguous(
            memory_format=L.channels_last_3d), 2, return_indices=True), 2),
    lambda L: L.nn.functional.max_pool3d(L.arange(6 * 7 * 6 * 5.).reshape(1, 6, 7, 6, 5).contiguous(
        memory_format=L.channels_last_3d).squeeze(0).clone(), 3, return_indices=True),
    lambda L: L.nn.functional.max_pool3d(L.arange(6 * 7 * 6 * 5.).reshape(1, 6, 7, 6, 5).contiguous(
        memory_format=L.channels_last_3d).squeeze(0).clone().to("meta"), 3, return_indices=True),
    lambda L: L.nn.functional.max_pool2d(L.arange(6 * 7 * 6.).reshape(1, 6, 7, 6).contiguous(
        memory_format=L.channels_last).squeeze(0).clone(), 3, return_indices=True),
    lambda L: L.nn.EmbeddingBag(4, 3, padding_idx=7),
    lambda L: L.nn.Embedding(4, 3, padding_idx=-7),
])
def test_pooling_and_embedding_errors_and_layouts(case):
    assert _outcome(case, ember) == _outcome(case, torch)


@pytest.mark.parametrize("unbatched", [False, True])
def test_max_pool_layouts_keep_values_and_grads(unbatched):
    """The layout-keeping paths give torch's values, indices and input gradient."""
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 8, 4)).astype(np.float32)

    def fn(L, t):
        t = t.contiguous(memory_format=L.channels_last_3d)
        if unbatched:
            t = t[:1].squeeze(0)
        out, idx = L.nn.functional.max_pool3d(t, 3, stride=2, padding=1, return_indices=True)
        up = L.nn.functional.max_unpool2d(*L.nn.functional.max_pool2d(
            t.flatten(-2, -1).contiguous(memory_format=L.channels_last) if not unbatched
            else t.flatten(-2, -1), 2, return_indices=True), 2)
        return out, idx, up
    check(fn, x, strides=True)


def test_embedding_sparse_grad_zero_features_and_copied_indices():
    for lib in (ember, torch):
        emb = lib.nn.Embedding(10, 0, sparse=True)
        emb(lib.tensor([[0, 2, 4, 5], [4, 3, 0, 9]])).sum().backward()
        assert emb.weight.grad.is_sparse and tuple(emb.weight.grad.shape) == (10, 0)
    grads = []
    for lib in (ember, torch):
        emb = lib.nn.Embedding(10, 3, sparse=True)
        idx = lib.tensor([7, 1, 3])
        emb(idx).sum().backward()
        idx[0] = 8            # must not change the gradient already accumulated
        emb(idx).sum().backward()
        grads.append(emb.weight.grad._indices().tolist())
    assert grads[0] == grads[1] == [[7, 1, 3, 8, 1, 3]]


def test_embedding_max_norm_under_forward_ad():
    w = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32) * 2
    tangents = []
    for lib in (ember, torch):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            dual = fwAD.make_dual(lib.tensor(w), lib.ones(4, 4))
            out = lib.nn.functional.embedding(lib.tensor([[0, 1], [2, 2]]), dual, max_norm=1.0)
            tangents.append((fwAD.unpack_dual(out).tangent.numpy(), out.detach().numpy()))
    np.testing.assert_allclose(tangents[0][0], tangents[1][0])
    np.testing.assert_allclose(tangents[0][1], tangents[1][1], rtol=1e-6)


_COMMON_NN = """
import ember.utils._torch_alias as alias
alias.install()
import torch
from torch.testing._internal.common_nn import (NNTestCase, _test_module_empty_input,
                                               nllloss_reference, module_tests)
assert torch.__name__ == "ember" and NNTestCase.__module__ == "torch.testing._internal.common_nn"

class T(NNTestCase):
    def runTest(self):
        pass
t = T()
_test_module_empty_input(t, torch.nn.AdaptiveAvgPool2d(2), torch.ones(0, 3, 4, 4),
                         check_size=False)
x = torch.randn(3, 4, dtype=torch.double).log_softmax(1)
y = torch.tensor([0, 3, 1])
t.assertEqual(nllloss_reference(x, y), torch.nn.functional.nll_loss(x, y))
print(len(module_tests) > 0)
"""


def test_pytorch_common_nn_runs_on_ember():
    """torch.testing._internal.common_nn is PyTorch's own file, run with torch meaning ember
    (the alias reads it from the installed torch package): its NNTestCase, the empty-input
    check and the loss references work on ember's tensors."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _COMMON_NN], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip() == "True", out.stderr[-2000:]


def test_harness_pieces_pytorch_nn_tests_import():
    from ember.testing._internal.common_utils import TestCase
    from ember.testing._internal.common_cuda import TEST_CUDA, tf32_on_and_off
    from ember.testing._internal.common_utils import (_assertGradAndGradgradChecks,
                                                      dtype2prec_DONTUSE)
    assert not TEST_CUDA and dtype2prec_DONTUSE[ember.float] == 1e-5
    assert ember._dynamo.disable(len)("ab") == 2 and ember._dynamo.disable()(len)("a") == 1
    assert tf32_on_and_off(0.005)(lambda: 3)() == 3

    class T(TestCase):
        def runTest(self):
            pass
    t = T()
    _assertGradAndGradgradChecks(t, lambda w: w * 2, (ember.ones(2, dtype=ember.double,
                                                                 requires_grad=True),))
    i = ember.tensor([[0, 1, 1]])
    a = ember.sparse_coo_tensor(i, ember.tensor([1., 2., 3.]), (3,))
    t.assertEqual(a, ember.sparse_coo_tensor(i, ember.tensor([1., 2., 3.]), (3,)))
    with pytest.raises(AssertionError, match="Sparse COO values are not close"):
        t.assertEqual(a, ember.sparse_coo_tensor(i, ember.tensor([1., 2., 4.]), (3,)))
    with pytest.raises(AssertionError, match="number of specified values"):
        t.assertEqual(a, a.coalesce())


def test_complex_convolution_and_conv_api_gaps():
    """Complex conv2d (three real convolutions, as PyTorch's) against torch, values and grads;
    a non-tensor input is a TypeError; F.grad, cudnn.flags, _nnpack_available and
    cuda.is_tf32_supported exist as torch's."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 6, 6)) + 1j * rng.standard_normal((2, 3, 6, 6)))
    w = (rng.standard_normal((4, 3, 3, 3)) + 1j * rng.standard_normal((4, 3, 3, 3)))
    b = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    check(lambda L, x, w, b: L.view_as_real(L.nn.functional.conv2d(x, w, b, padding=1,
                                                                    stride=2)),
          x.astype(np.complex64), w.astype(np.complex64), b.astype(np.complex64),
          atol=1e-5, rtol=1e-4)
    check(lambda L, x, w: L.view_as_real(L.nn.functional.conv1d(x, w, padding="same")),
          x[0, :, 0].astype(np.complex128), w[:, :, 0].astype(np.complex128))
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.nn.Conv2d(3, 3, 3)(None)
        assert lib.nn.functional.grad is lib.nn.grad
        assert lib.cuda.is_tf32_supported() is False
        with lib.backends.cudnn.flags(enabled=True, deterministic=True):
            assert lib.backends.cudnn.deterministic is True
        assert lib.backends.cudnn.deterministic is False
    assert ember._nnpack_available() is False
