"""Operator schemas in PyTorch's syntax (c10's FunctionSchema), and the variants line after them.

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor | function, method, out

The part before `|` is PyTorch's schema: the name, an optional overload after the dot, typed
arguments (`*` starts the keyword-only ones; `Tensor(a!)` marks an argument the op writes to),
and the returns (`Tensor(a)` is a view of an input; names like `(Tensor values, Tensor indices)`
become the fields of a `torch.return_types` tuple). The part after `|` says which Python
bindings are generated from it, as native_functions.yaml's `variants:` does:

    function   `ember.<name>(input, ...)`
    method     `Tensor.<name>(self, ...)`
    inplace    the op `<name>_` (schema, kernel, derivative derived from this one), with the
               method `Tensor.<name>_` if the op has a method; `inplace_function` also gives
               `ember.<name>_`
    out        the `out=` keyword on the function
    alias X    the same bindings under another name too (`asin` ... `alias arcsin`);
               `alias X(a, b)` also renames the arguments after `self`, in order, as PyTorch's
               aliases with their own parameter names (`swapaxes(input, axis0, axis1)`)

A `Tensor` argument may receive a Python number inside ember (PyTorch's wrapped scalars); the
Python bindings accept one only where PyTorch does, which the schema says with `Tensor|Scalar`.
"""
import ast
import re

VARIANTS = ("function", "method", "inplace", "inplace_function", "out")


class AliasInfo:
    """An annotation like `(a!)`, as PyTorch's schema objects describe it: the alias sets
    (one name here) and whether the op writes through it."""
    __slots__ = ("before_set", "after_set", "is_write")

    def __init__(self, name, is_write):
        self.before_set = self.after_set = {name}
        self.is_write = is_write


class Return(str):
    """One return of a schema: its type text (`Tensor(a)`, as ember's code reads it) that also
    answers as PyTorch's schema Argument does: `name`, `type` and `alias_info` (None when the
    return aliases no input)."""
    __slots__ = ("name", "alias_info")

    def __new__(cls, text, name=None):
        self = super().__new__(cls, text)
        self.name = name or ""
        m = re.search(r"\((\w+)(!?)\)", text)
        self.alias_info = AliasInfo(m[1], bool(m[2])) if m else None
        return self

    @property
    def type(self):
        return re.sub(r"\(\w+!?\)", "", str(self))


class Argument:
    __slots__ = ("name", "type", "default", "has_default", "kwarg_only", "alias", "mutable")

    @property
    def alias_info(self):
        return AliasInfo(self.alias, self.mutable) if self.alias else None

    def __init__(self, name, typ, default, has_default, kwarg_only, alias, mutable):
        self.name, self.type, self.default = name, typ, default
        self.has_default, self.kwarg_only = has_default, kwarg_only
        self.alias, self.mutable = alias, mutable

    @property
    def default_value(self):
        """The default as PyTorch's parsed schema reports it: a dtype as its c10 ScalarType
        number (torch.float32 -> 6)."""
        if self.type.rstrip("?") == "ScalarType" and self.default is not None:
            return _SCALAR_TYPE_ORDER.index(str(self.default).removeprefix("torch."))
        return self.default

    @property
    def is_tensor(self):
        return self.type in ("Tensor", "Tensor?", "Tensor|Scalar")

    @property
    def is_tensor_list(self):
        return self.type in ("Tensor[]", "Tensor?[]")

    @property
    def accepts_number(self):
        """Whether the Python binding lets a number stand for this tensor (a wrapped scalar)."""
        return self.type == "Tensor|Scalar"

    @property
    def is_out(self):
        """PyTorch's Argument.is_out: a keyword-only argument the op writes to."""
        return self.kwarg_only and self.mutable

    def __repr__(self):
        return f"{self.type} {self.name}" + (f"={self.default!r}" if self.has_default else "")


