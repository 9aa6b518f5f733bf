"""The op test table's rows for torch's remaining public elementwise callables: logaddexp,
fmax/fmin, gcd/lcm, heaviside, xlogy, the incomplete gamma functions, nextafter, sinc, i0, logit,
frexp, the sign and infinity predicates, float_power, ldexp, mvlgamma, clamp_min/clamp_max, the
in-place comparison and logical ops and their aliases, the complex accessors (real, imag, angle,
view_as_real, view_as_complex, polar, complex), gumbel_softmax, and the torch.* forms of
fill/zero_/detach/dropout_.

Same conventions as op_db.py, which appends these rows to its OPS. ember has no complex samples
of its own: complex rows build their complex tensors with view_as_complex from float ones, and
compare through view_as_real (the comparison helpers are for real dtypes).
"""
import functools

import numpy as np

from op_db import (ALL, FLOATS, INTEGRAL, INTS, NUMBERS, ErrorInput, OpInfo, Sample, T,
                   binary_samples, boolean, f32, i64, inplace_samples, make, round_to,
                   unary_samples, addmm_samples, clamp_samples, clamp_tensor_samples)

MIXED = ("int64", "float64")
PAIR = ("float32", "float64")  # the dtypes of rows that build complex tensors


def _clone_inplace(method):
    def op(m, x, *rest, **kwargs):
        return getattr(x.clone(), method)(*rest, **kwargs)
    return op


def _unary(low=None, high=None, **kw):
    return functools.partial(unary_samples, low=low, high=high, **kw)


def _tensor_only(match="Tensor"):
    """Errors of ops whose `other` must be a tensor (no Scalar overload in PyTorch)."""
    return lambda: [ErrorInput(f32(3), 2.0, match=match)]


def _logit_samples(dtype, rng):
    """Floats inside (0, 1) with and without eps; integers (and the extremal floats) give
    infinities and NaN, with eps clamped to finite values."""
    kwargs = ({}, {"eps": 0.1}, {"eps": 1e-6})
    if dtype in FLOATS:
        return unary_samples(dtype, rng, low=0.02, high=0.98, kwargs=kwargs)
    return unary_samples(dtype, rng, kwargs=kwargs)


def _igamma_other_samples(dtype, rng):
    """igamma's derivative exists for `other` only: `self` does not require grad."""
    return [Sample(make(rng, shape, dtype, low=0.5, high=4, grad=False),
                   make(rng, shape2, dtype, low=0.2, high=4))
            for shape, shape2 in (((5,), (5,)), ((3, 4), (4,)), ((3, 4), (3, 1)))]


def _addmm_inplace_samples(dtype, rng):
    """addmm samples whose self has the result's shape (an in-place op cannot broadcast it)."""
    return [s for s in addmm_samples(dtype, rng) if
            s.args[0].data.shape == (s.args[1].data.shape[0], s.args[2].data.shape[1])]


def _ldexp_samples(dtype, rng):
    """Any mantissa with an integer exponent tensor (and a float one)."""
    out = [Sample(make(rng, s, dtype), make(rng, e, "int64", low=-4, high=4))
           for s, e in (((5,), (5,)), ((3, 4), (4,)), ((), ()), ((3, 1), (1, 4)))]
    out.append(Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), "float32", low=-3, high=3)))
    return out


def _ldexp_inplace_samples(dtype, rng):
    return [s for s in _ldexp_samples(dtype, rng)
            if np.broadcast_shapes(s.args[0].data.shape, s.args[1].data.shape) ==
            s.args[0].data.shape]


def _clamp_one_bound_samples(bound):
    def samples(dtype, rng):
        # a number bound first: PyTorch refuses it for bool (and takes a bool tensor bound)
        out = [Sample(make(rng, (3, 4), dtype), s) for s in (
            True if dtype == "bool" else 2 if dtype in INTS else 0.5,
            make(rng, (4,), dtype), make(rng, (), dtype))]
        return [Sample(s.args[0], **{bound: s.args[1]}) for s in out]
    return samples


def _gcd_samples(dtype, rng):
    return binary_samples(dtype, rng, scalars=False, mixed=("int32",))


def _complex_of(m, x):
    return m.view_as_complex(x)


def _complex_samples(dtype, rng):
    """Float tensors with a last dim of 2 (the real and imaginary parts); the last one has
    zeros on the axes (no grad there: derivatives at 0 are conventions)."""
    shapes = ((5, 2), (3, 4, 2), (2,))
    out = [Sample(make(rng, s, dtype)) for s in shapes]
    x = make(rng, (4, 3, 2), dtype)
    out.append(Sample(T(np.ascontiguousarray(x.data.transpose(1, 0, 2)), dtype)))
    out.append(Sample(T(round_to(np.array([[0., 0.], [0., -1.], [-2., 0.], [3., 4.]]), dtype),
                        dtype, grad=False)))
    return out


