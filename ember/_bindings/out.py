"""What every binding does after its op: PyTorch's `out=` semantics and `torch.return_types`.

`out=` writes the result into a given tensor: resized (with PyTorch's deprecation warning) if it
has another shape, refused if the result's dtype cannot be cast to it, and refused when autograd
would have to record the write. Ops with several named outputs (`max(dim)` -> values, indices)
return a `torch.return_types.<op>` named tuple.
"""
import builtins
import operator
import re
import warnings

from .._aten.elementwise import can_cast, _scalar_type_name as _type
from .._core import dtype as D
from .._core.dtype import c_type_name as _c_name
from .._core.autocast_state import _autocast_state
from .._core.grad_mode import _grad_state
from .._core.memory_overlap import check_out_overlap
from .._core._warnings import user_stacklevel as _user_stacklevel
from .._dispatch.vmap_state import refuse_batched


class _OutVariant:
    """Around the op of an `out=` call: PyTorch runs such a call as the op's `.out` overload,
    which no autocast list names, so the op runs with the AutocastCPU key excluded and the
    result keeps the inputs' precision before it is copied into `out`."""

    def __enter__(self):
        self.prev = _autocast_state.cpu
        _autocast_state.cpu = False

    def __exit__(self, *exc):
        _autocast_state.cpu = self.prev


def _call_with_out(op, out, *args, name=None):
    """`op(*args)`; with `out`, PyTorch's `.out` overload: the op without autocast, its result
    copied into `out` (for hand-written bindings of ops with an `out=` keyword; `name` picks
    the op's own check of out's dtype in _OUT_DTYPE_RULES)."""
    if out is None:
        return op(*args)
    with _OutVariant():
        result = op(*args)
    return _finish(result, False, out, name)


def _finish(t, requires_grad=False, out=None, name=None, inputs=()):
    """`t`, or `out` holding it; `name` and `inputs` (the op's tensor arguments) for PyTorch's
    check of `out` against the inputs it overlaps (memory_overlap.check_out_overlap) and of
    its dtype (`_check_out_dtype`)."""
    if out is not None:
        if name is not None:
            check_out_overlap(name, out, inputs)
            if name in _OUT_DTYPE_RULES:
                _check_out_dtype(name, out.dtype, t.dtype, inputs)
            if name in _VECTOR_BY_MATRIX and inputs[0].dim() == 1 and inputs[1].dim() == 2:
                # PyTorch writes a vector times a matrix through mm, into `out` resized (with
                # the warning, though it had the result's shape) to one row and then squeezed
                resize_output(out, (1,) + t._size)
                _copy_out(out, t.unsqueeze(0), name)
                return out.squeeze_(0)
        _copy_out(out, t, name)
        t = out
    if requires_grad:
        check_can_require_grad(t)
        t.requires_grad = True   # a factory's requires_grad=True works inside transforms
    return t


def check_can_require_grad(t):
    """A factory's (or Parameter's) requires_grad=True on a tensor of another dtype."""
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
# Note [The dtype of out=]
# Most ops write their result into `out` cast to out's dtype, if PyTorch's can_cast allows the
# cast (float -> int, complex -> real and non-bool -> bool are refused). Some ops are stricter,
# each with its own check and message in PyTorch, listed here: the rounding and sign ops (a
# TensorIterator that requires all dtypes the same), the predicates that only write bool, the
# reductions that keep the input's dtype or write indices, and the ops whose structured kernel
# checks out's dtype itself. sum, prod, cumsum and cumprod are not here: with out= and
# no dtype= they compute in out's dtype (the binding passes it as dtype, see codegen.py).
def _same(name, out, result, inputs):
    return out is result or f"Found dtype {_type(out)} but expected {_type(result)}"


def _abs(name, out, result, inputs):
    """abs of a complex tensor is real: it is written into out as a cast (complex out too),
    as PyTorch's complex-to-float out path does; of a real tensor, all dtypes the same."""
    if not inputs[0].dtype.is_complex:
        return _same(name, out, result, inputs)
    return can_cast(result, out) or (f"result type {_type(result)} can't be cast to the desired "
                                     f"output type {_type(out)}")


def _bool_only(name, out, result, inputs):
    return out is D.bool or f"{name} does not support non-boolean outputs."


