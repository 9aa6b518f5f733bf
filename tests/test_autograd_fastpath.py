"""The autograd per-op fast path against torch: what the cheaper recording must keep.

Inputs at version 0 are saved bare (no SavedTensor), numbers passed for Tensor arguments are
saved bare and freed by name, nodes are made without __init__ (hooks default at class level),
saved values are per-class properties, and the engine runs hook-free nodes without the hook
checks. Each test runs one script in both libraries and compares results or exceptions.
"""
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")

import ember  # noqa: E402
from test_autograd import leaf, same  # noqa: E402


def test_bare_saved_input_modified_in_place_raises():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        a = x * 1          # a fresh result, version 0: saved bare by the mul below
        y = a * x
        a.add_(1)
        y.sum().backward()
    same(f)


def test_bare_saved_input_written_before_use_is_fine():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        a = x * 1
        a.mul_(2)          # version 1 before it is saved: saved with its version
        y = (a * x).sum()
        y.backward()
        return x.grad
    same(f)


def test_raw_saved_handle_of_bare_input_and_hooks():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        w = leaf(L, [4., 5., 6.])
        y = x * w
        seen = []
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda t: seen.append(1) or t)
        y.sum().backward()
        return x.grad, w.grad, len(seen)
    same(f)


def test_saved_attribute_values_and_missing_names():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        y = x * 2
        return y.grad_fn._saved_self  # not saved: `other` needs no gradient
    assert f(torch) is None and f(ember) is None

    def g(L):
        x = leaf(L, [1., 2., 3.])
        y = x.tanh()
        return y.grad_fn._saved_result, y.grad_fn._saved_result.grad_fn is None
    same(g)


def test_number_saved_for_tensor_argument_is_freed():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        y = (x * 2).sum()
        y.backward()
        y.backward()
    same(f)


def test_node_hooks_after_creation_still_run():
    def f(L):
        x = leaf(L, [1., 2., 3.])
        y = x.exp()
        order = []
        y.grad_fn.register_prehook(lambda go: order.append("pre"))
        y.grad_fn.register_hook(lambda gi, go: order.append("post"))
        y.register_hook(lambda g: order.append("tensor") or g * 2)
        z = y * 3
        z.retain_grad()
        z.sum().backward()
        return x.grad, z.grad, order
    same(f)


def test_node_metadata_and_name():
    def f(L):
        x = leaf(L, [1., 2.])
        y = x * x
        y.grad_fn.metadata["k"] = 1
        return y.grad_fn.name(), y.grad_fn.metadata, y.grad_fn.next_functions[0][0].name()
    same(f)


def test_sum_backward_expands_the_scalar_gradient():
    def f(L):
        x = leaf(L, [[1., 2.], [3., 4.]])
        g, = L.autograd.grad(x.sum() * 3, x, create_graph=True)
        (g * x).sum().backward()
        return g, x.grad, type(g.grad_fn).__name__
    same(f)
