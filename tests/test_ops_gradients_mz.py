"""Regression tests for what PyTorch's test/test_ops_gradients.py (TestBwdGradients over op_db's
ops m..z, linalg.*, nn.functional.*, special.*, and custom_op_db) found: each compares ember
with torch on the same inputs."""
import itertools

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_count = itertools.count()


def _both(fn):
    return fn(ember), fn(torch)


def _np(x):
    return x.detach().resolve_conj().resolve_neg().numpy()


# ---- torch.library.custom_op: Tensor[] arguments and returns, keyword-only arguments ----------
def _define_ops(m, ns):
    """custom_op_db's shapes of op, defined in library m: a tensor-list input, a tensor-list
    output, a keyword-only scalar (annotated with torch.types.Number)."""
    Tensor, Number = m.Tensor, m.types.Number

    def cat(xs: list[Tensor], dim: int) -> Tensor:
        return m.tensor(np.concatenate([x.numpy() for x in xs], axis=dim))
    cat.__annotations__ = {"xs": list[Tensor], "dim": int, "return": Tensor}
    cat = m.library.custom_op(f"{ns}::cat", mutates_args=())(cat)

    def cat_setup(ctx, inputs, output):
        xs, dim = inputs
        ctx.sizes, ctx.dim = [x.shape[dim] for x in xs], dim
        ctx.needs = ctx.needs_input_grad

    def cat_backward(ctx, grad):
        return list(grad.split(ctx.sizes, ctx.dim)), None
    cat.register_autograd(cat_backward, setup_context=cat_setup)

    def split(x: Tensor, sections: list[int], dim: int) -> list[Tensor]:
        return [m.tensor(a) for a in np.split(x.numpy(), np.cumsum(sections)[:-1], axis=dim)]
    split.__annotations__ = {"x": Tensor, "sections": list[int], "dim": int,
                             "return": list[Tensor]}
    split = m.library.custom_op(f"{ns}::split", mutates_args=())(split)

    def split_setup(ctx, inputs, output):
        ctx.dim = inputs[2]

    def split_backward(ctx, grads):
        return m.cat(grads, ctx.dim), None, None
    split.register_autograd(split_backward, setup_context=split_setup)

    def scale(x: Tensor, *, by: Number) -> Tensor:
        return m.tensor(x.numpy() * by)
    scale.__annotations__ = {"x": Tensor, "by": Number, "return": Tensor}
    scale = m.library.custom_op(f"{ns}::scale", mutates_args=())(scale)

    def scale_setup(ctx, inputs, keyword_only_inputs, output):
        ctx.by = keyword_only_inputs["by"]

    def scale_backward(ctx, grad):
        return grad * ctx.by
    scale.register_autograd(scale_backward, setup_context=scale_setup)
    return cat, split, scale


def test_custom_op_tensor_lists_and_keyword_only_arguments():
    results = {}
    ns = f"gradmz_{next(_count)}"
    for m in (ember, torch):
        cat, split, scale = _define_ops(m, ns)
        a = m.tensor(np.arange(6.).reshape(2, 3), requires_grad=True)
        b = m.tensor(np.arange(3.).reshape(1, 3) + 10, requires_grad=True)
        c = m.tensor(np.ones((2, 3)))            # a list member that does not require grad
        y = cat([a, b, c], 0)
        w = m.tensor(np.arange(15.).reshape(5, 3))
        ga, gb = m.autograd.grad((y * w).sum(), [a, b])
        parts = split(a * 1, [1, 2], 1)
        gs, = m.autograd.grad((parts[0] * 2 + 0).sum() + (parts[1] * 3).sum(), [a])
        z = scale(a, by=2.5)
        gz, = m.autograd.grad(z.sum(), [a])
        results[m] = (y, ga, gb, type(parts).__name__, len(parts), gs, z, gz,
                      type(y.grad_fn).__name__, y.grad_fn is not None)
    for e, t in zip(results[ember], results[torch]):
        if isinstance(t, torch.Tensor):
            np.testing.assert_allclose(_np(e), _np(t))
        else:
            assert e == t


