"""The Python face of the ops: `ember.*` functions and `Tensor` methods with PyTorch's
signatures (PyTorch generates these bindings from native_functions.yaml; ember writes them).

Each binding turns PyTorch's Python calling conventions (varargs sizes, keyword names, optional
dims, `out=`) into one call of an op with all arguments positional, which is the dispatcher's
fast path. Composite functions (reshape, flatten, softmax's dtype, ...) are written here from ops.
"""
import builtins
import collections
import math
import warnings

import numpy as np

from .._core import dtype as D
from .._core import dtype as _dtype  # noqa: F401  (derivatives use E._dtype)
from .._core.device import device as _device_cls
from .._dispatch.dispatcher import lookup as _lookup
from .._dispatch.ops import ops
from .._core.tensor import Tensor, Size, _wrap, _wrap_dim
from .._core.storage import UntypedStorage
from .._core.memory_format import preserve_format, contiguous_format, format_strides
from .._aten.shape import is_non_overlapping_and_dense
from .._aten.elementwise import _scalar_type_name
from .generated import *  # noqa: F401,F403  (hand-written bindings below override)
from .generated import METHODS as _GENERATED_METHODS
from . import indexing as _indexing
from .out import _finish, _copy_out, _finish_tuple, _return_type, _ReturnTypes  # noqa: F401
from .._core.grad_mode import _grad_state

_op = _lookup


