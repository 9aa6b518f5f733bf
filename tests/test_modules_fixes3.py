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
