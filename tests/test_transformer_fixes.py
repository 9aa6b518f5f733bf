"""Fixes found by running PyTorch's test/test_transformers.py, test/nn/test_multihead_attention.py
and test/test_native_mha.py on ember: the fused-kernel entry points the MultiheadAttention fast
path calls (torch._native_multi_head_attention, torch._transform_bias_rescale_qkv), the fast
path itself and its switch (torch.backends.mha), the deprecated torch.backends.cuda.sdp_kernel,
torch._C._get_privateuse1_backend_name; each checked against PyTorch on the same inputs."""
import warnings
from unittest import mock

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(array):
    return ember.tensor(array), torch.tensor(array)


def _close(e, t):
    if t is None:
        assert e is None
        return
    assert e.shape == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-4, atol=1e-5, equal_nan=True)


def _mha_inputs(seed=0, B=3, L=4, E=8):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in ((B, L, E), (3 * E, E), (3 * E,), (E, E), (E,))]
    return [_both(a) for a in arrays]


_MASKS = [(None, None),
          (np.array([[0.0, 0.5, -1.0, 0.0]] * 4, dtype=np.float32), 0),  # non-zero masks out
          (np.array([[False, True, False, True], [True] * 4, [False] * 4]), 1),  # a dead row
          (np.random.default_rng(1).random((3, 2, 4, 4)) > 0.6, 2)]


@pytest.mark.parametrize("mask,mask_type", _MASKS)
@pytest.mark.parametrize("need_weights,average", [(False, True), (True, True), (True, False)])
def test_native_multi_head_attention_matches_torch(mask, mask_type, need_weights, average):
    (xe, xt), (we, wt), (be, bt), (pwe, pwt), (pbe, pbt) = _mha_inputs()
    me, mt = (None, None) if mask is None else _both(mask)
    out_e, w_e = ember._native_multi_head_attention(xe, xe, xe, 8, 2, we, be, pwe, pbe, me,
                                                    need_weights, average, mask_type)
    out_t, w_t = torch._native_multi_head_attention(xt, xt, xt, 8, 2, wt, bt, pwt, pbt, mt,
                                                    need_weights, average, mask_type)
    _close(out_e, out_t)
    _close(w_e, w_t)


def test_native_multi_head_attention_separate_inputs_and_errors():
    (xe, xt), (we, wt), (be, bt), (pwe, pwt), (pbe, pbt) = _mha_inputs()
    (ke, kt), (ve, vt) = _mha_inputs(1)[0], _mha_inputs(2)[0]
    out_e, w_e = ember._native_multi_head_attention(xe, ke, ve, 8, 2, we, be, pwe, pbe)
    out_t, w_t = torch._native_multi_head_attention(xt, kt, vt, 8, 2, wt, bt, pwt, pbt)
    _close(out_e, out_t)
    _close(w_e, w_t)
    for args_e, args_t in [((xe[0], xe[0], xe[0]), (xt[0], xt[0], xt[0])),
                           ((xe, xe[:, :2], xe), (xt, xt[:, :2], xt))]:
        with pytest.raises(RuntimeError) as te:
            torch._native_multi_head_attention(*args_t, 8, 2, wt, bt, pwt, pbt)
        with pytest.raises(RuntimeError) as ee:
            ember._native_multi_head_attention(*args_e, 8, 2, we, be, pwe, pbe)
        assert str(ee.value) == str(te.value)


def test_transform_bias_rescale_qkv_matches_torch():
    rng = np.random.default_rng(3)
    (qkv_e, qkv_t), (b_e, b_t) = _both(rng.standard_normal((2, 3, 24)).astype(np.float32)), \
        _both(rng.standard_normal(24).astype(np.float32))
    for e, t in zip(ember._transform_bias_rescale_qkv(qkv_e, b_e, 2),
                    torch._transform_bias_rescale_qkv(qkv_t, b_t, 2)):
        _close(e, t)