def _size_args(size):
    """zeros(2, 3), zeros((2, 3)), zeros([2, 3]) and zeros(torch.Size([2, 3])) all mean (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def _dev(device):
    return None if device is None else _device_cls(device)


# ---- factories --------------------------------------------------------------------------------
_empty = _op("empty.memory_format")
_full = _op("full")
_arange = _op("arange.start_step")
_linspace = _op("linspace")
_eye = _op("eye.m")
_from_data = _op("_tensor_from_data")
_uniform_ = _op("uniform_")
_normal_ = _op("normal_")
_random_ = _op("random_.from")
_bernoulli_ = _op("bernoulli_.float")
_bernoulli = _op("bernoulli")
_randperm = _op("randperm")
_empty_strided = _op("empty_strided")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        t = data.detach().clone()
        if dtype is not None or device is not None:
            t = t.to(dtype=dtype, device=device)
        return _finish(t, requires_grad)
    return _finish(_from_data(data, dtype, _dev(device)), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (device is None or _dev(device).type == "cpu"):
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(ndarray.dtype)
    if builtins.any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return _tensor_over(ndarray)


def _tensor_over(ndarray):
    """A tensor that is a view of `ndarray`'s memory: its storage is the memory the array
    spans from its first element (storage_offset 0), as for PyTorch's from_numpy/from_dlpack."""
    t = _wrap(ndarray.view())
    it = ndarray.itemsize
    if not ndarray.size:  # the tensor takes the array's strides, even an empty array's
        t._stride_, t._offset_ = tuple(s // it for s in ndarray.strides), 0
        return t
    if ndarray.flags.c_contiguous:
        span = ndarray.reshape(-1)  # the common case: a flat view, no stride tricks
    else:
        extent = 1 + builtins.sum((n - 1) * s for n, s in zip(ndarray.shape,
                                                              ndarray.strides)) // it
        span = np.lib.stride_tricks.as_strided(ndarray, (extent,), (it,))
    t._storage = UntypedStorage._adopt(span, t._device)
    return t


def from_dlpack(ext_tensor):
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    from .._core.tensor import array_from_dlpack
    return _tensor_over(array_from_dlpack(ext_tensor))


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _finish(_empty(_size_args(size), dtype, _dev(device), False), requires_grad, out)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    return _finish(_empty_strided(tuple(size), tuple(stride), dtype, _dev(device)),
                   requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    return _finish(_full(_size_args(size), 0, dtype or D.get_default_dtype(), _dev(device)),
                   requires_grad, out)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    return _finish(_full(_size_args(size), 1, dtype or D.get_default_dtype(), _dev(device)),
                   requires_grad, out)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    return _finish(_full(_size_args((size,)), fill_value, dtype, _dev(device)), requires_grad,
                   out)


def _empty_like(t, dtype, device, memory_format):
    """An uninitialized tensor shaped like `t` (PyTorch's empty_like). By default
    (preserve_format) a dense `t` lends its strides, so `zeros_like(x.t())` is transposed too;
    anything else is laid out contiguously or in the requested memory format."""
    dt, dev = dtype or t.dtype, _dev(device) or t.device
    if memory_format is None or memory_format is preserve_format:
        if not t.is_contiguous() and is_non_overlapping_and_dense(t._size, t.stride()):
            return _empty_strided(t._size, t.stride(), dt, dev)
    elif memory_format is not contiguous_format:
        return _empty_strided(t._size, format_strides(t._size, memory_format), dt, dev)
    return _empty(t._size, dt, dev, False)


def _filled(t, value):
    if t._np is not None:
        t._np[...] = value.item() if isinstance(value, Tensor) else value
    return t


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _finish(_empty_like(input, dtype, device, memory_format), requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _finish(_filled(_empty_like(input, dtype, device, memory_format), 0), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _finish(_filled(_empty_like(input, dtype, device, memory_format), 1), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _finish(_filled(_empty_like(input, dtype, device, memory_format), fill_value),
                   requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, generator=None):
    t = _empty_like(input, dtype, device, memory_format)
    return _finish(_uniform_(t, 0.0, 1.0, generator), requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, generator=None):
    t = _empty_like(input, dtype, device, memory_format)
    return _finish(_normal_(t, 0.0, 1.0, generator), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, generator=None):
    if high is None:
        low, high = 0, low
    t = _empty_like(input, dtype, device, memory_format)
    return _finish(_random_(t, low, high, generator), requires_grad)


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if end is None:
        start, end = 0, start
    return _finish(_arange(start, end, step, dtype, _dev(device)), requires_grad, out)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    return _finish(_linspace(start, end, steps, dtype, _dev(device)), requires_grad, out)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    t = linspace(start, end, steps, dtype=D.float64, device=device)
    return _finish(pow(base, t).to(dtype or D.get_default_dtype()), requires_grad, out)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(_eye(n, n if m is None else m, dtype, _dev(device)), requires_grad, out)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(_op("scalar_tensor")(s, dtype, _dev(device)), requires_grad)


def _gen_args(size, generator):
    return _size_args(size), generator


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    t = _empty(_size_args(size), dtype, _dev(device), False)
    return _finish(_uniform_(t, 0.0, 1.0, generator), requires_grad, out)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    t = _empty(_size_args(size), dtype, _dev(device), False)
    return _finish(_normal_(t, 0.0, 1.0, generator), requires_grad, out)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    if size is None:
        if isinstance(high, (tuple, list, Size)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    elif high is None:
        low, high = 0, low
    t = _empty(_size_args((size,)), dtype or D.int64, _dev(device), False)
    return _finish(_random_(t, low, high, generator), requires_grad, out)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    return _finish(_randperm(n, generator, dtype or D.int64, _dev(device)), requires_grad, out)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else None
        s = std if isinstance(std, Tensor) else None
        ref = m if m is not None else s
        shape = broadcast_shapes(*(x.shape for x in (m, s) if x is not None))
        z = _normal_(_empty(shape, ref.dtype, ref.device, False), 0.0, 1.0, generator)
        return _finish(z * std + mean, requires_grad, out)
    t = _empty(_size_args((size,)), dtype, _dev(device), False)
    return _finish(_normal_(t, float(mean), float(std), generator), requires_grad, out)


def bernoulli(input, p=None, *, generator=None, out=None):
    if p is not None:
        return _finish(_bernoulli_(empty_like(input), float(p), generator), False, out)
    return _finish(_bernoulli(input, generator), False, out)


# ---- elementwise ------------------------------------------------------------------------------
_add = _op("add.Tensor")
_add_ = _op("add_.Tensor")
_sub = _op("sub.Tensor")
_sub_ = _op("sub_.Tensor")
_rsub = _op("rsub.Tensor")
_mul = _op("mul.Tensor")
_mul_ = _op("mul_.Tensor")
_div = _op("div.Tensor_mode")
_div_ = _op("div_.Tensor_mode")
_floor_divide = _op("floor_divide")
_remainder = _op("remainder.Tensor")
_remainder_scalar = _op("remainder.Scalar_Tensor")
_pow = _op("pow.Tensor_Tensor")
_pow_ = _op("pow_.Tensor")
_eq, _ne, _lt, _le, _gt, _ge = (_op(f"{n}.Tensor") for n in ("eq", "ne", "lt", "le", "gt", "ge"))
_where = _op("where.self")
_clamp = _op("clamp")
_clamp_ = _op("clamp_")
_clamp_tensor = _op("clamp.Tensor")
_clamp_tensor_ = _op("clamp_.Tensor")
_copy_ = _op("copy_")






subtract = sub






multiply = mul




divide = true_divide = div




def remainder(input, other, *, out=None):
    if not isinstance(input, Tensor):
        return _finish(_remainder_scalar(input, other), False, out)
    return _finish(_remainder(input, other), False, out)




def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _finish(_where(condition, input, other), False, out)


def clamp(input, min=None, max=None, *, out=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _finish(_clamp_tensor(input, min, max), False, out)
    return _finish(_clamp(input, min, max), False, out)


clip = clamp


def _binary_fn(opname):
    op = _op(opname)

    def fn(input, other, *, out=None):
        return _finish(op(input, other), False, out)
    fn.__name__ = opname.split(".")[0]
    return fn


def _tensor_binary_fn(opname):
    """A binary function whose `other` must be a tensor (PyTorch has no Scalar overload)."""
    op = _op(opname)
    name = opname.split(".")[0]

    def fn(input, other, *, out=None):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return _finish(op(input, other), False, out)
    fn.__name__ = name
    return fn


ne = not_equal = _binary_fn("ne.Tensor")
lt = less = _binary_fn("lt.Tensor")
le = less_equal = _binary_fn("le.Tensor")
gt = greater = _binary_fn("gt.Tensor")
ge = greater_equal = _binary_fn("ge.Tensor")


def _unary_fn(opname):
    op = _op(opname)

    def fn(input, *, out=None):
        return _finish(op(input), False, out)
    fn.__name__ = opname
    return fn


_UNARY = ("neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
          "tanh", "sigmoid", "relu", "silu", "logical_not", "bitwise_not")
for _n in _UNARY:
    globals()[_n] = _unary_fn(_n)
negative = globals()["neg"]
absolute = globals()["abs"]


def square(input, *, out=None):
    return _finish(_pow(input, 2), False, out)


def equal(input, other):
    return input._size == other._size and bool(_eq(input, other).all())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input.detach()._np
    b = other.detach()._np if isinstance(other, Tensor) else other
    return _wrap(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


# ---- reductions -------------------------------------------------------------------------------
_sum = _op("sum.dim_IntList")
_mean = _op("mean.dim")
_prod = _op("prod.dim_int")
_amax = _op("amax")
_amin = _op("amin")
_max_dim = _op("max.dim")
_min_dim = _op("min.dim")
_argmax = _op("argmax")
_argmin = _op("argmin")
_var = _op("var.correction")
_std = _op("std.correction")
_logsumexp = _op("logsumexp")
_all = _op("all.dims")
_any = _op("any.dims")

def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        return [int(dim)]
    return list(dim)






# prod(x) and max(x) reduce everything; prod(x, dim) takes an int dim, and None is refused
# as PyTorch's argument parser refuses it: `_FULL` marks "no dim given".
_FULL = object()


def _int_dim(name, dim):
    if dim is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
    return dim


def prod(input, dim=_FULL, keepdim=False, *, dtype=None, out=None):
    dim = None if dim is _FULL else _int_dim("prod", dim)
    return _finish(_prod(input, dim, keepdim, dtype), False, out)






def _max_min(input, dim, keepdim, other, full, by_dim, pairwise, name):
    if isinstance(dim, Tensor):
        return pairwise(input, dim)
    if other is not None:
        return pairwise(input, other)
    if dim is _FULL:
        return full(input)
    values, indices = by_dim(input, _int_dim(name, dim), keepdim)
    return _return_type(name, ["values", "indices"])(values, indices)


def max(input, dim=_FULL, keepdim=False, *, other=None, out=None):
    return _max_min(input, dim, keepdim, other, _op("max"), _max_dim, maximum, "max")


def min(input, dim=_FULL, keepdim=False, *, other=None, out=None):
    return _max_min(input, dim, keepdim, other, _op("min"), _min_dim, minimum, "min")






def _var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _dims(dim), correction, keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    d, c, k = _var_args(dim, unbiased, keepdim, correction)
    return _finish(_var(input, d, c, k), False, out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    d, c, k = _var_args(dim, unbiased, keepdim, correction)
    return _finish(_std(input, d, c, k), False, out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    d, c, k = _var_args(dim, unbiased, keepdim, correction)
    return _var(input, d, c, k), _mean(input, d, k, None)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    d, c, k = _var_args(dim, unbiased, keepdim, correction)
    return _std(input, d, c, k), _mean(input, d, k, None)








# ---- linear algebra ---------------------------------------------------------------------------
_mm = _op("mm")
_bmm = _op("bmm")
_matmul = _op("matmul")
_addmm = _op("addmm")










# ---- softmax ----------------------------------------------------------------------------------
_softmax = _op("_softmax")
_log_softmax = _op("_log_softmax")


def softmax(input, dim, dtype=None, *, _stacklevel=3):
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(input, dim, False)


def log_softmax(input, dim, dtype=None, *, _stacklevel=3):
    if dtype is not None:
        input = input.to(dtype)
    return _log_softmax(input, dim, False)


# ---- shape ------------------------------------------------------------------------------------
_view = _op("view")
_unsafe_view = _op("_unsafe_view")
_permute = _op("permute")
_transpose = _op("transpose.int")
_expand = _op("expand")
_squeeze = _op("squeeze.dims")
_unsqueeze = _op("unsqueeze")
_narrow = _op("narrow")
_select = _op("select.int")
_as_strided = _op("as_strided")
_diagonal = _op("diagonal")
_unfold = _op("unfold")
_split_with_sizes = _op("split_with_sizes")
_unbind = _op("unbind.int")
_slice = _op("slice.Tensor")
_clone = _op("clone")
_to_copy = _op("_to_copy")
_cat = _op("cat")
_stack = _op("stack")


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        return tuple(int(s) for s in shape[0])
    return tuple(int(s) for s in shape)


def reshape(input, shape):
    shape = tuple(shape)
    if input.is_contiguous() or input._np is None:
        try:
            return _view(input, shape)
        except RuntimeError:
            if input._np is None:
                return _unsafe_view(_clone(input, None), shape)
            raise
    try:
        return _view(input, shape)
    except RuntimeError as e:
        if "view size is not compatible" not in str(e):
            raise
        return _unsafe_view(_clone(input, None), shape)


def flatten(input, start_dim=0, end_dim=-1):
    n = input.dim()
    if n == 0:
        return reshape(input, (1,))
    s = _wrap_dim(start_dim, n)
    e = _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._size[:s] + (-1,) + input._size[e + 1:]
    if 0 in input._size[s:e + 1]:
        shape = input._size[:s] + (0,) + input._size[e + 1:]
    return reshape(input, shape)


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.dim())
    return _view(input, input._size[:d] + tuple(sizes) + input._size[d + 1:]) \
        if input.is_contiguous() else reshape(input, input._size[:d] + tuple(sizes) +
                                              input._size[d + 1:])






swapaxes = swapdims = transpose




def squeeze(input, dim=None):
    if dim is None:
        return _op("squeeze")(input)
    if isinstance(dim, int):
        return _op("squeeze.dim")(input, dim)
    return _squeeze(input, list(dim))












def movedim(input, source, destination):
    n = input.dim()
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    order = [i for i in range(n) if i not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return _permute(input, tuple(perm))


moveaxis = movedim


def split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, int):
        return tuple(_op("split.Tensor")(tensor, split_size_or_sections, dim))
    return tuple(_split_with_sizes(tensor, list(split_size_or_sections), dim))


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input.dim())
    size = input._size[d]
    step = -(-size // chunks) if size else 1
    return split(input, builtins.max(step, 1), d)


def tensor_split(input, indices_or_sections, dim=0):
    """Views split at indices (or into n nearly equal sections; the first size % n get one
    more), each a slice of `input` like PyTorch's."""
    d = _wrap_dim(dim, input.dim())
    size = input._size[d]
    sections = indices_or_sections
    if isinstance(sections, Tensor) and sections.dim() == 0:
        sections = sections.item()
    if isinstance(sections, (int, np.integer)):
        n = int(sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [i * q + builtins.min(i, r) for i in range(n + 1)]
    else:
        bounds = [0] + [int(i) for i in sections] + [size]
    return tuple(_slice(input, d, bounds[i], bounds[i + 1], 1) for i in range(len(bounds) - 1))






concat = concatenate = cat




def _int_list(x):
    return [int(x)] if isinstance(x, (int, np.integer)) else [int(v) for v in x]




def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])








def ravel(input):
    return reshape(input, (-1,))


def tile(input, dims):
    dims = tuple(_int_list(dims))
    return input.repeat((1,) * (input.dim() - len(dims)) + dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each slice along `dim` repeated `repeats` times, written as PyTorch does it: an
    index_select with the source positions repeated."""
    if repeats is None:  # repeat_interleave(counts): each position, counts[i] times
        return repeat_interleave(arange(input.numel(), device=input.device), input)
    if dim is None:
        input, dim = reshape(input, (-1,)), 0
    d = _wrap_dim(dim, input.dim())
    size = input._size[d] if input.dim() else 1
    counts = repeats._np.reshape(-1) if isinstance(repeats, Tensor) else np.array([repeats])
    if counts.size == 1:
        counts = np.repeat(counts, size)
    elif counts.size != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {size}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = tensor(np.repeat(np.arange(size), counts), device=input.device)
    return index_select(input if input.dim() else reshape(input, (1,)), d, index)


def take_along_dim(input, indices, dim=None, *, out=None):
    if dim is None:
        return _finish(gather(reshape(input, (-1,)), 0, reshape(indices, (-1,))), False, out)
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    d = _wrap_dim(dim, input.dim())
    shape = list(broadcast_shapes(input._size[:d] + (1,) + input._size[d + 1:],
                                  indices._size[:d] + (1,) + indices._size[d + 1:]))
    input_shape, index_shape = list(shape), list(shape)
    input_shape[d], index_shape[d] = input._size[d], indices._size[d]
    return _finish(gather(input.expand(input_shape), d, indices.expand(index_shape)), False,
                   out)


def argwhere(input):
    return nonzero(input)


def _atleast(tensors, n):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        if t.dim() == 0:
            t = reshape(t, (1,) * n)
        elif t.dim() == 1 and n >= 2:
            t = t.unsqueeze(0) if n == 2 else t.unsqueeze(0).unsqueeze(-1)
        elif t.dim() == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def atleast_1d(*tensors):
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    return _atleast(tensors, 3)


def hstack(tensors, *, out=None):
    ts = atleast_1d(list(tensors))
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat(atleast_2d(list(tensors)), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    return cat(atleast_3d(list(tensors)), 2, out=out)


def column_stack(tensors, *, out=None):
    return cat([reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors], 1,
               out=out)


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = [reshape(t, tuple(-1 if i == k else 1 for i in range(len(ts)))).expand(shape)
             for k, t in enumerate(ts)]
    if swap:  # "xy": the first two inputs are swapped going in and their grids coming out
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def diag(input, diagonal=0, *, out=None):
    if input.dim() == 1:
        n = input.numel() + builtins.abs(diagonal)
        result = zeros((n, n), dtype=input.dtype, device=input.device)
        result.diagonal(diagonal).copy_(input)
        return _finish(result, False, out)
    if input.dim() != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.dim()}D")
    return _finish(input.diagonal(diagonal).clone(memory_format=contiguous_format), False, out)


def broadcast_shapes(*shapes):
    from .._aten.elementwise import broadcast_shape
    return Size(broadcast_shape(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))


def broadcast_to(input, size):
    return _expand(input, tuple(size), False)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)




def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def nonzero(input, *, as_tuple=False):
    idx = np.nonzero(input._np)
    if as_tuple:
        return tuple(_wrap(np.asarray(i, dtype=np.int64)) for i in idx)
    return _wrap(np.stack(idx, axis=1).astype(np.int64) if idx else
                 np.zeros((int(bool(input.item())), 0), np.int64))


def result_type(tensor1, tensor2):
    return D.result_type_of((tensor1, tensor2))


def can_cast(from_, to):
    from .._aten.elementwise import can_cast as _cc
    return _cc(from_, to)


# ---- Tensor methods ---------------------------------------------------------------------------
def _to_args(args, kwargs):
    """Tensor.to(dtype) / to(device, dtype) / to(other) / to(dtype=..., device=...)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            device = _device_cls(a) if not isinstance(a, int) else _device_cls("cuda", a)
        elif isinstance(a, bool):
            copy = a if dtype is not None or device is not None else copy
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dtype, _dev(device), copy, memory_format


def _to(self, *args, **kwargs):
    dtype, device, copy, memory_format = _to_args(args, dict(kwargs))
    same_dtype = dtype is None or dtype is self.dtype
    same_device = device is None or device.type == self._device.type
    if same_dtype and same_device and not copy and memory_format is None:
        return self
    return _to_copy(self, dtype, device, memory_format)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        from ..autograd.graph import _type_name
        return _type_name(self)
    if isinstance(dtype, str):
        names = {"torch.FloatTensor": D.float32, "torch.DoubleTensor": D.float64,
                 "torch.HalfTensor": D.float16, "torch.LongTensor": D.int64,
                 "torch.IntTensor": D.int32, "torch.ShortTensor": D.int16,
                 "torch.CharTensor": D.int8, "torch.ByteTensor": D.uint8,
                 "torch.BoolTensor": D.bool, "torch.BFloat16Tensor": D.bfloat16}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    return _to(self, dtype)


def _contiguous(self, memory_format=None):
    if memory_format is None or memory_format is contiguous_format:
        return self if self.is_contiguous() else _clone(self, contiguous_format)
    return self if self.is_contiguous(memory_format) else _clone(self, memory_format)


def _view_method(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _op("view.dtype")(self, shape[0])
    return _view(self, _shape_args(shape))


def _sum_to_size(self, *size):
    size = _shape_args(size)
    if self._size == size:
        return self
    lead = len(self._size) - len(size)
    if lead < 0:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(self._size)}}}.")
    dims = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and self._size[lead + i] != 1:
            dims.append(lead + i)
        elif s != self._size[lead + i]:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                               f"{{{list(self._size)}}}.")
    r = _sum(self, dims, True, None) if dims else self
    return _view(r, size) if lead or r._size != size else r


def _expand_method(self, *sizes):
    return _expand(self, _shape_args(sizes), False)


def _repeat(self, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = self.reshape((1,) * (len(sizes) - self.dim()) + self._size)
    expanded = []
    for r, s in zip(sizes, x._size):
        expanded += [r, s]
    y = _expand(x.reshape(tuple(v for s in x._size for v in (1, s))), tuple(expanded), False)
    # always a fresh tensor, even where a view could express the result
    return _unsafe_view(_clone(y, contiguous_format), tuple(r * s for r, s in zip(sizes, x._size)))


def _set_(self, source):
    self._np, self._size, self.dtype = source._np, source._size, source.dtype
    self._storage = source._storage_()
    self._bump_version()
    return self


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kw):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return fn(*size, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def _eq_method(self, other):
    if not isinstance(other, (Tensor, int, float, bool, complex, np.number, np.ndarray)):
        return False
    return _eq(self, other)


def _ne_method(self, other):
    if not isinstance(other, (Tensor, int, float, bool, complex, np.number, np.ndarray)):
        return True
    return _ne(self, other)


def _uniform_method(self, from_=0.0, to=1.0, *, generator=None, **kw):
    return _uniform_(self, float(kw.pop("from", from_)), float(to), generator)


def _normal_method(self, mean=0.0, std=1.0, *, generator=None):
    return _normal_(self, float(mean), float(std), generator)


_ONE_BOUND = object()


def _random_method(self, from_=None, to=_ONE_BOUND, *, generator=None):
    """random_() (the dtype's whole range), random_(to), random_(from, to) and random_(from,
    None) (from `from` up to the dtype's largest value)."""
    if from_ is None:
        return _op("random_")(self, generator)
    if to is _ONE_BOUND:
        return _random_(self, 0, from_, generator)
    return _random_(self, from_, to, generator)


def _bernoulli_method(self, p=None, *, generator=None):
    return bernoulli(self, p, generator=generator)


def _bernoulli_inplace(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        return self.copy_(_bernoulli(p.expand(self._size).to(self.dtype), generator))
    return _bernoulli_(self, float(p), generator)


def _fill_method(self, value):
    return _op("fill_.Scalar")(self, value)


def _index_put_method(self, indices, values, accumulate=False):
    return _op("index_put_")(self, list(indices), values, accumulate)


def _masked_fill(self, mask, value):
    return _op("masked_fill.Scalar")(self, mask, value)


def _masked_fill_(self, mask, value):
    return _op("masked_fill_.Scalar")(self, mask, value)








def _scatter_op(name, src, value, reduce):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    src = value if src is None else src
    if reduce is None:
        return _op(f"{name}.src" if isinstance(src, Tensor) else f"{name}.value"), src
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.", UserWarning, stacklevel=3)
        return (lambda s, d, i, v: _op(f"{name}.reduce")(s, d, i, v, reduce)), src
    return (lambda s, d, i, v: _op(f"{name}.value_reduce")(s, d, i, v, reduce)), src


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    op, src = _scatter_op("scatter", src, value, reduce)
    return op(input, dim, index, src)


def _scatter_inplace(self, dim, index, src=None, *, value=None, reduce=None):
    op, src = _scatter_op("scatter_", src, value, reduce)
    return op(self, dim, index, src)










def _clamp_method(self, min=None, max=None):
    return clamp(self, min, max)


def _clamp_inplace(self, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor_(self, min, max)
    return _clamp_(self, min, max)


def _add_method(self, other, *, alpha=1):
    return _add(self, other, alpha)


def _add_inplace(self, other, *, alpha=1):
    return _add_(self, other, alpha)


def _sub_method(self, other, *, alpha=1):
    return _sub(self, other, alpha)


def _sub_inplace(self, other, *, alpha=1):
    return _sub_(self, other, alpha)


def _div_method(self, other, *, rounding_mode=None):
    return _div(self, other, rounding_mode)


def _div_inplace(self, other, *, rounding_mode=None):
    return _div_(self, other, rounding_mode)


def _rdiv(self, other):
    """other / self as PyTorch's __rtruediv__ computes it: reciprocal(self) * other (so the
    node is MulBackward0); 1/0 * 0 is NaN silently."""
    with np.errstate(all="ignore"):
        return _mul(_op("reciprocal")(self), other)


def _rfloordiv(self, other):
    return _floor_divide(other, self)


def _rmod(self, other):
    return _remainder_scalar(other, self)


def _rpow(self, other):
    return _pow(other, self)


def _rmatmul(self, other):
    return _matmul(other, self)


def _ifloordiv(self, other):
    return self.copy_(_floor_divide(self, other))


def _imod(self, other):
    return self.copy_(_remainder(self, other))


def _and(self, other):
    return bitwise_and(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_and(self, other)


def _or(self, other):
    return bitwise_or(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_or(self, other)


def _xor(self, other):
    return bitwise_xor(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_xor(self, other)


def _invert(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _op("bitwise_not")(self)


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return _transpose(self, -2, -1)


def _T(self):
    if self.dim() not in (0, 2):
        import warnings
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                      "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=2)
    return _permute(self, tuple(reversed(range(self.dim()))))


def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


def _max_method(self, dim=_FULL, keepdim=False):
    return max(self, dim, keepdim)


def _min_method(self, dim=_FULL, keepdim=False):
    return min(self, dim, keepdim)


def _conj(self):
    if not self.dtype.is_complex:
        return self
    return _wrap(np.conj(self._np))


for _name, _fn in _GENERATED_METHODS.items():
    setattr(Tensor, _name, _fn)
_T_METHODS = dict(
    __getitem__=_indexing.getitem, __setitem__=_indexing.setitem,
    __add__=lambda s, o: _add(s, o, 1), __radd__=lambda s, o: _add(s, o, 1),
    __iadd__=lambda s, o: _add_(s, o, 1),
    __sub__=lambda s, o: _sub(s, o, 1), __rsub__=lambda s, o: _rsub(s, o, 1),
    __isub__=lambda s, o: _sub_(s, o, 1),
    __mul__=_mul, __rmul__=_mul, __imul__=_mul_,
    __truediv__=lambda s, o: _div(s, o, None), __rtruediv__=_rdiv,
    __itruediv__=lambda s, o: _div_(s, o, None),
    __floordiv__=_floor_divide, __rfloordiv__=_rfloordiv, __ifloordiv__=_ifloordiv,
    __mod__=_remainder, __rmod__=_rmod, __imod__=_imod,
    __pow__=_pow, __rpow__=_rpow, __ipow__=_pow_,
    __matmul__=_matmul, __rmatmul__=_rmatmul,
    __neg__=_op("neg"), __pos__=lambda s: s, __abs__=_op("abs"), __invert__=_invert,
    __eq__=_eq_method, __ne__=_ne_method, __lt__=_lt, __le__=_le, __gt__=_gt, __ge__=_ge,
    __and__=_and, __rand__=_and, __or__=_or, __ror__=_or, __xor__=_xor, __rxor__=_xor,
    __iand__=lambda s, o: s.copy_(_and(s, o)), __ior__=lambda s, o: s.copy_(_or(s, o)),
    __ixor__=lambda s, o: s.copy_(_xor(s, o)),
    add=_add_method, add_=_add_inplace, sub=_sub_method, sub_=_sub_inplace,
    subtract=_sub_method,
    mul=_mul, mul_=_mul_, multiply=_mul, div=_div_method, div_=_div_inplace, divide=_div_method,
    true_divide=_div_method,
    floor_divide=_floor_divide, remainder=_remainder, pow=_pow, pow_=_pow_,
    maximum=maximum, minimum=minimum, eq=_eq, ne=_ne, lt=_lt, le=_le, gt=_gt, ge=_ge,
    logical_and=logical_and, logical_or=logical_or, logical_xor=logical_xor,
    bitwise_and=bitwise_and, bitwise_or=bitwise_or, bitwise_xor=bitwise_xor,
    bitwise_not=_op("bitwise_not"), where=lambda s, c, o: _where(c, s, o),
    clamp=_clamp_method, clip=_clamp_method, clamp_=_clamp_inplace, clip_=_clamp_inplace,
    square=square, equal=equal, allclose=allclose, isclose=isclose,
    sum=sum, mean=mean, prod=prod, amax=amax, amin=amin, max=_max_method, min=_min_method,
    argmax=argmax, argmin=argmin, var=var, std=std, logsumexp=logsumexp, all=all, any=any,
    mm=mm, bmm=bmm, matmul=matmul, addmm=addmm,
    softmax=softmax, log_softmax=log_softmax,
    view=_view_method, view_as=lambda s, o: _view(s, o._size),
    reshape=lambda s, *shape: reshape(s, _shape_args(shape)),
    reshape_as=lambda s, o: reshape(s, o._size),
    flatten=flatten, unflatten=unflatten,
    permute=lambda s, *dims: _permute(s, _shape_args(dims)),
    transpose=transpose, swapaxes=transpose, swapdims=transpose, t=t,
    squeeze=squeeze, unsqueeze=unsqueeze, narrow=narrow, select=select,
    as_strided=as_strided, diagonal=diagonal, movedim=movedim, moveaxis=movedim,
    unfold=lambda s, dimension, size, step: _unfold(s, dimension, size, step),
    split=_split_method, chunk=chunk, unbind=unbind, tensor_split=tensor_split,
    expand=_expand_method, expand_as=lambda s, o: _expand(s, o._size, False),
    broadcast_to=broadcast_to, repeat=_repeat, sum_to_size=_sum_to_size,
    clone=clone, contiguous=_contiguous, to=_to, type=_type, set_=_set_,
    copy_=lambda s, src, non_blocking=False: _copy_(s, src, non_blocking),
    fill_=_fill_method, zero_=_op("zero_"),
    index_put_=_index_put_method,
    index_put=lambda s, idx, v, accumulate=False: _op("index_put")(s, list(idx), v, accumulate),
    masked_fill=_masked_fill, masked_fill_=_masked_fill_, index_select=index_select,
    gather=gather, scatter_add=scatter_add, nonzero=nonzero, argwhere=argwhere,
    scatter=scatter, scatter_=_scatter_inplace, scatter_add_=_op("scatter_add_"),
    index_add=index_add,
    index_add_=lambda s, dim, index, source, *, alpha=1: _op("index_add_")(s, dim, index,
                                                                            source, alpha),
    index_fill=index_fill, index_fill_=_op("index_fill_.int_Scalar"),
    masked_select=masked_select, take_along_dim=take_along_dim,
    flip=lambda s, *dims: flip(s, _shape_args(dims)), fliplr=fliplr, flipud=flipud, roll=roll,
    tril=tril, triu=triu, tril_=lambda s, diagonal=0: s.copy_(tril(s, diagonal)),
    triu_=lambda s, diagonal=0: s.copy_(triu(s, diagonal)), ravel=ravel,
    tile=lambda s, *dims: tile(s, _shape_args(dims)), repeat_interleave=repeat_interleave,
    diag=diag,
    uniform_=_uniform_method, normal_=_normal_method, random_=_random_method,
    bernoulli=_bernoulli_method, bernoulli_=_bernoulli_inplace,
    new_tensor=_new_tensor, new_empty=_new_factory(empty), new_zeros=_new_factory(zeros),
    new_ones=_new_factory(ones), new_full=_new_full,
    conj=_conj, resolve_conj=lambda s: s, resolve_neg=lambda s: s,
    float=lambda s, memory_format=None: _to(s, D.float32),
    double=lambda s, memory_format=None: _to(s, D.float64),
    half=lambda s, memory_format=None: _to(s, D.float16),
    bfloat16=lambda s, memory_format=None: _to(s, D.bfloat16),
    long=lambda s, memory_format=None: _to(s, D.int64),
    int=lambda s, memory_format=None: _to(s, D.int32),
    short=lambda s, memory_format=None: _to(s, D.int16),
    char=lambda s, memory_format=None: _to(s, D.int8),
    byte=lambda s, memory_format=None: _to(s, D.uint8),
    bool=lambda s, memory_format=None: _to(s, D.bool),
    cpu=lambda s, memory_format=None: _to(s, "cpu"),
    type_as=lambda s, o: _to(s, o.dtype),
)
for _name in _UNARY:
    _T_METHODS[_name] = globals()[_name]
_T_METHODS.update(relu_=_op("relu_"), neg=_op("neg"), negative=_op("neg"), abs=_op("abs"),
                  absolute=_op("abs"))
for _name, _fn in _T_METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.mT = property(_mT)
Tensor.T = property(_T)
Tensor.H = property(lambda s: _conj(_T(s)))
Tensor.mH = property(lambda s: _conj(_mT(s)))


# ---- elementwise math, activations, reductions, scans, sorting (issue 3) --------------------
def _inplace_fn(opname):
    op = _op(opname)

    def fn(input):
        return op(input)
    fn.__name__ = opname
    return fn


_MATH_UNARY = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
               "log2", "log10", "exp2", "reciprocal", "erf", "erfc", "erfinv", "lgamma",
               "digamma", "trunc", "floor", "ceil", "frac", "isnan", "isinf", "isfinite")
(tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log2, log10, exp2, reciprocal, erf,
 erfc, erfinv, lgamma, digamma, trunc, floor, ceil, frac, isnan, isinf, isfinite) = (
    _unary_fn(_n) for _n in _MATH_UNARY)
arcsin, arccos, arctan, arcsinh, arccosh, arctanh, fix = asin, acos, atan, asinh, acosh, atanh, \
    trunc

# in-place ops: Tensor methods all, torch.* functions those PyTorch has
_INPLACE_UNARY = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                  "log2", "log10", "exp2", "reciprocal", "erf", "erfc", "trunc", "floor",
                  "ceil", "frac", "neg", "abs", "exp", "log", "log1p", "expm1", "sqrt",
                  "rsqrt", "sin", "cos", "tanh", "sigmoid")
_INPLACE_METHODS = _INPLACE_UNARY + ("erfinv", "lgamma", "digamma", "sign", "logical_not",
                                     "bitwise_not")
(tan_, asin_, acos_, atan_, sinh_, cosh_, asinh_, acosh_, atanh_, log2_, log10_, exp2_,
 reciprocal_, erf_, erfc_, trunc_, floor_, ceil_, frac_, neg_, abs_, exp_, log_, log1p_, expm1_,
 sqrt_, rsqrt_, sin_, cos_, tanh_, sigmoid_) = (_inplace_fn(f"{_n}_") for _n in _INPLACE_UNARY)
arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, \
    atanh_
fix_, negative_ = trunc_, neg_


# (torch.round: below this line the builtin is builtins.round)
def round(input, *, decimals=0, out=None):
    if decimals == 0:
        return _finish(_op("round")(input), False, out)
    return _finish(_op("round.decimals")(input, decimals), False, out)


def round_(input, *, decimals=0):
    return _op("round_")(input) if decimals == 0 else _op("round_.decimals")(input, decimals)








atan2 = arctan2 = _tensor_binary_fn("atan2")








# activations with a torch.* form (the rest are in nn.functional)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input):
    return _op("elu")(input, _SELU_ALPHA, _SELU_SCALE, 1)


def selu_(input):
    return _op("elu_")(input, _SELU_ALPHA, _SELU_SCALE, 1)


def celu(input, alpha=1.0):
    return _op("elu")(input, alpha, 1, 1 / alpha)


def celu_(input, alpha=1.0):
    return _op("elu_")(input, alpha, 1, 1 / alpha)








def prelu(input, weight):
    """x where x > 0, else weight * x, one weight for all channels or one per channel (dim 1)."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_scalar_type_name(input.dtype)} and "
                           f"{_scalar_type_name(weight.dtype)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input._size[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if input.dim() >= 2:
        weight = reshape(weight, (1, weight.numel()) + (1,) * (input.dim() - 2))
    elif input.dim() == 0:
        weight = reshape(weight, ())
    return _op("_prelu_kernel")(input, weight)


def _scalar_type_name(dt):
    from .._aten.elementwise import _scalar_type_name as name
    return name(dt)


def _rrelu_noise(input, lower, upper, generator):
    """The random slopes of rrelu in training: like PyTorch's rrelu_with_noise, one
    uniform(lower, upper) double per element <= 0, drawn in element order; 1 elsewhere."""
    from .._core.generator import default_generator
    if input.dtype is D.float16 or not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{_scalar_type_name(input.dtype)}'")
    g = default_generator if generator is None else generator
    x = input.detach()._np.reshape(-1)
    negative = x <= 0
    with g._lock:
        slopes = g._uniform_f64(int(negative.sum())) * (upper - lower) + lower
    noise = np.ones(x.shape, dtype=np.float64)
    noise[negative] = slopes
    return tensor(noise.reshape(input._size), dtype=input.dtype, device=input.device)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if not training:
        return _op("leaky_relu")(input, (lower + upper) / 2)
    return input * _rrelu_noise(input, lower, upper, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if not training:
        return _op("leaky_relu_")(input, (lower + upper) / 2)
    return input.mul_(_rrelu_noise(input, lower, upper, generator))


# reductions and scans
def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """linalg.vector_norm."""
    return _finish(_op("linalg_vector_norm")(x, ord, _dims(dim), keepdim, dtype), False, out)


def _matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """linalg.matrix_norm: 'fro' is the vector 2-norm of the entries; 1/-1 (inf/-inf) the
    max/min over columns (rows) of the absolute column (row) sums; 2/-2 and 'nuc' the
    largest/smallest and summed singular values."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = (_wrap_dim(d, A.dim()) for d in dim)
    if ord == "fro":
        return _finish(_vector_norm(A, 2, [d0, d1], keepdim, dtype=dtype), False, out)
    if ord in ("nuc", 2, -2):
        s = _op("linalg_svdvals")(movedim(A if dtype is None else A.to(dtype), (d0, d1),
                                          (-2, -1)), None)
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            r = r.unsqueeze(builtins.min(d0, d1)).unsqueeze(builtins.max(d0, d1))
        return _finish(r, False, out)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if builtins.abs(ord) == math.inf:
        d0, d1 = d1, d0
    sums = _vector_norm(A, 1, [d0], keepdim, dtype=dtype)
    d1 = d1 - 1 if not keepdim and d0 < d1 else d1
    return _finish((amax if ord > 0 else amin)(sums, d1, keepdim), False, out)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector norm of the entries (over `dim`), or a matrix norm for 'nuc'."""
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return _vector_norm(input, 2, dims, keepdim, dtype=dtype, out=out)
        dims = list(range(input.dim())) if dims is None else dims
        return _matrix_norm(input, p, dims, keepdim, dtype=dtype, out=out)
    return _vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype, out=out)


def _median_fn(name):
    full, by_dim = _op(name), _op(f"{name}.dim")

    def fn(input, dim=None, keepdim=False, *, out=None):
        if dim is None:
            return _finish(full(input), False, out)
        return _finish_tuple(name, ["values", "indices"], by_dim(input, dim, keepdim), out)
    fn.__name__ = name
    return fn


median = _median_fn("median")
nanmedian = _median_fn("nanmedian")






def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean of the non-NaN elements: nansum over their count."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex) and dtype is None:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_scalar_type_name(input.dtype)}")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return _finish(nansum(input, dim, keepdim, dtype=dtype) / count, False, out)


def count_nonzero(input, dim=None):
    return _op("count_nonzero.dim_IntList")(input, _dims(dim) or [])


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name, out):
    """PyTorch's quantile: sort, turn q into fractional ranks, gather the values on each side
    and interpolate -- composite, so the gradient flows through sort, gather and lerp."""
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = scalar_tensor(q, dtype=input.dtype, device=input.device)
    if q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if q.dtype is not input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    # checked on the CPU only, as PyTorch does (elsewhere it would need the values)
    if q.device.type == "cpu" and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        values = sort(reshape(input, (-1,))).values
        shape = (1,) * input.dim() if keepdim else ()
    else:
        d = _wrap_dim(dim, input.dim())
        values = sort(transpose(input.unsqueeze(-1), d, -1)).values
        shape = input._size[:d] + ((1,) if keepdim else ()) + input._size[d + 1:] \
            if input.dim() else ((1,) if keepdim else ())
    values = reshape(values, tuple(shape) + (values.shape[-1],))
    if ignore_nan:
        ranks = q * (sum(logical_not(isnan(values)), -1, True) - 1)
        ranks = where(ranks < 0, 0.0, ranks)
    else:
        last = values.shape[-1] - 1
        ranks = where(isnan(values).any(-1, True), float(last), q * last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": floor, "higher": ceil, "nearest": round}[interpolation](ranks)
    below = ranks.long()
    result = gather(values, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        result = lerp(result, gather(values, -1, ceil(ranks).long()), weights)
    result = result.squeeze(-1) if q.dim() == 0 else movedim(result, -1, 0)
    return _finish(result, False, out)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile", out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile", out)






def _cum_extreme_fn(name):
    op = _op(name)

    def fn(input, dim, *, out=None):
        return _finish_tuple(name, ["values", "indices"], op(input, dim), out)
    fn.__name__ = name
    return fn








# sorting and selection
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    values_indices = _op("sort.stable")(input, stable, dim, descending)
    return _finish_tuple("sort", ["values", "indices"], values_indices, out)


def argsort(input, dim=-1, descending=False, stable=False):
    return _op("sort.stable")(input, stable, dim, descending)[1]


def msort(input, *, out=None):
    return _finish(sort(input, 0).values, False, out)






def _requested(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output

def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    outs = _op("unique_consecutive")(input, return_inverse, return_counts, dim)
    return _requested(*outs, return_inverse, return_counts)



def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        outs = _op("_unique2")(input, sorted, return_inverse, return_counts)
    else:
        outs = _op("unique_dim")(input, dim, sorted, return_inverse, return_counts)
    return _requested(*outs, return_inverse, return_counts)












def _shift_operator(opname, reflected=False, inplace=False):
    op = _op(opname)
    if reflected:
        return lambda self, other: op(other, self)
    if inplace:
        inplace_op = _op(opname.replace(".", "_.", 1))
        return lambda self, other: inplace_op(self, other)
    return lambda self, other: op(self, other)


_ISSUE3_METHODS = {_n: globals()[_n] for _n in _MATH_UNARY}
_ISSUE3_METHODS.update({f"{_n}_": _op(f"{_n}_") for _n in _INPLACE_METHODS})
_ISSUE3_METHODS.update(
    arcsin=asin, arccos=acos, arctan=atan, arcsinh=asinh, arccosh=acosh, arctanh=atanh,
    fix=trunc,
    arcsin_=_op("asin_"), arccos_=_op("acos_"), arctan_=_op("atan_"), arcsinh_=_op("asinh_"),
    arccosh_=_op("acosh_"), arctanh_=_op("atanh_"), fix_=_op("trunc_"),
    negative_=_op("neg_"), absolute_=_op("abs_"),
    round=lambda s, decimals=0: round(s, decimals=decimals),
    round_=lambda s, decimals=0: round_(s, decimals=decimals),
    polygamma=lambda s, n: _op("polygamma")(n, s),
    polygamma_=lambda s, n: _op("polygamma_")(s, n),
    nan_to_num=nan_to_num, nan_to_num_=nan_to_num_,
    fmod=fmod, fmod_=_op("fmod_.Tensor"), copysign=copysign, copysign_=_op("copysign_.Tensor"),
    hypot=hypot, hypot_=_op("hypot_"), atan2=atan2, atan2_=_op("atan2_"), arctan2=atan2,
    arctan2_=_op("atan2_"),
    bitwise_left_shift=bitwise_left_shift,
    bitwise_left_shift_=_op("bitwise_left_shift_.Tensor"),
    bitwise_right_shift=bitwise_right_shift,
    bitwise_right_shift_=_op("bitwise_right_shift_.Tensor"),
    __lshift__=_shift_operator("bitwise_left_shift.Tensor"),
    __rlshift__=_shift_operator("bitwise_left_shift.Tensor", reflected=True),
    __ilshift__=_shift_operator("bitwise_left_shift.Tensor", inplace=True),
    __rshift__=_shift_operator("bitwise_right_shift.Tensor"),
    __rrshift__=_shift_operator("bitwise_right_shift.Tensor", reflected=True),
    __irshift__=_shift_operator("bitwise_right_shift.Tensor", inplace=True),
    lerp=lerp, lerp_=_op("lerp_.Tensor"),
    addcmul=addcmul, addcdiv=addcdiv,
    addcmul_=lambda s, tensor1, tensor2, *, value=1: _op("addcmul_")(s, tensor1, tensor2, value),
    addcdiv_=lambda s, tensor1, tensor2, *, value=1: _op("addcdiv_")(s, tensor1, tensor2, value),
    prelu=prelu, hardshrink=hardshrink,
    norm=norm, median=median, nanmedian=nanmedian, mode=mode, quantile=quantile,
    nanquantile=nanquantile, nansum=nansum, nanmean=nanmean, count_nonzero=count_nonzero,
    cumsum=cumsum, cumprod=cumprod,
    cumsum_=lambda s, dim, *, dtype=None: _op("cumsum_")(s, dim, dtype),
    cumprod_=lambda s, dim, *, dtype=None: _op("cumprod_")(s, dim, dtype),
    cummax=cummax, cummin=cummin, logcumsumexp=logcumsumexp, aminmax=aminmax,
    sort=sort, argsort=argsort, msort=msort, topk=topk, kthvalue=kthvalue, unique=unique,
    unique_consecutive=unique_consecutive, histc=histc, bincount=bincount,
)
for _name, _fn in _ISSUE3_METHODS.items():
    setattr(Tensor, _name, _fn)


# ---- linear algebra: products, einsum, torch.linalg (issue 3, linalg) ------------------------






def outer(input, vec2, *, out=None):
    """The outer product: a column times a row (a broadcast product, so autograd sees mul)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.dim()}-D")
    return _finish(input.reshape(-1, 1) * vec2, False, out)


ger = outer


def _scaled_product(opname):
    op = _op(opname)

    def fn(input, a, b, *, beta=1, alpha=1, out=None):
        return _finish(op(input, a, b, beta, alpha), False, out)

    def method_(self, a, b, *, beta=1, alpha=1):
        return self.copy_(op(self, a, b, beta, alpha))
    fn.__name__ = opname
    return fn, method_


addmv, _addmv_ = _scaled_product("addmv")
addr, _addr_ = _scaled_product("addr")
baddbmm, _baddbmm_ = _scaled_product("baddbmm")
addbmm, _addbmm_ = _scaled_product("addbmm")
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_equation(args):
    """einsum(op0, [0, 1], op1, [1, 2], [0, 2]) -> ('ab,bc->ac', [op0, op1])."""
    def subs(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)
    operands, parts = list(args[0:-1:2]) if len(args) % 2 else list(args[0::2]), []
    for sub in args[1::2][:len(operands)]:
        parts.append(subs(sub))
    eq = ",".join(parts)
    if len(args) % 2:
        eq += "->" + subs(args[-1])
    return eq, operands


def einsum(*args):
    """einsum(equation, *operands), einsum(equation, [operands]) or the sublist format."""
    if not args:
        raise RuntimeError("einsum(): must specify the equation string and at least one operand, "
                           "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    return _op("einsum")(equation, operands, None)


def tensordot(a, b, dims=2, out=None):
    """Contract dims of a with dims of b: permute both so the contracted dims meet, then one mm."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [_wrap_dim(d, a.dim()) for d in dims_a]
    dims_b = [_wrap_dim(d, b.dim()) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in "
                               f"dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = math.prod(a.shape[d] for d in dims_a)
    pa = a.permute(free_a + dims_a).reshape(-1, k) if a.dim() else a.reshape(1, 1)
    pb = b.permute(dims_b + free_b).reshape(k, -1) if b.dim() else b.reshape(1, 1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _finish(pa.mm(pb).reshape(shape), False, out)


def kron(input, other, *, out=None):
    """Every element of input times all of other: interleave the dims, multiply, merge pairs."""
    n = builtins.max(input.dim(), other.dim())
    sa = (1,) * (n - input.dim()) + tuple(input.shape)
    sb = (1,) * (n - other.dim()) + tuple(other.shape)
    a, b = input, other
    for _ in range(n - input.dim()):
        a = a.unsqueeze(0)
    for _ in range(n - other.dim()):
        b = b.unsqueeze(0)
    for d in range(n):
        a, b = a.unsqueeze(2 * d + 1), b.unsqueeze(2 * d)
    return _finish((a * b).reshape([x * y for x, y in zip(sa, sb)]), False, out)


def cross(input, other, dim=None, *, out=None):
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=2)
        shape = broadcast_shapes(input.shape, other.shape)
        dim = next((d for d, s in enumerate(shape) if s == 3), -1)
    return _finish(_op("linalg_cross")(input, other, dim), False, out)




def inverse(input, *, out=None):
    return _finish(_op("linalg_inv")(input), False, out)


def det(input):
    return _op("linalg_det")(input)


def logdet(input):
    """log(det): NaN for a negative determinant, -inf for a zero one (like PyTorch)."""
    sign, logabsdet = _op("linalg_slogdet")(input)
    return where(sign < 0, math.nan, logabsdet)


def slogdet(input, *, out=None):
    return _finish_tuple("slogdet", ["sign", "logabsdet"], _op("linalg_slogdet")(input), out)


def cholesky(input, upper=False, *, out=None):
    return _finish(_op("linalg_cholesky")(input, upper), False, out)


def qr(input, some=True, *, out=None):
    return _finish_tuple("qr", ["Q", "R"],
                         _op("linalg_qr")(input, "reduced" if some else "complete"), out)


def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: U, S and V (not Vh); without compute_uv, U and V are zeros."""
    U, S, Vh = _op("linalg_svd")(input, not some if compute_uv else False, None)
    V = Vh.mT
    if not compute_uv:
        U, V = zeros_like(U), zeros_like(V)
    return _finish_tuple("svd", ["U", "S", "V"], (U, S, V), out)


def pinverse(input, rcond=1e-15):
    from .. import linalg
    return linalg.pinv(input, rtol=rcond)


def matrix_power(input, n):
    from .. import linalg
    return linalg.matrix_power(input, n)












_LINALG_METHODS = dict(
    dot=dot, vdot=vdot, mv=mv, outer=outer, ger=outer, addmv=addmv, addmv_=_addmv_, addr=addr,
    addr_=_addr_, baddbmm=baddbmm, baddbmm_=_baddbmm_, addbmm=addbmm, addbmm_=_addbmm_,
    cross=cross, trace=trace, kron=kron, inverse=inverse, det=det, logdet=logdet,
    slogdet=slogdet, cholesky=cholesky, qr=qr, svd=svd, pinverse=pinverse,
    matrix_power=matrix_power, diag_embed=diag_embed, rot90=rot90,
    select_scatter=select_scatter, slice_scatter=slice_scatter,
    diagonal_scatter=diagonal_scatter,
)
for _name, _fn in _LINALG_METHODS.items():
    setattr(Tensor, _name, _fn)


# ---- random (issue 3, random) ----------------------------------------------------------------


_RANDOM_METHODS = dict(
    multinomial=multinomial,
    exponential_=lambda s, lambd=1.0, *, generator=None: _op("exponential_")(s, lambd,
                                                                              generator),
    geometric_=lambda s, p, *, generator=None: _op("geometric_")(s, p, generator),
    cauchy_=lambda s, median=0.0, sigma=1.0, *, generator=None: _op("cauchy_")(s, median, sigma,
                                                                               generator),
    log_normal_=lambda s, mean=1.0, std=2.0, *, generator=None: _op("log_normal_")(s, mean, std,
                                                                                   generator),
)
for _name, _fn in _RANDOM_METHODS.items():
    setattr(Tensor, _name, _fn)


# ---- shape and indexing composites (issue 3, shape/indexing) -------------------------------------
def _split_along(name, dim, min_dim):
    def fn(input, indices_or_sections):
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension{'s' if min_dim > 1 else ''}, but got a tensor with "
                               f"{input.dim()} dimensions!")
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.shape[d]} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = name
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)




def _triangle_indices(row, col, offset, lower, dtype, device):
    rows, cols = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype or D.int64, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices(row, col, offset, False, dtype, device)


def narrow_copy(input, dim, start, length, *, out=None):
    return _finish(narrow(input, dim, start, length).clone(memory_format=contiguous_format),
                   False, out)


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all dims equal); a tall matrix with wrap=True restarts the
    diagonal every n + 1 rows, as NumPy's fill_diagonal does."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    with _no_grad_guard():
        arr = np.zeros(self.shape, dtype=bool)
        np.fill_diagonal(arr, True, wrap=wrap)
        mask = tensor(arr, device=self.device)
    return self.masked_fill_(mask, fill_value)


def _no_grad_guard():
    from .._core.grad_mode import no_grad
    return no_grad()


def _apply_(self, callable):
    """Call a Python function on every element, in place (CPU only, like PyTorch)."""
    flat = self.detach().reshape(-1).tolist()
    values = tensor([callable(v) for v in flat], dtype=self.dtype).reshape(self.shape)
    with _no_grad_guard():
        self.copy_(values)
    return self


_SHAPE_METHODS = dict(hsplit=hsplit, vsplit=vsplit, dsplit=dsplit, take=take,
                      narrow_copy=narrow_copy, fill_diagonal_=_fill_diagonal_, apply_=_apply_)
for _name, _fn in _SHAPE_METHODS.items():
    setattr(Tensor, _name, _fn)


# ---- scatter reductions, copies and puts (issue 3, remaining ops) -----------------------------








_SCATTER_METHODS = dict(
    scatter_reduce=lambda s, dim, index, src, reduce, *, include_self=True:
        _op("scatter_reduce.two")(s, dim, index, src, reduce, include_self),
    scatter_reduce_=lambda s, dim, index, src, reduce, *, include_self=True:
        _op("scatter_reduce_.two")(s, dim, index, src, reduce, include_self),
    masked_scatter=masked_scatter, masked_scatter_=_op("masked_scatter_"),
    index_copy=lambda s, dim, index, source: _op("index_copy")(s, dim, index, source),
    index_copy_=_op("index_copy_"), put=put,
    put_=lambda s, index, source, accumulate=False: _op("put_")(s, index, source, accumulate),
)
for _name, _fn in _SCATTER_METHODS.items():
    setattr(Tensor, _name, _fn)


# ---- in-place view ops and resize_ (issue 3, remaining ops) -----------------------------------
def _squeeze_(self, dim=None):
    if dim is None:
        return _op("squeeze_")(self)
    if isinstance(dim, int):
        return _op("squeeze_.dim")(self, dim)
    return _op("squeeze_.dims")(self, list(dim))


def _check_resizable(self):
    # checked whatever the grad mode, as PyTorch does
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def _resize_(self, *sizes, memory_format=None):
    _check_resizable(self)
    return _op("resize_")(self, _size_args(sizes), memory_format)


def _resize_as_(self, the_template, *, memory_format=None):
    _check_resizable(self)
    return _op("resize_as_")(self, the_template, memory_format)


_INPLACE_VIEW_METHODS = dict(
    t_=_op("t_"), transpose_=_op("transpose_"), swapdims_=_op("swapdims_"),
    swapaxes_=_op("swapaxes_"), squeeze_=_squeeze_, unsqueeze_=_op("unsqueeze_"),
    as_strided_=lambda s, size, stride, storage_offset=None: _op("as_strided_")(
        s, list(size), list(stride), storage_offset),
    resize_=_resize_, resize_as_=_resize_as_,
)
for _name, _fn in _INPLACE_VIEW_METHODS.items():
    setattr(Tensor, _name, _fn)






Tensor.index_reduce = lambda s, dim, index, source, reduce, *, include_self=True: _op(
    "index_reduce")(s, dim, index, source, reduce, include_self)
Tensor.index_reduce_ = lambda s, dim, index, source, reduce, *, include_self=True: _op(
    "index_reduce_")(s, dim, index, source, reduce, include_self)


# ---- torch's remaining public elementwise callables (coverage) --------------------------------

_PI_180 = math.pi / 180
sinc, i0, signbit, isposinf, isneginf = (_unary_fn(_n) for _n in ("sinc", "i0", "signbit",
                                                                   "isposinf", "isneginf"))
gcd_, lcm_ = _op("gcd_"), _op("lcm_")
sinc_, i0_ = _inplace_fn("sinc_"), _inplace_fn("i0_")










def clamp_min(input, min, *, out=None):
    return clamp(input, min=min, out=out)


def clamp_max(input, max, *, out=None):
    return clamp(input, max=max, out=out)


clamp_ = clip_ = _clamp_inplace


def clamp_min_(input, min):
    return _clamp_inplace(input, min=min)


def clamp_max_(input, max):
    return _clamp_inplace(input, max=max)


def _no_complex(name, input):
    if input.is_complex():
        raise RuntimeError(f"{name} is not supported for complex tensors.")


def deg2rad(input, *, out=None):
    _no_complex("deg2rad", input)
    return mul(input, _PI_180, out=out)


def deg2rad_(input):
    _no_complex("deg2rad", input)
    return input.mul_(_PI_180)


def rad2deg(input, *, out=None):
    _no_complex("rad2deg", input)
    return mul(input, 1 / _PI_180, out=out)


def rad2deg_(input):
    _no_complex("rad2deg", input)
    return input.mul_(1 / _PI_180)


def sgn(input, *, out=None):
    """sign for real tensors; x / |x| (0 at 0) for complex ones."""
    if not input.is_complex():
        return sign(input, out=out)
    if input.requires_grad and _grad_state.enabled:
        raise NotImplementedError("ember: the derivative of sgn for complex tensors is not "
                                  "implemented")
    magnitude = input.abs()
    return _finish(where(magnitude == 0, 0, input / magnitude.to(input.dtype)), False, out)


def _float_power_dtype(input, exponent):
    complex_ = builtins.any(x.is_complex() if isinstance(x, Tensor) else isinstance(x, complex)
                   for x in (input, exponent))
    return D.complex128 if complex_ else D.float64


def float_power(input, exponent, *, out=None):
    """pow computed in double (complex double if either operand is complex)."""
    dt = _float_power_dtype(input, exponent)
    base = input.to(dt) if isinstance(input, Tensor) else input
    exponent = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return pow(base, exponent, out=out)


def _float_power_(self, exponent):
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_scalar_type_name(self.dtype)} but the operation's result "
                           f"requires dtype {_scalar_type_name(dt)}")
    return self.pow_(exponent.to(dt) if isinstance(exponent, Tensor) else exponent)




def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma: sum_j lgamma(x - j/2) for j < p, plus p(p-1)/4 log(pi)."""
    if input.dtype is D.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dt = input.dtype if input.is_floating_point() else D.get_default_dtype()
    offsets = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dt, device=input.device)
    result = (offsets + input.unsqueeze(-1)).lgamma().sum(-1) + p * (p - 1) * math.log(
        math.pi) / 4
    return _finish(result, False, out)


def _mvlgamma_(self, p):
    result = mvlgamma(self, p)
    if not self.is_floating_point():
        raise RuntimeError(f"mvlgamma: result type {_scalar_type_name(result.dtype)} can't be "
                           f"cast to the desired output type {_scalar_type_name(self.dtype)}")
    return self.copy_(result)


def positive(input):
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def square_(input):
    return input.pow_(2)


def fill(input, value):
    return input.clone().fill_(value)


detach = Tensor.detach
detach_ = Tensor.detach_


def _inplace_result(fn):
    """The in-place form of a comparison or logical op: the result is written into self,
    cast to self's dtype (True is 1)."""
    def method_(self, other):
        return self.copy_(fn(self, other))
    method_.__name__ = fn.__name__ + "_"
    return method_


_COVERAGE_METHODS = dict(
    logaddexp=logaddexp, logaddexp2=logaddexp2, fmax=fmax, fmin=fmin, gcd=gcd, gcd_=gcd_,
    lcm=lcm, lcm_=lcm_, heaviside=heaviside, heaviside_=_op("heaviside_"), igamma=igamma,
    igamma_=_op("igamma_"), igammac=igammac, igammac_=_op("igammac_"), nextafter=nextafter,
    nextafter_=_op("nextafter_"), xlogy=xlogy, xlogy_=xlogy_, sinc=sinc, sinc_=sinc_, i0=i0,
    i0_=i0_, signbit=signbit, isposinf=isposinf, isneginf=isneginf, isreal=isreal,
    logit=logit, logit_=logit_, frexp=frexp, clamp_min=clamp_min, clamp_max=clamp_max,
    clamp_min_=clamp_min_, clamp_max_=clamp_max_, deg2rad=deg2rad, deg2rad_=deg2rad_,
    rad2deg=rad2deg, rad2deg_=rad2deg_, sgn=sgn, sgn_=lambda s: s.copy_(sgn(s)),
    float_power=float_power, float_power_=_float_power_, ldexp=ldexp, ldexp_=ldexp_,
    mvlgamma=mvlgamma, mvlgamma_=_mvlgamma_, positive=positive, square_=square_,
    greater=gt, greater_equal=ge, less=lt, less_equal=le, not_equal=ne,
    multiply_=Tensor.mul_, subtract_=Tensor.sub_, divide_=Tensor.div_,
    true_divide_=Tensor.div_, floor_divide_=_op("floor_divide_.Tensor"),
    remainder_=_op("remainder_.Tensor"), addmm_=_scaled_product("addmm")[1],
)
for _fn in (eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor, bitwise_and,
            bitwise_or, bitwise_xor):
    _COVERAGE_METHODS[_fn.__name__ + "_"] = _inplace_result(_fn)
for _alias, _name in (("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"),
                      ("less_equal_", "le_"), ("not_equal_", "ne_")):
    _COVERAGE_METHODS[_alias] = _COVERAGE_METHODS[_name]
for _name, _fn in _COVERAGE_METHODS.items():
    setattr(Tensor, _name, _fn)


# complex numbers: ember has no conjugate or negative bit, so conj is physical and resolve_*
# return their input; real/imag/view_as_real are views of the complex tensor's memory






def angle(input, *, out=None):
    if input.is_complex():
        return atan2(imag(input), real(input), out=out)
    return _finish(_op("angle")(input), False, out)


def real(input):
    return view_as_real(input).select(-1, 0) if input.is_complex() else input


def imag(input):
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)






conj = conj_physical


def resolve_conj(input):
    return input


resolve_neg = resolve_conj


def _complex(real, imag, *, out=None):
    """A complex tensor from its real and imaginary parts (which broadcast)."""
    for what, x in (("real", real), ("imag", imag)):
        if x.dtype is D.float16:
            raise RuntimeError("ember has no complex32 (ComplexHalf) dtype: complex() of "
                               "float16 tensors is not supported")
        if x.dtype not in (D.float32, D.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {_scalar_type_name(real.dtype)} and "
                               f"{_scalar_type_name(imag.dtype)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_scalar_type_name(real.dtype)} but "
                           f"got scalar type {_scalar_type_name(imag.dtype)} for second argument")
    return _finish(view_as_complex(stack(broadcast_tensors(real, imag), -1)), False, out)


def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle))."""
    return _complex(abs * angle.cos(), abs * angle.sin(), out=out)


_complex.__name__ = "complex"  # torch.complex (ember/__init__.py): here it would hide the builtin


def _complex_method(dtype):
    return lambda self, memory_format=None: self.to(dtype)


def _chalf(self, memory_format=None):
    raise RuntimeError("ember has no complex32 (ComplexHalf) dtype: Tensor.chalf() is not "
                       "supported")


Tensor.real = property(real, lambda self, value: real(self).copy_(value))
Tensor.imag = property(imag, lambda self, value: imag(self).copy_(value))
for _name, _fn in dict(angle=angle, conj_physical=conj_physical, conj_physical_=conj_physical_,
                       cfloat=_complex_method(D.complex64), cdouble=_complex_method(D.complex128),
                       chalf=_chalf).items():
    setattr(Tensor, _name, _fn)

