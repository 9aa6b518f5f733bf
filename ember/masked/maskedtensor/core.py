"""MaskedTensor: `data` and a bool `mask` of the same shape; elements where the mask is False are
unspecified (printed `--`). Functions called on it compute on the data and carry the mask
(_ops_refs.py says which, and how the masks combine).

Note [MaskedTensor through __torch_function__]
PyTorch builds MaskedTensor as a wrapper subclass and implements its ops in
`__torch_dispatch__`, at the level of aten ops, so autograd records the graph on the wrapper
itself and the gradients flowing back are MaskedTensors. ember has no Python dispatch key, so
its MaskedTensor implements the same table at the level of PyTorch's public functions, in
`__torch_function__`: a unary op applies to the data and keeps the mask, a binary op needs equal
masks, a reduction reduces the data with torch.masked's rule and masks the result where any
element was specified, shape functions apply to data and mask alike. Autograd runs on the data:
a MaskedTensor made with requires_grad=True holds a leaf as its data; `.grad` is that leaf's
gradient with the mask, `.backward()` backpropagates from the data. Reductions first replace
the masked-out elements by the reduction's identity in an autograd Function whose backward lets
the gradient through unmasked (torch.masked's `Combine`), so the gradients equal PyTorch's at
every element, masked-out ones included. What differs from PyTorch: a gradient's mask is its
leaf's mask (PyTorch's is narrowed by the backward of shape functions: the gradient of
`mt.transpose(0, 1)[1].sum()` is specified only in that column; its values there are the
same); the warning for an
unsupported function names the public function (`cumsum`) where PyTorch names the aten op
(`aten.cumsum.default`); the TypeError that follows names the aten op's default overload as
PyTorch's does for the common call (`mt.max()`: 'torch._ops.aten.max.default').
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ..._core.tensor import Tensor
from ..._core import dtype as D
from ..._core.layout import strided

__all__ = ["MaskedTensor", "is_masked_tensor"]

_SUPPORTED_DTYPES = (D.float16, D.float32, D.float64, D.bool, D.int8, D.int16, D.int32, D.int64)

# functions the default path runs on the wrapper itself: metadata, shared with the data
_METADATA = {"size", "dim", "ndimension", "numel", "nelement", "element_size",
             "is_floating_point", "is_complex", "is_signed", "get_device", "__len__", "shape",
             "ndim", "device", "layout", "is_cpu", "is_meta", "is_cuda", "is_quantized",
             "itemsize", "nbytes", "__get__", "__format__", "__reduce_ex__", "is_contiguous"}


def is_masked_tensor(obj, /):
    """Whether obj is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def _tensors_match(a, b, exact=True, rtol=1e-05, atol=1e-08):
    import ember
    if is_masked_tensor(a) or is_masked_tensor(b):
        raise ValueError("Neither `a` nor `b` can be a MaskedTensor.")
    if a.layout != b.layout:
        raise ValueError(f"`a` and `b` must have the same layout. Got {a.layout} and {b.layout}")
    if a.dtype != b.dtype:
        b = b.type(a.dtype)
    if exact:
        return a.dim() == b.dim() and ember.eq(a, b).all().item()
    return a.dim() == b.dim() and ember.allclose(a, b, rtol=rtol, atol=atol)


def _masks_match(a, b):
    if is_masked_tensor(a) and is_masked_tensor(b):
        return _tensors_match(a.get_mask(), b.get_mask(), exact=True)
    return True


def _map_mt_args_kwargs(args, kwargs, map_fn):
    """args and kwargs with each MaskedTensor (also inside lists and tuples) replaced by
    map_fn(it)."""
    def helper(a):
        if is_masked_tensor(a):
            return map_fn(a)
        if isinstance(a, list):
            return [helper(x) for x in a]
        if isinstance(a, tuple):
            return tuple(helper(x) for x in a)
        return a
    return [helper(a) for a in args], {k: helper(v) for k, v in (kwargs or {}).items()}


def _wrap_result(result_data, result_mask):
    if isinstance(result_data, list):
        return [_wrap_result(r, m) for r, m in zip(result_data, result_mask)]
    if isinstance(result_data, tuple):
        return tuple(_wrap_result(r, m) for r, m in zip(result_data, result_mask))
    if isinstance(result_data, Tensor):
        return MaskedTensor._from_values(result_data, result_mask)
    return NotImplemented


def _masked_tensor_str(data, mask, formatter):
    if data.dim() == 1:
        items = [formatter.format(d.item()) if isinstance(d.item(), float) else str(d.item())
                 for d in data]
        hidden = (~mask).tolist()
        width = max(8 if h else len(e) for e, h in zip(items, hidden))
        return "[" + ", ".join("--".rjust(width) if h else e
                               for e, h in zip(items, hidden)) + "]"
    rows = [_masked_tensor_str(d, m, formatter) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + line for line in r.split("\n")) for r in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


def _get_data(a):
    return a._masked_data if is_masked_tensor(a) else a


def _maybe_get_mask(a):
    return a.get_mask() if is_masked_tensor(a) else None


