"""gradcheck / gradgradcheck and the engine pieces found by running the second part of PyTorch's
test/test_autograd.py (TestAutograd) on ember: each check runs on torch and on ember and the
outcomes must agree (a value, or the same exception class and message)."""
import warnings

import pytest

import ember
from _ported import same

torch = pytest.importorskip("torch")


def _identity_plus(L, eps):
    """x -> x.clone() whose backward adds `eps` (not multiplied by grad_output)."""
    def fn(x):
        y = x.clone()
        y.register_hook(lambda g: g + eps)
        return y
    return fn


def _nondet(L, jitter):
    class NonDet(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * (1 + L.rand_like(g) * jitter)
    return NonDet.apply


def _returns_input_jvp(L):
    class UserFn(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 2, y.clone()

        @staticmethod
        def jvp(ctx, xt, yt):
            return xt * 2, yt

        @staticmethod
        def backward(ctx, gx, gy):
            return gx * 2, gy
    return UserFn.apply


# (name, fn(L) -> outcome, message regex)
CASES = [
    ("passes", lambda L: L.autograd.gradcheck(
        lambda x: x.sin() * 2, L.rand(3, dtype=L.float64, requires_grad=True)), None),
    ("jacobian_mismatch", lambda L: L.autograd.gradcheck(
        _identity_plus(L, 1e-2), L.ones(2, 2, dtype=L.float64, requires_grad=True)),
     "Jacobian mismatch for output 0 with respect to input 0"),
    ("mismatch_no_raise", lambda L: L.autograd.gradcheck(
        _identity_plus(L, 1e-2), L.ones(2, 2, dtype=L.float64, requires_grad=True),
        raise_exception=False), None),
    ("not_mul_by_grad_output", lambda L: L.autograd.gradcheck(
        _identity_plus(L, 1e-2), L.ones(1, dtype=L.float64, requires_grad=True), atol=1e-1),
     "backward not multiplied by grad_output"),
    ("not_reentrant", lambda L: L.autograd.gradcheck(
        _nondet(L, 1e-6), L.randn(3, dtype=L.float64, requires_grad=True)),
     "Backward is not reentrant"),
    ("nondet_tol", lambda L: L.autograd.gradcheck(
        _nondet(L, 1e-6), L.randn(3, dtype=L.float64, requires_grad=True), nondet_tol=1e-5),
     None),
    ("stride_0", lambda L: L.autograd.gradcheck(
        lambda x: x, L.ones(1, dtype=L.float64, requires_grad=True).expand(2, 2),
        raise_exception=False), "The 0th input has a dimension with stride 0"),
    ("none_requires_grad", lambda L: L.autograd.gradcheck(lambda x: x, L.rand(2)),
     "at least one input tensor to require gradient"),
    ("complex_outputs_imag_part", lambda L: L.autograd.gradcheck(
        _identity_plus(L, 1e-2), L.ones(2, dtype=L.complex128, requires_grad=True)),
     "While considering the imaginary part of complex outputs only"),
    ("complex_and_real_outputs", lambda L: L.autograd.gradcheck(
        lambda z: (z * (1 + 2j), L.real(z).exp()), L.rand(2, 2, dtype=L.complex128,
                                                        requires_grad=True)), None),
    ("complex_input_norm", lambda L: L.autograd.gradcheck(
        lambda z: 1.0 / L.linalg.norm(z), 0.5 + L.rand(3, dtype=L.complex128,
                                                        requires_grad=True)), None),
    ("output_shape_changes", lambda L: L.autograd.gradcheck(
        lambda x: L.cat([x, x]) if bool((x >= 1).all()) else x,
        L.ones(1, dtype=L.float64, requires_grad=True)),
     "return outputs with the same shape when inputs are perturbed"),
    ("no_differentiable_output", lambda L: L.autograd.gradcheck(
        lambda x: L.tensor([x.item()]) * 1, L.ones(1, dtype=L.float64, requires_grad=True)),
     "Numerical gradient for function expected to be zero"),
    ("no_outputs", lambda L: L.autograd.gradcheck(
        lambda x: (), L.ones(1, dtype=L.float64, requires_grad=True)), None),
    ("sparse_input_masked", lambda L: L.autograd.gradcheck(
        lambda x, y: x * y.coalesce().to_dense(),
        (L.rand(2, 2, dtype=L.float64, requires_grad=True),
         L.tensor([[0.0, 0.5], [0.25, 0.0]], dtype=L.float64).to_sparse().requires_grad_()),
        masked=True), None),
    ("gradgradcheck", lambda L: L.autograd.gradgradcheck(
        lambda x: (x ** 3).sum(), L.rand(3, dtype=L.float64, requires_grad=True)), None),
    ("no_check_at_all", lambda L: L.autograd.gradcheck(
        lambda x: x, L.rand(1, dtype=L.float64, requires_grad=True), check_backward_ad=False),
     "Expected at least one of check_forward_ad or check_backward_ad"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_outcomes(case):
    _, fn, match = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(fn, match=match)


def _bad_jvp(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def jvp(ctx, xt):
            return xt * 1.1

        @staticmethod
        def backward(ctx, g):
            return g
    return Bad.apply


def test_gradcheck_forward_ad():
    """Forward-mode checks on ember (torch's first forward-AD gradcheck in a process takes
    seconds to initialize, so these expectations were taken from torch 2.13 once)."""
    L = ember
    x = L.rand(2, dtype=L.float64, requires_grad=True)
    y = L.rand(2, dtype=L.float64, requires_grad=True)
    z = L.rand(2, dtype=L.complex128, requires_grad=True)
    assert L.autograd.gradcheck(_returns_input_jvp(L), (x, y), check_forward_ad=True)
    assert L.autograd.gradcheck(lambda a, b: (a + b, b), (x, z), check_forward_ad=True,
                                check_backward_ad=False, check_undefined_grad=False)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for "
                                           "output 0 with respect to input 0"):
        L.autograd.gradcheck(_bad_jvp(L), (x,), check_forward_ad=True, check_backward_ad=False)


def test_deprecated_jacobian_helpers():
    def run(L):
        from importlib import import_module
        gc = import_module(L.__name__ + ".autograd.gradcheck")
        a = L.rand(2, dtype=L.float64, requires_grad=True)
        b = L.rand(2, dtype=L.float64, requires_grad=True)
        with pytest.warns(FutureWarning, match="was part of PyTorch's private API"):
            num = gc.get_numerical_jacobian(lambda t: 2 * t[0] + t[1], (a, b), eps=1e-6)
        with pytest.warns(FutureWarning, match="was part of PyTorch's private API"):
            ana, reentrant, sizes_ok, types_ok = gc.get_analytical_jacobian((a, b), 2 * a + b)
        return num, ana, reentrant, sizes_ok, types_ok
    same(run)


def test_queue_callback_and_reentrant_depths():
    def run(L):
        calls = []

        class Inner(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                L.autograd.Variable._execution_engine.queue_callback(lambda: calls.append("in"))
                return g

        class Outer(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                engine = L.autograd.Variable._execution_engine
                engine.queue_callback(lambda: (calls.append("out"), engine.queue_callback(
                    lambda: calls.append("out2"))))
                t = g.detach().requires_grad_()
                with L.enable_grad():
                    Inner.apply(t).sum().backward()
                calls.append("outer-done")
                return g

        Outer.apply(L.rand(3, requires_grad=True)).sum().backward()
        return calls
    same(run)
    for L in (torch, ember):
        with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                               "backward pass"):
            L.autograd.Variable._execution_engine.queue_callback(lambda: None)


def test_reentrant_checkpoint_refuses_grad():
    """PyTorch 2.13's message (its checkpoint's first use costs seconds, so not rerun here)."""
    a = ember.randn(2, 2, requires_grad=True)
    b = ember.utils.checkpoint.checkpoint(ember.exp, a, use_reentrant=True).sum()
    with pytest.raises(RuntimeError, match="When use_reentrant=True, torch.utils.checkpoint is "
                                           "incompatible with .grad\(\) or passing an `inputs` "
                                           "parameter to .backward\(\)"):
        ember.autograd.grad(b, (a,))
    assert ember.autograd._is_checkpoint_valid()
    ember.utils.checkpoint.checkpoint(ember.exp, a, use_reentrant=True).sum().backward()


def test_set_data_checks():
    def sparse(L):
        x = L.randn(1, 2)
        x.data = L.sparse_coo_tensor(L.zeros([1, 1]), L.ones([1]))
    same(sparse, match="incompatible tensor type")

    def int_into_requires_grad(L):
        a = L.tensor(1.0, requires_grad=True)
        a.data = L.tensor(3)
    same(int_into_requires_grad, match="must be floating point or complex dtype")

    def int_into_plain(L):
        a = L.tensor(1.0)
        a.data = L.tensor(3)
        return a
    same(int_into_plain)


def test_hook_sees_none_for_an_output_without_gradient():
    def run(L):
        seen = []
        a, b = L.randn(2, requires_grad=True).clone().unbind()
        b.register_hook(lambda g: seen.append(g))
        a.backward()
        return seen
    same(run)


def _saves(L, clear=False, with_none=False):
    class MyFn(L.autograd.Function):
        clear_saved_tensors_on_access = clear

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None) if with_none else ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors
            return g
    return MyFn


def test_saved_tensor_api():
    def raw(L):
        a = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = _saves(L, with_none=True).apply(a)
        saved = y.grad_fn._raw_saved_tensors
        assert isinstance(saved[0], L._C._autograd.SavedTensor)
        assert isinstance(saved[1], L.autograd.SavedTensor)
        assert saved[0].data is a and saved[0].unpack_hook is None
        saved[0].register_hooks(lambda x: x * 2, lambda x: x + 1)
        return saved[0].unpack_hook(saved[0].data), y.grad_fn.saved_tensors[0]
    same(raw)
    none = lambda L: L.autograd.Function and _saves(L, with_none=True).apply(  # noqa: E731
        L.randn(3, requires_grad=True)).grad_fn._raw_saved_tensors[1].register_hooks(
        lambda x: x, lambda x: x)
    same(none, match="with value None is forbidden")
    one_hook = lambda L: _saves(L).apply(  # noqa: E731
        L.randn(3, requires_grad=True)).grad_fn._raw_saved_tensors[0].register_hooks(id)
    same(one_hook, match="incompatible function arguments")
    same(lambda L: L.autograd.SavedTensor(), match="from Python is forbidden")

    def made(L):
        count = []
        a = L.tensor([3.0, 4.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda x: count.append("p") or x,
                                                  lambda x: count.append("u") or x):
            s = L._C._autograd._make_saved_tensor(a, is_output=False)
            return s.unpack(), s.unpack(), count
    same(made)


def test_clear_saved_tensors_on_access():
    same(lambda L: _saves(L, clear=True).apply(L.randn(3, requires_grad=True)).sum().backward(),
         match="can only be accessed once when clear_saved_tensors_on_access=True")
    same(lambda L: _saves(L, clear=False).apply(L.randn(3, requires_grad=True)).sum().backward())


def _dirty_fn(L, fresh=False):
    class Func(L.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            out = inp.clone().view_as(inp) if fresh else inp.add_(1)
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g
    return Func.apply


def test_mark_dirty_checks():
    same(lambda L: _dirty_fn(L, fresh=True)(L.tensor([1.0], requires_grad=True).clone()),
         match="ctx.mark_dirty\\(\\) received a tensor that was not an input")
    same(lambda L: _dirty_fn(L, fresh=True)(L.tensor([1.0])))
    same(lambda L: _dirty_fn(L)(L.tensor([1.0, 2.0], requires_grad=True).view_as(
        L.tensor([1.0, 2.0]))), match=None)
    a = lambda L: L.tensor([1.0, 2.0], requires_grad=True)  # noqa: E731
    same(lambda L: _dirty_fn(L)(a(L).view(2)),
         match="a view of a leaf Variable that requires grad is being used in an in-place")


def test_inplace_on_multi_output_view_of_leaf():
    """The multi-output view error comes before the view-of-a-leaf one, as in PyTorch."""
    def run(L):
        b, c = L.tensor([1.0, 2.0], requires_grad=True).split_with_sizes([1, 1])
        b.add_(1)
    same(run, match="Output 0 of SplitWithSizes is a view and is being modified inplace")


def _batched_grad_outcomes(L):
    class NumpyBackward(L.autograd.Function):   # a backward vmap cannot see through
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return L.tensor(g.detach().numpy() * 2, dtype=g.dtype)

    x = L.tensor([0.3, -1.2, 2.0], dtype=L.float64, requires_grad=True)
    w = L.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]], dtype=L.float64, requires_grad=True)
    out = [L.autograd.gradcheck(lambda a, b: (a @ b).sin(), (x, w), check_batched_grad=True),
           L.autograd.gradgradcheck(lambda a: (a * a).sin(), (x,), check_batched_grad=True),
           L.autograd.gradcheck(NumpyBackward.apply, (x,), check_batched_grad=False)]
    try:
        L.autograd.gradcheck(NumpyBackward.apply, (x,), check_batched_grad=True)
    except RuntimeError as e:
        out.append((type(e).__name__, str(e).splitlines()[0][:39],
                    "check_batched_grad=False" in str(e)))
    return out


def test_check_batched_grad_vmaps_the_backward():
    """check_batched_grad: the backward run under vmap must agree with two plain runs; a
    backward vmap cannot batch (one that leaves for NumPy) fails with PyTorch's message."""
    assert _batched_grad_outcomes(ember) == _batched_grad_outcomes(torch)
