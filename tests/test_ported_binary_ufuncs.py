"""Checks ported from PyTorch's test/test_binary_ufuncs.py (its non-OpInfo methods: special
values, integer division and remainder by zero, integer powers, shifts, comparisons with NaN,
copysign, nextafter, ldexp, float_power, xlogy, ...), run against torch and ember.

Each check is named after the PyTorch test method it comes from."""
import math

import pytest

import ember
from _ported import same

INF, NAN = float("inf"), float("nan")
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, INF, -INF, NAN, 1e-300, 1e300]
INTS = [-7, -3, -1, 0, 1, 3, 7]


def _f(L, values=SPECIAL, dtype="float64"):
    return L.tensor(values, dtype=getattr(L, dtype))


def _pairs(L, values=SPECIAL, dtype="float64"):
    """Every (a, b) pair of `values`, as two 1-d tensors."""
    a = [x for x in values for _ in values]
    b = [y for _ in values for y in values]
    return L.tensor(a, dtype=getattr(L, dtype)), L.tensor(b, dtype=getattr(L, dtype))


def _signs(t):
    """Sign bits of a float tensor's non-NaN elements (so -0.0 and 0.0 compare different; a
    NaN's sign bit is whatever the platform's instruction left there, in torch too)."""
    return t.signbit() & ~t.isnan()