def _nonempty_samples(dtype, rng):
    """unary_samples without the empty tensors (PyTorch's view_as_real backward refuses the
    strides it gives their gradients)."""
    return [s for s in unary_samples(dtype, rng) if s.args[0].data.size]


def _set_imag(m, x):
    z = _complex_of(m, x.detach().clone())
    z.imag = z.real * 2
    return m.view_as_real(z)


def _polar_samples(dtype, rng):
    return [Sample(make(rng, s, dtype, low=0.1, high=3), make(rng, s2, dtype, low=-3, high=3))
            for s, s2 in (((5,), (5,)), ((3, 4), (4,)), ((), ()))]


def _seeded(fn):
    """fn run right after seeding each library's generator with the same seed."""
    def op(m, *args, **kwargs):
        m.manual_seed(0)
        return fn(m, *args, **kwargs)
    return op


def _softmax_samples(dtype, rng):
    kwargs = ({}, {"tau": 0.5}, {"hard": True}, {"dim": 0, "tau": 2.0})
    return [Sample(make(rng, s, dtype), **kw) for kw in kwargs for s in ((3, 4), (2, 3, 5))]


def _dropout_samples(dtype, rng):
    return [Sample(make(rng, (4, 5), dtype), p, train) for p, train in
            ((0.5, True), (0.2, True), (0.5, False))]


def _view_as_complex_errors():
    return [ErrorInput(i64(3, 2), match="float and double"),
            ErrorInput(f32(3, 3), match="last dimension of size 2"),
            ErrorInput(f32(), match="Input tensor must have one or more dimensions"),
            ErrorInput(T(np.zeros((3, 2)), "float32", "sliced", grad=False),
                       match="stride 1")]


