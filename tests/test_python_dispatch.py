"""`__torch_dispatch__` against torch: TorchDispatchMode (a stack below autograd; factories reach
it; re-entrant), Tensor subclasses with a `__torch_dispatch__` classmethod
(`_make_wrapper_subclass`, `_make_subclass`, NotImplemented passing on), LoggingTensor /
LoggingTensorMode logs of small programs with backward, TwoTensor, register_torch_dispatch.

The logged op sequences equal torch's for programs whose ops ember decomposes as torch does,
with one known difference normalised: the implicit gradient of `backward()` is
`aten.ones_like.default(x, pin_memory=False, ...)` in torch and `aten.full_like.default(x, 1,
...)` in ember (ember's ones_like is a composite of full_like). Programs left out differ for
reasons outside this layer: the order in which one backward node computes the gradients of
several inputs (mul, mm, div: torch's generated code orders them per op), `x.sum()` /
`x.mean()` (sum.dim_IntList / mean.dim in ember, sum.default / mean.default in torch), reshape's
decomposition (clone without memory_format, `_unsafe_view` with -1), and factories
(`torch.ones` is aten.full, without the device/pin_memory torch's binding fills in).
"""
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.testing._internal.logging_tensor as ember_logging  # noqa: E402
import torch.testing._internal.logging_tensor as torch_logging  # noqa: E402
from ember.testing._internal.two_tensor import TwoTensor  # noqa: E402
from ember.utils import _python_dispatch as ember_pd  # noqa: E402
from torch.testing._internal.two_tensor import TwoTensor as TorchTwoTensor  # noqa: E402
from torch.utils import _python_dispatch as torch_pd  # noqa: E402

from ember._dispatch import dispatcher  # noqa: E402

LIBS = {ember: (ember_logging, ember_pd, TwoTensor), torch: (torch_logging, torch_pd,
                                                             TorchTwoTensor)}

PROGRAMS = {
    "unary_chain": lambda L, x, y: x.sin().exp().tanh().sum(0).sum(0),
    "relu_sigmoid": lambda L, x, y: (x.relu() + y.sigmoid()).sum(0).sum(0),
    "expand_mul_const": lambda L, x, y: (x * 3).unsqueeze(0).expand(2, 2, 3).sum(0).sum(0).sum(0),
    "neg_sub": lambda L, x, y: (-x - y).sum(0).sum(0),
    "softmax": lambda L, x, y: L.nn.functional.softmax(x, -1).sum(0).sum(0),
    "mul_one_grad": lambda L, x, y: (x * y.detach()).sum(0).sum(0),
    "saved_output": lambda L, x, y: (x.exp() * y.detach()).sum(0).sum(0),
}

_ONES_LIKE = re.compile(r"aten\.ones_like\.default\((\$\d+), pin_memory=False, ")


def _logged(L, program, wrap):
    logging_mod = LIBS[L][0]
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    if wrap:   # LoggingTensor wrappers; autograd runs on them
        x = logging_mod.LoggingTensor(L.tensor(a), requires_grad=True)
        y = logging_mod.LoggingTensor(L.tensor(b), requires_grad=True)
        with logging_mod.capture_logs() as logs:
            out = PROGRAMS[program](L, x, y)
            out.backward()
    else:
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        with logging_mod.capture_logs(is_mode=True) as logs, logging_mod.LoggingTensorMode():
            out = PROGRAMS[program](L, x, y)
            out.backward()
    if L is torch:
        logs = [_ONES_LIKE.sub(r"aten.full_like.default(\1, 1, ", line) for line in logs]
    grads = [t.grad.elem if wrap and t.grad is not None else t.grad for t in (x, y)]
    return logs, grads


