"""linalg.eig and linalg.eigvals: eigen-decomposition of general square matrices, the op
`linalg_eig` (NumPy's LAPACK geev, the routine PyTorch calls, so the same order and
normalisation of the eigenvectors; complex results) whose derivative is PyTorch's
(ember/autograd/derivatives/linalg.py). eigvals is eig's first output, as PyTorch computes it
when a gradient is needed.
"""
from .._bindings.out import _finish_tuple, _finish
from .._dispatch.dispatcher import lookup as _op


def eig(A, *, out=None):
    return _finish_tuple("linalg_eig", ["eigenvalues", "eigenvectors"], _op("linalg_eig")(A),
                         out, (A,))


def eigvals(A, *, out=None):
    return _finish(_op("linalg_eig")(A)[0], False, out, "linalg_eigvals", (A,))
