"""Fixes found by running PyTorch's test/autograd/test_functional.py, test/autograd/test_complex.py
and test/test_autograd.py's classes after TestAutograd on ember, each checked against PyTorch on
the same inputs."""
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = (ember, torch)


def _logging_tensor(L):
    return importlib.import_module(L.__name__ + ".testing._internal.logging_tensor").LoggingTensor


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_of_wrapper_subclass_inputs(fast_mode):
    """gradcheck perturbs a wrapper subclass (no data of its own) through its own dispatch and
    reads its outputs the same way; the version counter autograd saved is left alone."""
    def run(L):
        LT = _logging_tensor(L)
        x = LT(L.tensor([0.3, 0.7, 1.1], dtype=L.double), requires_grad=True)
        y = LT(L.tensor([0.5, -0.2, 0.9], dtype=L.double), requires_grad=True)
        ok = L.autograd.gradcheck(lambda a, b: (a.exp() * b, a.sum() * b), (x, y),
                                  fast_mode=fast_mode)
        okgg = L.autograd.gradgradcheck(lambda a, b: (a.exp() * b).sum(), (x, y),
                                        fast_mode=fast_mode)
        return ok, okgg, x._version, x.elem.tolist()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_of_wrapper_subclass_finds_a_wrong_gradient(fast_mode):
    def run(L):
        LT = _logging_tensor(L)

        class Wrong(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * a

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = LT(L.tensor([0.3, 0.7], dtype=L.double), requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            L.autograd.gradcheck(Wrong.apply, (x,), fast_mode=fast_mode)
        return x.elem.tolist()
    a, b = run(ember), run(torch)
    np.testing.assert_allclose(a, b)


def _sac(L, policy, **kw):
    import functools
    return functools.partial(L.utils.checkpoint.create_selective_checkpoint_contexts, policy,
                             **kw)


def _must_save(L, *ops):
    CP = L.utils.checkpoint.CheckpointPolicy

    def policy(ctx, op, *args, **kwargs):
        return CP.MUST_SAVE if op in [getattr(L.ops.aten, o).default for o in ops] else \
            CP.PREFER_RECOMPUTE
    return policy


def test_selective_checkpoint_refuses_an_op_packet():
    for L in LIBS:
        with pytest.raises(ValueError, match="update the OpOverloadPacket to a specific"):
            L.utils.checkpoint.create_selective_checkpoint_contexts([L.ops.aten.sin])


@pytest.mark.parametrize("allow", [False, True])
def test_selective_checkpoint_kept_result_modified_in_place(allow):
    def run(L):
        x = L.tensor([0.1, 0.2, 0.3], requires_grad=True)
        out = L.utils.checkpoint.checkpoint(
            lambda t: t.sin().mul_(2).cos().exp(), x, use_reentrant=False,
            context_fn=_sac(L, _must_save(L, "sin"), allow_cache_entry_mutation=allow))
        try:
            out.sum().backward()
        except RuntimeError as e:
            return "has been mutated" in str(e)
        return x.grad.tolist()
    a, b = run(ember), run(torch)
    assert (a is True) == (b is True) == (not allow)
    if allow:
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_selective_checkpoint_second_backward_refused():
    def run(L):
        x = L.tensor([0.1, 0.2, 0.3], requires_grad=True)
        out = L.utils.checkpoint.checkpoint(lambda t: t.sin().cos().exp(), x,
                                            use_reentrant=False,
                                            context_fn=_sac(L, _must_save(L, "sin")))
        out.sum().backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="Trying to backward an extra time"):
            out.sum().backward(retain_graph=True)
        return x.grad.tolist()
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-6)


def test_selective_checkpoint_policy_runs_in_forward_only_and_sees_the_output():
    def run(L):
        CP = L.utils.checkpoint.CheckpointPolicy
        seen = []

        def policy(ctx, op, *args, **kwargs):
            if op is L.ops.aten.mul.Tensor:
                seen.append((ctx.is_recompute, ctx.op_output.tolist()))
            return CP.PREFER_RECOMPUTE

        x = L.tensor([1.0, 2.0], requires_grad=True)
        out = L.utils.checkpoint.checkpoint(lambda t: (t * t).exp(), x, use_reentrant=False,
                                            context_fn=_sac(L, policy))
        out.sum().backward()
        return seen
    assert run(ember) == run(torch)


