"""The Python bindings of the ops, generated from their schema lines at import time (PyTorch
generates the same from native_functions.yaml with tools/autograd/gen_python_functions.py).

For `sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)
-> Tensor | function, method, out` it writes and compiles

    def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
        if type(dim) is int:
            dim = [dim]
        if out is None:
            return _op(input, dim, keepdim, dtype)
        with _OutVariant():  # PyTorch's sum.IntList_out: no autocast
            result = _op(input, dim, keepdim, dtype)
        return _finish(result, False, out)

    def sum(self, dim=None, keepdim=False, *, dtype=None):       # Tensor.sum
        ...

with PyTorch's Python conventions: `self` is called `input` in functions and is the receiver of
methods wherever the schema puts it; an argument named like a Python keyword gets a trailing
underscore (`from_`); a method whose only positional argument is an int list also takes it as
varargs (`x.view(2, 3)`); `int[N]` accepts a single int; a `Tensor` argument refuses a number
unless the schema says `Tensor|Scalar`; every argument is checked as PyTorch's parser checks its
type, with one class comparison on the hot path (arg_parser.py); named returns become a `torch.return_types` tuple. The
generated source is kept in `__ember_source__`, so what runs is what `print` shows.

PyTorch's argument parser also takes NumPy's names for four parameters (NUMPY_NAMES: `axis=`
for `dim`, `keepdims=` for `keepdim`, `x=`/`a=`/`x1=` for `input`, `x2=` for `other`, as in
`torch.sum(x=t, axis=0, keepdims=True)`): a binding with such a parameter gets `**numpy_names`,
resolved by `_numpy_names`, and its required parameters from the first aliased one on default to
`_REQUIRED` (so that `torch.cumsum(t, axis=0)` binds) and are checked in the body. The
parameter's own name wins over its NumPy names; a NumPy name left over is an unexpected keyword,
as in PyTorch. `numpy_names` gives a hand-written binding the same.

Names whose Python overloads no single schema describes (`max(x)`, `max(x, dim)`, `max(x, y)`)
are written by hand in `overloads.py` and skipped here.
"""
import functools
import inspect
import keyword
import linecache

from .._core import torch_function as _tf
from .._dispatch import dispatcher as _dispatcher
from .._core.dtype import dtype as _dtype
from .._core.tensor import Tensor
from . import arg_parser as _ap
from . import deprecated as _deprecated
from .out import DTYPE_FROM_OUT, _OutVariant, _finish, _finish_tuple, _make_result
from .out import dtype_from_out as _dtype_from_out

_INT_LIST = ("int[]", "SymInt[]")
# schema type -> (the hot-path test that sends a value to the parser's slow path, its function)
_CHECKS = {
    "int": ("{0}.__class__ is not int", "_as_int"),
    "SymInt": ("{0}.__class__ is not int", "_as_symint"),
    "Scalar": ("{0}.__class__ not in _NUMBERS", "_as_scalar"),
    "float": ("{0}.__class__ not in _REALS", "_as_float"),
    "bool": ("{0}.__class__ is not bool", "_as_bool"),
    "str": ("{0}.__class__ is not str", "_as_str"),
    "ScalarType": ("{0}.__class__ is not _dtype", "_as_dtype"),
    "Tensor|Scalar": ("{0}.__class__ not in _TENSOR_OR_NUMBER", "_as_tensor_or_number"),
    "Tensor|SymInt": ("{0}.__class__ is not int", "_as_tensor_or_symint"),
    "Tensor": ("not isinstance({0}, Tensor)", "_as_tensor"),
}

# Python overloads that no single schema describes, bound by hand (factories.py, overloads.py):
# `prod(x)` and `prod(x, dim)`, `var(x, dim, unbiased)` beside `correction=`, `sort(x, dim,
# descending, stable)` over `sort.stable`, the factories' varargs sizes and layout arguments...
HAND_WRITTEN_FUNCTIONS = {
    "where", "count_nonzero", "prod", "var", "std", "sort", "einsum", "split", "bernoulli",
    "unique_consecutive", "angle", "masked_fill", "index_fill",
    "empty", "empty_strided", "full", "arange", "linspace", "eye", "scalar_tensor", "randperm",
}
# Functions whose full reduction (`sum(x)`) is an overload without `out=`: the dim defaults to
# `_NO_DIM`, so that `sum(x, out=t)` is refused as PyTorch's parser refuses it, and
# `sum(x, None, out=t)` still binds to the overload with a dim.
OUT_NEEDS_DIM = {"sum"}
# Functions with a number allowed for either operand but not both (PyTorch's parser lets numbers
# stand for tensors only in add/sub/mul/div and a few more): `torch.pow(2, 3)` is a TypeError.
NOT_TWO_NUMBERS = {"pow", "bitwise_and", "bitwise_or", "bitwise_xor",
                   "bitwise_left_shift", "bitwise_right_shift", "xlogy"}