_ARG = re.compile(r"^(?P<type>[\w.\[\]\d?|]+?)"
                  r"(?:\((?P<alias>\w+)(?P<bang>!?)\))?(?P<rest>[\[\]\d?]*)"
                  r"\s+(?P<name>\w+)(?:\s*=\s*(?P<default>.+))?$")


# c10's ScalarType numbering (the dtypes a schema default names)
_SCALAR_TYPE_ORDER = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                      "float64", "complex32", "complex64", "complex128", "bool", "qint8",
                      "quint8", "qint32", "bfloat16")


def _typed_default(typ, value):
    """A schema default as the kernel receives it: `ScalarType f=float32` gives the dtype,
    `Device d="cpu"` the device (other literals are already Python values)."""
    base = typ.rstrip("?")
    if isinstance(value, str) and base in ("ScalarType", "Device"):
        import ember
        return getattr(ember, value) if base == "ScalarType" else ember.device(value)
    return value


def split_top(s):
    """Split at commas that are not inside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _literal(text):
    text = text.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text == "contiguous_format":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text.strip("\"'")


class Schema:
    """A parsed schema: name, overload, arguments, returns (types and names) and variants."""

    def __init__(self, text, namespace="aten"):
        arrow = text.find("->")
        bar = text.find("|", arrow) if arrow >= 0 else -1
        text, variants = (text, "") if bar < 0 else (text[:bar], text[bar + 1:])
        self.text = text = text.strip()
        entries = split_top(variants)
        self.aliases, self.alias_params = (), {}
        for v in entries:
            if v.startswith("alias "):
                alias, _, params = v[len("alias "):].partition("(")
                self.aliases += (alias.strip(),)
                if params:
                    self.alias_params[alias.strip()] = tuple(split_top(params.rstrip(")")))
        self.variants = tuple(v for v in entries if not v.startswith("alias "))
        for v in self.variants:
            if v not in VARIANTS:
                raise ValueError(f"unknown variant {v!r} in schema {text!r}; expected {VARIANTS}")
        m = re.match(r"^\s*([\w.]+)\((.*)\)\s*->\s*(.+)$", text)
        if not m:
            raise ValueError(f"invalid schema: {text!r}")
        full, params, rets = m.groups()
        self.name, _, self.overload = full.partition(".")
        self.namespace = namespace
        self.arguments = []
        kwarg_only = False
        for p in split_top(params):
            if p == "*":
                kwarg_only = True
                continue
            a = _ARG.match(p)
            if not a:
                raise ValueError(f"invalid argument {p!r} in schema {text!r}")
            typ = a["type"] + (a["rest"] or "")
            has_default = a["default"] is not None
            self.arguments.append(Argument(a["name"], typ,
                                           _typed_default(typ, _literal(a["default"]))
                                           if has_default else None,
                                           has_default, kwarg_only, a["alias"], bool(a["bang"])))
        rets = rets.strip()
        if rets.startswith("("):
            rets = rets[1:-1]
        parts = [r.split() for r in split_top(rets)] if rets else []
        self.returns = [Return(p[0], p[1] if len(p) > 1 else None) for p in parts]
        self.return_names = [p[1] if len(p) > 1 else None for p in parts]
        self.returns_view = any("(" in r and "!" not in r for r in self.returns)
        self.is_inplace = bool(self.arguments and self.arguments[0].mutable and
                               self.arguments[0].name == "self" and self.arguments[0].is_tensor)
        self.has_out = any(a.mutable and a.name.startswith("out") for a in self.arguments)

    @property
    def overload_name(self):
        return self.overload

    def __str__(self):   # as PyTorch prints it: a `Tensor|Scalar` argument is a Tensor
        return f"{self.namespace}::{self.text.replace('Tensor|Scalar', 'Tensor')}"

    @property
    def qualname(self):
        return f"{self.namespace}::{self.name}" + (f".{self.overload}" if self.overload else "")

    def inplace_text(self):
        """The schema of this op's in-place variant: `exp(Tensor self) -> Tensor` gives
        `exp_(Tensor(a!) self) -> Tensor(a!)`, overload and other arguments kept."""
        head = self.name + "_" + (f".{self.overload}" if self.overload else "")
        params = self.text[self.text.index("(") + 1:self.text.rindex(") ->")]
        first, *rest = split_top(params)
        typ, name = first.split()
        if name != "self" or not typ.startswith("Tensor"):
            raise ValueError(f"an in-place variant needs `Tensor self` first: {self.text!r}")
        return f"{head}({', '.join(['Tensor(a!) self'] + rest)}) -> Tensor(a!)"

    def bind(self, args, kwargs, opname):
        """Positional args + kwargs -> the full positional tuple (the slow path); wrong
        arguments raise RuntimeError worded as PyTorch's operator calls word it."""
        out = list(args)
        nargs = len(self.arguments)
        op = f"{self.namespace}::{self.name}"
        declaration = f"{self.namespace}::{self.text}"
        if len(out) + len(kwargs) > nargs:
            raise RuntimeError(f"{op}() expected at most {nargs} argument(s) but received "
                               f"{len(out) + len(kwargs)} argument(s). Declaration: "
                               f"{declaration}")
        for i, a in enumerate(self.arguments):
            if i < len(args):
                if a.name in kwargs:
                    raise RuntimeError(f"Argument '{a.name}' specified both as positional and "
                                       f"keyword argument. Schema: {declaration}")
                continue
            if a.name in kwargs:
                out.append(kwargs[a.name])
            elif a.has_default:
                d = a.default
                out.append(list(d) if isinstance(d, list) else d)
            else:
                raise RuntimeError(f"{op}() is missing value for argument '{a.name}'. "
                                   f"Declaration: {declaration}")
        extra = set(kwargs) - {a.name for a in self.arguments}
        if extra:
            raise RuntimeError(f"Unknown keyword argument '{sorted(extra)[0]}' for operator "
                               f"'{op}'. Schema: {declaration}")
        return tuple(out)


