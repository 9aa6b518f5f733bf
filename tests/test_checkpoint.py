"""ember.utils.checkpoint: the same outputs and gradients as running without checkpointing and
as torch.utils.checkpoint (dropout masks replayed), both variants, and the memory it saves."""
import gc
import warnings
import weakref

import numpy as np
import pytest

import ember
from _torch_oracle import assert_same

torch = pytest.importorskip("torch")


def make_net(lib, depth=4, width=16, p=0.3):
    lib.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [lib.nn.Linear(width, width), lib.nn.Tanh(), lib.nn.Dropout(p)]
    return lib.nn.Sequential(*layers, lib.nn.Linear(width, 3))


def run(lib, mode, use_reentrant, x_requires_grad=True):
    """Forward + backward of a dropout MLP, checkpointed as `mode` says; the loss, the
    gradients of the input and of every parameter, and the next random number."""
    net = make_net(lib)
    x = lib.tensor(np.random.default_rng(1).normal(size=(5, 16)), dtype=lib.float32,
                   requires_grad=x_requires_grad)
    lib.manual_seed(123)
    ckpt = lib.utils.checkpoint
    if mode == "plain":
        y = net(x)
    elif mode == "whole":
        y = ckpt.checkpoint(net, x, use_reentrant=use_reentrant)
    elif mode == "halves":
        h = ckpt.checkpoint(net[:6], x, use_reentrant=use_reentrant)
        y = ckpt.checkpoint(net[6:], h, use_reentrant=use_reentrant)
    else:
        y = ckpt.checkpoint_sequential(net, 3, x, use_reentrant=use_reentrant)
    loss = (y * y).sum()
    loss.backward()
    grads = [x.grad] if x_requires_grad else []
    grads += [p.grad for p in net.parameters()]
    return loss, grads, lib.rand(3)


@pytest.mark.parametrize("mode", ["whole", "halves", "sequential"])
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_equal_plain_and_torch(mode, use_reentrant):
    plain = run(ember, "plain", None)
    mine = run(ember, mode, use_reentrant)
    theirs = run(torch, mode, use_reentrant)
    # bit for bit the same as without checkpointing: same dropout masks, same arithmetic
    np.testing.assert_array_equal(mine[0].detach().numpy(), plain[0].detach().numpy())
    for a, b in zip(mine[1], plain[1]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the outer random stream continues as if nothing had been recomputed
    np.testing.assert_array_equal(mine[2].numpy(), plain[2].numpy())
    assert_same(mine[0], theirs[0], atol=1e-5, rtol=1e-5)
    for a, b in zip(mine[1], theirs[1]):
        assert_same(a, b, atol=1e-5, rtol=1e-4)
    assert_same(mine[2], theirs[2], atol=0, rtol=0)


def test_without_preserved_rng_the_masks_differ():
    net = make_net(ember)
    x = ember.randn(5, 16, requires_grad=True)
    ember.manual_seed(3)
    y = ember.utils.checkpoint.checkpoint(net, x, use_reentrant=False, preserve_rng_state=False)
    y.sum().backward()
    g_unpreserved = x.grad.clone()
    x.grad = None
    ember.manual_seed(3)
    net(x).sum().backward()
    assert not bool(ember.equal(x.grad, g_unpreserved))


def test_non_reentrant_parameters_only_grad_kwargs_and_structures():
    lin = ember.nn.Linear(4, 4)
    x = ember.randn(2, 4)  # needs no grad: the parameters still get theirs

    def fn(a, scale, *, shift):
        h = lin(a) * scale + shift
        return {"out": (h.tanh(), h.argmax(-1)), "n": 3}

    out = ember.utils.checkpoint.checkpoint(fn, x, 2.0, use_reentrant=False, shift=0.5)
    assert out["n"] == 3 and out["out"][1].dtype == ember.int64
    gw, gb = ember.autograd.grad(out["out"][0].sum(), [lin.weight, lin.bias])
    ref = fn(x, 2.0, shift=0.5)["out"][0].sum()
    rw, rb = ember.autograd.grad(ref, [lin.weight, lin.bias])
    np.testing.assert_allclose(gw.numpy(), rw.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gb.numpy(), rb.numpy(), rtol=1e-6, atol=1e-7)
    assert lin.weight.grad is None  # autograd.grad does not accumulate


def test_non_reentrant_outside_tensor_read_by_closure():
    w = ember.randn(3, requires_grad=True)
    outer = w * 2  # not a leaf, not an argument: reached through the region's graph
    x = ember.randn(3, requires_grad=True)
    y = ember.utils.checkpoint.checkpoint(lambda a: (a * outer).sin(), x, use_reentrant=False)
    (y.sum() + outer.sum()).backward()
    gw, gx = w.grad.clone(), x.grad.clone()
    w.grad = x.grad = None
    outer = w * 2
    ((x * outer).sin().sum() + outer.sum()).backward()
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-6)


