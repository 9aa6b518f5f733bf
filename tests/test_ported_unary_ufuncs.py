"""Checks ported from PyTorch's test/test_unary_ufuncs.py (its non-OpInfo methods: special
values, frexp, nan_to_num, float -> int conversion, signed zeros, integer inputs, in-place
and out= rules), run against torch and ember.

Each check is named after the PyTorch test method it comes from."""
import pytest

from _ported import same

INF, NAN = float("inf"), float("nan")
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.5, 1e-30, 88.0, -88.0, 1e30, INF, -INF, NAN]
FLOATS = ("float16", "bfloat16", "float32", "float64")


def _f(L, values=SPECIAL, dtype="float32"):
    return L.tensor(values, dtype=getattr(L, dtype))


def _c(L, dtype="complex64"):
    vals = [complex(a, b) for a in (0.0, -0.0, 1.0, -2.5, INF, -INF, NAN) for b in (0.0, -0.0, 1.5, -INF, INF, NAN)]
    return L.tensor(vals, dtype=getattr(L, dtype))


def _signs(t):
    return t.signbit() & ~t.isnan()


# (name, op) pairs whose special values are compared in float32 and float64
UNARY = ["abs", "neg", "sign", "sgn", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "floor", "ceil", "round", "trunc", "frac",
         "reciprocal", "square", "deg2rad", "rad2deg", "sinc", "i0", "signbit", "isnan", "isinf", "isfinite",
         "isposinf", "isneginf", "isreal", "logit", "angle", "positive", "nan_to_num", "fix", "relu"]
SPECIAL_OPS = ["special.i0e", "special.i1", "special.i1e", "special.ndtr", "special.ndtri", "special.log_ndtr",
               "special.erfcx", "special.entr", "special.expit", "special.bessel_j0", "special.bessel_j1",
               "special.spherical_bessel_j0", "special.sinc", "special.round", "special.exp2", "special.expm1",
               "special.psi", "special.gammaln", "special.multigammaln"]


def _op(L, name):
    obj = L
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(name, dtype):
    """test_reference_numerics_extremal / _small / _large, compared with torch itself."""
    same(lambda L: (_op(L, name)(_f(L, dtype=dtype)),))


@pytest.mark.parametrize("name", [n for n in SPECIAL_OPS if n != "special.multigammaln"])
def test_special_unary_special_values(name):
    same(lambda L: _op(L, name)(_f(L, dtype="float64")))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["abs", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "floor", "round",
                                  "reciprocal", "erf", "isinf", "signbit", "nan_to_num", "frac", "expm1", "rsqrt"])
def test_unary_special_values_low_precision(name, dtype):
    same(lambda L: _op(L, name)(_f(L, [v for v in SPECIAL if abs(v) < 1e4 or v != v], dtype)))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal", "rsqrt",
                                  "log1p", "expm1", "asinh", "atan", "neg", "abs", "sgn", "angle", "isnan",
                                  "isinf", "isfinite", "conj_physical", "log10", "square"])
def test_unary_complex_special_values(name):
    """test_reference_numerics_extremal for complex inputs: compared where both are finite
    or agree on the non-finite class."""
    same(lambda L: _op(L, name)(_c(L, "complex128")))


@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "abs", "floor", "neg", "sign", "sigmoid", "log1p",
                                  "reciprocal", "trunc", "bitwise_not", "logical_not", "signbit", "isnan",
                                  "square", "frac", "deg2rad", "round", "erf", "angle", "positive"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_unary_integer_inputs(name, dtype):
    """test_int_and_float / test_non_float_inputs: which ops promote integers to float, which
    keep the dtype, which refuse (and with what error)."""
    same(lambda L: _op(L, name)(L.tensor([0, 1, 2, 5], dtype=getattr(L, dtype))))


