"""Derivatives of the linear-algebra ops: products, einsum, decompositions and solvers."""
import math

from ..variable_type import derivative, not_implemented
from ... import _refs as E
from ._common import _aten, _conj


def _H(x):
    """The conjugate transpose (the transpose of a real matrix): what a product's gradient
    multiplies by, in PyTorch's convention for complex gradients."""
    return x.mH if x.is_complex() else x.mT


# ---- matrix products
derivative("mm", {"self": lambda grad, mat2: grad.mm(_H(mat2)),
                  "mat2": lambda grad, self: _H(self).mm(grad)})
derivative("bmm", {"self": lambda grad, mat2: grad.bmm(_H(mat2)),
                   "mat2": lambda grad, self: _H(self).bmm(grad)})


def _matmul_grads(grad, self, other, needs):
    a, b = self, other
    if a.dim() == 1 and b.dim() == 1:
        return (grad * _conj(b) if needs[0] else None, grad * _conj(a) if needs[1] else None)
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g = grad
    if a.dim() == 1:
        g = g.unsqueeze(-2)
    if b.dim() == 1:
        g = g.unsqueeze(-1)
    ga = g.matmul(_H(b2)) if needs[0] else None
    gb = _H(a2).matmul(g) if needs[1] else None
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


def _scaled(g, s):
    """g times a product's scalar factor (its conjugate: PyTorch's complex gradients)."""
    return g if s == 1 else g * _conj(s)


derivative("matmul", {"self, other": _matmul_grads}, node_name=_matmul_node_name)
derivative("addmm", {
    "self": lambda grad, beta: _scaled(grad, beta),
    "mat1": lambda grad, mat2, alpha: _scaled(grad.mm(_H(mat2)), alpha),
    "mat2": lambda grad, mat1, alpha: _scaled(_H(mat1).mm(grad), alpha)})


def _linear_input(grad, weight):
    if weight.dim() == 1:  # linear(x, w) with a 1-D w is x @ w: one output per row of x
        return grad.unsqueeze(-1) * _conj(weight)
    return grad.matmul(_conj(weight))


def _linear_weight(grad, input):
    if grad.dim() < input.dim():  # a 1-D weight
        return (grad.unsqueeze(-1) * _conj(input)).sum_to_size(input.shape[-1:])
    input = _conj(input)
    if input.dim() == 1:
        return grad.unsqueeze(-1) * input.unsqueeze(0) if grad.dim() else grad * input
    rows = math.prod(input.shape[:-1])  # not -1: there may be no rows, or no columns
    g2 = grad.reshape(rows, grad.shape[-1]) if grad.dim() > 1 else grad.unsqueeze(0)
    i2 = input.reshape(rows, input.shape[-1])
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

# ---- products, einsum, decompositions




derivative("dot", {"self": lambda grad, tensor: grad * _conj(tensor),
                   "tensor": lambda grad, self: grad * _conj(self)})
derivative("vdot", {"self": lambda grad, other: _conj(grad) * other,
                    "other": lambda grad, self: grad * self})
derivative("mv", {"self": lambda grad, vec: grad.unsqueeze(-1) * _conj(vec),
                  "vec": lambda grad, self: _H(self).mv(grad)})
derivative("addmv", {"self": lambda grad, beta: _scaled(grad, beta),
                     "mat": lambda grad, vec, alpha: _scaled(grad.unsqueeze(-1) * _conj(vec),
                                                             alpha),
                     "vec": lambda grad, mat, alpha: _scaled(_H(mat).mv(grad), alpha)})
derivative("addr", {"self": lambda grad, beta: _scaled(grad, beta),
                    "vec1": lambda grad, vec2, alpha: _scaled(grad.mv(_conj(vec2)), alpha),
                    "vec2": lambda grad, vec1, alpha: _scaled(_H(grad).mv(vec1).conj(), alpha)})
derivative("baddbmm", {"self": lambda grad, beta: _scaled(grad, beta),
                       "batch1": lambda grad, batch2, alpha: _scaled(grad.bmm(_H(batch2)), alpha),
                       "batch2": lambda grad, batch1, alpha: _scaled(_H(batch1).bmm(grad), alpha)})


def _addbmm_batch1(grad, batch1_shape, batch2, alpha):
    return _scaled(grad.expand(batch1_shape[0], *grad.shape).bmm(_H(batch2)), alpha)


