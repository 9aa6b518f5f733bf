"""autograd.Function against torch (save_for_backward, needs_input_grad, mark_dirty,
mark_non_differentiable, set_materialize_grads, once_differentiable, setup_context, double
backward, errors), and gradcheck / gradgradcheck on ops and on custom Functions."""
import warnings

import numpy as np
import pytest
import torch

import ember
from test_autograd import leaf, same


def functions(L):
    """The same custom Functions, written against library L."""
    F = L.autograd.Function

    class Exp(F):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            r, = ctx.saved_tensors
            return g * r

    class ScaledMul(F):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            ctx.save_for_backward(x, y)
            return x * k * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            ScaledMul.needs = ctx.needs_input_grad
            return (g * ctx.k * y if ctx.needs_input_grad[0] else None, None,
                    g * ctx.k * x if ctx.needs_input_grad[2] else None)

    class Double_(F):  # in place
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class SortLike(F):
        @staticmethod
        def forward(ctx, x):
            order = L.tensor(np.argsort(x.numpy()))
            ctx.mark_non_differentiable(order)
            ctx.save_for_backward(order)
            return x[order], order

        @staticmethod
        def backward(ctx, gv, gi):
            order, = ctx.saved_tensors
            g = L.zeros_like(gv)
            g[order] = gv
            return g

    class TwoOut(F):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            TwoOut.seen = (g1 is None, g2 is None)
            out = 0
            if g1 is not None:
                out = out + g1
            if g2 is not None:
                out = out + 2 * g2
            return out, None

    class Square(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @L.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class MulSetup(F):  # forward without ctx, setup_context saves
        @staticmethod
        def forward(x, y, scale):
            return x * y * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, scale = inputs
            ctx.save_for_backward(x, y)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * ctx.scale, g * x * ctx.scale, None

    class Identity(F):  # returns its input
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Cube(F):  # backward written with differentiable ops: double backward works
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    class Doubled(F):  # forward 2x; the subclasses' backwards go wrong in different ways
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Wrong(Doubled):
        @staticmethod
        def backward(ctx, g):
            return g * 3

    class TooMany(Doubled):
        @staticmethod
        def backward(ctx, g):
            return g, g

    class BadShape(Doubled):
        @staticmethod
        def backward(ctx, g):
            return L.ones(5)

    return locals()


def test_save_for_backward_and_node():
    def f(L):
        Exp = functions(L)["Exp"]
        x = leaf(L, [1., 2.])
        y = Exp.apply(x)
        y.sum().backward()
        return (y, x.grad, y.grad_fn.name(), type(y.grad_fn).__name__,
                [n.name() for n, _ in y.grad_fn.next_functions], y.requires_grad, y.is_leaf)
    same(f)


def test_non_tensor_args_and_needs_input_grad():
    def f(L):
        ScaledMul = functions(L)["ScaledMul"]
        x, y = leaf(L, [1., 2.]), L.tensor([3., 4.])
        z = ScaledMul.apply(x, 5, y)
        z.sum().backward()
        return z, x.grad, ScaledMul.needs, len(z.grad_fn.next_functions)
    same(f)


def test_mark_dirty():
    def f(L):
        Double_ = functions(L)["Double_"]
        x = leaf(L, [1., 2.])
        a = x.clone()
        b = Double_.apply(a)
        info = [b is a, a.grad_fn.name(), a._version]
        (b * b).sum().backward()
        return info, x.grad
    same(f)

    def on_leaf(L):
        functions(L)["Double_"].apply(leaf(L, [1., 2.]))
    same(on_leaf)


def test_mark_dirty_on_a_view():
    def f(L):
        Double_ = functions(L)["Double_"]
        x = leaf(L, [1., 2., 3.])
        y = x * 1
        Double_.apply(y[1:])
        (y * L.tensor([1., 2., 3.])).sum().backward()
        return y, x.grad, y.grad_fn.name()
    same(f)


def test_mark_non_differentiable():
    def f(L):
        SortLike = functions(L)["SortLike"]
        x = leaf(L, [3., 1., 2.])
        v, i = SortLike.apply(x)
        flags = [v.requires_grad, i.requires_grad]
        (v * L.tensor([1., 2., 3.])).sum().backward()
        return flags, v, i, x.grad
    same(f)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    def f(L):
        TwoOut = functions(L)["TwoOut"]
        x = leaf(L, [3., 1.])
        a, b = TwoOut.apply(x, materialize)
        b.sum().backward()
        return TwoOut.seen, x.grad
    same(f)


def test_once_differentiable():
    def f(L):
        Square = functions(L)["Square"]
        x = leaf(L, [3., 1.])
        g, = L.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        return g, g.requires_grad
    same(f, message=False)


def test_setup_context_style():
    def f(L):
        MulSetup = functions(L)["MulSetup"]
        x, y = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        z = MulSetup.apply(x, y, 2.0)
        z.sum().backward()
        return z, x.grad, y.grad
    same(f)


def test_returning_an_input():
    def f(L):
        Identity = functions(L)["Identity"]
        x = leaf(L, [1., 2.])
        y = Identity.apply(x)
        info = [y is x, y.grad_fn.name(), y.data_ptr() == x.data_ptr(), y._base is x,
                x.grad_fn is None]
        y.sum().backward()
        return info, x.grad
    same(f)


def test_double_backward_through_function():
    def f(L):
        Cube = functions(L)["Cube"]
        x = leaf(L, [1., 2.], L.float64)
        g, = L.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x)
        return g, g2
    same(f)


