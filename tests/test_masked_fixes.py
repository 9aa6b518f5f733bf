"""Fixes found by running PyTorch's test/test_masked.py and test/test_maskedtensor.py on ember:
torch.masked's private helpers those tests call, sparse masks on strided inputs, torch.ops
packets meeting `__torch_function__` (and alias names), MaskedTensor's aten-level op lists, its
constructor's autograd and errors. Each case runs the same program on ember and on torch."""
import math
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

X = [[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.0], [0.0, 1.5, 2.5, -1.0]]
M = [[True, False, True, False], [False, False, False, False], [True, True, False, True]]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _same(e, t):
    assert str(e.dtype) == str(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op,args,kwargs", [
    ("sum", (1,), {}), ("amax", (), {"keepdim": True}), ("norm", (2.0, 1), {}),
    ("softmax", (1,), {}), ("var", ((0, 1),), {"keepdim": True}), ("median", (0,), {})])
def test_output_mask(op, args, kwargs):
    def run(lib):
        x, m = lib.tensor(X), lib.tensor(M)
        return lib.masked._output_mask(getattr(lib.masked, op), x, *args, mask=m, **kwargs)
    _same(run(ember), run(torch))


def test_output_mask_rejects_other_functions():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="_output_mask expected masked operation"):
            lib.masked._output_mask(lib.exp, lib.tensor(X), mask=lib.tensor(M))


def test_canonical_dim_and_combine_input_and_mask():
    for lib in (torch, ember):
        assert lib.masked._canonical_dim(-1, 3) == (2,)
        assert lib.masked._canonical_dim((2, 0), 3) == (0, 2)
        assert lib.masked._canonical_dim((), 2) == (0, 1)
        with pytest.raises(RuntimeError, match="appears multiple times"):
            lib.masked._canonical_dim((1, 1), 3)
    for op in ("amax", "amin", "prod", "sum"):
        _same(ember.masked._combine_input_and_mask(getattr(ember.masked, op), ember.tensor(X),
                                                   ember.tensor(M)),
              torch.masked._combine_input_and_mask(getattr(torch.masked, op), torch.tensor(X),
                                                   torch.tensor(M)))


def test_where_strided():
    def run(lib):
        return lib.masked._where(lib.tensor(M), lib.tensor(X), lib.tensor(7.0))
    _same(run(ember), run(torch))


@pytest.mark.parametrize("op", ["sum", "amax", "mean", "prod", "softmax"])
def test_sparse_mask_on_strided_input(op):
    """A sparse COO mask reads as its dense form (PyTorch converts it to the input's layout)."""
    def run(lib):
        mask = lib.tensor(M).to_sparse()
        args = (1,) if op == "softmax" else ()
        r = getattr(lib.masked, op)(lib.tensor(X), *args, mask=mask)
        if op != "softmax":
            return r
        return lib.where(lib.tensor(M), r, 0.0)   # NaN in the fully masked-out row
    _same(run(ember), run(torch))


def test_normalize_of_0d_input():
    for p in (math.inf, 2.0):
        _same(ember.nn.functional.normalize(ember.tensor(-3.25), p, 0),
              torch.nn.functional.normalize(torch.tensor(-3.25), p, 0))


