"""Hand-written bindings of the factories: `torch.tensor`, `zeros`, `rand`, `arange`, the
`*_like` functions, `Tensor.new_*` and the in-place samplers, with the Python conventions no
schema line captures (sizes as varargs or one sequence, `requires_grad=`, `layout=`,
`pin_memory=` accepted and ignored on CPU, the default dtype for float factories)."""
from ember._core._warnings import user_stacklevel as _user_stacklevel
import builtins
import warnings

import numpy as np
from .._core.float8 import as_strided

from .._core import dtype as D
from .._core.device import device as _device_cls, default_device, check_legacy_device, no_backend
from .._core.tensor import Tensor, Size, _wrap_external, _meta
from .._core.python_key import PYTHON_KEY
from .._core.layout import strided, sparse_coo
from .._core.storage import UntypedStorage
from .._core.resizable import mark_not_resizable
from .._core.memory_format import preserve_format, contiguous_format, format_strides
from .._core.grad_mode import _grad_state
from .._dispatch.dispatcher import impl as _impl, lookup as _op
from .._dispatch import dispatcher as _dispatcher
from .._aten.tensor_iterator import preserve_strides
from .._aten.elementwise import broadcast_shape
from .._aten.factory import checked_scalar, fill_scalar, linspace_dtype, check_numpy_array
from .out import _finish, _type, resize_output
from .._dispatch import vmap_state as _vmap_state
from .._dispatch.vmap_state import random_function, check_inplace_draw


def _out_dtype(out, dtype, layout=None):
    """A factory given `out=`: its dtype defaults to out's, and another dtype or layout is
    refused (the checks PyTorch's argument parser makes before the factory runs)."""
    if out is None:
        return dtype
    if layout is not None and layout is not out.layout:
        raise RuntimeError(f"layout {layout.c10_name} does not match layout of out parameter "
                           f"({out.layout.c10_name})")
    if dtype is None:
        return out.dtype
    if dtype is not out.dtype:
        raise RuntimeError(f"dtype {_type(dtype)} does not match dtype of out parameter "
                           f"({_type(out.dtype)})")
    return dtype
from .generated import pow
from . import arg_parser as _ap


def _size_args(size, keyword=None, name="empty"):
    """zeros(2, 3), zeros((2, 3)), zeros([2, 3]), zeros(torch.Size([2, 3])) and
    zeros(size=(2, 3)) all mean (2, 3)."""
    if keyword is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return tuple(_ap.int_list_arg(name, "size", 1, keyword))
    if not size:   # zeros() is no 0-d tensor: zeros(()) is
        from .codegen import _missing_size
        _missing_size(name, "size")
    return tuple(_ap.int_list_arg(name, "size", 1, size, 0, True))


_RUNS_ON = ("cpu", "meta", "lazy")


def _dev(device):
    """A factory's device: the one given, else the default one (`with ember.device(...)`)."""
    device = default_device() if device is None else _device_cls(device)
    if device is not None and device.type not in _RUNS_ON and not _fake_mode_active():
        raise no_backend(device)  # what a CPU build says
    return device


def _fake_mode_active():
    """A FakeTensorMode makes tensors of any device without its backend (PyTorch's fake mode
    never initializes the device), so a CPU build makes fake CUDA tensors within it."""
    from .._core.mode_stack import torch_dispatch_modes
    return any(getattr(m, "makes_tensors_of_any_device", False) for m in torch_dispatch_modes)


# ---- factories --------------------------------------------------------------------------------
_empty = _op("empty.memory_format")
_full = _op("full")
_arange = _op("arange.start_step")
_linspace = _op("linspace")
_eye = _op("eye.m")
_alias_op = _op("alias")
_from_data = _op("_tensor_from_data")
_uniform_ = _op("uniform_")
_normal_ = _op("normal_")
_random_ = _op("random_.from")
_bernoulli_ = _op("bernoulli_.float")
_bernoulli = _op("bernoulli")
_randperm = _op("randperm")
_empty_strided = _op("empty_strided")


_NO_DATA = object()


def tensor(data=_NO_DATA, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if data is _NO_DATA:   # PyTorch's parser words the missing argument its own way
        raise TypeError('tensor() missing 1 required positional arguments: "data"')
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=_user_stacklevel())
        t = data.detach().clone()
        device = _dev(device)
        if dtype is not None or device is not None:
            t = t.to(dtype=dtype, device=device)
        return _finish(t, requires_grad)
    return _finish(_from_data(data, dtype, _dev(device)), requires_grad)


