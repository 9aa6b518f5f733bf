"""Checks ported from PyTorch's test/test_type_promotion.py, run against torch and ember."""
import pytest

from _ported import same

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def _t(L, dtype, values=(1, 0, 1)):
    return L.tensor(values).to(getattr(L, dtype))


CHECKS = {
    # test_inplace: in-place ops don't promote; signed -> unsigned demotion is allowed
    "inplace_int_add_float": (lambda L: L.ones(4, 4, dtype=L.int32).add_(1.5), "can't be cast to"),
    "inplace_int_add_long": lambda L: L.ones(4, dtype=L.int32).add_(L.ones(4, dtype=L.int64)).add_(1),
    "inplace_bool_add_uint8": (lambda L: _t(L, "bool").add_(_t(L, "uint8")), "can't be cast to"),
    "inplace_uint8_mul_int16": lambda L: _t(L, "uint8").mul_(_t(L, "int16")),
    "unsigned_plus_int": lambda L: L.ones(3, dtype=L.uint8) + 5,
    "uint8_plus_1000": lambda L: L.tensor([0, 0, 1], dtype=L.uint8) + 1000,
    "uint8_plus_float": lambda L: L.tensor([0, 0, 1], dtype=L.uint8) + 5.5,
    "uint8_plus_0dim_double": lambda L: L.tensor([0, 0, 1], dtype=L.uint8) + L.tensor(5.5, dtype=L.double),
    "float_plus_0dim_double": lambda L: L.ones(3) + L.tensor(5.5, dtype=L.double),
    "complex64_times_int": lambda L: L.ones(3, dtype=L.complex64) * 5,
    "complex64_plus_0dim_double": lambda L: L.ones(3, dtype=L.complex64) + L.tensor(5.5, dtype=L.double),
    "1j_times_ones": lambda L: 1j * L.ones(2) + 1j,
    "tensor_of_complex": lambda L: L.tensor([2j, 2j]),
    "half_plus_python_float": lambda L: L.tensor(5.5, dtype=L.float16) + 2.2,
    "half_plus_default_tensor": lambda L: L.tensor(5.5, dtype=L.float16) + L.tensor(100000.0),
    "add_out_long_from_float": (lambda L: L.add(L.ones(4), L.ones(4), out=L.zeros(4, dtype=L.long)),
                                "can't be cast to"),
    "add_out_double_from_float": lambda L: L.add(L.ones(4), L.ones(4), out=L.zeros(4, dtype=L.double)),
    "neg_out_wrong_dtype": lambda L: L.neg(L.ones(4), out=L.ones(4, dtype=L.double)),
    "lerp_mixed": lambda L: L.lerp(L.ones(4, dtype=L.double), L.ones(4), 1),
    "alpha_float_int": (lambda L: L.add(L.ones(4, dtype=L.int), L.ones(4, dtype=L.int), alpha=1.1),
                        "alpha must not be"),
    "alpha_float_bool": (lambda L: L.add(L.ones(4, dtype=L.bool), L.ones(4, dtype=L.bool), alpha=1.1),
                         "alpha must not be"),
    "alpha_bool_bool": lambda L: L.add(L.ones(4, dtype=L.bool), L.ones(4, dtype=L.bool), alpha=True),
    "bool_plus_bool": lambda L: L.tensor([True]) + L.tensor([True]),
    "bool_plus_True": lambda L: L.tensor([True]) + True,
    "arange_bools": lambda L: (L.arange(False, True), L.arange(True), L.arange(False, True, 0.5),
                               L.arange(False, False)),
    "linspace_bools": lambda L: (L.linspace(False, True, 5), L.logspace(False, True, 5)),
    "scalar_tensor_bool": lambda L: L.scalar_tensor(False),
    "result_type_int_scalar": lambda L: (L.result_type(L.tensor(1, dtype=L.int), 1),
                                         L.result_type(1, L.tensor(1, dtype=L.int)),
                                         L.result_type(1, 1.), L.result_type(L.tensor(1), 1.)),
    "result_type_dims": lambda L: (L.result_type(L.tensor(1, dtype=L.long), L.tensor([1, 1], dtype=L.int)),
                                   L.result_type(L.tensor([1., 1.]), 1.),
                                   L.result_type(L.tensor(1.), L.tensor(1, dtype=L.double)),
                                   L.result_type(True, L.tensor([1], dtype=L.uint8))),
    "can_cast": lambda L: [L.can_cast(getattr(L, a), getattr(L, b)) for a in DTYPES for b in DTYPES],
    "promote_types": lambda L: [L.promote_types(getattr(L, a), getattr(L, b)) for a in DTYPES for b in DTYPES],
    "comparison_mixed": lambda L: (L.tensor([1, 2], dtype=L.uint8) < L.tensor([1.5, 1.5]),
                                   L.tensor([1, 2], dtype=L.int8) == 1.0,
                                   L.eq(L.tensor([300]), L.tensor([44], dtype=L.uint8))),
    "comparison_out_dtype": lambda L: L.lt(L.tensor([1, 2]), 2, out=L.empty(2, dtype=L.float)),
    "div_int_int": lambda L: (L.tensor([5, 3]) / L.tensor([2, 2]),
                              L.div(L.tensor([5, -3]), 2, rounding_mode="floor"),
                              L.div(L.tensor([5, -3]), 2, rounding_mode="trunc"),
                              L.tensor([5, -3]) // 2, L.true_divide(L.tensor([1]), 2)),
    "div_inplace_int": (lambda L: L.tensor([5, 3]).div_(2), "can't be cast to"),
    "floor_divide_float": lambda L: L.tensor([5.5, -3.5]) // L.tensor([2, 2]),
    "pow_int_negative": (lambda L: L.tensor([2, 3]) ** -1, "Integers to negative integer powers"),
    "pow_int_float_exp": lambda L: (L.tensor([2, 3]) ** 0.5, 2 ** L.tensor([1, 2]),
                                    2.5 ** L.tensor([1, 2]), L.pow(2, L.tensor([1., 2.]))),
    "sum_int_dtype": lambda L: (L.tensor([1, 2], dtype=L.int8).sum(), L.tensor([True, True]).sum(),
                                L.tensor([1, 2], dtype=L.uint8).prod(),
                                L.tensor([1, 2], dtype=L.int8).cumsum(0)),
    "mean_int_raises": (lambda L: L.tensor([1, 2]).mean(), "mean"),
    "mean_int_with_dtype": lambda L: L.tensor([1, 2]).mean(dtype=L.float64),
    "unary_float_ops_on_int": lambda L: (L.sqrt(L.tensor([4])), L.sin(L.tensor([True])),
                                         L.exp(L.tensor([1], dtype=L.uint8)),
                                         L.sigmoid(L.tensor([0], dtype=L.int16))),
    "abs_neg_keep_int": lambda L: (L.abs(L.tensor([-2], dtype=L.int8)), L.neg(L.tensor([2], dtype=L.int16))),
    "neg_bool_raises": (lambda L: -L.tensor([True]), "Negation, the `-` operator, on a bool"),
    "sub_bool_raises": (lambda L: L.tensor([True]) - L.tensor([False]), "Subtraction, the `-` operator"),
    "where_mixed": lambda L: (L.where(L.tensor([True, False]), L.tensor([1]), L.tensor([2.])),
                              L.where(L.tensor([True, False]), 1, 2.5),
                              L.where(L.tensor([True, False]), L.tensor([1], dtype=L.uint8), 300),
                              L.where(L.tensor([True, False]), L.tensor([1.], dtype=L.half), 2.)),
    "cat_mixed": lambda L: (L.cat([L.tensor([1]), L.tensor([2.5])]),
                            L.cat([L.tensor([1], dtype=L.uint8), L.tensor([True])]),
                            L.stack([L.tensor([1], dtype=L.int8), L.tensor([2], dtype=L.int16)])),
    "addcmul_int": lambda L: L.addcmul(L.tensor([1]), L.tensor([2]), L.tensor([3]), value=2),
    "clamp_mixed": lambda L: (L.clamp(L.tensor([1, 5]), min=2.5), L.clamp(L.tensor([1, 5]), max=L.tensor(3.))),
    "atan2_int": lambda L: L.atan2(L.tensor([1]), L.tensor([2])),
    "bitwise_float_raises": lambda L: L.bitwise_and(L.tensor([1.]), L.tensor([1])),
    "bitwise_mixed_int": lambda L: (L.tensor([3], dtype=L.uint8) & L.tensor([5]), L.tensor([True]) ^ 1,
                                    L.tensor([1], dtype=L.int8) << 2),
    "complex_to_real_raises": lambda L: L.zeros(2).add_(L.ones(2, dtype=L.complex64)),
    "maximum_mixed": lambda L: (L.maximum(L.tensor([1]), L.tensor([2.5])),
                                L.fmax(L.tensor([1], dtype=L.int8), L.tensor([2], dtype=L.uint8))),
    "float_power": lambda L: (L.float_power(L.tensor([2]), 2), L.float_power(L.tensor([2.], dtype=L.complex64), 2)),
    "copysign_int": lambda L: L.copysign(L.tensor([1, 2]), -1),
    "logical_ops_dtype": lambda L: (L.logical_and(L.tensor([1.]), L.tensor([0])),
                                    L.logical_not(L.tensor([2], dtype=L.int8)),
                                    L.logical_xor(L.tensor([1]), L.tensor([1]), out=L.empty(1, dtype=L.int32))),
    "sum_out_dtype_mismatch": lambda L: L.sum(L.ones(3), 0, out=L.empty((), dtype=L.int64)),
    "tensor_ops_on_scalar_tensors": lambda L: (L.tensor(1, dtype=L.int8) + L.tensor(1000),
                                               L.tensor([1], dtype=L.int8) + L.tensor(1000),
                                               L.tensor(1.) * L.tensor([2], dtype=L.int32)),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_type_promotion(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_default_dtype_promotion(default):
    """@float_double_default_dtype: the same checks under both default dtypes."""
    def fn(L):
        old = L.get_default_dtype()
        L.set_default_dtype(getattr(L, default))
        try:
            return (L.tensor([1, 2], dtype=L.uint8) + 5.5, L.tensor(1.5), L.arange(0., 2),
                    L.result_type(1, 1.), L.tensor([1]) / 2, L.tensor([1j]), L.ones(2) * 1j,
                    L.linspace(0, 1, 3), L.full((1,), 2.0), L.tensor([1]).float().dtype)
        finally:
            L.set_default_dtype(old)
    same(fn)


def _x(L, dtype):
    return L.tensor([0.25, -0.5, 0.75]).to(getattr(L, dtype))


OUT_CALLS = {
    "neg": lambda L, x, out: L.neg(x, out=out),
    "abs": lambda L, x, out: L.abs(x, out=out),
    "floor": lambda L, x, out: L.floor(x, out=out),
    "round": lambda L, x, out: L.round(x, out=out),
    "sign": lambda L, x, out: L.sign(x, out=out),
    "bitwise_not": lambda L, x, out: L.bitwise_not(x, out=out),
    "sin": lambda L, x, out: L.sin(x, out=out),
    "sqrt": lambda L, x, out: L.sqrt(x, out=out),
    "signbit": lambda L, x, out: L.signbit(x, out=out),
    "isposinf": lambda L, x, out: L.isposinf(x, out=out),
    "nan_to_num": lambda L, x, out: L.nan_to_num(x, out=out),
    "histc": lambda L, x, out: L.histc(x, 4, out=out),
    "sum": lambda L, x, out: L.sum(x, 0, out=out),
    "prod": lambda L, x, out: L.prod(x, 0, out=out),
    "cumsum": lambda L, x, out: L.cumsum(x, 0, out=out),
    "cumprod": lambda L, x, out: L.cumprod(x, 0, out=out),
    "mean": lambda L, x, out: L.mean(x, 0, out=out),
    "amax": lambda L, x, out: L.amax(x, 0, out=out),
    "argmax": lambda L, x, out: L.argmax(x, 0, out=out),
    "any": lambda L, x, out: L.any(x, 0, out=out),
    "logcumsumexp": lambda L, x, out: L.logcumsumexp(x, 0, out=out),
    "add": lambda L, x, out: L.add(x, x, out=out),
    "mul_scalar": lambda L, x, out: L.mul(x, 2.5, out=out),
    "div": lambda L, x, out: L.div(x, x, out=out),
    "eq": lambda L, x, out: L.eq(x, x, out=out),
    "heaviside": lambda L, x, out: L.heaviside(x, x, out=out),
    "matmul": lambda L, x, out: L.matmul(x, x, out=out),
    "bucketize": lambda L, x, out: L.bucketize(x, x.sort().values, out=out),
    "where": lambda L, x, out: L.where(x > 0, x, x, out=out),
}
OUT_DTYPES = [("float32", "float64"), ("float32", "int64"), ("int64", "float32"), ("float32", "bool"),
              ("bool", "float32"), ("float64", "float32"), ("int32", "int64")]


@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_dtype(name):
    """test_type_promotion's test_alternate_result / test_non_promoting_ops and test_ops'
    out= dtype checks: which out dtypes each op accepts (a resized empty `out` included), what
    it writes there, and the error when it refuses."""
    for in_dt, out_dt in OUT_DTYPES:
        for out_shape in [(0,), (3,)]:
            same(lambda L: (lambda out: (OUT_CALLS[name](L, _x(L, in_dt), out), out))(
                L.empty(out_shape if name not in ("sum", "prod", "mean", "amax", "argmax", "any", "matmul")
                        or out_shape == (0,) else (), dtype=getattr(L, out_dt))))