def test_backward_twice_with_retain_graph_recomputes_each_time():
    lin = ember.nn.Linear(3, 3)
    x = ember.randn(2, 3, requires_grad=True)
    y = ember.utils.checkpoint.checkpoint(lin, x, use_reentrant=False)
    y.sum().backward(retain_graph=True)
    first = lin.weight.grad.clone()
    y.sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), 2 * first.numpy(), rtol=1e-6)


def test_warnings_and_errors_match_torch():
    for lib in (ember, torch):
        lin = lib.nn.Linear(2, 2)
        x = lib.randn(1, 2)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            lib.utils.checkpoint.checkpoint(lin, x.requires_grad_())
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            lib.utils.checkpoint.checkpoint(lin, lib.randn(1, 2), use_reentrant=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: bias"):
            lib.utils.checkpoint.checkpoint(lin, x, use_reentrant=True, bias=1)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            lib.utils.checkpoint.checkpoint_sequential(lib.nn.Sequential(lin), 1, x,
                                                       use_reentrant=False, foo=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with lib.no_grad():  # no graph to save: the function simply runs
                lib.utils.checkpoint.checkpoint(lin, x, use_reentrant=False)


class _Probe(ember.nn.Module):
    """Passes its input through a fresh tensor and remembers it weakly: whether that
    activation is still alive after the forward says whether backward's graph holds it."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x):
        y = x * 1.0
        self.seen.append(weakref.ref(y))
        return y


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointing_frees_the_activations(use_reentrant):
    """Without checkpointing every block's activation is saved for backward (the next Linear
    keeps its input); in checkpointed segments only the segment inputs survive the forward,
    and the probes' activations are gone until backward recomputes them."""
    probes = [_Probe() for _ in range(6)]
    net = ember.nn.Sequential(*[m for p in probes for m in (ember.nn.Linear(8, 8), p)])
    x = ember.randn(4, 8, requires_grad=True)

    y = net(x)
    gc.collect()
    assert all(r() is not None for p in probes for r in p.seen)
    y.sum().backward()

    for p in probes:
        p.seen.clear()
    y = ember.utils.checkpoint.checkpoint_sequential(net, 3, x, use_reentrant=use_reentrant)
    gc.collect()
    alive = [[r() is not None for r in p.seen] for p in probes]
    # segments 1 and 2 (blocks 0-1, 2-3) are checkpointed: the activations inside them are
    # not kept (their results, 1 and 3, are the next segments' inputs); segment 3 runs
    # normally and keeps its own
    assert (alive[0], alive[2], alive[4], alive[5]) == ([False], [False], [True], [True])
    y.sum().backward()
    # recomputed in backward: the reentrant variant reruns whole segments; the non-reentrant
    # one stops once it has every saved tensor (PyTorch's early stop), before the segment's
    # last probe, whose `x * 1.0` saves nothing
    recomputed = [2, 2, 2, 2, 1, 1] if use_reentrant else [2, 1, 2, 1, 1, 1]
    assert [len(p.seen) for p in probes] == recomputed


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_argument_modified_in_place_before_backward_raises(use_reentrant):
    for lib in (ember, torch):
        lin = lib.nn.Linear(3, 3)
        x = lib.randn(2, 3, requires_grad=True)
        h = x * 2
        y = lib.utils.checkpoint.checkpoint(lin, h, use_reentrant=use_reentrant)
        with lib.no_grad():
            h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def _sac_run(lib, policy):
    """A checkpointed region with selective checkpointing: the gradients, the region's call
    count, and ember's mm kernel calls (None for torch)."""
    from functools import partial
    ckpt = lib.utils.checkpoint
    x = lib.tensor(np.random.default_rng(2).normal(size=(4, 4)), dtype=lib.float32,
                   requires_grad=True)
    w = lib.tensor(np.random.default_rng(3).normal(size=(4, 4)), dtype=lib.float32,
                   requires_grad=True)
    calls = []

    def region(a):
        calls.append(1)
        return lib.mm(a, w).sin().mm(w).exp().sum(0)

    context = partial(ckpt.create_selective_checkpoint_contexts, policy(lib))
    mm_cpu = lib.ops.aten.mm.default._table["CPU"] if lib is ember else None
    kernel_calls = []
    if lib is ember:
        lib.ops.aten.mm.default._table["CPU"] = lambda *a: kernel_calls.append(1) or mm_cpu(*a)
    try:
        y = ckpt.checkpoint(region, x, use_reentrant=False, context_fn=context)
        y.sum().backward()
    finally:
        if lib is ember:
            lib.ops.aten.mm.default._table["CPU"] = mm_cpu
    return [x.grad.numpy(), w.grad.numpy()], len(calls), len(kernel_calls) if lib is ember else None


def _save_mm_list(lib):
    return [lib.ops.aten.mm.default]


def _save_mm_policy(lib):
    P = lib.utils.checkpoint.CheckpointPolicy

    def policy(ctx, op, *args, **kwargs):
        assert isinstance(ctx.is_recompute, bool)
        return P.MUST_SAVE if op == lib.ops.aten.mm.default else P.PREFER_RECOMPUTE
    return policy


@pytest.mark.parametrize("policy", [_save_mm_list, _save_mm_policy])
def test_selective_checkpointing_saves_the_chosen_ops_as_torch(policy):
    ours, theirs = _sac_run(ember, policy), _sac_run(torch, policy)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[1] == theirs[1] == 2
    # mm ran twice in the forward (and its gradients ran mm too), but not in the recomputation
    forward_only = _sac_run(ember, lambda lib: [])[2]
    assert ours[2] == forward_only - 2


def test_checkpoint_options_as_torch():
    for lib in (ember, torch):
        ckpt = lib.utils.checkpoint
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="to be an OpOverload"):
            ckpt.create_selective_checkpoint_contexts([lib.sin])
        with pytest.raises(ValueError, match="determinism_check should be one of"):
            ckpt.checkpoint(lib.sin, x, use_reentrant=False, determinism_check="bad")
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            ckpt.checkpoint(lib.sin, x, use_reentrant=True, context_fn=lambda: (None, None))
        y = ckpt.checkpoint(lib.sin, x, use_reentrant=False, determinism_check="none",
                            debug=True)
        y.sum().backward()
        assert [p.name for p in ckpt.CheckpointPolicy] == [
            "MUST_SAVE", "PREFER_SAVE", "MUST_RECOMPUTE", "PREFER_RECOMPUTE", "MUST_CPU_OFFLOAD",
            "PREFER_CPU_OFFLOAD"]
        assert issubclass(ckpt.CheckpointError, RuntimeError)
        # a region that recomputes to another shape fails in backward
        sizes = iter([3, 2])
        z = ckpt.checkpoint(lambda a: a.repeat(next(sizes)).sin(), x, use_reentrant=False)
        with pytest.raises(ckpt.CheckpointError, match="different metadata"):
            z.sum().backward()