# Ops with PyTorch's deprecated scalars-first overloads (`add(input, alpha, other)`,
# `addmm(beta, input, alpha, mat1, mat2)`): their bindings take the extra positional arguments as
# `*_deprecated` and hand such a call to deprecated.py.
DEPRECATED = {"add", "sub", "addcmul", "addcdiv", "addmm", "addmv", "addr", "baddbmm", "addbmm",
              "sspaddmm"}
# Arguments that also take a Tensor: PyTorch's `.Tensor` overload of the op, which ember's kernel
# of the other one serves (`x.narrow(0, t, 2)` starts at one), or, where ember declares that
# overload, which a tensor goes to (`x.fill_(t)`: fill_.Tensor, through which t gets a
# gradient): (op, argument) -> the type the parser checks
TENSOR_OVERLOADS = {("fill_", "value"): "Tensor|Scalar", ("narrow", "start"): "Tensor|SymInt"}
# Aliases whose in-place form is a method only in PyTorch (no `torch.absolute_`).
NO_INPLACE_FUNCTION = {"absolute"}
HAND_WRITTEN_METHODS = {"count_nonzero", "prod", "var", "std", "sort", "bernoulli", "uniform_",
                        "normal_", "unique_consecutive", "angle", "masked_fill", "masked_fill_",
                        "index_fill", "index_fill_", "copy_"}


# PyTorch's python_arg_parser: a parameter's Python name and the NumPy names it also accepts
# (a method's receiver is not a parameter, so `x=` never names it)
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
               "other": ("x2",)}


class _Required:
    """The default of a required parameter that may also be given by its NumPy name."""

    def __repr__(self):
        return "_REQUIRED"


_REQUIRED = _Required()


def _numpy_names(fn, given, names, values, defaults):
    """The values of parameters `names` (given as `values`, defaulting to `defaults`) once their
    NumPy names among the keywords `given` are read: a parameter passed under its own name or
    by position keeps that value, and a keyword left unused is refused, as PyTorch's parser
    refuses it (naming the first keyword that is no parameter's own name)."""
    values, used = list(values), 0
    for i, name in enumerate(names):
        if values[i] is not defaults[i]:
            continue
        for alias in NUMPY_NAMES[name]:
            if alias in given:
                values[i], used = given[alias], used + 1
                break
    if used < len(given):
        _unexpected(fn, given)
    return values


def _unexpected(fn, given):
    raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(given))}'")


def _missing(fn, name):
    raise TypeError(f"{fn}() missing required argument '{name}'")


def numpy_names(fn=None, *, own=None):
    """A hand-written binding that also takes the NumPy names of its parameters (NUMPY_NAMES).
    `own` maps NUMPY_NAMES' parameter names to the binding's where they differ (`linalg.cholesky(A)`
    takes `x=` for `A`); `own={"input": None}` keeps a parameter from taking NumPy names."""
    if fn is None:
        return functools.partial(numpy_names, own=own)
    params = list(inspect.signature(fn).parameters)
    own = {name: name for name in NUMPY_NAMES if name in params} | (own or {})
    aliases = {alias: own[name] for name in NUMPY_NAMES if own.get(name)
               for alias in NUMPY_NAMES[name]}
    positions = {name: i for i, name in enumerate(params)}

    @functools.wraps(fn)
    def binding(*args, **kwargs):
        if kwargs and not aliases.keys().isdisjoint(kwargs):
            for alias in [k for k in kwargs if k in aliases]:
                name = aliases[alias]
                if name in kwargs or len(args) > positions[name]:
                    _unexpected(fn.__name__, [k for k in kwargs if k not in positions])
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return binding


