"""Every op's backward formula, in one place (PyTorch's derivatives.yaml).

Rules for a formula:
- `derivative(op, {input: formula})` gives one formula per differentiable input; a key
  "a, b" gives one formula for several inputs that returns one gradient each and may take
  `needs` (which of them are wanted).
- A formula's parameter names say what it reads, and so what the forward saves: the op's
  argument names, `result` (or `result1`, ... for further outputs), `<arg>_shape` (the shape
  only, so the tensor itself is not kept alive), and `grad` (or `grads` for several outputs).
- Formulas are written with differentiable ember ops, so double backward works. Broadcasting
  is undone by the engine: a gradient larger than its input is summed down to the input's shape.
- Ops listed in `not_differentiable` produce outputs that never require grad.
"""
import math

import numpy as np

from .variable_type import derivative, not_differentiable, node_name_of, derive_inplace_derivatives
from .._aten.elementwise import float_limits, not_implemented
from .._aten.shape import split_sizes
from .._bindings import python_bindings as E


def _unsqueeze_dims(g, shape, dim, keepdim):
    """Put back reduced dims so a reduced gradient broadcasts against the input."""
    if keepdim or not shape:
        return g
    n = len(shape)
    dims = range(n) if dim is None or dim == [] or dim == () else \
        sorted(d % n for d in ((dim,) if isinstance(dim, int) else dim))
    for d in dims:
        g = g.unsqueeze(d)
    return g


def _conj(x):
    """conj for complex tensors; real tensors and Python numbers are returned as they are."""
    return x.conj() if getattr(x, "is_complex", None) and x.is_complex() else x


