"""The `__torch_function__` protocol against torch: the same programs run with a logging Tensor
subclass in both libraries see the same (function name, types) sequence and keep the subclass;
PyTorch's documentation examples of non-Tensor types (ScalarTensor, DiagonalTensor) work;
NotImplemented from every override is a TypeError; TorchFunctionMode sees factories and nested
modes; DisableTorchFunction(Subclass); nn.Parameter results are plain tensors; autograd through
subclass results; ember.overrides' helpers."""
import numpy as np
import pytest

import ember
import ember.overrides

torch = pytest.importorskip("torch")


def _logging_subclass(lib, log):
    class LoggingTensor(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, tuple(t.__name__ for t in types)))
            return super().__torch_function__(func, types, args, kwargs)
    return LoggingTensor


# each program takes (lib, x: LoggingTensor (2, 3), y: plain (2, 3), m: plain (3, 2))
PROGRAMS = {
    "torch.add": lambda lib, x, y, m: lib.add(x, y),
    "method add alpha": lambda lib, x, y, m: x.add(y, alpha=2),
    "operator +": lambda lib, x, y, m: x + 1,
    "reflected +": lambda lib, x, y, m: 1 + x,
    "operator *": lambda lib, x, y, m: x * y,
    "operator -": lambda lib, x, y, m: 2 - x,
    "operator /": lambda lib, x, y, m: x / 2,
    "operator neg": lambda lib, x, y, m: -x,
    "operator @": lambda lib, x, y, m: x @ m,
    "comparison and where": lambda lib, x, y, m: lib.where(x > 2, x, y),
    "in-place +=": lambda lib, x, y, m: x.clone().__iadd__(y),
    "sum": lambda lib, x, y, m: lib.sum(x),
    "sum dim": lambda lib, x, y, m: x.sum(0),
    "mean": lambda lib, x, y, m: x.mean(),
    "cat": lambda lib, x, y, m: lib.cat([x, y]),
    "stack": lambda lib, x, y, m: lib.stack((y, x)),
    "relu": lambda lib, x, y, m: lib.nn.functional.relu(x),
    "linear": lambda lib, x, y, m: lib.nn.functional.linear(x, m.t()),
    "softmax": lambda lib, x, y, m: lib.nn.functional.softmax(x, dim=0),
    "mse_loss": lambda lib, x, y, m: lib.nn.functional.mse_loss(x, y),
    "cross_entropy": lambda lib, x, y, m: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2])),
    "layer_norm": lambda lib, x, y, m: lib.nn.functional.layer_norm(x, (3,)),
    "getitem int": lambda lib, x, y, m: x[0],
    "getitem slices": lambda lib, x, y, m: x[:, 1:],
    "view": lambda lib, x, y, m: x.view(-1),
    "reshape": lambda lib, x, y, m: x.reshape(3, 2),
    "max dim": lambda lib, x, y, m: x.max(0),
    "max": lambda lib, x, y, m: lib.max(x),
    "split": lambda lib, x, y, m: lib.split(x, 1),
    "chunk": lambda lib, x, y, m: x.chunk(2),
    "T": lambda lib, x, y, m: x.T,
    "shape": lambda lib, x, y, m: x.shape,
    "size and dim": lambda lib, x, y, m: (x.size(), x.dim()),
    "exp log": lambda lib, x, y, m: x.exp().log(),
    "einsum": lambda lib, x, y, m: lib.einsum("ij,jk->ik", x, m),
    "to float64": lambda lib, x, y, m: x.to(lib.float64),
    "float": lambda lib, x, y, m: x.float(),
    "detach": lambda lib, x, y, m: x.detach(),
    "linalg.norm": lambda lib, x, y, m: lib.linalg.norm(x),
    "fft.fft": lambda lib, x, y, m: lib.fft.fft(x),
    "clamp min": lambda lib, x, y, m: lib.clamp(x, min=1),
    "masked_fill": lambda lib, x, y, m: x.masked_fill(x > 1, 0.0),
    "var std": lambda lib, x, y, m: (x.var(0), lib.std(x)),
    "argmax all": lambda lib, x, y, m: (x.argmax(), x.all()),
    "item": lambda lib, x, y, m: x[0, 0].item(),
    "zeros_like": lambda lib, x, y, m: lib.zeros_like(x),
    "permute": lambda lib, x, y, m: x.permute(1, 0),
}


def _kind(r):
    if isinstance(r, (tuple, list)):
        return tuple(_kind(v) for v in r)
    return type(r).__name__


