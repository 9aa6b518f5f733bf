"""The op test table (PyTorch's OpInfo database, tinygrad's one-line test helper).

One `OpInfo` per op variant. Its `op(m, *args, **kwargs)` is applied identically to `m = ember`
and `m = torch`; its sample generator builds the arguments in NumPy for one dtype; its error
inputs must make ember raise the exception type torch raises. `tests/test_ops.py` runs the table.

Arguments are described, not built: `T(array, dtype)` is a tensor argument (turned into an ember
and a torch tensor by the test, optionally made non-contiguous), `DT("float64")` is a dtype
argument (`m.float64`), and anything else (Python numbers, strings) is passed as it is.
"""
import functools
import operator

import numpy as np

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
INTS = ("uint8",) + SIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
ALL = BOOL + INTS + FLOATS
NUMBERS = INTS + FLOATS        # everything but bool
INTEGRAL = BOOL + INTS         # what bitwise ops accept


# ---- how samples are described --------------------------------------------------------------
class T:
    """A tensor argument: NumPy data, the dtype to give it, and its memory layout.

    layout "contiguous", "transposed" (a permuted view of a contiguous tensor) or "sliced" (every
    other element of the last dim). Floating tensors require grad unless grad=False.
    """
    __slots__ = ("data", "dtype", "layout", "grad")

    def __init__(self, data, dtype, layout="contiguous", grad=True):
        self.data, self.dtype, self.layout, self.grad = data, dtype, layout, grad

    def __repr__(self):
        extra = "" if self.layout == "contiguous" else f", {self.layout}"
        return f"T({list(self.data.shape)}, {self.dtype}{extra})"


class DT:
    """A dtype argument, resolved to `m.<name>` for each module."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"DT({self.name})"


class Sample:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})"


class ErrorInput(Sample):
    """Arguments on which torch raises; `match` is a regex ember's message must contain."""

    def __init__(self, *args, match=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.match = match


class OpInfo:
    """One op variant: how to call it, for which dtypes, on which samples, and its errors.

    dtypes        the dtypes the samples are built in; every other dtype in ALL must raise in
                  torch and in ember alike (on the first sample)
    samples       fn(dtype, rng) -> [Sample]
    errors        fn() -> [ErrorInput]
    grad          compare the gradients of floating inputs with torch's
    gradcheck     run ember.autograd.gradcheck/gradgradcheck on small float64 samples
    gradgrad      False where PyTorch's backward is not differentiable again: gradgradcheck
                  must raise its "derivative ... is not implemented" error
    tol           {dtype: (rtol, atol)} where the default per-dtype tolerance is too tight
    other_dtypes_raise  False for variants whose samples only make sense in some dtypes
                  (special values, one dtype's promotion): the other dtypes are not checked
    exact_half_reference  compare float16/bfloat16 results with torch's float64 result rounded
                  to the dtype: PyTorch's own half-precision kernels for these ops accumulate in
                  half precision on some CPUs (AVX2) and not on others (AVX-512), so their
                  result is not a stable oracle
    """

    def __init__(self, name, op, dtypes, samples, *, errors=None, grad=True, gradcheck=None,
                 gradgrad=True, tol=None, other_dtypes_raise=True, exact_half_reference=False):
        self.name, self.op, self.dtypes, self.samples = name, op, dtypes, samples
        self.errors = errors
        self.grad = grad
        self.gradcheck = grad if gradcheck is None else gradcheck
        self.gradgrad = gradgrad
        self.tol = tol or {}
        self.other_dtypes_raise = other_dtypes_raise
        self.exact_half_reference = exact_half_reference

    def __repr__(self):
        return self.name


# ---- data -----------------------------------------------------------------------------------
def make(rng, shape, dtype, layout="contiguous", *, low=None, high=None, nonzero=False,
         grad=True):
    """Random data for a tensor of `dtype`: small integers, or uniform floats in [low, high].

    bfloat16 data is held as float32 values that bfloat16 represents exactly, so both libraries
    see the same numbers.
    """
    if dtype == "bool":
        data = rng.random(shape) < 0.5
    elif dtype in INTS:
        lo = max(-9 if low is None else int(np.ceil(low)), 0 if dtype == "uint8" else -9)
        hi = 9 if high is None else int(high)
        data = rng.integers(lo, hi + 1, shape).astype(dtype)
    else:
        data = rng.uniform(-3 if low is None else low, 3 if high is None else high, shape)
        data = round_to(data, dtype)
    if nonzero and dtype != "bool":
        data[data == 0] = 1
    return T(np.asarray(data), dtype, layout, grad)


def round_to(data, dtype):
    if dtype == "bfloat16":
        import ml_dtypes
        return np.asarray(data).astype(ml_dtypes.bfloat16).astype(np.float32)
    return np.asarray(data).astype(dtype)


def scalar_for(dtype):
    """A Python number of the dtype's own category."""
    return True if dtype == "bool" else 3 if dtype in INTS else 2.5


def other_category_scalar(dtype):
    """A Python number of another category (int tensor + 2.5, float tensor + 2, bool + 3)."""
    return 3 if dtype == "bool" else 2.5 if dtype in INTS else 2


def noncontig_shapes():
    return (((3, 4), "transposed"), ((3, 4), "sliced"), ((2, 3, 4), "transposed"),
            ((2, 3, 4), "sliced"))


# ---- sample generators ----------------------------------------------------------------------
EXTREMAL = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e4)


def extremal(dtype, shape=(len(EXTREMAL),), seed=0, values=EXTREMAL):
    """NaN, infinities, signed zeros and large values (floats only), without grad: derivatives
    there are conventions, compared in the ordinary samples."""
    values = np.array(values)[np.random.default_rng(seed).permutation(len(values))]
    return T(round_to(np.resize(values, shape), dtype), dtype, grad=False)


UNARY_SHAPES = ((), (0,), (5,), (3, 4), (2, 3, 4), (2, 0, 3))


def unary_samples(dtype, rng, *, low=None, high=None, nonzero=False, kwargs=({},),
                  special=EXTREMAL):
    out = []
    shapes = [(s, "contiguous") for s in UNARY_SHAPES] + list(noncontig_shapes())
    for kw in kwargs:
        for shape, layout in shapes:
            x = make(rng, shape, dtype, layout, low=low, high=high, nonzero=nonzero)
            out.append(Sample(x, **kw))
        if dtype in FLOATS:
            out.append(Sample(extremal(dtype, (len(special),), values=special), **kw))
    return out


BINARY_SHAPES = (((), ()), ((5,), (5,)), ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)),
                 ((2, 3, 4), (3, 1)), ((3, 4), ()), ((), (3, 4)), ((0,), (0,)),
                 ((0, 4), (4,)), ((2, 1, 4), (3, 1)))


def grad_input_samples(dtype, rng, *, low=None, high=None, extra=((),)):
    """(grad_output, self, *extra) of an activation's backward op: the two tensors of one shape,
    in every unary shape and layout."""
    out = []
    for rest in extra:
        shapes = [(s, "contiguous") for s in UNARY_SHAPES] + list(noncontig_shapes())
        for shape, layout in shapes:
            out.append(Sample(make(rng, shape, dtype), make(rng, shape, dtype, layout, low=low,
                                                            high=high), *rest))
    return out


def binary_samples(dtype, rng, *, low=None, high=None, rhs_low=None, rhs_high=None,
                   nonzero=False, scalars=True, mixed=(), kwargs=({},)):
    """Pairs of tensors that broadcast, non-contiguous pairs, Python-scalar right operands and
    tensors of other dtypes (`mixed`: dim-ful and zero-dim ones, to exercise promotion).

    scalars: True (a number of the dtype's category and one of another), "same" (only the
    former) or False (the op takes tensors only).
    """
    lhs = dict(low=low, high=high)
    rhs = dict(low=low if rhs_low is None else rhs_low, high=high if rhs_high is None else
               rhs_high, nonzero=nonzero)
    pairs = []
    for sa, sb in BINARY_SHAPES:
        pairs.append((make(rng, sa, dtype, **lhs), make(rng, sb, dtype, **rhs)))
    for (shape, layout), (_, layout_b) in zip(noncontig_shapes(), reversed(noncontig_shapes())):
        b_layout = layout_b if len(shape) == 3 else "contiguous"
        pairs.append((make(rng, shape, dtype, layout, **lhs),
                      make(rng, shape, dtype, b_layout, **rhs)))
    if scalars:
        numbers = (scalar_for(dtype),) if scalars == "same" else \
            (scalar_for(dtype), other_category_scalar(dtype))
        for number in numbers:
            pairs.append((make(rng, (3, 4), dtype, **lhs), number))
        pairs.append((make(rng, (), dtype, **lhs), scalar_for(dtype)))
    for other in mixed:
        if other != dtype:
            pairs.append((make(rng, (3, 4), dtype, **lhs), make(rng, (4,), other, **rhs)))
            pairs.append((make(rng, (3, 4), dtype, **lhs), make(rng, (), other, **rhs)))
            pairs.append((make(rng, (), dtype, **lhs), make(rng, (2, 3), other, **rhs)))
    if dtype in FLOATS:  # every pair of special values
        n = len(EXTREMAL)
        pairs.append((extremal(dtype, (n, 1)), extremal(dtype, (n,), seed=1)))
    return [Sample(a, b, **kw) for kw in kwargs for a, b in pairs]


INPLACE_SHAPES = (((), ()), ((5,), (5,)), ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (3, 1)),
                  ((3, 4), ()), ((0, 4), (4,)))


def inplace_samples(dtype, rng, *, nonzero=False, scalars=True, mixed=()):
    """Operand pairs whose broadcast shape is the left operand's (what an in-place op needs)."""
    pairs = [(make(rng, sa, dtype), make(rng, sb, dtype, nonzero=nonzero))
             for sa, sb in INPLACE_SHAPES]
    pairs.append((make(rng, (3, 4), dtype, "transposed"), make(rng, (3, 4), dtype, "sliced",
                                                                nonzero=nonzero)))
    if scalars:
        pairs.append((make(rng, (3, 4), dtype), scalar_for(dtype)))
    for other in mixed:
        if category(other) <= category(dtype):  # what an in-place op can cast back
            pairs.append((make(rng, (3, 4), dtype), make(rng, (4,), other, nonzero=nonzero)))
    return [Sample(a, b) for a, b in pairs]


def category(dtype):
    return 0 if dtype == "bool" else 1 if dtype in INTS else 2


def reduction_samples(dtype, rng, *, dims="multi", full=True, dim_none=True, empty=True,
                      kwargs=({},), low=None, high=None):
    """Reductions over every dim spelling: none given, an int, a negative int, a tuple, with and
    without keepdim, on 0-d, 1-d, n-d, empty and non-contiguous inputs.

    dims: "multi" (int or tuple), "single" (int only). full: whether omitting dim is allowed;
    dim_none: whether dim=None means the same. empty: whether reducing an empty dim is defined
    (sum is; amax is not).
    """
    shapes = [((), "contiguous"), ((5,), "contiguous"), ((3, 4), "contiguous"),
              ((2, 3, 4), "contiguous")] + list(noncontig_shapes())
    out = []
    for shape, layout in shapes:
        n = len(shape)
        dim_choices = [0, -1]
        if dims == "multi" and n:
            dim_choices += [(0, -1), (-1,)] if n >= 2 else [(0,)]
            if n == 3:
                dim_choices.append((2, 0))
        for kw in kwargs:
            x = make(rng, shape, dtype, layout, low=low, high=high)
            if full:
                out.append(Sample(x, **kw))
            if full and dim_none:
                out.append(Sample(make(rng, shape, dtype, layout, low=low, high=high), dim=None,
                                  keepdim=True, **kw))
            for d in dim_choices:
                for keepdim in (False, True):
                    out.append(Sample(make(rng, shape, dtype, layout, low=low, high=high),
                                      dim=d, keepdim=keepdim, **kw))
    if empty:
        for kw in kwargs:
            out.append(Sample(make(rng, (0,), dtype), dim=0, **kw))
            if full:
                out.append(Sample(make(rng, (2, 0), dtype), **kw))
    # a non-empty reduction of an empty tensor is defined for every reduction
    for kw in kwargs:
        out.append(Sample(make(rng, (2, 0), dtype), dim=0, keepdim=True, **kw))
        if dtype in FLOATS:
            x = extremal(dtype, (2, 5))
            out += [Sample(x, dim=1, **kw), Sample(x, dim=0, **kw)]
    return out


MATMUL_SHAPES = (((3,), (3,)), ((3,), (3, 4)), ((3, 4), (4,)), ((3, 4), (4, 5)),
                 ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (2, 4, 2)), ((0, 3), (3, 4)),
                 ((3, 0), (0, 4)), ((2, 3, 4), (2, 4, 5)))


def matmul_samples(dtype, rng):
    out = [Sample(make(rng, a, dtype), make(rng, b, dtype)) for a, b in MATMUL_SHAPES]
    out.append(Sample(make(rng, (3, 4), dtype, "transposed"), make(rng, (4, 4), dtype, "sliced")))
    out.append(Sample(make(rng, (2, 3, 4), dtype, "sliced"),
                      make(rng, (2, 4, 3), dtype, "transposed")))
    return out


def shaped_pairs(shapes):
    """Samples of two tensors with the given shapes (and both non-contiguous for the last)."""
    def samples(dtype, rng):
        out = [Sample(make(rng, a, dtype), make(rng, b, dtype)) for a, b in shapes]
        a, b = shapes[-1]
        out.append(Sample(make(rng, a, dtype, "transposed"), make(rng, b, dtype, "sliced")))
        return out
    return samples


def mm_samples(dtype, rng):
    return shaped_pairs((((3, 4), (4, 5)), ((1, 1), (1, 1)), ((0, 2), (2, 3)),
                         ((2, 0), (0, 3)), ((4, 4), (4, 4))))(dtype, rng)


def bmm_samples(dtype, rng):
    return shaped_pairs((((2, 3, 4), (2, 4, 5)), ((1, 1, 1), (1, 1, 1)),
                         ((0, 2, 3), (0, 3, 4)), ((2, 3, 3), (2, 3, 3))))(dtype, rng)


def addmm_samples(dtype, rng):
    out = []
    for bias_shape in ((3, 5), (5,), (1, 5), ()):
        for kw in ({}, {"beta": 2, "alpha": 3}, {"beta": 0}, {"alpha": 0.5, "beta": 0.5}):
            if dtype not in FLOATS and any(isinstance(v, float) for v in kw.values()):
                continue
            out.append(Sample(make(rng, bias_shape, dtype), make(rng, (3, 4), dtype),
                              make(rng, (4, 5), dtype), **kw))
    out.append(Sample(make(rng, (3, 4), dtype, "sliced"), make(rng, (3, 4), dtype, "transposed"),
                      make(rng, (4, 4), dtype, "sliced")))
    return out


