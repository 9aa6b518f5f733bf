"""torch.testing.assert_close: compare two (nested) results and say precisely how they differ.

The inputs are walked together (`originate_pairs`): sequences item by item, mappings key by
key. Each pair of leaves becomes a *Pair* that knows how to compare its kind: None, booleans,
Python/NumPy numbers, or tensor-likes (tensors and anything `as_tensor` accepts, e.g. NumPy
arrays); the first pair type whose constructor accepts the two is used (a constructor refuses
with UnsupportedInputs). `not_close_error_metas` compares every pair and collects the failures
as ErrorMeta (exception type, message, path to the item); `assert_close` raises the first one
("The failure occurred for item [1]['weight']"). Any other exception while building or comparing
a pair is a bug of the comparison itself and is re-raised as a RuntimeError naming the pair.

Tensors must agree in shape, quantization (is_quantized, qscheme), layout, device and dtype
(and stride with `check_stride=True`), then in value: |actual - expected| <= atol + rtol *
|expected| elementwise (`isclose`). Without explicit tolerances they come from the dtype, the
looser of the two inputs':

    float16 (1e-3, 1e-5)   bfloat16 (1.6e-2, 1e-5)   float32 (1.3e-6, 1e-5)
    float64 (1e-7, 1e-7)   complex as their float parts   quantized as float32
    integers, bool and the 8-bit floats: exact

Sparse tensors are compared as stored: COO by sparse dims, nnz, indices (equal) and values
(close); CSR/CSC/BSR/BSC by nnz, compressed and plain indices (equal) and values (close).
Quantized tensors are compared dequantized; 8-bit floats bit for bit. A failure reports how
many elements mismatch and the greatest absolute and relative differences with their indices,
in PyTorch's words.
"""
import abc
import cmath
import collections.abc
import contextlib
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

import ember

__all__ = ["assert_close"]

_WIDE_UNSIGNED = (ember.uint16, ember.uint32, ember.uint64)

_FLOAT32_PRECISION = (1.3e-6, 1e-5)
_DTYPE_PRECISIONS = {
    ember.float16: (0.001, 1e-5),
    ember.bfloat16: (0.016, 1e-5),
    ember.float32: _FLOAT32_PRECISION,
    ember.float64: (1e-7, 1e-7),
    ember.complex32: (0.001, 1e-5),
    ember.complex64: _FLOAT32_PRECISION,
    ember.complex128: (1e-7, 1e-7),
    # quantized tensors are compared dequantized, i.e. as float32
    **dict.fromkeys((ember.quint8, ember.quint2x4, ember.quint4x2, ember.qint8, ember.qint32),
                    _FLOAT32_PRECISION),
}

# the layouts a TensorLikePair compares; others (mkldnn) are refused with a ValueError
_SUPPORTED_LAYOUTS = (ember.strided, ember.sparse_coo, ember.sparse_csr, ember.sparse_csc,
                      ember.sparse_bsr, ember.sparse_bsc)

# sparse compressed layout -> (its name, compressed indices, plain indices)
_COMPRESSED_FORMATS = {
    ember.sparse_csr: ("CSR", ember.Tensor.crow_indices, ember.Tensor.col_indices),
    ember.sparse_csc: ("CSC", ember.Tensor.ccol_indices, ember.Tensor.row_indices),
    ember.sparse_bsr: ("BSR", ember.Tensor.crow_indices, ember.Tensor.col_indices),
    ember.sparse_bsc: ("BSC", ember.Tensor.ccol_indices, ember.Tensor.row_indices),
}

_PLEASE_REPORT = ("If you are a user and see this message during normal operation please file an "
                  "issue at https://github.com/pytorch/pytorch/issues. If you are a developer and "
                  "working on the comparison functions, please except the previous error and "
                  "raise an expressive `ErrorMeta` instead.")


def _item_path(id):
    return "".join(str([item]) for item in id)


class ErrorMeta(Exception):
    """A comparison failure: the exception type and message to raise, and the path (`id`)
    to the failing item, turned into the user-facing error by `to_error`."""

    def __init__(self, type, msg, *, id=()):
        super().__init__("If you are a user and see this message during normal operation please "
                         "file an issue at https://github.com/pytorch/pytorch/issues. If you are "
                         "a developer and working on the comparison functions, please `raise "
                         "ErrorMeta.to_error()` for user facing errors.")
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg=None):
        """The exception: with `msg` a string, that message; else the generated one (with the
        item's path), passed through `msg` when it is a callable."""
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {_item_path(self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def default_tolerances(*inputs, dtype_precisions=None):
    """(rtol, atol): the loosest of the inputs' dtype precisions (0, 0 for exact types)."""
    dtypes = []
    for x in inputs:
        if isinstance(x, ember.Tensor):
            dtypes.append(x.dtype)
        elif isinstance(x, ember.dtype):
            dtypes.append(x)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(x)} instead.")
    precisions = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[precisions.get(dt, (0.0, 0.0)) for dt in dtypes])
    return max(rtols), max(atols)


