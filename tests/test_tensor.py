"""Tensor basics against torch: metadata, storage, version counter, NumPy sharing, Python
conversions (item, tolist, len, iteration, bool) and dtype conversions."""
import ml_dtypes
import numpy as np
import pytest
import torch

import ember
from _torch_oracle import check, check_raises


def test_metadata():
    def f(L, x):
        return (x.shape, x.size(), x.size(1), x.size(-1), x.dim(), x.ndim, x.numel(),
                x.nelement(), x.element_size(), x.itemsize, x.nbytes, x.stride(), x.stride(0),
                x.storage_offset(), x.is_contiguous(), x.is_floating_point(), x.is_complex(),
                x.is_leaf, x.requires_grad, x.device.type, x.is_cpu, x.is_meta, len(x),
                x.get_device(), x.is_signed(), x.layout == L.strided)
    check(f, np.zeros((2, 3), np.float32), grad=False)
    check(f, np.zeros((4, 1, 2), np.int16), grad=False)
    assert repr(ember.zeros(2, 3).shape) == "torch.Size([2, 3])"
    assert isinstance(ember.zeros(2).shape, tuple)
    check_raises(lambda L, x: x.size(2), np.zeros((2, 3)))
    check_raises(lambda L, x: x.stride(-3), np.zeros((2, 3)))


def test_size_object():
    for L in (ember, torch):
        s = L.zeros(2, 3, 4).shape
        assert s[1:] == (3, 4) and type(s[1:]) is type(s)
        assert s.numel() == 24
        assert s + (5,) == (2, 3, 4, 5)
        assert L.Size([2, 3]) == (2, 3)


def test_version_counter():
    for L in (ember, torch):
        x = L.ones(3)
        assert x._version == 0
        x.add_(1)
        x.mul_(2)
        assert x._version == 2
        x[0] = 1
        assert x._version == 3
        x.fill_(0)
        x.zero_()
        x.copy_(L.ones(3))
        assert x._version == 6
        y = x.view(3)
        y.sub_(1)
        assert x._version == 7 and y._version == 7
        x + 1
        assert x._version == 7


def test_set_data_keeps_own_version_counter():
    """`a.data = b` (PyTorch's set_data): a shares b's memory, not b's version counter."""
    for L in (ember, torch):
        a, b = L.zeros(3), L.ones(3)
        a.add_(1)
        a.data = b
        b.add_(1)
        assert (a._version, b._version) == (1, 1), L
        a.mul_(2)
        assert (a._version, b._version) == (2, 1), L
        assert a.tolist() == b.tolist() == [4.0, 4.0, 4.0]
        w = L.ones(2, requires_grad=True)
        y = (w * w).sum()
        w.data = L.full((2,), 3.0)   # an optimizer's swap: the graph still backpropagates
        y.backward()
        assert w.grad.tolist() == [6.0, 6.0], L


def test_version_counter_detects_modified_saved_tensor():
    for L in (ember, torch):
        a = L.ones(3, requires_grad=True)
        b = a * 2
        c = b * b
        b.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()


def test_numpy_shares_memory_both_ways():
    for L in (ember, torch):
        x = L.zeros(2, 3)
        a = x.numpy()
        a[0, 1] = 5
        assert x[0, 1].item() == 5
        x[1, 2] = 7
        assert a[1, 2] == 7
        v = x.t()
        assert v.numpy().strides == (4, 12)
        assert np.shares_memory(v.numpy(), a)
        n = np.arange(6, dtype=np.float64).reshape(2, 3)
        t = L.from_numpy(n)
        n[0, 0] = 10
        assert t[0, 0].item() == 10
        t[1, 1] = -1
        assert n[1, 1] == -1
        assert t.dtype == L.float64
        assert L.from_numpy(n[:, ::2]).stride() == (3, 2)
        assert L.from_numpy(n[:, 1:]).storage_offset() == 0