def linear_samples(dtype, rng):
    out = []
    for shape in ((4,), (3, 4), (2, 3, 4), (0, 4)):
        for bias in (True, False):
            args = [make(rng, shape, dtype), make(rng, (5, 4), dtype)]
            if bias:
                args.append(make(rng, (5,), dtype))
            out.append(Sample(*args))
    out.append(Sample(make(rng, (2, 3, 4), dtype, "transposed"),
                      make(rng, (5, 4), dtype, "sliced"), make(rng, (5,), dtype, "sliced")))
    out.append(Sample(make(rng, (3, 4), dtype), make(rng, (4,), dtype)))   # 1-D weight
    return out


def masked_softmax_samples(dtype, rng):
    """A mask of the input's shape (the form whose backward PyTorch takes), and the 2-d
    attention (type 0) and padding (type 1) masks of a 4-d input, forward only in PyTorch."""
    x = make(rng, (2, 3, 4), dtype, low=-5, high=5)
    out = [Sample(x, make(rng, (2, 3, 4), "bool"), dim=2, mask_type=2),
           Sample(make(rng, (3, 5), dtype, low=-5, high=5), make(rng, (3, 5), "bool"))]
    return out


def softmax_samples(dtype, rng):
    out = []
    for shape, layout in [((), "contiguous"), ((5,), "contiguous"), ((3, 4), "contiguous"),
                          ((2, 3, 4), "contiguous"), ((0, 3), "contiguous")] + \
            list(noncontig_shapes()):
        for dim in (0, -1):
            out.append(Sample(make(rng, shape, dtype, layout, low=-5, high=5), dim=dim))
    x = make(rng, (3, 4), dtype, low=-5, high=5)
    out.append(Sample(x, dim=1, dtype=DT("float64")))
    out.append(Sample(make(rng, (3, 4), dtype, low=-5, high=5), dim=0, dtype=DT("float32")))
    big = T(np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0]]).astype(
        round_to(0, dtype).dtype), dtype)
    out.append(Sample(big, dim=1))
    return out


def _targets(rng, shape, classes, ignore=None):
    t = rng.integers(0, classes, shape)
    if ignore is not None and t.size > 1:
        t.reshape(-1)[1] = ignore
    return T(t.astype(np.int64), "int64")


def _class_weights(rng, dtype, classes):
    return make(rng, (classes,), dtype, low=0.5, high=2, grad=False)


def nll_samples(dtype, rng, *, cross_entropy=False):
    """(N, C), (C,), (N, C, d1, d2) inputs; ignore_index, class weights, every reduction; and
    for cross_entropy label smoothing and class probabilities as targets."""
    out = []
    low, high = (-3, 3) if cross_entropy else (-5, 0)
    for reduction in ("mean", "sum", "none"):
        red = {"reduction": reduction}
        shapes = (((3, 5), (3,)), ((5,), ()), ((2, 5, 3, 2), (2, 3, 2)), ((0, 5), (0,)))
        for x_shape, t_shape in shapes:
            out.append(Sample(make(rng, x_shape, dtype, low=low, high=high),
                              _targets(rng, t_shape, 5), **red))
        out.append(Sample(make(rng, (4, 5), dtype, low=low, high=high),
                          _targets(rng, (4,), 5, ignore=-100), **red))
        out.append(Sample(make(rng, (4, 5), dtype, low=low, high=high),
                          _targets(rng, (4,), 5, ignore=2), ignore_index=2, **red))
        out.append(Sample(make(rng, (4, 5), dtype, low=low, high=high),
                          _targets(rng, (4,), 5, ignore=-100),
                          weight=_class_weights(rng, dtype, 5), **red))
        out.append(Sample(make(rng, (2, 5, 3), dtype, low=low, high=high),
                          _targets(rng, (2, 3), 5, ignore=1), ignore_index=1,
                          weight=_class_weights(rng, dtype, 5), **red))
        out.append(Sample(make(rng, (5, 3), dtype, "transposed", low=low, high=high),
                          _targets(rng, (5,), 3), **red))
        if cross_entropy:
            out.append(Sample(make(rng, (4, 5), dtype), _targets(rng, (4,), 5, ignore=-100),
                              label_smoothing=0.2, **red))
            out.append(Sample(make(rng, (2, 5, 3), dtype), _targets(rng, (2, 3), 5, ignore=4),
                              ignore_index=4, label_smoothing=0.1,
                              weight=_class_weights(rng, dtype, 5), **red))
            for shape in ((3, 5), (2, 5, 3), (5,)):
                probs = rng.random(shape)
                probs = round_to(probs / probs.sum(axis=0 if len(shape) == 1 else 1,
                                                   keepdims=True), dtype)
                out.append(Sample(make(rng, shape, dtype), T(probs, dtype), **red))
            probs = round_to(rng.dirichlet(np.ones(5), 3), dtype)
            out.append(Sample(make(rng, (3, 5), dtype), T(probs, dtype),
                              weight=_class_weights(rng, dtype, 5), label_smoothing=0.3, **red))
            out.append(Sample(make(rng, (3, 5), dtype), T(probs, dtype, grad=False),
                              label_smoothing=0.3, **red))
    return out


def mse_samples(dtype, rng):
    out = []
    for reduction in ("mean", "sum", "none"):
        for shape in ((), (5,), (3, 4), (0, 2)):
            out.append(Sample(make(rng, shape, dtype), make(rng, shape, dtype),
                              reduction=reduction))
        out.append(Sample(make(rng, (3, 4), dtype, "transposed"),
                          make(rng, (3, 4), dtype, "sliced"), reduction=reduction))
        out.append(Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype, grad=False),
                          reduction=reduction))
    return out


