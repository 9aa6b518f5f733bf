"""ember.nested (strided layout) against torch.nested on the same inputs, for the behaviours
PyTorch's test/test_nestedtensor.py checks: each case is written once as a function of the
library and must give the same values (component by component), gradients, or exception type
and message in both."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A23, A43 = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 3))
A34, A36 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 6))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _t(lib, a, **kw):
    return lib.tensor(a, **kw)


def _nt(lib, *arrays, **kw):
    return lib.nested.nested_tensor([_t(lib, a) for a in arrays], **kw)


def _normal(lib, value):
    """A result as plain Python/NumPy: nested tensors as ("nested", component arrays)."""
    if isinstance(value, lib.Tensor):
        if value.is_nested:
            return ("nested", str(value.dtype).split(".")[-1],
                    [_normal(lib, c) for c in value.unbind()])
        return (str(value.dtype).split(".")[-1], value.detach().numpy())
    if isinstance(value, (tuple, list)):
        return [_normal(lib, v) for v in value]
    return value


def _outcome(lib, case):
    try:
        return ("ok", _normal(lib, case(lib)))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        # (PyTorch's dispatcher goes on to list the backends an op has)
        return (type(e).__name__, str(e).split(" This could be")[0])


def _same(a, b):
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.allclose(a, b, atol=1e-5, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return a == b


def check(case):
    ours, theirs = _outcome(ember, case), _outcome(torch, case)
    assert _same(ours, theirs), f"ember {ours}\ntorch {theirs}"


CASES = {
    # arithmetic: nested with nested of the same sizes or a scalar; anything else refused
    "mul_scalar_tensor": lambda m: _nt(m, A23, A43) * _t(m, 2.0),
    "rmul_number": lambda m: 3 * _nt(m, A23, A43),
    "mul_vector": lambda m: _nt(m, A23, A43).mul(_t(m, [2.0])),
    "vector_mul": lambda m: _t(m, [2.0]).mul(_nt(m, A23, A43)),
    "vector_mul_": lambda m: _t(m, [2.0]).mul_(_nt(m, A23, A43)),
    "scalar_mul_": lambda m: _t(m, 2.0).mul_(_nt(m, A23, A43)),
    "add_other_sizes": lambda m: _nt(m, A23, A43) + _nt(m, A43, A23),
    "iadd_other_sizes": lambda m: _nt(m, A23, A43).__iadd__(_nt(m, A43, A23)),
    # shapes
    "transpose": lambda m: _nt(m, A23, A43).transpose(-1, -2),
    "transpose_dim0": lambda m: _nt(m, A23, A43).transpose(0, 1),
    "transpose_range": lambda m: _nt(m, A23, A43).transpose(1, 3),
    "transposed_is_contiguous": lambda m: _nt(m, A23, A43).transpose(1, 2).is_contiguous(),
    "squeeze_no_dim": lambda m: _nt(m, A23, A43).squeeze(),
    "squeeze_dim0": lambda m: _nt(m, A23, A43).squeeze(0),
    "squeeze_singletons": lambda m: _nt(m, [1.0], [2.0]).squeeze(1),
    "unsqueeze_dim0": lambda m: _nt(m, A23, A43).unsqueeze(0),
    "unsqueeze_sizes": lambda m: _nt(m, A23, A43).unsqueeze(-1)._nested_tensor_size(),
    "view_inherit": lambda m: _nt(m, A36, A36[:2]).view(2, -1, 3, 2),
    "view_two_inherited": lambda m: _nt(m, A23, A43).view(2, -1, -1),
    "view_empty_shape": lambda m: _nt(m, A23, A43).view(()),
    "view_empty_nt": lambda m: m.nested.nested_tensor([]).view(-1),
    "view_batch": lambda m: _nt(m, A23, A43).view(-1, 2, 3),
    "view_bad_size": lambda m: _nt(m, A23, A43).view(2, 2, 5),
    "view_two_old_inferred": lambda m: _nt(m, A23, A43).view(2, -1, -1, 3),
    "view_new_inferred": lambda m: _nt(m, A23, A43).view(2, -1, 3, -1),
    "reshape_batch": lambda m: _nt(m, A23, A43).reshape(3, 2, 3),
    "reshape_transposed": lambda m: _nt(m, A36, A36[:2]).transpose(1, 2).reshape(2, 3, -1),
    "chunk": lambda m: _nt(m, A36, A36[:2]).chunk(3, -1),
    "chunk_is_contiguous": lambda m: [c.is_contiguous()
                                      for c in _nt(m, A36, A36[:2]).chunk(3, -1)],
    "chunk_dim1": lambda m: _nt(m, A36, A36[:2]).chunk(3, 1),
    "chunk_not_divisible": lambda m: _nt(m, A36, A36[:2]).chunk(4, -1),
    "chunk_noncontiguous": lambda m: _nt(m, A36, A36).transpose(1, 2).chunk(3, -1),
    "getitem": lambda m: _nt(m, A23, A43)[1, 2:, 1],
    "getitem_out_of_range": lambda m: _nt(m, A23, A43)[-3],
    "getitem_slice": lambda m: type(_nt(m, A23, A43)[:]).__name__,
    "getitem_empty": lambda m: m.nested.nested_tensor([])[0],
    "values_transposed": lambda m: _nt(m, A23, A43).transpose(1, 2).values(),
    # reductions and nn functions
    "sum_last": lambda m: _nt(m, A23, A43).sum(-1, keepdim=True),
    "sum_dim0": lambda m: _nt(m, A23, A43).sum(0, keepdim=True),
    "sum_two_dims": lambda m: _nt(m, A23, A43).sum([0, 1], keepdim=True),
    "sum_no_keepdim": lambda m: _nt(m, A23, A43).sum(-1),
    "softmax": lambda m: m.nn.functional.softmax(_nt(m, A23, A43), 1),
    "softmax_dim0": lambda m: m.nn.functional.softmax(_nt(m, A23, A43), 0),
    "softmax_range": lambda m: m.nn.functional.softmax(_nt(m, A23, A43), -4),
    "dropout_bad_p": lambda m: m.nn.functional.dropout(_nt(m, A23, A43), 1.1),
    "dropout_all": lambda m: m.nn.Dropout(1.0)(_nt(m, A23, A43)),
    "linear": lambda m: m.nn.functional.linear(_nt(m, A23, A43), _t(m, A34.T[:2]),
                                               _t(m, [1.0, 2.0])),
    "linear_nested_weight": lambda m: m.nn.functional.linear(_nt(m, A23), _nt(m, A23)),
    "linear_2d": lambda m: m.nn.functional.linear(_nt(m, [1.0], [2.0]), _t(m, A23)),
    "linear_mismatch": lambda m: m.nn.functional.linear(_nt(m, A23), _t(m, A34)),
    "linear_noncontiguous": lambda m: m.nn.functional.linear(
        _nt(m, A34, A36).transpose(1, 2), _t(m, A34)),
    "layer_norm": lambda m: m.nn.LayerNorm(3)(_nt(m, A23, A43, dtype=m.float32)),
    "layer_norm_irregular": lambda m: m.nn.LayerNorm((4, 3))(_nt(m, A23, A43)),
    "layer_norm_shape": lambda m: m.nn.LayerNorm(4)(_nt(m, A23, A43)),
    "embedding": lambda m: m.nn.functional.embedding(
        m.nested.nested_tensor([_t(m, [1, 2]), _t(m, [0])]), _t(m, A43)),
    "bmm": lambda m: _nt(m, A23, A43).bmm(_nt(m, A34, A36)),
    "bmm_dense_2d": lambda m: _t(m, A23).bmm(_nt(m, A23)),
    "bmm_dense_3d": lambda m: _t(m, A23[None]).bmm(_nt(m, A34)),
    "bmm_not_3d": lambda m: _nt(m, [1.0]).bmm(_nt(m, A23)),
    "bmm_batch": lambda m: _nt(m, A23, A43).bmm(_nt(m, A34)),
    "bmm_sizes": lambda m: _nt(m, A23, A43).bmm(_nt(m, A23, A34)),
    "matmul_4d": lambda m: m.matmul(_nt(m, A23[None], A43[None]), _nt(m, A34[None], A36[None])),
    "matmul_rank": lambda m: m.matmul(_nt(m, [1.0]), _nt(m, A23)),
    "matmul_batch_dims": lambda m: m.matmul(_nt(m, A23[None]), _nt(m, np.stack([A34] * 2))),
    "matmul_sizes": lambda m: m.matmul(_nt(m, A23, A43), _nt(m, A23, A36)),
    "matmul_dense": lambda m: m.matmul(_t(m, A23), _nt(m, A23)),
    "matmul_4d_dense": lambda m: m.matmul(_nt(m, A23[None], A23[None].repeat(2, 0)),
                                          _t(m, A34)),
    "matmul_4d_dense_ragged_c": lambda m: m.matmul(_nt(m, A23[None], A43[None]), _t(m, A34)),
    "matmul_3d_dense": lambda m: m.matmul(_nt(m, A23, A43), _t(m, A34)),
    "matmul_4d_noncontiguous_dense": lambda m: m.matmul(
        _nt(m, A34[None], A36[None]).transpose(1, 2).transpose(2, 3), _t(m, A36.T)),
    "to_padded_zero_numel": lambda m: m.nested.to_padded_tensor(
        _nt(m, np.ones((1, 0)), np.ones((0, 0))), 0.0),
    "matmul_batch_dims_2": lambda m: m.matmul(_nt(m, np.zeros((1, 12, 2, 3)), np.zeros((3, 4, 2, 3))),
                                              _nt(m, np.zeros((2, 5, 3, 4)), np.zeros((3, 4, 3, 4)))),
    "rsub": lambda m: 1 - _nt(m, A23, A43),
    "rtruediv": lambda m: 1 / _nt(m, A23, A43),
    # copies and factories
    "clone_channels_last": lambda m: _nt(m, A23).clone(memory_format=m.channels_last),
    "copy_sizes": lambda m: _nt(m, A23).copy_(_nt(m, A43)),
    "fill_vector": lambda m: _nt(m, A23).fill_(_t(m, [1.0])),
    "fill_scalar_tensor": lambda m: _nt(m, A23, A43).fill_(_t(m, 2.5)),
    "ones_like": lambda m: m.ones_like(_nt(m, A23, A43)),
    "to_same_is_self": lambda m: [(lambda nt: nt.to(nt) is nt)(_nt(m, A23)),
                                  (lambda nt: nt.to("cpu", copy=True) is nt)(_nt(m, A23))],
    "to_double": lambda m: _nt(m, A23, A43).to(m.float64),
    "to_padded_noncontiguous": lambda m: m.nested.to_padded_tensor(
        _nt(m, A23, A43).transpose(1, 2), 0.0),
    "to_padded_truncating": lambda m: m.nested.to_padded_tensor(_nt(m, A23, A43), 0.0,
                                                                (2, 3, 3)),
    "to_padded_empty": lambda m: m.nested.to_padded_tensor(m.nested.nested_tensor([]), 1.0),
    "zero_": lambda m: _nt(m, A23, A43).zero_(),
    "nested_tensor_of_tensor": lambda m: m.nested.nested_tensor(_t(m, A23)),
    "nested_tensor_of_tuple": lambda m: m.nested.nested_tensor((_t(m, A23),)),
    "nested_tensor_of_lists": lambda m: m.nested.nested_tensor([[1, 2], [3]]),
    "cat_dim0": lambda m: m.cat([_nt(m, A23, A43), _nt(m, A34)], 0),
    "cat_dim0_ranks": lambda m: m.cat([_nt(m, A23), _nt(m, A23[None])], 0),
    "cat_dim0_dense": lambda m: m.cat([_t(m, A23[None]), _nt(m, A23)], 0),
    "cat_last": lambda m: m.cat([_nt(m, A23, A43), _nt(m, A23[:, :1], A43[:, :2].T[:1].T)], -1),
    "cat_dense": lambda m: m.cat([_nt(m, A23), _t(m, A23[None])], -1),
    "cat_noncontiguous": lambda m: m.cat([_nt(m, A34, A36).transpose(1, 2)] * 2, -1),
    "cat_second_ragged": lambda m: m.cat([_nt(m, A23[None], A43[None])] * 2, 1),
    "cat_structures": lambda m: m.cat([_nt(m, A23, A43), _nt(m, A43, A23)], -1),
    "unary_noncontiguous": lambda m: m.abs(_nt(m, A34, A36).transpose(1, 2)),
    "isinf": lambda m: m.isinf(_nt(m, A23, A43)),
    "isposinf": lambda m: m.isposinf(_nt(m, A23, A43)),
    "silu_in_place": lambda m: m.nn.functional.silu(_nt(m, A23, A43), inplace=True),
    "ge_scalar_noncontiguous": lambda m: m.ge(_nt(m, A34, A36).transpose(1, 2), 0.0),
    "eq_scalar": lambda m: m.eq(_nt(m, A23, A43), 0.0),
    "select": lambda m: _nt(m, A23, A43).select(2, 1),
    "select_out_of_range": lambda m: _nt(m, A23, A43).select(1, 3),
    "select_dim0": lambda m: _nt(m, A23, A43).select(0, 1),
    "split_with_sizes": lambda m: _nt(m, A36, A36[:2]).split_with_sizes([1, 2, 3], -1),
    "split_with_sizes_dim1": lambda m: _nt(m, A36, A36[:2]).split_with_sizes([1, 2], 1),
    "split_with_sizes_sum": lambda m: _nt(m, A36, A36[:2]).split_with_sizes([1, 2], -1),
    "split_with_sizes_noncontiguous": lambda m: _nt(m, A34, A36).transpose(1, 2).split_with_sizes(
        [1, 2], -1),
    "add_transposed": lambda m: _nt(m, A34, A36).transpose(1, 2) + _nt(m, A34.T, A36.T),
    "div_strides": lambda m: _nt(m, A34, A36).transpose(1, 2) / _nt(m, A34.T, A36.T),
    "div_transposed_both": lambda m: _nt(m, A34, A36).transpose(1, 2) / _nt(
        m, A34, A36).transpose(1, 2),
    "div_offsets": lambda m: (lambda a, b: a / b)(*_nt(m, A34, A36[:, :4]).chunk(2, -1)),
    "mul_strides": lambda m: _nt(m, A34, A36).transpose(1, 2) * _nt(m, A34.T, A36.T),
    "add_dense_b1d": lambda m: _nt(m, A23, A43) + _t(m, A23[:, None, :]),
    "masked_fill": lambda m: _nt(m, A23, A43).masked_fill(_nt(m, A23 < 0, A43 < 0), 0.0),
    "storage_offsets": lambda m: _nt(m, A23, A43)._nested_tensor_storage_offsets(),
    "storage_offsets_chunk": lambda m: _nt(m, A36, A36[:2]).chunk(3, -1)[1]
    ._nested_tensor_storage_offsets(),
    "strides_chunk": lambda m: _nt(m, A36, A36[:2]).chunk(3, -1)[1]._nested_tensor_strides(),
    "strides_transposed": lambda m: _nt(m, A36, A36[:2]).transpose(1, 2)._nested_tensor_strides(),
    "narrow": lambda m: (lambda nt: [nt.narrow(0, 1, 1), nt.narrow(0, 1, 1)._base is nt])(
        _nt(m, A23, A43)),
    "narrow_dim1": lambda m: _nt(m, A23, A43).narrow(1, 0, 1),
    "narrow_noncontiguous": lambda m: _nt(m, A23, A43).transpose(1, 2).narrow(0, 0, 1),
    "view_base": lambda m: (lambda nt: nt.view(2, -1, 3)._base is nt)(_nt(m, A23, A43)),
    "unsqueeze_strides": lambda m: [_nt(m, A23, A43).unsqueeze(d)._nested_tensor_strides()
                                    for d in (1, 2, -1)],
    "sdpa_3d": lambda m: m.nn.functional.scaled_dot_product_attention(
        _nt(m, A23, A43[:3]), _nt(m, A43, A36.T[:5]), _nt(m, A43, A36.T[:5])),
    "sdpa_mask": lambda m: m.nn.functional.scaled_dot_product_attention(
        _nt(m, A23), _nt(m, A43), _nt(m, A43), attn_mask=_nt(m, np.ones((2, 4), bool))),
    "sdpa_causal": lambda m: m.nn.functional.scaled_dot_product_attention(
        _nt(m, A23), _nt(m, A43), _nt(m, A43), is_causal=True),
    "type": lambda m: _nt(m, A23).type(),
    # printing
    "repr_leaf": lambda m: repr(m.nested.nested_tensor(
        [m.arange(3.0), m.arange(2.0)], requires_grad=True)),
    "repr_grad_fn": lambda m: repr(m.nested.nested_tensor(
        [m.arange(3.0), m.arange(2.0)], requires_grad=True) * 2),
    "repr_int": lambda m: repr(m.nested.nested_tensor([m.arange(3), m.arange(1)])),
    # the private constructors
    "from_mask": lambda m: m._nested_tensor_from_mask(_t(m, A43[None].repeat(2, 0)),
                                                     _t(m, [[1, 1, 0, 0], [1, 1, 1, 0]]).bool()),
    "from_mask_gaps": lambda m: m._nested_tensor_from_mask(
        _t(m, A43[None].repeat(2, 0)), _t(m, [[1, 0, 1, 0], [1, 1, 1, 0]]).bool()),
    "from_mask_unchecked": lambda m: m._nested_tensor_from_mask(
        _t(m, A43[None].repeat(2, 0)), _t(m, [[1, 0, 1, 0], [1, 1, 1, 0]]).bool(),
        mask_check=False),
    "from_mask_long": lambda m: m._nested_tensor_from_mask(
        _t(m, A43[None].repeat(2, 0)), _t(m, [[1, 1, 0, 0], [1, 1, 1, 0]])),
    "from_mask_2d": lambda m: m._nested_tensor_from_mask(_t(m, A43), _t(m, A43) > 0),
    "from_mask_sizes": lambda m: m._nested_tensor_from_mask(
        _t(m, A43[None].repeat(2, 0)), _t(m, [[1, 1, 0], [1, 1, 1]]).bool()),
    "left_aligned": lambda m: [m._nested_tensor_from_mask_left_aligned(
        _t(m, A43[None].repeat(2, 0)), _t(m, mask).bool())
        for mask in ([[1, 1, 0, 0], [1, 1, 1, 0]], [[1, 0, 1, 0], [1, 1, 1, 0]])],
    "from_padded": lambda m: m._nested_from_padded(_t(m, A43[None].repeat(2, 0)),
                                                   _t(m, [[1, 3], [4, 2]])),
    "from_padded_0213": lambda m: m._nested_from_padded(
        _t(m, np.arange(32.0).reshape(2, 2, 2, 4)), _t(m, [[1, 8], [2, 8]]),
        fuse_transform_0213=True),
    "from_padded_and_example": lambda m: m._nested_from_padded_and_nested_example(
        _t(m, A43[None].repeat(2, 0)), _nt(m, A23, A43[:1])),
    "gelu_in_place": lambda m: m._C._nn.gelu_(_t(m, A23), approximate="tanh"),
    "nested_gelu_": lambda m: m._C._nn.gelu_(_nt(m, A23, A43)),
}


@pytest.mark.parametrize("name", CASES)
def test_same_as_torch(name):
    check(CASES[name])


def test_dropout_transposed_draws_the_same_mask():
    """Dropping a transposed nested tensor drops the same elements as dropping the original
    (the mask follows storage order, as PyTorch's kernel walks the buffer)."""
    nt = _nt(ember, A23, A43)
    with ember.random.fork_rng():
        y0 = ember.nn.functional.dropout(nt, 0.5)
    with ember.random.fork_rng():
        y1 = ember.nn.functional.dropout(nt.transpose(1, 2), 0.5).transpose(1, 2)
    for a, b in zip(y0.unbind(), y1.unbind()):
        assert np.array_equal(a.numpy(), b.numpy())
    kept = np.concatenate([(c.numpy() != 0).ravel() for c in y0.unbind()])
    assert 0 < kept.sum() < kept.size


def _grads(lib, build):
    """The gradients reaching the leaves of `build(lib)` (leaves, loss) through backward."""
    leaves, out = build(lib)
    out.backward()
    return [_normal(lib, leaf.grad) for leaf in leaves]


def _leaves(lib, *arrays):
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]


