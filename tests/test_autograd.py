"""The autograd engine against torch: each test runs one script in both libraries and compares
what comes out -- values, gradients, node names, warnings, and the exceptions raised.

Covers the engine (diamonds, reuse, deep chains, retain_graph, higher-order gradients,
autograd.grad options, backward(inputs=), hooks, next_functions), the correctness guards
(version counter, leaf in-place, anomaly detection) and in-place ops on views (CopySlices).
"""
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
from _torch_oracle import assert_same


def same(fn, *, atol=1e-6, rtol=1e-5, message=True):
    """fn(lib) gives the same result under torch and ember, or raises the same exception.

    The exception must be of the builtin class torch raised (RuntimeError, ValueError, ...)
    and, unless `message=False`, carry the same message.
    """
    try:
        expected = fn(torch)
    except Exception as e:  # noqa: BLE001 -- compared below
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        with pytest.raises(builtin) as info:
            fn(ember)
        if message:
            assert str(info.value) == str(e)
        return None
    got = fn(ember)
    assert_same(got, expected, atol=atol, rtol=rtol)
    return got


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    torch.set_grad_enabled(True)
    ember.set_grad_enabled(True)


def leaf(L, values, dtype=None):
    return L.tensor(values, dtype=dtype or L.float32, requires_grad=True)


# ---- the engine -----------------------------------------------------------------------------
def test_diamond():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        a = x * 2
        b = a.exp()
        c = a.tanh()
        (b * c + a).sum().backward()
        return x.grad
    same(f)


def test_tensor_reused_many_times():
    def f(L):
        x = leaf(L, [0.5, -1.0])
        y = x
        for _ in range(50):
            y = y * x + x
        y.sum().backward()
        return x.grad
    same(f, rtol=1e-4)


def test_deep_chain_has_no_recursion():
    def f(L):
        x = leaf(L, [1.0])
        y = x
        for _ in range(10_000):
            y = y * 1.0001
        y.sum().backward()
        return x.grad
    expected = f(torch)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)  # a recursive graph walk would need >10,000 frames
    try:
        got = f(ember)
    finally:
        sys.setrecursionlimit(limit)
    assert_same(got, expected, rtol=1e-4)


def test_backward_twice_needs_retain_graph():
    def twice(L):
        x = leaf(L, [1., 2.])
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    same(twice)

    def retained(L):
        x = leaf(L, [1., 2.])
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    same(retained)

    def grad_twice(L):
        x = leaf(L, [1., 2.])
        y = x.exp().sum()
        return L.autograd.grad(y, x, retain_graph=True), L.autograd.grad(y, x)
    same(grad_twice)


def test_backward_without_saved_tensors_can_run_twice():
    def f(L):
        x = leaf(L, [1., 2.])
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    same(f)


@pytest.mark.parametrize("name, fn", [
    ("tanh", lambda L, x, w: x.tanh() * w),
    ("exp", lambda L, x, w: (x * w).exp()),
    ("mul", lambda L, x, w: x * x * w * x),
    ("pow", lambda L, x, w: x.pow(3) * w.pow(2) + x.abs() ** w),
    ("matmul", lambda L, x, w: (x.reshape(2, 2) @ w.reshape(2, 2)).tanh() @ x.reshape(2, 2)),
    ("chain", lambda L, x, w: ((x * w).tanh().exp() * x).pow(2)),
])
def test_higher_order_gradients(name, fn):
    def f(L):
        x = leaf(L, [0.3, -0.7, 0.2, 0.9], L.float64)
        w = leaf(L, [1.3, 0.7, -0.1, 0.5], L.float64)
        y = fn(L, x, w).sum()
        gx, gw = L.autograd.grad(y, (x, w), create_graph=True)
        h = L.autograd.grad((gx * gw).sum(), (x, w), create_graph=True)
        third = L.autograd.grad(h[0].pow(2).sum() + h[1].sum(), (x, w))
        return gx, gw, h, third
    same(f, atol=1e-9, rtol=1e-7)