def test_selective_checkpoint_keeps_a_custom_ops_result():
    """A custom op's autograd Function runs the op below autograd through the dispatch modes,
    so selective checkpointing sees (and keeps) the op itself."""
    def run(L, ns):
        counter = [0]
        with L.library._scoped_library(ns, "FRAGMENT"):
            @L.library.custom_op(f"{ns}::sin_with_extra", mutates_args=())
            def sin_with_extra(x: L.Tensor) -> tuple[L.Tensor, int]:
                counter[0] += 1
                return x.sin(), 2

            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            def backward(ctx, grad, _unused):
                return grad * ctx.saved_tensors[0].cos()

            L.library.register_autograd(f"{ns}::sin_with_extra", backward,
                                        setup_context=setup_context)
            op = getattr(L.ops, ns).sin_with_extra.default
            x = L.tensor([0.5, 1.0], requires_grad=True)
            out = L.utils.checkpoint.checkpoint(
                lambda t: (op(t)[0] * t.sin().exp()).sin(), x, use_reentrant=False,
                context_fn=_sac(L, [op]))
            (g,) = L.autograd.grad(out.sum(), (x,))
        return counter[0], g.tolist()
    a, b = run(ember, "autofunc_sac_e"), run(torch, "autofunc_sac_t")
    assert a[0] == b[0] == 1
    np.testing.assert_allclose(a[1], b[1], rtol=1e-6)


def _fw(L):
    return L.autograd.forward_ad


def test_make_dual_lays_the_tangent_out_as_the_primal():
    """A primal that is a view into a larger storage gets a copy of its tangent laid out the
    same way (so a view of the primal's whole storage is a view of the tangent's too)."""
    def run(L):
        fw = _fw(L)
        primal = L.arange(5.0)[:4]
        tangent = L.tensor([1.0, 2.0, 3.0, 4.0])
        with fw.dual_level():
            dual = fw.make_dual(primal, tangent)
            t = fw.unpack_dual(dual).tangent
            t *= 2
            whole = fw.unpack_dual(dual.as_strided((5,), (1,), 0)).tangent
            return t is tangent, tangent.tolist(), t.tolist(), whole.tolist()
    assert run(ember) == run(torch)


def test_make_dual_keeps_a_tangent_only_with_the_primals_conj_and_neg_bits():
    def run(L):
        fw = _fw(L)
        keys = {"none": lambda x: x, "conj": lambda x: x.conj(), "neg": lambda x: x._neg_view()}
        out = []
        for pk in keys:
            for tk in keys:
                x = keys[pk](L.tensor([[1 + 2j, 3 - 1j]], dtype=L.cdouble))
                t = keys[tk](L.tensor([[0.5 - 1j, 2 + 1j]], dtype=L.cdouble))
                with fw.dual_level():
                    got = fw.unpack_dual(fw.make_dual(x, t)).tangent
                    out.append((pk, tk, got is t, got.is_conj(), got.is_neg(),
                                L.view_as_real(got.resolve_conj().resolve_neg()).tolist()))
        return out
    assert run(ember) == run(torch)


def test_inplace_on_dual_writes_its_tangent_in_place():
    """make_dual's result is not a forward-differentiable view: an in-place op on it updates
    the tangent passed in (in place) and gives the primal's base no tangent; the unpacked
    primal and tangent are plain tensors again."""
    def run(L):
        fw = _fw(L)
        foo, bar = L.tensor([1.0, 2.0]), L.tensor([1.0, 1.0])
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            dual *= 2
            res = [fw.unpack_dual(foo).tangent is None, bar.tolist(), foo.tolist()]
            p, t = fw.unpack_dual(dual)
            p *= 2
            res += [fw.unpack_dual(dual).tangent.tolist(), fw.unpack_dual(p).tangent is None]
            t *= 2
            res += [fw.unpack_dual(dual).primal.tolist(), fw.unpack_dual(dual).tangent.tolist()]
        return res
    assert run(ember) == run(torch)