def as_tensor(data, dtype=None, device=None):
    device = _dev(device)
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (device is None or _dev(device).type == "cpu"):
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """A tensor of `obj`, sharing its memory when it can. A tensor, NumPy array or DLPack
    object is shared unless another dtype or device is asked for; an object with the buffer
    protocol is its bytes read as `dtype` (the default dtype if none); a NumPy scalar, a
    number or a sequence of them is copied. copy=True always copies; copy=False refuses to.
    requires_grad=None keeps obj's (and its autograd history), False detaches, True asks."""
    device = None if device is None else _device_cls(device)
    if isinstance(obj, np.generic):
        if copy is False:
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                               "transform it in a ndarray. ")
        return _finish(tensor(obj, dtype=dtype, device=device), requires_grad)
    if isinstance(obj, Tensor):
        base = obj
    elif isinstance(obj, np.ndarray):
        base = from_numpy(obj)
    elif hasattr(obj, "__dlpack__") or type(obj).__name__ == "PyCapsule":
        base = from_dlpack(obj)
    elif _is_buffer(obj):
        from .. import frombuffer
        base = frombuffer(obj, dtype=D.get_default_dtype() if dtype is None else dtype)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return _finish(tensor(obj, dtype=dtype, device=_dev(device)), requires_grad)
    t = base
    if dtype is not None and dtype is not base.dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_type(base.dtype)}' into dtype "
                             f"'{_type(dtype)}'.")
        t = t.to(dtype)
    if device is not None and device != base.device:
        if copy is False:
            raise ValueError(f"can't alias tensor from device '{base.device}' to '{device}'.")
        t = t.to(device)
    if copy and t is base:
        t = t.clone()
    if requires_grad is None:
        if base.requires_grad:
            from .._core.flags import warn_once
            warn_once("torch.asarray: unspecified requires_grad now defaults to "
                      "obj.requires_grad instead of False. Pass requires_grad=False explicitly "
                      "to get the old behavior and silence this warning.")
        return t
    if not requires_grad:
        return t.detach() if t.requires_grad else t
    return _finish(t, True)


def _is_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def from_numpy(ndarray):
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_ap.type_name(ndarray)})")
    check_numpy_array(ndarray)
    if not ndarray.flags.writeable:
        from .._core.flags import warn_once
        warn_once("The given NumPy array is not writable, and PyTorch does not support "
                  "non-writable tensors. This means writing to this tensor will result in "
                  "undefined behavior. You may want to copy the array to protect its data or "
                  "make it writable before converting it to a tensor. This type of warning "
                  "will be suppressed for the rest of this program.")
    t = _tensor_over(ndarray)
    mark_not_resizable(t._storage_())
    return t