def test_backward_create_graph_makes_grad_differentiable():
    def f(L):
        x = leaf(L, [1., 2.])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about the .grad reference cycle
            (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        flags = [g.requires_grad, g.grad_fn is not None]
        x.grad = None
        g.sum().backward()
        return flags, x.grad
    same(f)


def test_several_roots():
    def f(L):
        x = leaf(L, [1., 2.])
        y1, y2 = x * 2, x.exp()
        L.autograd.backward([y1.sum(), y2], [None, L.tensor([1., 3.])])
        g = L.autograd.grad([(x * x).sum(), (x * 3).sum()], [x])
        return x.grad, g
    same(f)


def test_saved_values_are_exposed_on_the_node():
    def f(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        y = x * w
        z = y.exp()
        fn = y.grad_fn
        return (fn._saved_self, fn._saved_other, z.grad_fn._saved_result, fn.metadata,
                y.grad_fn is fn, fn._saved_self is x)
    same(f)


def test_grad_with_grad_outputs():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * x
        return L.autograd.grad(y, x, grad_outputs=L.tensor([3., 5.]))
    same(f)


def test_grad_of_nonleaf_and_of_input_itself():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 3
        z = (y * y).sum()
        return L.autograd.grad(z, y, retain_graph=True), L.autograd.grad(x, x, L.ones(2))
    same(f)


def test_grad_allow_unused_and_materialize():
    def unused(L):
        x, z = leaf(L, [1.]), leaf(L, [1.])
        return L.autograd.grad((x * 2).sum(), [x, z])
    same(unused)

    def allowed(L):
        x, z = leaf(L, [1.]), leaf(L, [1.])
        return L.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    same(allowed)

    def materialized(L):
        x, z = leaf(L, [1.]), leaf(L, [1., 3.])
        return L.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    same(materialized)

    def contradictory(L):
        x = leaf(L, [1.])
        return L.autograd.grad((x * 2).sum(), [x], materialize_grads=True, allow_unused=False)
    same(contradictory)


@pytest.mark.parametrize("case", ["nonscalar", "no_grad_fn", "shape", "input_no_grad"])
def test_backward_errors(case):
    def f(L):
        x = leaf(L, [1., 2.])
        if case == "nonscalar":
            (x * 2).backward()
        elif case == "no_grad_fn":
            (L.tensor([1., 2.]) * 2).sum().backward()
        elif case == "shape":
            (x * 2).backward(L.ones(3))
        else:
            L.autograd.grad((x * 2).sum(), L.tensor([1.]))
    same(f)


def test_backward_inputs_accumulates_only_those():
    def f(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        (x * w).sum().backward(inputs=[x])
        y = x * 3
        (y * y * w).sum().backward(inputs=[y])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # y.grad is set: reading it does not warn
            return x.grad, w.grad, y.grad
    same(f)


def test_nonleaf_grad_warns():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 2
        y.sum().backward()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = y.grad
        return g, len(w), str(w[0].message).split(" (Triggered internally")[0]
    same(f)


def test_retain_grad():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 2
        y.retain_grad()
        z = y * y
        z.sum().backward(retain_graph=True)
        first = y.grad.clone()
        z.sum().backward()
        return first, y.grad, x.grad, y.retains_grad, x.retains_grad
    same(f)


def test_grad_accumulates_across_backward_calls():
    def f(L):
        x = leaf(L, [1., 2.])
        (x * 2).sum().backward()
        g = x.grad
        (x * x).sum().backward()
        return g is x.grad, x.grad
    same(f)


def test_grads_of_two_leaves_never_alias():
    def f(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [1., 2.])
        (x + w).sum().backward()
        x.grad.add_(1)
        return x.grad, w.grad, x.grad.data_ptr() != w.grad.data_ptr()
    same(f)

    def seeded(L):  # the grad_output passed in is not stored as .grad either
        x = leaf(L, [1., 2.])
        seed = L.ones(2)
        (x * 1).backward(seed)
        x.grad.add_(1)
        return seed, x.grad
    same(seeded)


def test_gradient_dtype_and_broadcast_reduction():
    def f(L):
        x = leaf(L, [1., 2.])
        w = L.ones(3, 2, dtype=L.float64, requires_grad=True)
        s = L.tensor(2., requires_grad=True)
        b = L.ones(3, 1, requires_grad=True)
        (x * w * s + b).sum().backward()
        return x.grad, w.grad, s.grad, b.grad
    same(f)


def test_multi_output_and_split_grads():
    def f(L):
        x = leaf(L, [[1., 5.], [3., 2.]])
        v, i = x.max(1)
        (v * L.tensor([2., 3.])).sum().backward()
        y = leaf(L, [1., 5., 3., 2.])
        a, b = y.split(2)
        (a * 2).sum().backward()
        return x.grad, i.requires_grad, y.grad, a.grad_fn.next_functions[0][0].name()
    same(f)


# ---- hooks ----------------------------------------------------------------------------------
def test_tensor_hooks_modify_and_remove():
    def f(L):
        x = leaf(L, [1., 2.])
        h = x.register_hook(lambda g: g * 10)
        y = x * 3
        hy = y.register_hook(lambda g: g + 1)
        y.sum().backward(retain_graph=True)
        first = x.grad.clone()
        h.remove()
        hy.remove()
        x.grad = None
        y.sum().backward()
        return first, x.grad
    same(f)


def test_hooks_run_in_order_and_retain_grad_sees_the_result():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        return x.grad, y.grad
    same(f)


def test_leaf_hook_applies_to_autograd_grad():
    def f(L):
        x = leaf(L, [1., 2.])
        x.register_hook(lambda g: g * 2)
        return L.autograd.grad((x * x).sum(), x)
    same(f)


def test_hook_on_tensor_without_grad():
    same(lambda L: L.ones(2).register_hook(lambda g: g))


def test_post_accumulate_grad_hook():
    def f(L):
        x = leaf(L, [1., 2.])
        seen = []
        h = x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        (x * 3).sum().backward()
        (x * 2).sum().backward()
        h.remove()
        (x * 1).sum().backward()
        return seen, x.grad
    same(f)

    def nonleaf(L):
        (leaf(L, [1.]) * 2).register_post_accumulate_grad_hook(lambda p: None)
    same(nonleaf, message=False)


def test_node_hooks():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 3
        calls = []
        pre = y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        post = y.grad_fn.register_hook(lambda gi, go: calls.append((gi[0].tolist(),
                                                                     go[0].tolist())))
        y.sum().backward(retain_graph=True)
        pre.remove()
        post.remove()
        y.sum().backward()
        return x.grad, calls
    same(f)


def test_node_hook_replaces_grad_inputs():
    def f(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, gi[1] + 1))
        y.sum().backward()
        return x.grad, w.grad
    same(f)


# ---- graph structure and node names -----------------------------------------------------------
def test_next_functions_structure():
    def f(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [1., 2.])
        y = (x * w + x.exp() + 1).sum()

        def walk(fn, depth=0):
            out = [(depth, fn.name() if fn is not None else None)]
            if fn is not None:
                for nxt, nr in fn.next_functions:
                    out += [("input_nr", nr)] + walk(nxt, depth + 1)
            return out
        return walk(y.grad_fn), y.grad_fn.next_functions[0][0].next_functions[1][0] is \
            x.exp().grad_fn.next_functions[0][0]
    same(f)


NODE_NAMES = [
    "(x * 2).sum()", "x.sum(0)", "x.sum(1).sum()", "x.sum(dim=(0, 1))", "x.mean()", "x.mean(1)",
    "x.prod()", "x @ x", "x.mm(x)", "x[0] @ x[1]", "x @ x[0]", "x.tanh()", "x.exp()",
    "x.view(4)", "x + x", "x + 1", "x - x", "x / 2", "x * x", "2 * x", "-x", "x.pow(2)",
    "x ** x", "x.relu()", "x.sigmoid()", "x.log()", "x.log1p()", "x.sqrt()", "x.abs()",
    "x.sin()", "x.cos()", "x.clamp(0, 1)", "x[0]", "x[:, 1]", "x[0:1]", "x.narrow(0, 0, 1)",
    "x.reshape(4)", "x.transpose(0, 1)", "x.permute(1, 0)", "x.unsqueeze(0)", "x.expand(2, 2, 2)",
    "x.flatten()", "x.clone()", "x.to(L.float64)", "L.cat([x, x])", "L.stack([x, x])",
    "x.softmax(0)", "x.log_softmax(0)", "x.max(0)[0]", "x.amax()", "x.var()", "x.std()",
    "x.diagonal()", "x.where(x > 1, x)", "x.masked_fill(x > 1, 0)", "x[L.tensor([0, 1])]",
    "x.index_select(0, L.tensor([1]))", "x.gather(0, L.tensor([[0, 1]]))",
]


@pytest.mark.parametrize("expr", NODE_NAMES)
def test_node_names_match_torch(expr):
    def f(L):
        x = leaf(L, [[1., 2.], [3., 4.]])
        out = eval(expr, {"x": x, "L": L})
        return out.grad_fn.name()
    same(f)


def test_accumulate_grad_node():
    def f(L):
        x = leaf(L, [1.])
        acc = (x * 2).grad_fn.next_functions[0][0]
        return acc.name(), acc.variable is x, acc.next_functions
    same(f)


# ---- correctness guards ---------------------------------------------------------------------
def test_modified_saved_tensor_raises():
    def result_saved(L):
        x = leaf(L, [1., 2.])
        z = (x * 2).exp()  # exp saves its result
        z.add_(1)
        z.sum().backward()
    same(result_saved)

    def input_saved(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        y = x * 2
        z = y * w  # saves y for w's gradient
        y.mul_(3)
        z.sum().backward()
    same(input_saved)

    def leaf_saved(L):
        x, w = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        z = x * w
        with L.no_grad():
            x.add_(1)
        z.sum().backward()
    same(leaf_saved)


def test_modifying_unsaved_tensor_is_fine():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 2
        z = y + 1      # saves nothing
        u = y * 3      # a constant factor: y is not needed for any gradient
        y.mul_(3)
        (z + u).sum().backward()
        return x.grad, y.grad_fn.name()
    same(f)


def test_inplace_chain_on_nonleaf():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * 2
        y.mul_(3).add_(1).clamp_(min=5)
        y.sum().backward()
        return y, x.grad, y.grad_fn.name(), y._version
    same(f)


def test_inplace_on_leaf():
    def f(L):
        x = leaf(L, [1., 2.])
        x.add_(1)
    same(f)

    def no_grad_ok(L):
        x = leaf(L, [1., 2.])
        with L.no_grad():
            x.add_(1)
        (x * 2).sum().backward()
        return x, x._version, x.grad
    same(no_grad_ok)


def test_requires_grad_flags():
    same(lambda L: (leaf(L, [1.]) * 2).requires_grad_(False))
    same(lambda L: L.tensor([1, 2]).requires_grad_(), message=False)
    same(lambda L: (leaf(L, [1.]) * 2).detach().requires_grad)


def _anomaly(L, expr):
    x = leaf(L, [0., 1.])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with L.autograd.detect_anomaly():
            eval(expr, {"x": x}).sum().backward()


@pytest.mark.parametrize("expr", ["x.sqrt() * 0", "x.log() * 0", "(x * 0).sqrt()"])
def test_detect_anomaly_names_the_op(expr):
    same(lambda L: _anomaly(L, expr))


def test_detect_anomaly_prints_forward_trace():
    x = ember.tensor([0., 1.], requires_grad=True)
    with pytest.warns(UserWarning) as record:
        with ember.autograd.detect_anomaly():
            y = x.sqrt()
            with pytest.raises(RuntimeError, match="SqrtBackward0"):
                (y * 0).sum().backward()
    traces = [str(w.message) for w in record if "Traceback of forward call" in str(w.message)]
    assert traces and "y = x.sqrt()" in traces[0]
    assert not ember.is_anomaly_enabled()


def test_anomaly_mode_is_off_without_nan():
    def f(L):
        x = leaf(L, [1., 2.])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with L.autograd.set_detect_anomaly(True):
                flag = L.is_anomaly_enabled()
                x.sqrt().sum().backward()
        return flag, L.is_anomaly_enabled(), x.grad
    same(f)


# ---- in-place ops on views: CopySlices ----------------------------------------------------
def _weights(L, n):
    return L.arange(1., n + 1)


CS_PATTERNS = {
    "brief": lambda L, x, w: _brief(L, x, w),
    "zeros_then_assign": lambda L, x, w: _zeros_assign(L, w),
    "slice_mul": lambda L, x, w: _slice_mul(x, w),
    "use_the_view": lambda L, x, w: _use_the_view(L, x, w),
    "other_view_of_base": lambda L, x, w: _other_view(L, x, w),
    "base_inplace_then_old_view": lambda L, x, w: _base_then_view(L, x, w),
    "transpose_select": lambda L, x, w: _transpose_select(L, x, w),
    "diagonal_copy": lambda L, x, w: _diagonal_copy(L, x, w),
    "nested_views": lambda L, x, w: _nested_views(L, x, w),
    "several_assignments": lambda L, x, w: _several(L, x, w),
    "index_put": lambda L, x, w: _index_put(L, x, w),
    "mask_assign": lambda L, x, w: _mask_assign(L, x, w),
    "view_of_view": lambda L, x, w: _view_of_view(L, x),
    "non_contiguous_base": lambda L, x, w: _non_contiguous_base(L, x, w),
}


def _non_contiguous_base(L, x, w):
    y = L.empty_strided((2, 2), (1, 2))  # a root whose memory is column-major
    y.copy_(x.reshape(2, 2))
    y[0].mul_(w)
    y[:, 1].add_(w)
    return y


def _brief(L, x, w):
    y = x.clone()
    y[0] = w * 2
    y.mul_(3)[1:].add_(w)
    return y


def _zeros_assign(L, w):
    z = L.zeros(3)
    z[1] = w
    return z * L.tensor([2., 3., 4.])


def _slice_mul(x, w):
    y = x * 1
    y[1:3].mul_(w)
    return y ** 2


def _use_the_view(L, x, w):
    y = x * 1
    v = y[1:3]
    v.mul_(w)
    return v * L.tensor([5., 7.])


def _other_view(L, x, w):
    y = x * 1
    a, b = y[:3], y[1:]  # overlapping views of the same base
    a.mul_(w)
    return b * L.tensor([5., 7., 9.])


def _base_then_view(L, x, w):
    y = x * 1
    v = y[2:]
    y.mul_(w)
    return v * L.tensor([5., 7.])


def _transpose_select(L, x, w):
    y = x.reshape(2, 2).clone()
    y.t()[1].mul_(w)
    return y


def _diagonal_copy(L, x, w):
    y = x.reshape(2, 2).exp()
    y.diagonal().copy_(w * w)
    return y.sin()


def _nested_views(L, x, w):
    y = L.cat([x, x * 2, x * 3]).reshape(3, 4)
    y[1:][:, ::2].mul_(w)
    y[0, 1:3] = w
    return y.pow(2)


def _several(L, x, w):
    y = x.clone()
    y[0] = w
    y[1] = w * w
    y[2:].mul_(w)
    return y


def _index_put(L, x, w):
    y = x * 1
    y[L.tensor([0, 2])] = w * L.tensor([1., 2.])
    return y


def _mask_assign(L, x, w):
    y = x * 1
    y[y > 2] = w
    return y


def _view_of_view(L, x):
    y = L.cat([x, x]).reshape(2, 4) + 0
    v = y[1]
    u = v[1:3]
    u.mul_(10)
    return v * L.arange(4.)


@pytest.mark.parametrize("name", list(CS_PATTERNS))
def test_inplace_on_views(name):
    def f(L):
        x = leaf(L, [1., 2., 3., 4.])
        w = leaf(L, 0.5)
        out = CS_PATTERNS[name](L, x, w)
        (out * _weights(L, out.numel()).reshape(out.shape)).sum().backward()
        return out, x.grad, w.grad
    same(f)


def test_copy_slices_graph():
    def f(L):
        x, w = leaf(L, [1., 2., 3., 4.]), leaf(L, 0.5)
        y = x * 1
        v = y[:2]
        v.add_(w)
        names = [n.name() if n else None for n, _ in y.grad_fn.next_functions]
        return (v.grad_fn.name(), v.grad_fn.next_functions[0][0].name(), y.grad_fn.name(),
                names, v._version, y._version, y.is_leaf)
    same(f)


def test_assigning_into_a_plain_tensor_makes_it_require_grad():
    def f(L):
        w = leaf(L, 2.0)
        z = L.zeros(3)
        z[0] = w
        flags = [z.requires_grad, z.is_leaf, z.grad_fn.name()]
        (z * L.tensor([2., 3., 4.])).sum().backward()
        return flags, w.grad
    same(f)


def test_copy_slices_double_backward():
    def f(L):
        x = leaf(L, [1., 2., 3.], L.float64)
        w = leaf(L, 0.5, L.float64)
        y = x.clone()
        y[1:].mul_(w)
        y[0] = w * w
        gx, gw = L.autograd.grad((y ** 3).sum(), (x, w), create_graph=True)
        return gx, gw, L.autograd.grad(gx.sum() + gw, (x, w))
    same(f, atol=1e-9, rtol=1e-7)


def test_copy_slices_version_guard():
    def modified(L):
        x, w = leaf(L, [1., 2., 3.]), leaf(L, 0.5)
        y = x * 1
        z = y * w  # saves y
        y[0] = 5.
        z.sum().backward()
    same(modified)

    def unsaved(L):
        x = leaf(L, [1., 2., 3.])
        y = x * 1
        z = y * 2
        y[0] = 5.
        z.sum().backward()
        return x.grad
    same(unsaved)


@pytest.mark.parametrize("case", ["assign", "mul_", "split"])
def test_inplace_on_views_errors(case):
    def f(L):
        x, w = leaf(L, [1., 2., 3., 4.]), leaf(L, 0.5)
        if case == "assign":
            x[0] = w
        elif case == "mul_":
            x[1:].mul_(2)
        else:
            a, b = (x * 1).split(2)
            a.mul_(2)
    same(f, message=case != "split")  # ember's split is split_with_sizes: "SplitWithSizes"


def test_no_grad_assignment_into_leaf():
    def f(L):
        x = leaf(L, [1., 2.])
        with L.no_grad():
            x[0] = 7
        (x * 2).sum().backward()
        return x, x.grad, x.is_leaf
    same(f)


def test_inplace_on_views_meta():
    def f(L):
        x = L.empty(3, 4, device="meta", requires_grad=True)
        w = L.empty(4, device="meta", requires_grad=True)
        y = x * 1
        y[0].mul_(w)
        return y.shape, y.grad_fn.name(), y.device.type
    same(f)


def test_inplace_on_views_gradcheck():
    def fn(x, w):
        y = x * 1
        y[1:, ::2].mul_(w)
        y.t()[0].copy_(w[:1].exp().expand(3))
        return y.tanh()
    x = ember.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    w = ember.tensor([0.3, -0.4], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (x, w))
    assert ember.autograd.gradgradcheck(fn, (x, w))


def test_double_backward_through_a_subgraph_that_gets_no_gradient():
    """The engine skips a node no gradient reaches and counts down what it feeds (the layer
    norm's mean branch here, on the second backward)."""
    torch = pytest.importorskip("torch")
    data = np.arange(6.0).reshape(2, 3) / 7
    results = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        out = lib.nn.functional.layer_norm(x, (3,))
        u = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        v = lib.autograd.grad(out, x, u, create_graph=True)[0]
        results.append(lib.autograd.grad(v, u, lib.ones(2, 3, dtype=lib.float64))[0].numpy())
    np.testing.assert_allclose(results[0], results[1], atol=1e-12)


# Which graphs a second backward without retain_graph may run through again: only reading a
# freed saved value is an error, so it depends on what each node saves (`x * 2` saves the
# wrapped number 2, `cat` saves only its operands' sizes, `x + 2` saves nothing).
_SECOND_BACKWARD = {
    "mul_number": lambda m, l: l * 2, "add_number": lambda m, l: l + 2,
    "mul_tensor": lambda m, l: l * m.ones(2, 2), "div_number": lambda m, l: l / 2,
    "pow": lambda m, l: l ** 2, "neg": lambda m, l: -l, "exp": lambda m, l: l.exp(),
    "rsub_number": lambda m, l: 2 - l, "relu": lambda m, l: l.relu(),
    "mm": lambda m, l: l @ m.ones(2, 2), "view": lambda m, l: l.view(4),
    "clamp": lambda m, l: l.clamp(0), "mean": lambda m, l: l.mean(0),
    "sub_alpha": lambda m, l: l.sub(1, alpha=2), "index": lambda m, l: l[0],
    "cat": lambda m, l: m.cat([l, l]), "stack": lambda m, l: m.stack([l, l * 3]),
}


@pytest.mark.parametrize("name", sorted(_SECOND_BACKWARD))
def test_second_backward_raises_where_torch_does(name):
    def outcome(m):
        l = m.ones(2, 2, requires_grad=True)
        s = _SECOND_BACKWARD[name](m, l).sum()
        s.backward()
        try:
            s.backward()
        except RuntimeError as e:
            assert "backward through the graph a second time" in str(e)
            return "raises"
        return "runs"
    assert outcome(ember) == outcome(torch)


# Ops whose derivative selects (PyTorch's formulas use where / masked_fill / zeros), so the
# NaN gradient of an element the output does not depend on is dropped, not spread by grad * 0.
NAN_GRADIENT_OPS = {
    "clamp": lambda m, x: x.clamp(0.1, 1.0),
    "clamp_tensor": lambda m, x: x.clamp(m.full_like(x, 0.1), m.full_like(x, 1.0)),
    "clamp_min": lambda m, x: m.clamp_min(x, 0.1),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "relu6": lambda m, x: m.nn.functional.relu6(x),
    "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x),
    "hardswish": lambda m, x: m.nn.functional.hardswish(3 * x),
    "hardshrink": lambda m, x: m.nn.functional.hardshrink(x, 0.6),
    "softshrink": lambda m, x: m.nn.functional.softshrink(x, 0.6),
    "maximum": lambda m, x: m.maximum(x, m.full_like(x, 0.5)),
    "minimum_other": lambda m, x: m.minimum(m.full_like(x, 0.5), x),
    "max": lambda m, x: x.max().expand(6),
    "min": lambda m, x: x.min().expand(6),
    "median": lambda m, x: x.median().expand(6),
    "amax": lambda m, x: x.reshape(2, 3).amax(1).repeat(3),
    "floor": lambda m, x: x.floor(),
    "sign": lambda m, x: x.sign(),
    "div_floor": lambda m, x: m.div(x, m.full_like(x, 3.0), rounding_mode="floor"),
    "pow_0": lambda m, x: x.pow(0),
    "copy_": lambda m, x: x.clone().copy_(m.ones(6, dtype=m.float64)),
    "fill_": lambda m, x: x.clone().fill_(2.0),
    "copysign_other": lambda m, x: m.copysign(m.ones(6, dtype=m.float64), x),
    "margin_ranking_loss": lambda m, x: m.nn.functional.margin_ranking_loss(
        x, m.zeros(6, dtype=m.float64), m.ones(6, dtype=m.float64), reduction="none"),
}


@pytest.mark.parametrize("name", sorted(NAN_GRADIENT_OPS))
def test_nan_gradient_where_the_output_does_not_depend(name):
    def f(m):
        x = m.tensor([-1.5, 0.0, 0.5, 2.0, 7.0, 0.5], dtype=m.float64, requires_grad=True)
        out = NAN_GRADIENT_OPS[name](m, x)
        return m.autograd.grad(out, x, m.full(out.shape, float("nan"), dtype=m.float64))[0]
    same(f)


def test_hardsigmoid_gradient_has_torchs_not_implemented_node():
    # its derivative is hardsigmoid_backward, whose own derivative PyTorch does not implement:
    # a create_graph gradient carries a NotImplemented node that refuses a second backward
    outcomes = []
    for m in (torch, ember):
        x = m.tensor([-4.0, -3.0, 0.5, 3.0, 5.0], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError) as e:
            g.sum().backward()
        outcomes.append((g.tolist(), type(g.grad_fn).__name__, str(e.value)))
    assert outcomes[0] == outcomes[1]
    assert "hardsigmoid_backward is not implemented" in outcomes[1][2]
