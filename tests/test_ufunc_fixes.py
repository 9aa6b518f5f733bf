"""Fixes found by running PyTorch's test_binary_ufuncs.py, test_unary_ufuncs.py and
test_sort_and_select.py on ember, each checked against PyTorch on the same inputs: a number as
the first operand of add/sub/mul; float16/bfloat16 mul and div reading a scalar `other` in
float32; lerp's number weight; clamp's number bounds converted as c10 does; the complex
logaddexp; Tensor.set_ on a storage; heaviside's complex out= message."""
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

inf, nan = float("inf"), float("nan")


def _same(e, t):
    assert str(e.dtype) == str(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    te, tt = (e.float() if e.dtype is ember.bfloat16 else e), \
        (t.float() if t.dtype is torch.bfloat16 else t)
    np.testing.assert_array_equal(te.numpy(), tt.numpy())


@pytest.mark.parametrize("expr", [
    lambda m: m.add(1, m.ones(3)), lambda m: m.mul(2.5, m.ones(2, 2)),
    lambda m: m.sub(1, m.arange(3)), lambda m: m.add(3, 2), lambda m: m.mul(3, 2.5),
    lambda m: m.sub(3, 2, alpha=2),
])
def test_number_first_operand(expr):
    _same(expr(ember), expr(torch))


HALF_SCALAR_CASES = [
    lambda m, x: x * 1e5, lambda m, x: 1e5 * x, lambda m, x: x / 1e5, lambda m, x: x / 0.1,
    lambda m, x: m.div(x, 0.1, rounding_mode="floor"),
    lambda m, x: m.div(x, 0.1, rounding_mode="trunc"), lambda m, x: m.floor_divide(x, 0.1),
    lambda m, x: x * m.tensor(0.1, dtype=m.float64), lambda m, x: x / m.tensor(1e5),
    lambda m, x: x.clone().mul_(0.1), lambda m, x: x.clone().div_(0.1),
    lambda m, x: x.clone().div_(0.1, rounding_mode="floor"),
    lambda m, x: m.mul(x, 0.1, out=m.empty(5, dtype=x.dtype)),
    lambda m, x: m.mul(m.tensor(0.1), x),   # a scalar first operand is rounded first
    lambda m, x: x * 2049,                  # an int beyond float16's integers
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", range(len(HALF_SCALAR_CASES)))
def test_reduced_float_mul_div_scalar_other(case, dtype):
    vals = [0.3, 0.7, -0.3, 100.0, -60000.0 if dtype == "float16" else -6e9]
    f = HALF_SCALAR_CASES[case]
    _same(f(ember, ember.tensor(vals, dtype=getattr(ember, dtype))),
          f(torch, torch.tensor(vals, dtype=getattr(torch, dtype))))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_float_lerp_number_weight(dtype):
    for x, y, w in ((0.0, 0.1, 70000), (-30000.0, -20000.0, 70000), (1.0, 3.0, 0.3)):
        e = ember.lerp(ember.full((4,), x, dtype=getattr(ember, dtype)),
                       ember.full((4,), y, dtype=getattr(ember, dtype)), w)
        t = torch.lerp(torch.full((4,), x, dtype=getattr(torch, dtype)),
                       torch.full((4,), y, dtype=getattr(torch, dtype)), w)
        _same(e, t)


@pytest.mark.parametrize("dtype,vals,bounds", [
    ("uint8", [0, 5, 200], [(-1, 0), (-1, None), (None, -3), (-256, 0), (0, 300)]),
    ("int8", [0, 5, -100], [(-200, 0), (0, 200), (-3, 4)]),
    ("float16", [0.0, 5.0, 200.0], [(-1e5, 0), (0, 1e5), (0.0, 1e-9)]),
])
def test_clamp_number_bounds_converted_as_c10(dtype, vals, bounds):
    for lo, hi in bounds:
        def run(m):
            try:
                return m.clamp(m.tensor(vals, dtype=getattr(m, dtype)), lo, hi)
            except RuntimeError as exc:
                return str(exc)
        e, t = run(ember), run(torch)
        if isinstance(t, str):
            assert e == t
        else:
            _same(e, t)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_logaddexp_keeps_the_larger_phase(dtype):
    a = [3 + 4j, 1e4 - 5e3j, -3e3 + 1j, complex(inf, 1), complex(-inf, 2), complex(inf, 1),
         complex(nan, 0), 1 + 1j, complex(-inf, 0)]
    b = [1 + 1j, 9e3 + 7e3j, -3001 + 2j, complex(inf, 3), complex(-inf, 5), 1 + 1j, 1 + 1j,
         complex(0, nan), 2 + 2j]
    e = ember.logaddexp(ember.tensor(a, dtype=getattr(ember, dtype)),
                        ember.tensor(b, dtype=getattr(ember, dtype)))
    t = torch.logaddexp(torch.tensor(a, dtype=getattr(torch, dtype)),
                        torch.tensor(b, dtype=getattr(torch, dtype)))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_set_on_a_storage():
    def run(m):
        t = m.arange(10.0)
        out = []
        for args in ((t.storage(), 2, (2, 3), (3, 1)), (t.untyped_storage(), 2, (2, 3)),
                     (t.storage(),), (t, 2, (3,))):
            x = m.empty(0).set_(*args)
            out.append((x.tolist(), x.shape, x.stride(), x.storage_offset()))
        x = m.empty(0).set_(t, 1, (2,))
        x[0] = 100.0   # shares t's memory
        out.append(t[1].item())
        out.append(m.empty(0, dtype=m.int64).set_(t.untyped_storage()).shape)
        with pytest.raises(RuntimeError) as info:
            m.empty(0, dtype=m.int64).set_(t.storage())
        out.append(str(info.value))
        return out
    assert repr(run(ember)) == repr(run(torch)).replace("torch.Size", "torch.Size")


def test_heaviside_complex_out_message():
    def run(m):
        r = m.tensor([1.0, 0.0])
        with pytest.raises(RuntimeError) as info:
            m.heaviside(r, r, out=m.empty(2, dtype=m.complex64))
        return str(info.value)
    assert run(ember) == run(torch)


_DUNDERS = ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__add__", "__radd__",
            "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
            "__matmul__", "__rmatmul__", "__truediv__", "__rtruediv__", "__itruediv__",
            "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__",
            "__pow__", "__rpow__", "__ipow__", "__lshift__", "__rlshift__", "__ilshift__",
            "__rshift__", "__rrshift__", "__irshift__", "__and__", "__rand__", "__iand__",
            "__xor__", "__rxor__", "__ixor__", "__or__", "__ror__", "__ior__"]


def test_operators_give_not_implemented_for_unknown_types():
    class Unknown:
        pass

    class Reflects:   # Python must reach its reflected method
        def __radd__(self, other):
            return "radd"

        def __rmatmul__(self, other):
            return "rmatmul"

    for lib in (ember, torch):
        t = lib.empty((), dtype=lib.int64)
        assert [getattr(t, op)(Unknown()) for op in _DUNDERS] == [NotImplemented] * len(_DUNDERS)
        assert (t + Reflects(), t @ Reflects()) == ("radd", "rmatmul")
        for expr in (lambda: t + "a", lambda: lib.ones(2) @ 2):
            with pytest.raises(TypeError, match="unsupported operand"):
                expr()
        assert (lib.ones(2) == None) is False and (lib.ones(2) != None) is True  # noqa: E711


def test_float_alpha_refused_for_integers_even_when_one():
    for lib in (ember, torch):
        a = lib.tensor([1], dtype=lib.int8)
        for f in (lambda: lib.add(a, a, alpha=1.0), lambda: lib.sub(a, a, alpha=1.0),
                  lambda: a.clone().add_(a, alpha=1.0)):
            with pytest.raises(RuntimeError, match="must not be a floating point number"):
                f()
        assert lib.add(a.float(), a, alpha=1.0).tolist() == [2.0]


def test_xlog1py_self_grad_is_zero_where_self_is_zero():
    def run(m):
        x = m.tensor([0.0, 0.0, 1.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([-2.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        m.special.xlog1py(x, y).sum().backward()
        return x.grad.numpy(), y.grad.numpy()
    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_allclose(e, t, equal_nan=True)


def test_trapezoid_argument_errors():
    for lib in (ember, torch):
        y = lib.randn(3, 3)
        for name in ("trapezoid", "cumulative_trapezoid"):
            with pytest.raises(RuntimeError, match=f"{name}: Currently, we only support dx"):
                getattr(lib, name)(y, dx=1j)
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            lib.cumulative_trapezoid(y, x=lib.randn(3, 3), dx=3)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_hardshrink_lambda_in_the_tensor_dtype(dtype):
    vals = [1.0, 0.5, 0.3, 0.6, -0.3, 0.1]
    for lambd in (0.3, 0.1, 0.5):
        _same(ember.tensor(vals, dtype=getattr(ember, dtype)).hardshrink(lambd),
              torch.tensor(vals, dtype=getattr(torch, dtype)).hardshrink(lambd))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_log1p_small_values(dtype):
    vals = [0.2 + 0.3j, 1e-19 + 1e-18j, 1e-18 + 0.1j, 0.1 + 1e-18j, 3 + 4j, -0.5 + 0.1j,
            -1 + 2j, 2j, complex(inf, 0), complex(nan, 1), 0j, -1 + 0j]
    e = ember.log1p(ember.tensor(vals, dtype=getattr(ember, dtype))).numpy()
    t = torch.log1p(torch.tensor(vals, dtype=getattr(torch, dtype))).numpy()
    np.testing.assert_allclose(e.real, t.real, rtol=1e-6, atol=0, equal_nan=True)
    np.testing.assert_allclose(e.imag, t.imag, rtol=1e-6, atol=0, equal_nan=True)


def test_sinc_grad_at_tiny_inputs():
    def run(m):
        a = m.tensor([0.0, m.finfo(m.float64).tiny, 1e-200, 1.0], dtype=m.float64,
                     requires_grad=True)
        m.sinc(a).sum().backward()
        return a.grad.numpy()
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


def test_addcmul_addcdiv_take_a_zero_dim_tensor_value():
    for lib in (ember, torch):
        y = lib.tensor(3.0)
        v = lib.tensor(2.0)
        assert (y.addcmul(y, y, value=v).item(), lib.addcdiv(y, y, y, value=v).item(),
                y.clone().addcmul_(y, y, value=v).item()) == (21.0, 5.0, 21.0)
        for bad in (lib.tensor(2.0, requires_grad=True), lib.tensor([2.0])):
            with pytest.raises(TypeError, match="argument 'value' must be Number, not Tensor"):
                y.addcmul(y, y, value=bad)


def test_bool_refused_for_an_int_argument():
    for lib in (ember, torch):
        q = lib.randn(3, 2, 4)
        for expr, message in ((lambda: q.topk(4, True), "argument 'dim' (position 2)"),
                              (lambda: lib.topk(q, 2, True), "argument 'dim' (position 3)"),
                              (lambda: q.topk(True), "argument 'k' (position 1)"),
                              (lambda: q.transpose(0, True), "argument 'dim1' (position 2)")):
            with pytest.raises(TypeError, match=re.escape(message) + " must be int, not bool"):
                expr()
        assert tuple(q.topk(2, largest=True).values.shape) == (3, 2, 2)
        with pytest.raises(TypeError, match=re.escape("argument 'tensor' (position 1)")):
            lib.ones(2).dot("a")