def _tensor_over(ndarray):
    """A tensor that is a view of `ndarray`'s memory: its storage is the memory the array
    spans from its first element (storage_offset 0), as for PyTorch's from_numpy/from_dlpack."""
    t = _wrap_external(ndarray.view())
    it = ndarray.itemsize
    if not ndarray.size:  # the tensor takes the array's strides, even an empty array's
        t._stride_, t._offset_ = tuple(s // it for s in ndarray.strides), 0
        return t
    if ndarray.flags.c_contiguous:
        span = ndarray.reshape(-1)  # the common case: a flat view, no stride tricks
    else:
        extent = 1 + builtins.sum((n - 1) * s for n, s in zip(ndarray.shape,
                                                              ndarray.strides)) // it
        span = as_strided(ndarray, (extent,), (it,))
    t._storage = UntypedStorage._adopt(span, t._device)
    return t


def from_dlpack(ext_tensor):
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    from .._core.tensor import array_from_dlpack
    return _tensor_over(array_from_dlpack(ext_tensor))


def _sparse_zeros(size, dtype, device, requires_grad):
    """torch.zeros / torch.empty with layout=torch.sparse_coo: a sparse tensor of that size with
    no stored entries (every dimension sparse)."""
    size = [int(n) for n in size]
    indices = _zeros([len(size), 0], D.int64, None, _dev(device), False)
    values = _zeros([0], dtype or D.get_default_dtype(), None, _dev(device), False)
    t = _op("_sparse_coo_tensor_with_dims_and_tensors")(len(size), 0, size, indices, values,
                                                          is_coalesced=True)
    return _finish(t, requires_grad)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    dtype = _out_dtype(out, dtype, layout)
    size = _size_args(sizes, size, "empty")
    if layout is not None and layout.name == "sparse_coo" and out is None:
        return _sparse_zeros(size, dtype, device, requires_grad)
    if memory_format is not None and memory_format is not contiguous_format:
        # a dense tensor whose strides follow the format (channels_last: NHWC)
        if out is not None:
            raise RuntimeError("'memory_format' argument is incompatible with 'out' tensor "
                               "argument")
        if memory_format is preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
        return _finish(_empty_strided(tuple(size), format_strides(size, memory_format),
                                      dtype, _dev(device)), requires_grad)
    return _finish(_empty(size, dtype, _dev(device), False), requires_grad, out, "empty")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    return _finish(_empty_strided(tuple(size), tuple(stride), dtype, _dev(device)),
                   requires_grad)


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    size = _size_args(sizes, size, "zeros")
    if any(s < 0 for s in size):  # torch.zeros' own check; new_zeros has none
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    dtype = _out_dtype(out, dtype, layout)
    if layout is not None and layout.name == "sparse_coo" and out is None:
        return _sparse_zeros(size, dtype, device, requires_grad)
    if out is not None and out.is_sparse:   # a sparse out becomes empty of that size
        empty_sparse = _sparse_zeros(size, out.dtype, device, False)
        out._size, out._sparse = empty_sparse._size, empty_sparse._sparse
        return _finish(out, requires_grad)
    if out is not None:
        return _finish(_full(size, 0, dtype or D.get_default_dtype(), _dev(device)),
                       requires_grad, out, "zeros")
    return _finish(_zeros(list(size), dtype, None, _dev(device), pin_memory), requires_grad)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    size = _size_args(sizes, size, "ones")
    dtype = _out_dtype(out, dtype, layout)
    if out is not None:
        return _finish(_full(size, 1, dtype or D.get_default_dtype(),
                             _dev(device)), requires_grad, out, "ones")
    return _finish(_ones(list(size), dtype, None, _dev(device), pin_memory),
                   requires_grad)


# aten.zeros / aten.ones: ops (CompositeImplicitAutograd, written with `full`) so that graphs
# record them by name, as torch.export's do
_zeros, _ones = _op("zeros"), _op("ones")
_impl("zeros", "CompositeImplicitAutograd")(
    lambda size, dtype, layout, device, pin_memory:
    _full(size, 0, dtype or D.get_default_dtype(), device))
_impl("ones", "CompositeImplicitAutograd")(
    lambda size, dtype, layout, device, pin_memory:
    _full(size, 1, dtype or D.get_default_dtype(), device))


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    dtype = _out_dtype(out, dtype, layout)
    size = _ap.int_list_arg("full", "size", 1, size)
    fill_value = _ap.scalar_arg("full", "fill_value", 2, fill_value)
    return _finish(_full(size, fill_value, dtype, _dev(device)), requires_grad, out, "full")


def _empty_like(t, dtype, device, memory_format):
    """An uninitialized tensor shaped like `t` (PyTorch's empty_like). By default
    (preserve_format) a dense `t` lends its strides, so `zeros_like(x.t())` is transposed too,
    and another is made dense in the order of its strides; anything else is laid out
    contiguously or in the requested memory format."""
    if t.layout not in (strided, sparse_coo):  # a compressed layout: its indices kept
        from .sparse_compressed import empty_like_compressed
        return empty_like_compressed(t, dtype)
    dt, dev = dtype or t.dtype, t.device if device is None else _device_cls(device)
    if t.is_sparse:   # COO: a tensor of the same shape and dims with no entries
        if memory_format is not None:
            raise RuntimeError("memory format option is only supported by strided tensors")
        from .. import sparse_coo_tensor
        n_dense = t.dense_dim()
        return sparse_coo_tensor(_empty((t.sparse_dim(), 0), D.int64, dev, False),
                                 _empty((0,) + tuple(t._size[len(t._size) - n_dense:]), dt, dev,
                                        False), t._size, check_invariants=False,
                                 is_coalesced=True)
    if memory_format is None or memory_format is preserve_format:
        # (an empty t counts as contiguous, but keeps its strides: it is dense in any order)
        strides = None if t.is_contiguous() and 1 not in t._size and t.numel() else \
            preserve_strides(t._size, t.stride())
        if strides is not None:
            return _empty_strided(t._size, strides, dt, dev)
    elif memory_format is not contiguous_format:
        return _empty_strided(t._size, format_strides(t._size, memory_format), dt, dev)
    return _empty(t._size, dt, dev, False)


def _filled(t, value):
    if t.is_sparse and value != 0:   # PyTorch has no fill_ for COO tensors
        raise NotImplementedError("Could not run 'aten::fill_.Scalar' with arguments from the "
                                  "'SparseCPU' backend. This could be because the operator "
                                  "doesn't exist for this backend.")
    if t._np is not None:
        if isinstance(value, Tensor):  # a tensor's value is cast as it is
            value = value.item()
            if t.dtype._kind is not None:
                value = fill_scalar(value, t.dtype) if t.dtype is D.complex32 else \
                    checked_scalar(float(value), t.dtype)
            t._np[...] = value
        else:
            t._np[...] = fill_scalar(value, t.dtype)
    elif t._lazy is not None:  # recorded on the lazy device
        t.fill_(value)
    elif t.layout not in (strided, sparse_coo):  # compressed: zeros_like stores no entry,
        if value == 0:                                # ones_like fills the stored ones
            t.zero_()
        else:
            t.values().fill_(value)
    return t


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    if _through_op(input):
        return _like_op(_op("empty_like"), input, requires_grad, dtype, layout, device,
                        memory_format)
    return _finish(_empty_like(input, dtype, device, memory_format), requires_grad)


@_impl("empty_like", ("CPU", "Meta"))
def _empty_like_kernel(self, dtype=None, layout=None, device=None, pin_memory=None,
                       memory_format=None):
    return _empty_like(self, dtype, device, memory_format)


def _through_op(input):
    """Whether a factory that reads a tensor (a *_like one, a Tensor.new_* method) goes through
    its op rather than straight to its kernel's code: for a `__torch_dispatch__` subclass, whose
    handler makes the result (as in PyTorch); and while a dispatch mode (a capture) is active,
    for the dense CPU and meta tensors the op's kernels serve, so the capture records
    aten.zeros_like, aten.new_ones, ... (and the graph fills, rather than reads an empty).
    Under vmap they stay off the dispatcher: vmap batches their results itself ("new_like")."""
    return input._sparse is PYTHON_KEY or (
        _dispatcher._modes and not _vmap_state.levels and input._sparse is None and
        input._lazy is None and input.device.type in ("cpu", "meta"))


def _like_op(op, input, requires_grad, dtype, layout, device, memory_format, *args):
    """A *_like factory's call of its op, keyword arguments as PyTorch's binding passes them."""
    return _finish(op(input, *args, dtype=dtype, layout=layout, device=device, pin_memory=False,
                      memory_format=memory_format), requires_grad)


# full_like is an op so that captures record it (torch.export keeps zeros_like/ones_like whole and
# lowers them to full_like); the factories below call the ops only while a dispatch mode is active
@_impl("full_like", "CPU")
def _full_like_kernel(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None,
                      memory_format=None):
    return _filled(_empty_like(self, dtype, device, memory_format), fill_value)


@_impl("full_like", "Meta")
def _full_like_meta(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None,
                    memory_format=None):
    return _empty_like(self, dtype, device, memory_format)


def _filled_like(value):
    def composite(self, dtype=None, layout=None, device=None, pin_memory=None,
                  memory_format=None):
        return _full_like(self, value, dtype=dtype, layout=layout, device=device,
                          pin_memory=pin_memory, memory_format=memory_format or preserve_format)
    return composite


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    if _through_op(input):
        return _finish(_zeros_like(input, dtype=dtype, layout=layout, device=device,
                                   pin_memory=False, memory_format=memory_format), requires_grad)
    return _finish(_filled(_empty_like(input, dtype, device, memory_format), 0), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    if _through_op(input):
        return _finish(_ones_like(input, dtype=dtype, layout=layout, device=device,
                                  pin_memory=False, memory_format=memory_format), requires_grad)
    return _finish(_filled(_empty_like(input, dtype, device, memory_format), 1), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    fill_value = _ap.scalar_arg("full_like", "fill_value", 2, fill_value)
    if _through_op(input):
        return _finish(_full_like(input, fill_value, dtype=dtype, layout=layout, device=device,
                                  pin_memory=False, memory_format=memory_format), requires_grad)
    return _finish(_filled(_empty_like(input, dtype, device, memory_format), fill_value),
                   requires_grad)


_zeros_like, _ones_like, _full_like = _op("zeros_like"), _op("ones_like"), _op("full_like")
_impl(_zeros_like, "CompositeImplicitAutograd")(_filled_like(0))
_impl(_ones_like, "CompositeImplicitAutograd")(_filled_like(1))


def _sampled(t):
    """A new tensor its sampler filled in place starts at version 0: PyTorch's random
    factories fill below autograd, where no in-place op is counted."""
    t._storage_()._version = 0
    return t


# The random *_like factories: a call with a generator runs the kernel's code directly (the
# ops here are PyTorch's overloads without one)
@random_function(like=True)
def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, generator=None):
    if generator is None and _through_op(input):
        return _like_op(_op("rand_like"), input, requires_grad, dtype, layout, device,
                        memory_format)
    return _finish(_rand_like(input, dtype, None, device, None, memory_format, generator),
                   requires_grad)


@_impl("rand_like", ("CPU", "Meta"))
def _rand_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None,
               generator=None):
    return _sampled(_uniform_(_empty_like(self, dtype, device, memory_format), 0.0, 1.0,
                              generator))


@random_function(like=True)
def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, generator=None):
    if generator is None and _through_op(input):
        return _like_op(_op("randn_like"), input, requires_grad, dtype, layout, device,
                        memory_format)
    return _finish(_randn_like(input, dtype, None, device, None, memory_format, generator),
                   requires_grad)


