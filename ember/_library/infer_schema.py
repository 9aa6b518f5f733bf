"""torch.library.infer_schema: an operator schema read from a Python function's type annotations.

    def f(x: Tensor, n: int, scale: float = 1.0) -> Tensor   ->   (Tensor x, SymInt n, float scale=1.0) -> Tensor

Each parameter's annotation maps to a schema type (Tensor, SymInt, float, bool, str, Scalar,
ScalarType, Device; `Optional[...]` adds `?`, `list[...]`/`Sequence[...]` adds `[]`); an argument
named in `mutates_args` becomes `Tensor(a<i>!)`; keyword-only parameters follow a `*`.
"""
import collections.abc
import inspect
import typing
from types import GenericAlias

from .._core.device import device as _device
from .._core.dtype import dtype as _dtype
from .._core.tensor import Tensor
from ..types import Number

UNKNOWN_MUTATES = "unknown"


def _derived(base, name, lists, optional_items, optional_list):
    """(annotation, schema type) pairs for a base type and its Optional/list forms."""
    def seqs(t):
        return (typing.Sequence[t], typing.List[t],  # noqa: UP006
                GenericAlias(collections.abc.Sequence, (t,)), GenericAlias(list, (t,)))
    out = [(base, name), (typing.Optional[base], name + "?")]
    if lists:
        out += [(s, name + "[]") for s in seqs(base)]
    if optional_items:
        out += [(s, name + "?[]") for s in seqs(typing.Optional[base])]
    if optional_list:
        out += [(typing.Optional[s], name + "[]?") for s in seqs(base)]
    return out


SUPPORTED_PARAM_TYPES = dict(
    pair for row in [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
                     (float, "float", True, False, True), (bool, "bool", True, False, True),
                     (str, "str", False, False, False), (Number, "Scalar", True, False, False),
                     (_dtype, "ScalarType", False, False, False),
                     (_device, "Device", False, False, False)]
    for pair in _derived(*row))

SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]",  # noqa: UP006
                          list[Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
                          Number: "Scalar"}


def _default_repr(value, fail, name):
    if value is None or isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, (str, _device)):
        return f'"{value}"'
    if isinstance(value, _dtype):
        return str(value)[len("torch."):]
    fail(f"Parameter {name} has an unsupported default value type {type(value)}. "
         f"Please file an issue on GitHub so we can prioritize this.")


