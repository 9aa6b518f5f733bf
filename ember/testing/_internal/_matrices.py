"""The random matrices PyTorch's linear-algebra tests build their inputs from (imported through
torch.testing._internal.common_utils): symmetric / Hermitian, positive-(semi)definite, of a given
rank, well conditioned, full rank with distinct singular values, sparse. Each draws from the
global generator as PyTorch's helper of the same name does and returns the same kind of matrix
(shapes are batch dimensions followed by the matrix dimensions)."""
import math
import random

import numpy as np

import ember
from ember.testing import make_tensor


def random_square_matrix_of_rank(l, rank, dtype=ember.double, device="cpu"):
    """An l x l matrix of the given rank (its singular values past `rank` set to zero)."""
    if rank > l:
        raise AssertionError(f"rank must be <= l, got rank={rank}, l={l}")
    u, s, vh = ember.linalg.svd(ember.randn(l, l, dtype=dtype, device=device),
                                full_matrices=False)
    for i in range(l):
        if i >= rank:
            s[i] = 0
        elif s[i] == 0:
            s[i] = 1
    return (u * s.to(dtype).unsqueeze(-2)) @ vh


def random_well_conditioned_matrix(*shape, dtype, device, mean=1.0, sigma=0.001):
    """A matrix whose singular values are drawn from N(mean, sigma**2), sorted descending."""
    real = {ember.cfloat: ember.float, ember.cdouble: ember.double}.get(dtype, dtype)
    x = ember.rand(shape, dtype=dtype, device=device)
    m, n = x.size(-2), x.size(-1)
    u, _, vh = ember.linalg.svd(x, full_matrices=False)
    s = (ember.randn(*(shape[:-2] + (min(m, n),)), dtype=real, device=device) * sigma + mean) \
        .sort(-1, descending=True).values.to(dtype)
    return (u * s.unsqueeze(-2)) @ vh


def random_symmetric_matrix(l, *batches, **kwargs):
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    A = ember.randn(*(batches + (l, l)), dtype=dtype, device=device)
    return (A + A.mT).div_(2)


def make_symmetric_matrices(*shape, device, dtype):
    if shape[-1] != shape[-2]:
        raise AssertionError(f"expected square matrix, got shape[-1]={shape[-1]} != "
                             f"shape[-2]={shape[-2]}")
    t = make_tensor(shape, device=device, dtype=dtype)
    return (t + t.mT).div_(2)


def random_hermitian_matrix(l, *batches, **kwargs):
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    A = ember.randn(*(batches + (l, l)), dtype=dtype, device=device)
    return (A + A.mH).div_(2)


def random_symmetric_psd_matrix(l, *batches, **kwargs):
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    A = ember.randn(*(batches + (l, l)), dtype=dtype, device=device)
    return A @ A.mT


def random_hermitian_psd_matrix(matrix_size, *batch_dims, dtype=ember.double, device="cpu"):
    A = ember.randn(*(batch_dims + (matrix_size, matrix_size)), dtype=dtype, device=device)
    return A @ A.mH


def random_symmetric_pd_matrix(matrix_size, *batch_dims, **kwargs):
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    A = ember.randn(*(batch_dims + (matrix_size, matrix_size)), dtype=dtype, device=device)
    return ember.matmul(A, A.mT) + ember.eye(matrix_size, dtype=dtype, device=device) * 1e-5


def make_symmetric_pd_matrices(*shape, device, dtype):
    if shape[-1] != shape[-2]:
        raise AssertionError(f"expected square matrix, got shape[-1]={shape[-1]} != "
                             f"shape[-2]={shape[-2]}")
    t = make_tensor(shape, device=device, dtype=dtype)
    return t @ t.mT + ember.eye(shape[-1], device=device, dtype=dtype) * 1e-5


def random_hermitian_pd_matrix(matrix_size, *batch_dims, dtype, device):
    A = ember.randn(*(batch_dims + (matrix_size, matrix_size)), dtype=dtype, device=device)
    return A @ A.mH + ember.eye(matrix_size, dtype=dtype, device=device)