def _any_all(name, out, result, inputs):
    return out is D.bool or out is D.uint8 or \
        f"{name} only supports bool tensor for result, got: {_type(out)}"


def _as_input(name, out, result, inputs):
    return out is inputs[0].dtype or ("Expected the dtype for input and out to match, but got "
                                      f"{_type(inputs[0].dtype)} for input's dtype and "
                                      f"{_type(out)} for out's dtype.")


def _nansum(name, out, result, inputs):
    """nansum of floats with out= runs its kernel in out's dtype, built for floats only (an
    integral input is summed by sum, whose out= casts as usual)."""
    if not inputs[0].dtype.is_floating_point or out in (D.float16, D.bfloat16, D.float32,
                                                        D.float64):
        return True
    return NotImplementedError(f"\"nansum_cpu\" not implemented for '{_type(out)}'")


def _long_indices(name, out, result, inputs):
    return out is D.int64 or \
        f"Expected out tensor to have dtype long int, but got {_c_name(out)} instead"


def _fft_complex(name, out, result, inputs):
    return out.is_complex or f"{name} expects a complex output tensor, but got {_type(out)}"


def _fft_real(name, out, result, inputs):
    return out.is_floating_point or \
        f"{name} expects a floating point output tensor, but got {_type(out)}"


def _ihfft(name, out, result, inputs):
    """1-D ihfft writes the conjugate of its half spectrum into out itself: out's dtype must be
    complex and then exactly the result's."""
    verdict = _fft_complex(name, out, result, inputs)
    return _same(name, out, result, inputs) if verdict is True else verdict


_OUT_DTYPE_RULES = {
    # The spectral kernels check out's kind under their family's name (fft2 and ifft2 report
    # "fftn", rfft2 "rfftn", ...); a wider or narrower dtype of the right kind is a cast.
    **dict.fromkeys(["fft", "ifft", "fftn", "rfft", "rfftn", "ihfftn"], _fft_complex),
    **dict.fromkeys(["irfft", "hfft", "irfftn", "hfftn"], _fft_real),
    "ihfft": _ihfft,
    **dict.fromkeys(["abs", "absolute"], _abs),
    **dict.fromkeys(["neg", "negative", "floor", "ceil", "round", "trunc",
                     "fix", "frac", "sign", "sgn", "bitwise_not", "conj_physical", "hardshrink"],
                    _same),
    **dict.fromkeys(["signbit", "isposinf", "isneginf"], _bool_only),
    **dict.fromkeys(["any", "all"], _any_all),
    **dict.fromkeys(["amax", "amin"], _as_input),
    **dict.fromkeys(["argmax", "argmin"], _long_indices),
    "nansum": _nansum,
    **dict.fromkeys(["nonzero", "nonzero_static"], lambda name, out, result, inputs: (
        out is D.int64) or (f"{name}: Expected out tensor to have scalar type Long but got "
                            f"scalar type{_type(out)}")),
    "multinomial": lambda name, out, result, inputs: out is D.int64 or (
        f"multinomial expects Long tensor out, got: {_type(out)}"),
    "nan_to_num": lambda name, out, result, inputs: out is inputs[0].dtype or (
        f"nan_to_num: dtype of out: {_type(out)} should be same as input: "
        f"{_type(inputs[0].dtype)}"),
    "histc": lambda name, out, result, inputs: out is inputs[0].dtype or (
        "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
        f"input {_c_name(inputs[0].dtype)} and hist {_c_name(out)}"),
    "logcumsumexp": lambda name, out, result, inputs: out is result or (
        f"expected scalar_type {_type(result)} but found {_type(out)}"),
    **dict.fromkeys(["dot", "vdot"], lambda name, out, result, inputs: out is result or (
        f"result dtype {_type(out)} does not match input dtype {_type(result)}")),
    # _chunk_cat writes through cat's kernel, with its check
    **dict.fromkeys(["cat", "_chunk_cat"], lambda name, out, result, inputs: can_cast(
        result, out) or TypeError(
        f"torch.cat(): input types can't be cast to the desired output type {_type(out)}")),
    **dict.fromkeys(["complex", "polar"], lambda name, out, result, inputs: out is result or (
        f"Expected object of scalar type {_type(result)} but got scalar type {_type(out)} for "
        f"argument 'out'")),
    "where": lambda name, out, result, inputs: out is result or (
        f"Expected out type to be {_type(result)} but got {_type(out)}"),
    "heaviside": lambda name, out, result, inputs: out is result or (
        "heaviside is not yet implemented for complex tensors." if out.is_complex else
        "heaviside is not yet implemented for tensors with different dtypes."),
    "slice_scatter": lambda name, out, result, inputs: out is result or (
        f"Expected out tensor to have dtype {_c_name(result)}, but got {_c_name(out)} instead"),
    **dict.fromkeys(["bucketize", "searchsorted"], lambda name, out, result, inputs: (
        out is result) or (
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
        "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
        f"dtype {_type(out)} and out_int32 flag is {result is D.int32}")),
}

