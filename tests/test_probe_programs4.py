"""Differences found by running new broad-API programs (tensor ops, printing, autograd
features, a CNN zoo, data loading and checkpoints, a small GPT, common mistakes' errors) under
ember and torch and diffing their output; each regression checked against torch."""
import re

import pytest

import ember

torch = pytest.importorskip("torch")

from _torch_oracle import error_of as _error, same_error as _same_error  # noqa: E402


def _node_reprs(lib):
    x = lib.randn(2, requires_grad=True)
    nodes = [x.exp().grad_fn, x.exp().grad_fn.next_functions[0][0], (x * 2).sum().grad_fn]
    return [re.sub("0x[0-9a-f]+", "ADDR", repr(n)) for n in nodes] + [n.name() for n in nodes]


def test_graph_nodes_print_their_class_name():
    # AccumulateGrad printed its C++ name(): <torch::autograd::AccumulateGrad object at ...>
    assert _node_reprs(ember) == _node_reprs(torch)


def test_requires_grad_on_an_inference_tensor_outside_inference_mode():
    def make(lib):
        with lib.inference_mode():
            t = lib.ones(2)
            inside = lib.ones(2).requires_grad_()  # allowed inside the mode
        return t, inside
    for lib in (ember, torch):
        t, inside = make(lib)
        assert inside.requires_grad
        t.requires_grad_(False)
    _same_error(lambda lib: make(lib)[0].requires_grad_())
    _same_error(lambda lib: setattr(make(lib)[0], "requires_grad", True))


@pytest.mark.parametrize("op", [
    lambda lib: lib.ones(3).index_select(0, lib.tensor([0.])),
    lambda lib: lib.ones(3).index_reduce(0, lib.tensor([0.]), lib.ones(1), "prod"),
    lambda lib: lib.ones(3).index_add(0, lib.tensor([0.]), lib.ones(1)),
    lambda lib: lib.ones(3).gather(0, lib.tensor([0.])),
    lambda lib: lib.ones(3).scatter(0, lib.tensor([0.]), 1.),
])
def test_index_dtype_messages(op):
    assert _same_error(op)[0] == "RuntimeError"


@pytest.mark.parametrize("shapes", [((2,), (2,), (3,)), ((2, 1), (2,), (3, 1, 3)),
                                    ((4,), (3,), (4,))])
def test_where_broadcast_error_names_the_dim(shapes):
    c, a, b = shapes
    assert _same_error(lambda lib: lib.where(lib.ones(c) > 0, lib.ones(a), lib.ones(b)))[0] == \
        "RuntimeError"


@pytest.mark.parametrize("name", ["mps", "xla", "xpu", "ipu", "hip", "vulkan", "mtia", "meta:0"])
def test_every_pytorch_device_type_parses(name):
    assert str(ember.device(name)) == str(torch.device(name))
    assert repr(ember.device(name)) == repr(torch.device(name))


def test_unknown_device_type_lists_pytorch_types():
    _same_error(lambda lib: lib.device("gpu"))


@pytest.mark.parametrize("name", ["cuda", "xpu", "mps", "xla", "vulkan"])
def test_moving_to_a_device_without_backend(name):
    _same_error(lambda lib: lib.ones(2).to(name))


@pytest.mark.parametrize("name", ["cuda", "xpu", "mps", "xla"])
def test_making_on_a_device_without_backend(name):
    ours, theirs = _error(ember, lambda lib: lib.ones(2, device=name)), \
        _error(torch, lambda lib: lib.ones(2, device=name))
    assert ours[0] == theirs[0]
    assert theirs[1].startswith(ours[1])  # PyTorch goes on to list its backends