# ---- elementwise binary --------------------------------------------------------------------
derivative("add.Tensor", {"self": lambda grad: grad,
                          "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha})
derivative("add_.Tensor", {"self": lambda grad: grad,
                           "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha},
           node_name="AddBackward0")
derivative("sub.Tensor", {"self": lambda grad: grad,
                          "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha})
derivative("sub_.Tensor", {"self": lambda grad: grad,
                           "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha},
           node_name="SubBackward0")
derivative("rsub.Tensor", {"self": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
                           "other": lambda grad: grad},
           node_name=lambda other: "RsubBackward0" if hasattr(other, "_size")
           else "RsubBackward1")
derivative("mul.Tensor", {"self": lambda grad, other: grad * _conj(other),
                          "other": lambda grad, self: grad * _conj(self)})
derivative("mul_.Tensor", {"self": lambda grad, other: grad * _conj(other),
                           "other": lambda grad, self: grad * _conj(self)},
           node_name="MulBackward0")


def _div_self(grad, other, rounding_mode):
    if rounding_mode is not None:
        return grad * 0
    return grad / _conj(other)


def _div_other(grad, self, other, rounding_mode):
    if rounding_mode is not None:
        return grad * 0
    return -grad * _conj((self / other) / other)


derivative("div.Tensor_mode", {"self": _div_self, "other": _div_other}, node_name="DivBackward0")
derivative("div_.Tensor_mode", {"self": _div_self, "other": _div_other},
           node_name="DivBackward0")
derivative("remainder.Tensor", {
    "self": lambda grad: grad,
    "other": lambda grad, self, other: -grad * E.div(self, other, rounding_mode="floor")})


def _pow_self(grad, self, exponent):
    if not hasattr(exponent, "_size"):
        return grad * 0 if exponent == 0 else grad * (exponent * self.pow(exponent - 1))
    return E.where(exponent == 0, 0.0, grad * (exponent * self.pow(exponent - 1)))


def _pow_exponent(grad, self, exponent, result):
    """grad * result * log(self), with log taken in the result's dtype; 0 ** e for e >= 0 has
    derivative 0 in e (not 0 * -inf)."""
    if not hasattr(self, "_size"):
        if self == 0:
            return grad * E.where(exponent >= 0, 0.0, result * -math.inf)
        log = math.log(self) if self > 0 else math.nan
        return grad * (result * log)
    return grad * E.where((self == 0) & (exponent >= 0), 0.0, result * self.to(result.dtype).log())


def _pow_node(self, exponent):
    """pow.Tensor_Scalar, pow.Tensor_Tensor and pow.Scalar are three nodes in PyTorch."""
    if not hasattr(exponent, "_size"):
        return "PowBackward0"
    return "PowBackward1" if hasattr(self, "_size") else "PowBackward2"


derivative("pow.Tensor_Tensor", {"self": _pow_self, "exponent": _pow_exponent},
           node_name=_pow_node)
derivative("pow_.Tensor", {"self": _pow_self, "exponent": _pow_exponent}, node_name=_pow_node)


def _minmax_grad(pick_self):
    def f(grad, self, other):
        mask = (self > other) if pick_self else (self < other)
        tie = (self == other)
        return E.where(mask, grad, grad * 0) + E.where(tie, grad / 2, grad * 0)
    return f


derivative("maximum", {"self": _minmax_grad(True),
                       "other": lambda grad, self, other: _minmax_grad(True)(grad, other, self)})
derivative("minimum", {"self": _minmax_grad(False),
                       "other": lambda grad, self, other: _minmax_grad(False)(grad, other, self)})
derivative("where.self", {"self": lambda grad, condition: E.where(condition, grad, grad * 0),
                          "other": lambda grad, condition: E.where(condition, grad * 0, grad)})


def _clamp_grad(grad, self, min, max):
    mask = E.ones_like(self, dtype=E._dtype.bool)
    if min is not None:
        mask = mask & (self >= min)
    if max is not None:
        mask = mask & (self <= max)
    return E.where(mask, grad, grad * 0)


derivative("clamp", {"self": _clamp_grad}, node_name="ClampBackward1")
derivative("clamp_", {"self": _clamp_grad}, node_name="ClampBackward1")


def _clamp_bounds_grad(grad, self, min, max, needs):
    """A bound gets the gradient where it is the output: min where x < min (and min < max,
    else max wins), max where x > max or max < min."""
    if min is not None and max is not None:
        return (E.where((self < min) & (min < max), grad, 0.0) if needs[0] else None,
                E.where((self > max) | (max < min), grad, 0.0) if needs[1] else None)
    if min is not None:
        return E.where(self < min, grad, 0.0), None
    return None, E.where(self > max, grad, 0.0)


derivative("clamp.Tensor", {"self": _clamp_grad, "min, max": _clamp_bounds_grad},
           node_name="ClampBackward0")
derivative("clamp_.Tensor", {"self": _clamp_grad, "min, max": _clamp_bounds_grad},
           node_name="ClampBackward0")

# ---- elementwise unary ---------------------------------------------------------------------
derivative("neg", {"self": lambda grad: -grad})
derivative("abs", {"self": lambda grad, self: grad * E.sgn(self)})  # sgn: x/|x| if complex
derivative("sign", {"self": lambda grad: grad * 0})
derivative("exp", {"self": lambda grad, result: grad * _conj(result)})
derivative("log", {"self": lambda grad, self: grad / _conj(self)})
derivative("log1p", {"self": lambda grad, self: grad / (self + 1)})
derivative("expm1", {"self": lambda grad, result: grad * (result + 1)})
derivative("sqrt", {"self": lambda grad, result: grad / (2 * _conj(result))})
derivative("rsqrt", {"self": lambda grad, result: -0.5 * grad * result.pow(3)})
derivative("sin", {"self": lambda grad, self: grad * self.cos()})
derivative("cos", {"self": lambda grad, self: -grad * self.sin()})
derivative("tanh", {"self": lambda grad, result: E.ops.aten.tanh_backward(grad, result)})
derivative("sigmoid", {"self": lambda grad, result: E.ops.aten.sigmoid_backward(grad, result)})
derivative("relu", {"self": lambda grad, result: E.ops.aten.threshold_backward(grad, result, 0)})
derivative("relu_", {"self": lambda grad, result: E.ops.aten.threshold_backward(grad, result, 0)},
           node_name="ReluBackward0")
derivative("gelu", {"self": lambda grad, self, approximate:
                    E.ops.aten.gelu_backward(grad, self, approximate=approximate)})


def _silu_grad(grad, self):
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


derivative("silu", {"self": _silu_grad})


def _softplus_grad(grad, self, beta, threshold):
    z = self * beta
    return E.where(z > threshold, grad, grad * (z).sigmoid())


derivative("softplus", {"self": _softplus_grad})

# backward helpers: their own derivatives make double backward work
derivative("threshold_backward", {
    "grad_output": lambda grad, self, threshold: E.ops.aten.threshold_backward(grad, self,
                                                                               threshold),
    "self": lambda grad: grad * 0})
derivative("sigmoid_backward", {
    "grad_output": lambda grad, output: E.ops.aten.sigmoid_backward(grad, output),
    "output": lambda grad, grad_output, output: grad * grad_output * (1 - 2 * output)})
derivative("tanh_backward", {
    "grad_output": lambda grad, output: E.ops.aten.tanh_backward(grad, output),
    "output": lambda grad, grad_output, output: -2 * grad * grad_output * output})


def _gelu_double(grad, grad_output, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        c = 0.044715
        inner = k * (self + c * self.pow(3))
        t = inner.tanh()
        dinner = k * (1 + 3 * c * self * self)
        sech2 = 1 - t * t
        second = sech2 * dinner + 0.5 * self * (-2 * t * sech2 * dinner * dinner) + \
            0.5 * self * sech2 * k * 6 * c * self
        return grad * grad_output * second
    pdf = (-0.5 * self * self).exp() / math.sqrt(2 * math.pi)
    return grad * grad_output * pdf * (2 - self * self)


derivative("gelu_backward", {
    "grad_output": lambda grad, self, approximate: E.ops.aten.gelu_backward(
        grad, self, approximate=approximate),
    "self": _gelu_double})

# ---- reductions ----------------------------------------------------------------------------
derivative("sum.dim_IntList", {
    "self": lambda grad, self_shape, dim, keepdim:
        _unsqueeze_dims(grad, self_shape, dim, keepdim).expand(self_shape)},
    node_name=lambda dim: "SumBackward0" if dim is None else "SumBackward1")


def _mean_grad(grad, self_shape, dim, keepdim):
    n = 1
    dims = range(len(self_shape)) if dim is None or len(dim) == 0 else dim
    for d in dims:
        n *= self_shape[d] if self_shape else 1
    return _unsqueeze_dims(grad, self_shape, dim, keepdim).expand(self_shape) / max(n, 1) \
        if n else _unsqueeze_dims(grad, self_shape, dim, keepdim).expand(self_shape) / 0.0


derivative("mean.dim", {"self": _mean_grad},
           node_name=lambda dim: "MeanBackward0" if dim is None else "MeanBackward1")


def _prod_grad(grad, self, result, dim, keepdim):
    """d prod / d x_i is the product of the other elements: result / x_i when no element is
    zero, else computed directly (a zero makes result / x_i 0/0)."""
    if self.dim() == 0:
        return grad
    if dim is None:
        return _prod_grad(grad, self.reshape(-1), result, 0, False).reshape(self.shape)
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    if not (self == 0).any():
        return g * (_unsqueeze_dims(result, self.shape, dim, keepdim) / self)
    return g * _prod_of_others(self, dim)


def _prod_of_others(x, dim):
    """For every i along dim, the product of the other elements: row i of an n x n matrix of
    copies of x, with the diagonal set to 1, reduced by prod (exact when x has zeros)."""
    n = x.shape[dim]
    xs = x.movedim(dim, -1)
    rows = xs.unsqueeze(-2).expand(*xs.shape[:-1], n, n)
    diagonal = E.eye(n, dtype=E._dtype.bool, device=x.device)
    return E.where(diagonal, 1, rows).prod(-1).movedim(-1, dim)


derivative("prod.dim_int", {"self": _prod_grad},
           node_name=lambda dim: "ProdBackward0" if dim is None else "ProdBackward1")


def _amax_grad(grad, self, result, dim, keepdim):
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    r = _unsqueeze_dims(result, self.shape, dim, keepdim)
    mask = (self == r)
    count = mask.sum(dim=dim if dim else None, keepdim=True) if dim else mask.sum()
    return E.where(mask, g / count, g * 0)


derivative("amax", {"self": _amax_grad})
derivative("amin", {"self": _amax_grad})
derivative("max", {"self": lambda grad, self, result: _amax_grad(grad, self, result, [], False)},
           node_name="MaxBackward1")
derivative("min", {"self": lambda grad, self, result: _amax_grad(grad, self, result, [], False)},
           node_name="MinBackward1")


def _value_index_grad(grads, self, dim, keepdim, result1):
    g = grads[0]
    idx = result1
    if self.dim() == 0:
        return g
    if not keepdim:
        g = g.unsqueeze(dim)
        idx = idx.unsqueeze(dim)
    return E.ops.aten.scatter_add(E.zeros_like(self, dtype=g.dtype), dim, idx, g)


derivative("max.dim", {"self": _value_index_grad}, node_name="MaxBackward0",
           output_differentiability=[True, False])
derivative("min.dim", {"self": _value_index_grad}, node_name="MinBackward0",
           output_differentiability=[True, False])


def _var_grad(grad, self, dim, correction, keepdim):
    """2 / (N - correction) * grad * (x - mean). With no degrees of freedom left the forward
    divided by 0: the gradient is inf, or nan where x == mean (inf * 0)."""
    c = 1 if correction is None else correction
    if self.dim() == 0 or not dim:
        dof = self.numel() - c
        if dof <= 0:
            return grad * E.where(self == self.mean(), math.nan, math.inf)
        return (2.0 / dof) * grad * (self - self.mean())
    n = 1
    for d in dim:
        n *= self.shape[d]
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    scale = 2.0 / (n - c) if n != c else math.inf
    return scale * g * (self - self.mean(dim, keepdim=True))


def _std_grad(grad, self, result, dim, correction, keepdim):
    """The variance's gradient scaled by 1 / (2 std); 0 where std is 0 (not 0 / 0)."""
    grad_var = (grad / (result * 2)).masked_fill(result == 0, 0)
    return _var_grad(grad_var, self, dim, correction, keepdim)


derivative("var.correction", {"self": _var_grad}, node_name="VarBackward0")
derivative("std.correction", {"self": _std_grad}, node_name="StdBackward0")
derivative("logsumexp", {"self": lambda grad, self, result, dim, keepdim:
                         _unsqueeze_dims(grad, self.shape, dim, keepdim) *
                         (self - _unsqueeze_dims(result, self.shape, dim, keepdim)).exp()})

# ---- linear algebra ------------------------------------------------------------------------
derivative("mm", {"self": lambda grad, mat2: grad.mm(mat2.mT),
                  "mat2": lambda grad, self: self.mT.mm(grad)})
derivative("bmm", {"self": lambda grad, mat2: grad.bmm(mat2.mT),
                   "mat2": lambda grad, self: self.mT.bmm(grad)})


def _matmul_grads(grad, self, other, needs):
    a, b = self, other
    if a.dim() == 1 and b.dim() == 1:
        return (grad * b if needs[0] else None, grad * a if needs[1] else None)
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g = grad
    if a.dim() == 1:
        g = g.unsqueeze(-2)
    if b.dim() == 1:
        g = g.unsqueeze(-1)
    ga = g.matmul(b2.mT) if needs[0] else None
    gb = a2.mT.matmul(g) if needs[1] else None
    if ga is not None:
        ga = ga.sum_to_size(a2.shape)
        if a.dim() == 1:
            ga = ga.squeeze(-2)
    if gb is not None:
        gb = gb.sum_to_size(b2.shape)
        if b.dim() == 1:
            gb = gb.squeeze(-1)
    return ga, gb


def _matmul_node_name(self, other):
    """matmul is composite in PyTorch: its node is that of the op it lowers to."""
    dims = (self.dim(), other.dim())
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
            (2, 2): "MmBackward0"}.get(dims, "UnsafeViewBackward0")


derivative("matmul", {"self, other": _matmul_grads}, node_name=_matmul_node_name)
derivative("addmm", {
    "self": lambda grad, beta: grad if beta == 1 else grad * beta,
    "mat1": lambda grad, mat2, alpha: grad.mm(mat2.mT) * alpha if alpha != 1 else
    grad.mm(mat2.mT),
    "mat2": lambda grad, mat1, alpha: mat1.mT.mm(grad) * alpha if alpha != 1 else
    mat1.mT.mm(grad)})


def _linear_input(grad, weight):
    if weight.dim() == 1:  # linear(x, w) with a 1-D w is x @ w: one output per row of x
        return grad.unsqueeze(-1) * weight
    return grad.matmul(weight)


def _linear_weight(grad, input):
    if grad.dim() < input.dim():  # a 1-D weight
        return (grad.unsqueeze(-1) * input).sum_to_size(input.shape[-1:])
    if input.dim() == 1:
        return grad.unsqueeze(-1) * input.unsqueeze(0) if grad.dim() else grad * input
    g2 = grad.reshape(-1, grad.shape[-1]) if grad.dim() > 1 else grad.unsqueeze(0)
    i2 = input.reshape(-1, input.shape[-1])
    return g2.mT.mm(i2)


def _linear_bias(grad, bias_shape):
    return grad.sum_to_size(bias_shape)


def _linear_node(input, weight, bias):
    """PyTorch's linear is a composite: its node is the last op of the path it takes."""
    if weight.dim() == 1:
        return "MvBackward0" if bias is None else "AddBackward0"
    if input.dim() == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    if input.dim() == 1:
        return "ViewBackward0" if bias is not None else "SqueezeBackward4"
    if bias is None:
        return "UnsafeViewBackward0"
    return "ViewBackward0" if input.is_contiguous() else "AddBackward0"


derivative("linear", {"input": _linear_input, "weight": _linear_weight, "bias": _linear_bias},
           node_name=_linear_node)

# ---- linear algebra: products, einsum, decompositions (issue 3, linalg) --------------------
def _scaled(g, s):
    return g if s == 1 else g * s


derivative("dot", {"self": lambda grad, tensor: grad * _conj(tensor),
                   "tensor": lambda grad, self: grad * _conj(self)})
derivative("vdot", {"self": lambda grad, other: grad * other,
                    "other": lambda grad, self: grad * self})
derivative("mv", {"self": lambda grad, vec: grad.unsqueeze(-1) * vec,
                  "vec": lambda grad, self: self.mT.mv(grad)})
derivative("addmv", {"self": lambda grad, beta: _scaled(grad, beta),
                     "mat": lambda grad, vec, alpha: _scaled(grad.unsqueeze(-1) * vec, alpha),
                     "vec": lambda grad, mat, alpha: _scaled(mat.mT.mv(grad), alpha)})
derivative("addr", {"self": lambda grad, beta: _scaled(grad, beta),
                    "vec1": lambda grad, vec2, alpha: _scaled(grad.mv(vec2), alpha),
                    "vec2": lambda grad, vec1, alpha: _scaled(grad.mT.mv(vec1), alpha)})
derivative("baddbmm", {"self": lambda grad, beta: _scaled(grad, beta),
                       "batch1": lambda grad, batch2, alpha: _scaled(grad.bmm(batch2.mT), alpha),
                       "batch2": lambda grad, batch1, alpha: _scaled(batch1.mT.bmm(grad), alpha)})


def _addbmm_batch1(grad, batch1_shape, batch2, alpha):
    return _scaled(grad.expand(batch1_shape[0], *grad.shape).bmm(batch2.mT), alpha)


def _addbmm_batch2(grad, batch1, batch2_shape, alpha):
    return _scaled(batch1.mT.bmm(grad.expand(batch2_shape[0], *grad.shape)), alpha)


derivative("addbmm", {"self": lambda grad, beta: _scaled(grad, beta),
                      "batch1": _addbmm_batch1, "batch2": _addbmm_batch2})


def _einsum_operand_grad(grad, subs, out, tensors, i):
    """d(einsum)/d(operand i): the output gradient contracted with the other operands, into
    operand i's letters. Letters only operand i has were summed over in the forward, so the
    gradient is constant along them (a ones factor); a letter repeated in operand i (a
    diagonal, 'ii->i') puts the gradient on that diagonal (an identity factor)."""
    s = subs[i]
    others = [j for j in range(len(subs)) if j != i]
    reachable = set(out).union(*(subs[j] for j in others))
    target = "".join(c for c in dict.fromkeys(s) if c in reachable)
    g = E.einsum(",".join([out] + [subs[j] for j in others]) + "->" + target, grad,
                 *(tensors[j] for j in others))
    if target == s:
        return g
    used = set("".join(subs) + out)
    fresh = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                 if c not in used)
    terms, operands, result, seen = [target], [g], "", set()
    for c, n in zip(s, tensors[i].shape):
        if c not in seen:
            seen.add(c)
            result += c
            if c not in reachable:
                terms.append(c)
                operands.append(E.ones(n, dtype=g.dtype))
        else:
            f = next(fresh)
            result += f
            terms.append(c + f)
            operands.append(E.eye(n, dtype=g.dtype))
    return E.einsum(",".join(terms) + "->" + result, *operands)


def _einsum_grads(grad, equation, tensors):
    from .._aten.linalg import parse_einsum
    subs, out = parse_einsum(equation, [t.shape for t in tensors])
    return [_einsum_operand_grad(grad, subs, out, tensors, i)
            if t.dtype.is_floating_point or t.dtype.is_complex else None
            for i, t in enumerate(tensors)]


derivative("einsum", {"tensors": _einsum_grads})
derivative("trace", {"self": lambda grad, self_shape: grad * E.eye(*self_shape,
                                                                   dtype=grad.dtype)})
derivative("linalg_cross", {
    "self": lambda grad, other, dim: E.ops.aten.linalg_cross(other, grad, dim=dim),
    "other": lambda grad, self, dim: E.ops.aten.linalg_cross(grad, self, dim=dim)})
derivative("linalg_inv", {"A": lambda grad, result: -(result.mT.matmul(grad).matmul(result.mT))})


def _det_grad(grad, A, result):
    """d det(A) = det(A) tr(A^-1 dA): the gradient is grad * det(A) * A^-T."""
    return (grad * result).unsqueeze(-1).unsqueeze(-1) * E.ops.aten.linalg_inv(A).mT


derivative("linalg_det", {"A": _det_grad})
derivative("linalg_slogdet", {"A": lambda grads, A: grads[1].unsqueeze(-1).unsqueeze(-1) *
                              E.ops.aten.linalg_inv(A).mT})


def _solve_grads(grad, A, B, result, left, needs):
    """X = A^-1 B: gB = A^-T g and gA = -gB X^T (for XA = B: gB = g A^-T, gA = -X^T gB)."""
    from .._aten.linalg import _is_vector_rhs
    vector = _is_vector_rhs(A, B)
    g = grad.unsqueeze(-1) if vector else grad
    X = result.unsqueeze(-1) if vector else result
    gB = E.ops.aten.linalg_solve(A.mT, g, left=left)
    gA = (-gB.matmul(X.mT) if left else -X.mT.matmul(gB)) if needs[0] else None
    return gA, (gB.squeeze(-1) if vector else gB) if needs[1] else None


derivative("linalg_solve", {"A, B": _solve_grads})


def _cholesky_grad(grad, result, upper):
    """A = L L^T: gA = L^-T Phi(L^T gL) L^-1, Phi taking the lower triangle with half the
    diagonal, then made symmetric."""
    L, gL = (result.mT, grad.mT) if upper else (result, grad)
    gA = L.mT.matmul(gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = E.ops.aten.linalg_solve(L.mT, gA)
    return E.ops.aten.linalg_solve(L, gA, left=False)


derivative("linalg_cholesky", {"self": _cholesky_grad})


def _qr_grad(grads, A_shape, result, result1, mode):
    """A = QR with m >= n: M = R gR^T - gQ^T Q; gA = (gQ + Q copyltu(M)) R^-T, where copyltu
    mirrors M's lower triangle onto its upper one."""
    Q, R = result, result1
    gQ, gR = grads
    m, n = A_shape[-2], A_shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if m < n or (mode == "complete" and m > n):
        raise NotImplementedError("The derivative of linalg.qr is implemented for m >= n in "
                                  "mode 'reduced' (and square inputs in mode 'complete')")
    M = R.matmul(gR.mT) - gQ.mT.matmul(Q)
    M = M.tril() + M.tril(-1).mT
    return E.ops.aten.linalg_solve(R, (gQ + Q.matmul(M)).mT).mT


derivative("linalg_qr", {"A": _qr_grad})


def _svd_grad(grads, A_shape, full_matrices, result, result1, result2):
    """A = U diag(S) Vh (reduced; with full_matrices the extra columns get no gradient):
    gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh, E_ij = s_j^2 - s_i^2, plus
    the parts of gU, gV outside the span of U, V when A is not square."""
    gU, gS, gVh = grads
    U, S, Vh = result, result1, result2
    m, n = A_shape[-2], A_shape[-1]
    k = S.shape[-1]
    if full_matrices:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    V, gV = Vh.mT, gVh.mT
    UhgU = U.mT.matmul(gU)
    VhgV = V.mT.matmul(gV)
    S2 = S * S
    E_ = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E_ = E_ + E.eye(k, dtype=S.dtype)
    inner = ((UhgU - UhgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - VhgV.mT)) / E_
    inner = inner * (1 - E.eye(k, dtype=S.dtype)) + E.diag_embed(gS)
    gA = U.matmul(inner).matmul(Vh)
    if m > k:
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + (gUSinv - U.matmul(U.mT.matmul(gUSinv))).matmul(Vh)
    if n > k:
        gVSinv = gV / S.unsqueeze(-2)
        gA = gA + U.matmul(gVSinv.mT - gVSinv.mT.matmul(V).matmul(Vh))
    return gA


derivative("linalg_svd", {"A": _svd_grad})


def _eigh_grad(grads, result, result1):
    """A = V diag(L) V^T: gA = V (diag(gL) + (V^T gV) / E) V^T, E_ij = L_j - L_i off the
    diagonal."""
    gL, gV = grads
    L, V = result, result1
    n = L.shape[-1]
    eye = E.eye(n, dtype=L.dtype)
    E_ = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    inner = V.mT.matmul(gV) / E_ * (1 - eye) + E.diag_embed(gL)
    return V.matmul(inner).matmul(V.mT)


derivative("linalg_eigh", {"self": _eigh_grad})

# ---- softmax and losses --------------------------------------------------------------------
derivative("_softmax", {"self": lambda grad, result, dim, self:
                        E.ops.aten._softmax_backward_data(grad, result, dim, self.dtype)},
           node_name="SoftmaxBackward0")
derivative("_log_softmax", {"self": lambda grad, result, dim, self:
                            E.ops.aten._log_softmax_backward_data(grad, result, dim, self.dtype)},
           node_name="LogSoftmaxBackward0")


def _softmax_bwd_grad_output(grad, output, dim, input_dtype):
    return E.ops.aten._softmax_backward_data(grad, output, dim, input_dtype)


def _softmax_bwd_output(grad, grad_output, output, dim):
    # d/dy [y * (g - sum(g*y))] applied to grad
    s = (grad_output * output).sum(dim, keepdim=True)
    gs = (grad * output).sum(dim, keepdim=True)
    return grad * (grad_output - s) - gs * grad_output


derivative("_softmax_backward_data", {"grad_output": _softmax_bwd_grad_output,
                                      "output": _softmax_bwd_output})


def _log_softmax_bwd_output(grad, grad_output, output, dim):
    return -(grad * output.exp()) * grad_output.sum(dim, keepdim=True)


derivative("_log_softmax_backward_data", {
    "grad_output": lambda grad, output, dim, input_dtype:
        grad - (grad * output.exp()).sum(dim, keepdim=True),
    "output": _log_softmax_bwd_output})


derivative("nll_loss", {"self": lambda grad, self, target, weight, reduction, ignore_index:
                        E.ops.aten._nll_loss_backward(grad, self, target, weight, reduction,
                                                      ignore_index)},
           node_name="NllLossBackward0")
derivative("_nll_loss_backward", {  # linear in grad_output: its adjoint is nll_loss itself
    "grad_output": lambda grad, target, weight, reduction, ignore_index:
        E.ops.aten.nll_loss(grad, target, weight, reduction, ignore_index)},
    node_name="NllLossBackwardBackward0")


def _mse_grad(grad, self, target, reduction):
    d = self - target
    if reduction == 1:
        return grad * 2 * d / d.numel()
    return grad * 2 * d


derivative("mse_loss", {"self": _mse_grad,
                        "target": lambda grad, self, target, reduction:
                            -_mse_grad(grad, self, target, reduction)})

# ---- views ---------------------------------------------------------------------------------
derivative("view", {"self": lambda grad, self_shape: grad.reshape(self_shape)})
derivative("_unsafe_view", {"self": lambda grad, self_shape: grad.reshape(self_shape)},
           node_name="UnsafeViewBackward0")
derivative("alias", {"self": lambda grad: grad})
derivative("permute", {"self": lambda grad, dims: grad.permute(_inverse_perm(dims))})


def _inverse_perm(dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return inv


derivative("transpose.int", {"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
           node_name="TransposeBackward0")
derivative("expand", {"self": lambda grad, self_shape: grad.sum_to_size(self_shape)})
derivative("squeeze", {"self": lambda grad, self_shape: grad.reshape(self_shape)})
derivative("squeeze.dim", {"self": lambda grad, self_shape: grad.reshape(self_shape)},
           node_name="SqueezeBackward1")
derivative("squeeze.dims", {"self": lambda grad, self_shape: grad.reshape(self_shape)},
           node_name="SqueezeBackward2")
derivative("t", {"self": lambda grad: grad.t()}, node_name="TBackward0")
derivative("unsqueeze", {"self": lambda grad, dim: grad.squeeze(dim)})


def _embed_backward(grad, self_shape, view_fn):
    """Gradient of a view: zeros of the input's shape with `grad` written into the viewed part."""
    out = E.zeros(self_shape, dtype=grad.dtype, device=grad.device)
    return _scatter_view(out, grad, view_fn)


def _scatter_view(out, grad, view_fn):
    if grad.requires_grad:
        # differentiable: out[view] = grad expressed as an index_put over the viewed positions
        idx = E.arange(out.numel(), device=out.device).reshape(out.shape)
        pos = view_fn(idx).reshape(-1)
        return E.ops.aten.index_put(out.reshape(-1), [pos], grad.reshape(-1), True) \
            .reshape(out.shape)
    view_fn(out).copy_(grad)
    return out


derivative("select.int", {"self": lambda grad, self_shape, dim, index: _embed_backward(
    grad, self_shape, lambda t: t.select(dim, index))}, node_name="SelectBackward0")
derivative("slice.Tensor", {"self": lambda grad, self_shape, dim, start, end, step:
                            _embed_backward(grad, self_shape,
                                            lambda t: E.ops.aten.slice(t, dim, start, end, step))},
           node_name="SliceBackward0")
derivative("narrow", {"self": lambda grad, self_shape, dim, start, length: _embed_backward(
    grad, self_shape, lambda t: t.narrow(dim, start, length))}, node_name="SliceBackward0")
derivative("diagonal", {"self": lambda grad, self_shape, offset, dim1, dim2: _embed_backward(
    grad, self_shape, lambda t: t.diagonal(offset, dim1, dim2))})
derivative("unfold", {"self": lambda grad, self_shape, dimension, size, step: _embed_backward_acc(
    grad, self_shape, lambda t: t.unfold(dimension, size, step))})


def _embed_backward_acc(grad, self_shape, view_fn):
    """Like _embed_backward, for views whose elements overlap (unfold, as_strided)."""
    out = E.zeros(self_shape, dtype=grad.dtype, device=grad.device)
    idx = E.arange(out.numel(), device=out.device).reshape(out.shape)
    pos = view_fn(idx).reshape(-1)
    return E.ops.aten.index_put(out.reshape(-1), [pos], grad.reshape(-1), True).reshape(self_shape)


def _as_strided_grad(grad, self, size, stride, storage_offset):
    base = self.storage_offset()
    n = self.untyped_storage().nbytes() // self.element_size()
    flat = E.zeros((n,), dtype=grad.dtype, device=grad.device)
    idx = E.arange(n, device=grad.device)
    pos = idx.as_strided(size, stride, storage_offset).reshape(-1)
    acc = E.ops.aten.index_put(flat, [pos], grad.reshape(-1), True)
    inpos = idx.as_strided(self.shape, self.stride(), base)
    return acc.index_select(0, inpos.reshape(-1)).reshape(self.shape) if self.numel() else \
        E.zeros_like(self)


derivative("as_strided", {"self": _as_strided_grad})


def _split_grad(grads, self_shape, split_sizes, dim):
    return E.cat([g if g is not None else E.zeros(_with(self_shape, dim, s))
                  for g, s in zip(grads, split_sizes)], dim)


def _with(shape, dim, s):
    shape = list(shape)
    shape[dim] = s
    return shape


derivative("split_with_sizes", {"self": _split_grad})
derivative("split.Tensor", {"self": lambda grads, self_shape, split_size, dim: _split_grad(
    grads, self_shape, split_sizes(self_shape[dim], split_size), dim)})
derivative("unbind.int", {"self": lambda grads, dim: E.stack(list(grads), dim)})
derivative("view.dtype", None)

# ---- copies, joins, conversions ------------------------------------------------------------
derivative("clone", {"self": lambda grad: grad})
derivative("_to_copy", {"self": lambda grad, self_dtype: grad.to(self_dtype)},
           node_name="ToCopyBackward0")


def _cat_grad(grad, tensors, dim):
    sizes = [t.shape[dim] if t.dim() else 0 for t in tensors]
    d = dim % grad.dim() if grad.dim() else 0
    out, start = [], 0
    for t, s in zip(tensors, sizes):
        if t.shape == (0,) and grad.dim() != 1:
            out.append(None)
            continue
        out.append(grad.narrow(d, start, s))
        start += s
    return out


derivative("cat", {"tensors": _cat_grad})
derivative("stack", {"tensors": lambda grad, dim: list(grad.unbind(dim))})
derivative("copy_", {"self": lambda grad: grad * 0, "src": lambda grad, src_shape: grad},
           node_name="CopyBackwards")  # (sic: PyTorch's name for it)
derivative("fill_.Scalar", {"self": lambda grad: grad * 0}, node_name="FillBackward2")
derivative("zero_", {"self": lambda grad: grad * 0}, node_name="ZeroBackward0")
derivative("flip", {"self": lambda grad, dims: grad.flip(dims)})
derivative("roll", {"self": lambda grad, shifts, dims: grad.roll([-s for s in shifts], dims)})
derivative("tril", {"self": lambda grad, diagonal: grad.tril(diagonal)})
derivative("triu", {"self": lambda grad, diagonal: grad.triu(diagonal)})

# ---- shape and scatter ops (issue 3, shape/indexing) ----------------------------------------
derivative("diag_embed", {"self": lambda grad, offset, dim1, dim2:
                          grad.diagonal(offset, dim1, dim2)})
derivative("rot90", {"self": lambda grad, k, dims: E.ops.aten.rot90(grad, -k, dims)})
derivative("select_scatter", {
    "self": lambda grad, src_shape, dim, index: E.ops.aten.select_scatter(
        grad, E.zeros(src_shape, dtype=grad.dtype), dim, index),
    "src": lambda grad, dim, index: grad.select(dim, index)})
derivative("slice_scatter", {
    "self": lambda grad, src_shape, dim, start, end, step: E.ops.aten.slice_scatter(
        grad, E.zeros(src_shape, dtype=grad.dtype), dim, start, end, step),
    "src": lambda grad, dim, start, end, step: E.ops.aten.slice(grad, dim, start, end, step)})
derivative("diagonal_scatter", {
    "self": lambda grad, src_shape, offset, dim1, dim2: E.ops.aten.diagonal_scatter(
        grad, E.zeros(src_shape, dtype=grad.dtype), offset, dim1, dim2),
    "src": lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2)})

# ---- indexing ------------------------------------------------------------------------------
derivative("index.Tensor", {"self": lambda grad, self_shape, indices: E.ops.aten.index_put(
    E.zeros(self_shape, dtype=grad.dtype, device=grad.device), indices, grad, True)},
    node_name="IndexBackward0")


def _index_put_self(grad, indices, accumulate):
    if accumulate:
        return grad
    return E.ops.aten.index_put(grad, indices, E.zeros((), dtype=grad.dtype), False)


derivative("index_put_", {"self": _index_put_self,
                          "values": lambda grad, indices, values_shape:
                              E.ops.aten.index(grad, indices).sum_to_size(values_shape)},
           node_name="IndexPutBackward0")
derivative("index_put", {"self": _index_put_self,
                         "values": lambda grad, indices, values_shape:
                             E.ops.aten.index(grad, indices).sum_to_size(values_shape)})
derivative("masked_fill.Scalar", {"self": lambda grad, mask: grad.masked_fill(mask, 0)},
           node_name="MaskedFillBackward0")
derivative("masked_fill_.Scalar", {"self": lambda grad, mask: grad.masked_fill(mask, 0)},
           node_name="MaskedFillBackward0")
derivative("index_select", {"self": lambda grad, self_shape, dim, index: E.ops.aten.index_put(
    E.zeros(self_shape, dtype=grad.dtype, device=grad.device),
    [None] * (dim % len(self_shape)) + [index.reshape(-1)], grad, True) if self_shape else grad})
derivative("gather", {"self": lambda grad, self_shape, dim, index: E.ops.aten.scatter_add(
    E.zeros(self_shape, dtype=grad.dtype, device=grad.device), dim, index, grad)})
derivative("scatter_add", {"self": lambda grad: grad,
                           "src": lambda grad, dim, index: grad.gather(dim, index)})
derivative("scatter_add_", {"self": lambda grad: grad,
                            "src": lambda grad, dim, index: grad.gather(dim, index)},
           node_name="ScatterAddBackward0")
_scatter_src = {"self": lambda grad, dim, index: grad.scatter(dim, index, 0),
                "src": lambda grad, dim, index: grad.gather(dim, index)}
derivative("scatter.src", _scatter_src, node_name="ScatterBackward0")
derivative("scatter_.src", _scatter_src, node_name="ScatterBackward0")
derivative("scatter.value", {"self": _scatter_src["self"]}, node_name="ScatterBackward1")
derivative("scatter_.value", {"self": _scatter_src["self"]}, node_name="ScatterBackward1")


def _index_add_source(grad, dim, index, source_shape, alpha):
    g = grad.index_select(dim, index) if grad.dim() else grad
    g = g.reshape(source_shape)
    return g if alpha == 1 else g * alpha


derivative("index_add", {"self": lambda grad: grad, "source": _index_add_source})
derivative("index_add_", {"self": lambda grad: grad, "source": _index_add_source},
           node_name="IndexAddBackward0")
derivative("index_fill.int_Scalar", {"self": lambda grad, dim, index: grad.index_fill(dim, index,
                                                                                      0)},
           node_name="IndexFillBackward0")
derivative("index_fill_.int_Scalar", {"self": lambda grad, dim, index: grad.index_fill(dim, index,
                                                                                       0)},
           node_name="IndexFillBackward0")


def _masked_select_grad(grad, self_shape, mask):
    shape = E.broadcast_shapes(self_shape, mask.shape)
    out = E.zeros(shape, dtype=grad.dtype, device=grad.device)
    return E.ops.aten.index_put(out, [mask.expand(shape)], grad, True)


derivative("masked_select", {"self": _masked_select_grad})

# ---- neural-network functions (issue 3d) ---------------------------------------------------
# A convolution F(x, W) is linear in x and in W, and so are its two backward products
# (A_W^T g for the input, B_x^T g for the weight). The derivative of each backward product is
# therefore F or the other backward product again:
#   d<gg, A_W^T g>/dg = F(gg, W)      d<gg, A_W^T g>/dW = B_gg^T g   (weight grad, input gg)
#   d<gg, B_x^T g>/dg = F(x, gg)      d<gg, B_x^T g>/dx = A_gg^T g   (input grad, weight gg)
# which is how PyTorch's _convolution_double_backward works too.
_aten = E.ops.aten
derivative("convolution", {
    "input": lambda grad, weight, input_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_input(
        grad, weight, input_shape, stride, padding, dilation, transposed, output_padding, groups),
    "weight": lambda grad, input, weight_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_weight(
        grad, input, weight_shape, stride, padding, dilation, transposed, output_padding, groups),
    "bias": lambda grad: grad.sum([0] + list(range(2, grad.dim())))})
derivative("_convolution_backward_input", {
    "grad_output": lambda grad, weight, stride, padding, dilation, transposed, output_padding,
    groups: _aten.convolution(grad, weight, None, stride, padding, dilation, transposed,
                              output_padding, groups),
    "weight": lambda grad, grad_output, weight_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_weight(
        grad_output, grad, weight_shape, stride, padding, dilation, transposed, output_padding,
        groups)}, node_name="ConvolutionBackwardBackward0")
derivative("_convolution_backward_weight", {
    "grad_output": lambda grad, input, stride, padding, dilation, transposed, output_padding,
    groups: _aten.convolution(input, grad, None, stride, padding, dilation, transposed,
                              output_padding, groups),
    "input": lambda grad, grad_output, input_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_input(
        grad_output, grad, input_shape, stride, padding, dilation, transposed, output_padding,
        groups)}, node_name="ConvolutionBackwardBackward0")
derivative("im2col", {"self": lambda grad, self_shape, kernel_size, dilation, padding, stride:
                      _aten.col2im(grad, list(self_shape[-2:]), kernel_size, dilation, padding,
                                   stride)})
derivative("col2im", {"self": lambda grad, kernel_size, dilation, padding, stride:
                      _aten.im2col(grad, kernel_size, dilation, padding, stride)})


def _gather_at(grad, indices, nd):
    """grad (..., *in) read at the flat spatial `indices` (..., *out): max pooling's gradient
    of its gradient (PyTorch's max_pool_double_backward) and max_unpool's gradient."""
    return grad.flatten(-nd).gather(-1, indices.flatten(-nd)).reshape(indices.shape)


def _pooling_derivatives(nd):
    max_pool_backward = getattr(_aten, f"max_pool{nd}d_with_indices_backward")
    avg_pool, avg_pool_backward = (getattr(_aten, f"avg_pool{nd}d"),
                                   getattr(_aten, f"avg_pool{nd}d_backward"))
    adaptive_max_backward = getattr(_aten, f"adaptive_max_pool{nd}d_backward")
    derivative(f"max_pool{nd}d_with_indices", {
        "self": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
            max_pool_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                              result1)},
        output_differentiability=[True, False])
    derivative(f"max_pool{nd}d_with_indices_backward", {
        "grad_output": lambda grad, indices: _gather_at(grad, indices, nd)})
    derivative(f"avg_pool{nd}d", {
        "self": lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override: avg_pool_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                            count_include_pad, divisor_override)})
    derivative(f"avg_pool{nd}d_backward", {
        "grad_output": lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override: avg_pool(grad, kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override)})
    derivative(f"adaptive_max_pool{nd}d", {
        "self": lambda grad, self, result1: adaptive_max_backward(grad, self, result1)},
        output_differentiability=[True, False])
    derivative(f"adaptive_max_pool{nd}d_backward", {
        "grad_output": lambda grad, indices: _gather_at(grad, indices, nd)})
    derivative(f"max_unpool{nd}d", {"self": lambda grad, indices: _gather_at(grad, indices, nd)})


_pooling_derivatives(2)
_pooling_derivatives(3)


def _batch_norm_grads(grads, input, weight, running_mean, running_var, result1, result2,
                      training, eps):
    return _aten.native_batch_norm_backward(grads[0], input, weight, running_mean, running_var,
                                            result1, result2, training, eps)


derivative("native_batch_norm", {"input, weight, bias": _batch_norm_grads},
           output_differentiability=[True, False, False])


def _batch_norm_double_backward(grads, grad_out, input, weight, running_mean, running_var,
                                save_mean, save_invstd, train, eps, needs):
    """The derivative of batch norm's backward (PyTorch's batchnorm_double_backward), in
    differentiable ops. gg_x, gg_w, gg_b are the incoming gradients of (grad_input, grad_weight,
    grad_bias); the result is the gradient for (grad_out, input, weight)."""
    gg_x, gg_w, gg_b = grads
    nd = input.dim()
    dims = [0] + list(range(2, nd))
    shape = [1, -1] + [1] * (nd - 2)

    def per_channel(t):
        return t.reshape(shape)

    def channel_sum(t):
        return t.sum(dims, keepdim=True)
    m = input.numel() // input.shape[1]
    if train:
        mean = per_channel(save_mean.to(input.dtype))
        invstd = per_channel(save_invstd.to(input.dtype))
    else:
        mean = per_channel(running_mean)
        invstd = per_channel((running_var + eps).rsqrt())
    gamma = per_channel(weight) if weight is not None else 1.0
    centered = input - mean
    invstd2, invstd3 = invstd * invstd, invstd * invstd * invstd
    g_sum = channel_sum(grad_out)
    g_centered_sum = channel_sum(grad_out * centered)
    gg_x_sum = channel_sum(gg_x)
    gg_x_centered_sum = channel_sum(gg_x * centered)

    def first_backward(g, scale):
        """batch norm's input gradient for output gradient g, weight `scale`"""
        return scale * invstd / m * (m * g - channel_sum(g) - centered * invstd2 *
                                     channel_sum(g * centered))
    grad_input = grad_weight = grad_grad_out = None
    if needs[1]:
        if train:
            common = (gg_x_sum * g_sum / m - channel_sum(grad_out * gg_x) +
                      3 / m * invstd2 * g_centered_sum * gg_x_centered_sum)
            grad_input = gamma * (centered * invstd3 * common / m +
                                  gg_x_centered_sum * invstd3 / m * (g_sum / m - grad_out) +
                                  g_centered_sum * invstd3 / m * (gg_x_sum / m - gg_x))
            grad_input = grad_input + per_channel(gg_w) * (
                grad_out * invstd - invstd * g_sum / m - centered * invstd3 * g_centered_sum / m)
        else:
            grad_input = per_channel(gg_w) * invstd * grad_out
    if needs[2] and weight is not None:
        if train:
            grad_weight = (gg_x * first_backward(grad_out, 1.0)).sum(dims)
        else:
            grad_weight = (gg_x * grad_out * invstd).sum(dims)
    if needs[0]:
        grad_grad_out = first_backward(gg_x, gamma) if train else gg_x * invstd * gamma
        grad_grad_out = grad_grad_out + per_channel(gg_w) * centered * invstd + per_channel(gg_b)
    return grad_grad_out, grad_input, grad_weight


derivative("native_batch_norm_backward",
           {"grad_out, input, weight": _batch_norm_double_backward})


def _row_norm_double_backward(grads, grad_out, input, mean, rstd, weight, view, needs):
    """The derivative of layer/group norm's backward, in differentiable ops, on the
    (N, G, C, L) view whose rows (dims 2, 3) share one mean and rstd and whose weight is per
    (G, C). With x_hat = (x - mean) * rstd and F(v) = rstd * (v - mean(v) - x_hat *
    mean(v * x_hat)) per row (the input gradient for an x_hat gradient v; F is symmetric),
    the backward is grad_input = F(g * w), grad_weight = sum(g * x_hat), grad_bias = sum(g).
    The input term of F's own derivative is batch norm's (see above) with rows for channels."""
    gg_x, gg_w, gg_b = grads
    n, groups, c, length = view
    m = c * length
    x = input.reshape(view)
    g = grad_out.reshape(view)
    s = rstd.to(x.dtype).reshape(n, groups, 1, 1)
    centered = x - mean.to(x.dtype).reshape(n, groups, 1, 1)
    xhat = centered * s
    w = weight.reshape(1, groups, c, 1) if weight is not None else None
    ggw = gg_w.reshape(1, groups, c, 1) if weight is not None and gg_w is not None else None
    ggx = gg_x.reshape(view)

    def rsum(t):
        return t.sum([2, 3], keepdim=True)

    def first_backward(v):
        return s * (v - rsum(v) / m - xhat * (rsum(v * xhat) / m))
    grad_grad_out = grad_input = grad_weight = None
    f_ggx = first_backward(ggx) if needs[0] or needs[2] else None
    if needs[0]:
        grad_grad_out = f_ggx * w if w is not None else f_ggx
        if ggw is not None:
            grad_grad_out = grad_grad_out + ggw * xhat
        if gg_b is not None:
            grad_grad_out = grad_grad_out + gg_b.reshape(1, groups, c, 1)
        grad_grad_out = grad_grad_out.reshape(input.shape)
    if needs[1]:
        u = g * w if w is not None else g
        s3 = s * s * s
        u_sum, u_centered_sum = rsum(u), rsum(u * centered)
        ggx_sum, ggx_centered_sum = rsum(ggx), rsum(ggx * centered)
        common = (ggx_sum * u_sum / m - rsum(u * ggx) +
                  3 / m * s * s * u_centered_sum * ggx_centered_sum)
        grad_input = (centered * s3 * common / m +
                      ggx_centered_sum * s3 / m * (u_sum / m - u) +
                      u_centered_sum * s3 / m * (ggx_sum / m - ggx))
        if ggw is not None:
            grad_input = grad_input + first_backward(g * ggw)
        grad_input = grad_input.reshape(input.shape)
    if needs[2] and weight is not None:
        grad_weight = (g * f_ggx).sum([0, 3]).reshape(weight.shape)
    return grad_grad_out, grad_input, grad_weight


def _layer_norm_view(input, normalized_shape):
    k = len(normalized_shape)
    return (math.prod(input.shape[:input.dim() - k]), 1, math.prod(normalized_shape), 1)


derivative("native_layer_norm", {
    "input, weight, bias": lambda grads, input, normalized_shape, weight, bias, result1, result2,
    needs: _aten.native_layer_norm_backward(grads[0], input, normalized_shape, result1, result2,
                                            weight, bias, list(needs))},
    output_differentiability=[True, False, False])
derivative("native_layer_norm_backward", {
    "grad_out, input, weight": lambda grads, grad_out, input, normalized_shape, mean, rstd,
    weight, needs: _row_norm_double_backward(grads, grad_out, input, mean, rstd, weight,
                                             _layer_norm_view(input, normalized_shape), needs)})
def _group_norm_grads(grads, input, weight, N, C, HxW, group, result1, result2, needs):
    """The kernel's gradients for the output, plus (as in PyTorch, whose group norm mean and
    rstd are differentiable) the input gradient through mean and rstd when these received a
    nonzero gradient: d mean / dx = 1 / m, d rstd / dx = -rstd^3 (x - mean) / m per group."""
    out = _aten.native_group_norm_backward(grads[0], input, result1, result2, weight, N, C, HxW,
                                           group, list(needs))
    g_mean, g_rstd = grads[1], grads[2]
    if not needs[0] or not (bool(g_mean.any()) or bool(g_rstd.any())):
        return out
    x = input.reshape(N, group, -1)
    mean, rstd = result1.unsqueeze(-1), result2.unsqueeze(-1)
    extra = (g_mean.unsqueeze(-1) - g_rstd.unsqueeze(-1) * rstd * rstd * rstd * (x - mean))
    return (out[0] + (extra / x.shape[-1]).reshape(input.shape),) + tuple(out[1:])


derivative("native_group_norm", {"input, weight, bias": _group_norm_grads})
derivative("native_group_norm_backward", {
    "grad_out, input, weight": lambda grads, grad_out, input, mean, rstd, weight, N, C, HxW,
    group, needs: _row_norm_double_backward(grads, grad_out, input, mean, rstd, weight,
                                            (N, group, C // group, HxW), needs)})
def _embedding_weight(grad, weight_shape, indices, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): ember has no sparse tensors, so it cannot produce the "
            "sparse COO weight gradient PyTorch gives; use sparse=False for a dense gradient")
    return _aten.embedding_dense_backward(grad, indices, weight_shape[0], padding_idx,
                                          scale_grad_by_freq)


derivative("embedding", {"weight": _embedding_weight})
derivative("embedding_dense_backward", {
    "grad_output": lambda grad, indices, padding_idx: _aten.embedding(grad, indices).masked_fill(
        (indices == padding_idx).unsqueeze(-1), 0)})
derivative("constant_pad_nd", {"self": lambda grad, pad: _aten.constant_pad_nd(
    grad, [-p for p in pad])})


def _index_pad_derivatives(name):
    forward, backward = getattr(_aten, name), getattr(_aten, name + "_backward")
    derivative(name, {"self": lambda grad, self, padding: backward(grad, self, padding)})
    derivative(name + "_backward", {"grad_output": lambda grad, padding: forward(grad, padding)})


for _kind in ("reflection", "replication"):
    for _nd in (1, 2, 3):
        _index_pad_derivatives(f"{_kind}_pad{_nd}d")
not_differentiable("embedding_renorm_", "one_hot")

# ---- elementwise math, activations (issue 3a) ----------------------------------------------
# An in-place op (`tan_`) has its out-of-place op's formula and node (TanBackward0).
def _same_as(name, formulas, node_name=None, inplace_node=None):
    base = name.split(".")[0]
    derivative(name, formulas, node_name=node_name)
    derivative(name.replace(base, base + "_", 1), formulas,
               node_name=inplace_node or node_name or node_name_of(base))


_LN2, _LN10 = math.log(2), math.log(10)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

for _name, _formula in (
        ("neg", lambda grad: -grad),
        ("abs", lambda grad, self: grad * E.sgn(self)),
        ("sign", lambda grad: grad * 0),
        ("exp", lambda grad, result: grad * _conj(result)),
        ("log", lambda grad, self: grad / _conj(self)),
        ("log1p", lambda grad, self: grad / (self + 1)),
        ("expm1", lambda grad, result: grad * (result + 1)),
        ("sqrt", lambda grad, result: grad / (2 * _conj(result))),
        ("rsqrt", lambda grad, result: -0.5 * grad * result.pow(3)),
        ("sin", lambda grad, self: grad * self.cos()),
        ("cos", lambda grad, self: -grad * self.sin()),
        ("tanh", lambda grad, result: E.ops.aten.tanh_backward(grad, result)),
        ("sigmoid", lambda grad, result: E.ops.aten.sigmoid_backward(grad, result))):
    derivative(f"{_name}_", {"self": _formula}, node_name=node_name_of(_name))

_same_as("tan", {"self": lambda grad, result: grad * (1 + result * result)})
_same_as("asin", {"self": lambda grad, self: grad * (1 - self * self).rsqrt()})
_same_as("acos", {"self": lambda grad, self: -grad * (1 - self * self).rsqrt()})
_same_as("atan", {"self": lambda grad, self: grad / (self * self + 1)})
_same_as("sinh", {"self": lambda grad, self: grad * self.cosh()})
_same_as("cosh", {"self": lambda grad, self: grad * self.sinh()})
# PyTorch has no derivative for asinh_, acosh_ and atanh_: their backward raises
derivative("asinh", {"self": lambda grad, self: grad * (self * self + 1).rsqrt()})
derivative("acosh", {"self": lambda grad, self: grad * (self * self - 1).rsqrt()})
derivative("atanh", {"self": lambda grad, self: grad / (1 - self * self)})
_same_as("log2", {"self": lambda grad, self: grad / (self * _LN2)})
_same_as("log10", {"self": lambda grad, self: grad / (self * _LN10)})
_same_as("exp2", {"self": lambda grad, result: grad * result * _LN2})
_same_as("reciprocal", {"self": lambda grad, result: -grad * (result * result)})
_same_as("erf", {"self": lambda grad, self: grad * _TWO_OVER_SQRT_PI * (-self * self).exp()})
_same_as("erfc", {"self": lambda grad, self: -grad * _TWO_OVER_SQRT_PI * (-self * self).exp()})
_same_as("erfinv", {"self": lambda grad, result:
                    grad * (math.sqrt(math.pi) / 2) * (result * result).exp()})
_same_as("lgamma", {"self": lambda grad, self: grad * self.digamma()})
_same_as("digamma", {"self": lambda grad, self: grad * E.polygamma(1, self)})
derivative("polygamma", {"self": lambda grad, n, self: grad * E.polygamma(n + 1, self)})
derivative("polygamma_", {"self": lambda grad, n, self: grad * E.polygamma(n + 1, self)},
           node_name="PolygammaBackward0")
for _name in ("trunc", "floor", "ceil", "round"):
    _same_as(_name, {"self": lambda grad: grad * 0})
_same_as("round.decimals", {"self": lambda grad: grad * 0}, node_name="RoundBackward1")
_same_as("frac", {"self": lambda grad: grad})
_same_as("nan_to_num", {"self": lambda grad, self: grad * self.isfinite()})


def _fmod_node(other):
    return "FmodBackward1" if hasattr(other, "_size") else "FmodBackward0"


_fmod = {"self": lambda grad: grad,
         "other": lambda grad, self, other: -grad * E.div(self, other, rounding_mode="trunc")}
derivative("fmod.Tensor", _fmod, node_name=_fmod_node)
derivative("fmod_.Tensor", _fmod, node_name=_fmod_node)
_same_as("hypot", {"self": lambda grad, self, result: grad * self / result,
                   "other": lambda grad, other, result: grad * other / result})


def _atan2_grads(grad, self, other, needs):
    scale = grad / (self * self + other * other)
    return (scale * other if needs[0] else None, scale * -self if needs[1] else None)


_same_as("atan2", {"self, other": _atan2_grads})


def _copysign_node(other):
    return "CopysignBackward0" if hasattr(other, "_size") else "CopysignBackward1"


_copysign = {"self": lambda grad, self, result: grad * E.where(self == 0, 0.0, result / self),
             "other": lambda grad, other: grad * 0}
derivative("copysign.Tensor", _copysign, node_name=_copysign_node)
derivative("copysign_.Tensor", _copysign, node_name=_copysign_node)


# torch's remaining public elementwise callables (coverage)
derivative("logaddexp", {"self": lambda grad, self, other: grad / (1 + (other - self).exp()),
                         "other": lambda grad, self, other: grad / (1 + (self - other).exp())})
derivative("logaddexp2", {"self": lambda grad, self, other: grad / (1 + (other - self).exp2()),
                          "other": lambda grad, self, other: grad / (1 + (self - other).exp2())})


def _fmaxmin_grads(self_wins):
    """fmax/fmin: the gradient goes to self where it is picked (ties included) or `other` is
    NaN, to `other` everywhere else."""
    def grads(grad, self, other, needs):
        pick_self = self_wins(self, other) | other.isnan()
        return (E.where(pick_self, grad, 0.0) if needs[0] else None,
                E.where(pick_self, 0.0, grad) if needs[1] else None)
    return grads


derivative("fmax", {"self, other": _fmaxmin_grads(lambda a, b: a >= b)})
derivative("fmin", {"self, other": _fmaxmin_grads(lambda a, b: a <= b)})
_xlogy = {"self": lambda grad, self, other: grad * E.xlogy(self != 0, other),
          "other": lambda grad, self, other: grad * self / other}
derivative("xlogy.Tensor", _xlogy)
derivative("xlogy_.Tensor", _xlogy, node_name="XlogyBackward0")


def _igamma_self(grad):
    raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")


def _igamma_density(self, other):
    """d/dx of the regularized lower incomplete gamma P(a, x): x^(a-1) e^-x / Gamma(a)."""
    return ((self - 1) * other.log() - other - self.lgamma()).exp()


_same_as("igamma", {"self": _igamma_self,
                    "other": lambda grad, self, other: grad * _igamma_density(self, other)})
_same_as("igammac", {"self": _igamma_self,
                     "other": lambda grad, self, other: -grad * _igamma_density(self, other)})
_same_as("nextafter", {"self": lambda grad: grad, "other": lambda grad: grad * 0})


def _sinc_grad(grad, self):
    pi_x = self * math.pi
    return E.where(self == 0, 0.0, grad * ((pi_x * pi_x.cos() - pi_x.sin()) / (pi_x * self)))


_same_as("sinc", {"self": _sinc_grad})
_same_as("i0", {"self": lambda grad, self: grad * E.ops.aten.special_i1(self)})
derivative("special_i1", {"self": lambda grad, self, result: _float_only_backward(
    "i1_backward", self) * grad * E.where(self == 0, 0.5, self.i0() - result / self)})


def _logit_grad(grad, self, eps):
    """grad / (x (1 - x)); outside [eps, 1 - eps] 0 (x was clamped), or NaN outside [0, 1]
    without eps."""
    lo, hi, outside = (0.0, 1.0, math.nan) if eps is None else (eps, 1 - eps, 0.0)
    return E.where((self < lo) | (self > hi), outside, grad / (self * (1 - self)))


_same_as("logit", {"self": _logit_grad})
derivative("frexp.Tensor", {"self": lambda grad, result1: grad / E.pow(2.0, result1.to(
    grad.dtype))}, output_differentiability=[True, False])
not_differentiable("gcd", "gcd_", "lcm", "lcm_", "signbit", "isposinf", "isneginf", "isreal")
derivative("angle", {"self": lambda grad: grad * 0})  # real inputs: piecewise constant
derivative("view_as_real", {"self": lambda grad: E.view_as_complex(grad.contiguous())})
_same_as("conj_physical", {"self": lambda grad: E.conj_physical(grad)})
derivative("view_as_complex", {"self": lambda grad: E.view_as_real(grad.contiguous())})
# PyTorch's formula takes 2 ** other in other's dtype: an integer pow, 0 for negative exponents
_same_as("ldexp.Tensor", {"self": lambda grad, other: grad * E.pow(2, other),
                          "other": lambda grad, self, other: grad * self * _LN2 * E.pow(2, other)})
derivative("remainder_.Tensor", {
    "self": lambda grad: grad,
    "other": lambda grad, self, other: -grad * E.div(self, other, rounding_mode="floor")},
    node_name="RemainderBackward0")


def _lerp_node(weight):
    return "LerpBackward1" if hasattr(weight, "_size") else "LerpBackward0"


_lerp = {"self": lambda grad, weight: grad * (1 - weight),
         "end": lambda grad, weight: grad * weight,
         "weight": lambda grad, self, end: grad * (end - self)}
derivative("lerp.Tensor", _lerp, node_name=_lerp_node)
derivative("lerp_.Tensor", _lerp, node_name=_lerp_node)
_same_as("addcmul", {"self": lambda grad: grad,
                     "tensor1": lambda grad, tensor2, value: grad * tensor2 * value,
                     "tensor2": lambda grad, tensor1, value: grad * tensor1 * value})
_same_as("addcdiv", {"self": lambda grad: grad,
                     "tensor1": lambda grad, tensor2, value: grad * value / tensor2,
                     "tensor2": lambda grad, tensor1, tensor2, value:
                         -grad * value * tensor1 / (tensor2 * tensor2)})

# activations: each formula compares as PyTorch's backward kernel does (which side of the
# kink a boundary point takes, and where NaN goes)
_same_as("elu", {"self": lambda grad, self, alpha, scale, input_scale: E.where(
    self <= 0, grad * (input_scale * alpha * scale) * (self * input_scale).exp(),
    grad * scale)}, inplace_node="EluBackward1")
_same_as("leaky_relu", {"self": lambda grad, self, negative_slope:
                        E.where(self > 0, grad, grad * negative_slope)},
         inplace_node="LeakyReluBackward1")
_same_as("hardtanh", {"self": lambda grad, self, min_val, max_val:
                      E.where((self <= min_val) | (self >= max_val), grad * 0, grad)})
_same_as("hardsigmoid", {"self": lambda grad, self:
                         E.where((self > -3) & (self < 3), grad / 6, grad * 0)})
_same_as("hardswish", {"self": lambda grad, self: E.where(
    self <= -3, grad * 0, E.where(self < 3, grad * (self / 3 + 0.5), grad))})


def _mish_grad(grad, self):
    t = E.ops.aten.softplus(self, 1, 20).tanh()
    return grad * (t + self * self.sigmoid() * (1 - t * t))


_same_as("mish", {"self": _mish_grad})
derivative("log_sigmoid", {"self": lambda grad, self: grad * (-self).sigmoid()})


def _shrink_grad(grad, self, lambd):
    return E.where((self >= -lambd) & (self <= lambd), grad * 0, grad)


derivative("hardshrink", {"self": _shrink_grad})
derivative("softshrink", {"self": _shrink_grad})
_same_as("threshold", {"self": lambda grad, self, threshold:
                       E.ops.aten.threshold_backward(grad, self, threshold)})


def _glu_grad(grad, self, dim):
    a, b = self.chunk(2, dim)
    gate = b.sigmoid()
    return E.cat([grad * gate, grad * a * gate * (1 - gate)], dim)


derivative("glu", {"self": _glu_grad})
derivative("_prelu_kernel", {
    "self": lambda grad, self, weight: E.where(self > 0, grad, weight * grad),
    "weight": lambda grad, self: E.where(self > 0, grad * 0, self * grad)},
    node_name="PreluKernelBackward0")

# ---- reductions and scans (issue 3b) -------------------------------------------------------


def _vector_norm_grad(grad, self, result, ord, dim, keepdim):
    """PyTorch's norm_backward, written with differentiable ops."""
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    norm = _unsqueeze_dims(result, self.shape, dim, keepdim)
    p = float(ord)
    if p == 0:
        return self * 0
    if p == 1:
        return self.sign() * g
    if p == 2:
        return g * E.where(norm == 0, 0.0, self / norm)
    if math.isinf(p):
        mask = (self.abs() == norm) | self.isnan()
        count = mask.sum(dim=dim, keepdim=True) if dim else mask.sum()
        return self.sign() * (g / count) * mask
    if p < 1:
        scaled = self.sign() * E.where(self == 0, 0.0, self.abs().pow(p - 1))
        return scaled * g * norm.pow(1 - p)
    scaled = self.sign() * self.abs().pow(p - 1) if p < 2 else self * self.abs().pow(p - 2)
    return scaled * E.where(norm == 0, 0.0, g / norm.pow(p - 1))


derivative("linalg_vector_norm", {"self": _vector_norm_grad})
derivative("nansum", {"self": lambda grad, self, dim, keepdim: E.where(
    self.isnan(), 0.0, _unsqueeze_dims(grad, self.shape, dim, keepdim).expand(self.shape))})


def _evenly_distribute(grad, self, result):
    """median() and nanmedian(): the gradient shared by every element equal to the result
    (every NaN if the result is NaN)."""
    mask = (self == result) | (self.isnan() & result.isnan())
    return mask * (grad / mask.sum())


derivative("median", {"self": _evenly_distribute})
derivative("nanmedian", {"self": _evenly_distribute})
for _name, _node in (("median.dim", "MedianBackward1"), ("nanmedian.dim", "NanmedianBackward1"),
                     ("mode", "ModeBackward0"), ("kthvalue", "KthvalueBackward0")):
    derivative(_name, {"self": _value_index_grad}, node_name=_node,
               output_differentiability=[True, False])


def _aminmax_grad(grads, self, result, result1, dim, keepdim):
    dims = None if dim is None else [dim]
    return _amax_grad(grads[0], self, result, dims, keepdim) + \
        _amax_grad(grads[1], self, result1, dims, keepdim)


derivative("aminmax", {"self": _aminmax_grad})


def _reverse_cumsum(x, dim):
    return x.flip(dim).cumsum(dim).flip(dim)


def _cumsum_grad(grad, self, dim):
    return grad if self.dim() == 0 else _reverse_cumsum(grad, dim)


def _cumprod_grad(grad, self, result, dim):
    """d out_j / d x_i is the product of x_k over k <= j, k != i (for i <= j). Without zeros
    that is out_j / x_i, so the gradient is a reverse cumsum of grad * out, over x. With
    zeros, each row i of an n x n matrix holds x with x_i set to 1: its cumprod is the
    product for every j, summed against grad over j >= i."""
    if self.dim() == 0:
        return grad
    if not (self == 0).any():
        return _reverse_cumsum(grad * result, dim) / self
    x, g = self.movedim(dim, -1), grad.movedim(dim, -1)
    n = x.shape[-1]
    rows = x.unsqueeze(-2).expand(*x.shape[:-1], n, n)
    partial = E.where(E.eye(n, dtype=E._dtype.bool), 1.0, rows).cumprod(-1)
    upper = E.ones(n, n, dtype=E._dtype.bool).triu()
    return (E.where(upper, partial, 0.0) * g.unsqueeze(-2)).sum(-1).movedim(-1, dim)


_same_as("cumsum", {"self": _cumsum_grad})
_same_as("cumprod", {"self": _cumprod_grad})


def _cummaxmin_grad(grads, self, dim, result1):
    if self.dim() == 0:
        return grads[0]
    return E.ops.aten.scatter_add(E.zeros_like(self, dtype=grads[0].dtype), dim, result1,
                                  grads[0])


derivative("cummax", {"self": _cummaxmin_grad}, output_differentiability=[True, False])
derivative("cummin", {"self": _cummaxmin_grad}, output_differentiability=[True, False])


def _logcumsumexp_grad(grad, self, result, dim):
    """sum over j >= i of grad_j exp(x_i - out_j), in log space for each sign of grad (the
    positive and negative parts may not cancel through exp of large numbers)."""
    if self.dim() == 0 or self.numel() == 0:
        return grad

    def reverse_logcumsumexp(x):
        return x.flip(dim).logcumsumexp(dim).flip(dim)
    lowest = float_limits(grad.dtype)[0]  # log(0), kept finite
    log_abs = grad.abs().log() - result
    positive = E.where(grad > 0, log_abs, lowest)
    negative = E.where(grad < 0, log_abs, lowest)
    # lowest + x may round to -inf (exp gives the 0 it stands for): PyTorch does so silently
    with np.errstate(over="ignore"):
        return (reverse_logcumsumexp(positive) + self).exp() - \
            (reverse_logcumsumexp(negative) + self).exp()


derivative("logcumsumexp", {"self": _logcumsumexp_grad})

# ---- sorting and selection (issue 3c) ------------------------------------------------------


def _sort_grad(grads, self, dim, result1):
    if self.dim() == 0:
        return grads[0]
    return E.ops.aten.scatter_add(E.zeros_like(self, dtype=grads[0].dtype), dim, result1,
                                  grads[0])


derivative("sort.stable", {"self": _sort_grad}, node_name="SortBackward0",
           output_differentiability=[True, False])
derivative("topk", {"self": _sort_grad}, output_differentiability=[True, False])
not_differentiable("isnan", "isinf", "isfinite", "bitwise_left_shift.Tensor",
                   "bitwise_left_shift_.Tensor", "bitwise_right_shift.Tensor",
                   "bitwise_right_shift_.Tensor", "logical_not_", "bitwise_not_",
                   "count_nonzero.dim_IntList", "searchsorted.Tensor", "bucketize.Tensor",
                   "histc")


# ---- no gradient ---------------------------------------------------------------------------
not_differentiable(
    "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and.Tensor",
    "bitwise_or.Tensor", "bitwise_xor.Tensor", "bitwise_not", "argmax", "argmin", "all.dims",
    "any.dims", "empty.memory_format", "empty_strided", "full", "arange.start_step", "linspace",
    "eye.m", "scalar_tensor", "_tensor_from_data", "uniform_", "normal_", "random_.from",
    "bernoulli_.float", "bernoulli", "randperm", "view.dtype")
not_differentiable("random_", "exponential_", "geometric_", "cauchy_", "log_normal_",
                   "multinomial")  # random (issue 3, random)


# ---- scatter reductions, copies and puts (issue 3, remaining ops) --------------------------
def _reduce_backward(grad, self, src, result, reduce, include_self, pick, spread, again,
                     clear):
    """PyTorch's scatter_reduce_backward / index_reduce_backward, for reductions that place
    src's entries into self: `pick(t)` reads t where each src entry went, `spread(t, v)` adds v
    there, `again(s, v)` reruns the reduction and `clear(g)` zeroes the reached positions.
    prod divides the result by each factor, except where a factor is zero: a lone zero among
    src's contributions gets the product of the others (recomputed with that zero replaced by
    one). amax/amin share the gradient evenly between all entries equal to the result."""
    if reduce == "sum":
        grad_self, grad_src = grad, pick(grad)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        grad_self = grad * again(masked_self, src) / masked_self
        src_zero = src == 0
        src_num_zeros = pick(spread(E.zeros_like(self), src_zero.to(self.dtype)))
        src_single_zero = src_zero & (src_num_zeros == 1)
        masked_src_result = again(self, src.masked_fill(src_single_zero, 1))
        grad_src = E.where(src_single_zero, pick(grad * masked_src_result),
                           pick(grad * result) / src.masked_fill(src_zero, 1))
    elif reduce == "mean":
        n = E.ones_like(grad) if include_self else E.zeros_like(grad)
        n = spread(n, E.ones_like(src, dtype=grad.dtype))
        n = n.masked_fill(n == 0, 1)
        grad_self, grad_src = grad / n, pick(grad) / pick(n)
    elif reduce in ("amax", "amin"):
        self_is_result = self == result
        src_is_value = src == pick(result)
        shared = grad / spread(self_is_result.to(grad.dtype), src_is_value.to(grad.dtype))
        grad_self = shared * self_is_result
        grad_src = pick(shared) * src_is_value
    else:  # the forward's undocumented "max" / "min" spellings
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    return (grad_self if include_self else clear(grad_self)), grad_src


def _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result):
    return _reduce_backward(
        grad, self, src, result, reduce, include_self,
        pick=lambda t: t.gather(dim, index), spread=lambda t, v: t.scatter_add(dim, index, v),
        again=lambda s, v: s.scatter_reduce(dim, index, v, reduce, include_self=include_self),
        clear=lambda g: g.scatter(dim, index, 0))


def _index_reduce_grads(grad, self, dim, index, source, reduce, include_self, result):
    return _reduce_backward(
        grad, self, source, result, reduce, include_self,
        pick=lambda t: t.index_select(dim, index),
        spread=lambda t, v: t.index_add(dim, index, v),
        again=lambda s, v: s.index_reduce(dim, index, v, reduce, include_self=include_self),
        clear=lambda g: g.index_fill(dim, index, 0))


derivative("index_reduce", {"self, source": _index_reduce_grads})
derivative("index_reduce_", {"self, source": _index_reduce_grads},
           node_name="IndexReduceBackward0")
derivative("scatter_reduce.two", {"self, src": _scatter_reduce_grads})
derivative("scatter_reduce_.two", {"self, src": _scatter_reduce_grads},
           node_name="ScatterReduceBackward0")


def _masked_scatter_source(grad, mask, source_shape):
    """The masked positions' gradients in order, padded with zeros to source's size."""
    selected = grad.masked_select(mask)
    n = math.prod(source_shape)
    if selected.numel() < n:
        selected = E.cat([selected, selected.new_zeros(n - selected.numel())])
    return selected.reshape(source_shape)


_masked_scatter = {"self": lambda grad, mask: grad.masked_fill(mask, 0),
                   "source": _masked_scatter_source}
derivative("masked_scatter", _masked_scatter)
derivative("masked_scatter_", _masked_scatter, node_name="MaskedScatterBackward0")


def _index_copy_source(grad, dim, index, source_shape):
    if not source_shape:
        return grad.index_select(dim, index.reshape(-1)).reshape(())
    return grad.index_select(dim, index).expand(source_shape)


_index_copy = {"self": lambda grad, dim, index: grad.index_fill(dim, index, 0),
               "source": _index_copy_source}
derivative("index_copy", _index_copy)
derivative("index_copy_", _index_copy, node_name="IndexCopyBackward0")
_put = {"self": lambda grad, index, source_shape, accumulate: grad if accumulate else
        grad.put(index, E.zeros(source_shape, dtype=grad.dtype, device=grad.device)),
        "source": lambda grad, index, source_shape: grad.take(index).reshape(source_shape)}
derivative("put", _put)
derivative("put_", _put, node_name="PutBackward0")
derivative("take", {"self": lambda grad, self_shape, index: E.zeros(
    self_shape, dtype=grad.dtype, device=grad.device).put(index, grad, True)})


# ---- in-place view ops (issue 3, remaining ops): the inverse view of the gradient ----------
derivative("t_", {"self": lambda grad: grad.t()}, node_name="TBackward1")
for _name in ("transpose_", "swapdims_"):
    derivative(_name, {"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
               node_name="TransposeBackward1")
derivative("swapaxes_", {"self": lambda grad, axis0, axis1: grad.transpose(axis0, axis1)},
           node_name="TransposeBackward1")
for _name, _k in (("squeeze_", 3), ("squeeze_.dim", 4), ("squeeze_.dims", 5)):
    derivative(_name, {"self": lambda grad, self_shape: grad.reshape(self_shape)},
               node_name=f"SqueezeBackward{_k}")
derivative("unsqueeze_", {"self": lambda grad, dim: grad.squeeze(dim)},
           node_name="UnsqueezeBackward1")
# as_strided_ has no formula here (its gradient needs self's geometry before the op): backward
# through it raises. resize_ refuses tensors that require grad (see Tensor.resize_).
not_differentiable("resize_", "resize_as_")
derivative("poisson", {"self": lambda grad: grad * 0})  # a sample does not move with its rate
# fractional max pooling sends each gradient where its index points, as adaptive max pooling
derivative("fractional_max_pool2d", {"self": lambda grad, self, result1:
                                     _aten.adaptive_max_pool2d_backward(grad, self, result1)},
           output_differentiability=[True, False])
derivative("fractional_max_pool3d", {"self": lambda grad, self, result1:
                                     _aten.adaptive_max_pool3d_backward(grad, self, result1)},
           output_differentiability=[True, False])

# ---- torch.special's own ops (ember/_aten/special.py)
def _float_only_backward(kernel, self):
    """1, or PyTorch's error for a backward kernel compiled for float32/float64 only."""
    if self.dtype in (E._dtype.float16, E._dtype.bfloat16):
        raise not_implemented(kernel, self.dtype)
    return 1


_SQRT_2PI = math.sqrt(2 * math.pi)
derivative("special_xlog1py", {
    "self": lambda grad, self, other: grad * (
        E.log1p(other) if isinstance(other, E.Tensor) else math.log1p(other)),
    "other": lambda grad, self, other: grad * self / (other + 1)})
derivative("special_erfcx", {"self": lambda grad, self, result:
                             (2.0 * self * result - 2.0 / math.sqrt(math.pi)) * grad})
derivative("special_i0e", {"self": lambda grad, self, result:
                           grad * (_aten.special_i1e(self) - self.sgn() * result)})
derivative("special_i1e", {"self": lambda grad, self, result: _float_only_backward(
    "i1e_backward", self) * grad * E.where(
    self == 0, 0.5, _aten.special_i0e(self) - result * (self.sgn() + 1 / self))})
derivative("special_ndtri", {"self": lambda grad, result:
                             grad * _SQRT_2PI * (result.square() / 2).exp()})
derivative("special_log_ndtr", {"self": lambda grad, self, result:
                                grad / _SQRT_2PI * (result + self.pow(2) / 2).neg().exp()})
derivative("special_entr", {"self": lambda grad, self: grad * -(1 + self.log())})


def _zeta_self(grad):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


derivative("special_zeta", {"self": _zeta_self, "other": lambda grad, self, other:
                            grad * -self * _aten.special_zeta(self + 1.0, other)})
not_differentiable(*("special_" + _n for _n in (
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
    "spherical_bessel_j0")))

derive_inplace_derivatives()
