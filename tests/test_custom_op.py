"""torch.library.custom_op against torch: schemas inferred from annotations, kernels per device,
fake (meta) kernels, autograd formulas, mutated arguments and the errors PyTorch raises."""
import itertools
from typing import Optional, Sequence

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
LIBS = (torch, ember)
_ids = itertools.count()


def _ns(lib):
    return f"ember_test_{'t' if lib is torch else 'e'}{next(_ids)}"


def _annotated(lib):
    T = lib.Tensor

    def f(x: T, n: int, s: list[int], f: Optional[float] = None,
          dtype: Optional[lib.dtype] = None, device: Optional[lib.device] = None, mode: str = "a",
          alpha: float = 1.0, w: Optional[T] = None, ts: Sequence[T] = None, b: bool = True,
          *, k: int = 2) -> tuple[T, T]:
        pass

    def g(x: T) -> None:
        pass

    def h(x: T, *, k: int = 2) -> list[T]:
        pass

    def one(x: T) -> tuple[T]:
        pass
    return f, g, h, one


@pytest.mark.parametrize("case", range(6))
def test_infer_schema_equals_torchs(case):
    out = []
    for lib in LIBS:
        f, g, h, one = _annotated(lib)
        fn, kw = [(f, dict(mutates_args=("x",))), (f, dict(mutates_args=())),
                  (g, dict(mutates_args={"x"}, op_name="g")), (h, dict(mutates_args=())),
                  (one, dict(mutates_args="unknown")), (h, dict(mutates_args=()))][case]
        out.append(lib.library.infer_schema(fn, **kw))
    assert out[0] == out[1]


@pytest.mark.parametrize("bad", ["no_annotation", "tuple_input", "unknown_mutated", "varargs",
                                 "no_return"])
def test_infer_schema_errors_equal_torchs(bad):
    messages = []
    for lib in LIBS:
        T = lib.Tensor
        fn, mutates = {
            "no_annotation": (lambda x: None, ()),
            "tuple_input": (_fn(lambda x: None, {"x": tuple[T, T], "return": T}), ()),
            "unknown_mutated": (_fn(lambda x: None, {"x": T, "return": T}), ("y",)),
            "varargs": (_fn(lambda *x: None, {"return": T}), ()),
            "no_return": (_fn(lambda x: None, {"x": T}), ()),
        }[bad]
        with pytest.raises(ValueError) as info:
            lib.library.infer_schema(fn, mutates_args=mutates)
        messages.append(str(info.value).split(" Got func")[0].replace("ember.Tensor", "torch.Tensor"))
    assert messages[0].split("The valid types")[0] == messages[1].split("The valid types")[0]


def _fn(f, annotations):
    f.__annotations__ = annotations
    return f


def _numpy_sin(lib, ns):
    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: lib.Tensor, scale: float = 1.0) -> lib.Tensor:
        return lib.from_numpy(np.sin(x.numpy()) * scale)

    @numpy_sin.register_fake
    def _(x, scale=1.0):
        return lib.empty_like(x)

    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos() * ctx.scale, None
    numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def test_custom_op_forward_backward_and_meta():
    x0 = np.random.default_rng(0).standard_normal(5)
    results = []
    for lib in LIBS:
        ns = _ns(lib)
        op = _numpy_sin(lib, ns)
        x = lib.tensor(x0, requires_grad=True)
        y = op(x, scale=2.0)
        y.sum().backward()
        via_ops = getattr(getattr(lib.ops, ns), "numpy_sin").default(x, 2.0)
        meta = op(lib.empty(2, 3, device="meta"))
        gc = lib.autograd.gradcheck(lambda t: op(t, 1.5), (lib.tensor(x0, requires_grad=True),))
        results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__.split("_", 2)[0],
                        via_ops.detach().numpy(), tuple(meta.shape), str(meta.device), gc))
    e, t = results[1], results[0]
    np.testing.assert_allclose(e[0], t[0])
    np.testing.assert_allclose(e[1], t[1])
    np.testing.assert_allclose(e[3], t[3])
    assert e[2] == t[2] and e[4:] == t[4:]


def test_custom_op_behaviour_equals_torchs():
    """Mutated arguments bump the version once per call plus the kernel's own writes, a
    device_types kernel leaves meta unimplemented until register_fake, register_kernel replaces
    the CPU kernel, ops without a formula raise at backward, aliasing outputs are refused."""
    out = []
    for lib in LIBS:
        ns, rec = _ns(lib), []

        @lib.library.custom_op(f"{ns}::add_one_", mutates_args={"x"})
        def add_one_(x: lib.Tensor) -> None:
            x.add_(1)
        t = lib.zeros(2)
        add_one_(t)
        rec.append((t.tolist(), t._version))

        @lib.library.custom_op(f"{ns}::np_fill_", mutates_args={"x"})
        def np_fill_(x: lib.Tensor, v: float) -> None:
            x.numpy()[:] = v
        t = lib.zeros(2)
        np_fill_(t, 3.0)
        rec.append((t.tolist(), t._version))

        @lib.library.custom_op(f"{ns}::f", mutates_args=(), device_types="cpu")
        def f(x: lib.Tensor) -> lib.Tensor:
            return x * 3
        rec.append(f(lib.ones(2)).tolist())
        with pytest.raises(Exception) as info:
            f(lib.ones(2, device="meta"))
        rec.append(type(info.value).__name__)
        lib.library.register_fake(f"{ns}::f")(lambda x: lib.empty_like(x))
        rec.append(tuple(f(lib.ones(2, device="meta")).shape))
        f.register_kernel("cpu")(lambda x: x * 4)
        rec.append(f(lib.ones(2)).tolist())

        @lib.library.custom_op(f"{ns}::noauto", mutates_args=())
        def noauto(x: lib.Tensor) -> lib.Tensor:
            return x.clone() * 2
        z = noauto(lib.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        rec.append((z.requires_grad, str(info.value).replace(ns, "NS")))

        @lib.library.custom_op(f"{ns}::two", mutates_args=())
        def two(x: lib.Tensor, n: int) -> tuple[lib.Tensor, lib.Tensor]:
            return x + n, x - n
        rec.append([v.tolist() for v in two(lib.ones(2), 3)])

        @lib.library.custom_op(f"{ns}::alias", mutates_args=())
        def alias(x: lib.Tensor) -> lib.Tensor:
            return x
        with pytest.raises(RuntimeError) as info:
            alias(lib.ones(2))
        rec.append(str(info.value).split("): ", 1)[1])
        out.append(rec)
    assert out[0] == out[1]