def where_samples(dtype, rng):
    out = []
    for sc, sa, sb in (((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ()), ((3, 1), (1, 4), (3, 4)),
                       ((), (5,), (5,)), ((0,), (0,), (1,)), ((2, 3, 4), (3, 4), (2, 1, 1))):
        out.append(Sample(make(rng, sc, "bool"), make(rng, sa, dtype), make(rng, sb, dtype)))
    out.append(Sample(make(rng, (3, 4), "bool", "sliced"), make(rng, (3, 4), dtype, "transposed"),
                      make(rng, (3, 4), dtype, "sliced")))
    out.append(Sample(make(rng, (3, 4), "bool"), make(rng, (3, 4), dtype), scalar_for(dtype)))
    out.append(Sample(make(rng, (3, 4), "bool"), make(rng, (3, 4), dtype),
                      other_category_scalar(dtype)))
    out.append(Sample(make(rng, (3, 4), "bool"), make(rng, (3, 4), dtype),
                      make(rng, (4,), "float64")))
    out.append(Sample(make(rng, (3, 4), "uint8", high=1), make(rng, (3, 4), dtype),
                      make(rng, (3, 4), dtype)))
    return out


def clamp_samples(dtype, rng, inplace=False):
    """Scalar bounds: min, max, both, min > max; a float bound on integers promotes (which an
    in-place clamp refuses)."""
    lo, hi = (0, 1) if dtype in ("bool", "uint8") else (-1, 2) if dtype in INTS else (-1.5, 1.0)
    out = []
    for kw in ({"min": lo}, {"max": hi}, {"min": lo, "max": hi}, {"min": hi, "max": lo}):
        for shape, layout in (((), "contiguous"), ((3, 4), "contiguous"), ((0,), "contiguous"),
                              ((3, 4), "transposed"), ((2, 3, 4), "sliced")):
            out.append(Sample(make(rng, shape, dtype, layout), **kw))
    if dtype in NUMBERS:
        if not inplace:
            out.append(Sample(make(rng, (3, 4), dtype), min=0.5))
        out.append(Sample(make(rng, (3, 4), dtype), max=True))
    return out


def clamp_tensor_samples(dtype, rng):
    out = []
    for kw in ("both", "min", "max"):
        for shape, bound in (((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), ()), ((), ())):
            x = make(rng, shape, dtype)
            lo = make(rng, bound, dtype, high=0)
            hi = make(rng, bound, dtype, low=0)
            args = {"min": {"min": lo}, "max": {"max": hi}, "both": {"min": lo, "max": hi}}[kw]
            out.append(Sample(x, **args))
    out.append(Sample(make(rng, (3, 4), dtype, "transposed"),
                      min=make(rng, (3, 4), dtype, "sliced", high=0), max=make(rng, (4,), dtype)))
    return out


# ---- error inputs ---------------------------------------------------------------------------
_rng = np.random.default_rng(0)


def f32(*shape):
    return make(_rng, shape, "float32")


def f64(*shape):
    return make(_rng, shape, "float64")


def i64(*shape, low=None, high=None):
    return make(_rng, shape, "int64", low=low, high=high)


def boolean(*shape):
    return make(_rng, shape, "bool")


def _shape_mismatch(make_tensor=None):
    t = make_tensor or f32
    return [ErrorInput(t(3), t(4), match=r"3.*4|4.*3"),
            ErrorInput(t(2, 3), t(3, 2), match=r"3.*2|2.*3")]


def _tensor_only_errors():
    return _shape_mismatch() + [ErrorInput(f32(3), 2, match="Tensor"),
                                ErrorInput(boolean(3), True, match="Tensor")]


def _int_zero_division():
    return _shape_mismatch() + [ErrorInput(i64(3, low=1), T(np.zeros(3, np.int64), "int64"))]


def _bitwise_errors():
    return _shape_mismatch(i64) + [ErrorInput(f32(3), f32(3), match="Float"),
                                   ErrorInput(i64(3), 2.5, match="Float")]


def _reduction_errors(empty_raises=False):
    def errors():
        out = [ErrorInput(f32(3, 4), dim=2, match=r"range"),
               ErrorInput(f32(3, 4), dim=-3, match=r"range")]
        if empty_raises:
            out.append(ErrorInput(f32(0, 3), dim=0, match="non-zero size|numel"))
        return out
    return errors


def _multi_dim_errors(empty_raises=False):
    def errors():
        return _reduction_errors(empty_raises)() + [
            ErrorInput(f32(3, 4), dim=(0, 0), match="multiple times"),
            ErrorInput(f32(3, 4), dim=(1, -1), match="multiple times")]
    return errors


def _loss_errors(cross_entropy=False):
    def errors():
        out = [ErrorInput(f32(3, 5), T(np.array([0, 1, 7]), "int64"), match="7"),
               ErrorInput(f32(3, 5), T(np.array([0, -2, 1]), "int64"), match="-2"),
               ErrorInput(f32(3, 5), T(np.array([0, 1]), "int64"), match=r"3.*2"),
               ErrorInput(f32(3, 5), T(np.array([0, 1, 2]), "int64"),
                          weight=_class_weights(_rng, "float32", 4),
                          match=r"5|4")]
        if not cross_entropy:
            out.append(ErrorInput(f32(3, 5), f32(3), match="Float|float"))
        else:
            out.append(ErrorInput(f32(3, 5), f32(3, 4), match="multi-target"))
        return out
    return errors


# ---- the table ------------------------------------------------------------------------------
def _clone_inplace(method):
    """x.clone().<method>(*rest): an in-place op on a fresh tensor that autograd can track."""
    def op(m, x, *rest, **kwargs):
        return getattr(x.clone(), method)(*rest, **kwargs)
    return op


def _augmented(inplace_operator):
    """z = x.clone(); z += y (operator.iadd is what `+=` calls, and returns what it binds)."""
    def op(m, x, y):
        return inplace_operator(x.clone(), y)
    return op


def _inplace_through_view(m, x, y):
    """An in-place add on a transposed view writes through to its base."""
    z = x.clone()
    z.t().add_(y)
    return z


bs = binary_samples
positive = dict(low=0.1, high=4)
small_pow = dict(low=-3, high=3, rhs_low=0, rhs_high=3)
MIXED = ("int64", "float64")
MIXED_INT = ("bool", "int32")

OPS = [
    # ---- elementwise binary
    OpInfo("add", lambda m, x, y: m.add(x, y), ALL, functools.partial(bs, mixed=MIXED),
           errors=_shape_mismatch),
    OpInfo("add_alpha", lambda m, x, y: m.add(x, y, alpha=2), ALL,
           functools.partial(bs, mixed=MIXED),
           errors=lambda: [ErrorInput(i64(3), i64(3), alpha=2.5, match="alpha"),
                           ErrorInput(f32(3), f32(3), alpha=True, match="alpha")]),
    OpInfo("add_alpha_float", lambda m, x, y: m.add(x, y, alpha=-0.5), FLOATS, bs),
    OpInfo("_add_relu", lambda m, x, y: m._add_relu(x, y, alpha=-2), SIGNED + ("float32", "float64"),
           lambda dt, rng: bs(dt, rng)[:-1] if dt in FLOATS else bs(dt, rng),  # NaN: see kernel
           grad=False),
    OpInfo("_add_relu_", lambda m, x, y: m._add_relu_(x.clone(), y, alpha=-2),
           SIGNED + ("float32", "float64"),
           lambda dt, rng: [s for s in (bs(dt, rng)[:-1] if dt in FLOATS else bs(dt, rng))
                            if isinstance(s.args[1], T) and s.args[0].data.shape ==
                            np.broadcast_shapes(s.args[0].data.shape, s.args[1].data.shape)],
           grad=False),
    OpInfo("add_alpha_bool", lambda m, x, y: m.add(x, y, alpha=True), BOOL,
           functools.partial(bs, scalars="same")),
    OpInfo("sub", lambda m, x, y: m.sub(x, y), NUMBERS, functools.partial(bs, mixed=MIXED),
           errors=lambda: _shape_mismatch() + [ErrorInput(boolean(3), boolean(3),
                                                          match="bool")]),
    OpInfo("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=3), NUMBERS, bs),
    OpInfo("mul", lambda m, x, y: m.mul(x, y), ALL, functools.partial(bs, mixed=MIXED),
           errors=_shape_mismatch),
    OpInfo("div", lambda m, x, y: m.div(x, y), ALL,
           functools.partial(bs, nonzero=True, mixed=MIXED),
           errors=lambda: _shape_mismatch() + [ErrorInput(f32(3), f32(3), rounding_mode="bad",
                                                          match="rounding_mode")]),
    OpInfo("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc"), NUMBERS,
           functools.partial(bs, nonzero=True, mixed=MIXED), errors=_int_zero_division),
    OpInfo("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor"), NUMBERS,
           functools.partial(bs, nonzero=True, mixed=MIXED), errors=_int_zero_division),
    OpInfo("floor_divide", lambda m, x, y: m.floor_divide(x, y), NUMBERS,
           functools.partial(bs, nonzero=True, mixed=MIXED), errors=_int_zero_division,
           gradcheck=False),  # PyTorch has no derivative for floor_divide
    OpInfo("remainder", lambda m, x, y: m.remainder(x, y), NUMBERS,
           functools.partial(bs, nonzero=True, mixed=MIXED), errors=_int_zero_division),
    OpInfo("pow", lambda m, x, y: m.pow(x, y), NUMBERS,
           functools.partial(bs, **small_pow, mixed=MIXED),
           errors=lambda: [ErrorInput(i64(3), -1, match="negative")]),
    OpInfo("pow_negative_int_exponents", lambda m, x, y: m.pow(x, y), SIGNED,
           functools.partial(bs, scalars=False, rhs_low=-3, rhs_high=-1), grad=False,
           other_dtypes_raise=False),
    OpInfo("pow_positive_base", lambda m, x, y: m.pow(x, y), NUMBERS,
           functools.partial(bs, **positive)),
    OpInfo("pow_scalar", lambda m, x: m.pow(x, 2), ALL, unary_samples),
    # (-inf) ** 0.5 is inf in PyTorch's float16 kernel (C's pow) but nan in its float32 one
    # (sqrt); ember gives nan for all: -inf is left out
    OpInfo("pow_scalar_float", lambda m, x: x.pow(0.5), ALL,
           functools.partial(unary_samples, **positive,
                             special=[v for v in EXTREMAL if v != -np.inf])),
    OpInfo("pow_scalar_negative", lambda m, x: x ** -1.5, ALL,
           functools.partial(unary_samples, **positive)),
    OpInfo("pow_scalar_base", lambda m, x: m.pow(2, x), ALL,
           functools.partial(unary_samples, low=0, high=3)),
    OpInfo("maximum", lambda m, x, y: m.maximum(x, y), ALL,
           functools.partial(bs, scalars=False, mixed=MIXED), errors=_tensor_only_errors),
    OpInfo("minimum", lambda m, x, y: m.minimum(x, y), ALL,
           functools.partial(bs, scalars=False, mixed=MIXED), errors=_tensor_only_errors),
    OpInfo("max_other", lambda m, x, y: m.max(x, y), ALL, functools.partial(bs, scalars=False)),
    OpInfo("min_other", lambda m, x, y: x.min(y), ALL, functools.partial(bs, scalars=False)),
    OpInfo("where", lambda m, c, x, y: m.where(c, x, y), ALL, where_samples,
           errors=lambda: [ErrorInput(f32(3), f32(3), f32(3), match="bool|Bool"),
                           ErrorInput(boolean(3), f32(4), f32(3), match=r"3.*4|4.*3")]),
    OpInfo("where_method", lambda m, c, x, y: x.where(c, y), ALL, where_samples),
    *[OpInfo(name, fn, ALL, functools.partial(bs, mixed=MIXED), errors=_shape_mismatch,
             grad=False)
      for name, fn in (("eq", lambda m, x, y: m.eq(x, y)), ("ne", lambda m, x, y: m.ne(x, y)),
                       ("lt", lambda m, x, y: m.lt(x, y)), ("le", lambda m, x, y: m.le(x, y)),
                       ("gt", lambda m, x, y: m.gt(x, y)), ("ge", lambda m, x, y: m.ge(x, y)))],
    *[OpInfo(name, fn, ALL, functools.partial(bs, scalars=False, mixed=MIXED),
             errors=_tensor_only_errors, grad=False)
      for name, fn in (("logical_and", lambda m, x, y: m.logical_and(x, y)),
                       ("logical_or", lambda m, x, y: m.logical_or(x, y)),
                       ("logical_xor", lambda m, x, y: m.logical_xor(x, y)))],
    *[OpInfo(name, fn, INTEGRAL, functools.partial(bs, scalars="same", mixed=MIXED_INT),
             errors=_bitwise_errors, grad=False)
      for name, fn in (("bitwise_and", lambda m, x, y: m.bitwise_and(x, y)),
                       ("bitwise_or", lambda m, x, y: m.bitwise_or(x, y)),
                       ("bitwise_xor", lambda m, x, y: m.bitwise_xor(x, y)),
                       ("__and__", lambda m, x, y: x & y), ("__or__", lambda m, x, y: x | y),
                       ("__xor__", lambda m, x, y: x ^ y))],

    # ---- Python operators, reflected operators
    OpInfo("__add__", lambda m, x, y: x + y, ALL, bs),
    OpInfo("__sub__", lambda m, x, y: x - y, NUMBERS, bs),
    OpInfo("__mul__", lambda m, x, y: x * y, ALL, bs),
    OpInfo("__truediv__", lambda m, x, y: x / y, ALL, functools.partial(bs, nonzero=True)),
    OpInfo("__floordiv__", lambda m, x, y: x // y, NUMBERS, functools.partial(bs, nonzero=True),
           gradcheck=False),
    OpInfo("__mod__", lambda m, x, y: x % y, NUMBERS, functools.partial(bs, nonzero=True)),
    OpInfo("__pow__", lambda m, x, y: x ** y, NUMBERS, functools.partial(bs, **small_pow)),
    OpInfo("__lt__", lambda m, x, y: x < y, ALL, bs, grad=False),
    OpInfo("__eq__", lambda m, x, y: x == y, ALL, bs, grad=False),
    OpInfo("__ge__", lambda m, x, y: x >= y, ALL, bs, grad=False),
    OpInfo("__radd__", lambda m, x: 2 + x, ALL, unary_samples),
    OpInfo("__rsub__", lambda m, x: 2 - x, NUMBERS, unary_samples),
    OpInfo("__rsub__float", lambda m, x: 2.5 - x, NUMBERS, unary_samples),
    OpInfo("__rmul__", lambda m, x: 2.5 * x, ALL, unary_samples),
    OpInfo("__rtruediv__", lambda m, x: 2 / x, ALL, functools.partial(unary_samples,
                                                                       nonzero=True)),
    OpInfo("__rfloordiv__", lambda m, x: 7 // x, NUMBERS,
           functools.partial(unary_samples, nonzero=True), gradcheck=False),
    OpInfo("__rmod__", lambda m, x: 7 % x, NUMBERS,  # remainder.Scalar_Tensor: no derivative
           functools.partial(unary_samples, nonzero=True), gradcheck=False),
    OpInfo("__rpow__", lambda m, x: 2 ** x, ALL, functools.partial(unary_samples, low=0)),
    OpInfo("__rpow__float", lambda m, x: 2.5 ** x, ALL, unary_samples),
    OpInfo("__neg__", lambda m, x: -x, NUMBERS, unary_samples),
    OpInfo("__abs__", lambda m, x: abs(x), NUMBERS, unary_samples),
    OpInfo("__invert__", lambda m, x: ~x, INTEGRAL, unary_samples, grad=False),

    # ---- in-place
    OpInfo("add_", _clone_inplace("add_"), ALL,
           functools.partial(inplace_samples, mixed=("bool", "int8")),
           errors=lambda: [ErrorInput(i64(3), 2.5, match="Float|Long"),
                           ErrorInput(i64(3), f32(3), match="Float|Long"),
                           ErrorInput(boolean(3), 1, match="Bool|Long"),
                           ErrorInput(f32(3), f32(2, 3), match=r"\[3\].*\[2, 3\]")]),
    OpInfo("add_alpha_", _clone_inplace("add_"), ALL,
           lambda dtype, rng: [Sample(*s.args, alpha=2) for s in inplace_samples(dtype, rng)]),
    OpInfo("add_float_into_float32", _clone_inplace("add_"), ("float32",),
           functools.partial(inplace_samples, mixed=("float64", "int64")),
           other_dtypes_raise=False),
    OpInfo("sub_", _clone_inplace("sub_"), NUMBERS, inplace_samples,
           errors=lambda: [ErrorInput(i64(3), 2.5, match="Float|Long")]),
    OpInfo("mul_", _clone_inplace("mul_"), ALL, inplace_samples,
           errors=lambda: [ErrorInput(i64(3), 2.5, match="Float|Long")]),
    OpInfo("div_", _clone_inplace("div_"), FLOATS,
           functools.partial(inplace_samples, nonzero=True, mixed=("int64",)),
           errors=lambda: [ErrorInput(i64(3), i64(3, low=1), match="Float|Long")]),
    OpInfo("div_floor_", lambda m, x, y: x.clone().div_(y, rounding_mode="floor"), NUMBERS,
           functools.partial(inplace_samples, nonzero=True)),
    OpInfo("clamp_", _clone_inplace("clamp_"), NUMBERS,
           functools.partial(clamp_samples, inplace=True),
           errors=lambda: [ErrorInput(i64(3), min=0.5, match="Float|Long"),
                           ErrorInput(boolean(3), min=False, match="Bool")]),
    OpInfo("clamp_tensor_", _clone_inplace("clamp_"), NUMBERS, clamp_tensor_samples,
           errors=lambda: [ErrorInput(f32(3), min=f32(2, 3), match=r"\[3\].*\[2, 3\]"),
                           ErrorInput(i64(3), min=f32(3), match="Float|Long")]),
    OpInfo("relu_", _clone_inplace("relu_"), NUMBERS, unary_samples),
    OpInfo("torch.relu_", lambda m, x: m.relu_(x.clone()), NUMBERS, unary_samples),
    OpInfo("__iadd__", _augmented(operator.iadd), ALL, inplace_samples,
           errors=lambda: [ErrorInput(i64(3), 2.5, match="Float|Long"),
                           ErrorInput(T(np.arange(3, dtype=np.int32), "int32"), f64(3),
                                      match="Double|Int")]),
    OpInfo("__isub__", _augmented(operator.isub), NUMBERS, inplace_samples),
    OpInfo("__imul__", _augmented(operator.imul), ALL, inplace_samples,
           errors=lambda: [ErrorInput(i64(3), 2.5, match="Float|Long")]),
    OpInfo("__itruediv__", _augmented(operator.itruediv), FLOATS,
           functools.partial(inplace_samples, nonzero=True),
           errors=lambda: [ErrorInput(i64(3), 2, match="Float|Long")]),
    OpInfo("add_through_view", _inplace_through_view, ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), make(rng, (4, 3), dtype)),
                               Sample(make(rng, (3, 4), dtype), make(rng, (3,), dtype))]),

    # ---- elementwise unary
    OpInfo("neg", lambda m, x: m.neg(x), NUMBERS, unary_samples,
           errors=lambda: [ErrorInput(boolean(3), match="bool")]),
    OpInfo("abs", lambda m, x: m.abs(x), NUMBERS, unary_samples),
    OpInfo("sign", lambda m, x: m.sign(x), ALL, unary_samples),
    OpInfo("exp", lambda m, x: m.exp(x), ALL, unary_samples),
    OpInfo("log", lambda m, x: m.log(x), ALL, functools.partial(unary_samples, **positive)),
    OpInfo("log_of_nonpositive", lambda m, x: m.log(x), ALL,
           functools.partial(unary_samples, low=-1, high=0), grad=False),
    OpInfo("log1p", lambda m, x: m.log1p(x), ALL,
           functools.partial(unary_samples, low=-0.9, high=4)),
    OpInfo("expm1", lambda m, x: m.expm1(x), ALL, unary_samples),
    OpInfo("sqrt", lambda m, x: m.sqrt(x), ALL, functools.partial(unary_samples, **positive)),
    OpInfo("rsqrt", lambda m, x: m.rsqrt(x), ALL, functools.partial(unary_samples, **positive)),
    OpInfo("sin", lambda m, x: m.sin(x), ALL, unary_samples),
    OpInfo("cos", lambda m, x: m.cos(x), ALL, unary_samples),
    OpInfo("tanh", lambda m, x: m.tanh(x), ALL, unary_samples),
    OpInfo("sigmoid", lambda m, x: m.sigmoid(x), ALL,
           functools.partial(unary_samples, low=-8, high=8)),
    OpInfo("relu", lambda m, x: m.relu(x), NUMBERS, unary_samples),
    OpInfo("F.relu", lambda m, x: m.nn.functional.relu(x), NUMBERS, unary_samples),
    # PyTorch's vectorized float32/bfloat16 erf makes gelu(+inf) nan (float16 and float64 give
    # inf, as ember does everywhere): +inf is left out
    OpInfo("gelu", lambda m, x, **kw: m.nn.functional.gelu(x, **kw), FLOATS,
           functools.partial(unary_samples, kwargs=({}, {"approximate": "tanh"}),
                             special=[v for v in EXTREMAL if v != np.inf]),
           errors=lambda: [ErrorInput(f32(3), approximate="bad")]),
    OpInfo("gelu_", lambda m, x, **kw: m._C._nn.gelu_(x.clone(), **kw), FLOATS,
           functools.partial(unary_samples, kwargs=({}, {"approximate": "tanh"}),
                             special=[v for v in EXTREMAL if v != np.inf])),
    OpInfo("silu", lambda m, x: m.nn.functional.silu(x), FLOATS, unary_samples),
    OpInfo("silu_inplace", lambda m, x: m.nn.functional.silu(x.clone(), inplace=True), FLOATS,
           unary_samples),
    OpInfo("softplus", lambda m, x, **kw: m.nn.functional.softplus(x, **kw), FLOATS,
           functools.partial(unary_samples, low=-25, high=25,
                             kwargs=({}, {"beta": 2}, {"beta": 0.5, "threshold": 1}))),
    # the activations' backward ops (torch.ops.aten.*_backward(grad_output, self, ...))
    *[OpInfo(f"{name}_backward", (lambda name: lambda m, g, x, *rest: getattr(
        m.ops.aten, f"{name}_backward")(g, x, *rest))(name), FLOATS,
        functools.partial(grad_input_samples, low=-5, high=5, extra=extra),
        other_dtypes_raise=False,  # PyTorch has no derivative of these three (test_op checks)
        gradcheck=name not in ("silu", "mish", "hardsigmoid"))
      for name, extra in (("silu", ((),)), ("softplus", ((1, 20), (2, 1))), ("mish", ((),)),
                          ("hardswish", ((),)), ("hardsigmoid", ((),)),
                          ("hardtanh", ((-1, 1), (-2, 0.5))),
                          ("leaky_relu", ((0.01, False), (-0.2, False), (0.1, True))),
                          ("hardshrink", ((0.5,),)), ("softshrink", ((0.5,), (1.5,))))],
    OpInfo("logit_backward", lambda m, g, x, *rest: m.ops.aten.logit_backward(g, x, *rest),
           FLOATS, functools.partial(grad_input_samples, low=-0.5, high=1.5,
                                     extra=((), (None,), (0.2,))),
           other_dtypes_raise=False, gradcheck=False),  # PyTorch has no derivative of it
    OpInfo("elu_backward", lambda m, g, x, *rest: m.ops.aten.elu_backward(g, *rest, x), FLOATS,
           functools.partial(grad_input_samples, low=-5, high=5,
                             extra=((1, 1, 1, False), (0.5, 2, 1.5, False), (1, 1, 1, True))),
           other_dtypes_raise=False),
    OpInfo("logical_not", lambda m, x: m.logical_not(x), ALL, unary_samples, grad=False),
    OpInfo("bitwise_not", lambda m, x: m.bitwise_not(x), INTEGRAL, unary_samples, grad=False),
    OpInfo("clamp", lambda m, x, **kw: m.clamp(x, **kw), ALL, clamp_samples,
           errors=lambda: [ErrorInput(f32(3), match="min.*max")]),
    OpInfo("clamp_method", lambda m, x, **kw: x.clamp(**kw), ALL, clamp_samples),
    OpInfo("clamp_tensor", lambda m, x, **kw: m.clamp(x, **kw), NUMBERS, clamp_tensor_samples,
           errors=lambda: [ErrorInput(boolean(3), min=boolean(3), max=boolean(3), match="Bool"),
                           ErrorInput(f32(3), min=f32(4), match=r"3.*4|4.*3")]),
    OpInfo("clamp_tensor_one_bound", lambda m, x, **kw: m.clamp(x, **kw), ALL,
           lambda dtype, rng: [s for s in clamp_tensor_samples(dtype, rng)
                               if len(s.kwargs) == 1]),

    # ---- reductions
    OpInfo("sum", lambda m, x, **kw: m.sum(x, **kw), ALL, reduction_samples,
           errors=_multi_dim_errors()),
    OpInfo("sum_dim_None", lambda m, x: x.sum(dim=None), ALL, unary_samples),
    OpInfo("sum_dtype", lambda m, x, **kw: m.sum(x, dtype=m.float64, **kw), ALL,
           functools.partial(reduction_samples, empty=False)),
    OpInfo("mean", lambda m, x, **kw: m.mean(x, **kw), FLOATS, reduction_samples,
           errors=_multi_dim_errors()),
    OpInfo("mean_dtype", lambda m, x, **kw: x.mean(dtype=m.float32, **kw), ALL,
           functools.partial(reduction_samples, empty=False), gradcheck=False),  # float32 out
    OpInfo("prod", lambda m, x, **kw: m.prod(x, **kw), ALL,
           functools.partial(reduction_samples, dims="single", dim_none=False, low=-1.5,
                             high=1.5),
           errors=lambda: _reduction_errors()() + [ErrorInput(f32(3), dim=None, match="dim")]),
    OpInfo("prod_with_zeros", lambda m, x, **kw: x.prod(**kw), ALL,
           lambda dtype, rng: [Sample(T(round_to(np.array(rows), dtype), dtype), **kw)
                               for rows in ([[0, 2, 3], [4, 0, 1]], [[2, 0, 3], [1, 1, 0]])
                               for kw in ({}, {"dim": 0}, {"dim": 1, "keepdim": True})]),
    OpInfo("amax", lambda m, x, **kw: m.amax(x, **kw), ALL,
           functools.partial(reduction_samples, empty=False),
           errors=_multi_dim_errors(empty_raises=True)),
    OpInfo("amin", lambda m, x, **kw: x.amin(**kw), ALL,
           functools.partial(reduction_samples, empty=False),
           errors=_multi_dim_errors(empty_raises=True)),
    OpInfo("max", lambda m, x, **kw: m.max(x, **kw), ALL,
           functools.partial(reduction_samples, dims="single", dim_none=False, empty=False),
           errors=lambda: _reduction_errors(empty_raises=True)() + [
               ErrorInput(f32(0), match="numel"), ErrorInput(f32(3), dim=None, match="dim")]),
    OpInfo("min", lambda m, x, **kw: x.min(**kw), ALL,
           functools.partial(reduction_samples, dims="single", dim_none=False, empty=False),
           errors=lambda: _reduction_errors(empty_raises=True)() + [
               ErrorInput(f32(0), match="numel"), ErrorInput(f32(3), dim=None, match="dim")]),
    OpInfo("argmax", lambda m, x, **kw: m.argmax(x, **kw), NUMBERS,
           functools.partial(reduction_samples, dims="single", empty=False), grad=False,
           errors=lambda: _reduction_errors(empty_raises=True)() + [
               ErrorInput(f32(0), match="numel")]),
    OpInfo("argmin", lambda m, x, **kw: x.argmin(**kw), NUMBERS,
           functools.partial(reduction_samples, dims="single", empty=False), grad=False),
    OpInfo("var", lambda m, x, **kw: m.var(x, **kw), FLOATS,
           functools.partial(reduction_samples, kwargs=(
               {}, {"correction": 0}, {"correction": 2}, {"unbiased": False})),
           errors=_multi_dim_errors()),
    OpInfo("var_unbiased_positional", lambda m, x: m.var(x, False), FLOATS, unary_samples),
    OpInfo("std", lambda m, x, **kw: x.std(**kw), FLOATS,
           functools.partial(reduction_samples, kwargs=({}, {"correction": 0},
                                                         {"unbiased": True}))),
    OpInfo("logsumexp", lambda m, x, **kw: m.logsumexp(x, **kw), ALL,
           functools.partial(reduction_samples, full=False, low=-5, high=5),
           errors=lambda: _reduction_errors()() + [ErrorInput(f32(3), dim=None, match="dim")]),
    OpInfo("logsumexp_inf", lambda m, x: x.logsumexp(1), FLOATS,
           lambda dtype, rng: [Sample(T(round_to(np.array(
               [[-np.inf, -np.inf], [np.inf, 1.0], [np.inf, -np.inf], [1000.0, 1000.0]]),
               dtype), dtype, grad=False))], grad=False, other_dtypes_raise=False),
    OpInfo("all", lambda m, x, **kw: m.all(x, **kw), ALL, reduction_samples,
           errors=_reduction_errors(), grad=False),
    OpInfo("any", lambda m, x, **kw: x.any(**kw), ALL, reduction_samples, grad=False),

    # ---- linear algebra
    OpInfo("matmul", lambda m, x, y: m.matmul(x, y), NUMBERS, matmul_samples,
           errors=lambda: [ErrorInput(f32(), f32(3), match="1D"),
                           ErrorInput(f32(3), f32(4), match=r"3.*4"),
                           ErrorInput(f32(2, 3), f32(4, 2), match=r"2x3.*4x2"),
                           ErrorInput(f32(2, 2, 3), f32(3, 3, 2), match=r"2.*3"),
                           ErrorInput(f32(2, 3), f64(3, 2), match="Float|float"),
                           ErrorInput(f32(3), f64(3), match="Float|float")]),
    OpInfo("__matmul__", lambda m, x, y: x @ y, NUMBERS, matmul_samples),
    OpInfo("mm", lambda m, x, y: m.mm(x, y), NUMBERS, mm_samples,
           errors=lambda: [ErrorInput(f32(3), f32(3, 2), match="matrix|2D"),
                           ErrorInput(f32(2, 3), f32(2, 3), match=r"2x3"),
                           ErrorInput(f32(2, 3), f64(3, 2), match="Float|float")]),
    OpInfo("bmm", lambda m, x, y: x.bmm(y), NUMBERS, bmm_samples,
           errors=lambda: [ErrorInput(f32(2, 3), f32(2, 3, 2), match="3D"),
                           ErrorInput(f32(2, 2, 3), f32(3, 3, 2), match=r"2.*3"),
                           ErrorInput(f32(2, 2, 3), f32(2, 2, 2), match=r"3.*2"),
                           ErrorInput(f32(2, 2, 3), f64(2, 3, 2), match="Float|float")]),
    OpInfo("addmm", lambda m, b, x, y, **kw: m.addmm(b, x, y, **kw), NUMBERS, addmm_samples,
           errors=lambda: [ErrorInput(f32(3, 4), f32(3, 2), f32(2, 5), match=r"3.*4|5"),
                           ErrorInput(f32(3, 5), f32(3, 2), f32(3, 5), match=r"3x2.*3x5")]),
    OpInfo("_addmm_activation", lambda m, b, x, y, **kw: m._addmm_activation(b, x, y, **kw),
           NUMBERS, addmm_samples, grad=False,
           errors=lambda: [ErrorInput(f32(3, 5), f32(3, 2), f32(3, 5), match=r"3x2.*3x5")]),
    OpInfo("_addmm_activation.gelu", lambda m, b, x, y, **kw: m._addmm_activation(
        b, x, y, use_gelu=True, **kw), FLOATS, addmm_samples, grad=False),
    OpInfo("linear", lambda m, *args: m.nn.functional.linear(*args), NUMBERS, linear_samples,
           errors=lambda: [ErrorInput(f32(3, 4), f32(5, 3), match=r"3x4.*3x5"),
                           ErrorInput(f32(3, 4), f64(5, 4), match="Float|float")]),

    # ---- softmax and losses
    OpInfo("softmax", lambda m, x, **kw: m.softmax(x, **kw), FLOATS, softmax_samples,
           errors=lambda: [ErrorInput(f32(3, 4), dim=2, match="range")]),
    OpInfo("F.softmax", lambda m, x, **kw: m.nn.functional.softmax(x, **kw), FLOATS,
           softmax_samples),
    OpInfo("_masked_softmax", lambda m, x, mask, **kw: m._masked_softmax(x, mask, **kw),
           FLOATS, masked_softmax_samples),
    OpInfo("log_softmax", lambda m, x, **kw: x.log_softmax(**kw), FLOATS, softmax_samples,
           errors=lambda: [ErrorInput(f32(3, 4), dim=-3, match="range")]),
    OpInfo("F.log_softmax", lambda m, x, **kw: m.nn.functional.log_softmax(x, **kw), FLOATS,
           softmax_samples),
    OpInfo("cross_entropy", lambda m, x, t, **kw: m.nn.functional.cross_entropy(x, t, **kw),
           FLOATS, functools.partial(nll_samples, cross_entropy=True),
           errors=_loss_errors(cross_entropy=True)),
    OpInfo("nll_loss", lambda m, x, t, **kw: m.nn.functional.nll_loss(x, t, **kw), FLOATS,
           nll_samples, errors=_loss_errors()),
    OpInfo("mse_loss", lambda m, x, y, **kw: m.nn.functional.mse_loss(x, y, **kw), FLOATS,
           mse_samples,
           errors=lambda: [ErrorInput(f32(3), f32(4), match=r"3.*4|4.*3")]),
]