def make_fullrank_matrices_with_distinct_singular_values(*shape, device, dtype,
                                                         requires_grad=False):
    """A matrix with singular values 1 + 1/2, 1 - 1/3, 1 + 1/4, ... (condition number 9/4)."""
    with ember.no_grad():
        t = make_tensor(shape, device=device, dtype=dtype)
        u, _, vh = ember.linalg.svd(t, full_matrices=False)
        real = t.real.dtype if t.dtype.is_complex else t.dtype
        k = min(shape[-1], shape[-2])
        s = ember.arange(2, k + 2, dtype=real, device=device)
        s[1::2] *= -1.
        s.reciprocal_().add_(1.)
        x = (u * s.to(u.dtype)) @ vh
    x.requires_grad_(requires_grad)
    return x


def random_matrix(rows, columns, *batch_dims, **kwargs):
    """A matrix with singular values linspace(1/(k+1), 1, k); `singular=True` zeroes some."""
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    A = ember.randn(batch_dims + (rows, columns), dtype=dtype, device=device)
    if A.numel() == 0:
        return A
    u, _, vh = ember.linalg.svd(A, full_matrices=False)
    k = min(rows, columns)
    s = ember.linspace(1 / (k + 1), 1, k, dtype=dtype, device=device)
    if kwargs.get("singular", False):
        s[k - 1] = 0
        if k > 2:
            s[0] = 0
    return (u * s.unsqueeze(-2)) @ vh


def random_matrix_with_scaled_reduction_dim(rows, columns, *batch_dims, **kwargs):
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    shape = (*batch_dims, rows, columns)
    res = ember.randn(*shape, dtype=dtype, device=device) / \
        math.sqrt(shape[kwargs.get("reduction_dim", -1)])
    return res.requires_grad_(kwargs.get("requires_grad", False))


def random_lowrank_matrix(rank, rows, columns, *batch_dims, **kwargs):
    return random_matrix(rows, rank, *batch_dims, **kwargs).matmul(
        random_matrix(rank, columns, *batch_dims, **kwargs))


def random_sparse_matrix(rows, columns, density=0.01, **kwargs):
    """A coalesced sparse COO matrix with about density*rows*columns entries (at least one per
    row where possible), damped away from the diagonal."""
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    nnz = max(min(rows, columns), int(rows * columns * density))
    per_row = math.ceil(nnz / rows)
    pairs = [(r, c) for r in range(rows) for c in random.choices(range(columns), k=per_row)]
    indices = ember.tensor(pairs[:nnz])
    values = ember.randn(nnz, dtype=dtype, device=device)
    values *= ember.tensor([-float(i - j) ** 2 for i, j in indices], dtype=dtype,
                           device=device).exp()
    return ember.sparse_coo_tensor(indices.t(), values, (rows, columns), device=device).coalesce()


def random_sparse_pd_matrix(matrix_size, density=0.01, **kwargs):
    """A sparse COO symmetric positive-definite matrix with eigenvalues
    arange(1, matrix_size + 1) / matrix_size: the diagonal matrix of them, rotated by random
    Givens rotations (R^T A R keeps the spectrum) until about density * matrix_size**2 entries
    are nonzero."""
    dtype, device = kwargs.get("dtype", ember.double), kwargs.get("device", "cpu")
    n = matrix_size
    A = np.diag(np.arange(1, n + 1) / n)
    target = density * n * n
    while np.count_nonzero(A) < target:
        i, j = random.randint(0, n - 1), random.randint(0, n - 1)
        if i == j:
            continue
        theta = random.uniform(0, 2 * math.pi)
        c, s = math.cos(theta), math.sin(theta)
        rot = np.array([[c, s], [-s, c]])
        A[[i, j], :] = rot @ A[[i, j], :]
        A[:, [i, j]] = A[:, [i, j]] @ rot.T
    rows, cols = np.nonzero(A)
    indices = ember.tensor(np.stack([rows, cols]), dtype=ember.int64)
    values = ember.tensor(A[rows, cols], dtype=dtype)
    return ember.sparse_coo_tensor(indices, values, (n, n), device=device)
