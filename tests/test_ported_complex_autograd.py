"""Checks ported from PyTorch's test_ops.py (test_fn_grad on complex dtypes) and
test_autograd.py (complex gradients are conjugate Wirtinger derivatives), run against torch and
ember: forward values and the gradient of a real loss of complex outputs."""
import pytest

from _ported import same

Z = [0.3 + 0.4j, 0.5 - 0.2j, -0.6 + 0.1j, 0.2 + 0.7j]

CALLS = {
    "tanh": lambda L, x: L.tanh(x), "sigmoid": lambda L, x: L.sigmoid(x), "exp": lambda L, x: L.exp(x),
    "sin": lambda L, x: L.sin(x), "cos": lambda L, x: L.cos(x), "tan": lambda L, x: L.tan(x),
    "log": lambda L, x: L.log(x), "sqrt": lambda L, x: L.sqrt(x), "reciprocal": lambda L, x: L.reciprocal(x),
    "rsqrt": lambda L, x: L.rsqrt(x), "atan": lambda L, x: L.atan(x), "asin": lambda L, x: L.asin(x),
    "acos": lambda L, x: L.acos(x), "sinh": lambda L, x: L.sinh(x), "cosh": lambda L, x: L.cosh(x),
    "asinh": lambda L, x: L.asinh(x), "acosh": lambda L, x: L.acosh(x), "atanh": lambda L, x: L.atanh(x),
    "log1p": lambda L, x: L.log1p(x), "expm1": lambda L, x: L.expm1(x), "exp2": lambda L, x: L.exp2(x),
    "log2": lambda L, x: L.log2(x), "log10": lambda L, x: L.log10(x), "square": lambda L, x: L.square(x),
    "sgn": lambda L, x: L.sgn(x), "abs": lambda L, x: L.abs(x), "angle": lambda L, x: L.angle(x),
    "tanhshrink": lambda L, x: L.nn.functional.tanhshrink(x), "cumprod": lambda L, x: L.cumprod(x, 0),
    "prod": lambda L, x: L.prod(x), "mean": lambda L, x: L.mean(x), "sum": lambda L, x: L.sum(x),
    "var": lambda L, x: L.var(x), "std": lambda L, x: L.std(x, 0, correction=0),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 0), "logsumexp": lambda L, x: L.logsumexp(x, 0),
    "trace": lambda L, x: L.trace(x.view(2, 2)), "det": lambda L, x: L.linalg.det(x.view(2, 2)),
    "inv": lambda L, x: L.linalg.inv(x.view(2, 2)), "matmul": lambda L, x: x.view(2, 2) @ x.view(2, 2).T,
    "outer": lambda L, x: L.outer(x, x * 1j), "dot": lambda L, x: L.dot(x, x * 1j),
    "vdot": lambda L, x: L.vdot(x, x * 1j), "kron": lambda L, x: L.kron(x, x * 1j),
    "cross": lambda L, x: L.linalg.cross(x[:3], x[1:]), "pow_2": lambda L, x: x ** 2,
    "pow_half": lambda L, x: x ** 0.5, "rpow": lambda L, x: 2 ** x, "pow_tensor": lambda L, x: x ** (x * 0.5),
    "mul_complex_scalar": lambda L, x: x * (1 + 2j), "div_complex_scalar": lambda L, x: x / (1 - 1j),
    "rdiv": lambda L, x: 1 / x, "addcmul": lambda L, x: L.addcmul(x, x, x * 2, value=0.5),
    "addcdiv": lambda L, x: L.addcdiv(x, x, x * 2 + 1, value=0.5),
    "lerp": lambda L, x: L.lerp(x, x * 2j, 0.3), "lerp_tensor": lambda L, x: L.lerp(x, x * 2j, x.real.to(x.dtype)),
    "softmax_real_part": lambda L, x: L.softmax(x.real, 0), "polar": lambda L, x: L.polar(x.abs(), x.angle()),
    "view_as_real": lambda L, x: L.view_as_real(x), "logaddexp": lambda L, x: L.logaddexp(x, x.flip(0) * 1j), "real_imag": lambda L, x: x.real * x.imag,
}


def _grad(L, name):
    x = L.tensor(Z, requires_grad=True)
    y = CALLS[name](L, x)
    loss = (y * L.tensor(0.7 - 0.3j)).real.sum() + (y.abs() ** 2).sum() if y.is_complex() \
        else (y * 1.3).sum()
    loss.backward()
    return y, x.grad.resolve_conj()


@pytest.mark.parametrize("name", list(CALLS))
def test_complex_grad(name):
    same(lambda L: _grad(L, name))


def test_abs_of_complex_scalar_is_real():
    same(lambda L: (L.tensor(3 + 4j).abs(), L.tensor([3 + 4j]).sum().abs(),
                    L.empty(2, dtype=L.complex128, device="meta").abs().dtype))


def test_implicit_grad_of_complex_output_refused():
    same(lambda L: L.tensor(Z, requires_grad=True).sum().backward(),
         match="grad can be implicitly created only for real scalar outputs but got torch.complex64")