class ParsedSchema(Schema):
    """What torch._C.parse_schema gives: a Schema compared and hashed by its text, as PyTorch's
    FunctionSchema compares name, overload, arguments and returns (ops' own schemas stay
    compared by identity)."""

    def __eq__(self, other):
        return isinstance(other, Schema) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    is_vararg = False   # `...` ends the arguments

    def __str__(self):   # PyTorch reprints the parsed schema: `int a = 2` prints as `int a=2`
        text = re.sub(r"\s*=\s*", "=", self.text)
        return text if not self.namespace else f"{self.namespace}::{text}"

    # c10's FunctionSchema::isBackwardCompatibleWith / isForwardCompatibleWith: a new schema
    # (self) against an older one. Arguments are compared as c10's Argument does: name, fixed
    # list size, alias annotation, kwarg-only-ness, type (one a subtype of the other), default.
    def is_backward_compatible_with(self, old):
        if not (self.name == old.name and self.overload == old.overload and
                self.is_vararg == getattr(old, "is_vararg", False) and
                len(self.returns) == len(old.returns) and
                len(self.arguments) >= len(old.arguments)):
            return False
        for new_r, old_r in zip(_returns(self), _returns(old)):
            if not _compatible(old_r, new_r):  # returns: covariant
                return False
        old_out, new_out = _first_out(old.arguments), _first_out(self.arguments)
        new = [_arg(a) for a in self.arguments]
        olds = [_arg(a) for a in old.arguments]
        if not all(_compatible(new[i], olds[i]) for i in range(old_out)):
            return False
        if not all(new[i][4] for i in range(old_out, new_out)):   # added: with defaults
            return False
        return all(_compatible(new[i - old_out + new_out], olds[i])
                   for i in range(old_out, len(olds)))

    def check_forward_compatible_with(self, old):
        """(whether old code can call this schema's op, and if not why, as PyTorch words it)."""
        if not (self.name == old.name and self.overload == old.overload and
                self.is_vararg == getattr(old, "is_vararg", False)):
            return False, ""
        old_out, new_out = _first_out(old.arguments), _first_out(self.arguments)
        if len(old.arguments) - old_out != len(self.arguments) - new_out:
            return False, "Function schema should have the same number of out arguments"
        new = [_arg(a) for a in self.arguments]
        olds = [_arg(a) for a in old.arguments]
        for i in range(min(old_out, new_out)):
            if not _compatible(new[i], olds[i], forward=True):
                return False, (f"'{new[i][0]}' is not forward compatible with the older "
                               "version of the schema")
        for i in range(old_out, new_out):
            name, typ, has_default = new[i][0], new[i][2], new[i][4]
            if not has_default:
                return False, (f"Function schema is not forward compatible since the new "
                               f"argument '{name}' of type {typ} did not provide a default value.")
            if typ.endswith("]"):
                return False, (f"Function schema is not forward compatible since the new "
                               f"argument '{name}' of type {typ} has a container type as its "
                               "default value.")
        for i in range(old_out, len(olds)):
            if not _compatible(new[i - old_out + new_out], olds[i], forward=True):
                return False, (f"Out argument '{new[i - old_out + new_out][0]} is not FC with "
                               "the older version of the schema")
        return True, ""