CHECKS = {
    # test_div_rounding_modes / test_div_rounding_nonfinite / test_divide_by_zero_rounding
    "div_rounding_modes_float": lambda L: [L.div(*_pairs(L), rounding_mode=m) for m in (None, "trunc", "floor")],
    "div_rounding_modes_float32": lambda L: [L.div(*_pairs(L, dtype="float32"), rounding_mode=m)
                                             for m in (None, "trunc", "floor")],
    "div_rounding_signs": lambda L: [_signs(L.div(*_pairs(L), rounding_mode=m)) for m in ("trunc", "floor")],
    "div_rounding_ints": lambda L: [L.div(*_pairs(L, [-7, -3, -1, 1, 3, 7], "int64"), rounding_mode=m)
                                    for m in (None, "trunc", "floor")],
    "div_rounding_int8": lambda L: [L.div(*_pairs(L, [-128, -3, -1, 1, 3, 127], "int8"), rounding_mode=m)
                                    for m in ("trunc", "floor")],
    "div_rounding_bad_mode": (lambda L: L.div(L.ones(2), 2, rounding_mode="round"),
                              "div expected rounding_mode to be one of None, 'trunc', or 'floor'"),
    "divide_by_zero_rounding_float": lambda L: [L.div(_f(L), 0.0, rounding_mode=m) for m in (None, "trunc", "floor")],
    "divide_by_zero_rounding_negzero": lambda L: [L.div(_f(L), -0.0, rounding_mode=m) for m in (None, "trunc", "floor")],
    "div_int_by_zero_trunc": (lambda L: L.div(L.tensor([1, 2]), 0, rounding_mode="trunc"), "ZeroDivisionError"),
    "div_int_by_zero_floor": (lambda L: L.div(L.tensor([1, 2]), L.tensor([1, 0]), rounding_mode="floor"),
                              "ZeroDivisionError"),
    "div_int_by_zero_true": lambda L: L.div(L.tensor([1, 0, -1]), 0),
    "div_rounding_scalar_first": lambda L: (L.div(7, L.tensor([2, -2]), rounding_mode="floor"),
                                            L.div(7., L.tensor([2, -2]), rounding_mode="trunc")),
    "div_rounding_out": lambda L: L.div(L.tensor([7., -7.]), 2, rounding_mode="floor", out=L.empty(2)),
    "div_rounding_inplace_int": lambda L: L.tensor([7, -7]).div_(2, rounding_mode="floor"),
    "div_rounding_inplace_int_true": (lambda L: L.tensor([7, -7]).div_(2), "result type Float can't be cast"),
    # test_floor_divide_*
    "floor_divide_tensor": lambda L: (L.floor_divide(*_pairs(L, [-7.5, -2, 2, 7.5])),
                                      L.floor_divide(*_pairs(L, [-7, -2, 2, 7], "int32"))),
    "floor_divide_scalar": lambda L: (L.tensor([-7, 7]) // 2, L.tensor([-7., 7]) // 2, 7 // L.tensor([-2, 2]),
                                      L.tensor([-7, 7]) // 2.5, L.tensor([5, -5], dtype=L.uint8) // 3),
    "floor_divide_zero_int": (lambda L: L.tensor([1, 2]) // 0, "ZeroDivisionError"),
    "floor_divide_zero_float": lambda L: L.floor_divide(_f(L), 0.),
    "floor_divide_out": lambda L: L.floor_divide(L.tensor([7, -7]), 2, out=L.empty(2, dtype=L.float64)),
    "floor_divide_inplace_mixed": (lambda L: L.tensor([7, -7]).floor_divide_(L.tensor([2.5])), "can't be cast"),
    "floor_divide_bool": (lambda L: L.tensor([True]) // L.tensor([True]), ""),
    # test_fmod_remainder / test_fmod_remainder_by_zero_* / test_remainder_overflow / large dividend
    # (no 1e300 / 1e-300 pair: torch's SIMD fmod gives NaN there, its scalar one not)
    "fmod_remainder_float": lambda L: (L.fmod(*_pairs(L, SPECIAL[:-2])), L.remainder(*_pairs(L, SPECIAL[:-2])),
                                       _signs(L.remainder(*_pairs(L, SPECIAL[:-2])))),
    "fmod_remainder_float32": lambda L: (L.fmod(*_pairs(L, dtype="float32")), L.remainder(*_pairs(L, dtype="float32"))),
    "fmod_remainder_signs": lambda L: (_signs(L.fmod(*_pairs(L, [0., -0., 3., -3., 1.5]))),
                                       _signs(L.remainder(*_pairs(L, [0., -0., 3., -3., 1.5])))),
    "fmod_remainder_ints": lambda L: (L.fmod(*_pairs(L, [-7, -3, 3, 7], "int64")),
                                      L.remainder(*_pairs(L, [-7, -3, 3, 7], "int64")),
                                      L.remainder(*_pairs(L, [-7, -3, 3, 7], "int8"))),
    "fmod_remainder_by_zero_float": lambda L: (L.fmod(_f(L), 0.), L.remainder(_f(L), 0.),
                                               L.fmod(_f(L), L.zeros(len(SPECIAL), dtype=L.float64))),
    "fmod_by_zero_integral": (lambda L: L.fmod(L.tensor([1, 2]), 0), "ZeroDivisionError"),
    "remainder_by_zero_integral": (lambda L: L.remainder(L.tensor([1, 2]), L.tensor([0, 1])), "ZeroDivisionError"),
    "fmod_remainder_scalars": lambda L: (L.fmod(L.tensor([5, -5]), 1.5), L.remainder(L.tensor([5, -5]), 1.5),
                                         L.remainder(5, L.tensor([3, -3])), L.tensor([5., -5.]) % -3,
                                         -5 % L.tensor([3, -3])),
    "remainder_overflow": lambda L: (L.remainder(L.tensor([2**62 + 5], dtype=L.int64), L.tensor([3])),
                                     L.remainder(L.tensor(-(2**63), dtype=L.int64), -1)),
    "remainder_fmod_large_dividend": lambda L: (L.remainder(L.tensor([2.0 ** 60, -(2.0 ** 60)], dtype=L.float64), 7.0),
                                                L.fmod(L.tensor([2.0 ** 60, -(2.0 ** 60)], dtype=L.float64), 7.0),
                                                L.remainder(L.tensor(1e20), 3.3)),
    "fmod_remainder_bool": (lambda L: L.fmod(L.tensor([True]), L.tensor([True])), ""),
    # test_pow / test_int_pow / test_int_tensor_pow_neg_ints / test_long_tensor_pow_floats
    "int_pow": lambda L: [L.tensor(INTS, dtype=getattr(L, d)) ** 3 for d in ("int8", "int16", "int32", "int64")]
                         + [L.tensor([0, 1, 2, 3], dtype=L.uint8) ** 5],
    "int_pow_zero_exp": lambda L: (L.tensor([0, -2, 5]) ** 0, L.pow(L.tensor([0, -2]), L.tensor([0, 0]))),
    "int_tensor_pow_neg_ints": (lambda L: L.pow(L.tensor([2, 3]), -2), "Integers to negative integer powers are not allowed"),
    "int_tensor_pow_neg_tensor": (lambda L: L.pow(L.tensor([2, 3]), L.tensor([1, -1])),
                                  "Integers to negative integer powers are not allowed"),
    "int_pow_neg_exp_of_one": lambda L: (L.pow(L.tensor([1, -1]), L.tensor([-3, -3])),),
    "long_tensor_pow_floats": lambda L: [L.pow(L.tensor([0, 1, 2, 3]), e) for e in (0.0, 0.5, 1.0, 1.5, -0.5, -1.0)],
    "float_scalar_pow_float_tensor": lambda L: [e ** _f(L, [0., 0.5, -1., 2., INF, -INF, NAN], d)
                                                for e in (2.0, 0.0, -1.0, 0.5) for d in ("float32", "float64")],
    "pow_special_values": lambda L: (L.pow(*_pairs(L)), L.pow(*_pairs(L, [0., -0., 1., -1., 0.5, -0.5, 2., -2., INF, -INF, NAN], "float32"))),
    "pow_scalar_type_promotion": lambda L: (L.pow(2, L.tensor(17, dtype=L.uint8), out=L.tensor(0, dtype=L.int64)),
                                            L.pow(2, L.tensor([17], dtype=L.int64), out=L.tensor(0, dtype=L.int64))),
    "tensor_pow_tensor_ints": lambda L: [L.pow(L.tensor([0, 1, 2, 3], dtype=getattr(L, d)),
                                               L.tensor([3, 0, 1, 2], dtype=getattr(L, d)))
                                         for d in ("uint8", "int8", "int16", "int32", "int64")],
    "tensor_pow_tensor_floats": lambda L: [L.pow(*_pairs(L, [-3.0, -1.0, -0.5, 0.0, 1 / 3, 1.0, 3.0], d))
                                           for d in ("float16", "float32", "float64")],
    "complex_scalar_pow_tensor": lambda L: [b ** L.tensor([0., 1, -2, 0.5], dtype=L.float64)
                                            for b in (0.5j, 1 + 1j, -1.5j, 2.2 - 1.6j, 1 + 0j)],
    "pow_bool": lambda L: (L.pow(L.tensor([True, False]), 2), L.pow(L.tensor([True, False]), L.tensor([True, True]))),
    "pow_inplace_int_float_exp": (lambda L: L.tensor([2, 3]).pow_(0.5), "can't be cast"),
    "rpow_int_scalar": lambda L: (2 ** L.tensor([0, 1, 10]), 0 ** L.tensor([0, 1]), (-2) ** L.tensor([3])),
    "pow_int_overflow_wraps": lambda L: (L.tensor([3], dtype=L.int8) ** 5, L.tensor([2], dtype=L.int32) ** 40),
    # test_bitwise_ops / test_bitwise_shift / test_bitwise_shift_float / test_lshift_rshift limits
    "bitwise_ops": lambda L: [op(L.tensor([-5, 0, 7, 12], dtype=getattr(L, d)), L.tensor([3, -1, 7, 5], dtype=getattr(L, d)))
                              for d in ("int8", "int16", "int32", "int64")
                              for op in (L.bitwise_and, L.bitwise_or, L.bitwise_xor)],
    "bitwise_ops_bool_scalar": lambda L: (L.tensor([True, False]) & True, L.tensor([True, False]) | False,
                                          L.tensor([True, False]) ^ L.tensor([True, True]), 5 & L.tensor([3, 4]),
                                          L.bitwise_and(L.tensor([5, 6], dtype=L.uint8), 3)),
    "bitwise_float_raises": (lambda L: L.bitwise_and(L.ones(2), L.ones(2)), "not implemented for 'Float'"),
    "bitwise_not": lambda L: (L.bitwise_not(L.tensor([0, -1, 5], dtype=L.int8)), ~L.tensor([True, False]),
                              ~L.tensor([0, 255], dtype=L.uint8)),
    "bitwise_not_float": (lambda L: ~L.ones(2), "only implemented on integer and Boolean-type tensors"),
    "bitwise_not_float_function": (lambda L: L.bitwise_not(L.ones(2)), "not implemented for 'Float'"),
    "bitwise_shift": lambda L: [(L.tensor([-10, -1, 0, 1, 19], dtype=getattr(L, d)) << 2,
                                 L.tensor([-10, -1, 0, 1, 19], dtype=getattr(L, d)) >> 2,
                                 L.bitwise_left_shift(L.tensor([1, 3], dtype=getattr(L, d)), L.tensor([1, 2], dtype=getattr(L, d))),
                                 L.bitwise_right_shift(L.tensor([64, -64], dtype=getattr(L, d)), L.tensor([3, 3], dtype=getattr(L, d))))
                                for d in ("int8", "int16", "int32", "int64")],
    "bitwise_shift_uint8": lambda L: (L.tensor([1, 200], dtype=L.uint8) << 1, L.tensor([200], dtype=L.uint8) >> 3),
    "bitwise_shift_overflow": lambda L: [(L.tensor([1, -1, 5], dtype=getattr(L, d)) << L.tensor([b, b + 5, 70], dtype=getattr(L, d)),
                                          L.tensor([1, -1, -5], dtype=getattr(L, d)) >> L.tensor([b, b + 5, 70], dtype=getattr(L, d)))
                                         for d, b in (("int8", 8), ("int16", 16), ("int32", 32), ("int64", 64))],
    "bitwise_shift_negative_amount": lambda L: (L.tensor([8, -8]) >> L.tensor([-1, -1]), L.tensor([8]) << L.tensor([-1])),
    "bitwise_shift_float": lambda L: (L.tensor([1.5, -2.5]) << 1, L.tensor([8.0]) >> 1, 2 << L.tensor([1, 2]),
                                      L.tensor([8.0]) >> 1.5),
    "bitwise_shift_scalar_first": lambda L: (L.bitwise_left_shift(3, L.tensor([1, 2])),
                                             L.bitwise_right_shift(64, L.tensor([1, 2]))),
    "bitwise_shift_bool": (lambda L: L.tensor([True]) << L.tensor([True]), "not implemented for 'Bool'"),
    "rshift_lshift_inplace": lambda L: (L.tensor([1, 2]).__ilshift__(2), L.tensor([16, 8]).__irshift__(L.tensor([1, 2])),
                                        L.tensor([1, 2]).bitwise_left_shift_(1)),
    # test_comparison_ops_* : NaN, type promotion, bool output
    "comparison_with_nan": lambda L: [op(*_pairs(L)) for op in (L.eq, L.ne, L.lt, L.le, L.gt, L.ge)],
    "comparison_with_nan_float32": lambda L: [op(*_pairs(L, dtype="float32")) for op in (L.eq, L.ne, L.lt, L.le, L.gt, L.ge)],
    "comparison_nan_scalar": lambda L: (_f(L) == NAN, _f(L) != NAN, _f(L) < NAN, NAN >= _f(L), _f(L) > INF, _f(L) <= -INF),
    "comparison_type_promotion": lambda L: (L.tensor([1, 2], dtype=L.int8) < L.tensor([1.5, 2.5], dtype=L.float16),
                                            L.tensor([-1], dtype=L.int8) < L.tensor([255], dtype=L.uint8),
                                            L.tensor([3], dtype=L.uint8) > -1,
                                            L.tensor([2 ** 53 + 1]) == float(2 ** 53),
                                            L.tensor([True]) == 1, L.tensor([1 + 1j]) == L.tensor([1.])),
    "comparison_broadcasting": lambda L: (L.arange(3).view(3, 1) < L.arange(4), L.arange(3.) >= L.tensor(1)),
    "comparison_complex_ordering": (lambda L: L.tensor([1j]) < L.tensor([2j]), "not implemented for 'ComplexFloat'"),
    "comparison_out_bool_required": lambda L: L.eq(L.tensor([1, 2]), 1, out=L.empty(2, dtype=L.int32)),
    "comparison_inplace": lambda L: (L.tensor([1., 2., 3.]).lt_(2), L.tensor([1, 2, 3]).eq_(L.tensor([1, 0, 3])),
                                     L.tensor([True, False]).ne_(True)),
    "isclose_nan_inf": lambda L: (L.isclose(_f(L), _f(L)), L.isclose(_f(L), _f(L), equal_nan=True),
                                  L.isclose(L.tensor([1., 1.1]), L.tensor([1.05, 1.0]), rtol=0, atol=0.06),
                                  L.isclose(L.tensor([1, 2]), L.tensor([1, 3])),
                                  L.isclose(L.tensor([1 + 1j, INF + 0j]), L.tensor([1 + 1.00001j, INF + 0j]))),
    "isclose_bad_tol": (lambda L: L.isclose(L.ones(2), L.ones(2), rtol=-1), "rtol must be greater than or equal to zero"),
    "allclose_equal": lambda L: (L.allclose(_f(L), _f(L), equal_nan=True), L.allclose(_f(L), _f(L)),
                                 L.equal(_f(L), _f(L)), L.equal(L.ones(2), L.ones(3)), L.equal(L.ones(2), L.ones(2, dtype=L.int64))),
    # test_maximum_minimum_* / test_fmax_fmin
    "maximum_minimum_float_nan_and_inf": lambda L: [op(*_pairs(L)) for op in (L.maximum, L.minimum, L.fmax, L.fmin, L.max, L.min)],
    "maximum_minimum_int_and_bool": lambda L: [op(L.tensor([1, -2, 3], dtype=getattr(L, d)), L.tensor([2, -3, 3], dtype=getattr(L, d)))
                                               for d in ("int8", "int64", "uint8") for op in (L.maximum, L.minimum, L.fmax)]
                                              + [L.maximum(L.tensor([True, False]), L.tensor([False, False]))],
    "maximum_minimum_type_promotion": lambda L: (L.maximum(L.tensor([1, 5]), L.tensor([2.5, 2.5])),
                                                 L.minimum(L.tensor([1], dtype=L.uint8), L.tensor([-1], dtype=L.int8))),
    "maximum_minimum_complex": (lambda L: L.maximum(L.tensor([1j]), L.tensor([2j])), "maximum not implemented for complex tensors."),
    "maximum_minimum_scalar_raises": (lambda L: L.maximum(L.tensor([1.]), 2.), ""),
    "maximum_and_minimum_subgradient": lambda L: [(lambda x, y: (op(x, y).sum().backward(), x.grad, y.grad)[1:])(
        L.tensor([0., 1., 2.], requires_grad=True), L.tensor([1., 1., 1.], requires_grad=True)) for op in (L.maximum, L.minimum, L.fmax)],
    # test_copysign / test_copysign_subgradient
    "copysign": lambda L: (L.copysign(*_pairs(L)), _signs(L.copysign(*_pairs(L)))),
    "copysign_ints": lambda L: (L.copysign(L.tensor([1, -2, 3]), L.tensor([-1, 1, -0.])),
                                L.copysign(L.tensor([1, 2], dtype=L.int8), -1),
                                L.copysign(L.tensor([True, False]), L.tensor([-1, 1]))),
    "copysign_float16": lambda L: L.copysign(L.tensor([1., -2.], dtype=L.float16), L.tensor([-0.0, 1.], dtype=L.float32)),
    "copysign_subgradient": lambda L: [(lambda x, y: (L.copysign(x, y).sum().backward(), x.grad, y.grad)[1:])(
        L.tensor([v, v, v], requires_grad=True), L.tensor([-1., 0., 1.], requires_grad=True)) for v in (1.0, 0.0, -1.0)],
    # test_nextafter / test_nextafter_bfloat16
    "nextafter": lambda L: (L.nextafter(L.tensor([-INF, -1.0, 0.0, 1.0, INF, NAN], dtype=L.float64),
                                        L.tensor([1.0, 0.0, -1.0, 2.0, 0.0, 1.0], dtype=L.float64)),
                            L.nextafter(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])) - L.tensor([0.0, 1.0]),
                            L.nextafter(L.tensor([1.0]), L.tensor([1.0]))),
    "nextafter_signed_zero": lambda L: (_signs(L.nextafter(L.tensor([0.0, -0.0]), L.tensor([-0.0, 0.0]))),
                                        L.nextafter(L.tensor([0.0], dtype=L.float64), L.tensor([1.0], dtype=L.float64)).item()),
    "nextafter_bfloat16": lambda L: L.nextafter(L.tensor([1.0, 0.0, -1.0], dtype=L.bfloat16),
                                                L.tensor([2.0, -1.0, -2.0], dtype=L.bfloat16)),
    "nextafter_float16": lambda L: L.nextafter(L.tensor([1.0, 0.0], dtype=L.float16), L.tensor([2.0, 1.0], dtype=L.float16)),
    "nextafter_int_raises": (lambda L: L.nextafter(L.tensor([1]), L.tensor([2])), "not implemented for 'Long'"),
    # test_ldexp
    "ldexp": lambda L: (L.ldexp(L.tensor([1.0, -2.5, 0.0, INF]), L.tensor([3, -2, 5, 1])),
                        L.ldexp(L.tensor([1.0], dtype=L.float64), L.tensor([1023])),
                        L.ldexp(L.tensor([1, 2]), L.tensor([2, 3])),
                        L.ldexp(L.tensor([1.0 + 1j]), L.tensor([2])),
                        L.ldexp(L.tensor([1.0], dtype=L.float16), L.tensor([4]))),
    "ldexp_inplace": lambda L: L.tensor([1.0, 3.0]).ldexp_(L.tensor([2, -1])),
    # test_float_power / test_float_power_exceptions
    "float_power": lambda L: (L.float_power(L.tensor([2, -3]), 2), L.float_power(L.tensor([2.], dtype=L.float16), 0.5),
                              L.float_power(2, L.tensor([1, -1])), L.float_power(L.tensor([4.]), L.tensor([-0.5])),
                              L.float_power(L.tensor([1 + 1j]), 2), L.float_power(L.tensor([-8.]), 1 / 3)),
    "float_power_exceptions_inplace": (lambda L: L.tensor([2.], dtype=L.float32).float_power_(2),
                                       "the base given to float_power_ has dtype Float but the operation's result requires dtype Double"),
    "float_power_exceptions_out": (lambda L: L.float_power(L.tensor([2.]), 2, out=L.empty(1, dtype=L.float32)),
                                   "the output given to float_power has dtype Float but the operation's result requires dtype Double"),
    "float_power_inplace_double": lambda L: L.tensor([2.], dtype=L.float64).float_power_(L.tensor([3])),
    # test_xlogy_xlog1py_*
    "xlogy_special": lambda L: (L.xlogy(*_pairs(L)), L.xlogy(L.tensor([0., 0., 1.]), L.tensor([NAN, 0., 0.]))),
    "xlogy_scalar_type_promotion": lambda L: (L.xlogy(L.tensor([1, 2]), 2), L.xlogy(2, L.tensor([1, 2])),
                                              L.xlogy(L.tensor([1., 2.], dtype=L.float16), 2.0),
                                              L.xlogy(L.tensor([1.]), L.tensor(3., dtype=L.float64)),
                                              L.xlogy(L.tensor([True]), L.tensor([2]))),
    "xlogy_bfloat16": lambda L: L.xlogy(L.tensor([0., 1., 2.], dtype=L.bfloat16), L.tensor([0., 2., 3.], dtype=L.bfloat16)),
    "xlog1py_special": lambda L: (L.special.xlog1py(*_pairs(L)), L.special.xlog1py(L.tensor([0.]), L.tensor([-1.]))),
    "xlogy_inplace": lambda L: L.tensor([0., 2.]).xlogy_(L.tensor([0., 3.])),
    "xlogy_grad_at_zero": lambda L: (lambda x, y: (L.xlogy(x, y).sum().backward(), x.grad, y.grad)[1:])(
        L.tensor([0., 1.], requires_grad=True), L.tensor([0., 2.], requires_grad=True)),
    # test_logaddexp / logaddexp2 / hypot / atan2 edge cases
    "logaddexp_special": lambda L: (L.logaddexp(*_pairs(L, [-INF, -1., 0., 1., INF, NAN, 1e300])),
                                    L.logaddexp2(*_pairs(L, [-INF, -1., 0., 1., INF, NAN]))),
    "logaddexp_complex": lambda L: L.logaddexp(L.tensor([1 + 1j, -2 + 0.5j]), L.tensor([0.5 - 1j, 3 + 2j])),
    "hypot": lambda L: (L.hypot(*_pairs(L, [0., -3., 4., INF, -INF, NAN])), L.hypot(L.tensor([3.], dtype=L.float16), L.tensor([4.]))),
    "hypot_int_raises": (lambda L: L.hypot(L.tensor([3]), L.tensor([4])), "not implemented for 'Long'"),
    "atan2_edgecases": lambda L: (L.atan2(*_pairs(L, [0., -0., 1., -1., INF, -INF, NAN])),
                                  L.atan2(L.tensor([1, -1]), L.tensor([0, 0])), L.arctan2(L.tensor([1.]), 2)),
    # test_gcd / test_lcm
    "gcd_lcm": lambda L: (L.gcd(L.tensor([0, 12, -18, 7, 0]), L.tensor([0, 8, 12, 0, -5])),
                          L.lcm(L.tensor([0, 4, -6, 7]), L.tensor([3, 6, 4, -3])),
                          L.gcd(L.tensor([12, 9], dtype=L.uint8), L.tensor([8, 6], dtype=L.uint8)),
                          L.lcm(L.tensor([4, 6], dtype=L.int16), L.tensor([6, 4], dtype=L.int16))),
    "gcd_float_raises": (lambda L: L.gcd(L.tensor([1.]), L.tensor([2.])), "not implemented for 'Float'"),
    # test_heaviside
    "heaviside": lambda L: (L.heaviside(L.tensor([-1.5, 0., -0., 2., NAN, INF]), L.tensor([0.5])),
                            L.heaviside(L.tensor([-2, 0, 3]), L.tensor([7])),
                            L.heaviside(L.tensor([True, False]), L.tensor([True]))),
    "heaviside_dtype_mismatch": (lambda L: L.heaviside(L.tensor([1.]), L.tensor([1])),
                                 "heaviside is not yet implemented for tensors with different dtypes"),
    "heaviside_complex": (lambda L: L.heaviside(L.tensor([1j]), L.tensor([1j])), "heaviside is not yet implemented for complex tensors"),
    # test_sub_typing / test_rsub / test_add with alpha
    "sub_typing_bool": (lambda L: L.sub(L.tensor([True]), L.tensor([False])), "Subtraction, the `-` operator, with two bool tensors"),
    "sub_bool_scalar": (lambda L: L.tensor([True]) - True, "Subtraction, the `-` operator, with two bool"),
    "sub_bool_int": (lambda L: L.tensor([True]) - L.tensor([1]), "Subtraction, the `-` operator, with a bool tensor"),
    "rsub": lambda L: (L.rsub(L.tensor([1., 2.]), 5), 5 - L.tensor([1, 2]), L.rsub(L.tensor([1, 2]), L.tensor([3, 3]), alpha=2),
                       2.5 - L.tensor([1, 2], dtype=L.uint8)),
    "add_sub_alpha": lambda L: (L.add(L.tensor([1, 2]), L.tensor([3, 4]), alpha=-2), L.sub(L.tensor([1.]), 2, alpha=0.5),
                                L.add(L.tensor([1 + 1j]), L.tensor([1j]), alpha=1j)),
    "add_alpha_complex_to_float": (lambda L: L.add(L.tensor([1.]), L.tensor([1.]), alpha=1j),
                                   "For non-complex input tensors, argument alpha must not be a complex number"),
    "add_alpha_complex_to_int": (lambda L: L.sub(L.tensor([1]), 1, alpha=2j), "argument alpha must not be a floating"),
    "mul_intertype_scalar": lambda L: (L.tensor([3], dtype=L.uint8) * 2.5, L.tensor([3], dtype=L.int16) * L.tensor(2.5),
                                       L.tensor([3], dtype=L.float16) * 1e5, L.tensor([True]) * 3,
                                       L.tensor([100], dtype=L.int8) * L.tensor(3, dtype=L.int64)),
    "mul_bool": lambda L: (L.tensor([True, False]) * L.tensor([True, True]), L.mul(L.tensor([True]), False)),
    "true_divide_out": lambda L: (L.true_divide(L.tensor([1, 2]), 4, out=L.empty(2, dtype=L.float64)),
                                  L.true_divide(L.tensor([1, 2]), L.tensor([3, 3]))),
    "true_divide_out_int": (lambda L: L.true_divide(L.tensor([1, 2]), 4, out=L.empty(2, dtype=L.int64)), "can't be cast"),
    "binary_op_mem_overlap": (lambda L: (lambda x: L.add(x[:3], x[1:], out=x[1:]))(L.arange(4.)),
                              "unsupported operation"),
    "binary_op_mem_overlap_inplace": (lambda L: (lambda x: x.add_(x.flip(0)))(L.ones(1).expand(3)),
                                      "unsupported operation"),
    "not_broadcastable": (lambda L: L.ones(2, 3) + L.ones(3, 2), "The size of tensor a \\(3\\) must match the size of tensor b \\(2\\)"),
    "inplace_broadcast_self_raises": (lambda L: L.ones(3).add_(L.ones(2, 3)), "doesn't match the broadcast shape"),
    "logical_ops": lambda L: [op(L.tensor([0, 1, 2, 0]), L.tensor([0.0, 0.0, NAN, 3.])) for op in
                              (L.logical_and, L.logical_or, L.logical_xor)] + [L.logical_not(_f(L))],
    "logical_ops_out": lambda L: (L.logical_and(L.tensor([1, 0]), L.tensor([1, 1]), out=L.empty(2, dtype=L.int16)),
                                  L.logical_not(L.tensor([0., 2.]), out=L.empty(2, dtype=L.float32))),
    "logical_xor_with_nontrivial_alignment": lambda L: (lambda a, b: L.logical_xor(a[1:101], b[15:115]))(
        L.arange(128) % 3 == 0, L.arange(130) % 2 == 0),
    "add_with_tail": lambda L: (lambda a: a[: 4096 + 67] + a[1: 4096 + 68])(L.linspace(-1, 1, 4200)),
    # test_igamma / test_zeta / test_polygamma special values (binary special functions)
    "igamma_igammac": lambda L: (L.igamma(L.tensor([0.5, 1., 2., 0.]), L.tensor([1., 0., 3., 1.])),
                                 L.igammac(L.tensor([0.5, 1., 2., 1.]), L.tensor([1., INF, 3., 0.]))),
    "zeta": lambda L: (L.special.zeta(L.tensor([2., 3., 1., 0.5]), L.tensor([1., 2., 1., 1.])),
                       L.special.zeta(L.tensor([2.]), 2.)),
    "lerp_weights": lambda L: (L.lerp(L.tensor([0., 1.]), L.tensor([10., -1.]), 0.3),
                               L.lerp(L.tensor([0., 1.]), L.tensor([10., -1.]), L.tensor([0.9, 2.0])),
                               L.lerp(L.tensor([INF]), L.tensor([1.]), 0.5)),
    "lerp_dtype_mismatch": (lambda L: L.lerp(L.tensor([0.]), L.tensor([1.], dtype=L.float64), 0.5),
                            "expected dtype float for `end` but got dtype double"),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_binary_ufuncs(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match or None)


@pytest.mark.parametrize("op", ["truediv", "floordiv", "mod"])
def test_div_and_floordiv_vs_python(op):
    """Tensor results equal Python's own for every pair of small ints and half-ints (b != 0)."""
    import operator
    f = getattr(operator, op)
    vals = [x * 0.5 for x in range(-8, 9)] + list(range(-8, 9))

    def fn(L):
        a = [x for x in vals for y in vals if y != 0]
        b = [y for x in vals for y in vals if y != 0]
        ta, tb = L.tensor(a, dtype=L.float64), L.tensor(b, dtype=L.float64)
        return f(ta, tb), f(ta, 3), f(3.5, tb)
    same(fn)
    a = [x for x in vals for y in vals if y != 0]
    b = [y for x in vals for y in vals if y != 0]
    got = f(ember.tensor(a, dtype=ember.float64), ember.tensor(b, dtype=ember.float64)).tolist()
    assert got == pytest.approx([f(x, y) for x, y in zip(a, b)])


def test_int_floordiv_remainder_vs_python():
    """Integer // and % equal Python's (floor) semantics for every sign combination."""
    a = [x for x in range(-9, 10) for y in range(-4, 5) if y]
    b = [y for x in range(-9, 10) for y in range(-4, 5) if y]
    ta, tb = ember.tensor(a), ember.tensor(b)
    assert (ta // tb).tolist() == [x // y for x, y in zip(a, b)]
    assert (ta % tb).tolist() == [x % y for x, y in zip(a, b)]
    assert ember.fmod(ta, tb).tolist() == [int(math.fmod(x, y)) for x, y in zip(a, b)]
    same(lambda L: (L.tensor(a) // L.tensor(b), L.tensor(a) % L.tensor(b), L.fmod(L.tensor(a), L.tensor(b))))


PROMOTION_DTYPES = ["bool", "uint8", "int8", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
PROMOTION_OPS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2", "hypot", "copysign",
                 "maximum", "minimum", "fmax", "fmin", "logaddexp", "nextafter", "xlogy", "float_power", "eq", "lt",
                 "bitwise_and", "logical_xor", "heaviside", "gcd", "true_divide", "ldexp"]


def _builtin_name(exc):
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins").__name__


@pytest.mark.parametrize("op", PROMOTION_OPS)
def test_binary_op_dtype_pairs(op):
    """test_type_promotion / test_binary_ops_with_scalars: every pair of dtypes gives torch's
    result dtype and values, or raises the same exception class."""
    def fn(L):
        f = getattr(L, op)
        out = []
        for d1 in PROMOTION_DTYPES:
            for d2 in PROMOTION_DTYPES:
                a = L.tensor([1, 0, 3]).to(getattr(L, d1))
                b = L.tensor([2, 1, 1]).to(getattr(L, d2))
                try:
                    out.append(f(a, b))
                except Exception as exc:  # the check compares the exception classes
                    out.append(_builtin_name(exc))
        return out
    same(fn)
