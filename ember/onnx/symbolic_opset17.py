"""The built-in symbolic functions: each aten op ember's models record, written as ONNX nodes for
opset 17 and later (PyTorch's torch/onnx/symbolic_opset*.py). Arguments follow the op's schema
in ember/_aten/native_functions.py; tensors arrive as Values, the rest as Python values.

Where ONNX changed an op's form after 17 (ReduceMean's axes became an input in 18, Gelu arrived
in 20) the function asks `g.opset`. A result the export does not produce (batch norm's saved
statistics, max pooling's indices) is None: a node that uses it fails to export, naming it.
"""
import math

import numpy as np

from .errors import SymbolicValueError
from .registry import onnx_symbolic

_INT64_MAX = 2 ** 63 - 1


def _ints(g, values):
    return g.constant(np.asarray(values, dtype=np.int64))


def _rank(v):
    if v.shape is None:
        raise SymbolicValueError(f"the rank of {v.name} is unknown at export time")
    return len(v.shape)


def _dim(d, rank):
    return d + rank if d < 0 else d


def _unsqueeze(g, x, axes):
    return g.op("Unsqueeze", x, _ints(g, axes))


def _squeeze(g, x, axes):
    return g.op("Squeeze", x, _ints(g, axes))


def _reduce(g, op_type, x, axes, keepdims):
    """ReduceX over `axes` (all when empty); ReduceSum took axes as an input in 13, the others
    in 18."""
    if not axes:
        return g.op(op_type, x, keepdims_i=int(keepdims))
    if op_type == "ReduceSum" or g.opset >= 18:
        return g.op(op_type, x, _ints(g, axes), keepdims_i=int(keepdims))
    return g.op(op_type, x, axes_is=axes, keepdims_i=int(keepdims))


def _operands(g, a, b):
    """Two operands of a binary op as Values of one dtype (numbers take the tensor's dtype;
    tensors of different dtypes are cast to their promoted dtype)."""
    from onnx import helper
    if not hasattr(a, "name") and not hasattr(b, "name"):
        # two Python numbers: an int64 pair, or the default float dtype if either is a float
        dt = np.float32 if isinstance(a, float) or isinstance(b, float) else \
            np.bool_ if isinstance(a, bool) and isinstance(b, bool) else np.int64
        return g.constant(np.asarray(a, dt)), g.constant(np.asarray(b, dt))
    if not hasattr(a, "name"):
        a, b, swapped = b, a, True
    else:
        swapped = False
    if not hasattr(b, "name"):
        dt = a.dtype if a.dtype is not None else np.float32
        if isinstance(b, float) and np.dtype(dt).kind in "iub":
            a, dt = g.op("Cast", a, to_i=helper.np_dtype_to_tensor_dtype(np.dtype(np.float32))), \
                np.float32
        b = g.constant(np.asarray(b, dtype=dt))
    elif a.dtype is not None and b.dtype is not None and a.dtype != b.dtype:
        ka, kb = _CATEGORY[np.dtype(a.dtype).kind], _CATEGORY[np.dtype(b.dtype).kind]
        if b.shape == () and ka == kb:
            target = a.dtype  # a 0-dim tensor of the same category follows the other operand
        elif a.shape == () and ka == kb:
            target = b.dtype
        elif ka != kb:
            target = a.dtype if ka > kb else b.dtype  # int64 + float32 is float32
        else:
            target = np.result_type(a.dtype, b.dtype)
        to = helper.np_dtype_to_tensor_dtype(np.dtype(target))
        a, b = (x if x.dtype == target else g.op("Cast", x, to_i=to) for x in (a, b))
    return (b, a) if swapped else (a, b)


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # PyTorch's promotion categories


def _binary(op_type):
    def symbolic(g, self, other, *rest):
        a, b = _operands(g, self, other)
        return g.op(op_type, a, b)
    return symbolic


@onnx_symbolic("aten::mul")
def mul(g, self, other):
    a, b = _operands(g, self, other)
    return g.op("And" if a.dtype == np.bool_ else "Mul", a, b)  # ONNX multiplies no bools


def _shift(left):
    """<< and >>: ONNX BitShift for unsigned integers; signed ones multiply or divide by
    2 ** shift (the quotient floored, so -7 >> 1 is -4 as in eager)."""
    def symbolic(g, self, other):
        a, b = _operands(g, self, other)
        if np.dtype(a.dtype).kind == "u":
            return g.op("BitShift", a, b, direction_s="LEFT" if left else "RIGHT")
        power = g.op("Cast", g.op("Pow", g.constant(np.asarray(2.0, np.float32)),
                                  g.op("Cast", b, to_i=_onnx_dtype(np.float32))),
                     to_i=_onnx_dtype(a.dtype))
        if left:
            return g.op("Mul", a, power)
        quotient = g.op("Div", a, power)  # truncates toward zero
        rest = g.op("Sub", a, g.op("Mul", quotient, power))
        below = g.op("Cast", g.op("Less", rest, g.constant(np.zeros((), a.dtype))),
                     to_i=_onnx_dtype(a.dtype))
        return g.op("Sub", quotient, below)
    return symbolic


onnx_symbolic("aten::bitwise_left_shift")(_shift(True))
onnx_symbolic("aten::bitwise_right_shift")(_shift(False))
onnx_symbolic("aten::__lshift__")(_shift(True))
onnx_symbolic("aten::__rshift__")(_shift(False))


def _ordering(op_type):
    """<, <=, >, >=: ONNX orders no bools, so bool operands compare as int32."""
    def symbolic(g, self, other):
        a, b = _operands(g, self, other)
        if a.dtype == np.bool_:
            a, b = (g.op("Cast", x, to_i=_onnx_dtype(np.int32)) for x in (a, b))
        return g.op(op_type, a, b)
    return symbolic


for _name, _op in (("lt", "Less"), ("le", "LessOrEqual"), ("gt", "Greater"),
                   ("ge", "GreaterOrEqual")):
    onnx_symbolic(f"aten::{_name}")(_ordering(_op))


def _unary(op_type):
    def symbolic(g, self, *rest):
        return g.op(op_type, self)
    return symbolic


def _identity(g, self, *rest):
    return self


for _name, _op in (("add", "Add"), ("sub", "Sub"), ("pow", "Pow"),
                   ("maximum", "Max"), ("minimum", "Min"), ("eq", "Equal"),
                   ("logical_and", "And"), ("logical_or", "Or"),
                   ("logical_xor", "Xor")):
    onnx_symbolic(f"aten::{_name}")(_binary(_op))
for _name, _op in (("relu", "Relu"), ("sigmoid", "Sigmoid"), ("tanh", "Tanh"), ("exp", "Exp"),
                   ("log", "Log"), ("sqrt", "Sqrt"), ("neg", "Neg"), ("abs", "Abs"),
                   ("erf", "Erf"), ("sin", "Sin"), ("cos", "Cos"), ("floor", "Floor"),
                   ("ceil", "Ceil"), ("reciprocal", "Reciprocal"), ("sign", "Sign"),
                   ("logical_not", "Not"), ("hardswish", "HardSwish")):
    onnx_symbolic(f"aten::{_name}")(_unary(_op))
for _name in ("clone", "alias", "detach", "lift_fresh", "contiguous"):
    onnx_symbolic(f"aten::{_name}")(_identity)


@onnx_symbolic("aten::add")
def add(g, self, other, alpha=1):
    a, b = _operands(g, self, other)
    if alpha != 1:
        b = g.op("Mul", *_operands(g, b, alpha))
    return g.op("Add", a, b)


@onnx_symbolic("aten::sub")
def sub(g, self, other, alpha=1):
    a, b = _operands(g, self, other)
    if alpha != 1:
        b = g.op("Mul", *_operands(g, b, alpha))
    return g.op("Sub", a, b)


@onnx_symbolic("aten::div")
def div(g, self, other, rounding_mode=None):
    a, b = _operands(g, self, other)
    if a.dtype is not None and np.dtype(a.dtype).kind in "iub" and rounding_mode is None:
        from onnx import helper
        to = helper.np_dtype_to_tensor_dtype(np.dtype(np.float32))
        a, b = g.op("Cast", a, to_i=to), g.op("Cast", b, to_i=to)
    out = g.op("Div", a, b)
    if rounding_mode == "floor":
        return g.op("Floor", out)
    if rounding_mode == "trunc":
        return g.op("Mul", g.op("Floor", g.op("Abs", out)), g.op("Sign", out))
    return out


@onnx_symbolic("aten::rsub")
def rsub(g, self, other, alpha=1):
    return sub(g, other, self, alpha)


@onnx_symbolic("aten::ne")
def ne(g, self, other):
    return g.op("Not", g.op("Equal", *_operands(g, self, other)))