def _addbmm_batch2(grad, batch1, batch2_shape, alpha):
    return _scaled(_H(batch1).bmm(grad.expand(batch2_shape[0], *grad.shape)), alpha)


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
                 *(_conj(tensors[j]) for j in others))
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
    from ..._aten.linalg import parse_einsum
    subs, out = parse_einsum(equation, [t.shape for t in tensors])
    return [_einsum_operand_grad(grad, subs, out, tensors, i)
            if t.dtype.is_floating_point or t.dtype.is_complex else None
            for i, t in enumerate(tensors)]


derivative("einsum", {"tensors": _einsum_grads})
derivative("trace", {"self": lambda grad, self_shape: grad * E.eye(*self_shape,
                                                                   dtype=grad.dtype)})
derivative("linalg_cross", {
    "self": lambda grad, other, dim: _aten.linalg_cross(_conj(other), grad, dim=dim),
    "other": lambda grad, self, dim: _aten.linalg_cross(grad, _conj(self), dim=dim)})
derivative("linalg_inv", {"A": lambda grad, result: -(_H(result).matmul(grad).matmul(
    _H(result)))})


def _det_grad(grad, A, result):
    """d det(A) = det(A) tr(A^-1 dA): the gradient is grad * det(A) * A^-T."""
    return (grad * _conj(result)).unsqueeze(-1).unsqueeze(-1) * _conj(_aten.linalg_inv(A).mT)


derivative("linalg_det", {"A": _det_grad})
def _slogdet_grad(grads, A, result):
    """g A^-H with g = grad_logabsdet; for complex A the sign's gradient adds
    -i Im(conj(grad_sign) sign) (the sign moves with the phase of det A)."""
    g = grads[1]
    if A.is_complex():
        g = g.to(A.dtype) - 1j * (_conj(grads[0]) * result).imag
    return g.unsqueeze(-1).unsqueeze(-1) * _H(_aten.linalg_inv(A))


derivative("linalg_slogdet", {"A": _slogdet_grad})


def _solve_grads(grad, A, B, result, left, needs):
    """X = A^-1 B: gB = A^-T g and gA = -gB X^T (for XA = B: gB = g A^-T, gA = -X^T gB)."""
    from ..._aten.linalg import _is_vector_rhs
    vector = _is_vector_rhs(A, B)
    axis = -1 if left else -2            # a vector is a column for AX = B, a row for XA = B
    g = grad.unsqueeze(axis) if vector else grad
    X = result.unsqueeze(axis) if vector else result
    gB = _aten.linalg_solve(_H(A), g, left=left)
    gA = (-gB.matmul(_H(X)) if left else -_H(X).matmul(gB)) if needs[0] else None
    return gA, (gB.squeeze(axis) if vector else gB) if needs[1] else None


derivative("linalg_solve", {"A, B": _solve_grads})


def _cholesky_grad(grad, result, upper):
    """A = L L^H: gA = L^-H Phi(L^H gL) L^-1, Phi taking the lower triangle with half the
    diagonal, then made Hermitian (conjugate transposes throughout, so complex A is right)."""
    L, gL = (result.mH, grad.mH) if upper else (result, grad)
    gA = L.mH.matmul(gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = _aten.linalg_solve(L.mH, gA)
    return _aten.linalg_solve(L, gA, left=False)


derivative("linalg_cholesky", {"self": _cholesky_grad})


def _solve_triangular_grads(grad, self, result, upper, left, unitriangular, needs):
    """X = A^-1 B: gB = A^-H gX (a triangular solve with the other triangle), gA = -gB X^H
    (X^H gB if left=False) on A's triangle, off its diagonal if unitriangular."""
    gB = _aten.linalg_solve_triangular(self.mH, grad, upper=not upper, left=left,
                                          unitriangular=unitriangular)
    gA = None
    if needs[0]:
        gA = -gB.matmul(result.mH) if left else -result.mH.matmul(gB)
        gA = gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))
    return gA, gB if needs[1] else None


derivative("linalg_solve_triangular", {"self, B": _solve_triangular_grads})


