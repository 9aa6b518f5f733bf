"""Tensor indexing: how `x[key]` and `x[key] = value` become ops (PyTorch's applySlicing).

The key is walked left to right. Integers become `select` (a view, the dim disappears), slices
become `slice` (a view), None becomes `unsqueeze`, Ellipsis skips the dims nobody named.
Tensors, lists and bool masks are *advanced* indices: they are collected, one per dim, and
applied last by the `index` op (a copy) -- or by `index_put_` when assigning.
"""
import operator
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel


import numpy as np

from .._core import dtype as D
from .._core import torch_function as _tf
from .._dispatch.dispatcher import lookup
from .._core.tensor import Tensor
from .arg_parser import type_name as _type_name

_select = lookup("select.int")
_slice = lookup("slice.Tensor")
_unsqueeze = lookup("unsqueeze")
_alias = lookup("alias")
_index = lookup("index.Tensor")
_index_put_ = lookup("index_put_")
_copy_ = lookup("copy_")
_fill_ = lookup("fill_.Scalar")


def _as_index_tensor(k):
    """A list or array used as an index becomes a bool mask or an int64 index tensor (floats
    are truncated, as PyTorch's indexing_tensor_from_data does)."""
    from .factories import tensor
    if isinstance(k, Tensor):
        return k
    t = tensor(k)
    if t.dtype is D.bool or t.dtype is D.int64:
        return t
    if isinstance(k, np.ndarray) and t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t.to(D.int64)


def _treat_as_tuple(key):
    """PyTorch (and old NumPy) read `x[[0, slice(None)]]` as `x[0, :]`: a short list holding
    a sequence, slice, Ellipsis, None or tensor is a tuple of indices (deprecated)."""
    if type(key) is not list or len(key) >= 32:
        return False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (list, tuple, slice, Tensor, np.ndarray)):
            warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                          "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of "
                          "x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
                          "x[torch.tensor(seq)], which will result either in an error or a "
                          "different result", UserWarning, stacklevel=_user_stacklevel())
            return True
    return False


def _is_mask(t):
    return t.dtype is D.bool or t.dtype is D.uint8


def _specified_dims(key):
    """How many dims of the tensor the key names (None, Ellipsis and bools name none)."""
    n = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, bool):
            continue
        if isinstance(k, Tensor) and _is_mask(k):
            n += k.dim()
        else:
            n += 1
    return n


_INT64_MAX = 9223372036854775807


def _whole(k, size):
    """Whether slice `k` (step 1) keeps a dim of `size` whole."""
    start, stop = k.start, k.stop
    return (start is None or type(start) is int and start == 0) and \
        (stop is None or type(stop) is int and stop >= size)


# [True] while jit.trace records: slices keeping a whole dim are recorded then, as PyTorch's
# tracer keeps them (the trace may be run at other sizes); ember/jit/_trace.py sets it
tracing_slices = [False]


def apply_slicing(self, key):
    """(view after basic indexing, list of advanced indices aligned to its dims or None)."""
    skip_whole = True    # a lone slice (`x[:]`) is a slice op in PyTorch even when whole
    if not isinstance(key, tuple):
        skip_whole = type(key) is not slice
        key = tuple(key) if _treat_as_tuple(key) else (key,)
    specified = _specified_dims(key)
    if specified > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    result = self
    dim = 0
    advanced = []
    for here, k in enumerate(key):  # PyTorch's bounds message names k's position in the key
        if k is None:
            result = _unsqueeze(result, dim)
            dim += 1
        elif k is Ellipsis:
            dim += self.dim() - specified
        elif isinstance(k, bool):
            # a bool adds a dim of size 1 indexed by [0] (True) or [] (False): a copy
            result = _unsqueeze(result, dim)
            advanced.append((dim, _bool_index(k, self._device)))
            dim += 1
        elif isinstance(k, (int, np.integer)):
            result = _select_index(result, dim, int(k), here)
        elif isinstance(k, slice):
            step = 1 if k.step is None else _slice_index(k.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            if step == 1 and skip_whole and _whole(k, result._size[dim]) and \
                    not tracing_slices[0]:
                dim += 1     # the whole dim: no slice op, as PyTorch's indexing skips it
                continue     # (except while jit.trace records, as PyTorch's does)
            # the bounds as PyTorch's indexing passes them: 0 and INT64_MAX for the open ends
            start = 0 if k.start is None else _slice_index(k.start)
            result = _slice(result, dim, start,
                            _INT64_MAX if k.stop is None else _slice_index(k.stop), step)
            dim += 1
        else:
            if not isinstance(k, _SEQUENCES):
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                                 f"or byte Variables are valid indices (got {_type_name(k)})")
            t = _as_index_tensor(k)
            if t.dim() == 0 and not (t.dtype.is_floating_point or t.dtype.is_complex):
                if not _is_mask(t):
                    result = _select_index(result, dim, int(t.item()), here)
                    continue
                result = _unsqueeze(result, dim)
                advanced.append((dim, _bool_index(bool(t.item()), self._device)))
                dim += 1
                continue
            if t.dtype not in _INDEX_DTYPES:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            advanced.append((dim, t))
            dim += t.dim() if _is_mask(t) else 1
    if not advanced:
        return result, None
    # advanced indices, one entry per dim of `result` (None = whole dim); a k-dim bool mask
    # is one entry that covers k dims
    indices = []
    covered = 0
    for d, t in advanced:
        while covered < d:
            indices.append(None)
            covered += 1
        indices.append(t)
        covered += t.dim() if _is_mask(t) else 1
    if self._lazy is not None:  # CPU indices go to the tensor's device, as PyTorch moves them
        indices = [t if t is None or t._lazy is not None else t.to(self._device) for t in indices]
    return result, indices


