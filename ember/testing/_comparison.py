"""torch.testing.assert_close: compare two (nested) results and say precisely how they differ.

The inputs are walked together: sequences item by item, mappings key by key. Each pair of
leaves becomes a *Pair* that knows how to compare its kind: None, booleans, Python/NumPy
numbers, or tensor-likes (tensors and anything `as_tensor` accepts, e.g. NumPy arrays).
The first failing pair raises, its message carrying the path to the item ("The failure
occurred for item [1]['weight']").

Tensors must agree in shape, device and dtype (and stride with `check_stride=True`), then
in value: |actual - expected| <= atol + rtol * |expected| elementwise (`isclose`). Without
explicit tolerances they come from the dtype, the looser of the two inputs':

    float16 (1e-3, 1e-5)   bfloat16 (1.6e-2, 1e-5)   float32 (1.3e-6, 1e-5)
    float64 (1e-7, 1e-7)   complex as their float parts   integers and bool: exact

A failure reports how many elements mismatch and the greatest absolute and relative
differences with their indices, in PyTorch's words.
"""
import cmath
import collections.abc
import contextlib
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

import ember

__all__ = ["assert_close"]

_WIDE_UNSIGNED = (ember.uint16, ember.uint32, ember.uint64)

_DTYPE_PRECISIONS = {
    ember.float16: (0.001, 1e-5),
    ember.bfloat16: (0.016, 1e-5),
    ember.float32: (1.3e-6, 1e-5),
    ember.float64: (1e-7, 1e-7),
    ember.complex64: (1.3e-6, 1e-5),
    ember.complex128: (1e-7, 1e-7),
}


class ErrorMeta(Exception):
    """A comparison failure: the exception type and message to raise, and the path (`id`)
    to the failing item, turned into the user-facing error by `to_error`."""

    def __init__(self, type, msg, *, id=()):
        super().__init__("internal: raise ErrorMeta.to_error() for user-facing errors")
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              + "".join(str([item]) for item in self.id))
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def default_tolerances(*inputs):
    """(rtol, atol): the loosest of the inputs' dtype precisions (0, 0 for exact types)."""
    dtypes = []
    for x in inputs:
        if isinstance(x, ember.Tensor):
            dtypes.append(x.dtype)
        elif isinstance(x, ember.dtype):
            dtypes.append(x)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(x)} instead.")
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(dt, (0.0, 0.0)) for dt in dtypes])
    return max(rtols), max(atols)