# The hand-written functions whose PyTorch counterparts take NumPy's names (generated C++
# bindings; PyTorch's Python-level functions take only their own), by namespace: wrapped by
# `give_numpy_names` once ember is imported. A binding without a parameter `input` (`other`)
# takes `x=` for its first parameter (`x2=` for its second).
NUMPY_NAMED = {
    "ember": """adaptive_avg_pool1d adaptive_max_pool1d adjoint allclose alpha_dropout
        alpha_dropout_ angle argwhere as_strided_scatter avg_pool1d batch_norm bernoulli
        binary_cross_entropy_with_logits broadcast_to celu celu_ channel_shuffle cholesky
        cholesky_inverse cholesky_solve clamp clamp_ clamp_max clamp_max_ clamp_min clamp_min_ clip
        clip_ combinations conj constant_pad_nd conv1d conv2d conv3d conv_transpose1d
        conv_transpose2d conv_transpose3d corrcoef cov cross det detach detach_
        diag diagflat dist dropout dropout_ dsplit empty_like equal feature_alpha_dropout
        feature_alpha_dropout_ feature_dropout feature_dropout_ fill flatten fliplr flipud
        float_power frobenius_norm full_like geqrf ger group_norm hinge_embedding_loss histogram
        histogramdd hsplit imag index_put index_put_ inner instance_norm inverse is_complex
        is_floating_point istft kl_div kron layer_norm logdet lu_solve masked_fill matrix_exp
        matrix_power max_pool1d max_pool1d_with_indices max_pool2d max_pool3d moveaxis movedim
        msort mvlgamma narrow_copy native_channel_shuffle nonzero nonzero_static nuclear_norm
        ones_like orgqr ormqr outer pdist pinverse pixel_shuffle pixel_unshuffle poisson_nll_loss
        positive prelu qr rand_like randint_like randn_like ravel real remainder
        renorm reshape resolve_conj resolve_neg rms_norm round round_ rrelu rrelu_ selu
        selu_ slogdet split_with_sizes square square_ svd take_along_dim tile triangular_solve
        unflatten unsafe_chunk unsafe_split unsafe_split_with_sizes vsplit where zeros_like""",
    "ember.nn.functional": """adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool3d celu_
        channel_shuffle conv_transpose1d conv_transpose2d conv_transpose3d elu_ gelu hardshrink
        hardtanh_ leaky_relu_ linear logsigmoid native_channel_shuffle pdist pixel_shuffle
        pixel_unshuffle prelu relu_ rrelu_ selu_ softplus softshrink threshold_""",
    "ember.special": """airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 entr erfcx i0e i1 i1e
        log_ndtr log_softmax modified_bessel_i0 modified_bessel_i1 modified_bessel_k0
        modified_bessel_k1 multigammaln ndtr ndtri round scaled_modified_bessel_k0
        scaled_modified_bessel_k1 softmax spherical_bessel_j0 xlog1py zeta""",
    "ember.linalg": """cholesky cholesky_ex cond cross eig eigh eigvals eigvalsh
        householder_product ldl_factor ldl_factor_ex lstsq matrix_exp matrix_norm matrix_power
        matrix_rank norm pinv solve_triangular tensorinv tensorsolve""",
    "ember.fft": """fft fft2 fftn fftshift hfft hfft2 hfftn ifft ifft2 ifftn ifftshift ihfft
        ihfft2 ihfftn irfft irfft2 irfftn rfft rfft2 rfftn""",
    "Tensor": """allclose copy_ cross dist equal expand_as inner kron max min remainder reshape_as
        type_as view_as""",
}


# ... and those whose second parameter is PyTorch's `other` under another name (`x2=` names it)
SECOND_IS_OTHER = {"ember.linalg": {"tensorsolve"}, "Tensor": {
    "copy_", "expand_as", "max", "min", "reshape_as", "type_as", "view_as"}}


def give_numpy_names(namespaces):
    """Wrap NUMPY_NAMED's functions in `namespaces` {name: module or class} with numpy_names."""
    for where, names in NUMPY_NAMED.items():
        space, method = namespaces[where], where == "Tensor"
        for name in names.split():
            fn = getattr(space, name)
            params = list(inspect.signature(fn).parameters)[method:]
            own = {}
            if not method and "input" not in params:
                own["input"] = params[0]
            if name in SECOND_IS_OTHER.get(where, ()):
                own["other"] = params[1 - method]
            setattr(space, name, numpy_names(fn, own=own))


def _py_name(name):
    return name + "_" if keyword.iskeyword(name) else name


def _default(a):
    d = a.default
    return tuple(d) if isinstance(d, list) else d


def _int_list_size(typ):
    """N for `int[N]`/`int[N]?`, else None."""
    if typ.startswith(("int[", "SymInt[")) and typ.rstrip("?")[-2] != "[":
        return int(typ[typ.index("[") + 1:typ.index("]")])
    return None