_INDEX_DTYPES = (D.int64, D.int32, D.uint8, D.bool)
_SEQUENCES = (Tensor, np.ndarray, list, tuple, str, range)  # what becomes an index tensor


def _bool_index(value, device):
    from .factories import tensor
    return tensor([0] if value else [], dtype=D.int64, device=device)


def _select_index(t, dim, k, src_dim=0):
    """An integer index: `select`, with the bounds message of PyTorch's indexing, naming the
    key position as "dimension" (select's own message names select() and the whole size)."""
    if not t._size:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    size = t._size[dim]
    if not -size <= k < size:
        raise IndexError(f"index {k} is out of bounds for dimension {src_dim} with size {size}")
    return _select(t, dim, k)


def _slice_index(x):
    """A slice bound as PyTorch reads it: an int or anything with __index__ (a float is a
    TypeError, not truncated)."""
    try:
        return operator.index(x)
    except TypeError:
        if isinstance(x, Tensor):
            raise   # the tensor's own message
        raise TypeError("slice indices must be integers or None or have an __index__ "
                        "method") from None


def _opt_int(x):
    return None if x is None else int(x)


_INDEX_LISTS = (tuple, list)


def _overloaded_in_key(self, key):
    """The `__torch_function__` overrides among a tuple or list index's members (called for a
    tuple or list holding something other than ints, slices, None, ...): PyTorch's indexing
    looks into the index for them, where the binding's check sees only a tuple."""
    return _tf.overloaded_args((self, key), skip_exact=Tensor)


def getitem(self, key):
    if type(key) is int:  # the common case, kept short
        return _select_index(self, 0, key)
    if type(key) in _INDEX_LISTS and not _tf.FAST_ARGS.issuperset(map(type, key)):
        overloaded = _overloaded_in_key(self, key)
        if overloaded:
            return _tf.handle_torch_function(Tensor.__getitem__, (self, key), self, key,
                                             overloaded=overloaded, c_level=True)
    result, indices = apply_slicing(self, key)
    if indices is None:
        return _alias(result) if result is self else result
    return _index(result, indices)


def setitem(self, key, value):
    if type(key) in _INDEX_LISTS and not _tf.FAST_ARGS.issuperset(map(type, key)):
        overloaded = _overloaded_in_key(self, key)
        if overloaded:
            return _tf.handle_torch_function(Tensor.__setitem__, (self, key, value), self, key,
                                             value, overloaded=overloaded, c_level=True)
    is_tensor = isinstance(value, Tensor)
    if isinstance(value, np.integer):   # PyTorch's parser reads a NumPy int as an int
        value = int(value)
    elif not is_tensor and not isinstance(value, (bool, int, float, complex)):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else \
            f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"can't assign a {name} to a {self.type()}")
    given = value
    if is_tensor and value.dim() and value._size[0] == 1:
        value = _strip_leading_ones(value)
    result, indices = apply_slicing(self, key)
    if indices is None:
        if is_tensor:  # PyTorch's copy_to: a value of another shape is expanded first (a
            # value of the slice's own shape is copied as given: `s[1::2] *= -1` writes a view
            # onto itself, which is allowed only when the two have the same strides)
            if given._size == result._size:
                value = given
            elif value._size != result._size:
                if not value.dim() and value._np is not None and result._np is not None and \
                        np.may_share_memory(value._np, result._np):
                    # PyTorch fills with a 0-d value (x[1::2] *= -1 strips x[1::2] to 0-d):
                    # its number is read before the write, so their memory may overlap
                    value = value.clone()
                value = value.expand(result._size)
            _copy_(result, value)
        else:
            _fill_(result, value)
        return
    if not is_tensor:
        from .factories import scalar_tensor
        value = scalar_tensor(value, dtype=self.dtype, device=self.device)
    _index_put_(result, indices, value, False)


def delitem(self, key):
    raise TypeError("Tensor does not support deleting items")


def _strip_leading_ones(value):
    """PyTorch drops a value's leading size-1 dims before broadcasting it into x[key]."""
    size = value._size
    k = 0
    while k < len(size) and size[k] == 1:
        k += 1
    return value.view(size[k:])