def _improvable(condition):
    """The message of PyTorch's TORCH_CHECK without one of its own."""
    return (f"Expected {condition} to be true, but got false.  (Could this error message be "
            "improved?  If so, please report an enhancement request to PyTorch.)")


def _matmul(name, out, result, inputs):
    """matmul writes through the kernel its operands' dims pick, with that kernel's check: dot
    for two vectors, mv for a matrix (or batch) and a vector, mm or bmm otherwise."""
    if out is result:
        return True
    dims = (inputs[0].dim(), inputs[1].dim())
    if dims == (1, 1):
        return f"result dtype {_type(out)} does not match input dtype {_type(result)}"
    if dims[0] >= 2 and dims[1] == 1:
        return (f"addmv input tensors must have the same dtype, but got {_type(out)}, "
                f"{_type(inputs[0].dtype)}, and {_type(inputs[1].dtype)}")
    return _strict(name, out, result, inputs)


def _same_scalar_type(message):
    return lambda name, out, result, inputs: out is result or message.format(
        name=name, out=_type(out), result=_type(result), c_out=_c_name(out),
        c_result=_c_name(result))


def _castable_as(message):
    """Any dtype the result casts to, else `message`."""
    return lambda name, out, result, inputs: can_cast(result, out) or message.format(
        name=name, out=_type(out), result=_type(result))


# the structured kernels' check (PyTorch's generated out= wrappers): out in the result's dtype
_STRUCTURED_OUT = [
    "avg_pool2d", "avg_pool3d", "linear", "index_copy", "index_add", "index_reduce", "scatter",
    "scatter_add", "scatter_reduce", "msort", "renorm", "take_along_dim", "tril", "triu",
    "isin", "lu_unpack", "linalg_ldl_solve",
    # the *_copy ops' out= (PyTorch's functionalization codegen copies with the same check)
    "view_copy", "permute_copy", "t_copy", "transpose_copy", "squeeze_copy", "unsqueeze_copy",
    "select_copy", "slice_copy", "diagonal_copy", "expand_copy", "unbind_copy", "split_copy",
    "split_with_sizes_copy", "detach_copy", "alias_copy", "unfold_copy", "as_strided_copy",
    "view_as_real_copy", "view_as_complex_copy"]


# Note [out= of the linear-algebra ops]
# PyTorch's linear-algebra kernels check out='s dtype themselves, in one of two ways: the
# structured ones (inv, cholesky, solve, eigh, svd, qr, lu, det, ...) take out= only in the
# result's dtype; the others (its checkLinalgCompatibleDtype: pinv, cond, cholesky_solve, eig,
# ...) take any dtype the result casts to safely, and name the op and the output when refusing.
def _strict(name, out, result, inputs):
    return out is result or (f"Expected out tensor to have dtype {_c_name(result)}, but got "
                             f"{_c_name(out)} instead")


def _castable(prefix, what="result", then=None):
    def rule(name, out, result, inputs):
        if not can_cast(result, out):
            return (f"{prefix}: Expected {what} to be safely castable from {_type(result)} "
                    f"dtype, but got {what} with dtype {_type(out)}")
        return then(name, out, result, inputs) if then else True
    return rule