@_impl("randn_like", ("CPU", "Meta"))
def _randn_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None,
                generator=None):
    return _sampled(_normal_(_empty_like(self, dtype, device, memory_format), 0.0, 1.0,
                             generator))


@random_function(like=True)
def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, generator=None):
    if generator is None and _through_op(input):
        if high is None:
            return _like_op(_op("randint_like"), input, requires_grad, dtype, layout, device,
                            memory_format, low)
        return _like_op(_op("randint_like.low_dtype"), input, requires_grad, dtype, layout,
                        device, memory_format, low, high)
    if high is None:
        low, high = 0, low
    return _finish(_randint_like(input, low, high, dtype, device, memory_format, generator),
                   requires_grad)


def _randint_like(self, low, high, dtype, device, memory_format, generator=None):
    t = _empty_like(self, dtype, device, memory_format)
    return _sampled(_random_(t, low, high, generator))


@_impl("randint_like", ("CPU", "Meta"))
def _randint_like_high(self, high, dtype=None, layout=None, device=None, pin_memory=None,
                       memory_format=None):
    return _randint_like(self, 0, high, dtype, device, memory_format)


@_impl("randint_like.low_dtype", ("CPU", "Meta"))
def _randint_like_low_high(self, low, high, dtype=None, layout=None, device=None,
                           pin_memory=None, memory_format=None):
    return _randint_like(self, low, high, dtype, device, memory_format)


def range_out(values, out, requires_grad, warn_resize=False):
    """The range factories' (arange, range, linspace, logspace) out=: `out` keeps its shape
    when it holds as many elements as `values` and takes them in its logical order; else it
    becomes 1-D (arange says so when `out` had elements, as PyTorch's RangeFactories do)."""
    if out is None:
        return _finish(values, requires_grad)
    n = values.numel()
    if out.numel() != n:
        if warn_resize and out.numel() > 0:
            warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} "
                          f"is {out.numel()} which does not match the computed number of "
                          f"elements {n}. Note that this may occur as a result of rounding "
                          f"error. The out tensor will be resized to a tensor of shape ({n},).",
                          UserWarning, stacklevel=_user_stacklevel())
        out.resize_(n)
    out.copy_(values.reshape(out.shape))
    return _finish(out, requires_grad)


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if end is None:
        start, end = 0, start
    values = _arange(start, end, step, _out_dtype(out, dtype, layout), _dev(device))
    return range_out(values, out, requires_grad, warn_resize=True)