# ---- issue 3: elementwise math, activations, reductions, scans, sorting -----------------------
def _unary(low=None, high=None, **kw):
    return functools.partial(unary_samples, low=low, high=high, **kw)


def distinct(rng, shape, dtype, layout="contiguous", grad=True):
    """A tensor of distinct values (a shuffled grid of quarters), so that which of two equal
    values an algorithm picks never matters."""
    n = int(np.prod(shape))
    values = rng.permutation(n) - n // 2
    if dtype == "uint8":
        values = values + n // 2
    data = values * 0.25 if dtype in FLOATS else values
    return T(round_to(np.asarray(data).reshape(shape), dtype), dtype, layout, grad)


def _scan_samples(dtype, rng, kwargs=({},), low=None, high=None):
    """Scans along a dim: 0-d, 1-d, n-d, empty and non-contiguous inputs."""
    out = []
    for shape, layout, dims in (((), "contiguous", (0, -1)), ((5,), "contiguous", (0,)),
                                ((3, 4), "contiguous", (0, 1, -1)),
                                ((2, 3, 4), "contiguous", (1, -1)),
                                ((3, 4), "transposed", (0, 1)), ((2, 3, 4), "sliced", (0, 2)),
                                ((0,), "contiguous", (0,)), ((2, 0), "contiguous", (0, 1))):
        for dim in dims:
            for kw in kwargs:
                out.append(Sample(make(rng, shape, dtype, layout, low=low, high=high), dim,
                                  **kw))
    if dtype in FLOATS:
        out.append(Sample(extremal(dtype, (2, 5)), 1))
    return out


def _cumprod_samples(dtype, rng):
    out = _scan_samples(dtype, rng, low=-1.5, high=1.5)
    if dtype in FLOATS:  # zeros take the other branch of the gradient
        for data in ([[0.5, 0.0, 2.0, -1.5], [0.0, 1.5, 0.0, 2.0]], [[2.0, -1.0, 0.5, 0.0]]):
            x = T(round_to(np.array(data), dtype), dtype)
            out += [Sample(x, 1), Sample(T(x.data.copy(), dtype), -1)]
    return out


def _selection_samples(dtype, rng, kwargs=({},), dims=(0, -1), keepdim=True):
    """(x, dim) samples of distinct values (non-contiguous ones too), for ops that report
    the index of a value."""
    out = []
    for shape, layout in (((5,), "contiguous"), ((3, 4), "contiguous"),
                          ((2, 3, 4), "contiguous"), ((3, 4), "transposed"),
                          ((2, 3, 4), "sliced")):
        for dim in dims:
            for kw in kwargs:
                out.append(Sample(distinct(rng, shape, dtype, layout), dim=dim, **kw))
                if keepdim:
                    out.append(Sample(distinct(rng, shape, dtype), dim=dim, keepdim=True, **kw))
    return out


def _topk_samples(dtype, rng):
    out = []
    for kw in ({"k": 2}, {"k": 1, "largest": False}, {"k": 3, "dim": 0}, {"k": 0},
               {"k": 4, "dim": -1, "largest": False}):
        for shape, layout in (((5,), "contiguous"), ((3, 4), "contiguous"),
                              ((4, 5), "transposed"), ((3, 4, 6), "sliced")):
            out.append(Sample(distinct(rng, shape, dtype, layout), **kw))
    out.append(Sample(make(rng, (), dtype), k=1))
    for kw in ({"k": 2}, {"k": 3, "largest": False}):  # long rows: selected, then sorted
        out.append(Sample(distinct(rng, (2, 24), dtype), **kw))
        out.append(Sample(distinct(rng, (24, 2), dtype, "transposed"), dim=0, **kw))
    if dtype in FLOATS:
        special = T(round_to(np.array([[1.0, np.nan, -np.inf, 2.5, np.inf, -0.5]]), dtype),
                    dtype, grad=False)
        out += [Sample(special, k=3), Sample(T(special.data, dtype, grad=False), k=3,
                                                largest=False)]
    return out