def _first_out(arguments):
    return next((i for i, a in enumerate(arguments) if a.kwarg_only and a.mutable),
                len(arguments))


def _arg(a):
    """(name, fixed list size, type without it, alias annotation, has default, default,
    kwarg-only) of an Argument."""
    size = re.search(r"\[(\d+)\]", a.type)
    return (a.name, size and int(size.group(1)), re.sub(r"\[\d+\]", "[]", a.type),
            (a.alias, a.mutable), a.has_default, a.default, a.kwarg_only)


def _returns(schema):
    """The returns as _arg tuples: `Tensor(a!)` -> type Tensor, alias (a, written)."""
    out = []
    for typ, name in zip(schema.returns, schema.return_names):
        alias = re.search(r"\((\w+)(!?)\)", typ)
        out.append((name, None, re.sub(r"\(\w+!?\)", "", typ),
                    (alias.group(1), bool(alias.group(2))) if alias else (None, False),
                    False, None, False))
    return out


def _subtype(a, b):
    """Whether type `a` is a subtype of `b` (T of T and of T?)."""
    return a == b or b == a + "?"


def _compatible(lhs, rhs, forward=False):
    """c10's Argument::isBackwardCompatibleWith(lhs new, rhs old) -- or, `forward`,
    isForwardCompatibleWith: the same slot (name, fixed size, alias annotation), no argument
    made keyword-only, the old type a subtype of the new (forward: the new of the old), an old
    default kept (forward: and no default added)."""
    if lhs[0] != rhs[0] or lhs[1] != rhs[1] or lhs[3] != rhs[3] or (lhs[6] and not rhs[6]):
        return False
    if not (_subtype(lhs[2], rhs[2]) if forward else _subtype(rhs[2], lhs[2])):
        return False
    if rhs[4] and not (lhs[4] and lhs[5] == rhs[5]):
        return False
    return not (forward and lhs[4] and not rhs[4])


def parse_schema(text):
    """torch._C.parse_schema: `[ns::]name[.overload](args) -> returns`. As PyTorch's, its `name`
    and its printing keep the namespace only when the text gives one."""
    ns, sep, rest = text.strip().partition("::")
    if not sep or "(" in ns:
        ns, rest = "", text.strip()
    vararg = re.search(r"(,\s*)?\.\.\.\s*\)\s*->", rest)
    schema = ParsedSchema(rest[:vararg.start()] + ") ->" + rest[vararg.end():] if vararg
                          else rest, namespace=ns)
    if vararg:
        schema.is_vararg = True
        schema.text = rest
    if ns:
        schema.name = f"{ns}::{schema.name}"
    return schema