def get_tolerances(*inputs, rtol, atol, id=()):
    """Both tolerances as given, or both from the dtypes; one alone is a ValueError (an atol=0
    that still passes through rtol would surprise)."""
    if (rtol is None) ^ (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ErrorMeta(ValueError, f"Both 'rtol' and 'atol' must be either specified or "
                                    f"omitted, but got no {missing}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _identifier(identifier, default):
    if identifier is None:
        return default
    return identifier(default) if callable(identifier) else identifier


def _make_bitwise_mismatch_msg(*, default_identifier, identifier=None, extra=None,
                               first_mismatch_idx=None):
    msg = f"{_identifier(identifier, default_identifier)} are not 'equal'!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    if first_mismatch_idx is not None:
        msg += f"The first mismatched element is at index {first_mismatch_idx}.\n"
    return msg.strip()


def _make_mismatch_msg(*, default_identifier, identifier=None, extra=None, abs_diff,
                       abs_diff_idx=None, atol, rel_diff, rel_diff_idx=None, rtol):
    """'<Identifier> are not close!' (not equal, with zero tolerances), then `extra` and one
    line each for the absolute and relative difference with its index and allowed tolerance."""
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        if not equality:
            text += f" (up to {tol} allowed)"
        return text + "\n"

    msg = (f"{_identifier(identifier, default_identifier)} are not "
           f"{'equal' if equality else 'close'}!\n\n")
    if extra:
        msg += f"{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_diff_idx, atol)
    msg += line("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def make_scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(default_identifier="Scalars", identifier=identifier,
                              extra=f"Expected {expected} but got {actual}.",
                              abs_diff=abs_diff, atol=atol, rel_diff=rel_diff, rtol=rtol)


def make_tensor_mismatch_msg(actual, expected, matches, *, rtol, atol, identifier=None):
    """How many elements mismatch, and the greatest absolute and relative differences among
    them (computed in the tensors' dtype; integers as int64) with their indices. 8-bit floats,
    compared bit for bit, report their first mismatching index instead."""
    def unravel(flat_index):
        index = []
        for size in reversed(matches.shape):
            flat_index, mod = divmod(flat_index, size)
            index.append(mod)
        return tuple(reversed(index))

    total = matches.numel()
    mismatches = total - int(ember.sum(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    if actual.dtype.is_floating_point and actual.dtype.itemsize == 1:
        first = tuple(ember.nonzero(~matches, as_tuple=False)[0].tolist())
        return _make_bitwise_mismatch_msg(default_identifier="Tensor-likes", identifier=identifier,
                                          extra=extra, first_mismatch_idx=first)
    actual_flat, expected_flat, matches_flat = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        actual_flat = actual_flat.to(ember.int64)
        expected_flat = expected_flat.to(ember.int64)
    abs_diff = ember.abs(actual_flat - expected_flat)
    abs_diff[matches_flat] = 0
    max_abs, max_abs_idx = ember.max(abs_diff, 0)
    rel_diff = abs_diff / ember.abs(expected_flat)
    rel_diff[matches_flat] = 0
    max_rel, max_rel_idx = ember.max(rel_diff, 0)
    return _make_mismatch_msg(default_identifier="Tensor-likes", identifier=identifier,
                              extra=extra, abs_diff=max_abs.item(),
                              abs_diff_idx=unravel(int(max_abs_idx)), atol=atol,
                              rel_diff=max_rel.item(), rel_diff_idx=unravel(int(max_rel_idx)),
                              rtol=rtol)


class UnsupportedInputs(Exception):
    """Raised by a Pair's constructor for inputs it does not handle: the next Pair is tried."""


class Pair(abc.ABC):
    """Two leaves to compare. A subclass's constructor takes every option (keeping those it
    uses, passing the rest on), raises UnsupportedInputs for inputs it cannot handle and
    ErrorMeta for invalid ones; `compare` raises ErrorMeta when the two differ."""

    def __init__(self, actual, expected, *, id=(), **unknown_parameters):
        self.actual = actual
        self.expected = expected
        self.id = id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _inputs_not_supported():
        raise UnsupportedInputs

    @staticmethod
    def _check_inputs_isinstance(*inputs, cls):
        if not all(isinstance(x, cls) for x in inputs):
            raise UnsupportedInputs

    def _fail(self, type, msg, *, id=()):
        raise ErrorMeta(type, msg, id=self.id if not id and hasattr(self, "id") else id)

    @abc.abstractmethod
    def compare(self):
        """Raise ErrorMeta if the inputs differ."""

    def extra_repr(self):
        """The options shown in the repr (attribute names, or (name, value) pairs)."""
        return []

    def __repr__(self):
        fields = [("id", self.id), ("actual", self.actual), ("expected", self.expected)]
        fields += [(x, getattr(self, x)) if isinstance(x, str) else x for x in self.extra_repr()]
        return "\n".join([f"{type(self).__name__}(",
                          *(f"    {name}={value!s}," for name, value in fields), ")"])


class ObjectPair(Pair):
    """Any two objects, compared with `==` (a fallback after every other pair type)."""

    def compare(self):
        try:
            equal = self.actual == self.expected
        except Exception as error:
            raise ErrorMeta(ValueError, f"{self.actual} == {self.expected} failed with:\n{error}.",
                            id=self.id) from error
        if not equal:
            self._fail(AssertionError, f"{self.actual} != {self.expected}")


class NonePair(Pair):
    def __init__(self, actual, expected, **other):
        if not (actual is None or expected is None):
            raise UnsupportedInputs
        super().__init__(actual, expected, **other)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    def __init__(self, actual, expected, *, id=(), **other):
        self._check_inputs_isinstance(actual, expected, cls=(bool, np.bool_))
        super().__init__(bool(actual), bool(expected), id=id, **other)

    def compare(self):
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """Python or NumPy numbers, compared with the tolerances of int64 / float64 /
    complex128; `check_dtype` also compares their Python types."""
    _TYPE_TO_DTYPE = {int: ember.int64, float: ember.float64, complex: ember.complex128}

    def __init__(self, actual, expected, *, id=(), rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **other):
        self._check_inputs_isinstance(actual, expected, cls=(int, float, complex, np.number))
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        super().__init__(actual, expected, id=id, **other)
        self.rtol, self.atol = get_tolerances(
            *[self._TYPE_TO_DTYPE[type(x)] for x in (actual, expected)], rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self):
        if self.check_dtype and type(self.actual) is not type(self.expected):
            self._fail(AssertionError, f"The (d)types do not match: {type(self.actual)} != "
                                       f"{type(self.expected)}.")
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(self.expected):
            return
        self._fail(AssertionError, make_scalar_mismatch_msg(self.actual, self.expected,
                                                            rtol=self.rtol, atol=self.atol))

    def extra_repr(self):
        return ("rtol", "atol", "equal_nan", "check_dtype")


class TensorLikePair(Pair):
    """Tensors, or two objects of related types that `as_tensor` converts (NumPy arrays)."""

    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **other):
        actual, expected = self._process_inputs(actual, expected, id=id,
                                                allow_subclasses=allow_subclasses)
        super().__init__(actual, expected, id=id, **other)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=self.id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _process_inputs(self, actual, expected, *, id, allow_subclasses):
        """Both as tensors, if this pair takes them: their types must be related."""
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise UnsupportedInputs
        if not allow_subclasses and type(actual) is not type(expected):
            raise UnsupportedInputs
        actual, expected = (self._to_tensor(x) for x in (actual, expected))
        for tensor in (actual, expected):
            self._check_supported(tensor, id=id)
        return actual, expected

    def _to_tensor(self, tensor_like):
        if isinstance(tensor_like, ember.Tensor):
            return tensor_like
        try:
            return ember.as_tensor(tensor_like)
        except Exception:
            raise UnsupportedInputs from None

    def _check_supported(self, tensor, *, id):
        if tensor.layout not in _SUPPORTED_LAYOUTS:
            raise ErrorMeta(ValueError, f"Unsupported tensor layout {tensor.layout}", id=id)

    def compare(self):
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        if "meta" in (actual.device.type, expected.device.type):
            return  # no values to compare
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual, expected):
        """Shape and quantization always; layout, stride (of strided tensors), device and
        dtype as the check_* flags ask."""
        def mismatch(name, a, e):
            self._fail(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        if actual.is_quantized != expected.is_quantized:
            mismatch("is_quantized", actual.is_quantized, expected.is_quantized)
        elif actual.is_quantized and actual.qscheme() != expected.qscheme():
            mismatch("qscheme()", actual.qscheme(), expected.qscheme())
        if actual.layout != expected.layout:
            if self.check_layout:
                mismatch("layout", actual.layout, expected.layout)
        elif actual.layout == ember.strided and self.check_stride and \
                actual.stride() != expected.stride():
            mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            mismatch("dtype", actual.dtype, expected.dtype)

    @staticmethod
    def _equalize_attributes(actual, expected):
        """With the checks relaxed: bring both to the CPU, to their promoted dtype and, for
        different layouts, to strided."""
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            # promote_types refuses the wide unsigned types; for comparing values PyTorch
            # reads them as int64 (a NumPy reference's uint64 sum against a tensor's int64 one)
            dtype = ember.promote_types(*(ember.int64 if t.dtype in _WIDE_UNSIGNED else t.dtype
                                          for t in (actual, expected)))
            actual, expected = actual.to(dtype), expected.to(dtype)
        if actual.layout != expected.layout:   # (only when check_layout=False)
            actual, expected = (t if t.layout == ember.strided else t.to_dense()
                                for t in (actual, expected))
        return actual, expected

    def _compare_values(self, actual, expected):
        if actual.is_quantized:
            compare = self._compare_quantized_values
        elif actual.is_sparse:
            compare = self._compare_sparse_coo_values
        elif actual.layout in _COMPRESSED_FORMATS:
            compare = self._compare_sparse_compressed_values
        elif actual.dtype.is_floating_point and actual.dtype.itemsize == 1:
            compare = self._compare_bitwise_values
        else:
            compare = self._compare_regular_values_close
        compare(actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)

    def _compare_quantized_values(self, actual, expected, *, rtol, atol, equal_nan):
        """Quantized tensors are close when their dequantized values are (whatever the scales
        and zero points that produce them)."""
        self._compare_regular_values_close(
            actual.dequantize(), expected.dequantize(), rtol=rtol, atol=atol, equal_nan=equal_nan,
            identifier=lambda default: f"Quantized {default.lower()}")

    def _compare_bitwise_values(self, actual, expected, *, rtol, atol, equal_nan):
        """8-bit floats have no tolerances: they are equal or not."""
        if rtol != 0.0 or atol != 0.0:
            raise ErrorMeta(AssertionError, f"Rtol={rtol} and atol={atol} are not supported for "
                                            f"bitwise comparison of low dimensional floats. "
                                            f"Please use rtol=0.0 and atol=0.0.")
        self._compare_regular_values_close(actual, expected, rtol=rtol, atol=atol,
                                           equal_nan=equal_nan)

    def _compare_sparse_coo_values(self, actual, expected, *, rtol, atol, equal_nan):
        """As stored, coalesced or not: the sparse dims and nnz equal, the indices equal and
        the values close."""
        for what, a, e in (("sparse dimensions", actual.sparse_dim(), expected.sparse_dim()),
                           ("specified values", actual._nnz(), expected._nnz())):
            if a != e:
                self._fail(AssertionError, f"The number of {what} in sparse COO tensors does "
                                           f"not match: {a} != {e}")
        self._compare_regular_values_equal(actual._indices(), expected._indices(),
                                           identifier="Sparse COO indices")
        self._compare_regular_values_close(actual._values(), expected._values(), rtol=rtol,
                                           atol=atol, equal_nan=equal_nan,
                                           identifier="Sparse COO values")

    def _compare_sparse_compressed_values(self, actual, expected, *, rtol, atol, equal_nan):
        """As stored: the nnz equal, the compressed and plain indices equal (in a common
        index dtype: int32 and int64 are both valid) and the values close."""
        name, compressed_indices, plain_indices = _COMPRESSED_FORMATS[actual.layout]
        if actual._nnz() != expected._nnz():
            self._fail(AssertionError, f"The number of specified values in sparse {name} tensors "
                                       f"does not match: {actual._nnz()} != {expected._nnz()}")
        index_dtype = ember.promote_types(compressed_indices(actual).dtype,
                                          compressed_indices(expected).dtype)
        for indices in (compressed_indices, plain_indices):
            self._compare_regular_values_equal(
                indices(actual).to(index_dtype), indices(expected).to(index_dtype),
                identifier=f"Sparse {name} {indices.__name__}")
        self._compare_regular_values_close(actual.values(), expected.values(), rtol=rtol,
                                           atol=atol, equal_nan=equal_nan,
                                           identifier=f"Sparse {name} values")

    def _compare_regular_values_equal(self, actual, expected, *, equal_nan=False,
                                      identifier=None):
        self._compare_regular_values_close(actual, expected, rtol=0, atol=0, equal_nan=equal_nan,
                                           identifier=identifier)

    def _compare_regular_values_close(self, actual, expected, *, rtol, atol, equal_nan,
                                      identifier=None):
        matches = ember.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(ember.all(matches)):
            return
        if actual.shape == ember.Size([]):
            msg = make_scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol,
                                           identifier=identifier)
        else:
            msg = make_tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol,
                                           identifier=identifier)
        self._fail(AssertionError, msg)

    def extra_repr(self):
        return ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout",
                "check_stride")