def _kthvalue_samples(dtype, rng):
    out = []
    for kw in ({"k": 1}, {"k": 3}, {"k": 2, "dim": 0}, {"k": 3, "keepdim": True},
               {"k": 2, "dim": 0, "keepdim": True}):
        for shape, layout in (((5,), "contiguous"), ((3, 4), "contiguous"),
                              ((4, 5), "transposed"), ((3, 4, 6), "sliced")):
            out.append(Sample(distinct(rng, shape, dtype, layout), **kw))
    out.append(Sample(make(rng, (), dtype), 1))
    return out


def _sort_samples(dtype, rng):
    """Sorts of data with ties (stable order matters) and NaN, both directions."""
    out = []
    for kw in ({}, {"descending": True}, {"dim": 0}, {"dim": 0, "descending": True, "stable": True},
               {"stable": True}):
        for shape, layout in (((), "contiguous"), ((7,), "contiguous"), ((3, 4), "contiguous"),
                              ((2, 3, 4), "contiguous"), ((3, 4), "transposed"),
                              ((2, 3, 4), "sliced"), ((0,), "contiguous"),
                              ((2, 0), "contiguous")):
            out.append(Sample(make(rng, shape, dtype, layout, low=-2, high=2), **kw))
        if dtype in FLOATS:
            out.append(Sample(extremal(dtype, (2, 5)), **kw))
    if dtype in FLOATS:  # ties among floats too
        ties = T(round_to(rng.integers(-2, 3, (4, 6)) * 0.5, dtype), dtype)
        out += [Sample(ties), Sample(T(ties.data, dtype), descending=True, dim=0)]
    return out


def _unique_samples(dtype, rng, kwargs=({},)):
    out = []
    for kw in kwargs:
        for shape, layout in (((), "contiguous"), ((8,), "contiguous"), ((3, 4), "contiguous"),
                              ((3, 4), "transposed"), ((2, 3, 4), "sliced"),
                              ((0,), "contiguous")):
            out.append(Sample(make(rng, shape, dtype, layout, low=-2, high=2), **kw))
        if dtype in FLOATS:
            out.append(Sample(extremal(dtype, (3, 4)), **kw))
    return out


_UNIQUE_FLAGS = ({}, {"return_inverse": True}, {"return_counts": True},
                 {"return_inverse": True, "return_counts": True, "sorted": False})


def _unique_dim_samples(dtype, rng):
    out = []
    for kw in _UNIQUE_FLAGS:
        for dim in (0, 1, -1):
            rows = rng.integers(0, 2, (5, 3)) if dtype != "bool" else rng.random((5, 3)) < 0.5
            x = T(round_to(np.concatenate([rows, rows[:2]]), dtype), dtype)
            out.append(Sample(x, dim=dim, **kw))
        out.append(Sample(make(rng, (2, 3, 4), dtype, "transposed", low=0, high=1), dim=1,
                          **kw))
        out.append(Sample(make(rng, (0, 3), dtype), dim=0, **kw))
    return out


def _unique_consecutive_samples(dtype, rng):
    out = []
    for kw in _UNIQUE_FLAGS[:3] + ({"return_inverse": True, "return_counts": True},):
        runs = np.repeat(make(rng, (6,), dtype, low=-2, high=2).data, rng.integers(1, 4, 6))
        out.append(Sample(T(runs, dtype), **kw))
        out.append(Sample(make(rng, (3, 4), dtype, "transposed", low=0, high=1), **kw))
        out.append(Sample(make(rng, (), dtype), **kw))
        out.append(Sample(make(rng, (0,), dtype), **kw))
        rows = make(rng, (3, 2), dtype, low=0, high=1).data
        out.append(Sample(T(np.repeat(rows, [2, 1, 3], axis=0), dtype), dim=0, **kw))
        out.append(Sample(T(np.repeat(rows, [2, 1, 3], axis=0).T.copy(), dtype), dim=1, **kw))
        if dtype in FLOATS:
            out.append(Sample(extremal(dtype, (12,), values=EXTREMAL + (np.nan, 1.0)), **kw))
    return out


def _quantile_samples(dtype, rng, nan=False):
    out = []
    q_list = T(round_to(np.array([0.0, 0.25, 0.5, 0.8, 1.0]), dtype), dtype, grad=False)
    for kw in ({}, {"interpolation": "lower"}, {"interpolation": "higher"},
               {"interpolation": "midpoint"}, {"interpolation": "nearest"}):
        for q in (0.3, 0.5, q_list, T(round_to(np.array(0.75), dtype), dtype, grad=False)):
            out.append(Sample(make(rng, (7,), dtype), q, **kw))
            out.append(Sample(make(rng, (3, 4), dtype, "transposed"), q, dim=1, **kw))
            out.append(Sample(make(rng, (2, 3, 4), dtype, "sliced"), q, dim=0, keepdim=True,
                              **kw))
            out.append(Sample(make(rng, (2, 3), dtype), q, keepdim=True, **kw))
    if dtype in FLOATS:
        data = make(rng, (3, 5), dtype)
        data.data[0, 1] = data.data[2, 0] = data.data[2, 3] = np.nan
        data.data[1] = np.nan
        out += [Sample(T(data.data, dtype, grad=False), q, dim=1)
                for q in (0.0, 0.4, 1.0, q_list)]
    out.append(Sample(make(rng, (), dtype), 0.5, dim=0))
    out.append(Sample(make(rng, (4,), dtype), T(np.array([0.2, 0.9]), dtype)))  # q with grad
    return out


def _histc_samples(dtype, rng):
    out = []
    for kw in ({}, {"bins": 4}, {"bins": 7, "min": -1, "max": 2}, {"bins": 3, "min": 0.5,
                                                                     "max": 0.5}):
        for shape, layout in (((20,), "contiguous"), ((3, 4), "transposed"), ((0,), "contiguous")):
            out.append(Sample(make(rng, shape, dtype, layout, grad=False), **kw))
    edges = T(round_to(np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 2.0, -1.0]), dtype), dtype,
              grad=False)  # values on bin edges, and outside the range
    out += [Sample(edges, bins=4, min=0, max=1), Sample(T(edges.data, dtype, grad=False), bins=3)]
    return out


def _bincount_samples(dtype, rng):
    out = []
    for kw in ({}, {"minlength": 12}, {"minlength": 2}):
        out.append(Sample(make(rng, (15,), dtype, low=0, high=9), **kw))
        out.append(Sample(make(rng, (0,), dtype), **kw))
    for weights in ("float32", "float64", "float16", "int64"):
        out.append(Sample(make(rng, (8,), dtype, low=0, high=5),
                          make(rng, (8,), weights, grad=False)))
    out.append(Sample(make(rng, (6,), dtype, "sliced", low=0, high=6)))
    return out


def _searchsorted_samples(dtype, rng):
    def sorted_t(shape, layout="contiguous"):
        t = make(rng, shape, dtype, layout, grad=False)
        return T(np.sort(t.data, axis=-1), dtype, layout, grad=False)
    out = []
    for kw in ({}, {"right": True}, {"side": "right"}, {"side": "left"}, {"out_int32": True}):
        out.append(Sample(sorted_t((7,)), make(rng, (3, 4), dtype, grad=False), **kw))
        out.append(Sample(sorted_t((2, 3, 5), "sliced"), make(rng, (2, 3, 4), dtype, "transposed",
                                                              grad=False), **kw))
        out.append(Sample(sorted_t((6,)), make(rng, (), dtype, grad=False), **kw))
        out.append(Sample(sorted_t((6,)), scalar_for(dtype), **kw))
        out.append(Sample(sorted_t((0,)), make(rng, (3,), dtype, grad=False), **kw))
    unsorted = make(rng, (6,), dtype, grad=False)
    sorter = T(np.argsort(unsorted.data, kind="stable"), "int64", grad=False)
    out.append(Sample(unsorted, make(rng, (4,), dtype, grad=False), sorter=sorter))
    out.append(Sample(sorted_t((3, 6)), make(rng, (3, 4), dtype, grad=False), right=True))
    if dtype in FLOATS:  # NaN sorts last among the boundaries
        with_nan = T(round_to(np.array([-1.0, 0.5, 2.0, np.nan]), dtype), dtype, grad=False)
        for right in (False, True):
            out.append(Sample(with_nan, extremal(dtype), right=right))
    return out


def _bucketize_samples(dtype, rng):
    return [Sample(s.args[1], s.args[0], **{k: v for k, v in s.kwargs.items() if k != "side"})
            for s in _searchsorted_samples(dtype, rng)
            if s.args[0].data.ndim == 1 and "sorter" not in s.kwargs]