def _run(lib, program):
    log = []
    cls = _logging_subclass(lib, log)
    x = lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32).as_subclass(cls)
    y, m = lib.ones(2, 3), lib.ones(3, 2)
    del log[:]
    result = program(lib, x, y, m)
    return log, _kind(result), result


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_logging_subclass_sees_what_torch_sees(name):
    log_t, kind_t, out_t = _run(torch, PROGRAMS[name])
    log_e, kind_e, out_e = _run(ember, PROGRAMS[name])
    assert log_e == log_t
    assert kind_e == kind_t
    flat_t = out_t if isinstance(out_t, (tuple, list)) else [out_t]
    flat_e = out_e if isinstance(out_e, (tuple, list)) else [out_e]
    for e, t in zip(flat_e, flat_t):
        if isinstance(t, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():
                expected = t.detach().resolve_conj().numpy()
            with ember._C.DisableTorchFunctionSubclass():
                np.testing.assert_allclose(e.detach().numpy(), expected, rtol=1e-6)
        elif not isinstance(t, torch.Size):
            assert e == t


def test_subclass_results_keep_the_graph():
    grads = []
    for lib in (torch, ember):
        class Sub(lib.Tensor):
            pass
        leaf = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        s = leaf.as_subclass(Sub)
        assert type(s) is Sub and type(s.grad_fn).__name__ == "AliasBackward0"
        out = (lib.nn.functional.relu(s) * s).sum()
        assert type(out) is Sub
        out.backward()
        grads.append(leaf.grad.numpy().copy())
        assert type(leaf.grad) is lib.Tensor
    np.testing.assert_allclose(grads[1], grads[0])


def test_parameter_results_are_plain():
    for lib in (torch, ember):
        class Sub(lib.Tensor):
            pass
        p = lib.nn.Parameter(lib.ones(2))
        assert type(p * 2) is lib.Tensor and type(p.sum()) is lib.Tensor
        assert type(p + lib.ones(2).as_subclass(Sub)) is Sub
        assert not lib.overrides.has_torch_function((p,))
        assert lib.overrides.has_torch_function_unary(lib.ones(1).as_subclass(Sub))
        assert not lib.overrides.has_torch_function_variadic(lib.ones(1), p)


def test_subclass_before_superclass_and_notimplemented():
    results = {}
    for lib in (torch, ember):
        calls = []

        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append("A")
                return NotImplemented

        class B(A):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append("B")
                return NotImplemented

        a, b = lib.ones(1).as_subclass(A), lib.ones(1).as_subclass(B)
        messages = []
        for call in (lambda: lib.add(a, b), lambda: a.add(1), lambda: a[0],
                     lambda: lib.nn.functional.relu(b)):
            with pytest.raises(TypeError) as info:
                call()
            messages.append(str(info.value).replace(__name__, "<test>").split("<class")[0])
        results[lib, "calls"] = calls
        with pytest.raises(TypeError, match="unsupported operand type"):
            a + 1   # operators return NotImplemented, so Python tries int.__radd__
        results[lib] = messages
    assert results[ember] == results[torch]
    assert results[ember, "calls"] == results[torch, "calls"]


def _scalar_tensor_types(lib):
    """PyTorch's documentation example: a duck type that stands for N x N `value * eye`."""
    handled = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self._n, self._value = n, value

        def tensor(self):
            return self._value * lib.eye(self._n)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor))
                                              for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def ensure_tensor(d):
        return d.tensor() if isinstance(d, ScalarTensor) else d

    handled[lib.mean] = lambda input: float(input._value) / input._n
    handled[lib.add] = lambda input, other: lib.add(ensure_tensor(input), ensure_tensor(other))
    return ScalarTensor


def test_scalar_tensor_example():
    results = []
    for lib in (torch, ember):
        ScalarTensor = _scalar_tensor_types(lib)
        d = ScalarTensor(5, 2)
        results.append((lib.mean(d), lib.add(d, lib.ones(5, 5)).numpy().tolist()))
        with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.sum'"):
            lib.sum(d)
        assert lib.overrides.is_tensor_like(d) and not lib.overrides.is_tensor_like(3)
    assert results[0] == results[1]


def test_diagonal_tensor_example():
    """The docs' DiagonalTensor: a Tensor-like that answers with its dense form for unknown
    functions by converting its arguments."""
    results = []
    for lib in (torch, ember):
        class DiagonalTensor:
            def __init__(self, n, value):
                self._n, self._value = n, value

            def tensor(self):
                return self._value * lib.eye(self._n)

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                args = [a.tensor() if isinstance(a, DiagonalTensor) else a for a in args]
                return func(*args, **(kwargs or {}))

        d = DiagonalTensor(3, 2.0)
        results.append([lib.sum(d).item(), (lib.ones(3) @ lib.ones(3)).item(),
                        lib.nn.functional.relu(d).tolist(), lib.add(d, d).tolist()])
    assert results[0] == results[1]


