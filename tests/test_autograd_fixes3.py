"""Fixes found by running the middle third of PyTorch's test/test_autograd.py TestAutograd on
ember, each checked against PyTorch on the same inputs."""
import warnings

import numpy as np
import pytest

import ember
from test_gradcheck_fixes import _nondet  # a Function whose backward jitters

torch = pytest.importorskip("torch")

LIBS = (ember, torch)


def both(fn):
    """fn(L) for ember and torch; the two results."""
    return fn(ember), fn(torch)


def test_backward_inputs_runs_the_inputs_nodes_with_their_hooks():
    """backward(inputs=) runs a leaf's AccumulateGrad (its pre/post hooks too) and a non-leaf
    input's grad_fn (which then retains its grad); grad() only captures."""
    def run(L):
        counts = {"tensor": 0, "pre": 0, "post": 0}
        a = L.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2

        def bump(key):
            def hook(*args):
                counts[key] += 1
            return hook
        a.register_hook(bump("tensor"))
        b.register_hook(bump("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        for node in (acc, b.grad_fn):
            node.register_hook(bump("post"))
            node.register_prehook(bump("pre"))
        seen = []
        L.autograd.grad(c, inputs=(b,), retain_graph=True)
        seen.append(dict(counts))
        L.autograd.grad(c, inputs=(a, b), retain_graph=True)
        seen.append(dict(counts))
        c.backward(inputs=(a, b), retain_graph=True)
        seen.append(dict(counts))
        return seen, b.grad.item(), a.grad.item()
    assert run(ember) == run(torch)


def test_prehook_order_and_partial_pass_hooks():
    def run(L):
        log = []

        def hook1(g):
            log.append(1)
            return g * 3

        def hook2(gs):
            log.append(2)
            return tuple(g * 2 for g in gs)
        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(hook2)
        b.register_hook(hook1)
        b.grad_fn.register_prehook(hook2)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(hook1)
        acc.register_prehook(hook2)
        out = []
        b.sum().backward(retain_graph=True)
        out.append(list(log))
        log.clear()
        L.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
        out.append(list(log))
        log.clear()
        b.sum().backward(inputs=(b,))   # a's accumulator does not run: its hooks stay silent
        out.append(list(log))
        return out, b.grad.item()
    assert run(ember) == run(torch)


def test_retain_grad_follows_inplace_ops():
    def run(L):
        res = []
        a = L.tensor([1.0], requires_grad=True).clone()
        a.retain_grad()
        a.mul_(2)
        a.mul_(2)
        a.sum().backward()
        res.append(a.grad.tolist())
        base = L.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2).sum().backward()
        res.append((view.grad.tolist(), view2.grad.tolist()))
        b = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        var, mean = L.var_mean(b, dim=0)
        var.retain_grad()
        mean.retain_grad()
        var.mul_(2)
        (var * 3 + mean).sum().backward()
        res.append((var.grad.tolist(), mean.grad.tolist()))
        return res
    assert run(ember) == run(torch)


def test_hook_on_a_stale_view_goes_to_its_regenerated_grad_fn():
    def run(L):
        count = [0, 0]
        base = L.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view2.register_hook(lambda g: count.__setitem__(0, count[0] + 1))
        view.mul_(2)
        view2.grad_fn  # PyTorch regenerates a stale view's grad_fn here; ember in register_hook
        view2.register_hook(lambda g: count.__setitem__(1, count[1] + 1))
        (view + view2).sum().backward()
        return count
    assert run(ember) == run(torch) == [0, 1]


def test_gradient_edge_as_output():
    def run(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)

        def fn(x, reduce=True):
            tmp = x.sin().cos()
            if reduce:
                tmp = tmp.sum()
            return tmp.exp().clone().sin().sum(), L.autograd.graph.get_gradient_edge(tmp)
        out, edge = fn(x)
        (g_tmp,) = L.autograd.grad(out, (edge,))
        (gx,) = L.autograd.grad(edge, (x,), grad_outputs=(g_tmp,))
        errors = []
        _, edge = fn(x, reduce=False)
        for call in (lambda: L.autograd.grad(edge, (x,)),
                     lambda: L.autograd.grad(edge, (x,), grad_outputs=L.ones(3))):
            with pytest.raises(RuntimeError) as e:
                call()
            errors.append(str(e.value).split(":")[0])
        _, edge = fn(x)
        L.autograd.backward(edge)
        return gx.tolist(), x.grad.tolist(), errors
    e, t = both(run)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-6)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-6)
    assert e[2] == t[2]


def test_create_graph_first_grad_is_a_copy():
    def run(L):
        w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (w * w).sum().backward(create_graph=True)
        fn = w.grad.grad_fn
        return type(fn).__name__, [None if n is None else type(n).__name__
                                   for n, _ in fn.next_functions], w.grad.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(ember) == run(torch)


def test_will_engine_execute_node_errors():
    def run(L):
        msgs = []
        a = L.randn(2, requires_grad=True)
        out = (a * 2).sum()
        with pytest.raises(RuntimeError) as e:
            L._C._will_engine_execute_node(out)
        msgs.append("expects an grad_fn" in str(e.value))
        acc = a.clone().grad_fn.next_functions[0][0]

        def hook(g):
            with pytest.raises(RuntimeError) as e:
                L._C._will_engine_execute_node(acc)
            msgs.append("currently running autograd.grad()" in str(e.value))
        b = a * 3
        b.register_hook(hook)
        L.autograd.grad(b.sum(), (a,))
        return msgs
    assert run(ember) == run(torch) == [True, True]


