"""Checks ported from PyTorch's test/test_view_ops.py and test/test_shape_ops.py, run against
torch and ember; tests/test_ported_tensor_ops.py has the first batch.

Each check is named after the PyTorch test method it comes from."""
import numpy as np
import pytest

from _ported import same


def _r(L, *shape, dtype="float32"):
    n = int(np.prod(shape))
    return L.arange(n, dtype=getattr(L, dtype)).reshape(shape)


def _view_facts(L, base, v):
    """What test_view_ops asserts: is it a view of base, where, with which strides."""
    return (v._is_view(), v._base is base, v.shape, v.stride(), v.storage_offset(), v.is_contiguous())


def _raised(L, *fns):
    out = []
    for fn in fns:
        try:
            fn(L.ones(2))
        except Exception as exc:  # the check compares the exception classes
            out.append(exc)
    return out


def _fill_through(L, base, view_of):
    view_of(base).fill_(-1)
    return base


CHECKS = {
    # test_view_ops: TestViewOps
    "contiguous_self": lambda L: (lambda t: t.contiguous() is t)(_r(L, 2, 3)),
    "contiguous_nonview": lambda L: (lambda t: (t.contiguous()._is_view(), t.contiguous().stride()))(_r(L, 2, 3).t()),
    "reshape_view_semantics": lambda L: (_view_facts(L, *(lambda t: (t, t.reshape(6, 4)))(_r(L, 2, 3, 4))),
                                         (lambda t: t.reshape(-1)._is_view())(_r(L, 3, 4).t()),
                                         _view_facts(L, *(lambda t: (t, t.reshape(2, 1, 3, 1)))(_r(L, 2, 3)))),
    "reshape_nonview_expand": lambda L: (lambda t: (t.reshape(6)._is_view(), t.reshape(2, 3, 1)._is_view()))(_r(L, 3).expand(2, 3)),
    "flatten_view": lambda L: [_view_facts(L, *(lambda t: (t, f(t)))(_r(L, 2, 3, 4)))
                               for f in (lambda t: t.flatten(), lambda t: t.flatten(1), lambda t: t.flatten(0, 1), lambda t: t.flatten(2))],
    "flatten_nonview": lambda L: [f(_r(L, 2, 3, 4).transpose(0, 1))._is_view() for f in (lambda t: t.flatten(), lambda t: t.flatten(1))]
                                 + [L.tensor(5.).flatten()._is_view(), L.tensor(5.).flatten().shape],
    "flatten_errors": (lambda L: _r(L, 2, 3).flatten(1, 0), "flatten\\(\\) has invalid args: start_dim cannot come after end_dim"),
    "expand_view": lambda L: (_view_facts(L, *(lambda t: (t, t.expand(4, 3)))(_r(L, 3))),
                              _view_facts(L, *(lambda t: (t, t.expand_as(L.empty(2, 3, 1))))(_r(L, 3, 1))),
                              _fill_through(L, _r(L, 3), lambda t: t.expand(2, 3)[0])),
    "expand_zero": lambda L: (_r(L, 1, 3).expand(0, 3).shape, L.empty(0, 1).expand(0, 4).shape),
    "expand_errors_zero": (lambda L: L.empty(0, 1).expand(2, 1), "The expanded size of the tensor \\(2\\) must match the existing size \\(0\\)"),
    "diagonal_view": lambda L: (_view_facts(L, *(lambda t: (t, t.diagonal()))(_r(L, 3, 4))),
                                _view_facts(L, *(lambda t: (t, t.diagonal(-1, 0, 2)))(_r(L, 2, 3, 4))),
                                _view_facts(L, *(lambda t: (t, L.diagonal(t, 5)))(_r(L, 3, 4))),
                                _fill_through(L, _r(L, 3, 3), lambda t: t.diagonal(1))),
    "diagonal_errors": (lambda L: _r(L, 3, 4).diagonal(0, 1, 1), "diagonal dimensions cannot be identical 1, 1"),
    "select_view": lambda L: (_view_facts(L, *(lambda t: (t, t.select(0, -1)))(_r(L, 3, 4))),
                              _view_facts(L, *(lambda t: (t, t[:, 2]))(_r(L, 3, 4)))),
    "select_errors": (lambda L: _r(L, 3, 4).select(1, 4), "select\\(\\): index 4 out of range for tensor of size \\[3, 4\\] at dimension 1"),
    "select_scalar": (lambda L: L.tensor(1.).select(0, 0), "select\\(\\) cannot be applied to a 0-dim tensor"),
    "unbind_view": lambda L: [(v._is_view(), v.storage_offset(), v.stride()) for v in _r(L, 3, 4).unbind(1)],
    "unbind_grad": lambda L: (lambda x: (sum(v.sum() * i for i, v in enumerate(x.unbind(1))).backward(), x.grad)[1])(
        L.ones(2, 3, requires_grad=True)),
    "split_view": lambda L: [(v._is_view(), v.storage_offset(), v.shape) for v in _r(L, 5, 2).split(2)]
                            + [(v.shape,) for v in _r(L, 5, 2).split([1, 4])] + [len(_r(L, 0, 2).split(2))],
    "split_errors": (lambda L: _r(L, 5).split([2, 2]), "split_with_sizes expects split_sizes to sum exactly to 5"),
    "split_negative_size": (lambda L: _r(L, 5).split([6, -1]), "split_with_sizes expects split_sizes have only non-negative entries"),
    "chunk_view": lambda L: ([v.shape for v in _r(L, 5).chunk(3)], [v.shape for v in _r(L, 6).chunk(4)],
                             [v.shape for v in _r(L, 0).chunk(3)], [v.shape for v in _r(L, 2).chunk(5)]),
    "chunk_errors": (lambda L: _r(L, 5).chunk(0), "chunk expects `chunks` to be greater than 0, got: 0"),
    "tensor_split_view": lambda L: ([v.shape for v in _r(L, 7).tensor_split(3)], [v.shape for v in _r(L, 7).tensor_split([1, 5, 9])],
                                    [v.shape for v in _r(L, 3, 7).tensor_split(L.tensor(2), 1)],
                                    [v.shape for v in _r(L, 3, 7).tensor_split(L.tensor([2, 4]), dim=1)],
                                    [v._is_view() for v in _r(L, 7).tensor_split(2)]),
    "tensor_split_errors": (lambda L: _r(L, 7).tensor_split(0), "number of sections must be larger than 0, got 0"),
    "tensor_split_scalar": (lambda L: L.tensor(1.).tensor_split(2), "tensor_split expected at least a 1-dimensional tensor"),
    "hsplit_vsplit_dsplit": lambda L: ([v.shape for v in L.hsplit(_r(L, 2, 4, 2), 2)], [v.shape for v in L.vsplit(_r(L, 4, 2), [1, 3])],
                                       [v.shape for v in L.dsplit(_r(L, 2, 2, 4), 4)], [v.shape for v in L.hsplit(_r(L, 6), 3)]),
    "hsplit_errors": (lambda L: L.hsplit(_r(L, 5), 2), "torch.hsplit attempted to split along dimension 0, but the size of the dimension 5 is not divisible by the split_size 2!"),
    "vsplit_errors": (lambda L: L.vsplit(_r(L, 5), 1), "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!"),
    "dsplit_errors": (lambda L: L.dsplit(_r(L, 2, 5), 1), "torch.dsplit requires a tensor with at least 3 dimension"),
    "T_mT_mH": lambda L: (_r(L, 2, 3).T.shape, _r(L, 2, 3, 4).mT.shape, L.tensor([1j, 2]).reshape(1, 2).mH, _r(L, 3).T.shape,
                          _r(L, 2, 3).adjoint().shape, L.tensor(3.).T.shape),
    "mT_1d_error": (lambda L: _r(L, 3).mT, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."),
    "mH_1d_error": (lambda L: _r(L, 3).mH, "tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor."),
    "transpose_view": lambda L: (_view_facts(L, *(lambda t: (t, t.transpose(0, -1)))(_r(L, 2, 3, 4))),
                                 _view_facts(L, *(lambda t: (t, t.swapdims(1, 2)))(_r(L, 2, 3, 4))),
                                 _fill_through(L, _r(L, 2, 3), lambda t: t.t()[1])),
    "transpose_errors": (lambda L: _r(L, 2, 3).transpose(0, 2), "Dimension out of range \\(expected to be in range of \\[-2, 1\\], but got 2\\)"),
    "permute_view_and_errors": lambda L: (_view_facts(L, *(lambda t: (t, t.permute(-1, 0, 1)))(_r(L, 2, 3, 4))),
                                          _r(L, 2, 3).permute((1, 0)).shape, L.tensor(1.).permute(()).shape),
    "varargs_missing": (lambda L: L.tensor(1.).permute(), 'permute\\(\\) missing 1 required positional arguments: "dims"'),
    "varargs_missing_others": lambda L: [type(e).__name__ for e in _raised(L, lambda t: t.reshape(), lambda t: t.repeat(),
                                                                          lambda t: t.expand(), lambda t: t.tile(), lambda t: t.flip(),
                                                                          lambda t: t.sum_to_size(), lambda t: t.view())],
    "permute_dup_error": (lambda L: _r(L, 2, 3).permute(0, 0), "permute\\(\\): duplicate dims are not allowed."),
    "permute_wrong_len": (lambda L: _r(L, 2, 3).permute(0), "permute\\(sparse_coo\\): number of dimensions in the tensor input does not match|number of dims don't match in permute"),
    "ravel": lambda L: ((lambda t: (t.ravel()._is_view(), t.ravel().shape))(_r(L, 2, 3)),
                        (lambda t: (t.ravel()._is_view(), t.ravel()))(_r(L, 2, 3).t()), L.tensor(1.).ravel().shape),
    "unfold_view": lambda L: (_view_facts(L, *(lambda t: (t, t.unfold(1, 2, 2)))(_r(L, 2, 5))),
                              L.tensor(3.).unfold(0, 1, 1), _r(L, 5).unfold(0, 5, 1).shape, _r(L, 4).unfold(0, 1, 3)),
    "unfold_errors": (lambda L: _r(L, 5).unfold(0, 6, 1), "maximum size for tensor at dimension 0 is 5 but size is 6"),
    "unfold_step_zero": (lambda L: _r(L, 5).unfold(0, 2, 0), "step is 0 but must be > 0"),
    "squeeze_view": lambda L: (_view_facts(L, *(lambda t: (t, t.squeeze()))(_r(L, 1, 3, 1))),
                               _view_facts(L, *(lambda t: (t, t.squeeze(-1)))(_r(L, 1, 3, 1))),
                               _r(L, 1, 3, 1).squeeze(1).shape, _r(L, 1, 3, 1).squeeze([0, 1, 2]).shape),
    "unsqueeze_view": lambda L: (_view_facts(L, *(lambda t: (t, t.unsqueeze(-1)))(_r(L, 2, 3))), _r(L, 2, 3).unsqueeze(1).stride(),
                                 L.tensor(1.).unsqueeze(0).shape, _r(L, 2, 3).t().unsqueeze(1).stride()),
    "unsqueeze_errors": (lambda L: _r(L, 2, 3).unsqueeze(3), "Dimension out of range \\(expected to be in range of \\[-3, 2\\], but got 3\\)"),
    "as_strided_view": lambda L: (_view_facts(L, *(lambda t: (t, t.as_strided((2, 2), (1, 3), 2)))(_r(L, 9))),
                                  _r(L, 9)[2:].as_strided((2,), (2,)).storage_offset(), _r(L, 3, 3).as_strided((3,), (4,))),
    "as_strided_errors": (lambda L: _r(L, 4).as_strided((3,), (2,)), "setStorage: sizes \\[3\\], strides \\[2\\], storage offset 0, and itemsize 4 requiring a storage size of 20 are out of bounds for storage of size 16"),
    "as_strided_negative_stride": (lambda L: _r(L, 4).as_strided((2,), (-1,), 3), "as_strided: Negative strides are not supported at the moment, got strides: \\[-1\\]"),
    "view_as_real_complex": lambda L: (L.view_as_real(L.tensor([1 + 2j, 3 - 1j])), L.view_as_complex(_r(L, 2, 2)),
                                       L.view_as_real(L.tensor(1 + 2j)).shape, L.view_as_real(L.tensor([1 + 2j, 3 - 1j])).stride()),
    "view_as_complex_errors": (lambda L: L.view_as_complex(_r(L, 2, 3)), "Tensor must have a last dimension of size 2"),
    "view_as_complex_stride": (lambda L: L.view_as_complex(_r(L, 2, 4)[:, ::2]), "Tensor must have a last dimension with stride 1"),
    "view_as_complex_dtype": (lambda L: L.view_as_complex(_r(L, 2, 2, dtype="int64")), "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: Long"),
    "view_as_real_errors": (lambda L: L.view_as_real(_r(L, 2)), "view_as_real is only supported for complex tensors"),
    "view_as_real_conj": (lambda L: L.view_as_real(L.tensor([1j]).conj()), "view_as_real doesn't work on unresolved conjugated tensors"),
    "view_dtype_new": lambda L: [(_r(L, 4, 4).view(getattr(L, d)).shape, _r(L, 4, 4).view(getattr(L, d)).stride())
                                 for d in ("int32", "int16", "uint8", "float64", "complex64", "bool", "int64")],
    "view_dtype_values": lambda L: (L.tensor([1.0, -2.0]).view(L.int32), L.tensor([1, 2], dtype=L.int16).view(L.int8),
                                    L.tensor([0x3F800000], dtype=L.int32).view(L.float32), L.tensor([1.5j]).view(L.float32)),
    "view_dtype_noncontig_error": (lambda L: _r(L, 4, 4).t().view(L.float64),
                                   "self.stride\\(-1\\) must be 1 to view Float as Double|must be 1 to view"),
    "view_dtype_scalar_error": (lambda L: L.tensor(1.).view(L.float64),
                                "self.dim\\(\\) cannot be 0 to view Float as Double \\(different element sizes\\)"),
    "view_dtype_offset_error": (lambda L: _r(L, 5)[1:].view(L.float64),
                                "self.storage_offset\\(\\) must be divisible by 2 to view Float as Double"),
    "view_errors": (lambda L: _r(L, 2, 3).view(-1, 4), "shape '\\[-1, 4\\]' is invalid for input of size 6"),
    "view_empty": lambda L: (L.empty(0, 3).view(0, 1, 3).shape, L.empty(0).view(0, 2, 0).shape, L.empty(0, 3).view(-1).shape),
    "view_of_empty_ambiguous": (lambda L: L.empty(0, 3).view(0, -1, 0), "cannot reshape tensor of 0 elements into shape \\[0, -1, 0\\]"),
    "view_copy_out": lambda L: (L.view_copy(_r(L, 2, 3), (3, 2)), L.view_copy(_r(L, 2, 3), (6,), out=L.empty(6)),
                                L.expand_copy(_r(L, 3), (2, 3)), L.permute_copy(_r(L, 2, 3), (1, 0)), L.t_copy(_r(L, 2, 3))),
    "alias_views_share_version": lambda L: (lambda t: (lambda v: (v.add_(1), t._version, v._version))(t[0]))(_r(L, 2, 3)),
    "conj_view": lambda L: (lambda t: (t.conj().is_conj(), t.conj()._is_view(), t.conj().resolve_conj().is_conj(),
                                       L.view_as_real(t.conj().resolve_conj())))(L.tensor([1 + 2j])),
    "neg_view": lambda L: (lambda t: (t.conj().imag.is_neg(), t.conj().imag, t.conj().imag.resolve_neg().is_neg()))(L.tensor([1 + 2j])),
    "atleast_nd": lambda L: [(L.atleast_1d(x).shape, L.atleast_2d(x).shape, L.atleast_3d(x).shape)
                             for x in (L.tensor(1.), _r(L, 3), _r(L, 2, 3), _r(L, 2, 3, 4))]
                            + [len(L.atleast_1d(L.tensor(1.), L.tensor(2.))), L.atleast_3d(_r(L, 3)).stride()],
    "broadcast_tensors_views": lambda L: [(v.shape, v.stride(), v._is_view()) for v in L.broadcast_tensors(_r(L, 3, 1), _r(L, 2), L.tensor(5.))],
    "broadcast_shapes": lambda L: (L.broadcast_shapes((3, 1), (2,), ()), L.broadcast_shapes(5, (1, 1)), L.broadcast_shapes((0, 1), (3,))),
    "broadcast_shapes_error": (lambda L: L.broadcast_shapes((3,), (4,)), "Attempting to broadcast a dimension of length 4 at -1! Mismatching argument at index 1 had \\(4,\\); but expected shape should be broadcastable to \\[3\\]"),
    "broadcast_to": lambda L: (L.broadcast_to(_r(L, 3), (2, 3)).stride(), L.broadcast_to(_r(L, 3, 1), (-1, 4)).shape),
    "movedim_view": lambda L: (_view_facts(L, *(lambda t: (t, t.movedim((0, 1), (2, 0))))(_r(L, 2, 3, 4))),
                               L.moveaxis(_r(L, 2, 3, 4), -1, 0).shape, L.movedim(L.tensor(1.), 0, 0).shape),
    "movedim_repeated": (lambda L: _r(L, 2, 3).movedim((0, 0), (0, 1)), "movedim: repeated dim in `source`"),
    "narrow_view": lambda L: (_view_facts(L, *(lambda t: (t, t.narrow(1, 1, 2)))(_r(L, 3, 4))), _r(L, 3, 4).narrow(-1, L.tensor(2), 2),
                              _r(L, 3, 4).narrow(0, -1, 1)),
    "narrow_errors": (lambda L: _r(L, 3, 4).narrow(1, 3, 2), "start \\(3\\) \\+ length \\(2\\) exceeds dimension size \\(4\\)."),
    "narrow_copy": lambda L: (L.narrow_copy(_r(L, 3, 4), 1, 1, 2), L.narrow_copy(_r(L, 3, 4), 1, 1, 2)._is_view()),
    "unflatten": lambda L: (_r(L, 2, 6).unflatten(1, (2, -1)).shape, _r(L, 2, 6).unflatten(-1, (3, 2)).stride(),
                            _r(L, 2, 6).unflatten(1, (2, 3))._is_view()),
    "unflatten_errors": (lambda L: _r(L, 2, 6).unflatten(1, (4, -1)), "unflatten: Provided sizes \\[4, -1\\] don't multiply up to the size of dim 1 \\(6\\) in the input tensor"),
    "unflatten_empty_sizes": (lambda L: _r(L, 2, 6).unflatten(1, ()), "unflatten: sizes must be non-empty"),
    "view_write_propagates_grad": lambda L: (lambda x: (lambda y: (y[1].mul_(3), y.sum().backward(), x.grad)[2])(x.clone()))(L.ones(2, 2, requires_grad=True)),
    # test_shape_ops: TestShapeOps
    "diagonal_multidim": lambda L: (L.diagonal(_r(L, 2, 3, 4, 5), 1, 1, 3).shape, L.diagonal(_r(L, 2, 3, 4, 5), -2, -1, 0),
                                    L.diagonal(_r(L, 2, 3), 10).shape),
    "diag": lambda L: (L.diag(_r(L, 3)), L.diag(_r(L, 3), -1), L.diag(_r(L, 3, 4)), L.diag(_r(L, 3, 4), 2), L.diag(_r(L, 3, 4), 9).shape),
    "diag_errors": (lambda L: L.diag(_r(L, 2, 2, 2)), "diag\\(\\): Supports 1D or 2D tensors. Got 3D"),
    "diagflat": lambda L: (L.diagflat(_r(L, 2, 2)), L.diagflat(_r(L, 3), -1).shape, L.diagflat(L.tensor(2.))),
    "diag_embed": lambda L: (L.diag_embed(_r(L, 2, 3), -1, 0, 2).shape, L.diag_embed(_r(L, 2, 3), 1, -1, -2)),
    "flip": lambda L: (_r(L, 2, 3, 4).flip(0, -1), _r(L, 2, 3).flip([]), L.tensor(3.).flip(0), _r(L, 2, 3).flip(1).stride(),
                       _r(L, 3, 2).t().flip(0)),
    "flip_errors": (lambda L: _r(L, 2, 3).flip(0, 0), "dim 0 appears multiple times in the list of dims"),
    "flip_errors_range": (lambda L: _r(L, 2, 3).flip(2), "Dimension out of range"),
    "fliplr_flipud": lambda L: (L.fliplr(_r(L, 2, 3)), L.flipud(_r(L, 2, 3)), L.flipud(_r(L, 3))),
    "fliplr_error": (lambda L: L.fliplr(_r(L, 3)), "Input must be >= 2-d."),
    "rot90": lambda L: (L.rot90(_r(L, 2, 3)), L.rot90(_r(L, 2, 3), 2), L.rot90(_r(L, 2, 3), -1), L.rot90(_r(L, 2, 3), 5),
                        L.rot90(_r(L, 2, 3, 4), 1, (2, 0)).shape),
    "rot90_errors": (lambda L: L.rot90(_r(L, 2, 3), 1, (0, 0)), "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0"),
    "rot90_dims_len": (lambda L: L.rot90(_r(L, 2, 3), 1, (0,)), "expected total rotation dims == 2, but got dims = 1"),
    "roll": lambda L: (L.roll(_r(L, 2, 3), 1, 0), L.roll(_r(L, 2, 3), -4), L.roll(_r(L, 2, 3), (1, 1), (0, 1)), L.roll(_r(L, 0, 3), 2, 0).shape,
                       L.roll(_r(L, 2, 3).t(), 1, 0)),
    "roll_errors": (lambda L: L.roll(_r(L, 2, 3), (1, 2), (0,)), "shifts and dimensions must align. shifts: 2, dims:1"),
    "movedim": lambda L: (L.movedim(_r(L, 2, 3, 4), [0, 1], [-1, -2]).shape, L.movedim(_r(L, 2, 3, 4), 1, 1).shape),
    "nonzero": lambda L: (L.nonzero(L.tensor([[0, 1.5], [NAN := float("nan"), 0]])), L.nonzero(L.tensor(0.)).shape,
                          L.nonzero(L.zeros(2, 0)).shape, L.nonzero(L.tensor([True, False, True])),
                          L.nonzero(_r(L, 2, 2), as_tuple=True), L.nonzero(L.tensor(3), as_tuple=True)),
    "nonzero_out": lambda L: L.nonzero(L.tensor([0, 2, 3]), out=L.empty(0, dtype=L.long)),
    "nonzero_out_bad_dtype": (lambda L: L.nonzero(L.tensor([0, 2]), out=L.empty(0)), "nonzero: Expected out tensor to have scalar type Long but got scalar typeFloat"),
    "nonzero_non_diff": lambda L: L.nonzero(L.tensor([1., 0.], requires_grad=True)).requires_grad,
    "clamp_scalar_out": lambda L: (L.clamp(_r(L, 5), 1, 3, out=L.empty(5)), L.clamp(_r(L, 5), min=L.tensor(2.), out=L.empty(0))),
    "clamp_raises_arg_errors": (lambda L: L.clamp(_r(L, 3), None, None), "At least one of 'min' or 'max' must not be None"),
    "clamp_propagates_nans": lambda L: (L.clamp(L.tensor([float("nan"), 1.]), min=L.tensor([0., float("nan")])),
                                        L.clamp_max(L.tensor([float("nan")]), 1.), L.clamp_min(L.tensor([1.]), float("nan"))),
    "trace": lambda L: (L.trace(_r(L, 3, 4)), L.trace(_r(L, 3, 3, dtype="int32")), L.trace(_r(L, 2, 2, dtype="uint8"))),
    "trace_error": (lambda L: L.trace(_r(L, 3)), "trace: expected a matrix, but got tensor with dim 1"),
    "tril_triu": lambda L: (_r(L, 3, 4).tril(10), _r(L, 3, 4).triu(-10), _r(L, 2, 3, 4).tril(1), _r(L, 3, 4).t().triu(),
                            L.tril(_r(L, 3, 3) > 2)),
    "tril_1d_error": (lambda L: _r(L, 3).tril(), "tril: input tensor must have at least 2 dimensions"),
    "tril_triu_indices": lambda L: (L.tril_indices(4, 3, -1), L.triu_indices(3, 5, 2), L.tril_indices(0, 0).shape,
                                    L.triu_indices(3, 3, dtype=L.int32).dtype, L.tril_indices(3, 3, 5)),
    "squeeze_unsqueeze_negative": lambda L: (_r(L, 1, 2).squeeze(-2).shape, _r(L, 2).unsqueeze(-2).shape, _r(L, 2).unsqueeze(-1).shape),
    "repeat": lambda L: (_r(L, 2, 3).repeat(2, 1, 2).shape, _r(L, 2).repeat(0, 2).shape, L.tensor(1.).repeat(3), _r(L, 2, 3).repeat(1, 1)),
    "repeat_negative": (lambda L: _r(L, 2).repeat(-1), "Trying to create tensor with negative dimension -2"),
    "repeat_interleave": lambda L: (_r(L, 2, 2).repeat_interleave(2), _r(L, 2, 2).repeat_interleave(2, dim=0),
                                    _r(L, 2, 2).repeat_interleave(L.tensor([1, 2]), dim=1),
                                    L.repeat_interleave(L.tensor([1, 0, 3])), _r(L, 3).repeat_interleave(L.tensor(2)),
                                    _r(L, 3).repeat_interleave(L.tensor([1, 2, 0]), output_size=3)),
    "repeat_interleave_errors": (lambda L: _r(L, 3).repeat_interleave(L.tensor([1, 2])), "repeats must have the same size as input along dim"),
    "repeat_interleave_negative": (lambda L: L.repeat_interleave(L.tensor([1, -1])), "repeats can not be negative"),
    "tile": lambda L: (_r(L, 2).tile((2, 2)).shape, _r(L, 2, 3).tile((2,)).shape, _r(L, 2, 2).tile((1, 1, 2))),
    "stack_cat_dims": lambda L: (L.stack([_r(L, 2), _r(L, 2)], -1), L.cat([_r(L, 2, 1), _r(L, 2, 2)], -1), L.cat([_r(L, 2), _r(L, 2)], dim=0),
                                 L.hstack([_r(L, 2), _r(L, 3)]), L.vstack([_r(L, 3), _r(L, 3)]).shape, L.dstack([_r(L, 2), _r(L, 2)]).shape,
                                 L.column_stack([_r(L, 2), _r(L, 2, 2)]), L.row_stack([_r(L, 2), _r(L, 2)]).shape),
    "cat_type_promotion": lambda L: (L.cat([L.tensor([1], dtype=L.int8), L.tensor([2.5])]), L.cat([L.tensor([True]), L.tensor([3])]),
                                     L.cat([L.tensor([1.], dtype=L.float16), L.tensor([1.], dtype=L.bfloat16)]).dtype),
    "cat_errors_dims": (lambda L: L.cat([_r(L, 2, 3), _r(L, 3)]), "Tensors must have same number of dimensions: got 2 and 1"),
    "cat_empty_list": (lambda L: L.cat([]), "expected a non-empty list of Tensors"),
    "cat_scalar": (lambda L: L.cat([L.tensor(1.), L.tensor(2.)]), "zero-dimensional tensor \\(at position 0\\) cannot be concatenated"),
    "cat_out_overlap": (lambda L: (lambda x: L.cat([x[:2], x[2:]], out=x[1:]))(L.arange(6.).view(3, 2) if False else L.arange(4.)),
                        "unsupported operation"),
    "stack_zero_dim": lambda L: (L.stack([L.tensor(1.), L.tensor(2.)]), L.stack([_r(L, 0), _r(L, 0)], 1).shape),
    "stack_empty": (lambda L: L.stack([]), "stack expects a non-empty TensorList"),
    "block_diag": lambda L: (L.block_diag(_r(L, 2, 2), L.tensor(5.), _r(L, 3), _r(L, 1, 2, dtype="int64")),
                             L.block_diag().shape, L.block_diag(_r(L, 0, 2), _r(L, 1, 1)).shape),
    "block_diag_error": (lambda L: L.block_diag(_r(L, 2, 2, 2)), "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions"),
    "cartesian_prod_single": lambda L: (L.cartesian_prod(L.tensor([1, 2])), L.combinations(L.tensor([1, 2, 3]), 0).shape,
                                        L.combinations(L.tensor([1, 2]), 3).shape),
    "take_along_dim_broadcast": lambda L: L.take_along_dim(_r(L, 3, 4), L.tensor([[0], [3]]).unsqueeze(0).squeeze(0)[:1], 1),
    "swapaxes_swapdims": lambda L: (L.swapaxes(_r(L, 2, 3, 4), 0, 2).shape, L.swapdims(_r(L, 2, 3), -1, 0).stride()),
    "resize_": lambda L: (_r(L, 2, 3).resize_(3, 2), _r(L, 6).resize_(2, 2), L.empty(2).resize_(0).shape, _r(L, 2, 3).resize_as_(L.empty(6)).shape),
    "resize_negative": (lambda L: L.empty(2).resize_(-1), ""),
}
NAN = float("nan")


XFAIL = {}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=XFAIL[n], strict=True))
                                  if n in XFAIL else n for n in CHECKS])
def test_view_shape_ops(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match or None)


def test_repeat_and_tile_of_a_0d_tensor_by_no_dims_stay_0d():
    # found by test_ops' numpy_ref for repeat/tile (np.tile would give one dim)
    same(lambda L: list(L.tensor(5.).repeat(()).shape))
    same(lambda L: list(L.tile(L.tensor(5, dtype=L.int64), ()).shape))
    same(lambda L: L.tile(L.tensor(2.5), ()).tolist())