@onnx_symbolic("aten::bitwise_and")
def bitwise_and(g, self, other):
    a, b = _operands(g, self, other)
    return g.op("And" if a.dtype == np.bool_ else "BitwiseAnd", a, b)


@onnx_symbolic("aten::bitwise_or")
def bitwise_or(g, self, other):
    a, b = _operands(g, self, other)
    return g.op("Or" if a.dtype == np.bool_ else "BitwiseOr", a, b)


@onnx_symbolic("aten::bitwise_not")
def bitwise_not(g, self):
    return g.op("Not" if self.dtype == np.bool_ else "BitwiseNot", self)


@onnx_symbolic("aten::remainder")
def remainder(g, self, other):
    """Python's modulo (the sign of the divisor): x - floor(x / y) * y."""
    a, b = _operands(g, self, other)
    if a.dtype is not None and np.dtype(a.dtype).kind in "iu":
        return g.op("Mod", a, b, fmod_i=0)
    return g.op("Sub", a, g.op("Mul", g.op("Floor", g.op("Div", a, b)), b))


@onnx_symbolic("aten::gather")
def gather(g, self, dim, index, sparse_grad=False):
    return g.op("GatherElements", self, index, axis_i=dim)


@onnx_symbolic("aten::rsqrt")
def rsqrt(g, self):
    return g.op("Reciprocal", g.op("Sqrt", self))


@onnx_symbolic("aten::silu")
def silu(g, self):
    return g.op("Mul", self, g.op("Sigmoid", self))


@onnx_symbolic("aten::gelu")
def gelu(g, self, approximate="none"):
    if g.opset >= 20:
        return g.op("Gelu", self, approximate_s=approximate)
    dt = self.dtype or np.float32
    if approximate == "tanh":
        inner = g.op("Mul", g.constant(np.asarray(math.sqrt(2 / math.pi), dt)),
                     g.op("Add", self, g.op("Mul", g.constant(np.asarray(0.044715, dt)),
                                             g.op("Pow", self, g.constant(np.asarray(3, dt))))))
        gate = g.op("Add", g.constant(np.asarray(1, dt)), g.op("Tanh", inner))
    else:
        gate = g.op("Add", g.constant(np.asarray(1, dt)),
                    g.op("Erf", g.op("Div", self, g.constant(np.asarray(math.sqrt(2), dt)))))
    return g.op("Mul", g.op("Mul", self, gate), g.constant(np.asarray(0.5, dt)))


@onnx_symbolic("aten::hardtanh")
def hardtanh(g, self, min_val=-1, max_val=1):
    dt = self.dtype or np.float32
    return g.op("Clip", self, g.constant(np.asarray(min_val, dt)),
                g.constant(np.asarray(max_val, dt)))


@onnx_symbolic("aten::clamp")
def clamp(g, self, min=None, max=None):
    dt = self.dtype or np.float32
    lo = min if min is None or hasattr(min, "name") else g.constant(np.asarray(min, dt))
    hi = max if max is None or hasattr(max, "name") else g.constant(np.asarray(max, dt))
    return g.op("Clip", self, lo, hi)


@onnx_symbolic("aten::leaky_relu")
def leaky_relu(g, self, negative_slope=0.01):
    return g.op("LeakyRelu", self, alpha_f=negative_slope)


@onnx_symbolic("aten::elu")
def elu(g, self, alpha=1, scale=1, input_scale=1):
    """ELU, and CELU/SELU through its scales: scale * (x if x > 0 else alpha * (exp(x *
    input_scale) - 1)). ONNX Runtime's Elu is float32 only, so other dtypes and scales are
    written out."""
    if scale == 1 and input_scale == 1 and self.dtype == np.float32:
        return g.op("Elu", self, alpha_f=alpha)
    dt = self.dtype or np.float32

    def c(v):
        return g.constant(np.asarray(v, dt))
    negative = g.op("Mul", c(alpha), g.op("Sub", g.op("Exp", g.op("Mul", self, c(input_scale))),
                                          c(1)))
    out = g.op("Where", g.op("Greater", self, c(0)), self, negative)
    return out if scale == 1 else g.op("Mul", out, c(scale))


@onnx_symbolic("aten::softplus")
def softplus(g, self, beta=1, threshold=20):
    if beta != 1:
        dt = self.dtype or np.float32
        b = g.constant(np.asarray(beta, dt))
        return g.op("Div", g.op("Softplus", g.op("Mul", self, b)), b)
    return g.op("Softplus", self)


@onnx_symbolic("aten::hardsigmoid")
def hardsigmoid(g, self):
    return g.op("HardSigmoid", self, alpha_f=1 / 6)


@onnx_symbolic("aten::log_sigmoid")
def log_sigmoid(g, self):
    return g.op("Log", g.op("Sigmoid", self))


@onnx_symbolic("aten::where")
def where(g, condition, self, other):
    a, b = _operands(g, self, other)
    if condition.dtype != np.bool_:  # a uint8 condition counts as bool, as in PyTorch
        condition = g.op("Cast", condition, to_i=_onnx_dtype(np.bool_))
    return g.op("Where", condition, a, b)


def _all_of_shape(g, self, value):
    return g.op("Expand", g.constant(np.asarray(value)), g.op("Shape", self))


@onnx_symbolic("aten::isnan")
def isnan(g, self):
    if np.dtype(self.dtype).kind != "f":
        return _all_of_shape(g, self, False)
    return g.op("IsNaN", self)


@onnx_symbolic("aten::isinf")
def isinf(g, self):
    if np.dtype(self.dtype).kind != "f":
        return _all_of_shape(g, self, False)
    return g.op("IsInf", _as_float32_for_isinf(g, self))


@onnx_symbolic("aten::isfinite")
def isfinite(g, self):
    if np.dtype(self.dtype).kind != "f":
        return _all_of_shape(g, self, True)
    return g.op("Not", g.op("Or", g.op("IsInf", _as_float32_for_isinf(g, self)),
                            g.op("IsNaN", self)))


@onnx_symbolic("aten::nan_to_num")
def nan_to_num(g, self, nan=None, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and smallest finite values
    unless given); integer tensors are returned as they are."""
    if np.dtype(self.dtype).kind != "f":
        return self
    dt, info = self.dtype, np.finfo(self.dtype)
    wide = _as_float32_for_isinf(g, self)
    for value, test in ((0.0 if nan is None else nan, g.op("IsNaN", self)),
                        (info.max if posinf is None else posinf,
                         g.op("IsInf", wide, detect_negative_i=0)),
                        (info.min if neginf is None else neginf,
                         g.op("IsInf", wide, detect_positive_i=0))):
        self = g.op("Where", test, g.constant(np.asarray(value, dt)), self)
    return self


@onnx_symbolic("aten::nonzero")
def nonzero(g, self):
    """The (count, rank) positions of the nonzero elements (ONNX NonZero gives them
    transposed)."""
    return g.op("Transpose", g.op("NonZero", self), perm_is=[1, 0])


@onnx_symbolic("aten::nonzero.as_tuple")
def nonzero_as_tuple(g, self):
    """torch.where(cond) / nonzero(as_tuple=True): one row of positions per dim."""
    rank = max(_rank(self), 1)
    rows = g.op("NonZero", self)
    if rank == 1:
        return (_squeeze(g, rows, [0]),)
    return tuple(_squeeze(g, r, [0]) for r in g.op("Split", rows, _ints(g, [1] * rank), axis_i=0,
                                                   outputs=rank))


def _as_float32_for_isinf(g, x):
    """ONNX Runtime's IsInf takes float32 and float64 only."""
    if x.dtype in (np.float32, np.float64):
        return x
    return g.op("Cast", x, to_i=_onnx_dtype(np.float32))


@onnx_symbolic("aten::masked_fill")
def masked_fill(g, self, mask, value):
    if hasattr(value, "name"):
        value = g.op("Cast", value, to_i=_onnx_dtype(self.dtype)) if value.dtype != self.dtype \
            else value
    else:
        value = g.constant(np.asarray(value, self.dtype or np.float32))
    return g.op("Where", mask, value, self)


# ---- shapes and views ---------------------------------------------------------------------
@onnx_symbolic("aten::view")
def view(g, self, size):
    size = list(size)
    kept = 0
    if self.shape is not None:
        # a leading size copied from the input is written 0 ("keep this dim"), so the graph
        # still holds when that dim (a batch) is dynamic
        for i, s in enumerate(size):
            if i >= len(self.shape) or s != self.shape[i] or s <= 0:
                break
            size[i] = 0
            kept += 1
        if kept == 1 and len(size) == 2 and len(self.shape) > 2:
            return g.op("Flatten", self, axis_i=1)  # x.view(n, -1), torch.flatten(x, 1)
    return g.op("Reshape", self, _ints(g, size))