def _gradcheck_errors(L, fast_mode):
    def grows(x):
        return L.cat([x, x]) if L.all(x >= 1) else x

    def undefined_hook(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")
        y = x.clone()
        y.register_hook(hook)
        return y
    x = L.ones(3, dtype=L.float64, requires_grad=True)
    kinds = []
    for fn, kw in ((_nondet(L, 1e-6), {"check_batched_grad": False}), (grows, {}),
                   (undefined_hook, {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                L.autograd.gradcheck(fn, (x,), fast_mode=fast_mode, **kw)
                kinds.append(None)
            except (RuntimeError, AssertionError) as e:
                kinds.append((type(e).__name__, str(e).split(",")[0][:40]))
    return kinds


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_reentrancy_shape_and_undefined_grad_checks(fast_mode):
    assert _gradcheck_errors(ember, fast_mode) == _gradcheck_errors(torch, fast_mode)


def test_grad_dtype_refused_when_a_grad_exists():
    def run(L):
        g = L.tensor([1.0, 2.0], requires_grad=True)
        g.grad = L.tensor([1.0, 1.0])
        g.grad_dtype = L.float32
        with pytest.raises(RuntimeError) as e:
            g.grad_dtype = L.float16
        g.grad_dtype = None
        return str(e.value), g.grad_dtype
    assert run(ember) == run(torch)


def test_small_api_pieces():
    assert ember.autograd.torch is ember and torch.autograd.torch is torch

    def cached(L):
        L._C._set_cached_tensors_enabled(True)
        try:
            x = L.rand(4)
            L._C._add_cached_tensor(x)
            seen = [L._C._is_cached_tensor(x)]
            L._C._add_cached_tensor(x)
            L._C._remove_cached_tensor(x)
            seen.append(L._C._is_cached_tensor(x))
            L._C._add_cached_tensor(x)
        finally:
            L._C._set_cached_tensors_enabled(False)
        seen.append(L._C._is_cached_tensor(x))
        with pytest.raises(RuntimeError):  # only while enabled
            L._C._remove_cached_tensor(x)
        L._C._set_cached_tensors_enabled(True)
        L._C._remove_cached_tensor(x)
        L._C._set_cached_tensors_enabled(False)
        return seen
    assert cached(ember) == cached(torch)


def test_profiler_backward_events_carry_the_forward_sequence_number():
    def run(L):
        with L.autograd.profiler.profile() as p:
            x = L.randn(3, requires_grad=True)
            (x * 2).sum().backward()
        fwd = next(e for e in p.function_events if e.name == "aten::mul")
        bwd = [e for e in p.function_events if "MulBackward0" in e.name]
        return (fwd.fwd_thread, [e.sequence_nr == fwd.sequence_nr for e in bwd],
                [e.fwd_thread == fwd.thread for e in bwd])
    assert run(ember) == run(torch)


def test_dense_times_sparse_mm_and_its_gradients():
    def run(L):
        gen = np.random.default_rng(0)
        a = L.tensor(gen.standard_normal((3, 4)), requires_grad=True)
        b = L.tensor(gen.standard_normal((4, 2))).to_sparse().requires_grad_()
        r = a.mm(b)
        r.sum().backward()
        return r.detach().numpy(), a.grad.numpy(), b.grad.to_dense().numpy()
    for e, t in zip(*both(run)):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


def _anomaly_warnings(L, record_forward):
    class Outer(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return Inner.apply(g.expand(3) * x)

    class Inner(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g + float("nan")
    x = L.rand(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            if record_forward:
                with L.autograd.detect_anomaly():
                    (gx,) = L.autograd.grad(Outer.apply(x), (x,), create_graph=True)
                    gx.sum().backward()
            else:
                (gx,) = L.autograd.grad(Outer.apply(x), (x,), create_graph=True)
                with L.autograd.detect_anomaly():
                    gx.sum().backward()
    # the first line of each warning after "Anomaly Detection has been enabled"
    return [str(m.message).strip().split("\n")[0].split(" Traceback")[0].split(" (Triggered")[0]
            for m in w[1:]]


@pytest.mark.parametrize("record_forward", [True, False])
def test_anomaly_names_the_failing_node_and_its_parents(record_forward):
    assert _anomaly_warnings(ember, record_forward) == _anomaly_warnings(torch, record_forward)


def test_legacy_record_function_ops():
    def run(L):
        x = L.randn(4)
        with L.autograd.profiler.profile() as p:
            handle = L.ops.profiler._record_function_enter("bar", None)
            try:
                x * 2
            finally:
                L.ops.profiler._record_function_exit(handle)
        bar = [e for e in p.function_events if e.name == "bar"]
        inside = [c.name for c in bar[0].cpu_children]
        return len(bar), bar[0].count, "aten::mul" in inside
    assert run(ember) == run(torch)


def test_set_gives_a_leaf_a_new_grad_accumulator():
    def run(L):
        x = L.rand(2, requires_grad=True)
        edge = L.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with L.no_grad():
            x.set_(L.rand_like(x))
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            L.autograd.grad(out.sum(), x)
        (g,) = L.autograd.grad(out.sum(), edge)
        return g.tolist()
    assert run(ember) == run(torch)


def test_var_mean_is_one_node():
    def run(L):
        b = L.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], requires_grad=True)
        var, mean = L.var_mean(b, dim=0)
        seen = []

        def prehook(grad_outputs):
            seen.append(len(grad_outputs))
            gvar, gmean = grad_outputs
            return (gvar * 2, gmean * 2)
        mean.grad_fn.register_prehook(prehook)
        (var + mean).sum().backward()
        return (type(var.grad_fn).__name__, var.grad_fn is mean.grad_fn, mean.output_nr, seen,
                b.grad.tolist())
    assert run(ember) == run(torch)
