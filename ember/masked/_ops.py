"""torch.masked's reductions and normalisations: each op reads only the elements its `mask` keeps.

A masked op is the ordinary op on the input with every masked-out element replaced by the op's
identity (0 for sum, 1 for prod, -inf for amax/logsumexp/softmax, +inf for amin/softmin, NaN
for median, which nanmedian then skips), so the result is what the op gives on the kept
elements alone; `mask` broadcasts to the input (it may not have more dims). Where every element
of a reduced slice is masked out, the result is the identity (sum 0, amax -inf, ...), or NaN
where there is none (mean, var, std, median, softmax). Everything is written with ember ops
(`where`, then the reduction), so autograd gives masked-out elements a zero gradient.

Only strided tensors are masked here; torch.masked's sparse layouts and its MaskedTensor inputs
are not implemented in ember.
"""
import builtins

from .. import _refs as E
from .._core import dtype as D
from .._core.layout import strided
from .._refs.reduction import _vector_norm

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]

_PROMOTED_TO_INT64 = (D.uint8, D.bool, D.int8, D.int16, D.int32)


def _iinfo_limit(dtype, low):
    import numpy as np
    info = np.iinfo(dtype._np)
    return int(info.min if low else info.max)


def _reduction_identity(op_name, input, *args):
    """The value that leaves the reduction unchanged, as a 0-d tensor of the input's dtype (None
    where there is none: mean, var, std)."""
    dtype, device = input.dtype, input.device
    floating = dtype.is_floating_point
    signed_or_byte = dtype.is_signed or dtype is D.uint8
    value = None
    if op_name in ("sum", "cumsum"):
        value = 0
    elif op_name in ("prod", "cumprod"):
        value = 1
    elif op_name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if floating:
            value = float("-inf")
        elif op_name == "logsumexp" and dtype.is_complex:
            value = complex(float("-inf"), 0)
        elif signed_or_byte and not dtype.is_complex:
            value = _iinfo_limit(dtype, low=True)
    elif op_name in ("amin", "argmin"):
        if floating:
            value = float("inf")
        elif signed_or_byte and not dtype.is_complex:
            value = _iinfo_limit(dtype, low=False)
    elif op_name in ("mean", "var", "std"):
        return None
    elif op_name == "norm":
        ord = args[0] if args else 2
        if ord == float("-inf"):
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            value = float("inf")
        else:
            value = 0
    elif op_name == "median":
        return E.tensor(float("nan"), dtype=dtype if floating else D.float32, device=device)
    if value is None:
        raise NotImplementedError(f"identity of {op_name} on {dtype} input")
    return E.tensor(value, dtype=dtype, device=device)


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims; None (and, as in PyTorch, ()) means all."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """The mask as a bool tensor of the input's shape (broadcast; never more dims), strided as
    the input (a sparse mask is made dense)."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.layout is not strided:
        mask = mask.to_dense()
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = E.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=D.bool)


def _any(input, dim, keepdim):
    """any() over a tuple of dims, one at a time."""
    for d in reversed(dim):
        input = input.any(dim=d, keepdim=keepdim)
    return input


