"""The meta device: tensors with shape, dtype and strides but no data. Every op must give
torch's meta shapes, dtypes, strides and storage offsets, and allocate nothing."""
import numpy as np
import pytest
import torch

import ember
from _torch_oracle import check_meta, meta_pair

S = (2, 3, 4)

META_OPS = [
    # views
    lambda L, x: x.view(6, 4),
    lambda L, x: x.reshape(4, 6),
    lambda L, x: x.t() if x.dim() == 2 else x.transpose(0, 2),
    lambda L, x: x.permute(1, 2, 0),
    lambda L, x: x[1:, ::2, -1],
    lambda L, x: x[:, 2:1],
    lambda L, x: x[None, ..., None],
    lambda L, x: x.unsqueeze(-1).expand(2, 3, 4, 5),
    lambda L, x: x.narrow(2, 1, 2),
    lambda L, x: x.unfold(2, 2, 1),
    lambda L, x: x.diagonal(0, 1, 2),
    lambda L, x: x.as_strided((2, 2), (5, 1), 3),
    lambda L, x: x.split(2, 2),
    lambda L, x: x.chunk(3, 1),
    lambda L, x: x.unbind(0),
    lambda L, x: x.squeeze(0),
    lambda L, x: x[:1].squeeze(),
    lambda L, x: x.flatten(),
    lambda L, x: x.transpose(0, 1).reshape(12, 2),
    lambda L, x: x.transpose(0, 1).contiguous(),
    lambda L, x: x.transpose(0, 1).clone(),
    lambda L, x: x.view(L.int32),
    lambda L, x: x.view(L.float16),
    lambda L, x: x.detach(),
    # elementwise
    lambda L, x: x + 1,
    lambda L, x: x * x[0],
    lambda L, x: x + L.ones((), dtype=L.float64),    # a 0-d cpu tensor counts as a scalar
    lambda L, x: (x > 0).dtype,
    lambda L, x: x / 2,
    lambda L, x: x.int() + 1.5,
    lambda L, x: x.exp().sigmoid(),
    lambda L, x: L.where(x > 0, x, 0.0),
    lambda L, x: x.to(L.float64),
    lambda L, x: x.to(L.int64).sum(),
    # reductions
    lambda L, x: x.sum(),
    lambda L, x: x.sum(1),
    lambda L, x: x.mean((0, 2), keepdim=True),
    lambda L, x: x.amax(-1),
    lambda L, x: x.max(1),
    lambda L, x: x.argmax(2),
    lambda L, x: x.var(0),
    lambda L, x: x.softmax(-1),
    lambda L, x: x.to(L.int32).sum(0),
    # linear algebra
    lambda L, x: x @ x.transpose(1, 2),
    lambda L, x: x[0] @ x[1].t(),
    lambda L, x: x.matmul(x[0, 0]),
    lambda L, x: L.bmm(x, x.transpose(1, 2)),
    lambda L, x: L.mm(x[0], x[0].t()),
    # joins
    lambda L, x: L.cat([x, x], 1),
    lambda L, x: L.cat([x, x[:, :1]], 1),
    lambda L, x: L.stack([x, x], -1),
    lambda L, x: L.cat([x, x.to(L.float64)]),
    # indexing
    lambda L, x: x[L.tensor([0, 1, 1], device="meta")],
    lambda L, x: x[:, L.tensor([2, 0], device="meta")],
    lambda L, x: x[L.tensor([0, 1], device="meta"), :, L.tensor([1, 3], device="meta")],
    lambda L, x: x.index_select(2, L.tensor([3, 1, 1, 0], device="meta")),
    lambda L, x: x.gather(1, L.zeros(2, 2, 4, dtype=L.int64, device="meta")),
    lambda L, x: x.masked_fill(L.ones(4, dtype=L.bool, device="meta"), 0.0),
    lambda L, x: x.scatter(1, L.zeros(2, 2, 4, dtype=L.int64, device="meta"), 1.0),
    lambda L, x: x.scatter_add(2, L.zeros(2, 3, 1, dtype=L.int64, device="meta"), x),
    lambda L, x: x.index_add(0, L.tensor([1], device="meta"), x[:1]),
    lambda L, x: x.index_fill(2, L.tensor([1], device="meta"), 0.0),
    lambda L, x: x.transpose(0, 2).index_fill(2, L.tensor([1], device="meta"), 0.0),
    lambda L, x: x.transpose(0, 2).index_put((L.tensor([1], device="meta"),), x[0, 0, 0]),
    lambda L, x: x.flip(1),
    lambda L, x: x.transpose(0, 2).flip(1),
    lambda L, x: x.roll(1, 2),
    lambda L, x: x.tril(),
    lambda L, x: x.transpose(1, 2).triu(1),
    lambda L, x: x.repeat(2, 1, 1),
    lambda L, x: x[0, 0, 0],
    # factories on the meta device
    lambda L, x: L.zeros(3, 2, device="meta"),
    lambda L, x: L.empty_strided((2, 3), (1, 2), device="meta"),
    lambda L, x: L.arange(10, device="meta"),
    lambda L, x: L.full((2,), 7, device="meta"),
    lambda L, x: L.empty_like(x),
    lambda L, x: L.zeros_like(x.transpose(0, 2)),
    lambda L, x: L.rand_like(x),
    lambda L, x: L.eye(3, device="meta"),
    lambda L, x: L.linspace(0, 1, 5, device="meta"),
]