def _lerp_samples(dtype, rng):
    out = []
    for weight in (0.3, 0.7, -0.25, 1.5):
        for a, b in (((3, 4), (3, 4)), ((3, 4), (4,)), ((), ()), ((0, 2), (2,))):
            out.append(Sample(make(rng, a, dtype), make(rng, b, dtype), weight))
    for a, b, w in (((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((5,), (5,), ()),
                    ((3, 4), (3, 4), (3, 4))):
        out.append(Sample(make(rng, a, dtype), make(rng, b, dtype),
                          make(rng, w, dtype, low=-0.5, high=1.5)))
    out.append(Sample(make(rng, (3, 4), dtype, "transposed"), make(rng, (3, 4), dtype, "sliced"),
                      make(rng, (3, 4), dtype, "sliced", low=0, high=1)))
    return out


def _addc_samples(dtype, rng, divide=False):
    den = dict(low=0.5, high=3) if divide else {}
    out = []
    for kw in ({}, {"value": 2}, {"value": 0.5} if dtype in FLOATS else {"value": -3}):
        for a, b, c in (((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((), (), ()),
                        ((2, 3, 4), (3, 4), ())):
            out.append(Sample(make(rng, a, dtype), make(rng, b, dtype),
                              make(rng, c, dtype, **den), **kw))
    out.append(Sample(make(rng, (3, 4), dtype, "transposed"), make(rng, (3, 4), dtype, "sliced"),
                      make(rng, (3, 4), dtype, "sliced", **den)))
    return out


def _round_samples(dtype, rng):
    out = unary_samples(dtype, rng)
    if dtype in FLOATS:  # halves round to even
        halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5, 0.49])
        out.append(Sample(T(round_to(halves, dtype), dtype)))
    return out


def _nanmedian_samples(dtype, rng):
    out = reduction_samples(dtype, rng, dims="single", dim_none=False, empty=False)
    if dtype in FLOATS:  # NaNs between numbers, and a row of NaNs only
        rows = np.array([[np.nan, 1.0, np.nan, 3.0, 2.0], [1.0, np.nan, np.nan, 0.5, 2.0],
                         [np.nan] * 5])
        out += [Sample(T(round_to(rows[:2], dtype), dtype, grad=False), dim=1),
                Sample(T(round_to(rows[0], dtype), dtype, grad=False)),
                Sample(T(round_to(rows[2], dtype), dtype, grad=False))]
    return out


def _mode_samples(dtype, rng):
    """Rows of few values, so values repeat; short rows (PyTorch's mode sorts a row with
    std::sort, which keeps equal values in order only up to 16 elements, and reports the
    last of them). No NaN: std::sort has no order for it."""
    return [s for s in reduction_samples(dtype, rng, dims="single", full=False, empty=False,
                                         low=-2, high=2) if s.args[0].grad or dtype not in FLOATS]


def _matrix_norm_samples(dtype, rng, ords):
    out = []
    for ord in ords:
        for shape, layout, kw in (((3, 4), "contiguous", {}), ((2, 3, 4), "contiguous", {}),
                                  ((3, 4), "transposed", {"keepdim": True}),
                                  ((2, 3, 4), "sliced", {"dim": (0, 2)}),
                                  ((2, 3, 4), "contiguous", {"dim": (2, 0), "keepdim": True})):
            out.append(Sample(make(rng, shape, dtype, layout), ord=ord, **kw))
    return out


def _finite_only(samples):
    return [s for s in samples if all(np.isfinite(a.data).all() for a in s.args
                                      if isinstance(a, T) and a.dtype in FLOATS)]


def _copysign_samples(dtype, rng):
    """PyTorch's float32 -> bfloat16 conversion makes NaN negative (0xFFFF), ember's keeps it
    positive: the sign of a bfloat16 NaN is not copied here."""
    out = binary_samples(dtype, rng, mixed=MIXED)
    if dtype == "bfloat16":
        for s in out:
            if isinstance(s.args[1], T):
                s.args[1].data[np.isnan(s.args[1].data)] = 1.0
    return out


def _prelu_samples(dtype, rng):
    out = []
    for shape, weight in (((2, 3, 4), (3,)), ((2, 3, 4), (1,)), ((4, 3), (3,)), ((5,), (1,)),
                          ((), (1,)), ((2, 3, 2, 2), (3,)), ((0, 3), (3,))):
        out.append(Sample(make(rng, shape, dtype), make(rng, weight, dtype, low=0, high=0.5)))
    out.append(Sample(make(rng, (2, 3, 4), dtype, "transposed"),
                      make(rng, (3,), dtype, "sliced", low=0, high=0.5)))
    return out


def _glu_samples(dtype, rng):
    out = []
    for shape, layout, dim in (((4,), "contiguous", 0), ((3, 4), "contiguous", -1),
                               ((4, 3), "contiguous", 0), ((2, 6, 2), "contiguous", 1),
                               ((4, 6), "transposed", 0), ((2, 3, 4), "sliced", -1),
                               ((0, 2), "contiguous", 1)):
        out.append(Sample(make(rng, shape, dtype, layout, low=-4, high=4), dim=dim))
    return out


def _norm_errors():
    return [ErrorInput(i64(3), match="floating"),
            ErrorInput(f32(0), p=np.inf, match="empty"),
            ErrorInput(f32(3, 4), dim=2, match="range")]


def _shift_samples(dtype, rng):
    return binary_samples(dtype, rng, rhs_low=-2, rhs_high=9, scalars="same", mixed=("int64",))


def _rrelu_training(m, x, **kw):
    m.manual_seed(7)
    return m.nn.functional.rrelu(x, training=True, **kw)


_ACTIVATION_FLOATS = dict(low=-4, high=4)
angle = dict(low=-0.95, high=0.95)


OPS += [
    # ---- elementwise unary math (ints are promoted to the default float)
    OpInfo("tan", lambda m, x: m.tan(x), ALL, _unary(-1.4, 1.4)),
    OpInfo("asin", lambda m, x: m.asin(x), ALL, _unary(**angle)),
    OpInfo("acos", lambda m, x: m.acos(x), ALL, _unary(**angle)),
    OpInfo("arccos", lambda m, x: m.arccos(x), ALL, _unary(**angle)),
    OpInfo("atan", lambda m, x: x.atan(), ALL, unary_samples),
    OpInfo("sinh", lambda m, x: m.sinh(x), ALL, unary_samples),
    OpInfo("cosh", lambda m, x: x.cosh(), ALL, unary_samples),
    OpInfo("asinh", lambda m, x: m.asinh(x), ALL, unary_samples),
    OpInfo("acosh", lambda m, x: m.acosh(x), ALL, _unary(1.1, 4)),
    OpInfo("atanh", lambda m, x: x.arctanh(), ALL, _unary(**angle)),
    OpInfo("log2", lambda m, x: m.log2(x), ALL, _unary(**positive)),
    OpInfo("log10", lambda m, x: x.log10(), ALL, _unary(**positive)),
    OpInfo("exp2", lambda m, x: m.exp2(x), ALL, unary_samples),
    OpInfo("reciprocal", lambda m, x: m.reciprocal(x), ALL, _unary(nonzero=True)),
    OpInfo("erf", lambda m, x: m.erf(x), ALL, unary_samples),
    OpInfo("erfc", lambda m, x: x.erfc(), ALL, unary_samples),
    OpInfo("erfinv", lambda m, x: m.erfinv(x), ALL, _unary(**angle)),
    OpInfo("lgamma", lambda m, x: m.lgamma(x), ALL, _unary(0.1, 5)),
    OpInfo("lgamma_negative", lambda m, x: x.lgamma(), FLOATS, _unary(-2.9, -0.1),
           other_dtypes_raise=False),
    OpInfo("digamma", lambda m, x: m.digamma(x), ALL, _unary(0.2, 5)),
    OpInfo("polygamma", lambda m, x, n: m.polygamma(n, x), ALL,
           _unary(0.3, 5, kwargs=({"n": 1}, {"n": 2})),
           errors=lambda: [ErrorInput(f32(3), n=-1, match="negative")]),
    OpInfo("trunc", lambda m, x: m.trunc(x), NUMBERS, unary_samples),
    OpInfo("fix", lambda m, x: x.fix(), NUMBERS, unary_samples),
    OpInfo("floor", lambda m, x: m.floor(x), NUMBERS, unary_samples),
    OpInfo("ceil", lambda m, x: x.ceil(), NUMBERS, unary_samples),
    OpInfo("round", lambda m, x: m.round(x), NUMBERS, _round_samples),
    OpInfo("round_decimals", lambda m, x, **kw: m.round(x, **kw), FLOATS,
           _unary(-30, 30, kwargs=({"decimals": 1}, {"decimals": 2}, {"decimals": -1}))),
    OpInfo("frac", lambda m, x: m.frac(x), FLOATS, unary_samples),
    OpInfo("isnan", lambda m, x: m.isnan(x), ALL, unary_samples, grad=False),
    OpInfo("isinf", lambda m, x: x.isinf(), ALL, unary_samples, grad=False),
    OpInfo("isfinite", lambda m, x: m.isfinite(x), ALL, unary_samples, grad=False),
    OpInfo("nan_to_num", lambda m, x, **kw: m.nan_to_num(x, **kw), ALL,
           _unary(kwargs=({}, {"nan": 1.5, "posinf": 2.0, "neginf": -2.0}, {"posinf": 1e10}))),

    # ---- in-place unary math
    OpInfo("tan_", _clone_inplace("tan_"), FLOATS, _unary(-1.4, 1.4),
           errors=lambda: [ErrorInput(i64(3), match="Float|Long")]),
    OpInfo("erfinv_", _clone_inplace("erfinv_"), FLOATS, _unary(**angle)),
    OpInfo("floor_", _clone_inplace("floor_"), NUMBERS, unary_samples),
    OpInfo("round_decimals_", lambda m, x: x.clone().round_(decimals=1), FLOATS, unary_samples),
    OpInfo("exp_", _clone_inplace("exp_"), FLOATS, unary_samples),
    OpInfo("sigmoid_", lambda m, x: m.sigmoid_(x.clone()), FLOATS, unary_samples),
    OpInfo("abs_", _clone_inplace("abs_"), NUMBERS, unary_samples),
    OpInfo("nan_to_num_", lambda m, x: x.clone().nan_to_num_(nan=3.0), ALL, unary_samples),
    OpInfo("polygamma_", lambda m, x: x.clone().polygamma_(1), FLOATS, _unary(0.3, 5)),

    # ---- elementwise binary math
    OpInfo("fmod", lambda m, x, y: m.fmod(x, y), NUMBERS,
           functools.partial(bs, nonzero=True, mixed=MIXED), errors=_int_zero_division),
    OpInfo("fmod_", _clone_inplace("fmod_"), NUMBERS, functools.partial(inplace_samples,
                                                                         nonzero=True)),
    OpInfo("hypot", lambda m, x, y: m.hypot(x, y), FLOATS,
           functools.partial(bs, scalars=False, mixed=MIXED),
           errors=lambda: [ErrorInput(f32(3), 2.0, match="Tensor"),
                           ErrorInput(i64(3), i64(3), match="Long")]),
    OpInfo("atan2", lambda m, x, y: m.atan2(x, y), ALL,
           functools.partial(bs, scalars=False, nonzero=True, mixed=MIXED),
           errors=lambda: [ErrorInput(f32(3), 2.0, match="Tensor")]),
    OpInfo("arctan2_", _clone_inplace("arctan2_"), FLOATS,
           functools.partial(inplace_samples, scalars=False, nonzero=True)),
    OpInfo("copysign", lambda m, x, y: m.copysign(x, y), ALL, _copysign_samples),
    OpInfo("copysign_", _clone_inplace("copysign_"), FLOATS, inplace_samples),
    *[OpInfo(name, fn, INTS, _shift_samples, grad=False,
             errors=lambda: [ErrorInput(f32(3), 2, match="Float")])
      for name, fn in (("bitwise_left_shift", lambda m, x, y: m.bitwise_left_shift(x, y)),
                       ("bitwise_right_shift", lambda m, x, y: x.bitwise_right_shift(y)),
                       ("__lshift__", lambda m, x, y: x << y),
                       ("__rshift__", lambda m, x, y: x >> y))],
    OpInfo("__rlshift__", lambda m, x: 3 << x, INTEGRAL, _unary(0, 7), grad=False),
    OpInfo("__irshift__", _augmented(operator.irshift), INTS, inplace_samples, grad=False),
    OpInfo("lerp", lambda m, x, y, w: m.lerp(x, y, w), FLOATS, _lerp_samples,
           errors=lambda: [ErrorInput(f32(3), f64(3), 0.5, match="dtype"),
                           ErrorInput(i64(3), i64(3), 0.5, match="Long")]),
    OpInfo("lerp_", _clone_inplace("lerp_"), FLOATS,
           lambda dtype, rng: [s for s in _lerp_samples(dtype, rng)
                               if len(s.args[0].data.shape) >= len(s.args[1].data.shape)
                               and s.args[0].data.shape[-1:] != (1,)]),
    OpInfo("addcmul", lambda m, x, a, b, **kw: m.addcmul(x, a, b, **kw), NUMBERS, _addc_samples),
    OpInfo("addcmul_", _clone_inplace("addcmul_"), NUMBERS,
           lambda dtype, rng: [s for s in _addc_samples(dtype, rng)
                               if s.args[0].data.shape != ()]),
    OpInfo("addcdiv", lambda m, x, a, b, **kw: x.addcdiv(a, b, **kw), FLOATS,
           functools.partial(_addc_samples, divide=True),
           errors=lambda: [ErrorInput(i64(3), i64(3), i64(3, low=1), match="Integer division")]),
    OpInfo("addcdiv_", _clone_inplace("addcdiv_"), FLOATS,
           lambda dtype, rng: [s for s in _addc_samples(dtype, rng, divide=True)
                               if s.args[0].data.shape != ()]),

    # ---- activations
    OpInfo("elu", lambda m, x, **kw: m.nn.functional.elu(x, **kw), FLOATS,
           _unary(**_ACTIVATION_FLOATS, kwargs=({}, {"alpha": 0.5}))),
    OpInfo("elu_inplace", lambda m, x: m.nn.functional.elu(x.clone(), 1.5, inplace=True),
           FLOATS, unary_samples),
    OpInfo("selu", lambda m, x: m.selu(x), FLOATS, _unary(**_ACTIVATION_FLOATS)),
    OpInfo("F.selu_inplace", lambda m, x: m.nn.functional.selu(x.clone(), inplace=True),
           FLOATS, unary_samples),
    OpInfo("celu", lambda m, x, **kw: m.nn.functional.celu(x, **kw), FLOATS,
           _unary(**_ACTIVATION_FLOATS, kwargs=({}, {"alpha": 2.0}))),
    OpInfo("leaky_relu", lambda m, x, **kw: m.nn.functional.leaky_relu(x, **kw), FLOATS,
           _unary(kwargs=({}, {"negative_slope": 0.2}))),
    OpInfo("leaky_relu_", lambda m, x: m.nn.functional.leaky_relu_(x.clone(), 0.1), FLOATS,
           unary_samples),
    OpInfo("hardtanh", lambda m, x, **kw: m.nn.functional.hardtanh(x, **kw), SIGNED + FLOATS,
           _unary(kwargs=({}, {"min_val": -2, "max_val": 0.5})),
           errors=lambda: [ErrorInput(T(np.arange(3, dtype=np.uint8), "uint8"),
                                      match="unsigned"),
                           ErrorInput(boolean(3), match="Bool")]),
    OpInfo("hardtanh_uint8", lambda m, x: m.nn.functional.hardtanh(x, 0, 4), ("uint8",),
           unary_samples, other_dtypes_raise=False),
    OpInfo("hardtanh_", lambda m, x: m.nn.functional.hardtanh_(x.clone(), -0.5, 0.5),
           INTS + FLOATS, unary_samples),
    OpInfo("relu6", lambda m, x: m.nn.functional.relu6(x), INTS + FLOATS, _unary(-3, 9)),
    # no double backward, as torch: its derivative is hardsigmoid_backward, whose own
    # derivative is not implemented
    OpInfo("hardsigmoid", lambda m, x: m.nn.functional.hardsigmoid(x), FLOATS,
           _unary(**_ACTIVATION_FLOATS), gradgrad=False),
    OpInfo("hardswish", lambda m, x: m.nn.functional.hardswish(x), FLOATS,
           _unary(**_ACTIVATION_FLOATS)),
    OpInfo("hardswish_inplace", lambda m, x: m.nn.functional.hardswish(x.clone(), True),
           FLOATS, unary_samples),
    OpInfo("hardsigmoid_inplace", lambda m, x: m.nn.functional.hardsigmoid(x.clone(), True),
           FLOATS, _unary(**_ACTIVATION_FLOATS), gradgrad=False),
    OpInfo("mish", lambda m, x: m.nn.functional.mish(x), FLOATS, _unary(-25, 25)),
    OpInfo("mish_inplace", lambda m, x: m.nn.functional.mish(x.clone(), True), FLOATS,
           _unary(-25, 25)),
    OpInfo("logsigmoid", lambda m, x: m.nn.functional.logsigmoid(x), FLOATS, _unary(-25, 25)),
    OpInfo("softsign", lambda m, x: m.nn.functional.softsign(x), NUMBERS, unary_samples),
    OpInfo("tanhshrink", lambda m, x: m.nn.functional.tanhshrink(x), NUMBERS, unary_samples),
    OpInfo("threshold", lambda m, x: m.threshold(x, 0.5, -2), NUMBERS, unary_samples),
    OpInfo("F.threshold_", lambda m, x: m.nn.functional.threshold(x.clone(), 1, 3.5, True),
           NUMBERS, unary_samples),
    OpInfo("glu", lambda m, x, **kw: m.nn.functional.glu(x, **kw), FLOATS, _glu_samples,
           errors=lambda: [ErrorInput(f32(3, 3), match="even"), ErrorInput(f32(), match="scalar")]),
    OpInfo("hardshrink", lambda m, x, **kw: m.nn.functional.hardshrink(x, **kw), FLOATS,
           _unary(kwargs=({}, {"lambd": 1.5}))),
    OpInfo("hardshrink_method", lambda m, x: x.hardshrink(0.25), FLOATS, unary_samples),
    OpInfo("softshrink", lambda m, x, **kw: m.nn.functional.softshrink(x, **kw), FLOATS,
           _unary(kwargs=({}, {"lambd": 1.5}, {"lambd": 0})),
           errors=lambda: [ErrorInput(f32(3), lambd=-1.0, match="lambda")]),
    OpInfo("softmin", lambda m, x, **kw: m.nn.functional.softmin(x, **kw), FLOATS,
           softmax_samples),
    OpInfo("prelu", lambda m, x, w: m.nn.functional.prelu(x, w), FLOATS, _prelu_samples,
           errors=lambda: [ErrorInput(f32(2, 3), f32(2), match="3"),
                           ErrorInput(f32(2, 3), f64(3), match="promot"),
                           ErrorInput(f32(3), f32(1, 1), match="1D")]),
    OpInfo("rrelu_eval", lambda m, x: m.rrelu(x, 0.1, 0.3), FLOATS, unary_samples),
    OpInfo("rrelu_training", _rrelu_training, ("bfloat16", "float32", "float64"),
           unary_samples),

    # ---- reductions
    OpInfo("norm", lambda m, x, **kw: m.norm(x, **kw), FLOATS,
           functools.partial(reduction_samples, kwargs=(
               {}, {"p": 1}, {"p": 3}, {"p": 0.5}, {"p": 0}))),
    OpInfo("norm_inf", lambda m, x, **kw: x.norm(**kw), FLOATS,
           functools.partial(reduction_samples, empty=False,
                             kwargs=({"p": np.inf}, {"p": -np.inf}, {"p": -1.5})),
           errors=_norm_errors),
    OpInfo("norm_fro_dtype", lambda m, x, **kw: m.norm(x, "fro", dtype=m.float64, **kw),
           ("float32",), functools.partial(reduction_samples, empty=False),
           other_dtypes_raise=False),
    OpInfo("norm_matrix_1", lambda m, x: m.norm(x, p=1, dim=(0, 1)), FLOATS,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)),
                               Sample(make(rng, (3, 4), dtype, "transposed"))]),
    OpInfo("linalg.vector_norm", lambda m, x, **kw: m.linalg.vector_norm(x, **kw), FLOATS,
           functools.partial(reduction_samples, kwargs=({}, {"ord": 1}, {"ord": 3.5},
                                                         {"ord": 0})),
           errors=lambda: [ErrorInput(f32(3), dtype=DT("int64"), match="floating"),
                           ErrorInput(f64(3), dtype=DT("float32"), match="narrowing")]),
    OpInfo("linalg.vector_norm_dtype", lambda m, x: m.linalg.vector_norm(x, dtype=m.float64),
           FLOATS, unary_samples, gradcheck=False),
    OpInfo("linalg.matrix_norm", lambda m, x, **kw: m.linalg.matrix_norm(x, **kw), FLOATS,
           functools.partial(_matrix_norm_samples, ords=("fro", 1, -1, np.inf, -np.inf)),
           errors=lambda: [ErrorInput(f32(3), match="2 dimensions"),
                           ErrorInput(f32(3, 3), ord=3, match="Order")]),
    OpInfo("linalg.matrix_norm_svd", lambda m, x, **kw: m.linalg.matrix_norm(x, **kw),
           ("float32", "float64"), functools.partial(_matrix_norm_samples, ords=("nuc", 2, -2)),
           other_dtypes_raise=False),
    OpInfo("median", lambda m, x, **kw: m.median(x, **kw), NUMBERS,
           functools.partial(reduction_samples, dims="single", dim_none=False, empty=False),
           errors=lambda: _reduction_errors(empty_raises=True)()),
    OpInfo("nanmedian", lambda m, x, **kw: x.nanmedian(**kw), NUMBERS, _nanmedian_samples),
    OpInfo("mode", lambda m, x, **kw: m.mode(x, **kw), ALL, _mode_samples,
           errors=lambda: [ErrorInput(f32(0), match="non-zero")]),
    # PyTorch's nansum keeps float16/bfloat16 partial sums between dims (one more rounding)
    OpInfo("nansum", lambda m, x, **kw: m.nansum(x, **kw), ALL, reduction_samples,
           tol={"float16": (4e-3, 4e-3), "bfloat16": (3.2e-2, 3e-2)}),
    OpInfo("nanmean", lambda m, x, **kw: x.nanmean(**kw), FLOATS, reduction_samples,
           errors=lambda: [ErrorInput(i64(3), match="floating")]),
    OpInfo("count_nonzero", lambda m, x, dim=None, keepdim=False: m.count_nonzero(x, dim), ALL,
           functools.partial(reduction_samples, low=-1, high=1), grad=False),
    OpInfo("aminmax", lambda m, x, **kw: m.aminmax(x, **kw), ALL,
           functools.partial(reduction_samples, dims="single", empty=False),
           errors=lambda: [ErrorInput(f32(0), match="empty"),
                           ErrorInput(f32(0, 3), dim=0, match="non-zero")]),
    # PyTorch's var_mean is one Welford pass: its mean of a row with an infinity is NaN
    # unless the infinity comes last. ember's mean is torch.mean's, so infinities are left out.
    OpInfo("var_mean", lambda m, x, **kw: m.var_mean(x, **kw), FLOATS,
           lambda dtype, rng: _finite_only(reduction_samples(
               dtype, rng, kwargs=({}, {"correction": 0})))),
    OpInfo("std_mean", lambda m, x, **kw: m.std_mean(x, **kw), FLOATS,
           lambda dtype, rng: _finite_only(reduction_samples(
               dtype, rng, kwargs=({"unbiased": False},)))),
    OpInfo("quantile", lambda m, x, q, **kw: m.quantile(x, q, **kw), ("float32", "float64"),
           _quantile_samples,
           errors=lambda: [ErrorInput(f32(3), 1.5, match="range"),
                           ErrorInput(f32(3), f64(2), match="dtype"),
                           ErrorInput(f32(0), 0.5, match="non-empty"),
                           ErrorInput(f32(3), 0.5, interpolation="bad", match="interpolation")]),
    OpInfo("nanquantile", lambda m, x, q, **kw: x.nanquantile(q, **kw), ("float32", "float64"),
           _quantile_samples),

    # ---- scans
    OpInfo("cumsum", lambda m, x, dim: m.cumsum(x, dim), ALL, _scan_samples,
           errors=_reduction_errors()),
    OpInfo("cumsum_dtype", lambda m, x, dim: x.cumsum(dim, dtype=m.float64), ALL, _scan_samples,
           gradcheck=False),
    OpInfo("cumsum_", lambda m, x, dim, **kw: x.clone().cumsum_(dim, **kw), NUMBERS,
           _scan_samples,
           other_dtypes_raise=False,  # a 0-d bool tensor is copied, a 1-d one refused
           errors=lambda: [ErrorInput(i64(3), 0, dtype=DT("float32"), match="in-place"),
                           ErrorInput(boolean(3), 0, match="Bool")]),
    OpInfo("cumprod", lambda m, x, dim: x.cumprod(dim), ALL, _cumprod_samples),
    OpInfo("cummax", lambda m, x, dim: m.cummax(x, dim), ALL,
           functools.partial(_scan_samples, low=-2, high=2)),
    OpInfo("cummin", lambda m, x, dim: x.cummin(dim), ALL,
           functools.partial(_scan_samples, low=-2, high=2)),
    OpInfo("logcumsumexp", lambda m, x, dim: m.logcumsumexp(x, dim), FLOATS,
           functools.partial(_scan_samples, low=-5, high=5)),

    # ---- sorting and selection
    OpInfo("sort", lambda m, x, **kw: m.sort(x, **kw), ALL, _sort_samples,
           errors=lambda: [ErrorInput(f32(3, 4), dim=2, match="range")]),
    OpInfo("argsort", lambda m, x, **kw: x.argsort(**kw), ALL, _sort_samples, grad=False),
    OpInfo("msort", lambda m, x: m.msort(x), ALL,
           lambda dtype, rng: [s for s in _sort_samples(dtype, rng) if not s.kwargs]),
    OpInfo("topk", lambda m, x, **kw: m.topk(x, **kw), NUMBERS, _topk_samples,
           errors=lambda: [ErrorInput(f32(3), k=4, match="range"),
                           ErrorInput(boolean(3), k=1, match="bool")]),
    OpInfo("topk_unsorted", lambda m, x, k: m.sort(x.topk(k, sorted=False).values).values,
           NUMBERS, lambda dtype, rng: [Sample(distinct(rng, (3, 6), dtype), k)
                                        for k in (1, 3, 6)]),
    OpInfo("kthvalue", lambda m, x, *args, **kw: m.kthvalue(x, *args, **kw), NUMBERS,
           _kthvalue_samples,
           errors=lambda: [ErrorInput(f32(3, 4), 5, match="range"),
                           ErrorInput(f32(0, 3), 1, 0, match="non-zero")]),
    OpInfo("unique", lambda m, x, **kw: m.unique(x, **kw), ALL,
           functools.partial(_unique_samples, kwargs=_UNIQUE_FLAGS), gradcheck=False),
    OpInfo("unique_dim", lambda m, x, **kw: x.unique(**kw), ALL, _unique_dim_samples,
           gradcheck=False,
           errors=lambda: [ErrorInput(f32(0, 3), dim=1, match="0 sized")]),
    OpInfo("unique_consecutive", lambda m, x, **kw: m.unique_consecutive(x, **kw), ALL,
           _unique_consecutive_samples, gradcheck=False),
    OpInfo("searchsorted", lambda m, s, x, **kw: m.searchsorted(s, x, **kw), NUMBERS,
           _searchsorted_samples, grad=False,
           errors=lambda: [ErrorInput(T(np.zeros((2, 3)), "float32"), f32(3, 2), match=r"\[2, 3\]"),
                           ErrorInput(f32(3), f32(2), side="bad", match="side"),
                           ErrorInput(f32(3), f32(2), side="left", right=True,
                                      match="opposites")]),
    OpInfo("bucketize", lambda m, x, b, **kw: m.bucketize(x, b, **kw), NUMBERS,
           _bucketize_samples, grad=False,
           errors=lambda: [ErrorInput(f32(3), f32(2, 2), match="1 dimension")]),
    OpInfo("histc", lambda m, x, **kw: m.histc(x, **kw), FLOATS, _histc_samples, grad=False,
           errors=lambda: [ErrorInput(f32(3), bins=0, match="bins"),
                           ErrorInput(f32(3), min=2, max=1, match="max"),
                           ErrorInput(T(np.array([1.0, np.inf]), "float32"), match="finite")]),
    OpInfo("bincount", lambda m, x, *w, **kw: m.bincount(x, *w, **kw), INTS, _bincount_samples,
           grad=False,
           errors=lambda: [ErrorInput(i64(2, 2, low=0), match="1-d"),
                           ErrorInput(T(np.array([1, -1]), "int64"), match="non-negative"),
                           ErrorInput(i64(3, low=0), f32(2), match="weights")]),
]