def _resolve(annotation, fn, fail):
    """A string annotation (from `from __future__ import annotations`, or one written as a
    string, whole or inside `list["MyTensor"]`) evaluated in fn's module."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, getattr(fn, "__globals__", {}))  # noqa: S307
        except Exception as e:
            fail(f"Unsupported type annotation {annotation}. It is not a type. "
                 f"({type(e).__name__}: {e})")
    args = typing.get_args(annotation)
    if any(isinstance(a, (str, typing.ForwardRef)) for a in args):
        resolved = tuple(_resolve(a, fn, fail) for a in args)
        origin = typing.get_origin(annotation)
        annotation = GenericAlias(origin, resolved) if isinstance(annotation, GenericAlias) \
            else annotation.copy_with(resolved)
    return annotation


# A name this module defines for PyTorch's test that annotations are evaluated in the
# decorated function's module, not here: "list[_TestTensor]" must not resolve.
_TestTensor = Tensor


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=None):
    """The schema string of `prototype_function` (with `op_name` in front when given).

    `tags` may say what the mutation is for: `Tag.inplace` (the op writes its first positional
    Tensor and returns it: `(Tensor(a0!) x, ...) -> Tensor(a0!)`) or `Tag.out` (it writes its
    keyword-only Tensors and returns them: `(..., *, Tensor(a1!) out) -> Tensor(a1!)`)."""
    from .._C._tags import Tag, as_tags
    sig = inspect.signature(prototype_function)
    tags = as_tags(tags or ())
    is_inplace, is_out = Tag.inplace in tags, Tag.out in tags
    if is_inplace and is_out:
        raise AssertionError("torch.Tag.inplace and torch.Tag.out are mutually exclusive")
    first_positional = None   # (name, schema type, alias) of the first positional parameter
    out_aliases, out_names = [], []

    def fail(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)
    elif mutates_args != UNKNOWN_MUTATES:
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    params, seen, keyword_only = [], set(), False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not keyword_only:
            params.append("*")
            keyword_only = True
        if param.annotation is inspect.Parameter.empty:
            fail(f"Parameter {name} must have a type annotation.")
        annotation = _resolve(param.annotation, prototype_function, fail)
        schema_type = SUPPORTED_PARAM_TYPES.get(annotation)
        if schema_type is None:
            if typing.get_origin(annotation) is tuple:
                items = set(typing.get_args(annotation)) - {Ellipsis}
                as_list = list[items.pop()] if len(items) == 1 else None
                example = (f"For example, {as_list!r}.\n\n"
                           if as_list in SUPPORTED_PARAM_TYPES else "\n\n")
                fail(f"Parameter {name} has unsupported type {param.annotation}. We do not "
                     f"support Tuple inputs in schema. As a workaround, please try to use List "
                     f"instead. {example}The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
            fail(f"Parameter {name} has unsupported type {param.annotation}. "
                 f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
        if first_positional is None and param.kind == param.POSITIONAL_OR_KEYWORD:
            first_positional = (name, schema_type, f"a{idx}")
        mutated = (mutates_args == UNKNOWN_MUTATES and schema_type.startswith("Tensor")) or (
            mutates_args != UNKNOWN_MUTATES and name in mutates_args)
        if mutated:
            if not schema_type.startswith("Tensor"):
                fail(f"Parameter {name} is in mutable_args but only Tensors or collections of "
                     f"Tensors can be mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
            if is_out:
                if param.kind != param.KEYWORD_ONLY:
                    fail("torch.Tag.out requires mutable arguments to be keyword-only.")
                if schema_type != f"Tensor(a{idx}!)":
                    fail("torch.Tag.out only supports mutable keyword-only Tensor arguments.")
                out_aliases.append(f"a{idx}")
                out_names.append(name)
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            params.append(f"{schema_type} {name}={_default_repr(param.default, fail, name)}")
    if mutates_args != UNKNOWN_MUTATES:
        unseen = set(mutates_args) - seen
        if unseen:
            fail(f"{unseen} in mutates_args were not found in the custom op's signature. "
                 f"mutates_args should contain the names of all args that the custom op "
                 f"mutates, or just the string 'unknown' if you don't know.")
    if is_inplace:
        if first_positional is None:
            fail("torch.Tag.inplace requires a positional Tensor argument.")
        if first_positional[1] != "Tensor":
            fail("torch.Tag.inplace requires the first positional argument to be a Tensor.")
        if type(mutates_args) is str or set(mutates_args) != {first_positional[0]}:
            fail(f"torch.Tag.inplace requires mutates_args to contain exactly the first "
                 f"positional argument, got {mutates_args}.")
    if is_out and not out_aliases:
        fail("torch.Tag.out requires at least one mutable keyword-only Tensor argument.")
    annotation = _resolve(sig.return_annotation, prototype_function, fail)
    if is_out:
        expected = Tensor if len(out_aliases) == 1 else tuple[(Tensor,) * len(out_aliases)]
        if annotation != expected and not (
                typing.get_origin(annotation) is tuple and len(out_aliases) > 1
                and typing.get_args(annotation) == (Tensor,) * len(out_aliases)):
            fail(f"torch.Tag.out requires the return annotation to match the mutable "
                 f"keyword-only Tensor arguments {tuple(out_names)}.")
        rets = [f"Tensor({a}!)" for a in out_aliases]
        ret = rets[0] if len(rets) == 1 else f"({', '.join(rets)})"
    else:
        ret = _parse_return(annotation, fail)
    if is_inplace:
        if ret != "Tensor":
            fail("torch.Tag.inplace requires the return annotation to be torch.Tensor.")
        ret = f"Tensor({first_positional[2]}!)"
    head = op_name if op_name is not None else ""
    return f"{head}({', '.join(params)}) -> {ret}"


def _parse_return(annotation, fail):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        fail("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            fail(f"Return has unsupported type {annotation}. "
                 f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    for arg in args:
        if arg not in SUPPORTED_RETURN_TYPES:
            fail(f"Return has unsupported type {annotation}. "
                 f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
    inner = ", ".join(SUPPORTED_RETURN_TYPES[a] for a in args)
    return f"(({inner}))" if len(args) == 1 else f"({inner})"


def tuple_to_list(tuple_type):
    """The list annotation infer_schema suggests for a Tuple one: Tuple[int, int] -> list[int],
    Tuple[int, float] -> list[int | float] (schemas have lists, not tuples)."""
    args = typing.get_args(tuple_type)
    if not args or args == ((),):
        return list
    items = tuple(a for a in args if a is not Ellipsis)
    if all(a == items[0] for a in items):
        return list[items[0]]
    return list[typing.Union[items]]