class _Binding:
    """The source of one generated function or method."""

    def __init__(self, op, kind, inplace=False, alias=None):
        self.op, self.kind = op, kind
        schema = op.schema
        self.name = schema.name
        args = schema.arguments
        # an alias with its own parameter names (`alias swapaxes(axis0, axis1)`)
        renamed = [a.name for a in args if a.name != "self"]
        self.renames = dict(zip(renamed, schema.alias_params.get(alias, ())))
        if kind == "method":
            receiver = next(i for i, a in enumerate(args) if a.name == "self")
            self.params = [a for i, a in enumerate(args) if i != receiver]
            self.receiver = receiver
        else:
            self.params, self.receiver = list(args), None
        self.has_out = kind == "function" and "out" in op.schema.variants and not inplace
        positional = [a for a in self.params if not a.kwarg_only]
        self.varargs = (kind == "method" and len(positional) == 1 and
                        positional[0].type in _INT_LIST)
        aliased = [i for i, a in enumerate(self.params) if self.arg_name(a) in NUMPY_NAMES]
        self.aliased = [] if self.varargs else [self.params[i] for i in aliased]
        self.required_from = aliased[0] if self.aliased else len(self.params)
        self.out_needs_dim = self.has_out and self.name in OUT_NEEDS_DIM
        self.deprecated = self.name.rstrip("_") in DEPRECATED and not self.varargs
        tensor_arg = next((a for a in self.params if (self.name, a.name) in TENSOR_OVERLOADS),
                          None)
        overload = _dispatcher._registry.get(f"{op.schema.namespace}::{self.name}.Tensor")
        # (the argument, the op a tensor given for it goes to)
        self.tensor_overload = None if tensor_arg is None or overload in (None, op) else \
            (self.arg_name(tensor_arg), overload)

    def default_of(self, a):
        """The parameter's default in the signature (`_REQUIRED` for a required parameter at or
        after the first one with a NumPy name), or no default."""
        if self.out_needs_dim and a.name == "dim":
            return "_NO_DIM"
        if a.has_default:
            return repr(_default(a))
        if not a.kwarg_only and self.params.index(a) >= self.required_from:
            return "_REQUIRED"
        return None

    def arg_name(self, a):
        if a.name == "self":
            return "input" if self.kind == "function" else "self"
        return _py_name(self.renames.get(a.name, a.name))

    def signature(self):
        parts = ["self"] if self.kind == "method" else []
        star = False
        for a in self.params:
            n = self.arg_name(a)
            if self.varargs and not a.kwarg_only:
                parts.append(f"*{n}")
                star = True
                continue
            if a.kwarg_only and not star:
                parts.append("*_deprecated" if self.deprecated else "*")
                star = True
            default = self.default_of(a)
            parts.append(n if default is None else f"{n}={default}")
        if self.has_out:
            if not star:
                parts.append("*")
            parts.append("out=None")
        if self.aliased:
            parts.append("**numpy_names")
        if self.varargs:
            parts.append("**_keyword")   # the list by its name: x.permute(dims=(1, 0))
        return ", ".join(parts)

    def source(self):
        lines = [f"def {self.name}({self.signature()}):"]
        if self.deprecated:
            given = (["self"] if self.kind == "method" else []) + \
                [self.arg_name(a) for a in self.params if not a.kwarg_only]
            scalars = [self.arg_name(a) for a in self.params if a.kwarg_only]
            lines += ["    if _deprecated:",
                      f"        return _deprecated_call(_public, {self.name!r}, "
                      f"{self.kind == 'method'}, ({', '.join(given)},) + _deprecated, "
                      f"{'out' if self.has_out else '_NO_OUT'}, ({', '.join(scalars)},))"]
        if self.aliased:
            names = [self.arg_name(a) for a in self.aliased]
            defaults = [self.default_of(a) for a in self.aliased]
            lines += ["    if numpy_names:",
                      f"        ({', '.join(names)},) = _numpy_names({self.name!r}, numpy_names, "
                      f"{tuple(names)!r}, ({', '.join(names)},), ({', '.join(defaults)},))"]
            for a in self.params:
                if self.default_of(a) == "_REQUIRED":
                    lines += [f"    if {self.arg_name(a)} is _REQUIRED:",
                              f"        _missing({self.name!r}, {self.arg_name(a)!r})"]
        if self.out_needs_dim:
            lines += ["    if dim is _NO_DIM:",
                      "        if out is not None:",
                      f"            _out_needs_dim({self.name!r}, dtype, keepdim)",
                      "        dim = None"]
        if self.varargs:
            n = next(self.arg_name(a) for a in self.params if not a.kwarg_only)
            lines += ["    if _keyword:",
                      f"        {n} = _varargs_keyword({self.name!r}, {n!r}, {n}, _keyword)"]
        lines += self.torch_function_check()
        for pos, a in enumerate(self.params, 1):   # (a method's position excludes self)
            lines += self.check_lines(a, pos)
        if self.kind == "function" and self.name in NOT_TWO_NUMBERS:
            x, y = (self.arg_name(a) for a in self.params[:2])
            lines += [f"    if not isinstance({x}, Tensor) and not isinstance({y}, Tensor):",
                      f"        _two_numbers({self.name!r}, ({x!r}, {y!r}), ({x}, {y}))"]
        call_args = [self.arg_name(a) for a in self.op.schema.arguments]
        if self.kind == "method":
            call_args[self.receiver] = "self"
        call = f"_op({', '.join(call_args)})"
        if self.tensor_overload is not None:
            lines += [f"    if isinstance({self.tensor_overload[0]}, Tensor):",
                      f"        return _tensor_op({', '.join(call_args)})"]
        if self.op.schema.returns[:1] and self.op.schema.returns[0].endswith("[]"):
            call = f"tuple({call})"
        names = self.op.schema.return_names
        tensors = [self.arg_name(a) for a in self.op.schema.arguments
                   if a.is_tensor or a.is_tensor_list]
        inputs = f"({', '.join(tensors)}{',' if len(tensors) == 1 else ''})"
        if len(names) > 1 and (all(names) or self.has_out):
            fields = tuple(names) if all(names) else None
            if self.has_out:
                lines.append(f"    return _finish_tuple({self.name!r}, {fields!r}, {call}, out, "
                             f"{inputs})")
            else:
                lines.append(f"    return _make_result({self.name!r}, {fields!r}, {call})")
        elif self.has_out:
            if self.name in DTYPE_FROM_OUT:
                lines += ["    dtype = _dtype_from_out(dtype, out)"]
            lines += ["    if out is None:", f"        return {call}",
                      "    with _OutVariant():", f"        result = {call}",
                      f"    return _finish(result, False, out, {self.name!r}, {inputs})"]
        else:
            lines.append(f"    return {call}")
        return "\n".join(lines) + "\n"

    def check_lines(self, a, pos):
        """The parser's check of one argument (arg_parser.py): a class comparison that every
        ordinary value passes, and the call that converts or refuses any other value."""
        n, typ = self.arg_name(a), a.type
        if self.kind == "method" and a.name == "self":
            return []
        optional = typ.endswith("?")
        base = typ.rstrip("?")
        where = "None" if a.kwarg_only else pos
        site = f"{self.name!r}, {n!r}, {where}"
        if self.varargs and not a.kwarg_only:   # x.expand(2, 3) or x.expand((2, 3))
            lines = [f"    _given = {n}",
                     f"    if len({n}) == 1 and {n}[0].__class__ in _INT_SEQUENCES:",
                     f"        {n} = {n}[0]",
                     f"    for _e in {n}:",
                     "        if _e.__class__ is not int:",
                     f"            {n} = _as_int_list({site}, _given, 0, True)",
                     "            break"]
            if not a.has_default:  # `x.permute()`: the missing-argument error
                lines += ["    else:", "        if not _given:",
                          f"            _missing_size({self.name!r}, {a.name!r})"]
            return lines
        if base in _INT_LIST or _int_list_size(base):
            size = _int_list_size(base) or 0
            lines = [f"    if {n}.__class__ is int:",   # int[N]: one int for all N
                     f"        {n} = [{n}] * {size}",
                     f"    elif {n}.__class__ not in _INT_SEQUENCES:"] if size else \
                    [f"    if {n}.__class__ not in _INT_SEQUENCES:"]
            lines += [f"        {n} = _as_int_list({site}, {n}, {size})",
                      "    else:",
                      f"        for _e in {n}:",
                      "            if _e.__class__ is not int:",
                      f"                {n} = _as_int_list({site}, {n}, {size})",
                      "                break"]
            if not optional and a.has_default:   # None stands for the default
                lines = [f"    if {n} is None:", f"        {n} = {_default(a)!r}",
                         "    el" + lines[0][4:]] + lines[1:]
            elif optional:
                lines = [f"    if {n} is not None:"] + ["    " + line for line in lines]
            return lines
        base = TENSOR_OVERLOADS.get((self.name, a.name), base)
        test, convert = _CHECKS.get(base, (None, None))
        if test is None:
            return []
        test = test.format(n)
        if optional:
            test = f"{n} is not None and {test}"
        return [f"    if {test}:", f"        {n} = {convert}({site}, {n})"]

    def torch_function_check(self):
        """The lines that hand the call to `__torch_function__` when a tensor argument is not
        exactly a Tensor, or a mode is on (Note [The one check on the hot path])."""
        tests = ["type(self) not in _FAST"] if self.kind == "method" else []
        relevant = ["self"] if self.kind == "method" else []
        for a in self.params:
            n = self.arg_name(a)
            if a.type in ("Tensor", "Tensor?", "Tensor|Scalar"):
                tests.append(f"type({n}) not in _FAST")
                relevant.append(n)
            elif a.type in ("Tensor[]", "Tensor?[]"):
                tests.append(f"type({n}) not in _SEQUENCES or not _FAST.issuperset(map(type, {n}))")
                relevant.append(n)
        if not tests:
            tests = ["not _FAST"]   # no tensor argument: only a mode can take the call
        values = (["self"] if self.kind == "method" else []) + \
            [("*" if self.varargs and not a.kwarg_only else "") + self.arg_name(a)
             for a in self.params] + (["out"] if self.has_out else [])
        relevant_tuple = f"({', '.join(relevant)}{',' if len(relevant) == 1 else ''})"
        # a lone Tensor where a list of them is declared: PyTorch's parser refuses it (on the
        # slow path, which a Tensor in place of the list always takes)
        not_lists = [f"        if isinstance({self.arg_name(a)}, Tensor):\n"
                     f"            _not_a_tensor_list({self.name!r}, {a.name!r}, {pos})"
                     for pos, a in enumerate(self.params, 1)
                     if a.type in ("Tensor[]", "Tensor?[]") and not a.kwarg_only]
        return [f"    if {' or '.join(tests)}:", *not_lists,
                f"        _result = _torch_function(_public, _SPEC, "
                f"({', '.join(values)}{',' if len(values) == 1 else ''}), {relevant_tuple})",
                "        if _result is not _NOT_HANDLED:",
                "            return _result"]

    def torch_function_spec(self):
        """(python name, keyword-only, default) of each parameter, in the binding's order: what
        `_torch_function` needs to rebuild the call's args and kwargs."""
        spec = [("self", False, _NO_DEFAULT)] if self.kind == "method" else []
        for a in self.params:
            default = _default(a) if a.has_default else _NO_DEFAULT
            spec.append((self.arg_name(a), a.kwarg_only, default))
        if self.has_out:
            spec.append(("out", True, None))
        return tuple(spec)

    def named_source(self, py_name):
        src = self.source()
        return src if py_name == self.name else src.replace(f"def {self.name}(",
                                                            f"def {py_name}(", 1)


