"""Grad modes against torch: no_grad, enable_grad, set_grad_enabled (context manager,
decorator, plain call), inference_mode and inference tensors."""
import pytest
import torch

import ember
from test_autograd import leaf, same


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    torch.set_grad_enabled(True)
    ember.set_grad_enabled(True)


def test_context_managers():
    def f(L):
        x = leaf(L, [1., 2.])
        r = []
        with L.no_grad():
            r.append((x * 2).requires_grad)
            with L.enable_grad():
                r.append((x * 2).requires_grad)
            r.append(L.is_grad_enabled())
        with L.set_grad_enabled(False):
            r.append((x * 2).requires_grad)
            with L.set_grad_enabled(True):
                r.append((x * 2).requires_grad)
        r.append(L.is_grad_enabled())
        return r
    same(f)


def test_decorators():
    def f(L):
        x = leaf(L, [1., 2.])

        @L.no_grad()
        def a():
            return (x * 2).requires_grad

        @L.no_grad
        def b():
            return (x * 2).requires_grad

        @L.enable_grad()
        def c():
            return (x * 2).requires_grad

        @L.enable_grad
        def d():
            return (x * 2).requires_grad

        @L.set_grad_enabled(False)
        def e():
            return (x * 2).requires_grad
        defined = L.is_grad_enabled()  # decorating changes nothing until the call
        with L.no_grad():
            inner = (c(), d())
        return a(), b(), inner, e(), defined, L.is_grad_enabled(), a.__name__
    same(f)


def test_decorated_generator():
    def f(L):
        x = leaf(L, [1., 2.])

        @L.no_grad()
        def gen():
            for _ in range(2):
                yield (x * 2).requires_grad, L.is_grad_enabled()
        return list(gen()), L.is_grad_enabled()
    same(f)


def test_set_grad_enabled_as_a_function():
    def f(L):
        x = leaf(L, [1., 2.])
        L.set_grad_enabled(False)
        r = [(x * 2).requires_grad, L.is_grad_enabled()]
        L.set_grad_enabled(True)
        r += [(x * 2).requires_grad, L.is_grad_enabled()]
        return r
    same(f)


def test_modes_restore_on_exception():
    def f(L):
        try:
            with L.no_grad():
                raise KeyError("x")
        except KeyError:
            pass
        return L.is_grad_enabled()
    same(f)


def test_grad_mode_leaves_leaf_flags_alone():
    def f(L):
        with L.no_grad():
            x = leaf(L, [1., 2.])
            y = x * 2
        return x.requires_grad, y.requires_grad, y.grad_fn, x.is_leaf
    same(f)


def test_inference_mode():
    def f(L):
        x = leaf(L, [1., 2.])
        r = []
        with L.inference_mode():
            y = x * 2
            v = x[0]
            z = L.ones(2)
            w = z[0]
            r += [y.requires_grad, y.is_inference(), v.is_inference(), z.is_inference(),
                  w.is_inference(), L.is_inference_mode_enabled(), L.is_grad_enabled()]
            with L.inference_mode(False):
                r += [L.is_grad_enabled(), L.is_inference_mode_enabled(),
                      L.ones(1).is_inference()]
            with L.no_grad():
                r.append(L.ones(1).is_inference())
        r += [x.is_inference(), L.is_inference_mode_enabled(), L.is_grad_enabled()]
        return r
    same(f)


def test_inference_mode_decorator():
    def f(L):
        @L.inference_mode()
        def a():
            return L.ones(2).is_inference()

        @L.inference_mode
        def b():
            return L.ones(2).is_inference()
        return a(), b(), L.is_inference_mode_enabled()
    same(f)


def test_inference_tensors_outside_inference_mode():
    def saved(L):
        with L.inference_mode():
            y = L.ones(2)
        x = leaf(L, [1., 2.])
        return (x + y).requires_grad, x * y  # add saves nothing; mul saves y
    same(saved)

    def inplace(L):
        with L.inference_mode():
            y = L.ones(2)
            y.add_(1)  # fine inside
        y.add_(1)
    same(inplace)

    def normal_tensor_inplace_inside(L):
        x = L.ones(2)
        with L.inference_mode():
            x.add_(1)
        return x, x.is_inference()
    same(normal_tensor_inplace_inside)


def test_grad_mode_is_thread_local():
    """As PyTorch's: a new thread starts with grad mode on and not in inference mode whatever
    its parent has; switching it in one thread leaves the others alone; two threads running
    backward with create_graph and no_grad interleaved each end as they began."""
    import threading

    def f(L):
        seen = []

        def child():
            seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
            L.set_grad_enabled(False)          # this thread only
            seen.append(L.is_grad_enabled())

        with L.no_grad():
            t = threading.Thread(target=child)
            t.start()
            t.join()
            seen.append(L.is_grad_enabled())
        with L.inference_mode():
            t = threading.Thread(target=child)
            t.start()
            t.join()
        seen.append(L.is_grad_enabled())

        barrier = threading.Barrier(2, timeout=30)

        def trainer(k, out):
            x = L.tensor([1., 2.], requires_grad=True)
            for _ in range(20):
                y = (x * x * k).sum()
                barrier.wait()
                (g,) = L.autograd.grad(y, x, create_graph=True)
                with L.no_grad():
                    barrier.wait()
                out.append(L.is_grad_enabled() and g.requires_grad)
        outs = [[], []]
        ts = [threading.Thread(target=trainer, args=(k, outs[k])) for k in (0, 1)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        seen.append([all(o) for o in outs])
        seen.append(L.is_grad_enabled())
        return seen

    assert f(ember) == f(torch) == [(True, False), False, False, (True, False), False, True,
                                    [True, True], True]