def originate_pairs(actual, expected, *, pair_types, sequence_types=(collections.abc.Sequence,),
                    mapping_types=(collections.abc.Mapping,), id=(), **options):
    """Walk both inputs together and make one Pair per leaf: the first of `pair_types` whose
    constructor accepts the two. Sequences of different lengths and mappings with different
    keys raise ErrorMeta; so do leaves no pair type takes (a TypeError)."""
    walk = dict(pair_types=pair_types, sequence_types=sequence_types, mapping_types=mapping_types,
                **options)

    def is_sequence(x):   # (a str would recurse forever: "a"[0] is "a")
        return isinstance(x, sequence_types) and not isinstance(x, str)

    if is_sequence(actual) and is_sequence(expected):
        if len(actual) != len(expected):
            raise ErrorMeta(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}", id=id)
        pairs = []
        for i in range(len(actual)):
            pairs.extend(originate_pairs(actual[i], expected[i], id=(*id, i), **walk))
        return pairs
    if isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise ErrorMeta(AssertionError,
                            f"The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                            id=id)
        keys = actual_keys
        with contextlib.suppress(Exception):   # sorted when they can be: the first failure is stable
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(originate_pairs(actual[key], expected[key], id=(*id, key), **walk))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
        except ErrorMeta:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__}() at item {_item_path(id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above. {_PLEASE_REPORT}") from error
    raise ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.", id=id)


def not_close_error_metas(actual, expected, *, pair_types=(ObjectPair,),
                          sequence_types=(collections.abc.Sequence,),
                          mapping_types=(collections.abc.Mapping,), **options):
    """The ErrorMeta of every leaf pair that differs (an empty list: all close). Inputs whose
    structure differs raise the user-facing error at once."""
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types,
                                sequence_types=sequence_types, mapping_types=mapping_types,
                                **options)
    except ErrorMeta as error_meta:
        raise error_meta.to_error() from None
    error_metas = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
        except Exception as error:
            raise RuntimeError(f"Comparing\n\n{pair}\n\nresulted in the unexpected exception "
                               f"above. {_PLEASE_REPORT}") from error
    return error_metas


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that `actual` and `expected` are close (see the module docstring).

    Args:
        actual, expected: tensors, numbers, booleans, None, or sequences / mappings of them.
        allow_subclasses: let a Tensor subclass (a Parameter) be compared with a Tensor.
        rtol, atol: relative and absolute tolerance; both or neither (dtype defaults).
        equal_nan: treat two NaNs as equal.
        check_device, check_dtype, check_layout, check_stride: attribute checks; without
            them the tensors are moved to the CPU / promoted to a common dtype / made strided.
        msg: a message to raise instead, or a callable mapping the generated one to it.

    Raises:
        AssertionError: the inputs differ; ValueError / TypeError: they cannot be compared.

    Examples:
        >>> expected = torch.tensor([1.0, 2.0, 3.0])
        >>> torch.testing.assert_close(expected.clone(), expected)
        >>> torch.testing.assert_close(torch.tensor([1.0, 2.5, 3.0]), expected)
        Traceback (most recent call last):
        ...
        AssertionError: Tensor-likes are not close!
        <BLANKLINE>
        Mismatched elements: 1 / 3 (33.3%)
        Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
        Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)
        >>> torch.testing.assert_close({"a": [1, 2]}, {"a": [1, 3]})
        Traceback (most recent call last):
        ...
        AssertionError: Scalars are not equal!
        <BLANKLINE>
        Expected 3 but got 2.
        Absolute difference: 1
        Relative difference: 0.3333333333333333
        <BLANKLINE>
        The failure occurred for item ['a'][1]
        >>> torch.testing.assert_close(1.0, 1.0, rtol=0.0)
        Traceback (most recent call last):
        ...
        ValueError: Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.
    """
    __tracebackhide__ = True
    error_metas = not_close_error_metas(
        actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
        check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
        check_stride=check_stride, msg=msg)
    if error_metas:
        raise error_metas[0].to_error(msg)


_ALLCLOSE_PRECISIONS = {ember.float16: (1e-3, 1e-3), ember.float32: (1e-4, 1e-5),
                        ember.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated comparison: assert_close with its own (looser) default tolerances,
    NaNs equal by default and dtypes not checked (`expected` takes `actual`'s dtype)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=_user_stacklevel())
    if not isinstance(actual, ember.Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, ember.Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions=_ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