_NO_DEFAULT = object()
_SEQUENCES = (list, tuple)


def _same(value, default):
    return value is default or (type(value) is type(default) and type(value) is not Tensor
                                and value == default)


def _torch_function(public, spec, values, relevant):
    """A generated binding's slow path: the call as PyTorch's `__torch_function__` receives it
    from a C function (the arguments passed positionally up to the last one that differs from
    its default, the keyword-only ones that differ by keyword), dispatched if anything takes
    it, else NOT_HANDLED."""
    if len(values) != len(spec):   # a varargs method: its ints were spread
        extra = len(values) - len(spec) + 1
        values = (values[0], tuple(values[1:1 + extra])) + tuple(values[1 + extra:])
    positional = [(v, d) for (_, kw, d), v in zip(spec, values) if not kw]
    n = len(positional)
    while n and positional[n - 1][1] is not _NO_DEFAULT and _same(*positional[n - 1]):
        n -= 1
    args = tuple(v for v, _ in positional[:n])
    kwargs = {name: v for (name, kw, d), v in zip(spec, values) if kw and not _same(v, d)}
    return _tf.torch_function_dispatch(public, relevant, args, kwargs, skip_exact=Tensor)


def _compile_all(bindings):
    """Compile the bindings [(table, py_name, binding)] as one module: one compile() call for
    all of them (a few hundred separate calls cost a noticeable part of `import ember`). Each
    function is defined under a unique name bound to its own op, then given its real name."""
    env = {"Tensor": Tensor, "_finish": _finish, "_finish_tuple": _finish_tuple,
           "_OutVariant": _OutVariant, "_dtype_from_out": _dtype_from_out,
           "_make_result": _make_result,
           "_not_a_tensor_list": _not_a_tensor_list, "_missing_size": _missing_size,
           "_numpy_names": _numpy_names, "_unexpected": _unexpected,
           "_as_int": _ap.as_int, "_as_symint": _ap.as_symint,
           "_as_tensor_or_symint": _ap.as_tensor_or_symint, "_as_int_list": _ap.as_int_list,
           "_as_scalar": _ap.as_scalar, "_as_float": _ap.as_float, "_as_bool": _ap.as_bool,
           "_as_str": _ap.as_str, "_as_dtype": _ap.as_dtype, "_as_tensor": _ap.as_tensor,
           "_varargs_keyword": _ap.varargs_keyword,
           "_as_tensor_or_number": _ap.as_tensor_or_number, "_NUMBERS": _ap.NUMBERS,
           "_two_numbers": _ap.two_numbers,
           "_REALS": _ap.REALS, "_INT_SEQUENCES": _ap.INT_SEQUENCES, "_dtype": _dtype,
           "_TENSOR_OR_NUMBER": _ap.NUMBERS | {Tensor},
           "_missing": _missing, "_REQUIRED": _REQUIRED, "_FAST": _tf.FAST_TYPES,
           "_SEQUENCES": _SEQUENCES, "_torch_function": _torch_function,
           "_NOT_HANDLED": _tf.NOT_HANDLED, "_NO_DIM": NO_DIM,
           "_out_needs_dim": out_needs_dim, "_deprecated_call": _deprecated.call,
           "_NO_OUT": _deprecated._NO_OUT}
    chunks, sources = [], []
    for k, (_, py_name, b) in enumerate(bindings):
        env[f"_op{k}"] = b.op.call_positional  # the binding passes every argument
        if b.tensor_overload is not None:   # ("_tensor_op(" becomes "_tensor_op{k}(" below)
            env[f"_tensor_op{k}"] = b.tensor_overload[1].call_positional
        env[f"_SPEC{k}"] = b.torch_function_spec()
        src = b.named_source(py_name)
        sources.append(src)
        chunks.append(src.replace(f"def {py_name}(", f"def _binding{k}(", 1)
                      .replace("_op(", f"_op{k}(").replace("_public,", f"_binding{k},")
                      .replace("_SPEC,", f"_SPEC{k},"))
    exec(compile("\n\n".join(chunks), "<ember generated bindings>", "exec"), env)
    for k, (table, py_name, b) in enumerate(bindings):
        fn = env[f"_binding{k}"]
        qualname = py_name if b.kind == "function" else f"Tensor.{py_name}"
        fn.__code__ = fn.__code__.replace(co_name=py_name, co_qualname=qualname)
        fn.__name__, fn.__qualname__ = py_name, qualname
        fn.__module__ = "ember" if b.kind == "function" else "ember.Tensor"
        fn.__ember_source__ = sources[k]
        fn.__ember_op__ = b.op
        table[py_name] = fn