def _steps(name, start, end, steps, base=""):
    """linspace's and logspace's `steps`: an int. They have four overloads in PyTorch (start and
    end each a Tensor or a Number), so a wrong argument gets the parser's overload message; a
    start or end tensor must then hold one number (0-dimensional)."""
    try:
        steps = steps if steps.__class__ is int else _ap.int_arg(name, "steps", 3, steps)
    except TypeError:
        options = "".join(f"\n * ({a} start, {b} end, int steps{base}, *, Tensor out = None, "
                          "torch.dtype dtype = None, torch.layout layout = None, torch.device "
                          "device = None, bool pin_memory = False, bool requires_grad = False)"
                          for a, b in [("Tensor", "Tensor"), ("Number", "Tensor"),
                                       ("Tensor", "Number"), ("Number", "Number")])
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({_type_names((start, end, steps), {})}), but expected one of:"
                        f"{options}\n") from None
    dims = [f"{what} with {t.dim()} dimension(s)" for what, t in (("start", start), ("end", end))
            if isinstance(t, Tensor) and t.dim() != 0]
    if dims:
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"{' and '.join(dims)}.")
    return steps


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    steps = _steps("linspace", start, end, steps)
    values = _linspace(start, end, steps, _out_dtype(out, dtype, layout), _dev(device))
    return range_out(values, out, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    steps = _steps("logspace", start, end, steps, ", float base = 10.0")
    dtype = linspace_dtype(start, end, _out_dtype(out, dtype, layout), "torch.logspace()")
    if dtype is D.bool or dtype is D.complex32:
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for "
                                  f"'{D.scalar_type_name(dtype)}'")
    t = linspace(start, end, steps, dtype=D.complex128 if dtype.is_complex else D.float64,
                 device=device)
    return range_out(pow(base, t).to(dtype), out, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _out_dtype(out, dtype, layout)
    n = _ap.int_arg("eye", "n", 1, n)
    m = n if m is None else _ap.int_arg("eye", "m", 2, m)
    return _finish(_eye(n, m, dtype, _dev(device)), requires_grad, out, "eye")


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(_op("scalar_tensor")(s, dtype, _dev(device)), requires_grad)


def _sample_into(out, size, dtype, device):
    """The tensor a random factory fills: a new one, or (PyTorch's rand.out, randn.out,
    normal.float_float_out) `out` itself, resized in place without a warning and filled where
    it lies, so a non-contiguous `out` takes the draws in its own layout."""
    if out is None:
        return _empty(size, dtype, _dev(device), False)
    return out.resize_(size)


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    dtype = _out_dtype(out, dtype, layout)
    t = _sample_into(out, _size_args(sizes, size, "rand"), dtype, device)
    return _finish(_sampled(_uniform_(t, 0.0, 1.0, generator)), requires_grad)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    dtype = _out_dtype(out, dtype, layout)
    t = _sample_into(out, _size_args(sizes, size, "randn"), dtype, device)
    return _finish(_sampled(_normal_(t, 0.0, 1.0, generator)), requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    if size is None:
        if isinstance(high, (tuple, list, Size)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    elif high is None:
        low, high = 0, low
    low, high = _ap.int_arg("randint", "low", 1, low), _ap.int_arg("randint", "high", 2, high)
    t = _empty(_size_args((size,), name="randint"), _out_dtype(out, dtype, layout) or D.int64, _dev(device), False)
    return _finish(_sampled(_random_(t, low, high, generator)), requires_grad, out, "randint")


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    dtype = _out_dtype(out, dtype, layout) or D.int64
    n = _ap.int_arg("randperm", "n", 1, n)
    return _finish(_randperm(n, generator, dtype, _dev(device)), requires_grad, out, "randperm")


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False):
    if size is not None:  # the (float mean, float std, size) overload: 0-d tensors are numbers
        mean, std = (x.item() if isinstance(x, Tensor) else x for x in (mean, std))
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if out is not None:
            return _normal_tensors_out(mean, std, generator, out)
        return _finish(_normal_tensors(mean, std, generator), requires_grad)
    dtype = _out_dtype(out, dtype, layout)
    t = _sample_into(out, _size_args((size,), name="normal"), dtype, device)
    return _finish(_sampled(_normal_(t, float(mean), float(std), generator)), requires_grad)


def _normal_tensors_out(mean, std, generator, out):
    """PyTorch's normal.Tensor_float_out (and float_Tensor, Tensor_Tensor): `out` is resized
    to the result's shape and drawn into in place, then scaled and shifted in place. With a
    float std that shape is `mean` broadcast against out's current shape: an out of a
    broadcastable shape keeps it."""
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    _check_normal_std(std)
    if any(x.requires_grad for x in tensors) and _grad_state.enabled:
        raise RuntimeError("normal(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    std_is_float = not isinstance(std, Tensor)
    shape = broadcast_shape(mean._size, out._size) if std_is_float else \
        broadcast_shape(*(x._size for x in tensors))
    resize_output(out, shape)
    _normal_(out, 0.0, float(std) if std_is_float else 1.0, generator)
    if not std_is_float:
        out.mul_(std)
    return out.add_(mean)


def _check_normal_std(std):
    if isinstance(std, Tensor):
        if std.dtype.is_complex:
            raise RuntimeError("normal expects standard deviation to be non-complex")
        if not std.is_meta and not bool((std >= 0).all()):   # (a meta std has no values)
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


@random_function
def _normal_tensors(mean, std, generator):
    """normal with a tensor mean and/or std: standard normal draws, scaled and shifted (a
    random function: under vmap the std check reads the whole batch)."""
    m = mean if isinstance(mean, Tensor) else None
    s = std if isinstance(std, Tensor) else None
    _check_normal_std(std)
    ref = m if m is not None else s
    if ref.dtype.is_complex and _grad_state.enabled and (m is not None and m.requires_grad or
                                                          s is not None and s.requires_grad):
        # PyTorch's normal overloads with a tensor are autograd ops off the complex allowlist
        raise RuntimeError("normal does not support automatic differentiation for outputs with "
                           "complex dtype.")
    if m is None:
        return _normal_float_tensor(float(mean), std, generator)
    return _normal_tensor_tensor(mean, std, generator) if s is not None else \
        _normal_tensor_float(mean, float(std), generator)


_normal_tensor_float = _op("normal.Tensor_float")
_normal_float_tensor = _op("normal.float_Tensor")
_normal_tensor_tensor = _op("normal.Tensor_Tensor")


def _normal_tensors_kernel(mean, std, generator=None):
    """The normal.Tensor_* kernels: standard normal draws in the broadcast shape, scaled and
    shifted. The draws do not depend on mean and std, so (as in PyTorch) their gradient is
    zero: autograd records a NormalBackward node, not the arithmetic's."""
    mean, std = (x.detach() if isinstance(x, Tensor) else x for x in (mean, std))
    ref = mean if isinstance(mean, Tensor) else std
    shape = broadcast_shape(*(x._size for x in (mean, std) if isinstance(x, Tensor)))
    z = _normal_(_empty(shape, ref.dtype, ref.device, False), 0.0, 1.0, generator)
    scaled = z * std   # PyTorch scales and shifts in place: the result keeps mean's dtype
    if scaled.dtype is not ref.dtype:
        scaled = scaled.to(ref.dtype)
    return scaled + mean


def _normal_tensors_meta(mean, std, generator=None):
    ref = mean if isinstance(mean, Tensor) else std
    shape = broadcast_shape(*(x._size for x in (mean, std) if isinstance(x, Tensor)))
    return _meta(shape, ref.dtype, device=ref.device)


for _name in ("normal.Tensor_float", "normal.float_Tensor", "normal.Tensor_Tensor"):
    _impl(_name, "CPU")(_normal_tensors_kernel)
    _impl(_name, "Meta")(_normal_tensors_meta)


@random_function
def _bernoulli_p(input, p, generator):
    """bernoulli(input, p): draws shaped and laid out like `input` (a random function: under
    vmap 'different' fills the batch laid out as the batched input is)."""
    return _bernoulli_(empty_like(input), float(p), generator)


def bernoulli(input, p=None, *, generator=None, out=None):
    if p is not None:
        return _finish(_bernoulli_p(input, p, generator), False, out)
    if out is not None:   # out's own dtype, as bernoulli_(input) into out (PyTorch's bernoulli_out)
        return _bernoulli_inplace(out.resize_(input.shape), input, generator=generator)
    return _finish(_bernoulli(input, generator), False, out)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kw):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


def _legacy_new(self, *args, device=None, **kwargs):
    """Tensor.new, the legacy constructor in self's dtype (a sparse COO tensor's: the sparse
    legacy constructor)."""
    if self.is_sparse:
        return _legacy_new_sparse(self, args, device, kwargs)
    return legacy_construct(self.dtype, device, args, kwargs, self.device, "new")


def _legacy_new_sparse(self, args, device, kwargs):
    """Tensor.new of a sparse COO tensor: no argument (an empty 1-d one), a size, or
    (indices, values[, size]) in self's dtype."""
    if device is not None:
        check_legacy_device(device, self.device, False, "new")
    from .sparse import sparse_coo_tensor
    if not args and not kwargs:
        return _sparse_zeros([0], self.dtype, device, False)
    if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]) and not kwargs:
        return sparse_coo_tensor(*args, dtype=self.dtype, check_invariants=False)
    if args and all(_ap.is_int(a, True) for a in args) or \
            (len(args) == 1 and isinstance(args[0], Size)):
        return _sparse_zeros(_ap.int_list_arg("new", "size", 1, args, 0, True), self.dtype,
                             device, False)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        raise TypeError("SparseTensor.new(sequence) only accepts sizes.  Please use "
                        "torch.sparse_coo_tensor() or construct a strided tensor and convert "
                        "it to sparse via to_sparse.")
    got = ", ".join(_ap.type_name(a) for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of:\n * (*, torch.device device = None)\n * (Tensor indices, "
                    f"Tensor values, *, torch.device device = None)\n * (Tensor indices, Tensor "
                    f"values, tuple of ints size, *, torch.device device = None)\n * (tuple of "
                    f"ints size, *, torch.device device = None)\n")


def legacy_construct(dtype, device, args, kwargs, default_device="cpu", form="constructor"):
    """The legacy constructors (`Tensor.new`, `torch.Tensor(...)` as form "base",
    `torch.FloatTensor(...)`) in `dtype`: no argument is empty; ints (or what stands for one, a
    NumPy int, a 0-d array), a torch.Size or `size=` an uninitialized tensor of that size; a
    sequence a tensor of the data; a tensor that tensor's storage (of `dtype`, except for
    torch.Tensor, which takes any). A device given must be of the default device's type, and
    cannot come with a tensor."""
    if device is None:
        device = default_device
    else:
        check_legacy_device(device, default_device, len(args) == 1 and isinstance(args[0], Tensor),
                            form)
    size = kwargs.pop("size", None)
    if kwargs or (size is not None and args) or (len(args) > 1 and not _ap.is_int(args[0], True)):
        got = ", ".join([_ap.type_name(a) for a in args] +
                        [f"{k}={_ap.type_name(v)}" for k, v in kwargs.items()] +
                        ([f"size={_ap.type_name(size)}"] if size is not None else []))
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                        f"expected one of:\n * (*, torch.device device = None)\n * (torch.Storage "
                        f"storage)\n * (Tensor other)\n * (tuple of ints size, *, torch.device "
                        f"device = None)\n * (object data, *, torch.device device = None)\n")
    if size is not None:
        args = (size,)
    if not args:
        return empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and _is_storage(first):   # a tensor over the storage's memory
        if getattr(first, "dtype", dtype) is not dtype:   # a TypedStorage of another dtype
            name = D.LEGACY_TYPE_NAMES[dtype][:-len("Tensor")]
            other = D.LEGACY_TYPE_NAMES[first.dtype][:-len("Tensor")]
            raise RuntimeError(f"Expected a Storage of type {name} or an UntypedStorage, but got "
                               f"type {other} for argument 1 'storage'")
        return empty(0, dtype=dtype, device=device).set_(first)
    if len(args) == 1 and isinstance(first, Tensor):
        if form != "base" and first.dtype is not dtype:
            raise TypeError(f"new(): expected a tensor of dtype {dtype} (got {first.dtype})")
        # aten::alias itself, below __torch_function__: a differentiable view of the tensor
        # that is a plain Tensor even when `first` is a subclass (as PyTorch's C constructor)
        return _alias_op(first)
    if len(args) == 1 and type(first) is not Size and not _ap.is_int(first, True):
        if size is None:
            return tensor(_legacy_data(first), dtype=dtype, device=device)
    size = _ap.int_list_arg("new", "size", 1, args, 0, True)
    return empty(tuple(size), dtype=dtype, device=device)