_OUT_DTYPE_RULES.update({
    **dict.fromkeys(["linalg_inv", "linalg_cholesky", "linalg_eigvalsh", "linalg_solve",
                     "linalg_det", "linalg_svdvals", "linalg_lu_solve", "linalg_cross", "cross",
                     "linalg_vector_norm"], _strict),
    "cholesky": _castable("cholesky"), "cholesky_solve": _castable("cholesky_solve"),
    "cholesky_inverse": _castable("cholesky_inverse"), "linalg_cond": _castable("linalg.cond"),
    "linalg_pinv": _castable("linalg.pinv"), "linalg_tensorsolve": _castable("tensorsolve"),
    "linalg_tensorinv": _castable("tensorinv"),
    "linalg_matrix_rank": _castable("torch.linalg.matrix_rank"),
    "linalg_householder_product": _castable("torch.linalg.householder_product"),
    "ormqr": lambda name, out, result, inputs: out is result or (
        f"torch.ormqr: Expected input and result to have the same dtype, but input has "
        f"dtype{_type(result)} and result has dtype {_type(out)}"),
    "linalg_matrix_power": _castable("matrix_power"),
    "linalg_matrix_power_mm": _castable("matrix_power", then=_strict),
    "linalg_eigvals": _castable("torch.linalg.eigvals", "eigenvalues"),
    **dict.fromkeys(["linalg_matrix_norm", "linalg_norm"], lambda name, out, result, inputs: (
        out is result or f"{name.replace('_', '.', 1)} expected out tensor dtype "
                         f"{_type(result)} but got: {_type(out)}")),
    "linalg_multi_dot": lambda name, out, result, inputs: out is result or (
        f"multi_dot(): expected out tensor to have dtype {_c_name(result)} but got "
        f"{_c_name(out)}"),
    "linalg_vecdot": lambda name, out, result, inputs: out is result or (
        f"linalg.vecdot: Expected out of dtype{_type(result)} but found {_type(out)}"),
    "linalg_solve_triangular": lambda name, out, result, inputs: out is result or (
        f"expected scalar type {_type(result)} but found {_type(out)}"),
    "gather": _strict,  # a structured kernel
    # the matrix products' kernels take out= in the result's dtype only
    **dict.fromkeys(["mm", "addmm", "_addmm_activation", "bmm", "baddbmm", "addmv"], _strict),
    **dict.fromkeys(["softmax", "log_softmax"], _strict),
    "mv": lambda name, out, result, inputs: out is result or (
        f"addmv input tensors must have the same dtype, but got {_type(out)}, "
        f"{_type(inputs[0].dtype)}, and {_type(inputs[1].dtype)}"),
    "addbmm": lambda name, out, result, inputs: out is result or (
        f"self and mat2 must have the same dtype, but got {_type(out)} and {_type(result)}"),
    **dict.fromkeys(["tensordot", "inner"], lambda name, out, result, inputs: out is result or (
        f"tensordot: Expected the output tensor to have dtype {_type(result)}, but got an "
        f"output tensor with dtype {_type(out)}")),
    **dict.fromkeys(_STRUCTURED_OUT, _strict),
    "matmul": _matmul,
    # diag of a vector first checks the cast (then writes as a structured kernel); of a matrix,
    # a structured kernel
    "diag": lambda name, out, result, inputs: (
        f"diag: result type {_type(result)} can't be cast to the desired out= type {_type(out)}"
        if inputs[0].dim() == 1 and not can_cast(result, out) else
        _strict(name, out, result, inputs)),
    "diff": _same_scalar_type("expected scalar_type {result} but found {out}"),  # n=0: a copy
    "log_sigmoid": _same_scalar_type("expected scalar type {result} but found {out}"),
    **dict.fromkeys(["softshrink", "gelu", "softplus"], _same),
    **dict.fromkeys(["masked_select", "index_select"], _same_scalar_type(
        "{name}(): self and result must have the same scalar type")),
    **dict.fromkeys(["quantile", "nanquantile"], _same_scalar_type(
        "quantile() out tensor must be same dtype as the input tensor")),
    "take": _same_scalar_type("take(): self and out expected to have the same dtype, but got "
                              "self.dtype = {result} and out.dtype = {out}"),
    "narrow_copy": _same_scalar_type(_improvable("self.dtype() == output.dtype()")),
    "ldexp": _castable_as("ldexp can't be cast to the desired output type {out}"),
    # (PyTorch's message names the input's dtype twice)
    "mvlgamma": _castable_as("mvlgamma: result type {result} can't be cast to the desired "
                             "output type {result}"),
    **dict.fromkeys(["max_unary", "min_unary"], _castable_as(_improvable(
        "canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype()))"))),
    "stack": lambda name, out, result, inputs: can_cast(result, out) or TypeError(
        f"torch.cat(): input types can't be cast to the desired output type {_type(out)}"),
    "logsumexp": lambda name, out, result, inputs: out.is_floating_point or out.is_complex or (
        f"logsumexp(): Expected floating point type for result tensor, but got: {_type(out)}"),
    "hash_tensor": lambda name, out, result, inputs: out is D.uint64 or (
        f"Expected result to be of dtype uint64, but got {_type(out)}"),
    "nanmean": lambda name, out, result, inputs: out.is_floating_point or out.is_complex or (
        NotImplementedError(f"\"nansum_cpu\" not implemented for '{_type(out)}'")),
})