def test_numpy_errors():
    for L in (ember, torch):
        with pytest.raises(RuntimeError):
            L.ones(2, requires_grad=True).numpy()
        assert L.ones(2, requires_grad=True).detach().numpy().tolist() == [1, 1]
        with pytest.raises(TypeError):
            L.from_numpy([1, 2])
        with pytest.raises(ValueError):
            L.from_numpy(np.arange(4)[::-1])
        with pytest.raises(TypeError):
            L.from_numpy(np.array(["a"]))
    assert ember.ones(2, requires_grad=True).numpy(force=True).tolist() == [1, 1]


def test_array_protocol():
    for L in (ember, torch):
        x = L.arange(6).reshape(2, 3)
        a = np.asarray(x)
        assert a.dtype == np.int64 and a.shape == (2, 3)
        assert np.asarray(x, dtype=np.float32).dtype == np.float32
        assert (np.add(x.numpy(), 1) == np.arange(1, 7).reshape(2, 3)).all()


@pytest.mark.parametrize("value", [3.5, -2, True, 1 + 2j])
def test_item(value):
    check(lambda L, x: (x.item(), x.reshape(1, 1).item(), x.tolist()),
          np.array(value), grad=False)


def test_item_types():
    for L in (ember, torch):
        assert type(L.tensor(2).item()) is int
        assert type(L.tensor(2.0).item()) is float
        assert type(L.tensor(True).item()) is bool
        assert type(L.tensor(2, dtype=L.uint8).item()) is int
        assert type(L.tensor(1.5, dtype=L.float16).item()) is float
        assert type(L.tensor(1.5, dtype=L.bfloat16).item()) is float
        assert L.tensor(1.5, dtype=L.bfloat16).item() == 1.5
        with pytest.raises(RuntimeError):
            L.zeros(2).item()
        with pytest.raises(RuntimeError):
            L.zeros(0).item()


def test_tolist():
    def f(L, x):
        return x.tolist(), x[0].tolist(), x[0, 0].tolist(), x.t().tolist(), x[:0].tolist()
    check(f, np.arange(6, dtype=np.float32).reshape(2, 3), grad=False)
    check(f, np.arange(6).reshape(2, 3) % 2 == 0, grad=False)
    check(lambda L, x: x.to(L.bfloat16).tolist(), np.array([1.5, 2.25]), grad=False)


def test_len_iter_bool():
    def f(L, x):
        rows = [r for r in x]
        return len(x), rows, list(x[0]), bool(x[0, 0]), bool(x[0, 1]), int(x[1, 1]), \
            float(x[1, 2]), x[0, 1].__index__() if x.dtype == L.int64 else 0
    check(f, np.arange(6).reshape(2, 3), grad=False)
    check(f, np.arange(6, dtype=np.float32).reshape(2, 3), grad=False)
    check_raises(lambda L, x: len(x), np.array(1.0))
    check_raises(lambda L, x: iter(x), np.array(1.0))
    check_raises(lambda L, x: bool(x), np.zeros(2))
    check_raises(lambda L, x: bool(x), np.zeros(0))
    check_raises(lambda L, x: [1, 2, 3][x], np.array(1.0))
    check_raises(lambda L, x: [1, 2, 3][x], np.array([1, 2]))
    assert [1, 2, 3][ember.tensor(1)] == 2
    for L in (ember, torch):
        assert bool(L.tensor([[0.5]])) and not bool(L.tensor([0]))


def test_format_and_hash():
    for L in (ember, torch):
        assert f"{L.tensor(2.5):.2f}" == "2.50"
        x = L.zeros(2)
        assert len({x, x}) == 1
        assert hash(x) != hash(L.zeros(2))


def test_untyped_storage():
    for L in (ember, torch):
        x = L.arange(6, dtype=L.int32)
        s = x.untyped_storage()
        assert s.nbytes() == 24 and s.size() == 24 and len(s) == 24
        assert s.data_ptr() == x.data_ptr()
        assert x[2:].untyped_storage().data_ptr() == s.data_ptr()
        assert s.element_size() == 1
        assert s.tolist()[:8] == [0, 0, 0, 0, 1, 0, 0, 0]
        c = s.clone()
        assert c.data_ptr() != s.data_ptr() and c.tolist() == s.tolist()
        u = L.UntypedStorage(8)
        assert u.nbytes() == 8
        u.fill_(0)
        assert u.tolist() == [0] * 8