def test_infer_schema_reads_torch_types_number_as_scalar():
    def f(x, s):
        return x
    for m in (ember, torch):
        f.__annotations__ = {"x": m.Tensor, "s": m.types.Number, "return": m.Tensor}
        assert m.library.infer_schema(f, mutates_args=()) == "(Tensor x, Scalar s) -> Tensor"


# ---- setitem: a view written onto itself -----------------------------------------------------
@pytest.mark.parametrize("k", range(6))
def test_setitem_of_a_view_onto_itself(k):
    """`s[1::2] *= -1` copies the updated view onto the same view: a one-element view used to
    be stripped of its leading 1 and broadcast back with another stride, which the overlap
    check took for a partial overlap."""
    def run(m):
        s = m.arange(2, k + 2, dtype=m.float64)
        s[1::2] *= -1.
        s[:1] += 1
        return s
    e, t = _both(run)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


# ---- normal with tensor arguments: zero gradients, NormalBackward nodes -----------------------
@pytest.mark.parametrize("form", ["Tensor_float", "float_Tensor", "Tensor_Tensor", "broadcast"])
def test_normal_with_tensor_arguments_has_zero_gradients(form):
    out = {}
    for m in (ember, torch):
        mean = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        std = m.tensor([1.0, 0.5, 2.0], dtype=m.float64, requires_grad=True)
        args = {"Tensor_float": (mean, 2.0), "float_Tensor": (0.5, std),
                "Tensor_Tensor": (mean, std), "broadcast": (mean[:1], std)}[form]
        y = m.normal(*args)
        inputs = [a for a in args if isinstance(a, m.Tensor)]
        grads = m.autograd.grad((y * 3).sum(), inputs)
        out[m] = (type(y.grad_fn).__name__, tuple(y.shape), [_np(g) for g in grads],
                  m.normal(mean.detach(), std.detach()).requires_grad)
    assert out[ember][:2] == out[torch][:2] and out[ember][3] == out[torch][3]
    for e, t in zip(out[ember][2], out[torch][2]):
        np.testing.assert_array_equal(e, t)


# ---- gradcheck of lazily conjugated / negated outputs and inputs ------------------------------
@pytest.mark.parametrize("case", ["conj", "mH", "conj_input", "neg_input"])
def test_gradcheck_reads_conj_and_neg_views_by_value(case):
    def run(m):
        z = m.tensor(np.arange(6.).reshape(2, 3) + 1j * np.arange(6., 12.).reshape(2, 3))
        r = m.tensor(np.arange(6.).reshape(2, 3) - 2.5, dtype=m.float64)
        if case == "conj":
            return m.autograd.gradcheck(lambda x: x.conj(), (z.requires_grad_(),))
        if case == "mH":
            return m.autograd.gradcheck(lambda x: x.mH * 2, (z.requires_grad_(),))
        if case == "conj_input":
            x = z.conj().requires_grad_()
            return x.is_conj() and m.autograd.gradcheck(lambda x: x * x, (x,))
        x = m._neg_view(r).requires_grad_()
        return x.is_neg() and m.autograd.gradcheck(lambda x: x * x * x, (x,))
    e, t = _both(run)
    assert t is True and e is True


# ---- torch.masked._output_mask (the masked ops' OpInfo samples use it) -----------------------
def test_masked_output_mask():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5))
    mask, mask2 = rng.random((3, 4, 5)) > 0.5, rng.random((4, 5)) > 0.3
    cases = [("sum", (1,), {"mask": mask}), ("sum", ((0, 2),), {"mask": mask2, "keepdim": True}),
             ("norm", (2.0, 1), {"mask": mask}), ("amax", (), {"mask": mask}),
             ("softmax", (1,), {"mask": mask2}), ("cumsum", (0,), {"mask": mask}),
             ("var", ((),), {"mask": mask})]
    for name, args, kwargs in cases:
        def run(m):
            kw = {k: m.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
            return m.masked._output_mask(getattr(m.masked, name), m.tensor(x), *args, **kw)
        e, t = _both(run)
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape), name
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    with pytest.raises(ValueError, match="expected masked operation"):
        ember.masked._output_mask(ember.exp, ember.tensor(x), mask=ember.tensor(mask))