# the same checks for the ops with several outputs, one rule per output
_TUPLE_OUT_RULES = {
    **{name: (_strict,) * 4 for name in [
        "linalg_inv_ex", "linalg_cholesky_ex", "linalg_eigh", "linalg_slogdet", "slogdet",
        "linalg_svd", "svd", "linalg_qr", "qr", "linalg_lu_factor", "linalg_lu_factor_ex",
        "linalg_lu", "linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_solve_ex",
        "triangular_solve"]},
    "linalg_eig": (_castable("torch.linalg.eig", "eigenvalues"),
                   _castable("torch.linalg.eig", "eigenvectors")),
    "geqrf": (_castable("torch.geqrf", "a"), _castable("torch.geqrf", "tau")),
    "lu_unpack": (_strict,) * 3,
    "linalg_lstsq": tuple(_castable("torch.linalg.lstsq", what) for what in (
        "solution", "residuals", "rank", "singular_values")),
    "histogram": tuple(_same_scalar_type(
        f"torch.histogram: input tensor and {what} tensor should have the same dtype, but got "
        f"input {{c_result}} and {what} {{c_out}}{suffix}") for what, suffix in (
            ("hist", ""), ("bin_edges", " for dimension 0"))),
    # the batch norm kernel writes each output in the input's dtype
    **dict.fromkeys(["native_batch_norm", "_native_batch_norm_legit"], (
        lambda name, out, result, inputs: out is result or (
            f"expected scalar type {_type(result)} but found {_type(out)}"),) * 3),
}

# the ops whose dtype= defaults to out's dtype when out= is given
DTYPE_FROM_OUT = frozenset(["sum", "prod", "cumsum", "cumprod"])


def dtype_from_out(dtype, out):
    """The dtype a DTYPE_FROM_OUT op computes in: dtype=, else out's; both given must agree."""
    if out is None:
        return dtype
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_c_name(dtype)}, but got "
                           f"{_c_name(out.dtype)} instead")
    return out.dtype


def _check_out_dtype(name, out_dtype, result_dtype, inputs):
    verdict = _OUT_DTYPE_RULES[name](name, out_dtype, result_dtype, inputs)
    if isinstance(verdict, Exception):
        raise verdict
    if verdict is not True:
        raise RuntimeError(verdict)


_BATCH_NORM = frozenset(["native_batch_norm", "_native_batch_norm_legit"])

# the ops that write a vector-matrix product into out= through mm (matmul; linear of a vector)
_VECTOR_BY_MATRIX = frozenset(["matmul", "linear"])

# The ops whose kernels resize `out` themselves (Tensor.resize_) rather than through PyTorch's
# resize_output, so an `out` of the wrong shape takes the result's without the deprecation
# warning: the factories, multinomial, narrow_copy, log_sigmoid, and addbmm (which resizes it
# like `self`).
RESIZES_OUT_SILENTLY = frozenset(["empty", "zeros", "ones", "full", "eye", "rand", "randn",
                                  "randint", "randperm", "multinomial", "narrow_copy", "addbmm",
                                  "log_sigmoid"])


def resize_output(out, shape, warn=True):
    """PyTorch's resize_output: `out` resized to `shape` (its storage kept when large enough,
    so its data_ptr stays), with the deprecation warning when it had elements."""
    if out._size == tuple(shape):
        return out
    if warn and out.numel() != 0:
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out._size)}, which does not match the required output shape "
                      f"{list(shape)}. This behavior is deprecated, and in a future "
                      "PyTorch release outputs will not be resized unless they have zero "
                      "elements. You can explicitly reuse an out tensor t by resizing it, "
                      "inplace, to zero elements with t.resize_(0).", UserWarning,
                      stacklevel=_user_stacklevel())
    return out.resize_(shape)


