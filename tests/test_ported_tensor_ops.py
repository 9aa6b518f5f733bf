"""Checks ported from PyTorch's test_view_ops.py, test_indexing.py, test_sort_and_select.py,
test_unique.py, test_reductions.py, test_shape_ops.py and test_tensor_creation_ops.py, run
against torch and ember."""
import numpy as np
import pytest

from _ported import same

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _a(L):
    return L.tensor(A)


def _view_facts(L, base, view):
    """What test_view_ops asserts of a view: it is one, of `base`, sharing its storage."""
    return (view._is_view(), view._base is base, view.data_ptr() - base.data_ptr(),
            view.is_contiguous(), view.stride(), view.storage_offset())


def _writes_through(L, make_view):
    base = _a(L)
    view = make_view(base)
    view.fill_(-1)
    return base


VIEWS = {
    "view": lambda L, t: t.view(6, 4),
    "view_as_real": lambda L, t: L.view_as_real(t.to(L.complex64)),
    "view_as_complex": lambda L, t: L.view_as_complex(t[..., :2].contiguous()),
    "view_dtype": lambda L, t: t.view(L.int32),
    "transpose": lambda L, t: t.transpose(0, 2),
    "t": lambda L, t: t[0].t(),
    "T_2d": lambda L, t: t[0].T,
    "mT": lambda L, t: t.mT,
    "mH": lambda L, t: t.mH,
    "permute": lambda L, t: t.permute(2, 0, 1),
    "movedim": lambda L, t: t.movedim(0, -1),
    "diagonal": lambda L, t: t.diagonal(0, 1, 2),
    "select": lambda L, t: t.select(1, 2),
    "narrow": lambda L, t: t.narrow(2, 1, 2),
    "slice_step": lambda L, t: t[:, ::2, 1:],
    "unfold": lambda L, t: t.unfold(2, 2, 1),
    "squeeze": lambda L, t: t[:, :1].squeeze(1),
    "unsqueeze": lambda L, t: t.unsqueeze(1),
    "expand": lambda L, t: t[:, :1].expand(2, 5, 4),
    "as_strided": lambda L, t: t.as_strided((2, 2), (1, 2), 1),
    "unbind": lambda L, t: t.unbind(1)[1],
    "split": lambda L, t: t.split(2, 2)[1],
    "chunk": lambda L, t: t.chunk(2, 2)[1],
    "tensor_split": lambda L, t: t.tensor_split([1], 1)[1],
    "split_with_sizes": lambda L, t: t.split([1, 3], 2)[1],
    "unflatten": lambda L, t: t.unflatten(2, (2, 2)),
    "flatten_contig": lambda L, t: t.flatten(),
    "reshape_contig": lambda L, t: t.reshape(4, 6),
    "view_as": lambda L, t: t.view_as(L.empty(4, 6)),
    "real": lambda L, t: t.to(L.complex64).real,
    "imag": lambda L, t: t.to(L.complex64).imag,
    "alias_indexing": lambda L, t: t[...],
    "none_indexing": lambda L, t: t[None, 1],
    "swapaxes": lambda L, t: t.swapaxes(0, 1),
    "detach": lambda L, t: t.detach(),
    "conj_real": lambda L, t: t.conj(),
    "hsplit": lambda L, t: L.hsplit(t, 3)[0],
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_ops_is_view_and_base(name):
    make = VIEWS[name]

    def fn(L):
        base = _a(L)
        view = make(L, base)
        root = base if view._base is base else view._base
        facts = (view._is_view(), view._base is root, tuple(view.shape), view.dtype)
        if view._is_view() and name not in ("view_as_complex", "real", "imag", "view_as_real"):
            facts += (view.stride(), view.storage_offset(),
                      L.equal(view, make(L, _a(L))))
        return facts
    same(fn)


NOT_VIEWS = {
    "reshape_copy": lambda L, t: t.transpose(0, 1).reshape(-1),
    "flatten_copy": lambda L, t: t.transpose(0, 1).flatten(),
    "contiguous_copy": lambda L, t: t.transpose(0, 1).contiguous(),
    "advanced_index": lambda L, t: t[[0, 1]],
    "bool_index": lambda L, t: t[t > 3],
    "clone": lambda L, t: t.clone(),
    "to_same": lambda L, t: t.to(L.float32),
    "view_copy": lambda L, t: L.view_copy(t, (6, 4)),
    "contiguous_self": lambda L, t: t.contiguous(),
}


@pytest.mark.parametrize("name", list(NOT_VIEWS))
def test_view_ops_not_views(name):
    same(lambda L: (lambda t, r: (r._is_view(), r._base is None, r is t,
                                  r.data_ptr() == t.data_ptr()))(*(lambda t: (t, NOT_VIEWS[name](L, t)))(_a(L))))


CHECKS = {
    # test_view_ops
    "view_write_through": lambda L: _writes_through(L, lambda t: t.transpose(0, 1)[1:, ::2]),
    "diagonal_write_through": lambda L: _writes_through(L, lambda t: t[0].diagonal(1)),
    "unfold_write_through": lambda L: _writes_through(L, lambda t: t.unfold(2, 2, 2)[:, :, 0]),
    "view_wrong_stride": (lambda L: _a(L).transpose(0, 1).view(-1), "view size is not compatible"),
    "view_dtype_wrong_size": (lambda L: _a(L)[..., :3].view(L.float64), "self.size\\(-1\\) must be divisible"),
    "view_dtype_shapes": lambda L: (_a(L).view(L.int16).shape, _a(L).view(L.uint8).stride(),
                                    L.ones(2, 4, dtype=L.int8).view(L.int32).shape),
    "view_bad_size": (lambda L: _a(L).view(5, 5), "shape '\\[5, 5\\]' is invalid for input of size 24"),
    "view_two_minus_one": (lambda L: _a(L).view(-1, -1), "only one dimension can be inferred"),
    "reshape_zero_numel": lambda L: L.empty(0, 3).reshape(-1, 0, 3).shape,
    "reshape_minus_one_empty": (lambda L: L.empty(0, 3).reshape(-1, 0), "cannot reshape tensor of 0 elements"),
    "expand_errors": (lambda L: L.ones(3, 1).expand(2, 3), "must match the existing size"),
    "expand_minus_one": lambda L: L.ones(3, 1).expand(-1, 4).stride(),
    "expand_new_dim_minus_one": (lambda L: L.ones(3).expand(-1, 3), "expanded size of the tensor \\(-1\\) isn't allowed"),
    "squeeze_multiple": lambda L: (L.ones(1, 2, 1).squeeze((0, 2)).shape, L.ones(1, 2, 1).squeeze(1).shape,
                                   L.ones(1).squeeze().shape, L.ones(()).squeeze(0).shape),
    "transpose_scalar": lambda L: L.tensor(1.).t().shape,
    "t_3d": (lambda L: _a(L).t(), "expects a tensor with <= 2 dimensions"),
    "contiguous_strides": lambda L: (L.empty(2, 1, 3).stride(), L.empty(0, 2).stride(),
                                     L.empty(2, 3).t().contiguous().stride(),
                                     L.empty(2, 1, 3).transpose(0, 1).is_contiguous()),
    "inplace_view_of_leaf": (lambda L: L.ones(3, requires_grad=True)[:2].mul_(2),
                             "a view of a leaf Variable that requires grad is being used in an in-place"),
    "inplace_on_leaf": (lambda L: L.ones(3, requires_grad=True).mul_(2),
                        "a leaf Variable that requires grad is being used in an in-place"),
    "unbind_inplace_error": (lambda L: (L.ones(3, 2, requires_grad=True) * 1).unbind(0)[0].mul_(2),
                             "Output 0 of Unbind(Backward0)? is a view and is being modified inplace"),
    "view_grad_fn_after_inplace": lambda L: (lambda b: (b[0].mul_(2), type(b.grad_fn).__name__,
                                                        b.sum().backward()))(L.ones(2, 2, requires_grad=True) * 1)[1],
    # test_indexing
    "index_mixed_adv_slices": lambda L: (_a(L)[[0, 1], :, [1, 2]], _a(L)[:, [0, 2], [1, 3]],
                                         _a(L)[[[0], [1]], [0, 2]], _a(L)[1, [0, 2], 1:3]),
    "index_bool_and_int": lambda L: (_a(L)[_a(L)[:, :, 0] > 5], _a(L)[L.tensor([True, False]), 1],
                                     _a(L)[..., L.tensor([0, 3])]),
    "index_put_accumulate": lambda L: L.zeros(5).index_put_((L.tensor([0, 0, 2]),), L.tensor([1., 2., 3.]),
                                                            accumulate=True),
    "setitem_broadcast": lambda L: (lambda t: (t.__setitem__((slice(None), [0, 2]), L.tensor([7., 8.])), t)[1])(_a(L)),
    "setitem_bool_scalar": lambda L: (lambda t: (t.__setitem__(t > 10, 0), t)[1])(_a(L)),
    "setitem_adv_nonadjacent": lambda L: (lambda t: (t.__setitem__(([0, 1], slice(None), [1, 2]), L.arange(6.).view(2, 3)), t)[1])(_a(L)),
    "setitem_dup_indices_last_wins": lambda L: (lambda t: (t.__setitem__(L.tensor([1, 1]), L.tensor([1., 2.])), t.shape)[1])(L.zeros(3)),
    "index_out_of_range": (lambda L: _a(L)[[0, 2]], "index 2 is out of bounds for dimension 0 with size 2"),
    "index_int_out_of_range": (lambda L: _a(L)[5], "index 5 is out of bounds for dimension 0 with size 2"),
    "index_float_tensor": (lambda L: _a(L)[L.tensor([0.])], "tensors used as indices must be long, int"),
    "index_too_many": (lambda L: _a(L)[0, 0, 0, 0], "too many indices for tensor of dimension 3"),
    "index_bool_shape_mismatch": (lambda L: _a(L)[L.tensor([True, False, True])],
                                  "The shape of the mask \\[3\\] at index 0 does not match"),
    "index_zero_dim_bool": lambda L: (L.tensor(5.)[L.tensor(True)], L.tensor(5.)[L.tensor(False)], L.tensor(5.)[None]),
    "index_byte_mask_deprecated": lambda L: _a(L)[L.tensor([1, 0], dtype=L.uint8)].shape,
    "index_list_of_tensors": lambda L: _a(L)[[L.tensor(0), L.tensor(1)]],
    "index_int32": lambda L: _a(L)[L.tensor([1, 0], dtype=L.int32)],
    "index_empty_list": lambda L: _a(L)[[]].shape,
    "index_step_neg": (lambda L: _a(L)[::-1], "step must be greater than zero"),
    "index_with_numpy_int_array": lambda L: _a(L)[np.array([1, 0])],
    "index_ellipsis_none_mix": lambda L: _a(L)[None, ..., None, 1].shape,
    "index_copy": lambda L: L.zeros(3, 2).index_copy(0, L.tensor([2, 0]), L.ones(2, 2)),
    "index_fill_neg": lambda L: L.zeros(3, 2).index_fill(-1, L.tensor([1]), 5),
    "index_add_alpha": lambda L: L.zeros(3).index_add(0, L.tensor([0, 0]), L.tensor([1., 2.]), alpha=3),
    "take_along_dim": lambda L: (L.take_along_dim(_a(L), L.tensor([[[0]]]), dim=2),
                                 L.take_along_dim(_a(L), L.tensor([0, 23]))),
    "put_accumulate": lambda L: L.zeros(2, 2).put_(L.tensor([0, 0, 3]), L.tensor([1., 1., 2.]), accumulate=True),
    "masked_scatter": lambda L: L.zeros(2, 2).masked_scatter(L.tensor([[True, False], [False, True]]), L.arange(4.)),
    "scatter_reduce": lambda L: (L.zeros(3).scatter_reduce(0, L.tensor([0, 0, 2]), L.tensor([1., 5., 2.]), "amax"),
                                 L.ones(3).scatter_reduce(0, L.tensor([0, 0, 2]), L.tensor([1., 5., 2.]), "mean",
                                                          include_self=False),
                                 L.ones(3).scatter_reduce(0, L.tensor([0, 0, 2]), L.tensor([2., 5., 2.]), "prod")),
    "scatter_value_reduce": lambda L: L.ones(3).scatter(0, L.tensor([0, 0]), 2., reduce="multiply"),
    "gather_errors": (lambda L: L.ones(2, 2).gather(1, L.tensor([[0, 5]])), "index 5 is out of bounds"),
    # test_sort_and_select / test_unique
    "sort_stable": lambda L: L.sort(L.tensor([2, 1, 2, 1, 0, 2]), stable=True),
    "sort_stable_descending": lambda L: L.sort(L.tensor([2., 1, 2, 1, 0, 2]), stable=True, descending=True),
    "sort_nan": lambda L: L.sort(L.tensor([1., float("nan"), -1, float("inf")])),
    "sort_nan_desc": lambda L: L.sort(L.tensor([1., float("nan"), -1, float("-inf")]), descending=True),
    "sort_bool": lambda L: L.sort(L.tensor([True, False, True]), stable=True),
    "argsort_stable": lambda L: L.argsort(L.tensor([3, 1, 3, 1]), stable=True, descending=True),
    "msort": lambda L: L.msort(L.tensor([[3, 1], [1, 2]])),
    "topk_sorted": lambda L: L.topk(L.tensor([1., 3, 2, 3]), 2),
    "topk_largest_false": lambda L: L.topk(L.tensor([[1., 3, 2, 0]]), 3, largest=False, dim=1),
    "topk_too_big": (lambda L: L.topk(L.tensor([1., 2]), 3), "selected index k out of range"),
    "kthvalue": lambda L: L.kthvalue(L.tensor([[3., 1, 2], [0, 5, 4]]), 2, 1, keepdim=True),
    "unique_sorted_inverse_counts": lambda L: L.unique(L.tensor([2, 1, 2, 3, 1]), return_inverse=True, return_counts=True),
    "unique_dim": lambda L: L.unique(L.tensor([[1, 2], [1, 2], [0, 1]]), dim=0, return_inverse=True, return_counts=True),
    "unique_consecutive": lambda L: L.unique_consecutive(L.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive_dim": lambda L: L.unique_consecutive(L.tensor([[1, 1], [1, 1], [2, 0]]), dim=0),
    "unique_nan": lambda L: L.unique(L.tensor([float("nan"), 1., float("nan")])),
    "unique_bool": lambda L: L.unique(L.tensor([True, False, True])),
    "unique_empty": lambda L: L.unique(L.tensor([], dtype=L.long), return_counts=True),
    "where_one_arg": lambda L: L.where(L.tensor([[0, 1], [2, 0]])),
    "where_scalar_both": lambda L: L.where(L.tensor([True, False]), 1., 0),
    "where_cond_not_bool": (lambda L: L.where(L.tensor([1, 0]), L.ones(2), L.zeros(2)),
                            "where expected condition to be a boolean tensor"),
    "nonzero_as_tuple": lambda L: (L.nonzero(L.tensor([[0, 1], [1, 1]]), as_tuple=True), L.tensor(5).nonzero(),
                                   L.tensor(5).nonzero(as_tuple=True), L.tensor(0).nonzero(as_tuple=True)),
    "argwhere": lambda L: L.argwhere(L.tensor([[0., 1], [1, 0]])),
    "count_nonzero": lambda L: (L.count_nonzero(L.tensor([[0, 1], [2, 0]]), dim=0),
                                L.count_nonzero(L.tensor([[0, 1], [2, 0]]), dim=(0, 1))),
    "searchsorted": lambda L: (L.searchsorted(L.tensor([1, 3, 5]), L.tensor([3, 6])),
                               L.searchsorted(L.tensor([1, 3, 5]), L.tensor([3, 6]), right=True, out_int32=True),
                               L.searchsorted(L.tensor([5, 1, 3]), L.tensor([3]), sorter=L.tensor([1, 2, 0])),
                               L.bucketize(L.tensor([3, 6]), L.tensor([1, 3, 5]), right=True)),
    "max_dim_ties": lambda L: (L.max(L.tensor([1, 3, 3]), 0), L.min(L.tensor([[2, 1, 1]]), 1, keepdim=True),
                               L.argmax(L.tensor([1., 3, 3])), L.argmin(L.tensor([[2, 1, 1]]), 1)),
    "max_nan": lambda L: (L.max(L.tensor([1., float("nan"), 3])), L.argmax(L.tensor([1., float("nan"), 3])),
                          L.amax(L.tensor([1., float("nan")]))),
    "mode": lambda L: L.mode(L.tensor([[1, 2, 2, 3, 3]]), 1),
    "median_even": lambda L: (L.median(L.tensor([1., 4, 2, 3])), L.median(L.tensor([[1., 4, 2, 3]]), 1),
                              L.nanmedian(L.tensor([1., float("nan"), 2]))),
    # test_reductions
    "sum_keepdim_dims": lambda L: (_a(L).sum((0, 2), keepdim=True), _a(L).sum(-1), _a(L).sum(()),
                                   _a(L).sum(dim=[]), L.ones(0, 3).sum(0)),
    "sum_dtype": lambda L: (L.tensor([100, 100], dtype=L.int8).sum(dtype=L.int8),
                            L.tensor([1., 2]).sum(dtype=L.float64), L.tensor([1, 2]).sum(dtype=L.float32)),
    "sum_out": lambda L: L.sum(_a(L), 1, out=L.empty(2, 4)),
    "mean_keepdim": lambda L: (_a(L).mean((0, 1), keepdim=True), _a(L).mean(-1, dtype=L.float64)),
    "mean_empty": lambda L: (L.ones(0).mean(), L.ones(0, 2).mean(0)),
    "prod_empty": lambda L: (L.ones(0).prod(), L.ones(0, dtype=L.int32).prod(), L.ones(0, dtype=L.bool).sum()),
    "amax_empty": (lambda L: L.ones(0).amax(), "Expected reduction dim to be specified for input.numel\\(\\) == 0|"
                   "amax\\(\\): Expected reduction dim"),
    "max_empty": (lambda L: L.ones(0).max(), "max\\(\\): Expected reduction dim to be specified for input.numel"),
    "argmax_empty": (lambda L: L.ones(0).argmax(), "argmax\\(\\): Expected reduction dim to be specified"),
    "amax_dims": lambda L: (_a(L).amax((0, 2)), _a(L).amin(1, keepdim=True), L.aminmax(_a(L), dim=1)),
    "var_std_correction": lambda L: (_a(L).var(1, correction=0), _a(L).std((0, 2), unbiased=False, keepdim=True),
                                     L.var_mean(_a(L), 1, correction=2), L.std_mean(_a(L))),
    "var_single": lambda L: (L.tensor([1.]).var(), L.tensor([1.]).std(correction=0)),
    "norm_p": lambda L: (_a(L).norm(), _a(L).norm(1, dim=1), _a(L).norm(float("inf")), _a(L).norm("fro", dim=(1, 2)),
                         _a(L).norm(0), _a(L).norm(-1, dim=0)),
    "logsumexp_inf": lambda L: (L.logsumexp(L.tensor([float("-inf"), float("-inf")]), 0),
                                L.logsumexp(L.tensor([float("inf"), 1.]), 0),
                                L.logsumexp(L.tensor([[1, 2]]), 1)),
    "cumsum_dtype": lambda L: (L.tensor([1, 2], dtype=L.int8).cumsum(0), L.tensor([True, True]).cumsum(0),
                               L.tensor([1., 2]).cumprod(0, dtype=L.float64),
                               L.cummax(L.tensor([1, 3, 2, 3]), 0), L.cummin(L.tensor([2., float("nan"), 1]), 0)),
    "all_any_dtypes": lambda L: (L.tensor([1, 2], dtype=L.uint8).all(), L.tensor([0., 1]).any(),
                                 L.ones(2, 0).all(1), L.ones(2, 0).any(1), L.tensor([0, 2], dtype=L.uint8).any(0),
                                 _a(L).all((0, 2))),
    "nansum_nanmean": lambda L: (L.nansum(L.tensor([1., float("nan")])), L.nanmean(L.tensor([[1., float("nan")]]), 1)),
    "reduction_bad_dim": (lambda L: _a(L).sum(3), "Dimension out of range \\(expected to be in range of \\[-3, 2\\], but got 3\\)"),
    "reduction_dup_dim": (lambda L: _a(L).sum((0, 0)), "dim 0 appears multiple times in the list of dims"),
    "quantile": lambda L: (L.quantile(L.tensor([1., 2, 3, 4]), 0.4), L.quantile(L.tensor([[1., 2, 3, 4]]),
                                                                           L.tensor([0.1, 0.9]), dim=1, keepdim=True,
                                                                           interpolation="midpoint"),
                           L.nanquantile(L.tensor([1., float("nan"), 3]), 0.5)),
    "histc_bincount": lambda L: (L.histc(L.tensor([1., 2, 1]), bins=4, min=0, max=3),
                                 L.bincount(L.tensor([0, 1, 1, 3])),
                                 L.bincount(L.tensor([0, 1]), weights=L.tensor([0.5, 1.]), minlength=4)),
    # test_shape_ops
    "flip_roll": lambda L: (_a(L).flip(0, 2), _a(L).roll(1), _a(L).roll((1, -1), (0, 2)), _a(L).rot90(1, (1, 2))),
    "diag_embed_tril": lambda L: (L.diag_embed(L.ones(2, 3), 1), _a(L).tril(-1), _a(L).triu(1),
                                  L.tril_indices(3, 2, 1), L.triu_indices(3, 3, -1)),
    "cat_empty_legacy": lambda L: (L.cat([L.ones(2, 3), L.tensor([])]), L.cat([L.ones(0, 3), L.ones(2, 3)])),
    "cat_errors": (lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)]),
                   "Sizes of tensors must match except in dimension 0"),
    "stack_errors": (lambda L: L.stack([L.ones(2), L.ones(3)]), "stack expects each tensor to be equal size"),
    "movedim_errors": (lambda L: _a(L).movedim((0, 1), (0,)), "movedim: Invalid source or destination dims"),
    "nonzero_static": lambda L: L.nonzero_static(L.tensor([0, 1, 1]), size=4, fill_value=-1),
    "clamp_tensor_bounds": lambda L: (L.clamp(L.arange(5.), L.tensor(1.), L.tensor([3.] * 5)),
                                      L.clamp(L.arange(5.), min=3, max=1)),
    "clamp_no_bounds": (lambda L: L.clamp(L.arange(5.)), "At least one of 'min' or 'max' must not be None"),
    "flatten_dims": lambda L: (_a(L).flatten(1).shape, L.tensor(3.).flatten().shape, _a(L).flatten(0, -2).shape),
    "repeat_tile": lambda L: (L.ones(2).repeat(2, 2).shape, L.ones(2, 3).tile((2,)).shape,
                              L.repeat_interleave(L.tensor([1, 2]), 2), L.repeat_interleave(L.tensor([2, 1])),
                              L.tensor([[1, 2]]).repeat_interleave(L.tensor([1, 3]), dim=1)),
    "repeat_fewer_dims": (lambda L: L.ones(2, 2).repeat(2), "Number of dimensions of repeat dims can not be smaller"),
    # test_tensor_creation_ops
    "tensor_infer": lambda L: (L.tensor([1, 2.5]), L.tensor([True, 1]), L.tensor([[1], [2]]), L.tensor([]),
                               L.tensor(3), L.tensor([1 + 2j, 1]), L.tensor(np.float16(1.5)), L.tensor([np.int8(1)])),
    "tensor_ragged": (lambda L: L.tensor([[1, 2], [3]]), "expected sequence of length 2 at dim 1 \\(got 1\\)"),
    "tensor_from_tensors_list": lambda L: L.tensor([L.tensor(1), L.tensor(2)]),
    "as_tensor_shares": lambda L: (lambda n: (L.as_tensor(n).dtype, L.from_numpy(n).add_(1), n.tolist()))(np.ones(2, np.int16)),
    "arange_float_steps": lambda L: (L.arange(0, 1, 0.1).shape, L.arange(-1, 1, 0.5), L.arange(10, 0, -3),
                                     L.arange(0, 5, dtype=L.float64), L.arange(1.0, 3), L.arange(L.tensor(3))),
    "arange_bad_step": (lambda L: L.arange(0, 10, -1), "upper bound and lower bound inconsistent with step sign"),
    "arange_zero_step": (lambda L: L.arange(0, 10, 0), "step must be nonzero"),
    "range_deprecated": lambda L: L.range(0, 3),
    "linspace_logspace": lambda L: (L.linspace(-1, 1, 5), L.linspace(0, 10, 1), L.linspace(0, 1, 0),
                                    L.linspace(0, 10, 5, dtype=L.int64), L.logspace(0, 2, 3, base=2),
                                    L.linspace(L.tensor(0.), L.tensor(1.), 3)),
    "linspace_negative_steps": (lambda L: L.linspace(0, 1, -1), "number of steps must be non-negative"),
    "full_infer": lambda L: (L.full((2,), 1), L.full((2,), True), L.full((2,), 1.5), L.full((1,), 1j),
                             L.full((2,), 7, dtype=L.uint8)),
    "zeros_like_keeps": lambda L: (L.zeros_like(_a(L).transpose(0, 2)).stride(),
                                   L.ones_like(L.ones(2, dtype=L.int8)).dtype,
                                   L.empty_like(_a(L)[:, ::2]).stride(),
                                   L.full_like(L.ones(2, dtype=L.int32), 2.7),
                                   L.rand_like(L.ones(2, dtype=L.float64)).dtype,
                                   L.randint_like(L.ones(2), 3).dtype),
    "eye": lambda L: (L.eye(2, 3), L.eye(3, dtype=L.bool), L.eye(0)),
    "empty_negative": (lambda L: L.empty(-1), "Trying to create tensor with negative dimension -1"),
    "zeros_size_forms": lambda L: (L.zeros(2, 3).shape, L.zeros((2, 3)).shape, L.zeros([2]).shape,
                                   L.zeros(L.Size([1, 2])).shape, L.zeros(()).shape, L.zeros([]).shape),
    "randint_dtype": lambda L: (L.randint(3, (2,)).dtype, L.randint(0, 3, (2,), dtype=L.int8).dtype,
                                L.randperm(4).dtype, L.randperm(4, dtype=L.int32).sort().values),
    "complex_polar": lambda L: (L.complex(L.tensor([1.]), L.tensor([2.])), L.polar(L.tensor([1.]), L.tensor([0.]))),
    "complex_bad_dtype": (lambda L: L.complex(L.tensor([1]), L.tensor([2])), "Expected both inputs to be Half, Float or Double"),
    "meshgrid": lambda L: (L.meshgrid(L.tensor([1, 2]), L.tensor([3, 4, 5]), indexing="ij"),
                           L.meshgrid(L.tensor([1, 2]), L.tensor([3, 4, 5]), indexing="xy"),
                           L.cartesian_prod(L.tensor([1, 2]), L.tensor([3])),
                           L.combinations(L.tensor([1, 2, 3]), 2), L.combinations(L.tensor([1, 2]), with_replacement=True)),
    "tensor_new_methods": lambda L: (L.ones(2, dtype=L.int8).new_tensor([1.5]), L.ones(2, dtype=L.int8).new_zeros(3),
                                     L.ones(2).new_full((2,), 3), L.ones(2, dtype=L.half).new_ones((1,)),
                                     L.ones(2).new_empty((0,)).shape),
    "item_and_tolist": lambda L: (L.tensor([1.5]).item(), L.tensor(2).item(), L.tensor([[1, 2]]).tolist(),
                                  L.tensor(True).item(), L.tensor(1 + 1j).item(), int(L.tensor(3.7)),
                                  float(L.tensor([2])), bool(L.tensor([0.])), L.tensor(2).__index__()),
    "item_many": (lambda L: L.ones(2).item(), "a Tensor with 2 elements cannot be converted to Scalar"),
    "bool_many": (lambda L: bool(L.ones(2)), "Boolean value of Tensor with more than one value is ambiguous"),
    "index_float_dunder": (lambda L: [1, 2][L.tensor(1.)], "only integer tensors of a single element"),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_tensor_ops(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)


def test_creation_seeded_values():
    """test_tensor_creation_ops: same seed, same stream, for the creation functions that draw."""
    def fn(L):
        L.manual_seed(0)
        return (L.randperm(6), L.randint(0, 10, (4,)), L.empty(3).random_(0, 5),
                L.empty(3, dtype=L.int64).random_(7))
    same(fn)