# ---- neural-network functions: their rows live in op_db_nn.py (issue 3d) ----------------------
from op_db_nn import NN_OPS  # noqa: E402  (op_db_nn reads this module's helpers)
OPS += NN_OPS
from op_db_nn_fused import FUSED_NN_OPS, AMP_OPS, COMPOSITE_LOSS_OPS  # noqa: E402
OPS += FUSED_NN_OPS + AMP_OPS + COMPOSITE_LOSS_OPS  # own backward kernels, GradScaler's, losses


# ---- issue 3: linear algebra, shape and scatter ops -------------------------------------------
LINALG = ("float32", "float64")
_LINALG_TOL = {"float32": (1e-4, 1e-4)}


def _pairs(*shape_pairs, layouts=True):
    def samples(dtype, rng):
        out = [Sample(*(make(rng, s, dtype) for s in shapes)) for shapes in shape_pairs]
        if layouts:
            a, b = shape_pairs[0]
            out.append(Sample(make(rng, a, dtype, "sliced"), make(rng, b, dtype, "transposed")))
        return out
    return samples


def _scaled_samples(self_shapes, a_shape, b_shape):
    def samples(dtype, rng):
        out = []
        for s in self_shapes:
            for kw in ({}, {"beta": 2, "alpha": 3}, {"beta": 0}, {"alpha": 0.5, "beta": 0.5}):
                if dtype not in FLOATS and any(isinstance(v, float) for v in kw.values()):
                    continue
                out.append(Sample(make(rng, s, dtype), make(rng, a_shape, dtype),
                                  make(rng, b_shape, dtype), **kw))
        return out
    return samples


EINSUM_CASES = (("ij,jk->ik", (3, 4), (4, 5)), ("ij,jk", (3, 4), (4, 5)),
                ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)), ("ii->i", (3, 3)), ("ii", (3, 3)),
                ("ij->", (3, 4)), ("i,j->ij", (3,), (4,)), ("ij->ji", (3, 4)),
                ("...ij,...jk->...ik", (2, 3, 4), (4, 5)), ("ijk,ikl,ilm->jm", (2, 3, 4),
                                                             (2, 4, 3), (2, 3, 2)),
                ("iij->ij", (3, 3, 2)), ("ij,ij->i", (1, 4), (3, 4)), ("i,i", (4,), (4,)))


def _einsum_samples(dtype, rng):
    return [Sample(eq, *(make(rng, s, dtype) for s in shapes)) for eq, *shapes in EINSUM_CASES]


def _well_conditioned(rng, shape, dtype):
    data = rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])
    return T(round_to(data, dtype), dtype)


def _square_samples(dtype, rng):
    return [Sample(_well_conditioned(rng, s, dtype)) for s in ((3, 3), (2, 3, 3), (1, 1))] + \
        [Sample(make(rng, (3, 3), dtype, "transposed"))]


def _solve_samples(dtype, rng):
    A = functools.partial(_well_conditioned, rng, dtype=dtype)
    return [Sample(A((3, 3)), make(rng, (3, 2), dtype)), Sample(A((3, 3)), make(rng, (3,), dtype)),
            Sample(A((2, 3, 3)), make(rng, (2, 3), dtype)),
            Sample(A((2, 3, 3)), make(rng, (2, 3, 4), dtype)),
            Sample(A((3, 3)), make(rng, (2, 3), dtype), left=False)]


def _rect_samples(shapes):
    def samples(dtype, rng):
        return [Sample(make(rng, s, dtype, low=-1, high=1)) for s in shapes]
    return samples


def _spd(m, x):
    return x @ x.mT + 3 * m.eye(x.shape[-1], dtype=x.dtype)


def _svd_invariants(m, x):
    """Singular values and sign-free products of U and V (a singular vector's sign is free)."""
    U, S, Vh = m.linalg.svd(x, full_matrices=False)
    return S, (U * S.unsqueeze(-2)) @ Vh, U @ U.mT, Vh.mT @ Vh


def _eigh_invariants(m, x):
    L, Q = m.linalg.eigh(x + x.mT)
    return L, Q * Q, (Q * L.unsqueeze(-2)) @ Q.mT


def _linalg_dtype_errors(op_args=1):
    return lambda: [ErrorInput(*(f32(2, 3) for _ in range(op_args)), match="square")]


def _scatter_view_samples(kind):
    def samples(dtype, rng):
        x = make(rng, (3, 4, 5), dtype)
        if kind == "select":
            return [Sample(x, make(rng, (3, 5), dtype), 1, 2),
                    Sample(make(rng, (3, 4), dtype), make(rng, (4,), dtype), 0, -1)]
        if kind == "slice":
            return [Sample(x, make(rng, (3, 2, 5), dtype), 1, 1, 3),
                    Sample(x, make(rng, (3, 4, 2), dtype), 2, 0, None, 3),
                    Sample(make(rng, (5,), dtype), make(rng, (2,), dtype), 0, -3, -1)]
        return [Sample(make(rng, (4, 5), dtype), make(rng, (4,), dtype)),
                Sample(make(rng, (4, 5), dtype), make(rng, (3,), dtype), 2),
                Sample(x, make(rng, (4, 2), dtype), -1, 0, 2)]
    return samples


