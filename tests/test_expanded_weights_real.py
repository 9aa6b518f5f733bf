"""Expanded weights (torch.nn.utils._expanded_weights, _per_sample_grad) found missing by
running PyTorch's test/test_expanded_weights.py on ember: per-sample gradients of each
supported layer compared with PyTorch's on the same parameters and inputs (values, shapes,
the input's ordinary gradient), and the same errors for unsupported uses."""
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
from _torch_oracle import assert_same, same_error  # noqa: E402


def _per_sample_grad(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils._per_sample_grad")


def _expanded_weight(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils._expanded_weights").ExpandedWeight


def _grad_samples(lib, build, x, loss_reduction="sum", batch_first=True):
    """(grad_sample of every parameter, the input's .grad) after one backward of the summed (or
    averaged) output of build(lib.nn) called through call_for_per_sample_grads."""
    module = build(lib.nn).double()
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape))))
    input = lib.from_numpy(x)
    if input.is_floating_point():
        input.requires_grad_()
    out = _per_sample_grad(lib).call_for_per_sample_grads(
        module, loss_reduction=loss_reduction, batch_first=batch_first)(input)
    (out.sum() if loss_reduction == "sum" else out.mean()).backward()
    assert all(p.grad is None for p in module.parameters())
    return [p.grad_sample for p in module.parameters()], input.grad


def _rand(*shape):
    return np.random.default_rng(1).standard_normal(shape)


LAYERS = {   # name: (build(nn), input)
    "linear_3d_input": (lambda nn: nn.Linear(4, 3), _rand(5, 2, 4)),
    "conv1d_stride_dilation": (lambda nn: nn.Conv1d(4, 6, 3, stride=2, dilation=2, padding=1),
                               _rand(3, 4, 11)),
    "conv2d_groups": (lambda nn: nn.Conv2d(4, 6, (3, 2), padding=(1, 0), groups=2),
                      _rand(3, 4, 5, 6)),
    "conv2d_same_even_kernel": (lambda nn: nn.Conv2d(2, 3, 4, padding="same", dilation=(1, 2)),
                                _rand(2, 2, 6, 7)),
    "conv3d": (lambda nn: nn.Conv3d(2, 4, 2, stride=(1, 2, 1)), _rand(2, 2, 3, 4, 3)),
    "embedding_padding_idx": (lambda nn: nn.Embedding(6, 3, padding_idx=0),
                              np.array([[0, 2, 2], [5, 1, 0]])),
    "layer_norm": (lambda nn: nn.LayerNorm((3, 4)), _rand(3, 2, 3, 4)),
    "group_norm": (lambda nn: nn.GroupNorm(2, 4), _rand(3, 4, 5)),
    "instance_norm": (lambda nn: nn.InstanceNorm2d(3, affine=True), _rand(2, 3, 4, 4)),
}