@pytest.mark.parametrize("wrap", [False, True], ids=["LoggingTensorMode", "LoggingTensor"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_logged_ops_equal_torchs(program, wrap):
    ember_logs, ember_grads = _logged(ember, program, wrap)
    torch_logs, torch_grads = _logged(torch, program, wrap)
    assert ember_logs == torch_logs
    for e, t in zip(ember_grads, torch_grads):
        if t is None:
            assert e is None
        else:
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


def _mode_program(L):
    """Two nested modes recording what each sees; the outer one also sees the ops the inner
    one's handler calls; the mode stack API read inside and after."""
    pd = LIBS[L][1]
    seen = []

    class Record(pd.TorchDispatchMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((self.tag, str(func), pd._get_current_dispatch_mode() is not None))
            return func(*args, **(kwargs or {}))

    x = L.tensor([1.0, 2.0], requires_grad=True)
    with Record("outer") as outer, Record("inner") as inner:
        stack_ok = pd._get_current_dispatch_mode_stack() == [outer, inner]
        top_ok = pd._get_current_dispatch_mode() is inner
        y = (x * x).sin()
        z = L.zeros(2)    # a factory reaches the modes
        with pd._disable_current_modes() as old:
            disabled = (len(old), pd._get_current_dispatch_mode_stack())
            x.cos()
    y.sum().backward()
    return dict(seen=[s for s in seen if s[1] in ("aten.mul.Tensor", "aten.sin.default")],
                factory=sum(1 for s in seen if s[0] == "outer" and "zeros" in s[1]
                            or "full" in s[1]) > 0,
                stack_ok=stack_ok, top_ok=top_ok, disabled=disabled,
                after=(pd._get_current_dispatch_mode_stack(), pd.is_in_torch_dispatch_mode()),
                grad=[round(g, 5) for g in x.grad.tolist()], grad_fn=type(y.grad_fn).__name__, z=z.tolist())


def test_mode_stack_nesting_and_reentrancy_as_torchs():
    e, t = _mode_program(ember), _mode_program(torch)
    assert e == t
    assert e["seen"][:2] == [("inner", "aten.mul.Tensor", True), ("outer", "aten.mul.Tensor", False)]
    assert not dispatcher._modes    # back to the one-list-check hot path


def _subclass_program(L):
    """Handler order over two classes, NotImplemented passing on, the final TypeError."""
    order = []

    class Base(L.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            order.append((cls.__name__, [t.__name__ for t in types]))
            return NotImplemented

    class Derived(Base):
        pass

    class Other(L.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            order.append((cls.__name__, [t.__name__ for t in types]))
            unwrapped = [a.elem if isinstance(a, Other) else a.elem if isinstance(a, Base)
                         else a for a in args]
            return func(*unwrapped, **(kwargs or {}))

    def make(cls, value):
        r = L.Tensor._make_wrapper_subclass(cls, (2,), dtype=L.float32)
        r.elem = L.tensor(value)
        return r

    b, d, o = make(Base, [1.0, 2.0]), make(Derived, [3.0, 4.0]), make(Other, [5.0, 6.0])
    result = L.add(o, L.mul(d, o))
    try:
        L.add(b, d)
        error = None
    except TypeError as exc:
        error = str(exc).splitlines()[0]
    meta = (o.shape, o.stride(), o.dtype == L.float32, o.requires_grad, type(o).__name__,
            o.__torch_function__ is L._C._disabled_torch_function_impl)
    return dict(order=order, result=result.tolist(), error=error, meta=meta)


def test_subclass_handler_order_and_not_implemented_as_torchs():
    e, t = _subclass_program(ember), _subclass_program(torch)
    assert e == t


def _two_tensor_program(L):
    TT = LIBS[L][2]
    rng = np.random.default_rng(1)
    a, b = (L.tensor(rng.standard_normal((2, 3)).astype(np.float32)) for _ in range(2))
    t = TT(a.clone(), b.clone()).requires_grad_()
    out = (t * t).sin().t()
    out.sum().backward()
    v = t.detach().view(3, 2)
    u = TT(a.clone(), b.clone())
    same = u.add_(1) is u
    return dict(out=(type(out).__name__, out.a.tolist(), out.b.tolist(), out.shape,
                     out.stride()),
                grad=(type(t.grad).__name__, t.grad.a.tolist(), t.grad.b.tolist()),
                view=(type(v).__name__, v.shape, v.a.shape), inplace=(same, u.a.tolist()))


def test_two_tensor_as_torchs():
    e, t = _two_tensor_program(ember), _two_tensor_program(torch)
    for k in e:
        assert str(e[k]) == str(t[k]) or np.allclose(*(np.array(x[1], dtype=float)
                                                       for x in (e[k], t[k]))), k


def _registered_rule_program(L, lib_name):
    pd = LIBS[L][1]

    @L.library.custom_op(f"{lib_name}::twice", mutates_args=())
    def twice(x: L.Tensor) -> L.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return L.empty_like(x)

    class Mode(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    @twice.register_torch_dispatch(Mode)
    def _(mode, func, types, args, kwargs):
        return args[0] + 100

    x = L.tensor([1.0, 2.0])
    with Mode():
        inside = twice(x).tolist()
    return inside, twice(x).tolist()


def test_register_torch_dispatch_as_torchs():
    assert _registered_rule_program(ember, "pydispatch_e") == \
        _registered_rule_program(torch, "pydispatch_t")


def test_op_overload_names_as_torchs():
    for name in ("mul.Tensor", "relu.default", "sum.dim_IntList"):
        base, overload = name.split(".")
        e = getattr(getattr(ember.ops.aten, base), overload)
        t = getattr(getattr(torch.ops.aten, base), overload)
        assert (str(e), e.__name__, e.__module__, e.name(), repr(e), e._overloadname,
                e.overloadpacket.__name__) == \
            (str(t), t.__name__, t.__module__, t.name(), repr(t), t._overloadname,
             t.overloadpacket.__name__)
    assert str(ember.ops.aten.mul.Tensor._schema) == str(torch.ops.aten.mul.Tensor._schema)


def test_wrapper_subclass_needs_a_handler():
    for lib in (ember, torch):
        class Plain(lib.Tensor):
            pass
        with pytest.raises(TypeError, match="^Plain must define __torch_dispatch__$"):
            lib.Tensor._make_wrapper_subclass(Plain, (2,))


def _autocast_program(L):
    pd = LIBS[L][1]
    seen = []

    class Record(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = L.ones(2, 2)
    with L.autocast("cpu"), Record():
        y = L.mm(x, x)
    return seen, str(y.dtype)


def test_mode_sits_below_autocast_as_torchs():
    assert _autocast_program(ember) == _autocast_program(torch)


def test_wrapper_subclass_refuses_tolist_and_numpy():
    """A wrapper subclass has no memory of its own: tolist()/numpy() refuse with PyTorch's
    errors."""
    outcomes = []
    for L in (ember, torch):
        t = LIBS[L][2](L.ones(2), L.ones(2))
        row = []
        for f in (t.tolist, t.numpy):
            with pytest.raises(RuntimeError) as e:
                f()
            row.append(str(e.value))
        outcomes.append(row)
    assert outcomes[0] == outcomes[1]
