"""Randomized low-rank SVD and PCA (torch.svd_lowrank, torch.pca_lowrank; Halko, Martinsson
and Tropp's range finder): a Gaussian sketch of A's range, refined by `niter` power
iterations with re-orthonormalisation, then the exact SVD of the small projected matrix.
The sketch is drawn from the default generator, whose stream is PyTorch's, so a seeded run
reproduces PyTorch's factors.
"""
from .._core import dtype as D
from .. import _refs as B

__all__ = ["svd_lowrank", "pca_lowrank"]


def _float_dtype(A):
    return A.dtype if A.dtype in (D.float16, D.float32, D.float64) else D.float32


def _approximate_basis(A, q, niter, M):
    """An orthonormal Q (m x q) whose range approximates that of A - M."""
    from .. import linalg

    def apply(R, adjoint=False):
        AX = (A.mH if adjoint else A).matmul(R)
        if M is not None:
            AX = AX - (M.mH if adjoint else M).matmul(R)
        return AX
    dtype = A.dtype if A.is_complex() else _float_dtype(A)
    Q = linalg.qr(apply(B.randn(A.shape[-1], q, dtype=dtype))).Q
    for _ in range(niter):
        Q = linalg.qr(apply(Q, adjoint=True)).Q
        Q = linalg.qr(apply(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    from .. import linalg
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]  # (a ValueError for fewer than 2 dims, as in PyTorch)
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:                      # work on the tall A^H: the sketch is then the smaller side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    small = A.mH.matmul(Q).mH   # Q^H A, with A (possibly sparse) as the left operand
    if M is not None:
        small = small - Q.mH.matmul(M)
    U, S, Vh = linalg.svd(small, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    if A.is_sparse:   # A stays sparse: the column means go in as the dense matrix M to subtract
        if A.dim() != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        means = A.mT.matmul(B.ones((m, 1), dtype=A.dtype)).mT / m
        return svd_lowrank(A, q, niter, M=means.expand(m, n))
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter)