def _lu_grad(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward for A = P L U (L unit lower m x k, U upper k x n, k the
    smaller side). Square: gA = P L^-H [tril_-1(L^H gL) + triu(gU U^H)] U^-H. Wide (m < n,
    U = [U1 U2]): the square part's gradient with gU1, plus L^-H gU2 for A2. Tall (m > n,
    L = [L1; L2]): likewise with the roles of L and U swapped. Only the triangles L and U own
    reach the result (the products above only read them)."""
    m, n = L.shape[-2], U.shape[-1]
    solve = _aten.linalg_solve_triangular
    if m == n:
        gA = L.mH.matmul(gL).tril(-1) + gU.matmul(U.mH).triu()
        gA = solve(U.mH, gA, upper=False, left=False)
        gA = solve(L.mH, gA, upper=True, unitriangular=True)
    elif m < n:
        U1 = U[..., :m]
        gA = (L.mH.matmul(gL) - gU.triu().matmul(U.mH)).tril(-1)
        gA = solve(U1.mH, gA, upper=False, left=False)
        gA = E.cat([gA + gU[..., :m].triu(), gU[..., m:]], -1)
        gA = solve(L.mH, gA, upper=True, unitriangular=True)
    else:
        L1 = L[..., :n, :]
        gA = (gU.matmul(U.mH) - L.mH.matmul(gL.tril(-1))).triu()
        gA = solve(L1.mH, gA, upper=True, unitriangular=True)
        gA = E.cat([gA + gL[..., :n, :].tril(-1), gL[..., n:, :]], -2)
        gA = solve(U.mH, gA, upper=False, left=False)
    return P.matmul(gA)


def _lu_factor_ex_grad(grad, result, result1):
    """lu_factor_ex_backward: the packed factors' gradient split into L's part (its first k
    columns) and U's (its first k rows), through _lu_grad."""
    LU, pivots = result, result1
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P, L, U = E.lu_unpack(LU, pivots)
    return _lu_grad(grad[..., :k], grad[..., :k, :], P, L, U)


derivative("linalg_lu_factor_ex", {"A": _lu_factor_ex_grad},
           output_differentiability=[True, False, False])
derivative("linalg_lu", {"A": lambda grads, result, result1, result2: _lu_grad(
    grads[1], grads[2], result, result1, result2)}, output_differentiability=[False, True, True])


def _qr_square_grad(gQ, gR, Q, R):
    """A = QR with m >= n: gA = (gQ + Q syminv(triu(gR R^H - Q^H gQ))) R^-H, syminv(X) =
    X + X^H with the diagonal's real part halved (the part of M that the triangular R and the
    orthonormal Q can absorb)."""
    M = (gR.matmul(R.mH) - Q.mH.matmul(gQ)).triu()
    M = M + M.mH
    M = M - 0.5 * E.diag_embed(M.diagonal(0, -2, -1))
    return _aten.linalg_solve_triangular(R.mH, gQ + Q.matmul(M), upper=False, left=False)


def _qr_grad(grads, A_shape, result, result1, mode):
    """The derivative PyTorch gives linalg.qr: m >= n in modes 'reduced' (and 'complete' when
    square) as above; m < n (any mode but 'r'): with A = Q [R1 R2], A2 = Q R2 contributes
    gA2 = Q gR2 and A2 gR2^H to Q's gradient, and the square A1 = Q R1 takes the rest."""
    Q, R = result, result1
    gQ, gR = grads
    m, n = A_shape[-2], A_shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return _qr_square_grad(gQ, gR, Q, R)
    R1, R2 = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    gR1, gR2 = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
    A2 = Q.matmul(R2)
    gA1 = _qr_square_grad(gQ + A2.matmul(gR2.mH), gR1, Q, R1)
    return E.cat([gA1, Q.matmul(gR2)], -1)


derivative("linalg_qr", {"A": _qr_grad})


def _svd_grad(grads, A_shape, full_matrices, result, result1, result2):
    """A = U diag(S) Vh (reduced; with full_matrices the extra columns get no gradient):
    gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh, E_ij = s_j^2 - s_i^2, plus
    the parts of gU, gV outside the span of U, V when A is not square."""
    gU, gS, gVh = grads
    U, S, Vh = result, result1, result2
    m, n = A_shape[-2], A_shape[-1]
    k = S.shape[-1]
    if not (gU.any() or gVh.any()):
        # only the singular values were used (svdvals, matrix norms): U diag(gS) Vh, which
        # is also the subgradient PyTorch gives where singular values repeat (a zero matrix)
        if full_matrices:
            U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        return (U * gS.unsqueeze(-2)).matmul(Vh)
    if full_matrices:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    V, gV = Vh.mH, gVh.mH
    UhgU = U.mH.matmul(gU)
    UhgU = UhgU - UhgU.mH                       # skew-Hermitian parts
    VhgV = V.mH.matmul(gV)
    VhgV = VhgV - VhgV.mH
    eye = E.eye(k, dtype=S.dtype)
    if U.is_complex():
        # u_i and v_i are defined up to one common phase: a loss that sees it is ill-defined
        im_u, im_v = (E.diagonal(X, 0, -2, -1).imag for X in (UhgU, VhgV))
        if bool(((im_u + im_v).abs() > 1e-2 + 1e-2 * im_v.abs()).any()):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this phase term, making it ill-defined.")
    S2 = S * S
    E_ = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
    inner = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E_ + E.diag_embed(gS)
    if U.is_complex():  # the phase-fixing term: i Im(diag(U^H gU)) / S on the diagonal
        inner = inner + E.diag_embed(E.diagonal(UhgU, 0, -2, -1) / (2 * S))
    gA = U.matmul(inner).matmul(Vh)
    if m > k:
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + (gUSinv - U.matmul(U.mH.matmul(gUSinv))).matmul(Vh)
    if n > k:
        gVSinv = gV / S.unsqueeze(-2)
        gA = gA + U.matmul(gVSinv.mH - gVSinv.mH.matmul(V).matmul(Vh))
    return gA


