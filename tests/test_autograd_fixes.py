"""Fixes found by running PyTorch's test/autograd/test_functional.py and test/test_autograd.py
on ember, checked against PyTorch on the same inputs."""
import collections

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shapes", [[(2, 3)], [()], [(1,), (), ()], [(2, 3), (3,), (3, 4, 2)]])
def test_construct_standard_basis_for(shapes):
    def run(L):
        ts = tuple(L.ones(s, dtype=L.float64 if i % 2 else L.float32)
                   for i, s in enumerate(shapes))
        return L.autograd.functional._construct_standard_basis_for(
            ts, tuple(t.numel() for t in ts))
    for e, t in zip(run(ember), run(torch)):
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("api", ["vjp", "jvp"])
def test_functional_strict_create_graph_constant_jacobian(api):
    """strict=True with create_graph=True refuses a function whose Jacobian is constant."""
    for L in (ember, torch):
        inp, v = L.rand(4, requires_grad=True), L.rand(4)
        fn = getattr(L.autograd.functional, api)
        with pytest.raises(RuntimeError, match="jacobian of the user-provided function is "
                                               "independent of input 0"):
            fn(lambda a: a.clone(), inp, v, create_graph=True, strict=True)
        out = fn(lambda a: a.clone(), inp, v, create_graph=True, strict=False)[1]
        np.testing.assert_allclose(out.detach().numpy(), v.numpy())


def _edges(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3).clone()
    y_edge = L.autograd.graph.get_gradient_edge(y)
    y *= 2                                      # the edge still reads y's pre-in-place version
    out = (y * y).sum()
    g_edge, g_new = L.autograd.grad(out, (y_edge, y), retain_graph=True)
    g_leaf = L.autograd.grad(out, L.autograd.graph.get_gradient_edge(x), retain_graph=True)[0]
    x.grad = None
    L.autograd.backward(out, inputs=(L.autograd.graph.get_gradient_edge(x),))
    return g_edge, g_new, g_leaf, x.grad


def test_gradient_edge_inputs():
    for e, t in zip(_edges(ember), _edges(torch)):
        np.testing.assert_allclose(e.numpy(), t.numpy())
    for L in (ember, torch):
        x = L.rand(2, requires_grad=True).clone()
        unused = L.autograd.graph.get_gradient_edge(L.rand(2, requires_grad=True).clone())
        with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the "
                                               "given input is a GradientEdge"):
            L.autograd.grad(x.sum(), (x, unused), allow_unused=True, materialize_grads=True)
        with pytest.raises(RuntimeError, match="does not require gradients"):
            L.autograd.graph.get_gradient_edge(L.rand(2))


def test_grad_dict_inputs_and_materialized_zeros():
    for L in (ember, torch):
        x, y = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
        g = L.autograd.grad((x * 2).sum(), {"a": x, "b": y}, allow_unused=True,
                            materialize_grads=True, create_graph=True)
        assert list(g) == ["a", "b"] and g["b"].requires_grad
        np.testing.assert_allclose(g["a"].detach().numpy(), [2.0, 2.0, 2.0])
        with pytest.raises(TypeError, match="must be a dict"):
            L.autograd.grad((x * 2).sum(), collections.OrderedDict(a=x))


def test_grad_batched_shape_mismatch_message():
    for L in (ember, torch):
        x = L.randn(2, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the "
                                               "first dimension"):
            L.autograd.grad(x.clone(), (x,), (L.ones(2, 2),), is_grads_batched=True)