OPS += [
    # ---- products
    OpInfo("dot", lambda m, x, y: m.dot(x, y), NUMBERS, _pairs(((5,), (5,)), ((0,), (0,))),
           errors=lambda: [ErrorInput(f32(3), f32(4), match="3.*4"),
                           ErrorInput(f32(3, 1), f32(3, 1), match="1D"),
                           ErrorInput(f32(3), f64(3), match="same dtype")]),
    OpInfo("vdot", lambda m, x, y: x.vdot(y), NUMBERS, _pairs(((5,), (5,)))),
    OpInfo("mv", lambda m, x, y: m.mv(x, y), NUMBERS, _pairs(((3, 4), (4,)), ((0, 2), (2,))),
           errors=lambda: [ErrorInput(f32(3, 2), f32(3), match="size mismatch"),
                           ErrorInput(f32(3), f32(3), match="vector")]),
    OpInfo("outer", lambda m, x, y: m.outer(x, y), ALL, _pairs(((3,), (4,)), layouts=False),
           errors=lambda: [ErrorInput(f32(3, 1), f32(3), match="1-D")]),
    OpInfo("ger", lambda m, x, y: x.ger(y), FLOATS, _pairs(((3,), (4,)), layouts=False),
           other_dtypes_raise=False),
    OpInfo("addmv", lambda m, s, a, b, **kw: m.addmv(s, a, b, **kw), NUMBERS,
           _scaled_samples(((3,), (), (1,)), (3, 4), (4,))),
    OpInfo("addr", lambda m, s, a, b, **kw: m.addr(s, a, b, **kw), NUMBERS,
           _scaled_samples(((3, 4), (4,)), (3,), (4,)), other_dtypes_raise=False),
    OpInfo("baddbmm", lambda m, s, a, b, **kw: m.baddbmm(s, a, b, **kw), NUMBERS,
           _scaled_samples(((2, 2, 3), (3,)), (2, 2, 2), (2, 2, 3)),
           errors=lambda: [ErrorInput(f32(2, 3, 5), f32(2, 3, 4), f32(2, 5, 5), match="size")]),
    OpInfo("addbmm", lambda m, s, a, b, **kw: s.addbmm(a, b, **kw), NUMBERS,
           _scaled_samples(((2, 3), (1,)), (2, 2, 3), (2, 3, 3)),
           tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}),
    OpInfo("baddbmm_", lambda m, s, a, b: s.clone().baddbmm_(a, b, beta=0.5), FLOATS,
           _pairs(((2, 2, 3), (2, 2, 2), (2, 2, 3)), layouts=False), other_dtypes_raise=False),
    OpInfo("einsum", lambda m, eq, *xs: m.einsum(eq, *xs), NUMBERS, _einsum_samples,
           errors=lambda: [ErrorInput("ij,jk", f32(2, 3), f32(2, 2), match="subscript j"),
                           ErrorInput("ij,jk", f32(2, 3), f64(3, 2), match="Float"),
                           ErrorInput("ij", f32(2, 3), f32(3), match="operands"),
                           ErrorInput("ijk", f32(2, 3), match="subscripts")]),
    OpInfo("einsum_list", lambda m, x, y: m.einsum("bn,anm,bm->ba", [x, y, x]), FLOATS,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype), make(rng, (2, 3, 3), dtype))],
           other_dtypes_raise=False, tol={"float16": (1e-2, 1e-2), "bfloat16": (1e-1, 1e-1)}),
    OpInfo("tensordot", lambda m, x, y, **kw: m.tensordot(x, y, **kw), NUMBERS,
           lambda dtype, rng: [Sample(make(rng, (2, 3, 4), dtype), make(rng, (3, 4, 2), dtype)),
                               Sample(make(rng, (2, 3, 4), dtype), make(rng, (4, 3), dtype),
                                      dims=([1, 2], [1, 0])),
                               Sample(make(rng, (2, 3), dtype), make(rng, (2,), dtype), dims=0)]),
    OpInfo("kron", lambda m, x, y: m.kron(x, y), ALL,
           _pairs(((2, 3), (3, 2)), ((2,), (2, 3)), ((2, 1, 2), (3,)), layouts=False)),
    OpInfo("linalg.cross", lambda m, x, y, **kw: m.linalg.cross(x, y, **kw), NUMBERS,
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype), make(rng, (4, 3), dtype)),
                               Sample(make(rng, (3, 2), dtype), make(rng, (3, 2), dtype), dim=0),
                               Sample(make(rng, (1, 3), dtype), make(rng, (4, 3), dtype))],
           tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)},
           errors=lambda: [ErrorInput(f32(3, 2), f32(3, 2), match="length 3")]),
    OpInfo("cross", lambda m, x, y: m.cross(x, y, dim=1), NUMBERS,
           _pairs(((2, 3), (2, 3)), layouts=False)),
    OpInfo("trace", lambda m, x: m.trace(x), NUMBERS,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)), Sample(make(rng, (4, 4), dtype,
                                                                         "transposed"))],
           errors=lambda: [ErrorInput(f32(2, 3, 3), match="matrix")]),
    # ---- torch.linalg
    OpInfo("linalg.inv", lambda m, x: m.linalg.inv(x), LINALG, _square_samples,
           tol=_LINALG_TOL, errors=_linalg_dtype_errors()),
    OpInfo("inverse", lambda m, x: x.inverse(), LINALG, _square_samples, tol=_LINALG_TOL),
    OpInfo("linalg.det", lambda m, x: m.linalg.det(x), LINALG, _square_samples, tol=_LINALG_TOL,
           errors=_linalg_dtype_errors()),
    OpInfo("linalg.slogdet", lambda m, x: m.linalg.slogdet(x), LINALG, _square_samples,
           tol=_LINALG_TOL),
    OpInfo("logdet", lambda m, x: m.logdet(x), LINALG, _square_samples, tol=_LINALG_TOL),
    OpInfo("linalg.solve", lambda m, a, b, **kw: m.linalg.solve(a, b, **kw), LINALG,
           _solve_samples, tol=_LINALG_TOL,
           errors=lambda: [ErrorInput(f32(2, 3), f32(2), match="square")]),
    OpInfo("linalg.cholesky", lambda m, x, **kw: m.linalg.cholesky(_spd(m, x), **kw), LINALG,
           lambda dtype, rng: [Sample(make(rng, (3, 3), dtype, low=-1, high=1)),
                               Sample(make(rng, (2, 3, 3), dtype, low=-1, high=1), upper=True)],
           tol=_LINALG_TOL),
    OpInfo("linalg.qr", lambda m, x, **kw: m.linalg.qr(x, **kw), LINALG,
           lambda dtype, rng: [Sample(make(rng, s, dtype, low=-1, high=1)) for s in
                               ((4, 3), (3, 3), (2, 5, 3))] +
           [Sample(make(rng, (3, 3), dtype, low=-1, high=1), mode="complete")],
           tol=_LINALG_TOL),
    OpInfo("linalg.svd", _svd_invariants, LINALG, _rect_samples(((4, 3), (3, 4), (3, 3),
                                                                 (2, 4, 2))),
           tol=_LINALG_TOL),
    OpInfo("svd", lambda m, x: (lambda r: (r.S, (r.U * r.S.unsqueeze(-2)) @ r.V.mT))(m.svd(x)),
           LINALG, _rect_samples(((4, 3), (3, 4))), tol=_LINALG_TOL),
    OpInfo("linalg.svdvals", lambda m, x: m.linalg.svdvals(x), LINALG,
           _rect_samples(((4, 3), (3, 4))), tol=_LINALG_TOL),
    OpInfo("linalg.eigh", _eigh_invariants, LINALG, _rect_samples(((3, 3), (2, 4, 4))),
           tol=_LINALG_TOL),
    OpInfo("linalg.pinv", lambda m, x, **kw: m.linalg.pinv(x, **kw), LINALG,
           lambda dtype, rng: [Sample(make(rng, s, dtype, low=-1, high=1)) for s in
                               ((4, 3), (3, 4), (2, 3, 3))],
           tol=_LINALG_TOL),
    OpInfo("torch.pinverse", lambda m, x, *a: m.pinverse(x, *a), LINALG,
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype, low=-1, high=1)),
                               Sample(make(rng, (2, 3, 4), dtype, low=-1, high=1), 1e-3)],
           tol=_LINALG_TOL),
    OpInfo("linalg.lstsq", lambda m, a, b: m.linalg.lstsq(a, b), LINALG,
           lambda dtype, rng: [Sample(make(rng, (5, 3), dtype), make(rng, (5, 2), dtype)),
                               Sample(make(rng, (5, 3), dtype), make(rng, (5,), dtype))],
           tol={"float32": (1e-3, 1e-3)}, gradcheck=False),
    OpInfo("linalg.lstsq.solution", lambda m, a, b: m.linalg.lstsq(a, b).solution, ("float64",),
           lambda dtype, rng: [Sample(make(rng, (5, 3), dtype), make(rng, (5, 2), dtype))],
           other_dtypes_raise=False),
    OpInfo("linalg.matrix_rank", lambda m, x: m.linalg.matrix_rank(x), LINALG,
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype)),
                               Sample(T(np.ones((3, 3)), dtype))], grad=False),
    OpInfo("linalg.matrix_power", lambda m, x, n: m.linalg.matrix_power(x, n), LINALG,
           lambda dtype, rng: [Sample(_well_conditioned(rng, (3, 3), dtype), n)
                               for n in (0, 1, 3, -2)], tol=_LINALG_TOL, other_dtypes_raise=False),
    OpInfo("linalg.multi_dot", lambda m, *xs: m.linalg.multi_dot(list(xs)), FLOATS,
           _pairs(((3,), (3, 4), (4, 2)), layouts=False), other_dtypes_raise=False),
    OpInfo("linalg.vecdot", lambda m, x, y: m.linalg.vecdot(x, y), FLOATS,
           _pairs(((3, 4), (3, 4)), layouts=False), other_dtypes_raise=False),
    OpInfo("linalg.norm", lambda m, x, **kw: m.linalg.norm(x, **kw), LINALG,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)),
                               Sample(make(rng, (3, 4), dtype), ord=1),
                               Sample(make(rng, (3, 4), dtype), dim=1),
                               Sample(make(rng, (5,), dtype), ord=3)], other_dtypes_raise=False),
    # ---- shape and scatter ops
    OpInfo("diag_embed", lambda m, x, *a: m.diag_embed(x, *a), ALL,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype)),
                               Sample(make(rng, (2, 3), dtype), 1, 0, 2),
                               Sample(make(rng, (3,), dtype), -2)]),
    OpInfo("rot90", lambda m, x, *a: x.rot90(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (2, 3, 4), dtype), k) for k in (1, 2, -1, 4)] +
           [Sample(make(rng, (2, 3, 4), dtype), 1, [2, 0]), Sample(make(rng, (2, 3), dtype))],
           errors=lambda: [ErrorInput(f32(2, 3), 1, [0, 0], match="different")]),
    OpInfo("select_scatter", lambda m, x, s, *a: m.select_scatter(x, s, *a), ALL,
           _scatter_view_samples("select"),
           errors=lambda: [ErrorInput(f32(3, 4), f32(3), 0, 0, match="size")]),
    OpInfo("slice_scatter", lambda m, x, s, *a: m.slice_scatter(x, s, *a), ALL,
           _scatter_view_samples("slice")),
    OpInfo("diagonal_scatter", lambda m, x, s, *a: m.diagonal_scatter(x, s, *a), ALL,
           _scatter_view_samples("diagonal")),
]

from op_db_indexing import INDEXING_OPS  # noqa: E402  (indexing, scatter, in-place views)
OPS += INDEXING_OPS
from op_db_composites import COMPOSITE_OPS  # noqa: E402  (diff, cov, windows, ...)
OPS += COMPOSITE_OPS
from op_db_elementwise import ELEMENTWISE_OPS  # noqa: E402  (more elementwise math)
OPS += ELEMENTWISE_OPS
from op_db_special import SPECIAL_OPS  # noqa: E402  (torch.special)
OPS += SPECIAL_OPS
from op_db_fft import FFT_OPS  # noqa: E402  (torch.fft, the spectral ops)
OPS += FFT_OPS
from op_db_masked import MASKED_OPS  # noqa: E402  (torch.masked)
OPS += MASKED_OPS
from op_db_sparse import SPARSE_OPS  # noqa: E402  (sparse COO tensors)
OPS += SPARSE_OPS
from op_db_linalg import LINALG_OPS  # noqa: E402  (linalg _ex variants, LDL, eig/qr/lstsq grads)
OPS += LINALG_OPS


# ---- in-place variants, generated like the ops' own: `exp_` gets exp's samples ------------------
def _inplace_method(name):
    """x.name_(...) on a copy of x broadcast to the result's shape (an in-place op keeps the
    shape of self, so a sample that broadcasts self is given the broadcast self)."""
    def op(m, x, *rest, **kwargs):
        shape = getattr(x, name[:-1])(*rest, **kwargs).shape
        return getattr(x.expand(shape).clone(), name)(*rest, **kwargs)
    return op


def _inplace_rows(ops):
    """A row for each in-place method whose out-of-place op has a row but it has none, run on
    the floating dtypes (where the result always fits `self`). Errors are the out-of-place
    row's concern."""
    import ember
    from ember._dispatch import dispatcher
    named = {info.name: info for info in ops}
    rows = []
    for op in list(dispatcher._registry.values()):
        if op.functional is None:
            continue
        base, name = op.functional.schema.name, op.schema.name
        info = named.get(base)
        if (info is None or name in named or "method" not in op.functional.schema.variants
                or not hasattr(ember.Tensor, name)):
            continue
        floats = tuple(d for d in info.dtypes if d in FLOATS)
        dtypes = floats or info.dtypes  # integral ops keep their integral dtypes
        # torch's own in-place kernels may round a half-precision result once more than its
        # out-of-place ones (addr_): one more unit in the last place is allowed
        tol = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}
        tol.update({d: t for d, t in info.tol.items() if t[0] > tol.get(d, (0, 0))[0]})
        if dtypes:
            named[name] = OpInfo(name, _inplace_method(name), dtypes, info.samples,
                                 grad=info.grad, gradcheck=False, tol=tol,
                                 other_dtypes_raise=False)
            rows.append(named[name])
    return rows


OPS += _inplace_rows(OPS)
from op_db_opinfo import OPINFO_OPS  # noqa: E402  (ops PyTorch's OpInfo database names)
OPS += OPINFO_OPS
