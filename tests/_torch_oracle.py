"""Run one expression in ember and in torch and compare what comes out (the tests' oracle).

`check(fn, *arrays)` builds an ember tensor and a torch tensor from each NumPy array, calls
`fn(lib, *tensors)` with `lib` = ember and then torch, and compares the results: values,
dtype, shape (and for tensors also strides when `strides=True`), then backpropagates a fixed
weighted sum of the float outputs and compares the gradients of every float input.
`same_error(fn)` asserts fn(lib) raises the same type and message in both.
`check_raises(fn, *arrays)` asserts both raise, and that ember's exception is an instance of
the builtin class torch raised. `check_meta(fn, *shapes)` runs `fn` on meta tensors in both and
compares shape, dtype, stride and storage offset.
"""
import numpy as np
import pytest
import torch

import ember


def to_numpy(x):
    """A tensor of either library (or a NumPy array) as a float64/int/bool NumPy array."""
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype is torch.bfloat16:
            x = x.float()
        return x.numpy()
    if isinstance(x, ember.Tensor):
        x = x.detach()
        if x.dtype is ember.bfloat16:
            x = x.float()
        return x.numpy()
    return np.asarray(x)


def assert_same(e, t, *, atol=1e-6, rtol=1e-5, strides=False, path="out"):
    """ember value `e` equals torch value `t`: tensors, sequences, Sizes, dtypes, numbers."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{path}: expected a Tensor, got {type(e)}"
        assert str(e.dtype) == str(t.dtype), f"{path}: dtype {e.dtype} != {t.dtype}"
        assert tuple(e.shape) == tuple(t.shape), f"{path}: shape {e.shape} != {t.shape}"
        if strides:
            assert e.stride() == t.stride(), f"{path}: stride {e.stride()} != {t.stride()}"
            assert e.storage_offset() == t.storage_offset(), \
                f"{path}: storage_offset {e.storage_offset()} != {t.storage_offset()}"
        if t.device.type == "meta":
            assert e.device.type == "meta", f"{path}: device {e.device} is not meta"
            return
        np.testing.assert_allclose(to_numpy(e), to_numpy(t), atol=atol, rtol=rtol,
                                   err_msg=path, equal_nan=True)
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)), f"{path}: expected a sequence, got {type(e)}"
        assert len(e) == len(t), f"{path}: length {len(e)} != {len(t)}"
        for i, (a, b) in enumerate(zip(e, t)):
            assert_same(a, b, atol=atol, rtol=rtol, strides=strides, path=f"{path}[{i}]")
    elif isinstance(t, torch.dtype):
        assert str(e) == str(t), f"{path}: {e} != {t}"
    elif isinstance(t, float):
        assert isinstance(e, float), f"{path}: {type(e)} is not float"
        np.testing.assert_allclose(e, t, atol=atol, rtol=rtol, err_msg=path)
    else:
        assert type(e) is type(t), f"{path}: {type(e)} != {type(t)}"
        assert e == t, f"{path}: {e!r} != {t!r}"


def _tensors(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _tensors(o)]
    return [out] if isinstance(out, (ember.Tensor, torch.Tensor)) else []


def _weighted_loss(outs):
    """sum_k (out_k * w_k).sum() with fixed, distinct weights so every element counts."""
    loss = 0
    for o in outs:
        if o.requires_grad:
            w = np.cos(np.arange(o.numel(), dtype=np.float64)).reshape(tuple(o.shape)) + 1.5
            lib = torch if isinstance(o, torch.Tensor) else ember
            loss = loss + (o * lib.tensor(w, dtype=o.dtype)).sum()
    return loss


def make(lib, a, requires_grad=False):
    a = np.asarray(a)
    t = lib.tensor(a.copy())
    if requires_grad and a.dtype.kind in "fc":
        t.requires_grad_(True)
    return t


def check(fn, *arrays, grad=True, atol=1e-6, rtol=1e-5, strides=False):
    """fn(lib, *tensors) gives the same values, dtypes, shapes and input grads in both."""
    ins_e = [make(ember, a, grad) for a in arrays]
    ins_t = [make(torch, a, grad) for a in arrays]
    out_e = fn(ember, *ins_e)
    out_t = fn(torch, *ins_t)
    assert_same(out_e, out_t, atol=atol, rtol=rtol, strides=strides)
    if not grad:
        return out_e, out_t
    loss_t = _weighted_loss(_tensors(out_t))
    if isinstance(loss_t, torch.Tensor):
        loss_e = _weighted_loss(_tensors(out_e))
        loss_t.backward()
        loss_e.backward()
        for i, (xe, xt) in enumerate(zip(ins_e, ins_t)):
            if xt.requires_grad:
                if xt.grad is None:
                    assert xe.grad is None, f"input {i}: torch has no grad, ember has one"
                else:
                    assert xe.grad is not None, f"input {i}: ember has no grad"
                    assert_same(xe.grad, xt.grad, atol=atol, rtol=rtol, path=f"grad[{i}]")
    return out_e, out_t


def check_raises(fn, *arrays):
    """fn raises in torch, and raises an exception of the same builtin class in ember."""
    with pytest.raises(Exception) as t_info:
        fn(torch, *[make(torch, a) for a in arrays])
    expected = next(c for c in type(t_info.value).__mro__ if c.__module__ == "builtins")
    with pytest.raises(expected):
        fn(ember, *[make(ember, a) for a in arrays])


def error_of(lib, fn):
    """(exception type name, message) of fn(lib), which must raise."""
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


def same_error(fn):
    """fn(lib) raises the same exception type with the same message in ember and torch;
    returns (type name, message)."""
    ours, theirs = error_of(ember, fn), error_of(torch, fn)
    assert ours == theirs
    return ours


def meta_pair(shape, dtype="float32"):
    return (ember.empty(shape, dtype=getattr(ember, dtype), device="meta"),
            torch.empty(shape, dtype=getattr(torch, dtype), device="meta"))


def check_meta(fn, *shapes, dtype="float32"):
    """fn on meta tensors of `shapes` gives torch's shapes, dtypes, strides and offsets."""
    pairs = [meta_pair(s, dtype) for s in shapes]
    out_e = fn(ember, *[p[0] for p in pairs])
    out_t = fn(torch, *[p[1] for p in pairs])
    assert_same(out_e, out_t, strides=True)
    return out_e, out_t