def _is_storage(obj):
    """An UntypedStorage, or a TypedStorage (which wraps one)."""
    from .._core.storage import UntypedStorage
    return isinstance(obj, UntypedStorage) or isinstance(getattr(obj, "_untyped_storage", None),
                                                         UntypedStorage)


def _legacy_data(data):
    """The data of a legacy constructor: a sequence of numbers (PySequence_Check's sense)."""
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not hasattr(type(data), "__getitem__") or isinstance(data, dict):
        raise TypeError(f"new(): data must be a sequence (got {_ap.type_name(data)})")
    return data


def _new_zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _finish(_full(_size_args(sizes, size, "new_zeros"), 0,
                         dtype or D.get_default_dtype(), _dev(device)), requires_grad)


def _check_new_keywords(name, kw):
    """The Tensor.new_* methods take layout= and pin_memory= besides their named keywords, and
    nothing else (no out=)."""
    for k in kw:
        if k not in ("layout", "pin_memory"):
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")


def _new_factory(fn, name):
    op = _op(name)
    _impl(op, ("CPU", "Meta"))(
        lambda self, size, dtype=None, layout=None, device=None, pin_memory=None: fn(
            size=size, dtype=dtype or self.dtype, device=device or self.device))

    def method(self, *sizes, size=None, dtype=None, device=None, requires_grad=False, **kw):
        _check_new_keywords(name, kw)
        if size is not None and sizes:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if size is None and not sizes:
            from .codegen import _missing_size
            _missing_size(name, "size")
        if _through_op(self):
            return _finish(op(self, _size_args(sizes, size, name), dtype=dtype,
                              layout=kw.get("layout"), device=device, pin_memory=False),
                           requires_grad)
        dtype, device = dtype or self.dtype, device or self.device
        if fn is empty and self.is_sparse:   # a sparse tensor's new_empty is sparse too
            return _sparse_zeros(_size_args(sizes, size, name), dtype, device, requires_grad)
        out = fn(*sizes, size=size, dtype=dtype, device=device, requires_grad=requires_grad)
        if _vmap_state.levels:   # on a BatchedTensor: one result per example
            out = _vmap_state.RULES["new_like"](self, out, lambda shape: fn(
                *shape, dtype=dtype, device=device, requires_grad=requires_grad))
        return out
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw):
    _check_new_keywords("new_full", kw)
    fill_value = _ap.scalar_arg("new_full", "fill_value", 2, fill_value)
    if _through_op(self):
        return _finish(_op("new_full")(self, _size_args((size,), None, "new_full"), fill_value,
                                       dtype=dtype, layout=kw.get("layout"), device=device,
                                       pin_memory=False), requires_grad)
    dtype, device = dtype or self.dtype, device or self.device
    out = full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)
    if _vmap_state.levels:
        out = _vmap_state.RULES["new_like"](self, out, lambda shape: full(
            shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad))
    return out