def get_tolerances(*inputs, rtol, atol, id=()):
    if (rtol is None) ^ (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ErrorMeta(ValueError, f"Both 'rtol' and 'atol' must be either specified or "
                                    f"omitted, but got no {missing}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _mismatch_msg(*, identifier, extra, abs_diff, abs_diff_idx, atol, rel_diff, rel_diff_idx, rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        if not equality:
            text += f" (up to {tol} allowed)"
        return text + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_diff_idx, atol)
    msg += line("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _identifier(identifier, default):
    if identifier is None:
        return default
    return identifier(default) if callable(identifier) else identifier


def make_scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier=_identifier(identifier, "Scalars"),
                         extra=f"Expected {expected} but got {actual}.",
                         abs_diff=abs_diff, abs_diff_idx=None, atol=atol,
                         rel_diff=rel_diff, rel_diff_idx=None, rtol=rtol)


def make_tensor_mismatch_msg(actual, expected, matches, *, rtol, atol, identifier=None):
    """How many elements mismatch, and the greatest absolute and relative differences among
    them (computed in the tensors' dtype; integers as int64) with their indices."""
    def unravel(flat_index):
        index = []
        for size in reversed(matches.shape):
            flat_index, mod = divmod(flat_index, size)
            index.append(mod)
        return tuple(reversed(index))

    total = matches.numel()
    mismatches = total - int(ember.sum(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
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
    return _mismatch_msg(identifier=_identifier(identifier, "Tensor-likes"), extra=extra,
                         abs_diff=max_abs.item(), abs_diff_idx=unravel(int(max_abs_idx)),
                         atol=atol, rel_diff=max_rel.item(), rel_diff_idx=unravel(int(max_rel_idx)),
                         rtol=rtol)


class UnsupportedInputs(Exception):
    """Raised by a Pair's constructor for inputs it does not handle: the next Pair is tried."""


class Pair:
    """Two leaves to compare. Subclasses check in __init__ that they can handle the inputs
    (else raise UnsupportedInputs) and implement `compare`, which raises ErrorMeta."""

    def __init__(self, actual, expected, *, id=(), **unknown_parameters):
        self.actual = actual
        self.expected = expected
        self.id = id

    @staticmethod
    def _check_inputs_isinstance(*inputs, cls):
        if not all(isinstance(x, cls) for x in inputs):
            raise UnsupportedInputs

    def _fail(self, type, msg):
        raise ErrorMeta(type, msg, id=self.id)

    def compare(self):
        raise NotImplementedError


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


class TensorLikePair(Pair):
    """Tensors, or two objects of related types that `as_tensor` converts (NumPy arrays)."""

    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **other):
        actual, expected = self._process_inputs(actual, expected, allow_subclasses)
        super().__init__(actual, expected, id=id, **other)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _process_inputs(self, actual, expected, allow_subclasses):
        """Both as tensors, if this pair takes them: their types must be related."""
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise UnsupportedInputs
        if not allow_subclasses and type(actual) is not type(expected):
            raise UnsupportedInputs
        return tuple(self._to_tensor(x) for x in (actual, expected))

    @staticmethod
    def _to_tensor(tensor_like):
        if isinstance(tensor_like, ember.Tensor):
            return tensor_like
        try:
            return ember.as_tensor(tensor_like)
        except Exception:
            raise UnsupportedInputs from None

    def compare(self):
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        if "meta" in (actual.device.type, expected.device.type):
            return  # no values to compare
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual, expected):
        def mismatch(name, a, e):
            self._fail(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        if actual.layout != expected.layout:
            if self.check_layout:
                mismatch("layout", actual.layout, expected.layout)
        elif self.check_stride and actual.stride() != expected.stride():
            mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            mismatch("dtype", actual.dtype, expected.dtype)

    @staticmethod
    def _equalize_attributes(actual, expected):
        """With the checks relaxed: bring both to the CPU and to their promoted dtype."""
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
        if actual.is_sparse:
            self._compare_sparse_coo_values(actual, expected)
        else:
            self._compare_close(actual, expected, self.rtol, self.atol)

    def _compare_sparse_coo_values(self, actual, expected):
        """As stored, coalesced or not: the sparse dims and nnz equal, the indices equal and
        the values close."""
        for what, a, e in (("sparse dimensions", actual.sparse_dim(), expected.sparse_dim()),
                           ("specified values", actual._nnz(), expected._nnz())):
            if a != e:
                self._fail(AssertionError, f"The number of {what} in sparse COO tensors does "
                                           f"not match: {a} != {e}")
        self._compare_close(actual._indices(), expected._indices(), 0.0, 0.0,
                            "Sparse COO indices")
        self._compare_close(actual._values(), expected._values(), self.rtol, self.atol,
                            "Sparse COO values")

    def _compare_close(self, actual, expected, rtol, atol, identifier=None):
        matches = ember.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=self.equal_nan)
        if bool(ember.all(matches)):
            return
        if actual.shape == ember.Size([]):
            msg = make_scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol,
                                           identifier=identifier)
        else:
            msg = make_tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol,
                                           identifier=identifier)
        self._fail(AssertionError, msg)


_PAIR_TYPES = (NonePair, BooleanPair, NumberPair, TensorLikePair)


def _originate_pairs(actual, expected, *, id=(), pair_types=None,
                     sequence_types=(collections.abc.Sequence,),
                     mapping_types=(collections.abc.Mapping,), **options):
    """Walk both inputs together and make one Pair per leaf: the first of `pair_types` that
    accepts the two (torch.testing._internal's TestCase passes its relaxed ones)."""
    if pair_types is None:
        pair_types = _PAIR_TYPES
    walk = dict(pair_types=pair_types, sequence_types=sequence_types, mapping_types=mapping_types,
                **options)

    def is_sequence(x):
        return isinstance(x, sequence_types) and not isinstance(x, str)

    if is_sequence(actual) and is_sequence(expected):
        if len(actual) != len(expected):
            raise ErrorMeta(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}", id=id)
        pairs = []
        for i in range(len(actual)):
            pairs.extend(_originate_pairs(actual[i], expected[i], id=(*id, i), **walk))
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
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(_originate_pairs(actual[key], expected[key], id=(*id, key), **walk))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
    raise ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.", id=id)


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
            them the tensors are moved to the CPU / promoted to a common dtype first.
        msg: a message to raise instead, or a callable mapping the generated one to it.

    Raises:
        AssertionError: the inputs differ; ValueError / TypeError: they cannot be compared.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    try:
        pairs = _originate_pairs(actual, expected, **options)
    except ErrorMeta as error_meta:  # the inputs' structure differs: `msg` is not used here
        raise error_meta.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            raise error_meta.to_error(msg) from None


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
        precisions = [_ALLCLOSE_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in precisions), max(p[1] for p in precisions)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
