"""Views: every view op shares storage with its input, has torch's strides and offset, is
written through, and back-propagates like torch (values, grads, gradcheck in float64)."""
import numpy as np
import pytest
import torch

import ember
from _torch_oracle import check, check_raises

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

# (name, fn(lib, x), input array): each fn returns a view (or a tuple of views) of x
VIEWS = [
    ("view", lambda L, x: x.view(6, 4), X),
    ("view_infer", lambda L, x: x.view(-1, 2), X),
    ("view_as", lambda L, x: x.view_as(L.ones(4, 6)), X),
    ("reshape_viewable", lambda L, x: x.reshape(3, 8), X),
    ("flatten", lambda L, x: x.flatten(1), X),
    ("unflatten", lambda L, x: x.unflatten(2, (2, 2)), X),
    ("slice_step", lambda L, x: x[:, ::2, 1::3], X),
    ("slice_neg", lambda L, x: x[-1:, -2:, :-1], X),
    ("slice_oob", lambda L, x: x[:, 1:100, -100:2], X),
    ("slice_empty", lambda L, x: x[:, 2:1], X),
    ("select", lambda L, x: x.select(1, -1), X),
    ("int_index", lambda L, x: x[1, 2], X),
    ("transpose", lambda L, x: x.transpose(0, 2), X),
    ("swapaxes", lambda L, x: x.swapaxes(-1, 0), X),
    ("permute", lambda L, x: x.permute(2, 0, 1), X),
    ("movedim", lambda L, x: x.movedim(0, -1), X),
    ("t", lambda L, x: x[0].t(), X),
    ("T_2d", lambda L, x: x[0].T, X),
    ("mT", lambda L, x: x.mT, X),
    ("expand", lambda L, x: x[:, :1].expand(2, 5, 4), X),
    ("expand_new_dims", lambda L, x: x[0, 0].expand(3, 2, 4), X),
    ("expand_as", lambda L, x: x[:1].expand_as(x), X),
    ("broadcast_to", lambda L, x: L.broadcast_to(x[0, :1], (2, 3, 4)), X),
    ("narrow", lambda L, x: x.narrow(2, 1, 2), X),
    ("narrow_neg", lambda L, x: x.narrow(-1, -3, 2), X),
    ("unfold", lambda L, x: x.unfold(2, 2, 1), X),
    ("unfold_step", lambda L, x: x.unfold(1, 2, 2), X),
    ("as_strided", lambda L, x: x.as_strided((3, 3), (2, 1), 1), X),
    ("diagonal", lambda L, x: x.diagonal(), X),
    ("diagonal_offset", lambda L, x: x.diagonal(1, 1, 2), X),
    ("diagonal_neg", lambda L, x: x.diagonal(-1, -1, -2), X),
    ("squeeze", lambda L, x: x[:1, :, :1].squeeze(), X),
    ("squeeze_dim", lambda L, x: x[:1].squeeze(0), X),
    ("squeeze_noop", lambda L, x: x.squeeze(1), X),
    ("squeeze_dims", lambda L, x: x[:1, :, :1].squeeze((0, 2)), X),
    ("unsqueeze", lambda L, x: x.unsqueeze(1), X),
    ("unsqueeze_neg", lambda L, x: x.unsqueeze(-1), X),
    ("split", lambda L, x: x.split(2, dim=2), X),
    ("split_uneven", lambda L, x: x.split(2, dim=1), X),
    ("split_sizes", lambda L, x: x.split([1, 3], dim=-1), X),
    ("chunk", lambda L, x: x.chunk(3, 1), X),
    ("chunk_uneven", lambda L, x: x.chunk(3, 2), X),
    ("tensor_split", lambda L, x: L.tensor_split(x, 3, 2), X),
    ("unbind", lambda L, x: x.unbind(1), X),
    ("alias", lambda L, x: x[...], X),
    ("detach", lambda L, x: x.detach(), X),
    ("chain", lambda L, x: x.view(6, 4).t()[1:, ::2], X),
    ("chain2", lambda L, x: x.permute(1, 0, 2)[1].unsqueeze(0).transpose(0, 2)[..., 0], X),
]
VIEW_IDS = [v[0] for v in VIEWS]