NO_DIM = object()   # a reduction's dim not given (see OUT_NEEDS_DIM)


def out_needs_dim(fn, dtype, keepdim):
    """PyTorch's parser on `fn(x, out=t)` with no dim: only the overload with a dim takes out=;
    with more arguments that overload alone is plausible, and its missing dim is named."""
    if dtype is None and keepdim is False:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (Tensor, "
                        f"out=Tensor), but expected a dim with out=")
    raise TypeError(f'{fn}() missing 1 required positional arguments: "dim"')


def _missing_size(fn, name):
    """A varargs size or dims that got no ints at all: the required argument is missing."""
    raise TypeError(f'{fn}() missing 1 required positional arguments: "{name}"')


def _not_a_tensor_list(fn, name, pos):
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of Tensors, "
                    f"not Tensor")


def generate(ops, skip_functions=(), skip_methods=()):
    """({name: function}, {name: method}) for every variant the ops' schema lines declare.

    A name that several schemas declare (`max`, `max.dim`) has Python overloads that no one
    signature describes: it is bound by hand, as are the names in `skip_*`."""
    functions, methods = {}, {}
    pending, seen = [], set()

    def add(table, py_name, op, kind, inplace=False, alias=None):
        if (kind, py_name) in seen:
            raise RuntimeError(f"two schemas declare the {kind} variant '{py_name}' (the second: "
                               f"{op.schema.text})")
        seen.add((kind, py_name))
        pending.append((table, py_name, _Binding(op, kind, inplace, alias)))

    inplace_of = {op.functional: op for op in ops if op.functional is not None}
    declared = {}
    for op in ops:
        for v in ("function", "method"):
            if v in op.schema.variants:
                declared.setdefault((op.schema.name, v), []).append(op)
    for op in ops:
        if op in inplace_of:
            declared.setdefault((op.schema.name + "_", "inplace"), []).append(op)
    overloaded = {name for (name, _), found in declared.items() if len(found) > 1}
    skip_functions = set(skip_functions) | overloaded | HAND_WRITTEN_FUNCTIONS
    skip_methods = set(skip_methods) | overloaded | HAND_WRITTEN_METHODS
    for op in ops:
        v = op.schema.variants
        inplace = inplace_of.get(op)
        for name in (op.schema.name,) + op.schema.aliases:
            if "function" in v and name not in skip_functions:
                add(functions, name, op, "function", alias=name)
            if "method" in v and name not in skip_methods:
                add(methods, name, op, "method", alias=name)
            if inplace is not None and op.schema.name + "_" not in overloaded:
                if "method" in v and name + "_" not in skip_methods:
                    add(methods, name + "_", inplace, "method", True)
                if ("inplace_function" in v and name + "_" not in skip_functions
                        and name not in NO_INPLACE_FUNCTION):
                    add(functions, name + "_", inplace, "function", True)
    _compile_all(pending)
    return functions, methods