@pytest.mark.parametrize("setup,called", [
    (lambda m: m.eval(), True),
    (lambda m: m.train(), False),  # training
    (lambda m: setattr(m, "batch_first", False) or m.eval(), False),
])
def test_mha_fast_path_taken_when_torch_takes_it(setup, called):
    """The module calls torch._native_multi_head_attention exactly when PyTorch does."""
    for lib in (ember, torch):
        lib.manual_seed(0)
        mha = lib.nn.MultiheadAttention(8, 2, batch_first=True)
        setup(mha)
        x = lib.randn(2, 3, 8)
        with lib.no_grad(), mock.patch.object(lib, "_native_multi_head_attention",
                                              wraps=lib._native_multi_head_attention) as fused:
            out, _ = mha(x, x, x)
        assert fused.called is called, lib.__name__
        assert tuple(out.shape) == (2, 3, 8)


def test_mha_fast_path_switch_and_values():
    e_mha, t_mha = ember.nn.MultiheadAttention(8, 2, batch_first=True).eval(), \
        torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    t_mha.load_state_dict({k: torch.tensor(v.numpy()) for k, v in e_mha.state_dict().items()})
    (xe, xt) = _mha_inputs()[0]
    mask = np.array([[False, False, True, True], [False] * 4, [False, True, True, True]])
    (me, mt) = _both(mask)
    with ember.no_grad(), torch.no_grad():
        _close(e_mha(xe, xe, xe, key_padding_mask=me)[0], t_mha(xt, xt, xt, key_padding_mask=mt)[0])
    ember.backends.mha.set_fastpath_enabled(False)
    try:
        assert ember.backends.mha.get_fastpath_enabled() is False
        with mock.patch.object(ember, "_native_multi_head_attention") as fused, ember.no_grad():
            e_mha(xe, xe, xe)
        assert not fused.called
    finally:
        ember.backends.mha.set_fastpath_enabled(True)


def test_backends_cuda_sdp_kernel_sets_and_restores_flags():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
                inside = (lib.backends.cuda.flash_sdp_enabled(),
                          lib.backends.cuda.mem_efficient_sdp_enabled(),
                          lib.backends.cuda.math_sdp_enabled())
        assert inside == (False, False, True), lib.__name__
        assert lib.backends.cuda.flash_sdp_enabled() and lib.backends.cuda.mem_efficient_sdp_enabled()
        assert any(w.category is FutureWarning and "sdp_kernel()` is deprecated" in str(w.message)
                   for w in caught)


def test_privateuse1_backend_name():
    assert ember._C._get_privateuse1_backend_name() == torch._C._get_privateuse1_backend_name()


def test_encoder_padding_mask_check_does_not_break_fullgraph_compile():
    """PyTorch skips the nested-tensor path's left-alignment check (a data read) under
    compilation, so fullgraph=True compiles; the result equals eager's."""
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    encoder = ember.nn.TransformerEncoder(layer, num_layers=1).eval()
    x = ember.randn(1, 5, 8)
    pad = ember.tensor([[False, False, True, False, True]])
    compiled = ember.compile(encoder, fullgraph=True)
    with ember.no_grad():
        np.testing.assert_allclose(compiled(x, src_key_padding_mask=pad).numpy(),
                                   encoder(x, src_key_padding_mask=pad).numpy(), atol=1e-6)


@pytest.mark.parametrize("shape,kwargs", [((2, 2, 3, 4), {}), ((2, 2, 3, 4), {"dropout_p": 0.5}),
                                          ((2, 3, 4), {})])
def test_fused_sdp_choice_matches_torch(shape, kwargs):
    rng = np.random.default_rng(0)
    (qe, qt) = _both(rng.standard_normal(shape).astype(np.float32))
    assert ember._fused_sdp_choice(qe, qe, qe, **kwargs) == \
        torch._fused_sdp_choice(qt, qt, qt, **kwargs)


def test_multihead_attention_reachable_from_activation_module():
    assert ember.nn.modules.activation.MultiheadAttention is ember.nn.MultiheadAttention
    assert torch.nn.modules.activation.MultiheadAttention is torch.nn.MultiheadAttention