def test_delayed_error_and_once_differentiable():
    def run(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @L.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = L.tensor([1.0, 3.0], requires_grad=True)
        go = L.ones((), requires_grad=True)  # a differentiable grad_output: Error joins
        (gx,) = L.autograd.grad(F.apply(x).sum(), x, go, create_graph=True)
        with pytest.raises(RuntimeError, match="trying to differentiate twice"):
            gx.sum().backward()
        boom = L._C._functions.DelayedError("Boom!", 1)(x)
        with pytest.raises(RuntimeError, match="Boom!"):
            boom.sum().backward()
        return gx.detach(), type(gx.grad_fn).__name__, L.autograd.grad(
            (L._C._functions.UndefinedGrad()(x) * 2).sum(), x, allow_unused=True)[0]
    e, t = run(ember), run(torch)
    np.testing.assert_allclose(e[0].numpy(), t[0].numpy())
    assert e[1] == t[1] == "Error" and e[2] is None and t[2] is None


def test_function_grads_for_non_tensor_and_non_differentiable_outputs():
    def run(L):
        seen = []

        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                nd = x.clone()
                ctx.mark_non_differentiable(nd)
                ctx._materialize_non_diff_grads = False
                return x * 2, 3, nd

            @staticmethod
            def backward(ctx, g, g_int, g_nd):
                seen.append((g_int, g_nd))
                return g * 2

        x = L.ones(2, requires_grad=True)
        F.apply(x)[0].sum().backward()
        return seen, x.grad
    (e_seen, e_grad), (t_seen, t_grad) = run(ember), run(torch)
    assert e_seen == t_seen == [(None, None)]
    np.testing.assert_allclose(e_grad.numpy(), t_grad.numpy())


def test_small_api_pieces_match_torch():
    for L in (ember, torch):
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            @L.no_grad()
            class Foo:
                def __init__(self):
                    self.enabled = L.is_grad_enabled()
        assert Foo().enabled is False and L.is_grad_enabled()
        x = L.ones(1, requires_grad=True)
        y = x ** 2
        with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
            y.grad_fn(x.detach(), x.detach())
        t = L.rand(3, requires_grad=True)
        t.register_post_accumulate_grad_hook(lambda p: p.grad)
        with pytest.raises(RuntimeError, match="hooks should return None"):
            t.sum().backward()
        v = t._version
        L.autograd.graph.increment_version(t)
        assert t._version == v + 1
        ref = L._C._WeakTensorRef(L.ones(1))
        assert ref.expired()
        assert isinstance(L.ones(1, requires_grad=True).clone().grad_fn.next_functions[0][0],
                          L._C._functions.AccumulateGrad)
        assert hasattr(L.autograd.Function, "vmap")
        # what an unpack hook does to the hook stack stays inside the backward pass
        ctx = L.autograd.graph.saved_tensors_hooks(lambda a: a, lambda a: ctx.__exit__() or a)
        ctx.__enter__()
        L.rand(3, requires_grad=True).sin().sum().backward()
        ctx.__exit__()
        L.tensor(1.0, requires_grad=True).exp().grad_fn._raw_saved_result.register_hooks(
            lambda a: a, lambda a: a)   # refused while default hooks are active
        with L.autograd._force_original_view_tracking(True):
            pass


def test_backward_create_graph_warns_and_saved_variables():
    for L in (ember, torch):
        with set_warn_always(L):
            b = L.randn(3, requires_grad=True, dtype=L.double)
            with pytest.warns(UserWarning, match=r"Using backward\(\) with create_graph=True"):
                (b * b).sum().backward(create_graph=True)

        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated"):
                    ctx.saved_variables
                return g * 2
        F.apply(L.ones(2, requires_grad=True)).sum().backward()


def test_forward_ad_missing_formula_names_the_op():
    for L in (ember, torch):
        with L.autograd.forward_ad.dual_level():
            d = L.autograd.forward_ad.make_dual(L.rand(3) + 1, L.rand(3))
            with pytest.raises(NotImplementedError, match="Trying to use forward AD with igamma "
                                                          "that does not support it"):
                L.igamma(d, d)


class set_warn_always:
    def __init__(self, L):
        self.L = L

    def __enter__(self):
        self.prev = self.L.is_warn_always_enabled()
        self.L.set_warn_always(True)

    def __exit__(self, *exc):
        self.L.set_warn_always(self.prev)


def test_version_counter_and_profiler_switches():
    for L in (ember, torch):
        x = L.ones(2, requires_grad=True).clone()
        x.add_(1)
        with L.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
        assert x._version == 1
        L._C._autograd._unsafe_set_version_counter((x,), (0,))
        assert x._version == 0
        with pytest.raises(RuntimeError, match="Cannot set"):
            L._C._autograd._unsafe_set_version_counter((x,), (-1,))
        assert not L.autograd.is_view_replay_enabled()
        with L.autograd._force_original_view_tracking(True):
            assert L.autograd.is_view_replay_enabled()
        assert not L.autograd.is_view_replay_enabled()
        assert not L.autograd._profiler_enabled()
        with L.autograd.profiler.profile():
            assert L.autograd._profiler_enabled()
        ev = L.autograd.profiler_util.FunctionEvent(id=0, node_id=0, name="foo", thread=0,
                                                    start_us=10, end_us=15)
        assert (ev.node_id, ev.cpu_time_total, ev.key) == (0, 5, "foo")


def test_event_list_populates_cpu_children():
    def run(L):
        pu = L.autograd.profiler_util
        events = pu.EventList()
        ranges = [(1, 0, 1, 1), (1, 1, 2, 2), (0, 0, 2, 3), (0, 1, 2, 4), (0, 1, 3, 5)]
        for thread, start, end, i in ranges:
            events.append(pu.FunctionEvent(id=i, node_id=0, name="", thread=thread,
                                           start_us=start, end_us=end))
        events._populate_cpu_children()
        return [[c.id for c in e.cpu_children] for e in events]
    assert run(ember) == run(torch) == [[], [], [], [], [4]]


def test_nodes_that_do_not_run_keep_their_saved_tensors():
    """grad() up to an intermediate runs only the nodes above it: the ones below keep what they
    saved and a second grad() through them works (torch's test_sharded_grad)."""
    def run(L):
        leaves = [L.full((2, 2), float(i), requires_grad=True) for i in range(3)]
        mids = [leaf * leaf for leaf in leaves]
        loss = sum(m * i for i, m in enumerate(mids)).sum()
        d_mids = [g for pair in (mids[:2], mids[2:]) for g in L.autograd.grad(loss, pair)]
        L.autograd.backward(mids, d_mids)
        return [leaf.grad for leaf in leaves]
    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_allclose(e.numpy(), t.numpy())


@pytest.mark.parametrize("layout", ["to_sparse_bsr", "to_sparse_bsc"])
def test_to_sparse_blocked_int_blocksize_and_backward(layout):
    def run(L):
        x = (L.arange(16.0, dtype=L.double).reshape(4, 4) + 1).requires_grad_(True)
        y = getattr(x, layout)(2)                      # one int: a 2x2 block
        g = L.autograd.grad(y, x, getattr(L.ones(4, 4, dtype=L.double), layout)((2, 2)))[0]
        return y.values().detach(), g.layout, g.to_dense()
    (ev, el, eg), (tv, tl, tg) = run(ember), run(torch)
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    assert str(el) == str(tl)
    np.testing.assert_array_equal(eg.numpy(), tg.numpy())


def test_out_that_requires_grad_is_refused_in_grad_mode():
    for L in (ember, torch):
        a, b = L.randn(2, 2), L.randn(2, 2)
        x = L.zeros(2, 2, requires_grad=True)
        for call in (lambda: L.mul(a, b, out=x), lambda: L.sin(a, out=x)):
            with pytest.raises(RuntimeError, match=r"\(\): functions with out=\.\.\. arguments "
                                                   "don't support automatic differentiation"):
                call()
        with L.no_grad():
            L.mul(a, b, out=x)
        np.testing.assert_allclose(x.detach().numpy(), (a * b).numpy())


def test_grad_dtype_as_torch():
    """Tensor.grad_dtype (torch 2.13): leaf only; the engine casts incoming gradients to it,
    None lets any dtype through; the .grad setter checks it with torch's message."""
    def run(L):
        out = []

        def attempt(fn):
            try:
                return fn()
            except RuntimeError as exc:
                return ("RuntimeError", str(exc))
        t = L.ones(2, requires_grad=True)
        y = t * 2
        out.append(attempt(lambda: y.grad_dtype))
        out.append(attempt(lambda: setattr(y, "grad_dtype", L.float64)))
        out.append(attempt(lambda: setattr(t, "grad_dtype", 3)))
        out.append(str(t.grad_dtype))
        t.grad_dtype = L.float16
        out.append(attempt(lambda: setattr(t, "grad", L.ones(2))))
        (t * 2).sum().backward()
        out.append((str(t.grad.dtype), t.grad.tolist()))
        t.grad_dtype, t.grad = None, None
        (t.double() * 2).sum().backward()
        out.append((str(t.grad_dtype), str(t.grad.dtype), str(t.detach().grad_dtype)))
        return out
    assert run(ember) == run(torch)
