"""DLPack: ember tensors exchange memory with NumPy and torch without copies, both ways."""
import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "bfloat16"]


def test_from_dlpack_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype == ember.float32 and t.data_ptr() == a.ctypes.data
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1
    assert a[1, 2] == -1


def test_numpy_from_dlpack_of_ember_shares_memory():
    t = ember.arange(6, dtype=ember.int64).reshape(2, 3)
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == np.int64
    t[0, 1] = 100
    assert a[0, 1] == 100
    v = t.t()
    b = np.from_dlpack(v)
    assert b.strides == (8, 24) and np.shares_memory(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("producer,consumer", [(ember, torch), (torch, ember)],
                         ids=["ember_to_torch", "torch_to_ember"])
def test_dlpack_between_ember_and_torch_shares_memory(dtype, producer, consumer):
    a = producer.ones(3, 4, dtype=getattr(producer, dtype))
    b = consumer.from_dlpack(a)
    assert b.dtype == getattr(consumer, dtype) and b.shape == (3, 4)
    assert b.data_ptr() == a.data_ptr()
    if dtype != "bool":
        b[1, 2] = 0
        assert a[1, 2].item() == 0
        a[2, 3] = 0
        assert b[2, 3].item() == 0


def test_views_and_offsets_round_trip():
    base = torch.arange(24.0).reshape(4, 6)
    for t in (base[1:, ::2], base.t(), base[2], base[:, 1:3].t(), base[0, 0], base[:0]):
        e = ember.from_dlpack(t)
        assert e.shape == t.shape and e.stride() == t.stride()
        assert e.tolist() == t.tolist()
        if t.numel():
            assert e.data_ptr() == t.data_ptr()
        back = torch.from_dlpack(e)
        assert back.stride() == t.stride() and torch.equal(back, t)
    e = ember.arange(24.0).reshape(4, 6)[1:, 2:].t()
    t = torch.from_dlpack(e)
    assert t.stride() == e.stride() and t.tolist() == e.tolist()
    assert t.data_ptr() == e.data_ptr()


def test_capsule_and_device():
    e = ember.arange(3.0)
    assert e.__dlpack_device__() == (1, 0)
    cap = e.__dlpack__()
    assert type(cap).__name__ == "PyCapsule"
    t = torch.utils.dlpack.from_dlpack(cap)
    assert t.tolist() == [0.0, 1.0, 2.0] and t.data_ptr() == e.data_ptr()
    e2 = ember.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4)))
    assert e2.tolist() == [0, 1, 2, 3] and e2.dtype == ember.int64


def test_from_dlpack_of_ember_is_identity():
    e = ember.ones(2)
    assert ember.from_dlpack(e) is e


def test_dlpack_keeps_memory_alive():
    e = ember.arange(1000.0)
    t = torch.from_dlpack(e)
    del e
    assert t[999].item() == 999.0
    t2 = torch.arange(1000.0)
    e2 = ember.from_dlpack(t2)
    del t2
    assert e2[999].item() == 999.0


def test_dlpack_errors():
    for L in (ember, torch):
        with pytest.raises(BufferError, match="require"):
            L.ones(2, requires_grad=True).__dlpack__()
        with pytest.raises(BufferError):
            L.empty(2, device="meta").__dlpack__()
    assert torch.from_dlpack(ember.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]