def _output_mask(op, input, *args, **kwargs):
    """Which elements of `op(input, *args, **kwargs)` read at least one kept element: the mask
    reduced with any() for a reduction, the input mask itself for a normalization."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} "
                         f"object)")
    name = op.__name__
    inmask = _input_mask(input, kwargs.get("mask"))
    if name in _NORMALIZATIONS:
        return inmask
    if name not in _REDUCTIONS:
        raise ValueError(f"_output_mask expected masked operation (got callable "
                         f"{op.__module__}.{name})")
    if name == "norm" and args:
        args = args[1:]   # ord comes before dim
    dim = args[0] if args else kwargs.get("dim")
    return _any(inmask, _canonical_dim(dim, input.ndim), bool(kwargs.get("keepdim", False)))


_REDUCTIONS = {"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm",
               "var", "std", "logsumexp"}
_NORMALIZATIONS = {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}


def _where(mask, input, fill_value):
    """PyTorch's where() for masks of any layout; ember's masked ops take strided inputs, so
    only a strided mask is implemented."""
    if mask.layout is not strided:
        raise NotImplementedError(f"torch.masked._where on a {mask.layout} mask is not "
                                  f"implemented in ember")
    return E.where(mask, input, fill_value)


def _combine_input_and_mask(op, input, mask, *args):
    """The input with its masked-out elements replaced by the identity of `op` (a masked
    function or its name). A MaskedTensor input brings its own mask, and its gradient goes
    back as a MaskedTensor with that mask (torch.masked's `Combine`)."""
    op_name = op if isinstance(op, str) else op.__name__
    from .maskedtensor.core import is_masked_tensor
    if is_masked_tensor(input):
        from .maskedtensor._ops_refs import _Combine
        return _Combine.apply(input.get_data(), input.get_mask(), op_name)
    if mask is None:
        return input
    return E.where(_input_mask(input, mask), input, _reduction_identity(op_name, input, *args))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return D.int64 if input.dtype in _PROMOTED_TO_INT64 else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.dim())
    return E.sum(_combine_input_and_mask("sum", input, mask), dim_, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.dim())
    result = _combine_input_and_mask("prod", input, mask).to(dtype=dtype)
    for d in reversed(dim_):      # one dim at a time, as PyTorch (prod takes a single dim)
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return E.cumsum(_combine_input_and_mask("sum", input, mask), dim_, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return E.cumprod(_combine_input_and_mask("prod", input, mask), dim_, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine_input_and_mask("amax", input, mask)
    return E.amax(masked, _canonical_dim(dim, masked.dim()), bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine_input_and_mask("amin", input, mask)
    return E.amin(masked, _canonical_dim(dim, masked.dim()), bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the largest kept element; as in PyTorch it is returned in `dtype` (the
    input's dtype by default), not int64."""
    dtype = input.dtype if dtype is None else dtype
    masked = _combine_input_and_mask("argmax", input, mask)
    return E.argmax(masked, dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine_input_and_mask("argmin", input, mask)
    return E.argmin(masked, dim, bool(keepdim)).to(dtype=dtype)


def _count(input, dim, keepdim, mask):
    """How many elements each reduced slice keeps (int64)."""
    if mask is None:
        return sum(E.ones(input.shape, dtype=D.int64, device=input.device), dim, keepdim=keepdim)
    return _input_mask(input, mask).sum(dim=dim, keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """sum / count of the kept elements: NaN where a slice keeps none."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    inmask = None if mask is None else _input_mask(input, mask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / _count(input, dim, keepdim, inmask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """nanmedian of the input with masked-out elements set to NaN; integer inputs are computed
    in float32 and may not have a fully masked-out slice."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=D.float32)
    output = E.nanmedian(_combine_input_and_mask("median", input, mask), dim_, keepdim).values
    if is_float:
        return output
    if bool(E.isnan(output).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return output.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())
    masked = _combine_input_and_mask("logsumexp", input, mask)
    return E.logsumexp(masked, dim_, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)) with each operand's masked-out elements taken as -inf."""
    dtype = input.dtype if dtype is None else dtype
    a = _combine_input_and_mask("logaddexp", input, input_mask)
    b = _combine_input_and_mask("logaddexp", other, other_mask)
    return E.logaddexp(a, b).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine_input_and_mask("norm", input, mask, ord)
    return _vector_norm(masked, ord, _canonical_dim(dim, input.dim()), bool(keepdim),
                        dtype=dtype)


def _std_var(input, dim, unbiased, *, correction_opt, keepdim, dtype, mask, take_sqrt):
    """The kept elements' variance: sum |x - mean|^2 / max(count - correction, 0)."""
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = D.float32
    compute_dtype = dtype if (dtype.is_floating_point or dtype.is_complex) else D.float32
    inmask = None if mask is None else _input_mask(input, mask)
    count = _count(input, dim, True, inmask)
    sample_mean = E.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=inmask), count)
    x = E.subtract(input, sample_mean)
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = count.to(compute_dtype.to_real() if compute_dtype.is_complex else compute_dtype)
        count = E.subtract(count, correction)
        count = E.maximum(count, count.new_zeros([]))
    output = E.divide(total, count).to(dtype=dtype)
    return E.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim,
                    dtype=dtype, mask=mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim,
                    dtype=dtype, mask=mask, take_sqrt=True)


def softmax(input, dim, *, dtype=None, mask=None):
    """Masked-out elements count as -inf: they get probability 0, a fully masked-out slice NaN."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return E.softmax(_combine_input_and_mask("amax", input, mask), dim_, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return E.log_softmax(_combine_input_and_mask("amax", input, mask), dim_, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.dim())[0]
    return E.softmax(-_combine_input_and_mask("amin", input, mask), dim_, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """The kept elements divided by their norm (at least eps); masked-out elements become 0."""
    dtype = input.dtype if dtype is None else dtype
    masked = _combine_input_and_mask("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return E.divide(masked, E.maximum(nrm, nrm.new_full([], eps)))