class MaskedTensor(Tensor):
    """MaskedTensor(data, mask, requires_grad=False)"""

    def __new__(cls, data, mask, requires_grad=False):
        if is_masked_tensor(data) or not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if is_masked_tensor(mask) or not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        warnings.warn("The PyTorch API of MaskedTensors is in prototype stage and will change in "
                      "the near future. Please open a Github issue for features requests and "
                      "see our documentation on the torch.masked module for further "
                      "information about the project.", UserWarning, stacklevel=_user_stacklevel())
        if data.requires_grad:
            warnings.warn("It is not recommended to create a MaskedTensor with a tensor that "
                          "requires_grad. To avoid this, you can use data.detach().clone()",
                          UserWarning, stacklevel=_user_stacklevel())
        # the wrapper shares the data's metadata (shape, dtype, device); every function that
        # reads values goes through __torch_function__ to `_masked_data`
        return Tensor._make_subclass(cls, data.detach())

    def __init__(self, data, mask, requires_grad=False):
        self._preprocess_data(data, mask)
        self._validate_members()
        if requires_grad:
            if not (data.dtype.is_floating_point or data.dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                                   "gradients")
            self._masked_data.requires_grad_()

    def _preprocess_data(self, data, mask):
        if data.layout != mask.layout:
            raise TypeError("data and mask must have the same layout.")
        # awkward names, so as not to shadow Tensor's own attributes (`data`); masked_tensor()
        # is not differentiable: the data's history stays behind
        self._masked_data = data.detach().clone()
        self._masked_mask = mask.clone()

    def _validate_members(self):
        data, mask = self._masked_data, self.get_mask()
        if type(data) is not type(mask):
            raise TypeError(f"data and mask must have the same type. Got {type(data)} and "
                            f"{type(mask)}")
        if data.layout is not strided:
            raise TypeError(f"data layout of {data.layout} is not supported.")
        if mask.dtype != D.bool:
            raise TypeError("mask must have dtype bool.")
        if data.dtype not in _SUPPORTED_DTYPES:
            raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
        if data.dim() != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if data.size() != mask.size():
            raise ValueError("data.size() must equal mask.size()")

    @staticmethod
    def _from_values(data, mask):
        """A MaskedTensor over `data` itself (no copy), keeping its autograd history: the
        results of ops, whose grad_fn is then the op's node as in PyTorch."""
        result = MaskedTensor.__new__(MaskedTensor, data.detach(), mask)
        result._set_data_mask(data, mask)
        return result

    def _set_data_mask(self, data, mask):
        self._masked_data = data
        self._masked_mask = mask
        self._validate_members()

    def __repr__(self):
        formatter = "{0:8.4f}"
        if self.dim() == 0:
            value = self._masked_data.item()
            text = formatter.format(value) if isinstance(value, float) else str(value)
            if not self.get_mask().item():
                text = "--"
            return f"MaskedTensor({text}, {self.get_mask().item()})"
        s = _masked_tensor_str(self._masked_data.detach(), self.get_mask(), formatter)
        s = "\n".join("  " + line for line in s.split("\n"))
        return "MaskedTensor(\n" + s + "\n)"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ._ops_refs import function_table
        kwargs = kwargs or {}
        impl = function_table().get(func)
        if impl is not None:
            return impl(*args, **kwargs)
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        name = getattr(func, "__name__", repr(func))
        if name in _METADATA:
            return super().__torch_function__(func, types, args, kwargs)
        warnings.warn(f"{name} is not implemented in __torch_function__ for MaskedTensor.\nIf "
                      f"you would like this operator to be supported, please file an issue for "
                      f"a feature request at https://github.com/pytorch/maskedtensor/issues with "
                      f"a minimal reproducible code snippet.\nIn the case that the semantics for "
                      f"the operator are not trivial, it would be appreciated to also include a "
                      f"proposal for the semantics.", stacklevel=_user_stacklevel())
        raise TypeError(f"Multiple dispatch failed for 'torch._ops.aten.{name}.default'; all "
                        f"__torch_dispatch__ handlers returned NotImplemented:\n\n  - tensor "
                        f"subclass {cls!r}\n\nFor more information, try re-running with "
                        f"TORCH_LOGS=not_implemented")

    @classmethod
    def unary(cls, fn, data, mask):
        return MaskedTensor._from_values(fn(data), mask)

    def to_tensor(self, value):
        """The data with the masked-out elements set to value."""
        return self.get_data().masked_fill(~self.get_mask(), value)

    def get_data(self):
        """The data (every element, specified or not), differentiable."""
        data = self._masked_data
        return data.view(data.shape)

    def get_mask(self):
        return self._masked_mask

    def is_sparse_coo(self):
        return False

    def is_sparse_csr(self):
        return False

    @property
    def is_sparse(self):
        return False

    # ---- autograd runs on the data (Note [MaskedTensor through __torch_function__]) ----
    @property
    def requires_grad(self):
        return self._masked_data.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._masked_data.requires_grad = value

    def requires_grad_(self, requires_grad=True):
        self._masked_data.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._masked_data.grad_fn

    @property
    def is_leaf(self):
        return self._masked_data.is_leaf

    @property
    def grad(self):
        grad = self._masked_data.grad
        if grad is None:
            return None
        cached = self.__dict__.get("_grad_wrapper")
        if cached is None or cached._masked_data is not grad:   # `mt.grad is mt.grad`
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                cached = MaskedTensor._from_values(grad, self.get_mask())
            self.__dict__["_grad_wrapper"] = cached
        return cached

    @grad.setter
    def grad(self, value):
        self._masked_data.grad = None if value is None else _get_data(value)

    def retain_grad(self):
        self._masked_data.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if gradient is not None:
            gradient = _get_data(gradient)
        if inputs is not None:
            inputs = [_get_data(i) for i in inputs]
        self._masked_data.backward(gradient, retain_graph, create_graph, inputs)

    def detach(self):
        return MaskedTensor(self._masked_data.detach(), self.get_mask())
