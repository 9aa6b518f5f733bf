"""Fixes found by comparing the gradient, pickling and conversion kinds of PyTorch's
test_modules.py (test_grad, test_gradgrad, test_non_contiguous_tensors, test_pickle,
test_memory_format, Module.to / to_empty) between ember and PyTorch, each checked against
PyTorch on the same inputs."""
import subprocess
import sys

import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,fmt_name", [
    ((0, 5, 2, 2), "channels_last"),
    ((0, 3, 2, 2, 4), "channels_last_3d"),
    ((2, 0, 3, 1), "channels_last"),
    ((0, 5, 2, 2), "contiguous_format"),
])
@pytest.mark.parametrize("how", ["to", "clone", "contiguous", "to_dtype"])
def test_empty_copy_in_memory_format_has_its_strides(shape, fmt_name, how):
    # an empty tensor copied in a memory format is laid out in it (NumPy gives an empty array
    # contiguous strides): test_memory_format's channels-last inputs of an empty batch
    def strides(lib):
        x, fmt = lib.zeros(shape), getattr(lib, fmt_name)
        y = {"to": lambda: x.to(memory_format=fmt), "clone": lambda: x.clone(memory_format=fmt),
             "contiguous": lambda: x.contiguous(memory_format=fmt),
             "to_dtype": lambda: x.to(lib.float64, memory_format=fmt)}[how]()
        return y.stride(), y.is_contiguous(memory_format=fmt), y.dtype is lib.float64
    assert strides(ember) == strides(torch)


def test_future_flags_are_an_attribute_of_the_package():
    # torch.__future__ is there after `import torch` (test_modules' swap-tensors cases use
    # torch.__future__.set_swap_module_params_on_conversion without importing it); a fresh
    # interpreter, so an earlier test's import of ember.__future__ does not hide it
    code = ("import ember; f = ember.__future__; print(f.get_swap_module_params_on_conversion(),"
            " f.get_overwrite_module_params_on_conversion())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(torch.__future__.get_swap_module_params_on_conversion()),
                                  str(torch.__future__.get_overwrite_module_params_on_conversion())]


def _second_order(lib, kind, packed):
    """Output, gradients and the gradients of sum(grad**2) (double backward) of a small
    recurrent module in float64, all inputs and parameters differentiable."""
    import numpy as np
    g = np.random.default_rng(0)
    lib.manual_seed(0)
    cells = {"RNNCell": lambda: lib.nn.RNNCell(3, 4), "GRUCell": lambda: lib.nn.GRUCell(3, 4),
             "LSTMCell": lambda: lib.nn.LSTMCell(3, 4),
             "GRU": lambda: lib.nn.GRU(3, 4, num_layers=2, bidirectional=True),
             "LSTM": lambda: lib.nn.LSTM(3, 4, proj_size=2), "RNN": lambda: lib.nn.RNN(
                 3, 4, nonlinearity="relu", bias=False)}
    m = cells[kind]().double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape)) * 0.5))
    cell = kind.endswith("Cell")
    x = lib.tensor(g.standard_normal((2, 3) if cell else (3, 2, 3)), requires_grad=True)
    h = lib.tensor(g.standard_normal((2, 4) if cell else
                                     ((4 if kind == "GRU" else 1), 2, 2 if kind == "LSTM" else 4)),
                   requires_grad=True)
    state = (h, lib.tensor(g.standard_normal((2, 4) if cell else (1, 2, 4)),
                           requires_grad=True)) if kind.startswith("LSTM") else h
    inp = x
    if packed:
        inp = lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2])
    outs = m(inp, state)
    outs = [o for o in ([outs] if cell and kind != "LSTMCell" else
                        list(outs) if cell else [outs[0]] + list(outs[1] if kind == "LSTM"
                                                                 else [outs[1]]))]
    outs = [o.data if packed and i == 0 else o for i, o in enumerate(outs)]
    xs = [x, h] + ([state[1]] if kind.startswith("LSTM") else []) + list(m.parameters())
    gos = [lib.tensor(g.standard_normal(tuple(o.shape))) for o in outs]
    grads = lib.autograd.grad(outs, xs, gos, create_graph=True)
    second = lib.autograd.grad(sum((t * t).sum() for t in grads), xs)
    return [t.detach().numpy() for t in outs + list(grads) + list(second)]


@pytest.mark.parametrize("kind,packed", [("RNNCell", False), ("GRUCell", False),
                                         ("LSTMCell", False), ("GRU", False), ("LSTM", False),
                                         ("RNN", False), ("LSTM", True), ("GRU", True)])
def test_recurrent_layers_double_backward(kind, packed):
    # create_graph through the fused recurrent layer op differentiates its steps as tensor ops
    # (before: RuntimeError), matching PyTorch's float64 CPU layers: test_gradgrad's RNN, GRU,
    # LSTM and their cells
    import numpy as np
    got, want = _second_order(ember, kind, packed), _second_order(torch, kind, packed)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