def test_torch_function_mode_sees_every_call():
    seen = {}
    for lib in (torch, ember):
        log = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append((func.__name__, tuple(t.__name__ for t in types)))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2)
        with Log():
            y = lib.zeros(2) + x
            z = lib.nn.functional.relu(y).sum()
            lib.add(x, 1)
        assert z.item() == 2.0
        lib.add(x, 1)   # outside the mode: not seen
        seen[lib] = log
    assert seen[ember] == seen[torch]


def test_nested_modes_and_disable():
    for lib in (torch, ember):
        order = []

        class Outer(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                order.append("outer")
                return func(*args, **(kwargs or {}))

        class Inner(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                order.append("inner")
                return func(*args, **(kwargs or {}))

        with Outer(), Inner():
            lib.neg(lib.ones(1))
            with lib._C.DisableTorchFunction():
                lib.neg(lib.ones(1))
        assert order == ["inner", "outer", "inner", "outer"]

        class Sub(lib.Tensor):
            pass
        s = lib.ones(1).as_subclass(Sub)
        with lib._C.DisableTorchFunctionSubclass():
            assert type(s + 1) is lib.Tensor
        assert type(s + 1) is Sub


def test_mode_returning_notimplemented():
    """The mode is back on the stack when the subclasses' handlers run, so the default
    Tensor.__torch_function__'s own call meets it again and nothing implements the call."""
    messages = {}
    for lib in (torch, ember):
        class Pass(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        class Sub(lib.Tensor):
            pass
        s = lib.ones(1).as_subclass(Sub)
        got = []
        with Pass():
            with pytest.raises(TypeError, match="unsupported operand"):
                s * 2
            for call in (lambda: lib.mul(s, 2), lambda: lib.nn.functional.relu(s)):
                with pytest.raises(TypeError) as info:
                    call()
                got.append(str(info.value).split(" <")[0].split("<")[0])
        messages[lib] = got
    assert messages[ember] == messages[torch]


def test_overrides_helpers():
    assert ember.overrides.is_tensor_method_or_property(ember.Tensor.add)
    assert not ember.overrides.is_tensor_method_or_property(ember.add)
    assert ember.overrides.is_tensor_method_or_property(ember.Tensor.shape.__get__)
    funcs = ember.overrides.get_overridable_functions()
    assert ember.add in funcs[ember] and ember.nn.functional.relu in funcs[ember.nn.functional]
    assert ember.Tensor.add in funcs[ember.Tensor]
    assert ember.overrides.get_testing_overrides()[ember.nn.functional.relu](ember.ones(1)) == -1
    assert ember.is_grad_enabled in ember.overrides.get_ignored_functions()
    assert ember.overrides.resolve_name(ember.nn.functional.relu) == "torch.nn.functional.relu"
    assert ember.Tensor.grad.__get__ in ember.overrides.get_default_nowrap_functions()


def test_handle_torch_function_in_user_functions():
    for lib in (torch, ember):
        seen = []

        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return super().__torch_function__(func, types, args, kwargs)

        def double(a):
            if lib.overrides.has_torch_function_unary(a):
                return lib.overrides.handle_torch_function(double, (a,), a)
            return a * 2

        assert double(lib.ones(1)).item() == 2
        r = double(lib.ones(1).as_subclass(Sub))
        assert type(r) is Sub and seen[0] == "double"


def test_grad_of_subclass_leaf_is_not_wrapped():
    for lib in (torch, ember):
        class Sub(lib.Tensor):
            pass
        s = lib.ones(2).as_subclass(Sub).requires_grad_()
        (s * 3).sum().backward()
        assert s.grad is s.grad and s.grad.tolist() == [3.0, 3.0]


def test_new_methods_and_unflatten_reach_torch_function():
    """Tensor.new_* and unflatten hand their calls to __torch_function__ (PyTorch's C methods
    check, though get_ignored_functions lists them): a subclass's results are of its class."""
    def outcome(L):
        seen = []

        class S(L.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return super().__torch_function__(func, types, args, kwargs or {})
        s = L.ones(2, 2).as_subclass(S)
        rows = []
        for name, f in [("new", lambda: s.new(2)), ("new_zeros", lambda: s.new_zeros(3)),
                        ("new_ones", lambda: s.new_ones(3)), ("new_full", lambda: s.new_full((2,), 1.)),
                        ("new_empty", lambda: s.new_empty(3)), ("new_tensor", lambda: s.new_tensor([1.])),
                        ("new_empty_strided", lambda: s.new_empty_strided((2,), (1,))),
                        ("unflatten", lambda: s.unflatten(0, (1, 2)))]:
            seen.clear()
            rows.append((name, type(f()).__name__, list(seen)))
        return rows
    assert outcome(ember) == outcome(torch)
