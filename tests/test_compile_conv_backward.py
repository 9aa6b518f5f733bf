"""The compiled convolution input-gradient lowering (ember/_inductor/conv_backward.py) under
ember.compile: strided, dilated, padded, grouped and 1x1 convolutions and channels_last inputs
give eager's gradients bit for bit (and torch's, to rounding); the lowering is used only where
it applies, a graph is specialised to its inputs' strides, and arrays it does not take at run
time go to the kernel."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = {  # name: (Conv2d keyword arguments, whether the lowering takes the input gradient)
    "plain, more outputs than inputs": (dict(in_channels=4, out_channels=6), True),
    "stride 2": (dict(stride=2), True),
    "dilation 2": (dict(dilation=2), True),
    "padding 1": (dict(padding=1), True),
    "stride, padding, dilation": (dict(stride=2, padding=2, dilation=2), True),
    "rectangular stride": (dict(stride=(2, 1), padding=(1, 0)), True),
    "groups 2": (dict(groups=2), False),
    "1x1 stride 2": (dict(kernel_size=1, stride=2), False),
    "stride 1, fewer outputs": (dict(in_channels=6, out_channels=4), False),
}


def _conv(lib, kwargs):
    lib.manual_seed(0)
    kw = dict(in_channels=4, out_channels=6, kernel_size=3)
    kw.update(kwargs)
    return lib.nn.Conv2d(**kw)


def _grads(lib, model, x, layout):
    x = lib.tensor(x).to(memory_format=layout(lib)).requires_grad_()
    model.zero_grad()
    out = model(x)
    (out * out).sum().backward()
    return [(t.detach().numpy(), t.stride()) for t in
            (out, x.grad, model.weight.grad, model.bias.grad)]


def _contiguous(lib):
    return lib.contiguous_format


def _channels_last(lib):
    return lib.channels_last


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_conv_gradients_equal_eager_and_torch(case):
    kwargs, lowered = CASES[case]
    cin = kwargs.get("in_channels", 4)
    # 22 wide: a stride-1 input gradient takes col2im (Note [Input gradient by shifted
    # products] takes outputs up to 16 wide)
    x = np.random.default_rng(0).standard_normal((2, cin, 11, 22)).astype(np.float32)
    model = _conv(ember, kwargs)
    compiled = ember.compile(model)
    for layout in (_contiguous, _channels_last):  # a second graph for the second layout
        eager = _grads(ember, model, x, layout)
        mine = _grads(ember, compiled, x, layout)
        for (e, es), (c, cs) in zip(eager, mine):
            np.testing.assert_array_equal(c, e)
            assert cs == es
        theirs = _grads(torch, _conv(torch, kwargs), x, layout)
        for (c, cs), (t, ts) in zip(mine, theirs):
            np.testing.assert_allclose(c, t, rtol=1e-4, atol=1e-4)
            assert cs == ts
    history = compiled._compiled_call.history
    assert len(history) == 2 and "(stride)" in history[1].reason
    contiguous_bwd, channels_last_bwd = (h.captured.compiled[1].code for h in history)
    assert ("_conv_input_grad(" in contiguous_bwd) == lowered
    assert "_conv_input_grad(" not in channels_last_bwd  # the kernel's NHWC route


def test_lowering_hands_arrays_it_does_not_take_to_the_kernel():
    from ember._inductor import conv_backward
    g = np.random.default_rng(0).standard_normal((2, 6, 4, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((6, 4, 3, 3)).astype(np.float32)
    args = ((2, 4, 9, 9), [2, 2], [0, 0], [1, 1])
    sentinel = np.zeros(1)
    channels_last = np.ascontiguousarray(g.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    assert conv_backward.conv_input_grad(channels_last, w, *args, lambda: sentinel) is sentinel
    assert not conv_backward.applies(channels_last, w, *args[:1], *args[1:], False, [0, 0], 1)
    mine = conv_backward.conv_input_grad(g, w, *args, lambda: sentinel)
    ref = ember.ops.aten._convolution_backward_input.default(
        ember.tensor(g), ember.tensor(w), list(args[0]), *args[1:], False, [0, 0], 1)
    np.testing.assert_array_equal(mine, ref.numpy())


def test_guard_names_strides():
    compiled = ember.compile(lambda t: t * 2)
    x = ember.randn(3, 4)
    compiled(x)
    compiled(x.t().contiguous().t())  # same shape, other strides: a second graph
    history = compiled.history
    assert len(history) == 2 and history[1].reason == "guard failed: input 0 (stride) changed"