ELEMENTWISE_OPS = [
    # ---- binary math
    OpInfo("logaddexp", lambda m, x, y: m.logaddexp(x, y), FLOATS,
           functools.partial(binary_samples, scalars=False, mixed=MIXED),
           errors=_tensor_only()),
    OpInfo("logaddexp2", lambda m, x, y: x.logaddexp2(y), FLOATS,
           functools.partial(binary_samples, scalars=False, mixed=MIXED),
           errors=_tensor_only()),
    OpInfo("fmax", lambda m, x, y: m.fmax(x, y), ALL,
           functools.partial(binary_samples, scalars=False, mixed=MIXED),
           errors=_tensor_only()),
    OpInfo("fmin", lambda m, x, y: x.fmin(y), ALL,
           functools.partial(binary_samples, scalars=False, mixed=MIXED)),
    OpInfo("gcd", lambda m, x, y: m.gcd(x, y), INTS, _gcd_samples, grad=False,
           errors=_tensor_only()),
    OpInfo("lcm", lambda m, x, y: x.lcm(y), INTS, _gcd_samples, grad=False),
    OpInfo("gcd_", lambda m, x, y: m.gcd_(x.clone(), y), INTS,
           functools.partial(inplace_samples, scalars=False), grad=False),
    OpInfo("lcm_", _clone_inplace("lcm_"), INTS,
           functools.partial(inplace_samples, scalars=False), grad=False),
    OpInfo("heaviside", lambda m, x, y: m.heaviside(x, y), ALL,
           functools.partial(binary_samples, scalars=False), gradcheck=False,
           errors=lambda: [ErrorInput(f32(3), i64(3), match="different dtypes")]),
    OpInfo("heaviside_", _clone_inplace("heaviside_"), ALL,
           functools.partial(inplace_samples, scalars=False), gradcheck=False),
    OpInfo("xlogy", lambda m, x, y: m.xlogy(x, y), ALL,
           functools.partial(binary_samples, mixed=MIXED)),
    OpInfo("xlogy_scalar_self", lambda m, y: m.xlogy(2.5, y), ALL,
           _unary(0.1, 4)),
    OpInfo("xlogy_", _clone_inplace("xlogy_"), FLOATS, inplace_samples),
    OpInfo("igamma", lambda m, x, y: m.igamma(x, y), FLOATS,
           functools.partial(binary_samples, low=0.1, high=4, scalars=False, mixed=MIXED),
           gradcheck=False, errors=_tensor_only()),
    OpInfo("igammac", lambda m, x, y: x.igammac(y), FLOATS,
           functools.partial(binary_samples, low=0.1, high=4, scalars=False),
           gradcheck=False),
    OpInfo("igamma_other", lambda m, x, y: m.igamma(x, y), FLOATS, _igamma_other_samples,
           other_dtypes_raise=False),
    OpInfo("igammac_other_", lambda m, x, y: x.clone().igammac_(y), FLOATS,
           _igamma_other_samples, other_dtypes_raise=False),
    OpInfo("nextafter", lambda m, x, y: m.nextafter(x, y), FLOATS,
           functools.partial(binary_samples, scalars=False, mixed=MIXED),
           errors=_tensor_only()),
    OpInfo("nextafter_", _clone_inplace("nextafter_"), FLOATS,
           functools.partial(inplace_samples, scalars=False)),
    OpInfo("float_power", lambda m, x, y: m.float_power(x, y), ALL,
           functools.partial(binary_samples, low=0.1, high=3, mixed=MIXED)),
    OpInfo("float_power_", _clone_inplace("float_power_"), ("float64",),
           functools.partial(inplace_samples, mixed=("float32",)), gradcheck=False),
    # PyTorch's gradient takes 2 ** other as an integer pow (0 for negative exponents), which
    # gradcheck's finite differences disagree with; ember gives PyTorch's gradient
    OpInfo("ldexp", lambda m, x, y: m.ldexp(x, y), ALL, _ldexp_samples, gradcheck=False),
    OpInfo("ldexp_", _clone_inplace("ldexp_"), FLOATS, _ldexp_inplace_samples,
           other_dtypes_raise=False, gradcheck=False),
    OpInfo("ldexp_float_exponent", lambda m, x, y: m.ldexp(x, y), FLOATS,
           functools.partial(binary_samples, scalars=False), other_dtypes_raise=False),

    # ---- unary math
    OpInfo("sinc", lambda m, x: m.sinc(x), ALL, unary_samples),
    # float16: the gradient's formula cancels near the zeros of sinc's derivative
    OpInfo("sinc_", _clone_inplace("sinc_"), FLOATS, unary_samples,
           tol={"float16": (3e-2, 1e-2)}),
    OpInfo("i0", lambda m, x: m.i0(x), ALL, unary_samples),
    OpInfo("i0_", lambda m, x: m.i0_(x.clone()), FLOATS, unary_samples),
    OpInfo("logit", lambda m, x, **kw: m.logit(x, **kw), ALL, _logit_samples),
    OpInfo("logit_", lambda m, x, **kw: x.clone().logit_(**kw), FLOATS, _logit_samples),
    OpInfo("deg2rad", lambda m, x: m.deg2rad(x), ALL, unary_samples),
    OpInfo("rad2deg", lambda m, x: x.rad2deg(), ALL, unary_samples),
    OpInfo("deg2rad_", lambda m, x: m.deg2rad_(x.clone()), FLOATS, unary_samples),
    OpInfo("rad2deg_", _clone_inplace("rad2deg_"), FLOATS, unary_samples),
    # (+ x: PyTorch's zero gradient of sgn is a ZeroTensor, which has no numpy())
    OpInfo("sgn", lambda m, x: m.sgn(x) + x, ALL, unary_samples),
    OpInfo("sgn_", lambda m, x: x.clone().sgn_() + x, ALL, unary_samples),
    OpInfo("mvlgamma", lambda m, x, p: m.mvlgamma(x, p), NUMBERS,
           _unary(2, 6, kwargs=({"p": 1}, {"p": 3})),
           errors=lambda: [ErrorInput(f32(3), p=0, match="p has to be"),
                           ErrorInput(boolean(3), p=1, match="boolean")]),
    OpInfo("mvlgamma_", lambda m, x: x.clone().mvlgamma_(2), FLOATS, _unary(2, 6)),
    OpInfo("positive", lambda m, x: m.positive(x), NUMBERS, unary_samples),
    OpInfo("square_", lambda m, x: m.square_(x.clone()), NUMBERS, unary_samples),
    OpInfo("frexp", lambda m, x: m.frexp(x), FLOATS, unary_samples,
           errors=lambda: [ErrorInput(i64(3), match="floating-point")]),
    OpInfo("frexp_method", lambda m, x: x.frexp(), FLOATS, unary_samples),
    *[OpInfo(name, fn, ALL, unary_samples, grad=False) for name, fn in (
        ("isposinf", lambda m, x: m.isposinf(x)),
        ("isneginf", lambda m, x: x.isneginf()), ("isreal", lambda m, x: m.isreal(x)))],

    # (ember's bfloat16 tensors do not keep a NaN's sign bit: NaN is left out there)
    OpInfo("signbit", lambda m, x: m.signbit(x), ALL,
           _unary(special=(np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5)), grad=False),
    OpInfo("signbit_nan", lambda m, x: m.signbit(x), ("float16", "float32", "float64"),
           unary_samples, grad=False, other_dtypes_raise=False),

    # ---- clamp with one bound
    OpInfo("clamp_min", lambda m, x, **kw: m.clamp_min(x, kw["min"]), NUMBERS,
           _clamp_one_bound_samples("min")),
    OpInfo("clamp_max", lambda m, x, **kw: x.clamp_max(kw["max"]), NUMBERS,
           _clamp_one_bound_samples("max")),
    OpInfo("clamp_min_", lambda m, x, **kw: m.clamp_min_(x.clone(), kw["min"]), NUMBERS,
           _clamp_one_bound_samples("min")),
    OpInfo("clamp_max_", lambda m, x, **kw: x.clone().clamp_max_(kw["max"]), NUMBERS,
           _clamp_one_bound_samples("max")),
    OpInfo("torch_clamp_", lambda m, x, **kw: m.clamp_(x.clone(), **kw), NUMBERS,
           functools.partial(clamp_samples, inplace=True)),
    OpInfo("torch_clip_", lambda m, x, **kw: m.clip_(x.clone(), **kw), NUMBERS,
           clamp_tensor_samples),

    # ---- in-place comparisons and logical ops (their results are cast to self's dtype)
    *[OpInfo(name, _clone_inplace(name), ALL,
             functools.partial(inplace_samples, mixed=("int64", "float32")), grad=False)
      for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_",
                   "less_", "less_equal_", "not_equal_")],
    *[OpInfo(name, _clone_inplace(name), ALL,
             functools.partial(inplace_samples, scalars=False), grad=False)
      for name in ("logical_and_", "logical_or_", "logical_xor_")],
    *[OpInfo(name, _clone_inplace(name), INTEGRAL, inplace_samples, grad=False)
      for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_")],
    *[OpInfo(name, lambda m, x, y, name=name: getattr(x, name)(y), ALL,
             functools.partial(binary_samples, mixed=MIXED), grad=False)
      for name in ("greater", "greater_equal", "less", "less_equal", "not_equal")],
    OpInfo("multiply_", _clone_inplace("multiply_"), ALL, inplace_samples),
    OpInfo("subtract_", _clone_inplace("subtract_"), NUMBERS, inplace_samples),
    OpInfo("divide_", _clone_inplace("divide_"), FLOATS,
           functools.partial(inplace_samples, nonzero=True)),
    OpInfo("true_divide_", _clone_inplace("true_divide_"), FLOATS,
           functools.partial(inplace_samples, nonzero=True)),
    OpInfo("floor_divide_", _clone_inplace("floor_divide_"), NUMBERS,
           functools.partial(inplace_samples, nonzero=True), grad=False),
    OpInfo("remainder_", _clone_inplace("remainder_"), NUMBERS,
           functools.partial(inplace_samples, nonzero=True)),
    OpInfo("addmm_", lambda m, b, x, y, **kw: b.clone().addmm_(x, y, **kw), NUMBERS,
           _addmm_inplace_samples, other_dtypes_raise=False),
    OpInfo("torch_addmv_", lambda m, s, a, b: m.addmv_(s.clone(), a, b, beta=2, alpha=3),
           NUMBERS, lambda dtype, rng: [Sample(make(rng, (3,), dtype), make(rng, (3, 4), dtype),
                                              make(rng, (4,), dtype))]),

    # ---- complex numbers
    OpInfo("angle", lambda m, x: m.angle(x), ALL, unary_samples),
    OpInfo("angle_method", lambda m, x: x.angle(), ALL, unary_samples),
    OpInfo("real_of_real", lambda m, x: m.real(x), ALL, unary_samples),
    OpInfo("view_as_complex", lambda m, x: m.view_as_real(m.view_as_complex(x)), PAIR,
           _complex_samples, other_dtypes_raise=False,
           errors=_view_as_complex_errors),
    OpInfo("real", lambda m, x: m.real(_complex_of(m, x)), PAIR, _complex_samples,
           other_dtypes_raise=False),
    OpInfo("imag", lambda m, x: m.imag(_complex_of(m, x)), PAIR, _complex_samples,
           other_dtypes_raise=False),
    OpInfo("real_imag_properties", lambda m, x: (_complex_of(m, x).real,
                                                 _complex_of(m, x).imag), PAIR,
           _complex_samples, other_dtypes_raise=False),
    OpInfo("imag_setter", _set_imag, PAIR, _complex_samples, grad=False,
           other_dtypes_raise=False),
    OpInfo("imag_of_real", lambda m, x: m.imag(x), (), unary_samples,  # every real dtype raises
           errors=lambda: [ErrorInput(f32(3), match="non-complex")]),
    OpInfo("angle_complex", lambda m, x: _complex_of(m, x).angle(), PAIR, _complex_samples,
           other_dtypes_raise=False),
    OpInfo("isreal_complex", lambda m, x: m.isreal(_complex_of(m, x)), PAIR, _complex_samples,
           other_dtypes_raise=False),
    # (gradients against torch's; no gradgradcheck: the second derivative of a complex tensor
    # divided by a real one differs from torch's for 0-d tensors, a known gap)
    OpInfo("sgn_complex", lambda m, x: m.view_as_real(m.sgn(_complex_of(m, x))), PAIR,
           _complex_samples, other_dtypes_raise=False, gradcheck=False),
    OpInfo("conj_physical", lambda m, x: m.view_as_real(m.conj_physical(_complex_of(m, x))),
           PAIR, _complex_samples, other_dtypes_raise=False),
    # (no gradients: ember's in-place ops on a complex view of a real tensor lose them)
    OpInfo("conj_physical_", lambda m, x: m.view_as_real(
        m.conj_physical_(_complex_of(m, x.detach().clone()))), PAIR, _complex_samples,
        other_dtypes_raise=False, gradcheck=False),
    OpInfo("conj", lambda m, x: m.view_as_real(m.conj(_complex_of(m, x)).resolve_conj()),
           PAIR, _complex_samples, other_dtypes_raise=False),
    OpInfo("resolve", lambda m, x: m.resolve_neg(m.resolve_conj(x)), ALL, unary_samples),
    OpInfo("_neg_view", lambda m, x: m._neg_view(x).resolve_neg(), NUMBERS, unary_samples),
    OpInfo("conj_physical_real", lambda m, x: m.conj_physical(x), ALL, unary_samples),
    OpInfo("polar", lambda m, a, b: m.view_as_real(m.polar(a, b)), PAIR, _polar_samples,
           other_dtypes_raise=False),
    OpInfo("complex", lambda m, a, b: m.view_as_real(m.complex(a, b)), PAIR, _polar_samples,
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(3), i64(3), match="Float or Double"),
                           ErrorInput(f32(3), T(np.zeros(3), "float64", grad=False),
                                      match="scalar type")]),
    # (no gradcheck for cfloat: finite differences in complex64 lose float64's precision)
    OpInfo("cfloat", lambda m, x: m.view_as_real(x.cfloat()), NUMBERS, _nonempty_samples,
           other_dtypes_raise=False, gradcheck=False),
    OpInfo("cdouble", lambda m, x: m.view_as_real(x.cdouble()), NUMBERS, _nonempty_samples,
           other_dtypes_raise=False),

    # ---- nn.functional and torch.* forms
    OpInfo("relu_functional_", lambda m, x: m.nn.functional.relu_(x.clone()), NUMBERS,
           unary_samples),
    OpInfo("gumbel_softmax", _seeded(lambda m, x, **kw: m.nn.functional.gumbel_softmax(x, **kw)),
           PAIR, _softmax_samples, other_dtypes_raise=False, gradcheck=False),
    *[OpInfo(f"torch_{name}", _seeded(lambda m, x, p, train, name=name: getattr(m, name)(
        x.clone(), p, train)), PAIR, _dropout_samples, other_dtypes_raise=False,
        gradcheck=False)
      for name in ("dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_")],
    OpInfo("torch_fill", lambda m, x: m.fill(x, 2.5), ALL, unary_samples),
    OpInfo("torch_fill_", lambda m, x: m.fill_(x.clone(), 3), ALL, unary_samples),
    # a 0-dim tensor value: the fill.Tensor / fill_.Tensor overloads
    OpInfo("torch_fill_tensor", lambda m, x: m.fill(x, m.tensor(2.5).to(x.dtype)), ALL,
           unary_samples),
    OpInfo("torch_fill_tensor_", lambda m, x: m.fill_(x.clone(), m.tensor(3).to(x.dtype)), ALL,
           unary_samples),
    OpInfo("torch_zero_", lambda m, x: m.zero_(x.clone()), ALL, unary_samples),
    OpInfo("torch_detach", lambda m, x: m.detach(x), ALL, unary_samples, gradcheck=False),
    OpInfo("torch_detach_", lambda m, x: m.detach_(x.clone()), ALL, unary_samples,
           gradcheck=False),
]