def test_no_grad_needed():
    def f(L):
        Exp = functions(L)["Exp"]
        y = Exp.apply(L.tensor([1., 2.]))
        with L.no_grad():
            z = Exp.apply(leaf(L, [1., 2.]))
        return y.requires_grad, y.grad_fn, z.requires_grad
    same(f)


def test_saved_tensors_freed_and_guarded():
    def twice(L):
        Exp = functions(L)["Exp"]
        y = Exp.apply(leaf(L, [1., 2.])).sum()
        y.backward()
        y.backward()
    same(twice)

    def nothing_saved(L):
        NoSaves = functions(L)["Doubled"]
        x = leaf(L, [1., 2.])
        y = NoSaves.apply(x).sum()
        y.backward()
        y.backward()
        return x.grad
    same(nothing_saved)

    def modified(L):
        Exp = functions(L)["Exp"]
        y = Exp.apply(leaf(L, [1., 2.]))
        y.add_(1)
        y.sum().backward()
    same(modified)


@pytest.mark.parametrize("name", ["TooMany", "BadShape"])
def test_wrong_gradients(name):
    def f(L):
        fn = functions(L)[name]
        fn.apply(leaf(L, [1., 2.])).sum().backward()
    same(f)


def test_legacy_call_and_bad_save():
    def legacy(L):
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            fn = functions(L)["Exp"]()
        fn(leaf(L, [1.]))
    same(legacy)

    def bad_save(L):
        class Bad(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        Bad.apply(leaf(L, [1.]))
    same(bad_save, message=False)


# ---- gradcheck ------------------------------------------------------------------------------
def _f64(L, values):
    return L.tensor(values, dtype=L.float64, requires_grad=True)


def test_gradcheck_passes_for_ops():
    def f(L):
        x = _f64(L, [[0.1, 0.2], [0.3, 0.5]])
        w = _f64(L, [[1.1, -0.2], [0.3, 0.5]])
        fn = lambda a, b: ((a @ b).tanh() * a.exp(), (a - b).pow(2).sum(0))  # noqa: E731
        non_contiguous = _f64(L, [[0.1, 0.2], [0.3, 0.5]]).detach().t().requires_grad_()
        return (L.autograd.gradcheck(fn, (x, w)), L.autograd.gradgradcheck(fn, (x, w)),
                L.autograd.gradcheck(lambda a: a.sigmoid() * 3, (non_contiguous,)))
    same(f)


def test_gradcheck_custom_function():
    def f(L):
        F = functions(L)
        x = _f64(L, [1., 2.])
        return (L.autograd.gradcheck(F["Cube"].apply, (x,)),
                L.autograd.gradgradcheck(F["Cube"].apply, (x,)),
                L.autograd.gradcheck(F["ScaledMul"].apply, (x, 3, _f64(L, [0.5, 2.]))))
    same(f)


def test_gradcheck_catches_a_wrong_backward():
    def f(L):
        x = _f64(L, [1., 2.])
        return L.autograd.gradcheck(functions(L)["Wrong"].apply, (x,), raise_exception=False)
    same(f)

    x = _f64(ember, [1., 2.])
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to "
                                           "input 0") as info:
        ember.autograd.gradcheck(functions(ember)["Wrong"].apply, (x,))
    from ember.autograd.gradcheck import GradcheckError
    assert isinstance(info.value, GradcheckError)


def test_gradgradcheck_catches_a_wrong_double_backward():
    def f(L):
        class CubeWrong2(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x.detach() ** 2 * g  # right value, no second derivative
        x = _f64(L, [1., 2.])
        return (L.autograd.gradcheck(CubeWrong2.apply, (x,)),
                L.autograd.gradgradcheck(CubeWrong2.apply, (x,), raise_exception=False))
    same(f)


def test_gradcheck_input_checks():
    same(lambda L: L.autograd.gradcheck(lambda a: a * 2, (L.tensor([0.1], dtype=L.float64),)))

    def float32(L):
        x = L.tensor([0.1, 0.2], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ok = L.autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2)
        return ok, [str(m.message) for m in w]
    same(float32)

    def detached_output(L):  # nothing differentiable comes out, yet the output moves
        x = _f64(L, [0.1, 0.2])
        return L.autograd.gradcheck(lambda a: a.detach() * 2, (x,), raise_exception=False)
    same(detached_output)