def _recording_subclass(lib):
    seen = []

    class Recording(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", None))
            return super().__torch_function__(func, types, args, kwargs or {})
    return Recording, seen


def test_ops_packet_meets_torch_function():
    results = {}
    for lib in (torch, ember):
        cls, seen = _recording_subclass(lib)
        x = lib.tensor([-1.0, 2.0]).as_subclass(cls)
        r = lib.ops.aten.abs(x)
        r2 = lib.ops.aten.clamp(x, min=0.0)
        results[lib.__name__] = (seen, type(r).__name__, r2.tolist())
    assert results["ember"] == results["torch"]
    assert results["torch"][0] == ["abs", "clamp", "tolist"]
    assert str(ember.ops.aten.abs) == str(torch.ops.aten.abs) == "aten.abs"
    assert repr(ember.ops.aten.abs) == repr(torch.ops.aten.abs)


def test_ops_alias_packets():
    x = [0.25, -0.5]
    for name in ("arccos", "absolute", "negative", "divide", "arcsinh_", "clip"):
        e, t = getattr(ember.ops.aten, name), getattr(torch.ops.aten, name)
        assert e.__name__ == t.__name__ == name
        assert e is getattr(ember.ops.aten, name)
        extra = {"divide": (2.0,), "clip": (-0.3, 0.3)}.get(name, ())
        args_e = (ember.tensor(x),) + tuple(ember.tensor(v) for v in extra)
        args_t = (torch.tensor(x),) + tuple(torch.tensor(v) for v in extra)
        _same(e(*args_e), t(*args_t))
    with pytest.raises(AttributeError):
        ember.ops.aten.no_such_alias


def _mt(lib, data=X, mask=M, requires_grad=False):
    return lib.masked.masked_tensor(lib.tensor(data), lib.tensor(mask), requires_grad)


def _same_masked(e, t):
    mask = t.get_mask().numpy()
    np.testing.assert_array_equal(e.get_mask().numpy(), mask)
    np.testing.assert_allclose(np.where(mask, e.get_data().detach().numpy(), 0),
                               np.where(mask, t.get_data().detach().numpy(), 0), rtol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("exp", {}), ("clamp", {"min": -0.5, "max": 0.5}),
                                         ("clip_", {"min": -0.5, "max": 0.5}),
                                         ("arctan", {}), ("neg_", {}), ("abs_", {})])
def test_maskedtensor_aten_unary(name, kwargs):
    from ember.masked.maskedtensor.unary import NATIVE_INPLACE_UNARY_FNS, NATIVE_UNARY_FNS
    fns = NATIVE_INPLACE_UNARY_FNS if name.endswith("_") else NATIVE_UNARY_FNS
    assert name in [f.__name__ for f in fns]
    _same_masked(getattr(ember.ops.aten, name)(_mt(ember), **kwargs),
                 getattr(torch.ops.aten, name)(_mt(torch), **kwargs))


@pytest.mark.parametrize("name", ["add", "mul_", "subtract", "lt"])
def test_maskedtensor_aten_binary(name):
    from ember.masked.maskedtensor.binary import NATIVE_BINARY_FNS, NATIVE_INPLACE_BINARY_FNS
    assert name in [f.__name__ for f in NATIVE_BINARY_FNS + NATIVE_INPLACE_BINARY_FNS]
    y = [[2.0] * 4] * 3

    def run(lib):
        return getattr(lib.ops.aten, name)(_mt(lib), _mt(lib, data=y))
    _same_masked(run(ember), run(torch))
    for lib in (torch, ember):
        other = _mt(lib, data=y, mask=[[True] * 4] * 3)
        with pytest.raises(ValueError, match="^Input masks must match. If you need support"):
            getattr(lib.ops.aten, name)(_mt(lib), other)


def test_maskedtensor_unsupported_function_error():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=r"Multiple dispatch failed for "
                                            r"'torch\._ops\.aten\.max\.default'"):
            _mt(lib).max()


def test_maskedtensor_of_integer_data_cannot_require_grad():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex "
                                               "dtype can require gradients"):
            _mt(lib, data=[[1, 2]], mask=[[True, False]], requires_grad=True)


def test_masked_tensor_leaves_the_data_history_behind():
    """masked_tensor() is not differentiable: from data that requires grad, the MaskedTensor
    is a fresh leaf (requires_grad=True) or no graph at all (False)."""
    for lib in (torch, ember):
        d = lib.tensor(X, requires_grad=True)
        mt = lib.masked.masked_tensor(d, lib.tensor(M), requires_grad=False)
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            mt.mean().backward()
    grads = []
    for lib in (torch, ember):
        d = lib.tensor(X, requires_grad=True)
        mt = lib.masked.masked_tensor(d, lib.tensor(M), requires_grad=True)
        mt.mean().backward()
        assert d.grad is None
        grads.append(mt.grad)
    _same_masked(grads[1], grads[0])