def test_set_and_is_set_to():
    for L in (ember, torch):
        a = L.arange(6.0)
        b = L.zeros(2)
        b.set_(a)
        assert b.is_set_to(a) and b.data_ptr() == a.data_ptr()
        b[0] = 10
        assert a[0].item() == 10
        assert not a[1:].is_set_to(a)


def test_detach_and_data():
    for L in (ember, torch):
        x = L.ones(3, requires_grad=True)
        y = x * 2
        d = y.detach()
        assert not d.requires_grad and d.is_leaf and d.data_ptr() == y.data_ptr()
        d[0] = 5
        assert y[0].item() == 5
        assert y._version == d._version
        assert x.data.requires_grad is False and x.data.data_ptr() == x.data_ptr()
        x.data = L.zeros(3)
        assert x.requires_grad and x.sum().item() == 0


CONVERSIONS = [
    lambda L, x: x.to(L.float64),
    lambda L, x: x.to(L.int32),
    lambda L, x: x.to(dtype=L.int8),
    lambda L, x: x.to("cpu", L.float16),
    lambda L, x: x.to(L.zeros(1, dtype=L.int16)),
    lambda L, x: x.float(),
    lambda L, x: x.double(),
    lambda L, x: x.half(),
    lambda L, x: x.bfloat16(),
    lambda L, x: x.long(),
    lambda L, x: x.int(),
    lambda L, x: x.short(),
    lambda L, x: x.char(),
    lambda L, x: x.byte(),
    lambda L, x: x.bool(),
    lambda L, x: x.type(L.float64),
    lambda L, x: x.type("torch.IntTensor"),
    lambda L, x: x.type(),
    lambda L, x: x.type_as(L.zeros(1, dtype=L.int64)),
    lambda L, x: x.to(L.complex64),
    lambda L, x: x.to(L.complex64).to(L.float32),
    lambda L, x: x.t().to(L.float64).stride(),
    lambda L, x: x[:, ::2].to(L.float64).stride(),
    lambda L, x: x.bfloat16().float(),
    lambda L, x: x.half().bfloat16(),
    lambda L, x: x.cpu(),
]


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("k", range(len(CONVERSIONS)))
@pytest.mark.parametrize("src", [np.array([[-2.7, -0.5, 0.0], [0.5, 1.5, 300.25]], np.float32),
                                 np.array([[-3, 0, 1], [2, 127, 255]], np.int64),
                                 np.array([[True, False, True], [False, False, True]])],
                         ids=["float", "int", "bool"])
def test_conversion(k, src):
    if CONVERSIONS[k](torch, torch.tensor(src)) is NotImplemented:
        return
    check(CONVERSIONS[k], src, grad=False)


def test_conversion_keeps_identity_and_grad():
    for L in (ember, torch):
        x = L.ones(2)
        assert x.to(L.float32) is x and x.float() is x and x.to("cpu") is x
        assert x.to(L.float32, copy=True) is not x
    check(lambda L, x: x.to(L.float64) * x.double(), np.arange(3, dtype=np.float32))
    check(lambda L, x: x.half().float(), np.arange(3, dtype=np.float32), atol=1e-3)


def test_bfloat16_rounding():
    vals = np.array([1.00390625, 1.01171875, 3.14159, -2.71828, 65504.0, 1e-40, 3e38], np.float32)
    check(lambda L, x: x.bfloat16(), vals, grad=False, atol=0, rtol=0)
    check(lambda L, x: x.half(), vals, grad=False, atol=0, rtol=0)
    assert ember.zeros(2, dtype=ember.bfloat16)._np.dtype == ml_dtypes.bfloat16
    with pytest.raises(TypeError, match="unsupported ScalarType BFloat16"):  # as torch's numpy()
        ember.zeros(2, dtype=ember.bfloat16).numpy()
