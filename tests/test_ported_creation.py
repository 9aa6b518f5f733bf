"""Checks ported from PyTorch's test/test_tensor_creation_ops.py, run against torch and ember;
tests/test_ported_tensor_ops.py has the first batch.

Each check is named after the PyTorch test method it comes from."""
import numpy as np
import pytest

from _ported import same

INF, NAN = float("inf"), float("nan")
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128")


def _raised(L, *fns):
    out = []
    for fn in fns:
        try:
            fn()
        except Exception as exc:  # the check compares what was raised
            out.append(exc)
    return out


def _layout(t):
    return t.shape, t.dtype, t.stride(), t.requires_grad


CHECKS = {
    # TestTensorCreation
    "cat_all_dtypes_and_devices": lambda L: [L.cat([L.ones(2, dtype=getattr(L, d)), L.zeros(1, dtype=getattr(L, d))]) for d in DTYPES],
    "cat_mem_overlap": (lambda L: (lambda x: L.cat([x, x], out=x))(L.ones(2)), "unsupported operation|input and output overlap"),
    "cat_out_resize": lambda L: (lambda o: (L.cat([L.ones(2, 2), L.zeros(1, 2)], out=o), o.shape, o.stride()))(L.empty(0)),
    "cat_out_memory_format": lambda L: (lambda o: (L.cat([L.ones(1, 2, 2, 2), L.ones(1, 2, 2, 2)], out=o), o.stride()))(
        L.empty(0).contiguous(memory_format=L.contiguous_format)),
    "cat_out_channels_last": lambda L: L.cat([L.ones(1, 2, 2, 2).contiguous(memory_format=L.channels_last)] * 2).stride(),
    "cat_in_channels_last": lambda L: L.cat([L.ones(2, 3, 2, 2).contiguous(memory_format=L.channels_last),
                                             L.ones(2, 3, 2, 2).contiguous(memory_format=L.channels_last)], 1).stride(),
    "cat_preserve_channels_last": lambda L: L.cat([L.ones(2, 3, 2, 2).contiguous(memory_format=L.channels_last), L.ones(2, 3, 2, 2)]).stride(),
    "cat_different_dtypes_out": lambda L: L.cat([L.ones(2, dtype=L.int8), L.ones(1)], out=L.empty(3, dtype=L.float64)),
    "cat_out_bad_dtype": (lambda L: L.cat([L.ones(2)], out=L.empty(2, dtype=L.int64)), "can't be cast"),
    "cat_big": lambda L: L.cat([L.ones(1, 2) * i for i in range(200)]).sum(0),
    "cat_negative_dim": lambda L: (L.cat([L.ones(2, 2), L.zeros(2, 1)], -1), L.concat([L.ones(1)], 0), L.concatenate([L.ones(2, 1)] * 2, axis=1)),
    "cat_dim_out_of_range": (lambda L: L.cat([L.ones(2, 2)], 2), "Dimension out of range \\(expected to be in range of \\[-2, 1\\], but got 2\\)"),
    "cat_requires_grad": lambda L: (lambda a: (L.cat([a, L.ones(1)]).requires_grad, L.cat([a * 1, L.ones(1)]).grad_fn.__class__.__name__))(
        L.ones(2, requires_grad=True)),
    "stack_out": lambda L: (lambda o: (L.stack([L.ones(2), L.zeros(2)], 1, out=o), o.shape))(L.empty(0)),
    "hstack_column_stack_dstack_vstack": lambda L: (L.hstack([L.tensor(1.), L.tensor([2., 3.])]), L.vstack([L.tensor(1.), L.tensor(2.)]),
                                                    L.dstack([L.tensor([1.]), L.tensor([2.])]), L.column_stack([L.tensor(1.), L.tensor([2.])])),
    "hstack_empty_raises": (lambda L: L.hstack([]), "hstack expects a non-empty TensorList"),
    "block_diag_scipy_like": lambda L: L.block_diag(L.tensor([[1, 2], [3, 4]]), L.tensor([[5], [6]]), L.tensor([7])),
    "block_diag_dtypes": lambda L: L.block_diag(L.tensor([[1]], dtype=L.int8), L.tensor([[2.5]]), L.tensor([[1j]])).dtype,
    "torch_complex": lambda L: [L.complex(L.tensor([1., -2.], dtype=getattr(L, d)), L.tensor([0.5, 3.], dtype=getattr(L, d)))
                                for d in ("float32", "float64")],
    "torch_complex_half": lambda L: L.complex(L.tensor([1.], dtype=L.float16), L.tensor([2.], dtype=L.float16)).dtype,
    "torch_complex_out": lambda L: L.complex(L.tensor([1.]), L.tensor([2.]), out=L.empty(1, dtype=L.complex64)),
    "torch_complex_out_bad_dtype": (lambda L: L.complex(L.tensor([1.]), L.tensor([2.]), out=L.empty(1, dtype=L.complex128)),
                                    "Expected object of scalar type ComplexFloat but got scalar type ComplexDouble for argument 'out'"),
    "torch_complex_floating_dtype_error": (lambda L: L.complex(L.tensor([1.]), L.tensor([2.], dtype=L.float64)),
                                           "Expected object of scalar type Float but got scalar type Double for second argument"),
    "torch_polar": lambda L: (L.polar(L.tensor([1., 2.]), L.tensor([0.5, -3.])), L.polar(L.tensor([1.], dtype=L.float64), L.tensor([INF], dtype=L.float64))),
    "polar_negative_abs": lambda L: L.polar(L.tensor([-1.]), L.tensor([0.])),
    "cartesian_prod_combinations": lambda L: (L.cartesian_prod(L.tensor([1, 2]), L.tensor([3]), L.tensor([4, 5])),
                                              L.combinations(L.tensor([1, 2, 3, 4]), 3), L.combinations(L.tensor([1., 2.]), 2, True)),
    "empty_full": lambda L: [_layout(f) for f in (L.full((2, 3), 1.5, dtype=L.float16), L.full((0,), 2), L.full((), True),
                                                   L.full((2,), 1, requires_grad=True, dtype=L.float32), L.full([1, 2], -3))],
    "full_inference": lambda L: [L.full((1,), v).dtype for v in (True, 1, 1.5, 1j, np.float32(1.0), np.int8(1))],
    "full_out": lambda L: (L.full((2,), 3, out=L.empty(0, dtype=L.int16)), L.full((2, 2), 7.5, out=L.empty(4))),
    "full_out_dtype_mismatch": (lambda L: L.full((2,), 3, dtype=L.float64, out=L.empty(2, dtype=L.float32)), ""),
    "full_like_inference": lambda L: (L.full_like(L.ones(2, dtype=L.int8), 5), L.full_like(L.ones(2), 5, dtype=L.int64),
                                      L.full_like(L.ones(2, 3).t(), 1).stride()),
    "ones_zeros_like": lambda L: [_layout(f(L.ones(2, 3, 4).permute(2, 0, 1))) for f in (L.ones_like, L.zeros_like, L.empty_like)]
                                 + [_layout(L.zeros_like(L.ones(2, 3, 4).permute(2, 0, 1), memory_format=L.contiguous_format)),
                                    _layout(L.ones_like(L.ones(2, 3)[:, ::2]))],
    "like_requires_grad": lambda L: (L.zeros_like(L.ones(2, requires_grad=True)).requires_grad,
                                     L.ones_like(L.ones(2), requires_grad=True).requires_grad),
    "zeros_dtype_out_match": lambda L: L.zeros((2, 2), out=L.empty(0, dtype=L.int32)),
    "zeros_out_dtype_mismatch": (lambda L: L.zeros((2,), dtype=L.float64, out=L.empty(0)), ""),
    "empty_strided": lambda L: (L.empty_strided((2, 3), (1, 2)).stride(), L.empty_strided((2, 3), (1, 2)).is_contiguous(),
                                L.empty_strided((0, 3), (1, 1)).shape, L.empty_strided((), ()).shape,
                                L.empty_strided((2, 2), (0, 1)).stride()),
    "empty_strided_negative": (lambda L: L.empty_strided((2,), (-1,)), ""),
    "new_empty_strided": lambda L: L.ones(2, dtype=L.int8).new_empty_strided((2, 2), (1, 2)).stride(),
    "eye": lambda L: [L.eye(n, m, dtype=getattr(L, d)) for n, m in ((3, 2), (2, 4), (0, 3)) for d in ("bool", "int64", "float32")],
    "eye_out": lambda L: (L.eye(2, out=L.empty(0)), L.eye(2, 3, out=L.empty(5, dtype=L.int32))),
    "eye_negative": (lambda L: L.eye(-1), "n must be greater or equal to 0, got -1"),
    "eye_negative_m": (lambda L: L.eye(2, -3), "m must be greater or equal to 0, got -3"),
    "linspace": lambda L: (L.linspace(0, 1, 6), L.linspace(1, -1, 5, dtype=L.float64), L.linspace(-5, 5, 7, dtype=L.int32),
                           L.linspace(0, 10, 3, dtype=L.uint8), L.linspace(0, 1j, 3), L.linspace(1, 1, 4), L.linspace(2, 3, 1)),
    "linspace_deduction": lambda L: (L.linspace(1, 2, 3).dtype, L.linspace(1, 2, 3, dtype=L.int64).dtype,
                                     L.linspace(1j, 2, 3).dtype, L.linspace(L.tensor(1), L.tensor(3), 3).dtype),
    "linspace_special_steps": lambda L: (L.linspace(0, 1, 0).shape, L.linspace(0, 1, 1), L.linspace(0, 1, 2), L.linspace(-INF, INF, 3)),
    "linspace_vs_numpy": lambda L: (L.linspace(-1e5, 1e5, 1001, dtype=L.float64), L.linspace(-3, 7, 101)),
    "linspace_float16_precision": lambda L: L.linspace(0, 100, 9, dtype=L.float16),
    "linspace_out": lambda L: L.linspace(0, 2, 3, out=L.empty(0, dtype=L.float64)),
    "logspace": lambda L: (L.logspace(0, 3, 4), L.logspace(0, 3, 4, base=2, dtype=L.int64), L.logspace(1, -1, 3, base=10.),
                           L.logspace(0, 1, 1), L.logspace(0, 0, 0).shape, L.logspace(0, 2j, 3)),
    "logspace_base2": lambda L: L.logspace(1, 10, 10, 2, dtype=L.float64),
    "logspace_special_steps": lambda L: (L.logspace(0, 1, 2), L.logspace(-INF, 0, 2)),
    "logspace_negative_steps": (lambda L: L.logspace(0, 1, -1), "number of steps must be non-negative"),
    "arange": lambda L: (L.arange(5), L.arange(1, 4), L.arange(1, 2.5, 0.5), L.arange(0, -1, -0.25), L.arange(5, dtype=L.int8),
                         L.arange(3.), L.arange(10, 0, -1, dtype=L.uint8), L.arange(0, 1, 1 / 3), L.arange(-4.4, -2.2, 0.5)),
    "arange_inference": lambda L: [L.arange(*a).dtype for a in ((1,), (1.,), (1, 3), (1, 3.), (1, 3, 2.), (L.tensor(1), 3),
                                                                (L.tensor(1.),), (1, L.tensor(3, dtype=L.int8)), (np.int16(3),),
                                                                (L.tensor(2, dtype=L.int16), L.tensor(5, dtype=L.int16)))],
    "arange_device_vs_cpu_values": lambda L: (L.arange(0.6, 0.89, 0.1), L.arange(1., -1, -0.1).shape, L.arange(0, 1, 0.01).shape,
                                             L.arange(-0.5, 0.5, 0.1).shape),
    "arange_bfloat16_and_half": lambda L: (L.arange(0, 1, 0.25, dtype=L.bfloat16), L.arange(0, 10, 3, dtype=L.float16)),
    "arange_out": lambda L: (L.arange(3, out=L.empty(0)), L.arange(2, 10, 3, out=L.empty(3, dtype=L.int16))),
    "arange_inf_raises": (lambda L: L.arange(0, INF), "unsupported range: 0 -> inf"),
    "arange_nan_raises": (lambda L: L.arange(NAN, 1), "unsupported range: nan -> 1"),
    "arange_too_big": (lambda L: L.arange(0, 1, 1e-20), "invalid size, possible overflow\\?|resulting size overflow"),
    "arange_complex_raises": (lambda L: L.arange(0, 1j), ""),
    "range": lambda L: (L.range(1, 4), L.range(0, 1, 0.25), L.range(3, 0, -1, dtype=L.int64)),
    "range_dtype_inference": lambda L: (L.range(1, 3).dtype, L.range(1, 3, dtype=L.int32).dtype),
    "tensor_factory_type_inference": lambda L: [L.tensor(v).dtype for v in
                                                (5, 5., True, 5j, [5, 5.], [True, 5], [[1], [2.]], [], (), [[]], np.array(5.),
                                                 [np.float32(1), 2])],
    "tensor_factory_uint16": lambda L: L.tensor(np.array([1], dtype=np.uint16)).dtype,
    "tensor_factory_dtypes": lambda L: [L.tensor([1.5, -2.7], dtype=getattr(L, d)) for d in DTYPES],
    "tensor_factory_overflow": lambda L: (L.tensor([300]).to(L.uint8), L.tensor(2 ** 63 - 1), L.tensor([-2 ** 63])),
    "tensor_factory_overflow_raises": (lambda L: L.tensor(2 ** 64), "Overflow when unpacking long"),
    "window_keyword_beta_refused": (lambda L: L.kaiser_window(6, beta=8.), "received an invalid combination of arguments"),
    "window_keyword_beta_hamming": (lambda L: L.hamming_window(4, True, beta=0.4), "received an invalid combination of arguments"),
    "window_keywords_in_order": lambda L: (L.hamming_window(4, True, 0.5, beta=0.4), L.kaiser_window(5, periodic=False, beta=3.)),
    "tensor_factory_uint8_overflow": (lambda L: L.tensor([300], dtype=L.uint8), "value cannot be converted to type uint8 without overflow"),
    "tensor_factory_copy_var": lambda L: (lambda src: (L.tensor(src.tolist()), L.tensor(src.tolist(), requires_grad=True).requires_grad,
                                                       L.as_tensor(src) is src, L.as_tensor(src, dtype=L.float64).dtype))(L.ones(2)),
    "tensor_ctor_from_tensor_list_scalars": lambda L: (L.tensor([L.tensor(1.), 2.]), L.tensor([[L.tensor(1)], [L.tensor(2)]])),
    "tensor_ctor_nested_tensors_raises": (lambda L: L.tensor([L.ones(2), L.ones(2)]), "only one element tensors can be converted to Python scalars"),
    "tensor_ctor_bad_type": (lambda L: L.tensor(["a"]), "too many dimensions 'str'"),
    "tensor_ctor_none": (lambda L: L.tensor(None), "Could not infer dtype of NoneType"),
    "tensor_from_numpy_dtypes": lambda L: [L.from_numpy(np.array([1, 2], dtype=d)).dtype for d in
                                           (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32,
                                            np.float64, np.complex64, np.complex128)],
    "from_numpy_noncontiguous": lambda L: (lambda a: (L.from_numpy(a).stride(), L.from_numpy(a)))(np.arange(12.).reshape(3, 4)[:, ::2]),
    "from_numpy_negative_strides": (lambda L: L.from_numpy(np.arange(4.)[::-1]), "negative"),
    "from_numpy_unsupported": (lambda L: L.from_numpy(np.array(["a"])), "can't convert np.ndarray of type"),
    "as_tensor_dtype_copy": lambda L: (lambda a: (L.as_tensor(a, dtype=L.float32).add_(1), a.tolist()))(np.zeros(2, np.float64)),
    "as_tensor_shares_memory": lambda L: (lambda a: (L.as_tensor(a).add_(1), a.tolist()))(np.zeros(2, np.float32)),
    "asarray": lambda L: (L.asarray([1, 2]), L.asarray(np.ones(2), dtype=L.float32), L.asarray(3.5),
                          (lambda t: L.asarray(t) is t)(L.ones(2)), (lambda t: L.asarray(t, copy=True) is t)(L.ones(2)),
                          (lambda a: (L.asarray(a, copy=True).add_(1), a.tolist())[1])(np.zeros(2, np.float32)),
                          (lambda a: (L.asarray(a).add_(1), a.tolist())[1])(np.zeros(2, np.float32)),
                          L.asarray([1., 2.], requires_grad=True)),
    "new_tensor": lambda L: (L.ones(2, dtype=L.int16).new_tensor([1, 2]), L.ones(2).new_tensor([1, 2]), L.ones(2).new_tensor(3j),
                             L.ones(2).new_tensor([1], dtype=L.float64, requires_grad=True).requires_grad),
    "new_methods_requires_grad": lambda L: [_layout(f) for f in (L.ones(2).new_zeros(2, requires_grad=True), L.ones(2).new_ones((1, 2)),
                                                                 L.ones(2, dtype=L.half).new_full([2], 5), L.ones(2).new_empty(0, 3))],
    "scalar_tensor": lambda L: (L.scalar_tensor(3), L.scalar_tensor(3.5, dtype=L.int64), L.scalar_tensor(True),
                                L.scalar_tensor(1j, dtype=L.complex64)),
    "scalar_tensor_complex_default": (lambda L: L.scalar_tensor(1j), "value cannot be converted to type float without overflow"),
    "full_complex_to_real": lambda L: [type(e).__name__ + str(e) for e in _raised(L, lambda: L.full((2,), 1j, dtype=L.float32),
                                                                                   lambda: L.full((2,), 1j, dtype=L.float64),
                                                                                   lambda: L.zeros(2).fill_(1j),
                                                                                   lambda: L.zeros(2, dtype=L.int64).fill_(2 + 1j))]
                                       + [L.full((2,), 1 + 0j, dtype=L.float32), L.full((1,), 1j, dtype=L.bool)],
    "tensor_factories_empty": lambda L: [_layout(f) for f in (L.zeros(0, 2), L.ones(2, 0, 3), L.full((0,), 1.), L.empty(0),
                                                              L.rand(0, 2), L.randn(2, 0), L.randint(5, (0,)), L.randperm(0),
                                                              L.arange(0), L.linspace(0, 1, 0), L.eye(0, 3))],
    "constructor_dtypes_default": lambda L: (L.get_default_dtype(), L.tensor([1.]).dtype, L.ones(1).dtype, L.tensor([1]).dtype,
                                             L.tensor(1j).dtype, L.randn(1).dtype, L.arange(1.).dtype),
    "set_default_dtype_float64": lambda L: (lambda prev: (L.set_default_dtype(L.float64), L.tensor([1.]).dtype, L.tensor(1j).dtype,
                                                          L.ones(1).dtype, L.arange(1.).dtype, L.linspace(0, 1, 2).dtype,
                                                          L.set_default_dtype(prev))[1:6])(L.get_default_dtype()),
    "set_default_dtype_invalid": (lambda L: L.set_default_dtype(L.int64), "only floating-point types are supported as the default type"),
    "tril_triu_indices_errors": (lambda L: L.tril_indices(-1, 2), "row must be non-negative, got-1"),
    "tril_indices_dtype": (lambda L: L.tril_indices(3, 3, dtype=L.float32), "\"tril_indices\" not implemented for 'Float'"),
    "kaiser_hann_windows": lambda L: (L.hann_window(5), L.hann_window(5, periodic=False), L.hamming_window(4, True, 0.5, 0.4),
                                      L.blackman_window(6, dtype=L.float64), L.bartlett_window(1), L.kaiser_window(6, True, 8.),
                                      L.hann_window(0).shape),
    "window_errors": (lambda L: L.hann_window(-1), "hann_window requires non-negative window_length, got window_length=-1"),
    "window_int_dtype": (lambda L: L.hann_window(4, dtype=L.int64), "hann_window expects floating point dtypes, got: torch.int64|expects floating point dtypes"),
    "random_from_to_bool": lambda L: (lambda g: (g.manual_seed(0), L.empty(6, dtype=L.bool).random_(generator=g))[1])(L.Generator()),
    "random_ranges": lambda L: (lambda g: (g.manual_seed(1), L.empty(5, dtype=L.int8).random_(-5, 5, generator=g),
                                           L.empty(5).random_(10, generator=g), L.empty(3, dtype=L.uint8).random_(generator=g),
                                           L.empty(3, dtype=L.float64).uniform_(-2, 3, generator=g),
                                           L.empty(3).normal_(1., 2., generator=g), L.empty(3).exponential_(2., generator=g))[1:])(L.Generator()),
    "random_from_greater_than_to": (lambda L: L.empty(2).random_(5, 3), "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    "uniform_from_greater": (lambda L: L.empty(2).uniform_(3, 2), "uniform_ expects to return a \\[from, to\\) range, but found from=3 > to=2"),
    "normal_std_negative": (lambda L: L.empty(2).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    "randint_inference": lambda L: (L.randint(0, 5, (2,)).dtype, L.randint(5, (2,), dtype=L.float32).dtype,
                                    L.randint_like(L.ones(2, dtype=L.int8), 4).dtype, L.randint_like(L.ones(2), 1, 4).dtype),
    "randint_bad_range": (lambda L: L.randint(5, 2, (2,)), "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
    "randperm": lambda L: (lambda g: (g.manual_seed(3), L.randperm(10, generator=g), L.randperm(5, dtype=L.float32, generator=g),
                                      L.randperm(300, generator=g).sort().values.equal(L.arange(300)))[1:])(L.Generator()),
    "randperm_negative": (lambda L: L.randperm(-1), "Trying to create tensor with negative dimension -1: \\[-1\\]"),
    "randperm_out": lambda L: (lambda g: (g.manual_seed(4), L.randperm(4, generator=g, out=L.empty(0, dtype=L.int64)))[1])(L.Generator()),
    "rand_randn_seeded": lambda L: (lambda g: (g.manual_seed(5), L.rand(3, generator=g), L.randn(2, 2, generator=g, dtype=L.float64),
                                               L.rand(2, dtype=L.float16, generator=g), L.randn(3, dtype=L.complex64, generator=g))[1:])(L.Generator()),
    "rand_int_dtype_raises": (lambda L: L.rand(2, dtype=L.int64), "\"check_uniform_bounds\" not implemented for 'Long'"),
    "randn_int_dtype_raises": (lambda L: L.randn(2, dtype=L.int64), "\"normal_kernel_cpu\" not implemented for 'Long'"),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_tensor_creation(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match or None)