def _views(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name,fn,x", VIEWS, ids=VIEW_IDS)
def test_view_metadata(name, fn, x):
    """Same values, shape, stride, storage_offset, is_contiguous as torch."""
    out_e, out_t = check(fn, x, grad=False, strides=True)
    for e, t in zip(_views(out_e), _views(out_t)):
        assert e.is_contiguous() == t.is_contiguous()


@pytest.mark.parametrize("name,fn,x", VIEWS, ids=VIEW_IDS)
def test_view_shares_storage(name, fn, x):
    base = ember.tensor(x)
    for v in _views(fn(ember, base)):
        assert v.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        assert v._base is base or name == "detach"
        assert v._is_view() or name == "detach"
        if v.numel():
            v[(0,) * v.dim()] = -7.0
            assert base.view(-1)[v.storage_offset()].item() == -7.0


@pytest.mark.parametrize("name,fn,x", VIEWS, ids=VIEW_IDS)
def test_view_grad(name, fn, x):
    check(fn, x.astype(np.float64))


@pytest.mark.parametrize("name,fn,x", [v for v in VIEWS if v[0] != "detach"],
                         ids=[i for i in VIEW_IDS if i != "detach"])
def test_view_gradcheck(name, fn, x):
    x = ember.tensor(np.random.default_rng(0).standard_normal(x.shape)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: fn(ember, t), (x,))


def test_view_chain_grad_fn_and_base():
    for lib in (ember, torch):
        x = lib.arange(12.0).requires_grad_()
        y = x * 1
        v = y.view(3, 4).t()[1:, ::2]
        assert v._base is y
        assert v.grad_fn is not None
        assert not v.is_leaf


def test_write_through_all_views():
    for lib in (ember, torch):
        x = lib.zeros(3, 4)
        a, b, c = x.t(), x[1], x.view(12)
        a[2, 1] = 5
        assert x[1, 2].item() == 5 and b[2].item() == 5 and c[6].item() == 5
        b.add_(1)
        assert x[1].tolist() == [1, 1, 6, 1] and c[4:8].tolist() == [1, 1, 6, 1]
        c.mul_(2)
        assert a[2, 1].item() == 12


def test_version_counter_shared_by_views():
    for lib in (ember, torch):
        x = lib.zeros(3, 4)
        v = x[1]
        w = x.t()
        assert x._version == v._version == w._version == 0
        v.add_(1)
        assert x._version == v._version == w._version == 1
        x[0] = 3
        assert w._version == x._version == 2
        d = x.detach()
        d.zero_()
        assert x._version == 3
        x.data.zero_()     # .data is not tracked: its version is its own
        assert x._version == 3
    x = ember.zeros(2)
    y = x + 1
    assert y._version == 0


def test_storage_and_pointers():
    for lib in (ember, torch):
        x = lib.arange(12, dtype=lib.float32).reshape(3, 4)
        v = x[1, 1:]
        assert v.data_ptr() == x.data_ptr() + 5 * 4
        assert v.storage_offset() == 5
        assert v.untyped_storage().nbytes() == 48
        assert x.untyped_storage().data_ptr() == x.data_ptr()
        assert v.is_set_to(x) is False


def test_contiguous_and_clone():
    for lib in (ember, torch):
        x = lib.arange(12.0).reshape(3, 4)
        assert x.contiguous() is x
        t = x.t()
        assert not t.is_contiguous()
        c = t.contiguous()
        assert c.is_contiguous() and c.stride() == (3, 1)
        assert c.data_ptr() != x.data_ptr()
        assert c._base is None
        k = t.clone()
        assert k.stride() == (1, 4)          # clone preserves a dense permuted layout
        k2 = x[:, ::2].clone()
        assert k2.stride() == (2, 1)         # non-dense: contiguous
        assert k.data_ptr() != x.data_ptr()
        assert lib.equal(k, t)


@pytest.mark.parametrize("shape,idx", [((1, 3), (slice(None), 0)), ((4, 1, 1), (0,)),
                                       ((0, 3), (slice(None),)), ((3, 0), (0,)),
                                       ((2, 0, 3), (slice(None), slice(None), 1))])
def test_is_contiguous_edge_cases(shape, idx):
    def f(L):
        x = L.zeros(shape)
        v = x[idx]
        e = v.expand(2, *v.shape)
        return (x.stride(), v.stride(), v.storage_offset(), v.is_contiguous(), e.stride(),
                e.is_contiguous(), v.t().stride() if v.dim() == 2 else v.unsqueeze(0).stride(),
                v.transpose(0, -1).contiguous().stride(), v.unsqueeze(-1).stride())
    check(f, grad=False)
    x = ember.zeros(shape)
    assert x[idx].untyped_storage() is x.untyped_storage()


def test_view_dtype():
    def f(L, x):
        v = x.view(L.int32)
        w = x.view(L.uint8)
        return v, v.stride(), w.shape, w.stride(), x[:, 1:].view(L.int16).shape
    out, _ = check(f, np.arange(6, dtype=np.float32).reshape(2, 3), grad=False)
    x = ember.zeros(2, 3)
    v = x.view(ember.int32)
    v[0, 0] = 0x3F800000
    assert x[0, 0].item() == 1.0
    check_raises(lambda L, x: x.t().view(L.int16), np.zeros((2, 3), np.float32))
    check_raises(lambda L, x: x.view(L.float64), np.zeros((2, 3), np.float32))


BAD_VIEWS = [
    lambda L, x: x.view(5, 5),
    lambda L, x: x.view(-1, -1),
    lambda L, x: x.t().view(24),
    lambda L, x: x.transpose(0, 3),
    lambda L, x: x.permute(0, 1),
    lambda L, x: x.permute(0, 0, 1),
    lambda L, x: x.expand(2, 4, 4),
    lambda L, x: x.expand(3, 4),
    lambda L, x: x.narrow(0, 1, 5),
    lambda L, x: x.select(0, 2),
    lambda L, x: x.select(3, 0),
    lambda L, x: x.unfold(0, 5, 1),
    lambda L, x: x.unfold(0, 1, 0),
    lambda L, x: x.as_strided((10, 10), (3, 1)),
    lambda L, x: x.diagonal(0, 1, 1),
    lambda L, x: x.split([1, 2], 2),
    lambda L, x: x.chunk(0),
    lambda L, x: x.unsqueeze(4),
    lambda L, x: x.squeeze(3),
    lambda L, x: x[0, 0, 0, 0],
    lambda L, x: x.t(),
    lambda L, x: x.T.view(24),
]


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize("k", range(len(BAD_VIEWS)))
def test_bad_view_raises(k):
    check_raises(BAD_VIEWS[k], X)


def test_reshape_copies_when_not_viewable():
    for lib in (ember, torch):
        x = lib.arange(6.0).reshape(2, 3)
        r = x.t().reshape(6)
        assert r._base is None
        assert r.data_ptr() != x.data_ptr()
        assert r.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
        assert x.reshape(3, 2)._base is x._base
    check(lambda L, x: x.t().reshape(6, 2) * 2, X[0].astype(np.float64))
    check(lambda L, x: x[:, ::2].flatten(), X.astype(np.float64))


def test_view_of_expanded_and_zero_stride():
    check(lambda L, x: x[:, :1].expand(2, 3, 4).reshape(6, 4), X.astype(np.float64))
    check(lambda L, x: x[0, 0, :1].expand(3, 4).view(12), X.astype(np.float64), strides=True)


def test_zero_dim_views():
    check(lambda L, x: (x.view(1), x.reshape(()), x.unsqueeze(0), x.expand(3), x.t(), x[...],
                        x[None], x.squeeze(), x.unsqueeze(-1)), np.float64(3.0), strides=True)
    check_raises(lambda L, x: x.select(0, 0), np.float64(3.0))
    check_raises(lambda L, x: x[0], np.float64(3.0))


# ---- shape ops that copy: flip, roll, tril/triu, tile, repeat_interleave, stacking ----------
COPIES = [
    lambda L, x: x.flip(0),
    lambda L, x: x.flip(0, 2),
    lambda L, x: L.flip(x.transpose(0, 2), [-1]),
    lambda L, x: L.fliplr(x),
    lambda L, x: L.flipud(x[0]),
    lambda L, x: x.roll(1),
    lambda L, x: x.roll(-2, 1),
    lambda L, x: L.roll(x, (1, 5), (0, 2)),
    lambda L, x: x.t()[0].roll(1, 0) if x.dim() == 2 else x[0].t().roll(1, 0),
    lambda L, x: x.tril(),
    lambda L, x: x.triu(1),
    lambda L, x: L.tril(x[0].t(), -1),
    lambda L, x: x.ravel(),
    lambda L, x: x.t().ravel() if x.dim() == 2 else x.transpose(0, 1).ravel(),
    lambda L, x: x.tile(2),
    lambda L, x: L.tile(x, (2, 1, 1, 1)),
    lambda L, x: x.repeat(1, 2, 1),
    lambda L, x: x.repeat_interleave(2),
    lambda L, x: x.repeat_interleave(3, dim=1),
    lambda L, x: L.repeat_interleave(x, L.tensor([1, 0, 2]), dim=1),
    lambda L, x: L.hstack([x, x[:, :1]]),
    lambda L, x: L.vstack([x[0], x[1, :2]]),
    lambda L, x: L.dstack([x[0], x[1]]),
    lambda L, x: L.column_stack([x[0, 0], x[1, 1]]),
    lambda L, x: L.atleast_3d(x[0, 0]),
    lambda L, x: L.atleast_2d(x[0, 0, 0], x[0, 0]),
    lambda L, x: L.meshgrid(x[0, 0], x[1, :, 0], indexing="ij"),
    lambda L, x: L.meshgrid(x[0, 0], x[1, :, 0], indexing="xy"),
    lambda L, x: L.diag(x[0, 0]),
    lambda L, x: L.diag(x[0, 0], -2),
    lambda L, x: x[0].diag(1),
    lambda L, x: L.take_along_dim(x, L.tensor([[[0, 3]]]), 2),
    lambda L, x: L.take_along_dim(x, L.tensor([5, 0, 23])),
    lambda L, x: L.tensor_split(x, [1, 3], 2),
    lambda L, x: L.tensor_split(x, [2, 1], 1),
]


@pytest.mark.parametrize("k", range(len(COPIES)))
def test_shape_copies(k):
    out_e, out_t = check(COPIES[k], X.astype(np.float64), strides=True)


@pytest.mark.parametrize("k", [0, 5, 9, 14, 17, 28])
def test_shape_copies_gradcheck(k):
    x = ember.tensor(np.random.default_rng(k).standard_normal(X.shape)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: COPIES[k](ember, t), (x,))


def test_shape_copy_errors():
    for fn in (lambda L, x: x.flip(0, 0), lambda L, x: x.flip(3), lambda L, x: x.roll((1, 2), 0),
               lambda L, x: x[0, 0].tril(), lambda L, x: L.fliplr(x[0, 0]),
               lambda L, x: x.repeat_interleave(L.tensor([1, 2]), dim=1),
               lambda L, x: x.repeat_interleave(-1), lambda L, x: L.diag(x),
               lambda L, x: L.take_along_dim(x, L.tensor([0]), 0),
               lambda L, x: L.meshgrid(x[0, 0], indexing="yx")):
        check_raises(fn, X)


def _random_view_chain(rng, shape):
    """A list of (name, args) view steps valid for `shape`, chosen at random."""
    steps = []
    for _ in range(rng.integers(1, 6)):
        n = len(shape)
        choice = rng.integers(0, 7)
        if n == 0 or choice == 0:
            d = int(rng.integers(0, n + 1))
            steps.append(("unsqueeze", (d,)))
            shape = shape[:d] + (1,) + shape[d:]
        elif choice == 1 and n >= 2:
            a, b = (int(v) for v in rng.choice(n, 2, replace=False))
            steps.append(("transpose", (a, b)))
            shape = list(shape)
            shape[a], shape[b] = shape[b], shape[a]
            shape = tuple(shape)
        elif choice == 2:
            d = int(rng.integers(0, n))
            start = int(rng.integers(0, shape[d] + 1))
            stop = int(rng.integers(start, shape[d] + 2))
            step = int(rng.integers(1, 3))
            steps.append(("slice", (d, start, stop, step)))
            shape = shape[:d] + (len(range(start, min(stop, shape[d]), step)),) + shape[d + 1:]
        elif choice == 3 and shape[0] > 0:
            steps.append(("select", (0, int(rng.integers(0, shape[0])))))
            shape = shape[1:]
        elif choice == 4:
            steps.append(("reshape", (-1,)))
            shape = (int(np.prod(shape)),)
        elif choice == 5:
            perm = tuple(int(v) for v in rng.permutation(n))
            steps.append(("permute", perm))
            shape = tuple(shape[p] for p in perm)
        else:
            steps.append(("squeeze", ()))
            shape = tuple(s for s in shape if s != 1)
    return steps


def _apply_chain(t, steps):
    for name, args in steps:
        if name == "slice":
            d, start, stop, step = args
            t = t[(slice(None),) * d + (slice(start, stop, step),)]
        elif name == "select":
            t = t.select(*args)
        elif name == "permute":
            t = t.permute(*args)
        else:
            t = getattr(t, name)(*args)
        yield t


@pytest.mark.parametrize("seed", range(200))
def test_random_view_chains(seed):
    """Random chains of views (including empty ones) keep torch's strides, offsets and values,
    and reshape views exactly when torch does."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(0 if seed % 5 == 0 else 1, 4, rng.integers(1, 5)))
    steps = _random_view_chain(rng, shape)
    e, t = (L.arange(int(np.prod(shape)), dtype=L.float32).reshape(shape) for L in (ember, torch))
    for ve, vt in zip(_apply_chain(e, steps), _apply_chain(t, steps)):
        assert ve.shape == vt.shape and ve.stride() == vt.stride(), steps
        assert ve.storage_offset() == vt.storage_offset(), steps
        assert ve.is_contiguous() == vt.is_contiguous(), steps
        assert (ve._base is e._base) == (vt._base is t._base), steps
        np.testing.assert_array_equal(ve.numpy(), vt.numpy())


# ---- issue 3: splits, take, triangle indices, narrow_copy, fill_diagonal_, apply_ --------------
_X = np.arange(24.0).reshape(2, 3, 4)
ISSUE3_SHAPE_CASES = [
    (lambda L, x: L.hsplit(x, 3), _X),
    (lambda L, x: L.vsplit(x, [1]), _X),
    (lambda L, x: x.dsplit([1, 3]), _X),
    (lambda L, x: L.hsplit(x, 2), np.arange(6.0)),
    (lambda L, x: L.take(x, L.tensor([[0, 5], [-1, 3]])), _X),
    (lambda L, x: x.narrow_copy(2, 1, 2), _X),
    (lambda L, x: L.tril_indices(3, 4, 1), _X),
    (lambda L, x: L.triu_indices(4, 3, -1, dtype=L.int32), _X),
    (lambda L, x: x.detach().clone().fill_diagonal_(-1.0), np.zeros((3, 3))),
    (lambda L, x: x.detach().clone().fill_diagonal_(2.0, wrap=True), np.zeros((7, 3))),
    (lambda L, x: x.detach().clone().fill_diagonal_(5.0), np.zeros((2, 2, 2))),
    (lambda L, x: x.detach().clone().apply_(lambda v: v * v + 1), np.arange(5.0)),
]


@pytest.mark.parametrize("k", range(len(ISSUE3_SHAPE_CASES)))
def test_issue3_shape_composites(k):
    fn, x = ISSUE3_SHAPE_CASES[k]
    check(fn, x)


def test_issue3_shape_composite_errors():
    check_raises(lambda L, x: L.hsplit(x, 5), _X)
    check_raises(lambda L, x: L.vsplit(x, 2), np.arange(4.0))
    check_raises(lambda L, x: L.take(x, L.tensor([24])), _X)
    check_raises(lambda L, x: x.detach().clone().fill_diagonal_(1.0), np.zeros((2, 3, 2)))