def test_inplace_through_a_view_updates_the_bases_tangent():
    def run(L):
        fw = _fw(L)
        res = []
        with fw.dual_level():
            dual = fw.make_dual(L.tensor([1.0, 2.0]), L.tensor([1.0, 1.0]))
            view = dual.narrow(0, 0, 1)
            view *= 3
            res += [fw.unpack_dual(dual).tangent.tolist(), fw.unpack_dual(view).tangent.tolist()]
            baz = L.zeros(2)
            baz[0] = dual[1]      # a view of a tensor with no tangent: its base gets one
            res.append(fw.unpack_dual(baz).tangent.tolist())
            base = L.zeros(2, 2)
            tview = base.transpose(0, 1)
            tview.add_(fw.make_dual(L.ones(2, 2), L.tensor([[1.0, 2.0], [3.0, 4.0]])))
            tview *= 2
            res.append(fw.unpack_dual(base).tangent.tolist())
            plain = L.zeros(2)
            plain.detach().add_(dual)   # detach is no view for forward AD either
            res.append(fw.unpack_dual(plain).tangent is None)
        return res
    assert run(ember) == run(torch)


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_unsafe_split_pieces_may_be_written_in_place(split):
    """unsafe_* pieces share the input's memory but are no views for autograd and have their
    own version counters: writing one in place is allowed and leaves the others valid."""
    arg = {"unsafe_split": 1, "unsafe_split_with_sizes": (1, 1, 1), "unsafe_chunk": 3}[split]

    def run(L):
        a = L.arange(9.0).reshape(3, 3).requires_grad_()
        b = a + a
        s1, s2, s3 = getattr(b, split)(arg)
        s1.mul_(s2)
        s1.sum().backward()
        return s1._is_view(), s2._version, b.tolist(), a.grad.tolist()
    assert run(ember) == run(torch)


def test_backward_and_grad_hand_themselves_to_torch_function():
    def run(L):
        seen = []

        class Wrapped(L.Tensor):
            @staticmethod
            def __new__(cls, data):
                return L.Tensor._make_wrapper_subclass(cls, data.size(), dtype=data.dtype,
                                                       requires_grad=data.requires_grad)

            def __init__(self, data):
                self._data = data

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func in (L.autograd.backward, L.autograd.grad):
                    seen.append(func.__name__)

                def unwrap(a):
                    if isinstance(a, tuple):
                        return tuple(unwrap(x) for x in a)
                    return a._data if isinstance(a, cls) else a
                return func(*unwrap(args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                raise AssertionError("not reached: __torch_function__ unwraps")

        x = L.tensor([1.0, 2.0], requires_grad=True)
        L.autograd.backward(Wrapped(x * 2), L.ones(2))
        (g,) = L.autograd.grad(Wrapped((x * 3).sum()), (x,))
        return seen, x.grad.tolist(), g.tolist()
    assert run(ember) == run(torch)


def test_jit_private_fork_and_wait():
    def run(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        fut = L.jit._fork(lambda t: L.autograd.grad([(t * t).sum()], [t]), x)
        return [g.tolist() for g in L.jit._wait(fut)], L.jit._fork is L.jit.fork
    assert run(ember) == run(torch)


def test_convolution_backward_leaves_out_masked_gradients_under_forward_ad():
    rng = np.random.default_rng(0)
    w, x, g, t = (rng.standard_normal(s) for s in ((2, 1, 3, 3), (1, 1, 5, 5), (1, 2, 3, 3),
                                                     (2, 1, 3, 3)))

    def run(L):
        fw = _fw(L)
        with fw.dual_level():
            dual_w = fw.make_dual(L.tensor(w), L.tensor(t))
            gi, gw, gb = L.ops.aten.convolution_backward(
                L.tensor(g), L.tensor(x), dual_w, [0], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                [False, True, True])
            return gi is None, gw.tolist(), gb.tolist(), fw.unpack_dual(gw).tangent
    a, b = run(ember), run(torch)
    assert a[0] is b[0] is True
    np.testing.assert_allclose(a[1], b[1], rtol=1e-6)
    np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
    assert (a[3] is None) == (b[3] is None)


def test_test_warn_in_autograd_warns_from_backward():
    import warnings as w

    def run(L):
        a = L.zeros((), requires_grad=True)
        b = L._C._nn._test_warn_in_autograd(a)
        with w.catch_warnings(record=True) as caught:
            w.simplefilter("always")
            b.backward()
        # (torch's C++ warning adds where it was raised: " (Triggered internally at ...)")
        return [str(c.message).split(" (Triggered")[0] for c in caught
                if issubclass(c.category, UserWarning)], \
            a.grad.item()
    assert run(ember) == run(torch)