@_impl("new_full", ("CPU", "Meta"))
def _new_full_kernel(self, size, fill_value, dtype=None, layout=None, device=None,
                     pin_memory=None):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device)


def _uniform_method(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)   # PyTorch's keyword is `from`, a Python keyword
    for k in kw:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{k}'")
    return _uniform_(self, float(from_), float(to), generator)


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
        check_inplace_draw(self, p)
        # drawn at p's precision (float64: 53 bits, else 24), written as self's dtype
        return self.copy_(_bernoulli(p.expand(self._size), generator))
    return _bernoulli_(self, float(p), generator)


def _triangle_indices(row, col, offset, lower, dtype, device):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype is not None and dtype not in (D.int32, D.int64):
        name = "tril_indices" if lower else "triu_indices"
        raise NotImplementedError(f"\"{name}\" not implemented for '{_type(dtype)}'")
    rows, cols = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype or D.int64, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    row, col = _ap.int_arg("tril_indices", "row", 1, row), _ap.int_arg("tril_indices", "col", 2, col)
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    row, col = _ap.int_arg("triu_indices", "row", 1, row), _ap.int_arg("triu_indices", "col", 2, col)
    return _triangle_indices(row, col, offset, False, dtype, device)


# ---- the dtype argument -----------------------------------------------------------------------
# PyTorch's argument parser refuses a `dtype=` that is no torch.dtype before the factory runs:
# a function with one signature names the argument, one with several overloads lists the
# arguments it got (its "invalid combination" message).
_ONE_SIGNATURE = ("empty", "empty_strided", "zeros", "ones", "full", "tensor", "as_tensor",
                  "asarray", "empty_like", "zeros_like", "ones_like", "full_like",
                  "scalar_tensor", "tril_indices", "triu_indices")