for _name in ("_unsafe_view", "reshape", "_reshape_alias"):
    onnx_symbolic(f"aten::{_name}")(lambda g, self, size, *rest: view(g, self, size))


@onnx_symbolic("aten::flatten")
def flatten(g, self, start_dim=0, end_dim=-1):
    rank = _rank(self)
    start, end = _dim(start_dim, rank), _dim(end_dim, rank)
    if end == rank - 1 and rank > 0 and start <= 1:   # ONNX Flatten makes a 2-d result
        out = g.op("Flatten", self, axis_i=start)
        return out if start else _squeeze(g, out, [0])
    return view(g, self, list(self.shape[:start]) + [-1] + list(self.shape[end + 1:]))


@onnx_symbolic("aten::transpose")
def transpose(g, self, dim0, dim1):
    rank = _rank(self)
    perm = list(range(rank))
    a, b = _dim(dim0, rank), _dim(dim1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return self if a == b else g.op("Transpose", self, perm_is=perm + _complex_axis(self))


@onnx_symbolic("aten::permute")
def permute(g, self, dims):
    rank = _rank(self)
    return g.op("Transpose", self, perm_is=[_dim(d, rank) for d in dims] + _complex_axis(self))


def _complex_axis(v):
    """A complex tensor travels in the graph as real numbers with a trailing (real, imag) axis
    (ONNX's DFT form): a permutation keeps that axis last."""
    return [len(v.shape)] if v.dtype is not None and np.dtype(v.dtype).kind == "c" else []


@onnx_symbolic("aten::_fft_r2c")
def _fft_r2c(g, self, dim, normalization, onesided):
    """The DFT of a real tensor along one dim: ONNX DFT on the (..., 1) real form, giving
    (..., 2) real/imaginary pairs; normalization 1 scales by 1/sqrt(n), 2 by 1/n."""
    if len(dim) != 1:
        raise SymbolicValueError("an FFT over more than one dim is not exported (ONNX DFT "
                                 "transforms one axis)")
    rank = _rank(self)
    axis = _dim(dim[0], rank)
    x = _unsqueeze(g, self, [rank])
    if g.opset >= 20:
        out = g.op("DFT", x, None, _ints(g, axis), onesided_i=int(onesided))
    else:
        out = g.op("DFT", x, axis_i=axis, onesided_i=int(onesided))
    n = self.shape[axis]
    if normalization:
        scale = 1 / math.sqrt(n) if normalization == 1 else 1 / n
        out = g.op("Mul", out, g.constant(np.asarray(scale, self.dtype or np.float32)))
    return out


@onnx_symbolic("aten::view_as_real")
def view_as_real(g, self):
    """The (..., 2) real form a complex tensor already has in the graph."""
    return g.op("Identity", self)


@onnx_symbolic("aten::t")
def t(g, self):
    return g.op("Transpose", self, perm_is=[1, 0]) if _rank(self) == 2 else self


@onnx_symbolic("aten::expand")
def expand(g, self, size, implicit=False):
    shape = list(self.shape)
    size = list(size)
    offset = len(size) - len(shape)
    for i, s in enumerate(size):
        if s == -1:
            size[i] = shape[i - offset]
    return g.op("Expand", self, _ints(g, size))


@onnx_symbolic("aten::repeat")
def repeat(g, self, repeats):
    """Tile, after leading unit dims make the input as long as `repeats`."""
    extra = len(repeats) - _rank(self)
    if extra:
        self = _unsqueeze(g, self, list(range(extra)))
    return g.op("Tile", self, _ints(g, list(repeats)))


@onnx_symbolic("aten::unsqueeze")
def unsqueeze(g, self, dim):
    return _unsqueeze(g, self, [_dim(dim, _rank(self) + 1)])


@onnx_symbolic("aten::squeeze")
def squeeze(g, self, dim=None):
    rank = _rank(self)
    dims = range(rank) if dim is None else dim if isinstance(dim, (list, tuple)) else [dim]
    axes = [_dim(d, rank) for d in dims if self.shape[_dim(d, rank)] == 1]
    return _squeeze(g, self, axes) if axes else self


@onnx_symbolic("aten::select")
def select(g, self, dim, index):
    return g.op("Gather", self, g.constant(np.asarray(index, np.int64)), axis_i=dim)


@onnx_symbolic("aten::slice")
def slice_tensor(g, self, dim=0, start=None, end=None, step=1):
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    return g.op("Slice", self, _ints(g, [start]), _ints(g, [end]), _ints(g, [dim]),
                _ints(g, [step]))


@onnx_symbolic("aten::narrow")
def narrow(g, self, dim, start, length):
    return slice_tensor(g, self, dim, start, start + length)


@onnx_symbolic("aten::split")
def split(g, self, split_size, dim=0):
    n = self.shape[dim]
    sizes = [min(split_size, n - s) for s in range(0, n, split_size)] if split_size else [n]
    return list(g.op("Split", self, _ints(g, sizes), axis_i=dim, outputs=len(sizes)))


@onnx_symbolic("aten::split_with_sizes")
def split_with_sizes(g, self, split_sizes, dim=0):
    return list(g.op("Split", self, _ints(g, split_sizes), axis_i=dim,
                     outputs=len(split_sizes)))


@onnx_symbolic("aten::chunk")
def chunk(g, self, chunks, dim=0):
    """Pieces of ceil(n / chunks) along `dim`, the last one shorter; the size is computed from
    the input's shape in the graph, so it follows a dynamic axis (the number of pieces is the
    example's, as in PyTorch's trace)."""
    dim = _dim(dim, _rank(self))
    n = self.shape[dim]
    size = -(-n // chunks)
    count = -(-n // size) if n else 1
    length = g.op("Gather", g.op("Shape", self), _ints(g, [dim]), axis_i=0)
    step = g.op("Div", g.op("Add", length, _ints(g, [chunks - 1])), _ints(g, [chunks]))
    pieces = []
    for k in range(count):
        start = g.op("Mul", step, _ints(g, [k]))
        end = _ints(g, [_INT64_MAX]) if k == count - 1 else g.op("Mul", step, _ints(g, [k + 1]))
        pieces.append(g.op("Slice", self, start, end, _ints(g, [dim])))
    return pieces


@onnx_symbolic("aten::unbind")
def unbind(g, self, dim=0):
    dim = _dim(dim, _rank(self))
    n = self.shape[dim]
    if n == 1:
        return [_squeeze(g, self, [dim])]
    pieces = g.op("Split", self, _ints(g, [1] * n), axis_i=dim, outputs=n)
    return [_squeeze(g, p, [dim]) for p in pieces]


@onnx_symbolic("aten::cat")
def cat(g, tensors, dim=0):
    return g.op("Concat", *tensors, axis_i=dim)


@onnx_symbolic("aten::stack")
def stack(g, tensors, dim=0):
    rank = _rank(tensors[0]) + 1
    return g.op("Concat", *[_unsqueeze(g, x, [_dim(dim, rank)]) for x in tensors],
                axis_i=_dim(dim, rank))


@onnx_symbolic("aten::_to_copy")
def _to_copy(g, self, dtype=None, device=None, memory_format=None, *rest):
    if dtype is None or dtype._np == self.dtype:
        return self
    return g.op("Cast", self, to_i=_onnx_dtype(dtype._np))


@onnx_symbolic("aten::full_like")
def full_like(g, self, fill_value, dtype=None, *rest):
    """A tensor of self's shape filled with `fill_value`: the value expanded to Shape(self), so
    the graph follows a dynamic shape of self (zeros_like / ones_like come here too)."""
    np_dtype = self.dtype if dtype is None else dtype._np
    return g.op("Expand", g.constant(np.asarray(fill_value, np_dtype)), g.op("Shape", self))


@onnx_symbolic("aten::new_full")
def new_full(g, self, size, fill_value, dtype=None, *rest):
    """`self.new_full(size, v)`: the value expanded to `size` (the sizes the trace saw), in
    self's dtype unless one is given; new_zeros / new_ones / new_empty come here too."""
    np_dtype = self.dtype if dtype is None else dtype._np
    return g.op("Expand", g.constant(np.asarray(fill_value, np_dtype)), _ints(g, list(size)))


@onnx_symbolic("aten::new_zeros")
@onnx_symbolic("aten::new_empty")
def new_zeros(g, self, size, dtype=None, *rest):
    return new_full(g, self, size, 0, dtype)


@onnx_symbolic("aten::new_ones")
def new_ones(g, self, size, dtype=None, *rest):
    return new_full(g, self, size, 1, dtype)


@onnx_symbolic("aten::zero_")
def zero_(g, self):
    return full_like(g, self, 0)


@onnx_symbolic("aten::copy_")
def copy_(g, self, src, non_blocking=False):
    """`self.copy_(src)` on a whole tensor: src, cast and broadcast to self's dtype and shape
    (the traced value of self is replaced by it)."""
    out = src
    if src.dtype is not None and self.dtype is not None and src.dtype != self.dtype:
        out = g.op("Cast", out, to_i=_onnx_dtype(self.dtype))
    if src.shape != self.shape:
        out = g.op("Expand", out, _ints(g, list(self.shape)))
    return out


@onnx_symbolic("aten::fill")
def fill(g, self, value):
    """self's shape filled with `value` (a number, or a 0-dim tensor cast to self's dtype)."""
    if hasattr(value, "name"):
        if value.dtype != self.dtype:
            value = g.op("Cast", value, to_i=_onnx_dtype(self.dtype))
        return g.op("Expand", value, g.op("Shape", self))
    return full_like(g, self, value)


@onnx_symbolic("ember::write_into_view")
def write_into_view(g, base, src, positions):
    """The base of a view written in place: src's values scattered into the flattened base at
    the view's positions (recorded by the tracer from the view's strides)."""
    if src.dtype is not None and base.dtype is not None and src.dtype != base.dtype:
        src = g.op("Cast", src, to_i=_onnx_dtype(base.dtype))
    flat = g.op("Reshape", base, _ints(g, [-1]))
    values = g.op("Reshape", src, _ints(g, [-1]))
    out = g.op("ScatterElements", flat, _ints(g, positions.reshape(-1)), values, axis_i=0)
    return g.op("Reshape", out, _ints(g, list(base.shape)))


@onnx_symbolic("aten::embedding")
def embedding(g, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return g.op("Gather", weight, indices, axis_i=0)


def _embedding_bag(g, weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    """The rows gathered, weighted and masked, then ScatterND-reduced into their bags: sum,
    mean (divided by the bags' sizes) or max (empty bags 0). Each row's bag is known at export
    time for constant offsets (a 2-D input's rows); for offsets computed from the inputs it is
    counted in the graph (the offsets at or below the row's position, minus one). Only the
    first output, the bags, is exported."""
    if indices.shape is None or offsets.shape is None:
        raise SymbolicValueError("embedding_bag is exported for inputs of known shape only")
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    dt = weight.dtype or np.float32
    if include_last_offset:  # the last offset ends the last bag: later indices are in none
        end = g.op("Slice", offsets, _ints(g, [-1]), _ints(g, [_INT64_MAX]), _ints(g, [0]))
        indices = g.op("Slice", indices, _ints(g, [0]), end, _ints(g, [0]))
        if per_sample_weights is not None:
            per_sample_weights = g.op("Slice", per_sample_weights, _ints(g, [0]), end,
                                      _ints(g, [0]))
        if end.const is not None:
            indices.shape = (int(end.const[0]),)
    if offsets.const is not None and indices.shape is not None:
        starts = offsets.const.astype(np.int64)[:bags]
        counts = np.diff(np.r_[starts, indices.shape[0]])
        bag_of = g.constant(np.repeat(np.arange(starts.size), counts)[:, None])
        if mode == 2 and g.opset < 18:
            return _embedding_bag_max_by_bag(g, weight, indices, per_sample_weights, starts,
                                             counts), None, None, None
    else:
        starts = g.op("Slice", offsets, _ints(g, [0]), _ints(g, [bags]), _ints(g, [0]))
        length = _squeeze(g, g.op("Shape", indices), [0])
        positions = _unsqueeze(g, g.op("Range", _ints(g, 0), length, _ints(g, 1)), [1])
        started = g.op("Cast", g.op("LessOrEqual", _unsqueeze(g, starts, [0]), positions),
                       to_i=_onnx_dtype(np.int64))
        started.shape = (None, bags)
        bag_of = g.op("Sub", _reduce(g, "ReduceSum", started, [1], True), _ints(g, [1]))
    rows = g.op("Gather", weight, indices, axis_i=0)
    if per_sample_weights is not None:
        rows = g.op("Mul", rows, _unsqueeze(g, per_sample_weights, [-1]))
    ones = g.op("Expand", g.constant(np.ones((), dt)), g.op("Shape", indices))
    if padding_idx >= 0:
        kept = g.op("Not", g.op("Equal", indices,
                                g.constant(np.asarray(padding_idx, indices.dtype or np.int64))))
        rows = g.op("Where", _unsqueeze(g, kept, [-1]), rows, g.constant(np.zeros((), dt)))
        ones = g.op("Cast", kept, to_i=_onnx_dtype(dt))
    sizes = g.op("ScatterND", g.constant(np.zeros(bags, dt)), bag_of, ones, reduction_s="add")
    if mode == 2:
        if g.opset < 18:
            raise SymbolicValueError("embedding_bag in mode='max' is exported from opset 18 on "
                                     "(ScatterND's max reduction)")
        lowest = np.full((bags, weight.shape[1]), np.finfo(dt).min, dt)
        out = g.op("ScatterND", g.constant(lowest), bag_of, rows, reduction_s="max")
        empty = _unsqueeze(g, g.op("Equal", sizes, g.constant(np.zeros((), dt))), [-1])
        return g.op("Where", empty, g.constant(np.zeros((), dt)), out), None, None, None
    out = g.op("ScatterND", g.constant(np.zeros((bags, weight.shape[1]), dt)), bag_of,
               rows, reduction_s="add")
    if mode == 1:
        sizes = g.op("Max", sizes, g.constant(np.ones((), dt)))
        out = g.op("Div", out, _unsqueeze(g, sizes, [-1]))
    return out, None, None, None


def _embedding_bag_max_by_bag(g, weight, indices, per_sample_weights, starts, counts):
    """mode='max' before opset 18 (no ScatterND max): one ReduceMax per bag of known extent
    (an empty bag is zeros)."""
    rows = g.op("Gather", weight, indices, axis_i=0)
    if per_sample_weights is not None:
        rows = g.op("Mul", rows, _unsqueeze(g, per_sample_weights, [-1]))
    dt = weight.dtype or np.float32
    out = []
    for start, count in zip(starts, counts):
        if count == 0:
            out.append(g.constant(np.zeros((1, weight.shape[1]), dt)))
            continue
        bag = g.op("Slice", rows, _ints(g, [start]), _ints(g, [start + count]), _ints(g, [0]))
        bag.shape = (int(count), weight.shape[1])
        out.append(_reduce(g, "ReduceMax", bag, [0], True))
    return out[0] if len(out) == 1 else g.op("Concat", *out, axis_i=0)


onnx_symbolic("aten::_embedding_bag")(_embedding_bag)
onnx_symbolic("aten::_embedding_bag_forward_only")(_embedding_bag)


@onnx_symbolic("aten::index_select")
def index_select(g, self, dim, index):
    if index.shape == ():  # a 0-dim index keeps the dim (length 1), as in PyTorch
        index = _unsqueeze(g, index, [0])
    return g.op("Gather", self, index, axis_i=dim)


def _index_scatter(g, self, dim, index, source):
    """self with source's slices written at `index` along `dim` (ScatterElements with the
    index broadcast over source's other dims)."""
    rank = _rank(self)
    dim = _dim(dim, rank) if rank else 0
    if index.shape == ():
        index = _unsqueeze(g, index, [0])
    shape = [1] * rank
    shape[dim] = -1
    positions = g.op("Expand", g.op("Reshape", index, _ints(g, shape)), g.op("Shape", source))
    return g.op("ScatterElements", self, positions, source, axis_i=dim)


@onnx_symbolic("aten::index_copy")
def index_copy(g, self, dim, index, source):
    return _index_scatter(g, self, dim, index, source)


@onnx_symbolic("aten::index_fill")
def index_fill(g, self, dim, index, value):
    """index_fill: `value` (a number or 0-dim tensor) over the slices at `index`."""
    rank = _rank(self)
    dim = _dim(dim, rank) if rank else 0
    shape = list(self.shape)
    if rank:
        shape[dim] = 1 if index.shape == () else index.shape[0]
    if hasattr(value, "name"):
        if value.dtype != self.dtype:
            value = g.op("Cast", value, to_i=_onnx_dtype(self.dtype))
    else:
        value = g.constant(np.asarray(value, self.dtype))
    return _index_scatter(g, self, dim, index, g.op("Expand", value, _ints(g, shape)))


@onnx_symbolic("aten::index_add")
def index_add(g, self, dim, index, source, alpha=1):
    """self.index_add(0, index, source): ScatterND adding each source row at its index (an
    EmbeddingBag's sum over its bags)."""
    if dim != 0 or alpha != 1:
        raise SymbolicValueError("index_add is exported along dim 0 with alpha=1 only")
    return g.op("ScatterND", self, _unsqueeze(g, index, [-1]), source, reduction_s="add")


@onnx_symbolic("aten::constant_pad_nd")
def constant_pad_nd(g, self, pad, value=0):
    return g.op("Pad", self, _ints(g, _onnx_pads(pad, _rank(self))),
                g.constant(np.asarray(value, self.dtype or np.float32)), mode_s="constant")


def _reflection_pad(g, self, padding):
    return g.op("Pad", self, _ints(g, _onnx_pads(padding, _rank(self))), mode_s="reflect")


for _n in (1, 2, 3):
    onnx_symbolic(f"aten::reflection_pad{_n}d")(_reflection_pad)


def _onnx_pads(pad, rank):
    """PyTorch's (last-dim begin, end, next-to-last begin, end, ...) as ONNX's (all begins, all
    ends) over every dim."""
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return begins + ends


def _onnx_dtype(np_dtype):
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype))


# ---- reductions and softmax -----------------------------------------------------------------
def _axes(self, dim):
    rank = _rank(self)
    if dim is None:
        return list(range(rank))
    return [_dim(d, rank) for d in (dim if isinstance(dim, (list, tuple)) else [dim])]


def _accumulate_as(g, self, dtype):
    """The input of a sum or product in the dtype the result has: `dtype` when given, int64
    for bool and integer inputs (as PyTorch accumulates them), else the input's own."""
    if dtype is not None:
        target = dtype._np
    elif self.dtype is not None and np.dtype(self.dtype).kind in "biu":
        target = np.int64
    else:
        return self
    if target == self.dtype:
        return self
    out = g.op("Cast", self, to_i=_onnx_dtype(target))
    out.shape, out.dtype = self.shape, target
    return out


@onnx_symbolic("aten::mean")
def mean(g, self, dim=None, keepdim=False, dtype=None):
    axes = _axes(self, dim)
    return _reduce(g, "ReduceMean", _accumulate_as(g, self, dtype), axes, keepdim)


@onnx_symbolic("aten::sum")
def sum_dim(g, self, dim=None, keepdim=False, dtype=None):
    axes = _axes(self, dim)
    return _reduce(g, "ReduceSum", _accumulate_as(g, self, dtype), axes, keepdim)


@onnx_symbolic("aten::prod")
def prod(g, self, dim=None, keepdim=False, dtype=None):
    axes = _axes(self, dim)
    return _reduce(g, "ReduceProd", _accumulate_as(g, self, dtype), axes, keepdim)


@onnx_symbolic("aten::amin")
def amin(g, self, dim=(), keepdim=False):
    return _reduce(g, "ReduceMin", self, _axes(self, dim or None), keepdim)


@onnx_symbolic("aten::linalg_vector_norm")
def linalg_vector_norm(g, self, ord=2, dim=None, keepdim=False, dtype=None):
    x = _accumulate_as(g, self, dtype)
    axes = _axes(self, dim)
    if ord == 1:
        return _reduce(g, "ReduceL1", x, axes, keepdim)
    if ord == 2:
        return _reduce(g, "ReduceL2", x, axes, keepdim)
    if ord in (math.inf, -math.inf):
        return _reduce(g, "ReduceMax" if ord > 0 else "ReduceMin", g.op("Abs", x), axes,
                       keepdim)
    dt = x.dtype or np.float32
    if ord == 0:
        nonzero = g.op("Cast", g.op("Not", g.op("Equal", x, g.constant(np.asarray(0, dt)))),
                       to_i=_onnx_dtype(dt))
        return _reduce(g, "ReduceSum", nonzero, axes, keepdim)
    powered = g.op("Pow", g.op("Abs", x), g.constant(np.asarray(ord, dt)))
    return g.op("Pow", _reduce(g, "ReduceSum", powered, axes, keepdim),
                g.constant(np.asarray(1 / ord, dt)))


@onnx_symbolic("aten::amax")
def amax(g, self, dim=(), keepdim=False):
    return _reduce(g, "ReduceMax", self, _axes(self, dim or None), keepdim)


@onnx_symbolic("aten::logsumexp")
def logsumexp(g, self, dim, keepdim=False):
    return _reduce(g, "ReduceLogSumExp", self, _axes(self, dim), keepdim)


def _min_max(reduce_op, arg_op, binary_op):
    """max / min: over everything (one argument), elementwise (a second tensor), or along
    `dim` with the indices (values, indices)."""
    def symbolic(g, self, dim=None, keepdim=False):
        if dim is None:
            return _reduce(g, reduce_op, self, [], False)
        if hasattr(dim, "name"):
            return g.op(binary_op, *_operands(g, self, dim))
        dim = _dim(dim, _rank(self))
        values = _reduce(g, reduce_op, self, [dim], keepdim)
        return values, g.op(arg_op, self, axis_i=dim, keepdims_i=int(keepdim))
    return symbolic


max_dim = onnx_symbolic("aten::max")(_min_max("ReduceMax", "ArgMax", "Max"))
onnx_symbolic("aten::min")(_min_max("ReduceMin", "ArgMin", "Min"))


def _bool_reduce(op_type):
    """all / any: ONNX reduces no bools, so through int32 (min for all, max for any)."""
    def symbolic(g, self, dim=None, keepdim=False):
        as_int = g.op("Cast", self, to_i=_onnx_dtype(np.int32))
        as_int.shape = self.shape
        out = _reduce(g, op_type, as_int, _axes(self, dim), keepdim)
        return g.op("Cast", out, to_i=_onnx_dtype(np.bool_))
    return symbolic


onnx_symbolic("aten::all")(_bool_reduce("ReduceMin"))
onnx_symbolic("aten::any")(_bool_reduce("ReduceMax"))


@onnx_symbolic("aten::argmax")
def argmax(g, self, dim=None, keepdim=False):
    if dim is None:
        flat = g.op("Reshape", self, _ints(g, [-1]))
        return g.op("ArgMax", flat, axis_i=0, keepdims_i=0)
    return g.op("ArgMax", self, axis_i=dim, keepdims_i=int(keepdim))


@onnx_symbolic("aten::_softmax")
def _softmax(g, self, dim, half_to_float=False):
    return g.op("Softmax", self, axis_i=dim)


@onnx_symbolic("aten::_log_softmax")
def _log_softmax(g, self, dim, half_to_float=False):
    return g.op("LogSoftmax", self, axis_i=dim)


# ---- linear algebra -------------------------------------------------------------------------
@onnx_symbolic("aten::linear")
def linear(g, input, weight, bias=None):
    if _rank(input) == 2:
        return g.op("Gemm", input, weight, bias, transB_i=1)
    out = g.op("MatMul", input, g.op("Transpose", weight, perm_is=[1, 0]))
    return out if bias is None else g.op("Add", out, bias)


for _name in ("matmul", "mm", "bmm", "mv", "dot"):
    onnx_symbolic(f"aten::{_name}")(lambda g, self, other: g.op("MatMul", self, other))


@onnx_symbolic("aten::addmm")
def addmm(g, self, mat1, mat2, beta=1, alpha=1):
    return g.op("Gemm", mat1, mat2, self, alpha_f=float(alpha), beta_f=float(beta))


@onnx_symbolic("aten::baddbmm")
def baddbmm(g, self, batch1, batch2, beta=1, alpha=1):
    prod = g.op("MatMul", batch1, batch2)
    if alpha != 1:
        prod = g.op("Mul", *_operands(g, prod, alpha))
    if beta == 0:
        return prod
    return g.op("Add", prod, self if beta == 1 else g.op("Mul", *_operands(g, self, beta)))


# ---- convolution, pooling, normalization ----------------------------------------------------
@onnx_symbolic("aten::convolution")
def convolution(g, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    kernel = list(weight.shape[2:])
    attrs = dict(kernel_shape_is=kernel, strides_is=list(stride), pads_is=list(padding) * 2,
                 dilations_is=list(dilation), group_i=groups)
    if transposed:
        if any(output_padding):
            attrs["output_padding_is"] = list(output_padding)
        return g.op("ConvTranspose", input, weight, bias, **attrs)
    return g.op("Conv", input, weight, bias, **attrs)


def _per_dim(value, n):
    """A pooling argument given once or per spatial dim, as a list of n."""
    value = list(value) if isinstance(value, (list, tuple)) else [value]
    return value * n if len(value) == 1 else value


def _max_pool(g, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    n = _rank(self) - 2
    kernel = _per_dim(kernel_size, n)
    out = g.op("MaxPool", self, kernel_shape_is=kernel,
               strides_is=_per_dim(stride, n) if stride else kernel,
               pads_is=_per_dim(padding, n) * 2, dilations_is=_per_dim(dilation, n),
               ceil_mode_i=int(ceil_mode))
    return out, None


for _n in (2, 3):
    onnx_symbolic(f"aten::max_pool{_n}d_with_indices")(_max_pool)


def _avg_pool(g, self, kernel_size, stride=(), padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise SymbolicValueError("avg_pool with divisor_override has no ONNX AveragePool form")
    n = _rank(self) - 2
    kernel = _per_dim(kernel_size, n)
    return g.op("AveragePool", self, kernel_shape_is=kernel,
                strides_is=_per_dim(stride, n) if stride else kernel,
                pads_is=_per_dim(padding, n) * 2, ceil_mode_i=int(ceil_mode),
                count_include_pad_i=int(count_include_pad))


for _n in (2, 3):
    onnx_symbolic(f"aten::avg_pool{_n}d")(_avg_pool)


def _adaptive_max_pool(g, self, output_size):
    if any(s != 1 for s in output_size):
        raise SymbolicValueError("adaptive_max_pool to an output size other than 1 is not "
                                 "exported (ONNX has only GlobalMaxPool)")
    return g.op("GlobalMaxPool", self), None


for _n in (2, 3):
    onnx_symbolic(f"aten::adaptive_max_pool{_n}d")(_adaptive_max_pool)


def _adaptive_avg_pool(g, self, output_size):
    """GlobalAveragePool for a 1 x 1 output, an AveragePool where the windows tile the input,
    else (windows of different sizes) one MatMul per spatial dim with the (in, out) matrix
    whose column i averages window i, as ember's kernel computes it."""
    if all(s == 1 for s in output_size):
        return g.op("GlobalAveragePool", self)
    rank, nd = _rank(self), len(output_size)
    spatial = self.shape[-nd:]
    if rank != nd + 2 or not all(isinstance(n, int) for n in spatial):
        raise SymbolicValueError(f"adaptive_avg_pool is exported for batched inputs of known "
                                 f"spatial size, not {self.shape}")
    if all(o and n % o == 0 for n, o in zip(spatial, output_size)):
        kernel = [n // o for n, o in zip(spatial, output_size)]
        return g.op("AveragePool", self, kernel_shape_is=kernel, strides_is=kernel)
    from .._aten.pooling import _adaptive_avg_matrix
    dtype = np.float32 if self.dtype is None else self.dtype
    x = self
    for axis, (n, o) in enumerate(zip(spatial, output_size), rank - nd):
        if n == o:
            continue
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        x = g.op("Transpose", x, perm_is=perm)
        x = g.op("MatMul", x, g.constant(_adaptive_avg_matrix(n, o, dtype).T.copy()))
        x = g.op("Transpose", x, perm_is=perm)
    return x


for _n in (2, 3):
    onnx_symbolic(f"aten::_adaptive_avg_pool{_n}d")(_adaptive_avg_pool)


@onnx_symbolic("aten::pixel_shuffle")
def pixel_shuffle(g, self, upscale_factor):
    if _rank(self) != 4:
        raise SymbolicValueError("pixel_shuffle is exported for 4-d inputs only (DepthToSpace)")
    return g.op("DepthToSpace", self, blocksize_i=upscale_factor, mode_s="CRD")


@onnx_symbolic("aten::pixel_unshuffle")
def pixel_unshuffle(g, self, downscale_factor):
    """SpaceToDepth orders the new channels (r, r, C) where PyTorch orders them (C, r, r): a
    reshape, transpose and reshape instead."""
    if _rank(self) != 4 or not all(isinstance(n, int) for n in self.shape[1:]):
        raise SymbolicValueError("pixel_unshuffle is exported for 4-d inputs with known "
                                 "channels, height and width only")
    _, c, h, w = self.shape
    r = downscale_factor
    x = g.op("Reshape", self, _ints(g, [-1, c, h // r, r, w // r, r]))
    x = g.op("Transpose", x, perm_is=[0, 1, 3, 5, 2, 4])
    return g.op("Reshape", x, _ints(g, [-1, c * r * r, h // r, w // r]))


@onnx_symbolic("aten::native_batch_norm")
def native_batch_norm(g, input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    if training or running_mean is None:
        # batch statistics: instance norm, or batch norm without running stats
        rank = _rank(input)
        y = _normalize(g, input, [0] + list(range(2, rank)), eps)
        return _affine(g, y, weight, bias, rank), None, None
    channels = input.shape[1]
    dt = input.dtype or np.float32
    weight = weight if weight is not None else g.constant(np.ones(channels, dt))
    bias = bias if bias is not None else g.constant(np.zeros(channels, dt))
    out = g.op("BatchNormalization", input, weight, bias, running_mean, running_var,
               epsilon_f=eps)
    return out, None, None


@onnx_symbolic("aten::_native_batch_norm_legit_no_training")
def _batch_norm_no_training(g, input, weight, bias, running_mean, running_var, momentum, eps):
    return native_batch_norm(g, input, weight, bias, running_mean, running_var, False, momentum,
                             eps)


@onnx_symbolic("aten::native_layer_norm")
def native_layer_norm(g, input, normalized_shape, weight, bias, eps):
    dt = input.dtype or np.float32
    n = len(normalized_shape)
    weight = weight if weight is not None else g.constant(np.ones(normalized_shape, dt))
    out = g.op("LayerNormalization", input, weight, bias, axis_i=-n, epsilon_f=eps)
    return out, None, None


@onnx_symbolic("aten::native_dropout")
def native_dropout(g, input, p, train):
    if train:
        raise SymbolicValueError("dropout in training mode is not exported; export with "
                                 "training=TrainingMode.EVAL")
    return input, None


@onnx_symbolic("aten::multinomial")
def multinomial(g, self, num_samples, replacement=False, generator=None):
    """ONNX Multinomial (drawn in the graph, with replacement) on the log of the weights."""
    if not replacement and num_samples > 1:
        raise SymbolicValueError("multinomial without replacement of more than one sample is "
                                 "not exported (ONNX Multinomial draws with replacement)")
    batched = _rank(self) == 2
    x = g.op("Log", self if batched else _unsqueeze(g, self, [0]))
    out = g.op("Multinomial", x, sample_size_i=num_samples, dtype_i=_onnx_dtype(np.int64))
    return out if batched else _squeeze(g, out, [0])


# ---- recurrent layers -----------------------------------------------------------------------
# ONNX's gate orders: LSTM (i, o, f, c), GRU (z, r, h); PyTorch's: LSTM (i, f, g, o), GRU (r, z, n)
_GATE_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}


def _gates(g, w, mode, hidden):
    pieces = [g.op("Slice", w, _ints(g, [k * hidden]), _ints(g, [(k + 1) * hidden]), _ints(g, [0]))
              for k in _GATE_ORDER[mode]]
    return pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis_i=0)


@onnx_symbolic("aten::_rnn_layer")
def _rnn_layer(g, input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, mode,
               batch_sizes, reverse):
    """One layer and direction of nn.RNN/LSTM/GRU as ONNX's RNN/LSTM/GRU node over the whole
    sequence; its (T, 1, B, H) output and (1, B, H) states lose their direction dim."""
    if weight_hr is not None:
        raise SymbolicValueError("LSTM with proj_size > 0 has no ONNX LSTM form")
    # a cell (LSTMCell, GRUCell, RNNCell) is one step of packed data: (B, *) with one batch size
    one_step = _rank(input) == 2 and len(batch_sizes) == 1
    if one_step:
        input = _unsqueeze(g, input, [0])
    elif _rank(input) != 3:
        raise SymbolicValueError("an RNN over a PackedSequence is not exported; pass the padded "
                                 "(T, B, *) batch")
    out_axes = [0, 1] if one_step else [1]
    hidden = weight_hh.shape[1]
    W = _unsqueeze(g, _gates(g, weight_ih, mode, hidden), [0])
    R = _unsqueeze(g, _gates(g, weight_hh, mode, hidden), [0])
    B = None
    if bias_ih is not None:
        B = _unsqueeze(g, g.op("Concat", _gates(g, bias_ih, mode, hidden),
                               _gates(g, bias_hh, mode, hidden), axis_i=0), [0])
    attrs = dict(hidden_size_i=hidden, direction_s="reverse" if reverse else "forward")
    h0 = None if _is_zero(hx) else _unsqueeze(g, hx, [0])
    if mode == "LSTM":
        c0 = None if _is_zero(cx) else _unsqueeze(g, cx, [0])
        if h0 is None and c0 is not None:
            h0 = _unsqueeze(g, hx, [0])
        y, yh, yc = g.op("LSTM", input, W, R, B, None, h0, c0, outputs=3, **attrs)
        return _squeeze(g, y, out_axes), _squeeze(g, yh, [0]), _squeeze(g, yc, [0]), None
    if mode == "GRU":
        y, yh = g.op("GRU", input, W, R, B, None, h0, linear_before_reset_i=1, outputs=2,
                     **attrs)
    else:
        y, yh = g.op("RNN", input, W, R, B, None, h0, outputs=2,
                     activations_ss=["Tanh" if mode == "RNN_TANH" else "Relu"], **attrs)
    return _squeeze(g, y, out_axes), _squeeze(g, yh, [0]), None, None


def _is_zero(v):
    return v is not None and v.const is not None and not v.is_param and not np.any(v.const)


# ---- more elementwise, normalization and indexing ---------------------------------------------
@onnx_symbolic("aten::mish")
def mish(g, self):
    return g.op("Mul", self, g.op("Tanh", g.op("Softplus", self)))


@onnx_symbolic("aten::_prelu_kernel")
def _prelu_kernel(g, self, weight):
    rank = _rank(self)
    if rank > 2 and weight.shape and weight.shape[0] > 1:
        weight = _unsqueeze(g, weight, list(range(1, rank - 1)))  # (C,) -> (C, 1, ..., 1)
    return g.op("PRelu", self, weight)


@onnx_symbolic("aten::cumsum")
def cumsum(g, self, dim, dtype=None):
    if dtype is not None and dtype._np != self.dtype:
        self = g.op("Cast", self, to_i=_onnx_dtype(dtype._np))
    return g.op("CumSum", self, g.constant(np.asarray(dim, np.int64)))


@onnx_symbolic("aten::einsum")
def einsum(g, equation, tensors, path=None):
    return g.op("Einsum", *tensors, equation_s=equation.replace(" ", ""))


@onnx_symbolic("aten::topk")
def topk(g, self, k, dim=-1, largest=True, sorted=True):
    return g.op("TopK", self, _ints(g, [k]), axis_i=dim, largest_i=int(largest),
                sorted_i=int(sorted), outputs=2)


@onnx_symbolic("aten::index")
def index(g, self, indices):
    used = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(used) != 1:
        raise SymbolicValueError("advanced indexing with more than one index tensor is not "
                                 "exported; index one dim at a time")
    dim, idx = used[0]
    if idx.dtype in (np.bool_, np.uint8):
        return _index_by_mask(g, self, dim, idx)
    return g.op("Gather", self, idx, axis_i=dim)


def _index_by_mask(g, self, dim, mask):
    """x[mask] (a uint8 mask counts as a bool one, as in PyTorch): the mask's true positions
    (NonZero, one row per mask dim) select along the dims the mask covers -- Gather for a 1-D
    mask, GatherND over the leading dims for a wider one."""
    if mask.dtype == np.uint8:
        mask = g.op("Cast", mask, to_i=_onnx_dtype(np.bool_))
    positions = g.op("NonZero", mask)
    if _rank(mask) == 1:
        return g.op("Gather", self, _squeeze(g, positions, [0]), axis_i=dim)
    if dim != 0:
        raise SymbolicValueError("indexing by a multi-dimensional mask after other indices is "
                                 "not exported; mask the leading dims")
    return g.op("GatherND", self, g.op("Transpose", positions, perm_is=[1, 0]))


def _var(g, self, dim, correction, keepdim):
    axes = _axes(self, dim)
    mean = _reduce(g, "ReduceMean", self, axes, True)
    d = g.op("Sub", self, mean)
    var = _reduce(g, "ReduceMean", g.op("Mul", d, d), axes, keepdim)
    n = int(np.prod([self.shape[a] for a in axes]))
    correction = 1 if correction is None else correction
    if correction:
        factor = np.asarray(n / (n - correction), self.dtype or np.float32)
        var = g.op("Mul", var, g.constant(factor))
    return var


@onnx_symbolic("aten::var")
def var(g, self, dim=None, correction=None, keepdim=False):
    return _var(g, self, dim, correction, keepdim)


@onnx_symbolic("aten::std")
def std(g, self, dim=None, correction=None, keepdim=False):
    return g.op("Sqrt", _var(g, self, dim, correction, keepdim))


@onnx_symbolic("aten::var_mean")
def var_mean(g, self, dim=None, correction=None, keepdim=False):
    return (_var(g, self, dim, correction, keepdim),
            _reduce(g, "ReduceMean", self, _axes(self, dim), keepdim))


@onnx_symbolic("aten::std_mean")
def std_mean(g, self, dim=None, correction=None, keepdim=False):
    return (g.op("Sqrt", _var(g, self, dim, correction, keepdim)),
            _reduce(g, "ReduceMean", self, _axes(self, dim), keepdim))


def _normalize(g, x, axes, eps):
    """(x - mean) / sqrt(var + eps) over `axes` (biased variance), as instance, group and
    batch-statistics batch norm compute it."""
    mean = _reduce(g, "ReduceMean", x, axes, True)
    d = g.op("Sub", x, mean)
    var = _reduce(g, "ReduceMean", g.op("Mul", d, d), axes, True)
    eps = g.constant(np.asarray(eps, x.dtype or np.float32))
    return g.op("Div", d, g.op("Sqrt", g.op("Add", var, eps)))


def _affine(g, y, weight, bias, rank):
    """y * weight + bias with (C,) parameters broadcast over dim 1 of a rank-`rank` tensor."""
    axes = list(range(1, rank - 1))
    if weight is not None:
        y = g.op("Mul", y, _unsqueeze(g, weight, axes) if axes else weight)
    if bias is not None:
        y = g.op("Add", y, _unsqueeze(g, bias, axes) if axes else bias)
    return y


@onnx_symbolic("aten::native_group_norm")
def native_group_norm(g, input, weight, bias, N, C, HxW, group, eps):
    grouped = g.op("Reshape", input, _ints(g, [0, group, -1]))
    grouped.dtype = input.dtype
    y = g.op("Reshape", _normalize(g, grouped, [2], eps), g.op("Shape", input))
    return _affine(g, y, weight, bias, _rank(input)), None, None


# ---- losses (their inference forms) ---------------------------------------------------------
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduce_loss(g, loss, reduction):
    if reduction == 1:
        return g.op("ReduceMean", loss, keepdims_i=0)
    if reduction == 2:
        return g.op("ReduceSum", loss, keepdims_i=0)
    return loss


@onnx_symbolic("aten::mse_loss")
def mse_loss(g, self, target, reduction=1):
    d = g.op("Sub", self, target)
    return _reduce_loss(g, g.op("Mul", d, d), reduction)


def _piecewise_loss(g, self, target, reduction, width, inner, outer):
    """A loss of d = |self - target|: inner * d^2 where d < width, else outer * (d - width/2)
    (smooth L1: inner 1/(2 beta), outer 1; Huber: inner 1/2, outer delta); d alone when
    width is 0."""
    d = g.op("Abs", g.op("Sub", self, target))
    if width == 0:
        return _reduce_loss(g, d, reduction)

    def c(v):
        return g.constant(np.asarray(v, self.dtype or np.float32))
    near = g.op("Mul", g.op("Mul", d, d), c(inner))
    far = g.op("Mul", g.op("Sub", d, c(width / 2)), c(outer))
    return _reduce_loss(g, g.op("Where", g.op("Less", d, c(width)), near, far), reduction)


@onnx_symbolic("aten::smooth_l1_loss")
def smooth_l1_loss(g, self, target, reduction=1, beta=1.0):
    return _piecewise_loss(g, self, target, reduction, beta, 0.5 / beta if beta else 0, 1.0)


@onnx_symbolic("aten::huber_loss")
def huber_loss(g, self, target, reduction=1, delta=1.0):
    return _piecewise_loss(g, self, target, reduction, delta, 0.5, delta)


@onnx_symbolic("aten::soft_margin_loss")
def soft_margin_loss(g, self, target, reduction=1):
    """log(1 + exp(-target * self)), as Softplus."""
    return _reduce_loss(g, g.op("Softplus", g.op("Neg", g.op("Mul", target, self))), reduction)


@onnx_symbolic("aten::nll_loss")
def nll_loss(g, self, target, weight=None, reduction=1, ignore_index=-100):
    return g.op("NegativeLogLikelihoodLoss", self, target, weight,
                reduction_s=_REDUCTIONS[reduction], ignore_index_i=ignore_index)


@onnx_symbolic("aten::_softmax_cross_entropy")
def _softmax_cross_entropy(g, self, target, weight, reduction, ignore_index,
                           label_smoothing=0.0):
    if label_smoothing > 0:  # as PyTorch's exporter
        raise SymbolicValueError("Unsupported: ONNX does not support label_smoothing")
    if target.dtype is not None and np.dtype(target.dtype).kind == "f":
        raise SymbolicValueError("cross_entropy with class-probability targets is not exported "
                                 "(ONNX's SoftmaxCrossEntropyLoss takes class indices)")
    loss, _ = g.op("SoftmaxCrossEntropyLoss", self, target, weight, outputs=2,
                   reduction_s=_REDUCTIONS[reduction], ignore_index_i=ignore_index)
    return loss, None


def _log_sigmoid(g, x):
    return g.op("Neg", g.op("Softplus", g.op("Neg", x)))


@onnx_symbolic("aten::binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(g, self, target, weight=None, pos_weight=None,
                                     reduction=1):
    positive = g.op("Mul", target, _log_sigmoid(g, self))
    if pos_weight is not None:
        positive = g.op("Mul", positive, pos_weight)
    one = g.constant(np.asarray(1, self.dtype))
    negative = g.op("Mul", g.op("Sub", one, target), _log_sigmoid(g, g.op("Neg", self)))
    loss = g.op("Neg", g.op("Add", positive, negative))
    if weight is not None:
        loss = g.op("Mul", loss, weight)
    return _reduce_loss(g, loss, reduction)


@onnx_symbolic("aten::binary_cross_entropy")
def binary_cross_entropy(g, self, target, weight=None, reduction=1):
    one = g.constant(np.asarray(1, self.dtype))
    floor = g.constant(np.asarray(-100, self.dtype))  # PyTorch clamps each log at -100
    log_p = g.op("Max", g.op("Log", self), floor)
    log_q = g.op("Max", g.op("Log", g.op("Sub", one, self)), floor)
    loss = g.op("Neg", g.op("Add", g.op("Mul", target, log_p),
                            g.op("Mul", g.op("Sub", one, target), log_q)))
    if weight is not None:
        loss = g.op("Mul", loss, weight)
    return _reduce_loss(g, loss, reduction)


# ---- vision ops ONNX has ----------------------------------------------------------------------
@onnx_symbolic("vision::roi_align")
def roi_align(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
              aligned):
    """torchvision's (K, 5) boxes (batch index, x1, y1, x2, y2) as RoiAlign's boxes and
    batch indices; aligned=True is the half-pixel coordinate mode."""
    batch = g.op("Cast", _squeeze(g, slice_tensor(g, rois, 1, 0, 1), [1]), to_i=_onnx_dtype(np.int64))
    boxes = slice_tensor(g, rois, 1, 1, 5)
    return g.op("RoiAlign", input, boxes, batch, mode_s="avg", output_height_i=pooled_height,
                output_width_i=pooled_width, sampling_ratio_i=max(sampling_ratio, 0),
                spatial_scale_f=spatial_scale,
                coordinate_transformation_mode_s="half_pixel" if aligned else
                "output_half_pixel")


@onnx_symbolic("vision::deform_conv2d", opset=19)
def deform_conv2d(g, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                  dilation_h, dilation_w, groups, offset_groups, use_mask):
    """torchvision's deformable convolution as ONNX's DeformConv (opset 19)."""
    return g.op("DeformConv", input, weight, offset, bias, mask if use_mask else None,
                kernel_shape_is=list(weight.shape[2:]), strides_is=[stride_h, stride_w],
                pads_is=[pad_h, pad_w, pad_h, pad_w], dilations_is=[dilation_h, dilation_w],
                group_i=groups, offset_group_i=offset_groups)


# ---- more elementwise and shape ops ---------------------------------------------------------
@onnx_symbolic("aten::round")
def round_(g, self, decimals=0):
    """Round half to even (ONNX's and PyTorch's rule); `decimals` scales by 10**decimals around
    it; integer tensors are already round."""
    if np.dtype(self.dtype).kind != "f":
        return self
    if not decimals:
        return g.op("Round", self)
    scale = g.constant(np.asarray(10.0 ** decimals, self.dtype))
    return g.op("Div", g.op("Round", g.op("Mul", self, scale)), scale)


def _log_base(base):
    def symbolic(g, self):
        return g.op("Div", g.op("Log", self), g.constant(np.asarray(math.log(base),
                                                                    self.dtype or np.float32)))
    return symbolic


onnx_symbolic("aten::log2")(_log_base(2))
onnx_symbolic("aten::log10")(_log_base(10))


@onnx_symbolic("aten::log1p")
def log1p(g, self):
    return g.op("Log", g.op("Add", self, g.constant(np.asarray(1, self.dtype or np.float32))))

@onnx_symbolic("aten::fmod")
def fmod(g, self, other):
    """C's remainder (the sign of the dividend); ONNX Mod takes fmod=1 for every dtype."""
    return g.op("Mod", *_operands(g, self, other), fmod_i=1)


def _add_scaled(op_type):
    """addcmul / addcdiv: self + value * (tensor1 op tensor2)."""
    def symbolic(g, self, tensor1, tensor2, value=1):
        term = g.op(op_type, *_operands(g, tensor1, tensor2))
        if value != 1:
            term = g.op("Mul", *_operands(g, term, value))
        return g.op("Add", *_operands(g, self, term))
    return symbolic


onnx_symbolic("aten::addcmul")(_add_scaled("Mul"))
onnx_symbolic("aten::addcdiv")(_add_scaled("Div"))


@onnx_symbolic("aten::logit")
def logit(g, self, eps=None):
    dt = self.dtype or np.float32
    if eps is not None:
        self = g.op("Clip", self, g.constant(np.asarray(eps, dt)),
                    g.constant(np.asarray(1 - eps, dt)))
    return g.op("Log", g.op("Div", self, g.op("Sub", g.constant(np.asarray(1, dt)), self)))


@onnx_symbolic("aten::glu")
def glu(g, self, dim=-1):
    dim = _dim(dim, _rank(self))
    half = self.shape[dim] // 2
    a, b = g.op("Split", self, _ints(g, [half, half]), axis_i=dim, outputs=2)
    return g.op("Mul", a, g.op("Sigmoid", b))


def _trilu(upper):
    def symbolic(g, self, diagonal=0):
        return g.op("Trilu", self, _ints(g, diagonal), upper_i=int(upper))
    return symbolic


onnx_symbolic("aten::triu")(_trilu(True))
onnx_symbolic("aten::tril")(_trilu(False))


@onnx_symbolic("aten::one_hot")
def one_hot(g, self, num_classes=-1):
    if num_classes < 0:
        raise SymbolicValueError("one_hot without num_classes takes its size from the data "
                                 "(max + 1) and is not exported; pass num_classes")
    return g.op("OneHot", self, _ints(g, num_classes), _ints(g, [0, 1]), axis_i=-1)


@onnx_symbolic("aten::bucketize")
def bucketize(g, self, boundaries, out_int32=False, right=False):
    """The number of boundaries below each value (at or below, with right=True)."""
    x = _unsqueeze(g, self, [_rank(self)])
    below = g.op("LessOrEqual" if right else "Less", *_operands(g, boundaries, x))
    counts = g.op("Cast", below, to_i=_onnx_dtype(np.int64))
    counts.shape = tuple(self.shape) + tuple(boundaries.shape)
    out = _reduce(g, "ReduceSum", counts, [_rank(self)], False)
    return g.op("Cast", out, to_i=_onnx_dtype(np.int32)) if out_int32 else out


@onnx_symbolic("aten::unfold")
def unfold(g, self, dimension, size, step):
    """Windows of `size` every `step` along `dimension`: one Gather of the (windows, size)
    positions, then the window axis moved last."""
    rank = _rank(self)
    dim = _dim(dimension, rank) if rank else 0
    length = self.shape[dim] if rank else 1
    count = (length - size) // step + 1
    positions = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    if not rank:
        return _unsqueeze(g, self, [0])
    windows = g.op("Gather", self, _ints(g, positions), axis_i=dim)
    perm = list(range(dim + 1)) + list(range(dim + 2, rank + 1)) + [dim + 1]
    return g.op("Transpose", windows, perm_is=perm)


@onnx_symbolic("aten::_unique2")
def _unique2(g, self, sorted=True, return_inverse=False, return_counts=False):
    """Unique over the flattened input; the inverse indices take the input's shape."""
    values, _, inverse, counts = g.op("Unique", self, sorted_i=1, outputs=4)
    inverse = g.op("Reshape", inverse, _ints(g, list(self.shape)))
    return values, inverse, counts


@onnx_symbolic("aten::unique_dim")
def unique_dim(g, self, dim, sorted=True, return_inverse=False, return_counts=False):
    values, _, inverse, counts = g.op("Unique", self, axis_i=_dim(dim, _rank(self)), sorted_i=1,
                                      outputs=4)
    return values, inverse, counts