GRAD_CASES = {
    "bmm": lambda m: (lambda a, b, c, d: ([a, b, c, d], m.nested.to_padded_tensor(
        m.nested.as_nested_tensor([a, b]).bmm(m.nested.as_nested_tensor([c, d])),
        0.0).pow(2).sum()))(*_leaves(m, A23, A43, A34, A36)),
    "matmul_transpose": lambda m: (lambda a, b: ([a, b], m.nested.to_padded_tensor(
        m.matmul(m.nested.as_nested_tensor([a[None], b[None]]),
                 m.nested.as_nested_tensor([a[None], b[None]]).transpose(-1, -2)),
        0.0).sum()))(*_leaves(m, A23, A43)),
    "linear": lambda m: (lambda a, b, w, bias: ([a, b, w, bias], m.nested.to_padded_tensor(
        m.nn.functional.linear(m.nested.as_nested_tensor([a, b]), w, bias), 0.0).exp().sum()))(
        *_leaves(m, A23, A43, A34.T, [1.0, 2.0, 3.0, 4.0])),
    "softmax_reshape": lambda m: (lambda a, b: ([a, b], m.nested.to_padded_tensor(
        m.nn.functional.softmax(m.nested.as_nested_tensor([a, b]).reshape(2, -1, 3, 2), -1),
        0.0).pow(2).sum()))(*_leaves(m, A36, A36[:2])),
    "values": lambda m: (lambda a, b: ([a, b], m.nested.as_nested_tensor([a, b]).transpose(
        1, 2).values().cumsum(0).sum()))(*_leaves(m, A23, A43)),
    "from_mask": lambda m: (lambda d: ([d], m.nested.to_padded_tensor(
        m._nested_tensor_from_mask(d, m.tensor([[1, 1, 0, 0], [1, 1, 1, 0]]).bool()),
        0.0).pow(2).sum()))(*_leaves(m, A43[None].repeat(2, 0))),
    "from_padded_0213": lambda m: (lambda d: ([d], m.nested.to_padded_tensor(
        m._nested_from_padded(d, m.tensor([[1, 8], [2, 8]]), fuse_transform_0213=True),
        0.0).pow(2).sum()))(*_leaves(m, np.arange(32.0).reshape(2, 2, 2, 4))),
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients_same_as_torch(name):
    ours, theirs = _grads(ember, GRAD_CASES[name]), _grads(torch, GRAD_CASES[name])
    assert _same(ours, theirs), f"ember {ours}\ntorch {theirs}"


def _leaf_state(lib):
    """A leaf nested tensor's autograd as PyTorch reports it, before and after backward."""
    nt = _nt(lib, A23, A43, requires_grad=True)
    nt_mul = nt * 2
    as_nt = lib.nested.as_nested_tensor([_t(lib, A23, requires_grad=True)])
    before = [nt.is_leaf, nt.requires_grad, nt.grad is None, nt_mul.is_leaf,
              nt_mul.requires_grad, as_nt.is_leaf, nt.detach().requires_grad]
    nt[0].backward(_t(lib, A23))
    sum_grad = _normal(lib, nt.grad)
    nt.grad = None
    (nt.sum(-1, keepdim=True) * 3).backward(_nt(lib, A23[:, :1], A43[:, :1]))
    return before, sum_grad, _normal(lib, nt.grad)


def test_leaf_autograd_same_as_torch():
    assert _same(_leaf_state(ember), _leaf_state(torch))


def _metadata(lib, nt):
    return [nt._nested_tensor_size().tolist(), nt._nested_tensor_strides().tolist(),
            nt._nested_tensor_storage_offsets().tolist(), [c.tolist() for c in nt.unbind()]]


@pytest.mark.parametrize("view", ["contiguous", "transposed", "chunk"])
def test_checkpoints_load_in_either_library(view):
    """A nested tensor pickles as PyTorch's _rebuild_nested_tensor(buffer, sizes, strides,
    offsets): saved by one library, it loads (weights_only) in the other as the same view."""
    import io

    def make(lib):
        nt = _nt(lib, A36, A36[:2])
        return {"contiguous": nt, "transposed": nt.transpose(1, 2),
                "chunk": nt.chunk(3, -1)[1]}[view]
    for save_lib, load_lib in ((ember, torch), (torch, ember)):
        buffer = io.BytesIO()
        save_lib.save(make(save_lib), buffer)
        buffer.seek(0)
        loaded = load_lib.load(buffer, weights_only=True)
        assert loaded.is_nested
        assert _metadata(load_lib, loaded) == _metadata(torch, make(torch))