def document_all(tables):
    """Give every generated binding its docstring (once the derivatives are registered)."""
    from .descriptions import DESCRIPTIONS
    for table in tables:
        for fn in table.values():
            op = fn.__ember_op__
            name = (op.functional or op).schema.name  # exp_ reads exp's line
            document(fn, DESCRIPTIONS.get(name, ""))


def document(fn, description=""):
    """Give a generated binding its docstring: the Python signature, a description, the schema
    and the derivative formulas (read back from their source lines)."""
    op = fn.__ember_op__
    src = fn.__ember_source__
    head = src[src.index("(") + 1:src.index("):")]
    head = head.replace(", **numpy_names", "").replace("=_REQUIRED", "")  # PyTorch's signature
    head = head.replace("=_NO_DIM", "=None").replace("*_deprecated", "*")
    head = head.replace(", **_keyword", "")
    if fn.__qualname__.startswith("Tensor."):
        head = head.removeprefix("self").removeprefix(", ")
    lines = [f"{fn.__name__}({head}) -> {_returns_text(op.schema)}", ""]
    if description:
        lines += [description, ""]
    lines.append(f"Schema: aten::{op.schema.text}")
    lines += derivative_lines(op)
    fn.__doc__ = "\n".join(lines)


def _returns_text(schema):
    if len(schema.returns) == 1:
        return "Tensor" if schema.returns[0].startswith("Tensor") else schema.returns[0]
    return "(" + ", ".join("Tensor" if r.startswith("Tensor") else r
                           for r in schema.returns) + ")"