@pytest.mark.parametrize("loss_reduction", ["sum", "mean"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_per_sample_grads_match_torch(name, loss_reduction):
    build, x = LAYERS[name]
    ours = _grad_samples(ember, build, x, loss_reduction)
    theirs = _grad_samples(torch, build, x, loss_reduction)
    assert_same(ours, theirs, atol=1e-9, rtol=1e-7)
    batch = x.shape[0]
    for g, p in zip(ours[0], build(ember.nn).parameters()):
        assert tuple(g.shape) == (batch, *p.shape)


def test_per_sample_grads_equal_a_loop_over_samples():
    """The definition itself: sample i's gradient is the gradient of its own loss."""
    x = _rand(4, 2, 5)
    grads, _ = _grad_samples(ember, lambda nn: nn.Conv1d(2, 3, 2), x)
    module = ember.nn.Conv1d(2, 3, 2).double()
    rng = np.random.default_rng(0)
    with ember.no_grad():
        for p in module.parameters():
            p.copy_(ember.from_numpy(rng.standard_normal(tuple(p.shape))))
    for i in range(4):
        loss = module(ember.from_numpy(x[i:i + 1])).sum()
        for g, expected in zip(grads, ember.autograd.grad(loss, list(module.parameters()))):
            np.testing.assert_allclose(g[i].numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_two_calls_accumulate_into_grad_sample():
    """A module applied twice in one forward: grad_sample is the sum of both contributions."""
    def build(nn):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 2)

            def forward(self, x):
                return self.lin(x) + self.lin(2 * x)
        return M()
    x = _rand(4, 3)
    assert_same(_grad_samples(ember, build, x), _grad_samples(torch, build, x), atol=1e-9)


ERRORS = {
    "not_requiring_grad": lambda L: _expanded_weight(L)(L.ones(3), 2, "sum"),
    "unsupported_function": lambda L: L.add(
        L.ones(2, 3), _expanded_weight(L)(L.ones(3, requires_grad=True), 2, "sum")),
    "batch_size_mismatch": lambda L: L.nn.functional.linear(
        L.ones(3, 4), _expanded_weight(L)(L.ones(2, 4, requires_grad=True), 4, "sum")),
    "input_without_batch_dim": lambda L: L.nn.functional.linear(
        L.ones(4), _expanded_weight(L)(L.ones(2, 4, requires_grad=True), 1, "sum")),
    "mixed_with_plain_parameter": lambda L: L.nn.functional.linear(
        L.ones(3, 4, requires_grad=True), _expanded_weight(L)(L.ones(2, 4, requires_grad=True),
                                                              3, "sum"),
        L.ones(2, requires_grad=True)).sum().backward(),
    "layer_norm_over_batch": lambda L: L.nn.functional.layer_norm(
        L.ones(3, 4), (3, 4), _expanded_weight(L)(L.ones(3, 4, requires_grad=True), 3, "sum")),
    "bad_loss_reduction": lambda L: _per_sample_grad(L).call_for_per_sample_grads(
        L.nn.Linear(2, 2), loss_reduction="max"),
    "not_a_module": lambda L: _per_sample_grad(L).call_for_per_sample_grads("m"),
    "float_batch_size": lambda L: _per_sample_grad(L).call_for_per_sample_grads(
        L.nn.Linear(2, 2), batch_size=2.0),
    "inconsistent_batch_sizes": lambda L: _per_sample_grad(L).call_for_per_sample_grads(
        L.nn.Bilinear(2, 2, 1))(L.ones(3, 2), L.ones(4, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kind, _ = same_error(ERRORS[name])
    assert kind == "RuntimeError"


def test_custom_function_view_output_is_usable():
    """A custom Function may return a view it made in forward (F.instance_norm's output is a
    reshape): backward runs through the Function, as in PyTorch."""
    def run(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return (x * 2).view(-1)

            @staticmethod
            def backward(ctx, g):
                return g.view(2, 3) * 3    # not the true derivative: proves this backward ran

        x = lib.ones(2, 3, requires_grad=True)
        Double.apply(x).sum().backward()
        return x.grad
    assert_same(run(ember), run(torch))


class _FirstOutput:
    """build(nn) for an RNN module whose forward returns only the output."""

    def __init__(self, cls, **kwargs):
        self.cls, self.kwargs = cls, kwargs

    def __call__(self, nn):
        rnn = getattr(nn, self.cls)(3, 2, num_layers=2, bidirectional=True, **self.kwargs)

        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.m = rnn

            def forward(self, x):
                return self.m(x)[0]
        return Wrapper()


RNNS = {
    "lstm_batch_first": (_FirstOutput("LSTM", batch_first=True), _rand(3, 4, 3), True),
    "lstm_proj": (_FirstOutput("LSTM", proj_size=1), _rand(4, 3, 3), False),
    "gru_no_bias": (_FirstOutput("GRU", bias=False), _rand(4, 3, 3), False),
    "rnn_relu": (_FirstOutput("RNN", nonlinearity="relu"), _rand(4, 3, 3), False),
}


@pytest.mark.parametrize("name", sorted(RNNS))
def test_rnn_per_sample_grads_match_torch(name):
    """Recurrent layers under expanded weights run as their per-step linears (torch's RNN
    decompositions; ember's run_layer_stepwise), the batch being dim 1 unless batch_first."""
    build, x, batch_first = RNNS[name]
    ours = _grad_samples(ember, build, x, batch_first=batch_first)
    theirs = _grad_samples(torch, build, x, batch_first=batch_first)
    assert_same(ours, theirs, atol=1e-9, rtol=1e-7)


def _packed_grad_samples(lib, cls):
    module = getattr(lib.nn, cls)(3, 2, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape))))
    packed = lib.nn.utils.rnn.pack_padded_sequence(lib.from_numpy(_rand(5, 3, 3)),
                                                   lib.tensor([5, 3, 2]))
    out = _per_sample_grad(lib).call_for_per_sample_grads(module, batch_size=3)(packed)
    out[0].data.sum().backward()
    return [p.grad_sample for p in module.parameters()]


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_packed_sequence_per_sample_grads_match_torch(cls):
    """A packed batch: sequences shorter than the longest get no gradient from the steps
    after their end (or before their start, in the reverse direction)."""
    assert_same(_packed_grad_samples(ember, cls), _packed_grad_samples(torch, cls), atol=1e-9,
                rtol=1e-7)


@pytest.mark.parametrize("packed", [False, True])
def test_stepwise_layer_equals_fused_layer(packed, monkeypatch):
    """run_layer_stepwise (taken for subclass weights) computes what the fused op does."""
    from ember.nn import _rnn
    ember.manual_seed(0)
    m = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2).double()
    x = ember.randn(5, 3, 3, dtype=ember.double)
    inp = ember.nn.utils.rnn.pack_padded_sequence(x, ember.tensor([5, 3, 2])) if packed else x
    fused = m(inp)
    monkeypatch.setattr(_rnn, "run_layer", _rnn.run_layer_stepwise)
    stepwise = m(inp)
    for a, b in zip((fused[0].data if packed else fused[0],) + fused[1],
                    (stepwise[0].data if packed else stepwise[0],) + stepwise[1]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