_OVERLOADED = ("arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
               "normal", "rand_like", "randn_like", "randint_like")


def _type_names(args, kwargs):
    """How PyTorch's parser describes the arguments of a call it could not match."""
    given = [type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args]
    return ", ".join(given + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])


def _checks_dtype(fn, name, overloaded):
    def checked(*args, **kwargs):
        dt = kwargs.get("dtype")
        if dt is not None and not isinstance(dt, D.dtype):
            if isinstance(dt, type) and dt in D.PYTHON_TYPE_DTYPES:  # dtype=float is float64
                kwargs["dtype"] = D.PYTHON_TYPE_DTYPES[dt]
                return fn(*args, **kwargs)
            if overloaded:
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"({_type_names(args, kwargs)}), but expected a torch.dtype "
                                f"for 'dtype'")
            raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not "
                            f"{type(dt).__name__}")
        return fn(*args, **kwargs)
    checked.__name__ = checked.__qualname__ = name
    checked.__doc__, checked.__wrapped__ = fn.__doc__, fn
    return checked


for _name in _ONE_SIGNATURE + _OVERLOADED:
    globals()[_name] = _checks_dtype(globals()[_name], _name, _name in _OVERLOADED)


METHODS = dict(
    new=_legacy_new, new_tensor=_checks_dtype(_new_tensor, "new_tensor", False),
    new_empty=_checks_dtype(_new_factory(empty, "new_empty"), "new_empty", False),
    new_zeros=_checks_dtype(_new_factory(_new_zeros, "new_zeros"), "new_zeros", False),
    new_ones=_checks_dtype(_new_factory(ones, "new_ones"), "new_ones", False),
    new_full=_checks_dtype(_new_full, "new_full", False),
    uniform_=_uniform_method, normal_=_normal_method, random_=_random_method,
    bernoulli=_bernoulli_method, bernoulli_=_bernoulli_inplace,
)

def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """torch.from_file: a 1-D CPU tensor of `size` elements over a memory-mapped file (with
    `shared`, writes reach the file and every other mapping of it)."""
    from .._core.storage import UntypedStorage
    dtype = D.get_default_dtype() if dtype is None else dtype
    if device is not None and _dev(device).type != "cpu":
        raise RuntimeError(f"from_file: expected a CPU device, got {device}")
    storage = UntypedStorage.from_file(filename, bool(shared), int(size) * dtype.itemsize)
    return _finish(empty(0, dtype=dtype).set_(storage), requires_grad)


__all__ = ["arange", "as_tensor", "asarray", "bernoulli", "empty", "empty_like", "empty_strided",
           "eye", "from_dlpack", "from_file", "from_numpy", "full", "full_like", "linspace", "logspace",
           "normal", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like", "randn",
           "randn_like", "randperm", "scalar_tensor", "tensor", "tril_indices", "triu_indices",
           "zeros", "zeros_like"]