CHECKS = {
    # test_frexp / test_frexp_assert_raises
    "frexp": lambda L: [L.frexp(_f(L, [0., -0., 1., -1.5, 1024., 1e-40, 3e38, INF, -INF, NAN], d)) for d in ("float32", "float64")],
    "frexp_float16": lambda L: L.frexp(_f(L, [0., 1., -1.5, 1024., 6e-5], "float16")),
    "frexp_out": lambda L: L.frexp(_f(L, [3., 5.]), out=(L.empty(2), L.empty(2, dtype=L.int32))),
    "frexp_int_raises": (lambda L: L.frexp(L.tensor([1, 2])), "torch.frexp\\(\\) only supports floating-point dtypes"),
    "frexp_out_bad_mantissa": (lambda L: L.frexp(_f(L, [3.]), out=(L.empty(1, dtype=L.float64), L.empty(1, dtype=L.int32))),
                               "torch.frexp\\(\\) expects mantissa to have dtype float but got double"),
    "frexp_out_bad_exponent": (lambda L: L.frexp(_f(L, [3.]), out=(L.empty(1), L.empty(1, dtype=L.int64))),
                               "torch.frexp\\(\\) expects exponent to have int dtype but got long int"),
    # test_nan_to_num
    "nan_to_num": lambda L: [L.nan_to_num(_f(L, dtype=d)) for d in FLOATS]
                            + [L.nan_to_num(_f(L), nan=1.5, posinf=2.5, neginf=-7.0),
                               L.nan_to_num(_f(L, dtype="float16"), posinf=1e10),
                               L.nan_to_num(L.tensor([1, 2])), L.nan_to_num(L.tensor([True]))],
    "nan_to_num_complex": lambda L: (L.nan_to_num(_c(L), nan=3.0, posinf=1.0), L.nan_to_num(_c(L, "complex128"))),
    "nan_to_num_inplace_out": lambda L: (L.nan_to_num_(_f(L)), L.nan_to_num(_f(L), out=L.empty(len(SPECIAL)))),
    # test_float_to_int_conversion_finite
    "float_to_int_conversion_finite": lambda L: [_f(L, [-3.7, -1.5, -0.5, 0.0, 0.5, 1.9, 100.0, 127.9], d).to(getattr(L, i))
                                                 for d in ("float32", "float64") for i in ("int8", "int16", "int32", "int64")]
                                                + [_f(L, [0.0, 0.9, 254.9, 255.0]).to(L.uint8),
                                                   _f(L, [0.0, -0.0, 0.1, NAN, INF]).to(L.bool)],
    "float_to_int_conversion_extremes": lambda L: [_f(L, [2.0 ** 31 - 128, -(2.0 ** 31)], "float64").to(L.int32),
                                                   _f(L, [2.0 ** 62, -(2.0 ** 63)], "float64").to(L.int64)],
    "int_to_int_wrap": lambda L: (L.tensor([300, -1, 256, -129]).to(L.uint8), L.tensor([300, -1, 128]).to(L.int8),
                                  L.tensor([2 ** 40 + 5]).to(L.int32), L.tensor([-1]).to(L.bool)),
    "complex_to_real_conversion": lambda L: (L.tensor([1.5 + 2j]).to(L.float32), L.tensor([1.5 + 2j]).to(L.int64),
                                             L.tensor([1.5 + 2j]).real.to(L.int16)),
    # test_abs_zero / test_abs_big_number / test_signbit / test_sign
    "abs_zero": lambda L: (_signs(L.abs(_f(L, [-0.0, 0.0]))), _signs(L.tensor([-0.0]).abs_())),
    "abs_big_number": lambda L: (L.abs(L.tensor([-2 ** 63])), L.abs(L.tensor([-128], dtype=L.int8)),
                                 L.abs(L.tensor([-1e38, 1e38]))),
    "abs_bool": lambda L: L.abs(L.tensor([True, False])),
    "signbit_types": lambda L: (L.signbit(L.tensor([-1, 0, 2])), L.signbit(L.tensor([True])),
                                L.signbit(_f(L, [-0.0, 0.0, -NAN, NAN])), L.signbit(L.tensor([1, 0], dtype=L.uint8))),
    "signbit_complex": (lambda L: L.signbit(L.tensor([1j])), "signbit is not implemented for complex tensors."),
    "sign_complex_raises": (lambda L: L.sign(L.tensor([1j])), "Unlike NumPy, torch.sign is not intended to support complex numbers"),
    "sgn_complex": lambda L: (L.sgn(_c(L)), L.sgn(L.tensor([3 + 4j, 0j, -0j]))),
    # test_reciprocal / test_rsqrt / test_sqrt edge cases
    "reciprocal_ints": lambda L: (L.reciprocal(L.tensor([0, 1, -2])), L.tensor([2], dtype=L.uint8).reciprocal()),
    "reciprocal_inplace_int": (lambda L: L.tensor([1, 2]).reciprocal_(), "result type Float can't be cast to the desired output type"),
    "rsqrt_zero_negative": lambda L: (L.rsqrt(_f(L, [0.0, -0.0, -1.0, INF])), L.sqrt(_f(L, [-0.0, -1.0]))),
    "sqrt_complex_edge_values": lambda L: L.sqrt(L.tensor([complex(-INF, NAN), complex(-4, 0), complex(-4, -0.0),
                                                          complex(0, INF), complex(INF, -NAN)], dtype=L.complex128)),
    "log_complex_edge_values": lambda L: L.log(L.tensor([complex(0, 0), complex(-0.0, 0), complex(-1, 0), complex(INF, NAN)],
                                                        dtype=L.complex128)),
    # test_sinc / test_logit / test_mvlgamma / test_polygamma / test_digamma
    "sinc": lambda L: (L.sinc(_f(L, [0.0, -0.0, 1.0, 0.5, 1e-30, INF])), L.sinc(L.tensor([0, 1, 2]))),
    "sinc_grad_at_zero": lambda L: (lambda x: (L.sinc(x).sum().backward(), x.grad)[1])(L.tensor([0.0, 1.0], requires_grad=True)),
    "logit_eps": lambda L: (L.logit(_f(L, [0.0, 0.2, 1.0, -0.5, 1.5, NAN])), L.logit(_f(L, [0.0, 0.2, 1.0, -0.5, 1.5]), eps=1e-6),
                            L.logit(_f(L, [0.0, 1.0]), eps=0.3), L.logit(L.tensor([0, 1]))),
    "mvlgamma": lambda L: (L.mvlgamma(_f(L, [2.5, 3.0, 10.0], "float64"), p=3), L.special.multigammaln(_f(L, [1.0, 2.0]), 1)),
    "mvlgamma_argcheck": (lambda L: L.mvlgamma(_f(L, [0.5, 3.0]), p=3),
                          "All elements must be greater than \\(p-1\\)/2"),
    "mvlgamma_bad_p": (lambda L: L.mvlgamma(_f(L, [2.0]), p=0), "p has to be greater than or equal to 1"),
    "polygamma": lambda L: [L.polygamma(n, _f(L, [0.5, 1.0, 2.5, 10.0, 0.0, -1.0, -1.5, INF], "float64")) for n in (0, 1, 2, 3)],
    "polygamma_negative_n": (lambda L: L.polygamma(-1, _f(L, [1.0])), "polygamma\\(n, x\\) does not support negative n"),
    "polygamma_int_input": lambda L: L.polygamma(1, L.tensor([1, 2])),
    "digamma_special": lambda L: (L.digamma(_f(L, [0.0, -0.0, -1.0, -2.0, 1.0, INF, -INF], "float64")),
                                  L.special.digamma(L.tensor([1, 2]))),
    "lgamma_special": lambda L: (L.lgamma(_f(L, [0.0, -0.0, -1.0, -2.5, 1.0, 2.0, 0.5, INF, -INF, 1e30], "float64")),),
    "erfinv_edges": lambda L: (L.erfinv(_f(L, [-1.0, 1.0, 1.5, -1.5, 0.0, -0.0, 0.999999])),
                               L.erfinv(_f(L, [-1.0, 1.0, 0.5], "float64"))),
    "i0_range": lambda L: (L.i0(_f(L, [-50.0, -1.0, 0.0, 1.0, 50.0, 700.0], "float64")), L.special.i0e(_f(L, [-700.0, 700.0], "float64"))),
    # test_round / rounding of integers / decimals
    "round_half_to_even": lambda L: (L.round(_f(L, [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5])),
                                     L.round(_f(L, [0.5, 1.5, 2.5], "float16"))),
    "round_decimals": lambda L: (L.round(_f(L, [1.2345, -1.2355, 1234.5, 0.125], "float64"), decimals=2),
                                 L.round(_f(L, [1234.5, 1250.0, 1350.0]), decimals=-2),
                                 L.round(L.tensor([15, 25, -35]), decimals=-1) if False else L.round(_f(L, [15., 25., -35.]), decimals=-1)),
    "round_int": lambda L: (L.round(L.tensor([1, -3])), L.floor(L.tensor([1, -3], dtype=L.int8)),
                            L.ceil(L.tensor([True])), L.trunc(L.tensor([5], dtype=L.uint8))),
    "round_int_decimals_raises": (lambda L: L.round(L.tensor([15]), decimals=1), "round_cpu\" not implemented for 'Long'"),
    "floor_complex_raises": (lambda L: L.floor(L.tensor([1.5j])), "floor is not supported for complex inputs"),
    "round_complex_raises": (lambda L: L.round(L.tensor([1.5j])), "\"round_vml_cpu\" not implemented for 'ComplexFloat'"),
    "frac_signs": lambda L: (L.frac(_f(L, [-2.5, 2.5, -0.0, INF, NAN])), _signs(L.frac(_f(L, [-2.0, 2.0, -0.0])))),
    "frac_int_raises": (lambda L: L.frac(L.tensor([1])), "frac_cpu\" not implemented for 'Long'"),
    # test_angle / test_positive / test_neg / test_bitwise_not
    "angle_real": lambda L: (L.angle(_f(L, [-2.0, -0.0, 0.0, 3.0, NAN, -INF])), L.angle(L.tensor([-1, 0, 1]))),
    "positive_bool_raises": (lambda L: L.positive(L.tensor([True])), "The `\\+` operator, on a bool tensor is not supported."),
    "neg_unsigned": lambda L: (-L.tensor([1, 0, 200], dtype=L.uint8), L.neg(L.tensor([-128], dtype=L.int8))),
    "logical_not_out_dtypes": lambda L: (L.logical_not(L.tensor([0, 3]), out=L.empty(2, dtype=L.int64)),
                                         L.logical_not(_f(L, [0.0, NAN])), L.logical_not(L.tensor([0j, 1j]))),
    # test_unary_out_op_mem_overlap / in-place dtype rules
    "unary_out_op_mem_overlap": (lambda L: (lambda x: L.exp(x[:3], out=x[1:]))(L.arange(4.)), "unsupported operation"),
    "unary_inplace_expanded_raises": (lambda L: L.ones(1).expand(3).exp_(), "unsupported operation"),
    "unary_inplace_int_float_result": (lambda L: L.tensor([1, 2]).sqrt_(), "result type Float can't be cast"),
    "unary_out_wrong_dtype_float": (lambda L: L.sqrt(L.tensor([4.]), out=L.empty(1, dtype=L.int64)), "can't be cast"),
    "unary_out_higher_dtype": lambda L: (L.sqrt(L.tensor([4.]), out=L.empty(1, dtype=L.float64)),
                                         L.abs(L.tensor([-4]), out=L.empty(1, dtype=L.float64)),
                                         L.neg(L.tensor([4]), out=L.empty(1, dtype=L.int8))),
    "unary_out_resize": lambda L: L.exp(_f(L, [0.0, 1.0]), out=L.empty(0)),
    "unary_noncontiguous": lambda L: (L.exp(L.arange(12.).view(3, 4).t()), L.sin(L.arange(12.)[::3]),
                                      L.exp(L.arange(12.).view(3, 4).t()).stride()),
    "exp_complex_special": lambda L: L.exp(L.tensor([complex(0, INF), complex(-INF, 1), complex(INF, 0), complex(INF, NAN),
                                                     complex(-INF, INF), complex(NAN, 0)], dtype=L.complex128)),
    "sigmoid_extremal": lambda L: (L.sigmoid(_f(L, [-1000.0, -100.0, 100.0, 1000.0, NAN])),
                                   L.sigmoid(_f(L, [-80.0, 80.0], "float16"))),
    "hardshrink_softshrink": lambda L: (L.nn.functional.hardshrink(_f(L, [-1.0, -0.4, 0.5, NAN]), 0.5),
                                        L.nn.functional.softshrink(_f(L, [-1.0, -0.4, 0.5, NAN]), 0.5)),
    "softshrink_negative_lambda": (lambda L: L.nn.functional.softshrink(_f(L, [1.0]), -0.5),
                                   "lambda must be in range \\[0, 3.40282e\\+38\\] for input dtype Float, but found -0.5"),
    "clamp_nan_propagation": lambda L: (L.clamp(_f(L, [NAN, 1.0, 5.0]), 0.0, 2.0), L.clamp(_f(L, [1.0, 5.0]), NAN, 2.0),
                                        L.clamp(_f(L, [1.0, 5.0]), max=NAN),
                                        L.clamp(_f(L, [1.0, 5.0]), L.tensor([NAN, 0.0]), L.tensor([2.0, NAN]))),
    "clamp_type_promotion": lambda L: (L.clamp(L.tensor([1, 5]), 1.5, 3.5), L.clamp(L.tensor([1, 5]), L.tensor([2.5])),
                                       L.clamp(L.tensor([1, 5], dtype=L.uint8), max=L.tensor([3], dtype=L.int64)),
                                       L.clamp(L.tensor([1., 5.]), 2, 3)),
    "clamp_bool_raises": (lambda L: L.clamp(L.tensor([True]), 0, 1), ""),
    "clamp_complex_raises": (lambda L: L.clamp(L.tensor([1j]), 0, 1), "clamp is not supported for complex types"),
    "clamp_inplace_int_float_bound": (lambda L: L.tensor([1, 5]).clamp_(1.5), "result type Float can't be cast to the desired output type"),
    "clamp_tensor_bounds_broadcast": lambda L: (L.clamp(L.arange(6.).view(2, 3), L.tensor([[1.], [4.]]), L.tensor([2., 4., 6.])),
                                                L.clamp_min(L.arange(3.), L.tensor([1., 0., 5.])),
                                                L.clamp_max(L.arange(3), L.tensor(1))),
    "clamp_min_greater_than_max": lambda L: (L.clamp(L.arange(5.), min=L.tensor(3.), max=L.tensor(1.)),
                                             L.clip(L.arange(5), 3, 1)),
    "clamp_grad": lambda L: (lambda x: (L.clamp(x, 1.0, 2.0).sum().backward(), x.grad)[1])(
        L.tensor([0.5, 1.0, 1.5, 2.0, 2.5], requires_grad=True)),
    "clamp_tensor_grad": lambda L: (lambda x, lo, hi: (L.clamp(x, lo, hi).sum().backward(), x.grad, lo.grad, hi.grad)[1:])(
        L.tensor([0.5, 1.0, 1.5, 2.5], requires_grad=True), L.tensor([1.0, 1.0, 1.0, 1.0], requires_grad=True),
        L.tensor([2.0, 2.0, 2.0, 2.0], requires_grad=True)),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_unary_ufuncs(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match or None)