def _copy_out(out, result, name=None, warn_resize=True):
    refuse_batched((out, result), f"aten::{name or _op_name_of(result)}.out",
                   "; the fallback path doesn't work on out= or view ops.")
    if result.requires_grad or (out.requires_grad and _grad_state.enabled):
        raise RuntimeError(f"{name or _op_name_of(result)}(): functions with out=... arguments "
                           "don't support automatic differentiation, but one of the arguments "
                           "requires grad.")
    if "_fw_grad" in result.__dict__ or "_fw_grad" in out.__dict__:  # a forward AD tangent
        raise NotImplementedError(f"Trying to use forward AD with {name or _op_name_of(result)}"
                                  "_out that does not support it because it is an out= function")
    if out.dtype is not result.dtype and not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_type(result.dtype)} can't be cast to the desired "
                           f"output type {_type(out.dtype)}")
    if out._size != result._size:
        resize_output(out, result._size, warn_resize and name not in RESIZES_OUT_SILENTLY)
        # out takes the strides the kernel gives its result
        if out.stride() != result.stride():
            out.as_strided_(result._size, result.stride())
    out.copy_(result)
    return out


class OutOverload:
    """`torch.ops.aten.add.out`: the op's `.out` overload for an op declared with the `out`
    variant -- the functional op (without autocast, as _OutVariant) and its result written
    into the keyword-only `out`, with PyTorch's out= checks and resize (_copy_out)."""

    def __init__(self, packet):
        self.overloadpacket = packet
        self._opname = packet.__name__
        self.__name__ = f"{packet.__name__}.out"
        self.__module__ = f"torch._ops.{packet._namespace}"

    def __call__(self, *args, out, **kwargs):
        with _OutVariant():
            result = self.overloadpacket(*args, **kwargs)
        return _copy_out(out, result, self._opname)

    def __repr__(self):
        return f"<OpOverload(op='{self.overloadpacket}', overload='out')>"

    def __str__(self):
        return f"{self.overloadpacket}.out"


def _out_overload(packet):
    """The `.out` overload of `packet`, when one of its ops has the `out` variant and one
    tensor result (ops with several named outputs take them by their names, not `out=`)."""
    for op in packet._overloads.values():
        if "out" in op.schema.variants and op.schema.returns == ["Tensor"]:
            return OutOverload(packet)
    return None


def _op_name_of(result):
    """The op that made `result`, read back from its node's name (LogSoftmaxBackward0 ->
    log_softmax), for the out= autograd error."""
    name = type(result.grad_fn).__name__ if result.grad_fn is not None else "op"
    name = re.sub(r"Backward\d*$", "", name)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_ReturnTypes = {}


def _return_type(name, fields):
    t = _ReturnTypes.get(name)
    if t is None:
        t = _ReturnTypes[name] = _structseq(name, tuple(fields))
    return t


def _make_result(name, fields, values):
    """The op's return type holding `values` (built without the public constructor's checks)."""
    return _tuple_new(_return_type(name, fields), values)


_tuple_new = tuple.__new__


def _structseq(name, fields):
    """A class like PyTorch's C struct sequences (torch.return_types.<name>): a tuple subclass
    built from ONE sequence (`max([values, indices])`), with a read-only property per field,
    n_fields / n_sequence_fields / n_unnamed_fields, no `_fields` / `_make` (it is not a
    namedtuple), and no subclasses."""
    qualname = f"torch.return_types.{name}"

    def __new__(cls, sequence, dict=None):
        if dict is not None and not isinstance(dict, builtins.dict):
            raise TypeError(f"{qualname}() takes a dict as second arg, if any")
        values = tuple(sequence)
        if len(values) != len(fields):
            raise TypeError(f"{qualname}() takes a {len(fields)}-sequence "
                            f"({len(values)}-sequence given)")
        return _tuple_new(cls, values)

    def __repr__(self):
        # one field per line, as PyTorch prints its structseqs
        items = ",\n".join(f"{k}={v!r}" for k, v in zip(fields, self))
        return f"{qualname}(\n{items})"

    def __reduce__(self):
        return type(self), (tuple(self),)

    def __init_subclass__(cls, **kwargs):
        raise TypeError(f"type '{qualname}' is not an acceptable base type")

    namespace = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
                 "__init_subclass__": classmethod(__init_subclass__), "__slots__": (),
                 "__module__": "torch.return_types", "__match_args__": fields,
                 "n_fields": len(fields), "n_sequence_fields": len(fields),
                 "n_unnamed_fields": 0}
    namespace.update({f: property(operator.itemgetter(i), doc=f"Alias for field number {i}")
                      for i, f in enumerate(fields)})
    return type(name, (tuple,), namespace)