def derivative_lines(op):
    """'Derivative:' lines for an op's docstring: each input's formula as written."""
    from ..autograd.variable_type import Derivative, _NONDIFF, _NOT_IMPLEMENTED
    d = op.derivative
    if d is _NONDIFF:
        return ["Derivative: not differentiable"]
    if d is None or d is _NOT_IMPLEMENTED:
        return ["Derivative: not implemented (backward raises)"]
    if type(d) is not Derivative:
        return ["Derivative: registered through ember.library"]
    out = ["Derivative:"]
    for key, fn in d.formula_specs.items():
        out.append(f"    {key}: {formula_text(fn)}")
    return out


def formula_text(fn):
    """A formula's source: the lambda's text, or the name and signature of a function."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return repr(fn)
    if fn.__name__ != "<lambda>":
        return f"{fn.__name__}({', '.join(code.co_varnames[:code.co_argcount])})"
    line = linecache.getline(code.co_filename, code.co_firstlineno)
    start = line.find("lambda")
    if start < 0:
        return "<lambda>"
    text, depth, lineno = line[start:], 0, code.co_firstlineno
    i = 0
    while True:
        if i == len(text):  # the lambda goes on on the next line
            lineno += 1
            more = linecache.getline(code.co_filename, lineno)
            if not more:
                return " ".join(text.split())
            text += " " + more.strip()
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return " ".join(text[:i].split())
        elif ch == "," and depth == 0 and ":" in text[:i]:
            return " ".join(text[:i].split())
        i += 1
