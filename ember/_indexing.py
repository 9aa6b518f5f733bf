"""Tensor indexing: how `x[key]` and `x[key] = value` become ops (PyTorch's applySlicing).

The key is walked left to right. Integers become `select` (a view, the dim disappears), slices
become `slice` (a view), None becomes `unsqueeze`, Ellipsis skips the dims nobody named.
Tensors, lists and bool masks are *advanced* indices: they are collected, one per dim, and
applied last by the `index` op (a copy) -- or by `index_put_` when assigning.
"""
import numpy as np

from . import _dtype as D
from ._dispatcher import lookup
from ._tensor import Tensor

_select = lookup("select.int")
_slice = lookup("slice.Tensor")
_unsqueeze = lookup("unsqueeze")
_alias = lookup("alias")
_index = lookup("index.Tensor")
_index_put_ = lookup("index_put_")
_copy_ = lookup("copy_")
_fill_ = lookup("fill_.Scalar")


def _as_index_tensor(k):
    from ._python_bindings import tensor
    if isinstance(k, Tensor):
        return k
    if isinstance(k, np.ndarray):
        return tensor(k)
    t = tensor(k)
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _specified_dims(key):
    n = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, bool):
            continue
        if isinstance(k, Tensor) and k.dtype in (D.bool, D.uint8):
            n += max(k.dim(), 1) if k.dim() else 0
        else:
            n += 1
    return n


def apply_slicing(self, key):
    """(view after basic indexing, list of advanced indices aligned to its dims or None)."""
    if not isinstance(key, tuple):
        key = (key,)
    if key.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    specified = _specified_dims(key)
    if specified > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    result = self
    dim = 0
    advanced = []
    for k in key:
        if k is None:
            result = _unsqueeze(result, dim)
            dim += 1
        elif k is Ellipsis:
            dim += self.dim() - specified
        elif isinstance(k, bool):
            result = _unsqueeze(result, dim)
            if not k:
                result = _slice(result, dim, 0, 0, 1)
            dim += 1
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k.dim() == 0 and
                                                  not k.dtype.is_floating_point and
                                                  k.dtype not in (D.bool, D.uint8)):
            result = _select(result, dim, int(k))
        elif isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            step = 1 if step is None else _int(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            result = _slice(result, dim, _opt_int(start), _opt_int(stop), step)
            dim += 1
        elif isinstance(k, (Tensor, list, tuple, np.ndarray)):
            t = _as_index_tensor(k)
            if t.dtype in (D.bool, D.uint8) and t.dim() == 0:
                result = _unsqueeze(result, dim)
                advanced.append((dim, _as_index_tensor([bool(t.item())])))
                dim += 1
                continue
            advanced.append((dim, t))
            dim += t.dim() if t.dtype in (D.bool, D.uint8) else 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got "
                             f"{type(k).__name__})")
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
        covered += t.dim() if t.dtype in (D.bool, D.uint8) else 1
    return result, indices


def _int(x):
    return int(x)


def _opt_int(x):
    return None if x is None else int(x)


def getitem(self, key):
    if type(key) is int:  # the common case, kept short
        return _select(self, 0, key)
    result, indices = apply_slicing(self, key)
    if indices is None:
        return _alias(result) if result is self else result
    return _index(result, indices)


def setitem(self, key, value):
    result, indices = apply_slicing(self, key)
    if indices is None:
        if isinstance(value, Tensor):
            _copy_(result, value)
        else:
            _fill_(result, value)
        return
    if not isinstance(value, Tensor):
        from ._python_bindings import tensor
        value = tensor(value, dtype=self.dtype, device=self.device)
    _index_put_(result, indices, value, False)