derivative("linalg_svd", {"A": _svd_grad})


def _eigh_grad(grads, result, result1):
    """A = V diag(L) V^H: gA = V (diag(gL) + skew(V^H gV) / E) V^H, E_ij = L_j - L_i off the
    diagonal, skew(X) = (X - X^H) / 2 (PyTorch's projection onto the skew-Hermitian matrices).
    For complex A a loss that depends on the eigenvectors' phase is ill-defined (refused)."""
    gL, gV = grads
    L, V = result, result1
    n = L.shape[-1]
    eye = E.eye(n, dtype=L.dtype)
    VhgV = V.mH.matmul(gV)
    if V.is_complex() and bool((E.diagonal(VhgV, 0, -2, -1).imag.abs() > 1e-2).any()):
        raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this quantity, so it is ill-defined.")
    VhgV = 0.5 * (VhgV - VhgV.mH)
    E_ = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    inner = VhgV / E_ * (1 - eye) + E.diag_embed(gL)
    return V.matmul(inner).matmul(V.mH)


derivative("linalg_eigh", {"self": _eigh_grad})


# ---- the _ex variants (their info output has no gradient), eig, matrix_exp (issue 13)
derivative("linalg_inv_ex", {"A": lambda grad, result: -(result.mH.matmul(grad).matmul(
    result.mH))}, output_differentiability=[True, False])
derivative("linalg_solve_ex", {"A, B": _solve_grads}, output_differentiability=[True, False])
derivative("linalg_cholesky_ex", {"self": _cholesky_grad}, output_differentiability=[True, False])


def _eig_grad(grads, self, result, result1):
    """A = V diag(L) V^-1: gA = V^-H (diag(gL) + P(V^H gV) / conj(E)) V^H, E_ij = L_j - L_i off
    the diagonal, P removing the component along each unit-norm column,
    V^H V diag(re(diag(V^H gV))). A loss that depends on the eigenvectors' phase (any unit
    multiple of an eigenvector is one) is ill-defined: PyTorch refuses it, and so does this."""
    gL, gV = grads
    L, V = result, result1
    Vh = V.mH
    VhgV = Vh.matmul(gV)
    diag = VhgV.diagonal(0, -2, -1)
    if bool((diag.imag.abs() > 1e-2).any()):          # PyTorch's (lax) tolerance
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this quantity, so it is ill-defined.")
    VhgV = VhgV - Vh.matmul(V) * diag.real.unsqueeze(-2)
    n = L.shape[-1]
    off = 1 - E.eye(n, dtype=L.real.dtype)
    Lc = L.conj()
    Econj = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + E.eye(n, dtype=L.real.dtype)
    inner = VhgV / Econj * off + E.diag_embed(gL)
    gA = _aten.linalg_solve(Vh, inner.matmul(Vh))
    return gA if self.is_complex() else gA.real


derivative("linalg_eig", {"self": _eig_grad})


def _matrix_exp_grad(grad, self):
    """PyTorch's formula: the derivative of exp at A applied to G is the top-right block of
    exp([[A^H, G], [0, A^H]]), itself a matrix_exp (so double backward works)."""
    Ah = self.mH
    zeros = E.zeros_like(Ah)
    block = E.cat([E.cat([Ah, grad], -1), E.cat([zeros, Ah], -1)], -2)
    n = self.shape[-1]
    return _aten.linalg_matrix_exp(block).narrow(-2, 0, n).narrow(-1, n, n)


derivative("linalg_matrix_exp", {"self": _matrix_exp_grad})
not_implemented("linalg_ldl_factor_ex", "linalg_ldl_solve", listed=False)  # as in PyTorch
not_implemented("geqrf")  # as in PyTorch
not_implemented("_scaled_mm")  # as in PyTorch: no derivative formula
not_implemented("_addmm_activation", "_compute_linear_combination", listed=False)  # no entry
