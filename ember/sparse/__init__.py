"""torch.sparse: functions on sparse tensors (the layouts are in ember/_core/sparse.py and
sparse_compressed.py, the kernels in ember/_aten/): products with dense matrices, sums over
dims, and PyTorch's switch for checking the invariants of constructed tensors."""
import functools

from .._core.tensor import Tensor

__all__ = ["addmm", "mm", "sampled_addmm", "sum", "softmax", "log_softmax",
           "check_sparse_tensor_invariants"]


def mm(mat1, mat2, reduce="sum"):
    """A sparse matrix times a dense (or sparse) one; the gradient flows to both."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm with reduce={reduce!r} is not supported in "
                                  f"ember (only 'sum')")
    return mat1.mm(mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) with mat1 sparse."""
    return mat.addmm(mat1, mat2, beta=beta, alpha=alpha)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at input's stored entries only (input sparse CSR,
    mat1 and mat2 dense): the result has input's indices."""
    if out is not None:
        raise RuntimeError("torch.sparse.sampled_addmm: out= is not supported in ember")
    from .._dispatch.dispatcher import lookup
    return lookup("sparse_sampled_addmm")(input, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum over `dim` (all dims if None): a dense result once every sparse dim is summed,
    else a sparse tensor over the sparse dims that remain."""
    if not input.is_sparse:
        input.coalesce()  # PyTorch's sum coalesces first: any other layout is refused there
    if dim is None:
        return input.sum(dtype=dtype)
    dims = {d % input.dim() for d in ((dim,) if isinstance(dim, int) else dim)}
    dense = input.to_dense().sum(dim=sorted(dims), dtype=dtype)
    remaining = input.sparse_dim() - len({d for d in dims if d < input.sparse_dim()})
    return dense if remaining == 0 else dense.to_sparse(remaining)


def softmax(input, dim, *, dtype=None):
    """Softmax of a sparse COO tensor along `dim`, its unstored entries counting as -inf: each
    stored value is normalised over the stored values in its slice; the result has the
    (coalesced) input's indices."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """log(softmax(input, dim)) for a sparse COO tensor (see `softmax`)."""
    return _softmax(input, dim, dtype, log=True)


def _softmax(input, dim, dtype, log):
    """Written from ops on the coalesced values (so autograd differentiates it): slices along
    a sparse dim are the groups of entries whose other sparse indices agree; a dense dim is an
    ordinary softmax of the values."""
    name = "_sparse_log_softmax" if log else "_sparse_softmax"
    if not input.is_sparse:
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'CPU' "
                                  f"backend: torch.sparse.{name[8:]} takes a sparse COO tensor, "
                                  f"got layout {input.layout}")
    ndim = max(input.dim(), 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    dim %= ndim
    x = input.coalesce()
    if dtype is not None:
        x = x.to(dtype)
    values, sparse_dim = x.values(), x.sparse_dim()
    if dim >= sparse_dim:  # a dense dim: each stored value row is its own softmax
        d = dim - sparse_dim + 1
        out = values.log_softmax(d) if log else values.softmax(d)
    else:
        keep = [d for d in range(sparse_dim) if d != dim]
        group = x.indices()[keep].unique(dim=1, return_inverse=True)[1] if keep else \
            x.indices().new_zeros(x._nnz())
        n = int(group.max()) + 1 if x._nnz() else 0
        shape = (n,) + tuple(values.shape[1:])
        at = group.view(-1, *[1] * (values.dim() - 1)).expand_as(values)
        peak = values.detach().new_full(shape, float("-inf")).scatter_reduce(
            0, at, values.detach(), "amax")  # subtracted for stability; it cancels out
        shifted = values - peak.index_select(0, group)
        total = shifted.new_zeros(shape).index_add(0, group, shifted.exp())
        out = shifted - total.log().index_select(0, group) if log else \
            shifted.exp() / total.index_select(0, group)
    from .._bindings.sparse import _construct
    return _construct(sparse_dim, x.dense_dim(), list(x.shape), x.indices(), out,
                      is_coalesced=True)


from .._core.sparse import invariant_checks as _invariant_checks


class check_sparse_tensor_invariants:
    """Whether the sparse constructors check their arguments' invariants (indices within the
    size, ...) when not told by their `check_invariants` argument: a global switch
    (`enable()` / `disable()`), a context manager and a test decorator. A COO tensor built
    unchecked may hold out-of-range indices; the compressed layouts are checked always (their
    kernels would index out of range)."""

    @staticmethod
    def is_enabled():
        return _invariant_checks[0]

    @staticmethod
    def enable():
        _invariant_checks[:] = [True, True]

    @staticmethod
    def disable():
        _invariant_checks[:] = [False, True]

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a "
                               "different context manager instance for context nesting.")
        self.saved_state = _invariant_checks[0]
        _invariant_checks[0] = self.state

    def __exit__(self, *exc):
        _invariant_checks[0] = self.saved_state
        self.saved_state = None

    def __call__(self, mytest):
        """As a decorator: the test runs with the checks set as this instance says."""
        @functools.wraps(mytest)
        def test_with_invariant_checks(*args, **kwargs):
            with type(self)(self.state):
                return mytest(*args, **kwargs)
        return test_with_invariant_checks


del Tensor
