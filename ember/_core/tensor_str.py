"""Tensor printing: ember's counterpart of PyTorch's ``torch/_tensor_str.py``.

``tensor_repr`` is the body of ``Tensor.__repr__`` / ``Tensor.__str__`` (PyTorch's
``torch._tensor_str._str``) and produces exactly PyTorch's text for the same data,
dtype, device and autograd state.  ``set_printoptions``, ``get_printoptions``,
``printoptions`` and ``PRINT_OPTS`` behave like their ``torch`` namesakes.
Element formatting works on NumPy arrays; floating values are widened to float64
first (exact for every float dtype), as PyTorch formats ``Tensor.item()`` values.
"""

import contextlib
import dataclasses
import math

import numpy as np
from . import dtype as D
from .complex32 import NP_COMPLEX32, widen

from .python_key import PYTHON_KEY
from .math_bits import MathBits
from .grad_mode import no_grad

__all__ = [
    "PRINT_OPTS",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "tensor_repr",
]


# --------------------------------------------------------------------------
# Print options
# --------------------------------------------------------------------------


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set options for printing (same arguments and semantics as
    ``torch.set_printoptions``).

    ``profile`` is one of ``'default'``, ``'short'``, ``'full'`` and is applied
    first; explicit arguments override it.  As in PyTorch, ``sci_mode`` is always
    assigned, so omitting it resets it to ``None`` (automatic choice).
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = math.inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """Current print options as a dict that can be passed back to
    ``set_printoptions(**opts)``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily changes the print options; accepts the
    same arguments as ``set_printoptions``."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


# --------------------------------------------------------------------------
# dtype / device helpers
# --------------------------------------------------------------------------

# Aliases a dtype's str() might use, mapped to PyTorch's canonical names.
_DTYPE_ALIASES = {
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "short": "int16",
    "int": "int32",
    "long": "int64",
}


def _dtype_name(dtype):
    """Canonical PyTorch name of a dtype, without the module prefix ('float32')."""
    name = str(dtype).rsplit(".", 1)[-1]
    return _DTYPE_ALIASES.get(name, name)


def _dtype_str(dtype):
    """The dtype as PyTorch spells it in reprs: 'torch.float32'."""
    return "torch." + _dtype_name(dtype)


def _default_dtype():
    from ember._core.dtype import get_default_dtype

    return get_default_dtype()


def _default_device_type():
    return "cpu"


# --------------------------------------------------------------------------
# Element formatting
# --------------------------------------------------------------------------


class _Formatter:
    """Chooses a common width / notation for a set of values (PyTorch's
    ``_Formatter``).  ``values`` is a 1-d NumPy array: float64 when
    ``floating`` is true, otherwise bool or integer."""

    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        if not floating:
            for value in values.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        nonzero_finite_vals = values[np.isfinite(values) & (values != 0)]
        if nonzero_finite_vals.size == 0:
            # no valid number, do nothing
            return

        nonzero_finite_abs = np.abs(nonzero_finite_vals)
        nonzero_finite_min = float(nonzero_finite_abs.min())
        nonzero_finite_max = float(nonzero_finite_abs.max())

        self.int_mode = bool(
            np.all(nonzero_finite_vals == np.ceil(nonzero_finite_vals))
        )

        if PRINT_OPTS.sci_mode is None:
            # Python float division yields inf on overflow, like a double tensor.
            self.sci_mode = (
                nonzero_finite_max / nonzero_finite_min > 1000.0
                or nonzero_finite_max > 1.0e8
                or nonzero_finite_min < 1.0e-4
            )
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        vals = nonzero_finite_vals.tolist()
        if self.sci_mode:
            spec = f"{{:.{precision}e}}"
            widths = (len(spec.format(v)) for v in vals)
        elif self.int_mode:
            # a trailing '.' marks the tensor as floating: count it
            widths = (len(f"{v:.0f}") + 1 for v in vals)
        else:
            spec = f"{{:.{precision}f}}"
            widths = (len(spec.format(v)) for v in vals)
        self.max_width = max(self.max_width, max(widths))

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value, formatter1, formatter2):
    real_str = formatter1.format(value.real)
    imag_str = (formatter2.format(value.imag) + "j").lstrip()
    # handles negative numbers, +0.0, -0.0
    if imag_str[0] == "+" or imag_str[0] == "-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _val_str(value, formatter1, formatter2):
    if formatter2 is not None:
        return _complex_str(value, formatter1, formatter2)
    return formatter1.format(value)


def _vector_str(data, indent, summarize, formatter1, formatter2=None):
    # length includes spaces and comma between elements
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        # width for imag_formatter + an extra j for complex
        element_length += formatter2.width() + 1

    elements_per_line = max(
        1, math.floor((PRINT_OPTS.linewidth - indent) / element_length)
    )

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = (
            [_val_str(v, formatter1, formatter2) for v in data[:edge].tolist()]
            + [" ..."]
            + [_val_str(v, formatter1, formatter2) for v in data[-edge:].tolist()]
        )
    else:
        items = [_val_str(v, formatter1, formatter2) for v in data.tolist()]

    lines = [
        ", ".join(items[i : i + elements_per_line])
        for i in range(0, len(items), elements_per_line)
    ]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(data, indent, summarize, formatter1, formatter2=None):
    dim = data.ndim

    if dim == 0:
        return _val_str(data.item(), formatter1, formatter2)

    if dim == 1:
        return _vector_str(data, indent, summarize, formatter1, formatter2)

    edge = PRINT_OPTS.edgeitems
    n = data.shape[0]

    def sub(i):
        return _tensor_str_with_formatter(
            data[i], indent + 1, summarize, formatter1, formatter2
        )

    if summarize and n > 2 * edge:
        slices = (
            [sub(i) for i in range(edge)]
            + ["..."]
            + [sub(i) for i in range(n - edge, n)]
        )
    else:
        slices = [sub(i) for i in range(n)]

    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def _summarized_values(data):
    """The elements that a summarized print shows, flattened (PyTorch's
    ``get_summarized_data``, which only feeds the formatters)."""
    dim = data.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return data.reshape(-1)
    if dim == 1:
        if data.shape[0] > 2 * edge:
            # note: with edgeitems == 0, data[-0:] is the whole vector (as in torch)
            return np.concatenate((data[:edge], data[-edge:]))
        return data
    if not edge:
        return data.reshape(-1)[:0]
    n = data.shape[0]
    if n > 2 * edge:
        rows = list(range(edge)) + list(range(n - edge, n))
    else:
        rows = range(n)
    parts = [_summarized_values(data[i]) for i in rows]
    if not parts:
        return data.reshape(-1)[:0]
    return np.concatenate(parts)


def _tensor_str(data, is_floating, is_complex, indent):
    """Bracketed contents of a non-empty strided tensor given as a NumPy array."""
    if data.size == 0:
        return "[]"

    summarize = data.size > PRINT_OPTS.threshold

    def values(part):
        return _summarized_values(part) if summarize else part.reshape(-1)

    if is_complex:
        if data.dtype == NP_COMPLEX32:   # (no NumPy casts from it)
            data = widen(data)
        data = np.asarray(data, dtype=np.complex128)
        real_formatter = _Formatter(values(data.real), True)
        imag_formatter = _Formatter(values(data.imag), True)
        return _tensor_str_with_formatter(
            data, indent, summarize, real_formatter, imag_formatter
        )
    zeros = None
    if is_floating:
        if data.dtype == _E8M0:  # PyTorch picks the format from the values != 0 in the dtype,
            zeros = data.view(np.uint8) == 0  # where the zero byte (2**-127) equals 0
        data = np.asarray(data, dtype=np.float64)
    formatter = _Formatter(values(data if zeros is None else np.where(zeros, 0.0, data)),
                           is_floating)
    return _tensor_str_with_formatter(data, indent, summarize, formatter)


def _add_suffixes(tensor_str, suffixes, indent, force_newline):
    tensor_strs = [tensor_str]
    # (sic) PyTorch's measure of the last line, kept for identical wrapping
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def _grad_fn_name(grad_fn):
    name = getattr(grad_fn, "name", None)
    name = name() if callable(name) else type(grad_fn).__name__
    return name.rsplit("::", 1)[-1]


# --------------------------------------------------------------------------
# repr
# --------------------------------------------------------------------------


def _sparse_parts(sparse):
    """(name, tensor) of what a sparse tensor stores, in the order PyTorch prints them: a COO
    tensor's indices and values, a compressed one's two index arrays and values."""
    if type(sparse) is tuple:
        return (("indices", sparse[0]), ("values", sparse[1]))
    from .sparse_compressed import INDEX_NAMES
    compressed_name, plain_name = INDEX_NAMES[sparse.layout]
    return ((compressed_name, sparse.compressed_indices), (plain_name, sparse.plain_indices),
            ("values", sparse.values))


def _sparse_contents(t, indent):
    """`indices=tensor(...),\n values=tensor(...)` of a sparse tensor, as PyTorch prints it."""
    parts = []
    for name, part in _sparse_parts(t._sparse):
        prefix = name + "=tensor("
        if part._size and all(part._size) or not part._size:
            text = _tensor_str(np.asarray(part._np), bool(part.dtype.is_floating_point),
                               bool(part.dtype.is_complex), indent + len(prefix))
        else:
            text = "[], size=" + str(tuple(part._size))
        parts.append(prefix + text + ")")
    return (",\n" + " " * indent).join(parts)


def tensor_repr(t, *, tensor_contents=None):
    """``repr(t)`` as PyTorch writes it, e.g. ``tensor([1., 2.], requires_grad=True)``.

    ``tensor_contents``, when given, replaces the bracketed data text (the
    suffixes are still computed from ``t``)."""
    # a Tensor subclass prints its own name (`LoggingTensor([...])`); Parameter is plain
    prefix = f"{type(t).__name__}(" if getattr(type(t), "_is_subclass_to_print", False) \
        else "tensor("
    indent = len(prefix)
    suffixes = []
    custom_contents_provided = tensor_contents is not None
    tensor_str = tensor_contents if custom_contents_provided else None

    # Only print the device when it is not the default device.
    if t.device.type != _default_device_type():
        suffixes.append("device='" + str(t.device) + "'")

    dtype = t.dtype
    dtype_name = _dtype_name(dtype)
    default_name = _dtype_name(_default_dtype())
    default_complex_name = "complex128" if default_name == "float64" else "complex64"
    has_default_dtype = dtype_name in (
        default_name,
        default_complex_name,
        "int64",
        "bool",
    )
    shape = tuple(t.shape)
    values = t._np
    if t.device.type == "lazy" and not custom_contents_provided:
        values = t.detach().to("cpu")._np  # printing a lazy tensor runs its pending graph

    sparse = getattr(t, "_sparse", None)
    if type(sparse) is MathBits:  # a conjugate/negative view prints the values it stands for
        if values is not None:
            with no_grad():
                values = t.resolve_conj().resolve_neg()._np
        sparse = None
    if sparse is PYTHON_KEY:  # a wrapper subclass: printed as a dense tensor of its contents
        sparse = None
    if sparse is not None:
        tensor_str = _sparse_contents(t, indent)
        suffixes.append("size=" + str(shape))
        suffixes.append(f"nnz={_sparse_parts(sparse)[-1][1]._size[0]}")
        if not has_default_dtype:
            suffixes.append("dtype=" + _dtype_str(dtype))
        suffixes.append(f"layout={t.layout}")
    elif t.device.type == "meta" or (values is None and not custom_contents_provided):
        suffixes.append("size=" + str(shape))
        if dtype_name != default_name:
            suffixes.append("dtype=" + _dtype_str(dtype))
        if not custom_contents_provided:
            tensor_str = "..."
    elif t.numel() == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if t.dim() != 1:
            suffixes.append("size=" + str(shape))
        # An empty tensor has no elements to infer an int64 dtype from.
        if dtype_name != default_name:
            suffixes.append("dtype=" + _dtype_str(dtype))
        if not custom_contents_provided:
            tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            suffixes.append("dtype=" + _dtype_str(dtype))
        if not custom_contents_provided:
            tensor_str = _tensor_str(
                np.asarray(values),
                bool(dtype.is_floating_point),
                bool(dtype.is_complex),
                indent,
            )

    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif getattr(t, "_nograd_view", False) and \
            t._storage_()._version != t.__dict__.get("_view_version"):
        suffixes.append("grad_fn=<Invalid>")   # written in place since made: unusable with grad
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    tangent = t.__dict__.get("_fw_grad")  # a dual tensor's, inside a forward AD level
    if tangent is not None:
        suffixes.append(f"tangent={tangent!r}")

    return _add_suffixes(prefix + tensor_str, suffixes, indent,
                         force_newline=type(sparse) is tuple)


_E8M0 = D.float8_e8m0fnu._np