@pytest.mark.parametrize("k", range(len(META_OPS)))
def test_meta_matches_torch(k):
    check_meta(META_OPS[k], S)


def test_meta_int_input():
    check_meta(lambda L, x: (x + 1, x / 2, x.sum(), x.float(), x[L.tensor([1], device="meta")]),
               (3, 2), dtype="int64")


def test_meta_attributes():
    for L in (ember, torch):
        x = L.empty(2, 3, device="meta")
        assert x.is_meta and x.device.type == "meta" and x.device == L.device("meta")
        assert x.shape == (2, 3) and x.dtype == L.float32
        assert x.untyped_storage().nbytes() == 24
        y = x[1]
        assert y.storage_offset() == 3 and y._base is x
        x.add_(1)
        assert x._version == 1 == y._version


def test_meta_has_no_data():
    for L in (ember, torch):
        x = L.ones(2, 2, device="meta")
        with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
            x[0, 0].item()
        with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
            x.item()
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            x.tolist()
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            x.numpy()
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            np.asarray(x)
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            x.to("cpu")
        with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
            bool(x.sum() > 0)
        with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
            x[L.tensor(1, device="meta")]    # an index value it cannot read
        with pytest.raises(BufferError):
            x.__dlpack__()
        assert x.data_ptr() == 0 and x.untyped_storage().data_ptr() == 0


def test_meta_errors_like_torch():
    def raises_both(fn):
        e, t = meta_pair(S)
        with pytest.raises(Exception) as info:
            fn(torch, t)
        expected = next(c for c in type(info.value).__mro__ if c.__module__ == "builtins")
        with pytest.raises(expected):
            fn(ember, e)
    raises_both(lambda L, x: x.view(5))
    raises_both(lambda L, x: x + L.ones(5, device="meta"))
    raises_both(lambda L, x: x @ x)
    raises_both(lambda L, x: L.cat([x, x[0]]))
    raises_both(lambda L, x: x[5])
    raises_both(lambda L, x: x.transpose(1, 2).view(24))


def test_meta_to_and_from_cpu():
    for L in (ember, torch):
        c = L.arange(6.0).reshape(2, 3).t()
        m = c.to("meta")
        assert m.is_meta and m.shape == (3, 2) and m.stride() == (1, 3)
        assert c.to("meta", L.float64).dtype == L.float64


def test_meta_module_allocates_nothing():
    import tracemalloc
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    lin = ember.nn.Linear(1000, 1000, device="meta")
    big = ember.empty(10_000, 10_000, device="meta")
    out = lin(ember.empty(64, 1000, device="meta"))
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 1_000_000, f"meta tensors allocated {grown} bytes"
    assert lin.weight.is_meta and lin.weight.shape == (1000, 1000)
    assert lin.bias.is_meta and out.shape == (64, 1000) and out.is_meta
    assert big.untyped_storage().nbytes() == 4 * 10 ** 8
    t = torch.nn.Linear(1000, 1000, device="meta")
    assert t.weight.stride() == lin.weight.stride() and t.weight.dtype == torch.float32


def test_meta_autograd_shapes():
    for L in (ember, torch):
        x = L.empty(3, 4, device="meta", requires_grad=True)
        y = (x.t() @ x).sum()
        y.backward()
        assert x.grad.is_meta and x.grad.shape == (3, 4)


def test_meta_elementwise_keeps_input_layout():
    """TensorIterator gives the output the memory layout of the inputs (here: transposed)."""
    check_meta(lambda L, x: (x.transpose(0, 2) + 1, x.transpose(0, 2).exp()), S)


def test_meta_with_cpu_tensor_raises():
    e, t = meta_pair((2, 4))
    with pytest.raises(RuntimeError):
        t + torch.ones(2, 4)
    with pytest.raises(RuntimeError):
        torch.ones(2, 4) + t
    with pytest.raises(RuntimeError):
        e + ember.ones(2, 4)
    with pytest.raises(RuntimeError):
        e + ember.ones(4)
    with pytest.raises(RuntimeError):
        ember.nn.Linear(4, 3)(e)  # CPU weights, meta input
    assert (ember.tensor(2.0) * e).device.type == "meta"  # a 0-dim CPU tensor rides along
    assert (e * ember.tensor(2.0)).device.type == "meta"