def _check_frexp_out(out, dtype):
    if out[0].dtype is not dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {_c_name(dtype)} "
                           f"but got {_c_name(out[0].dtype)}")
    if out[1].dtype is not D.int32:
        raise RuntimeError("torch.frexp() expects exponent to have int dtype but got "
                           f"{_c_name(out[1].dtype)}")


# (values, indices) ops whose kernels require out's dtypes exactly, each with its message
def _structured(kind, out, want):
    return f"Expected out tensor to have dtype {_c_name(want)}, but got {_c_name(out)} instead"


_VALUES_INDICES_OUT = {
    **dict.fromkeys(["max", "min", "sort", "topk", "aminmax"], _structured),
    "kthvalue": lambda kind, out, want: (f"output {kind} must be of scalar type Long"
                                         if kind == "indices" else
                                         "output values must be of same type as input"),
    "mode": lambda kind, out, want: (f"expected scalar type '{_type(want)}' but got "
                                     f"'{_type(out)}' for {kind} output"),
    **dict.fromkeys(["cummax", "cummin"], lambda kind, out, want: (
        f"expected scalar_type {_type(want)} but found {_type(out)}")),
}


def _median_out(kind, out, want):
    if kind == "indices":
        return (f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                f"torch.{_type(out)}Tensor instead (while checking arguments for median)")
    return (f"Expected tensor for 'values' to have the same type as tensor for argument #2 "
            f"'self'; but type torch.{_type(out)}Tensor does not equal torch.{_type(want)}Tensor "
            f"(while checking arguments for median)")


_VALUES_INDICES_OUT.update(median=_median_out, nanmedian=_median_out)


def _check_values_indices_out(name, out, result):
    kinds = ("values", "indices") if name != "aminmax" else ("min", "max")
    pairs = list(zip(kinds, out, result))
    if name in ("median", "nanmedian"):  # its kernel checks the indices first
        pairs.reverse()
    for kind, o, r in pairs:
        if o.dtype is not r.dtype:
            raise RuntimeError(_VALUES_INDICES_OUT[name](kind, o.dtype, r.dtype))


def _finish_tuple(name, fields, result, out=None, inputs=None):
    """A named tuple of results (torch.return_types.<name>), copied into `out` if given (checked
    against the op's tensor arguments `inputs` where given, as `_finish` does); with `out` it is
    PyTorch's separate class torch.return_types.<name>_out. Results without field names
    (`fields` None: native_batch_norm) are a plain tuple, with `out` the tuple of out's tensors."""
    if out is not None:
        if inputs is not None:
            check_out_overlap(name, out, inputs)
        if name == "frexp":  # its kernel checks both outputs' dtypes before writing
            _check_frexp_out(out, result[0].dtype)
        elif name in _VALUES_INDICES_OUT:
            _check_values_indices_out(name, out, result)
        elif name in _TUPLE_OUT_RULES:
            for rule, o, r in zip(_TUPLE_OUT_RULES[name], out, result):
                verdict = rule(name, o.dtype, r.dtype, inputs)
                if verdict is not True:
                    raise RuntimeError(verdict)
        # mode of a 0-d tensor fills its outputs through resize_ (its kernel's trivial case)
        warn = not (name == "mode" and inputs and inputs[0].dim() == 0)
        if name in _BATCH_NORM and result[1].numel() == 0:
            # batch norm in eval mode saves no statistics: PyTorch leaves those outputs as
            # they were, unresized and unwritten
            _copy_out(out[0], result[0], name)
            return tuple(out)
        result = tuple(_copy_out(o, r, name, warn) for o, r in zip(out, result))
        return _make_result(f"{name}_out", fields, result) if fields else result
    return _make_result(name, fields, result) if fields else result


from .._dispatch import dispatcher as _dispatcher  # noqa: E402

_dispatcher.OUT_OVERLOAD = _out_overload
