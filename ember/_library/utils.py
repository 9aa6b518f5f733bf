"""torch._library.utils: small questions about operators and their schemas."""
from .._dispatch import dispatcher as _dispatcher

__all__ = ["lookup_op", "is_functional_schema", "is_tensorlist_like_type",
           "get_layout_constraint_tag"]


def lookup_op(qualname):
    """The OpOverload named 'ns::name' or 'ns::name.overload'."""
    ns, _, name = qualname.partition("::")
    return _dispatcher.lookup(name, ns)


def is_functional_schema(schema):
    """Whether an op with this schema (a string or a parsed schema) writes none of its inputs,
    returns no view of them, and returns something."""
    from .._dispatch.schema import Schema
    if isinstance(schema, str):
        schema = Schema(schema)
    arguments = getattr(schema, "arguments", None)
    if hasattr(arguments, "flat_all"):   # a torchgen FunctionSchema
        return (not any(a.annotation is not None and a.annotation.is_write
                        for a in arguments.flat_all)
                and not any(r.annotation is not None for r in schema.returns)
                and len(schema.returns) > 0)
    return (not any(a.alias_info is not None and a.alias_info.is_write for a in arguments)
            and not any(r.alias_info is not None for r in schema.returns)
            and len(schema.returns) > 0)


def is_tensorlist_like_type(typ):
    """Tensor[], Tensor?[], Tensor[]? and Tensor?[]? (a schema argument's type)."""
    return str(typ) in ("Tensor[]", "Tensor?[]", "Tensor[]?", "Tensor?[]?", "List[Tensor]",
                        "List[Optional[Tensor]]", "Optional[List[Tensor]]",
                        "Optional[List[Optional[Tensor]]]")


def get_layout_constraint_tag(op):
    """The most constraining layout tag of `op` (needs_exact_strides when it names none):
    what a compiler must keep of its inputs' strides."""
    from .._C._tags import Tag
    order = (Tag.needs_exact_strides, Tag.needs_contiguous_strides,
             Tag.needs_fixed_stride_order, Tag.flexible_layout)
    tags = op.tags
    return next((t for t in order if t in tags), Tag.needs_exact_strides)


def flat_tensors(value):
    """The tensors in `value`, at any depth of its lists, tuples and dicts, in order."""
    from .._core.tensor import Tensor
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flat_tensors(v)]
    return []


def check_aliasing_constraint(name, args, kwargs, result, get_module=lambda: "???"):
    """A custom operator's outputs may alias neither its inputs nor each other (PyTorch's
    _c_check_aliasing_constraint, over torch._C's storage comparison)."""
    from .. import _C
    if _C._any_output_is_alias_to_input_or_output(
            args, kwargs, result if isinstance(result, tuple) else (result,)):
        raise RuntimeError(
            f"{name} (with implementation in {get_module()}): The output of this custom "
            "operator (1) must not also be an input to this custom operator and (2) may not "
            "alias any inputs to this custom operator or other returns. The most common way "
            "to trigger this error is if we have y = custom_op(x) and y and x are the same "
            "Tensor. Please instead return a clone of the offending output tensor(s) (e.g. "
            "return x.clone()) or refactor the custom operator to not return y.")


def python_kernel_call(schema):
    """How the dispatcher's arguments (all of them, in schema order) reach a kernel written in
    Python, as PyTorch's boxed call into one passes them: keyword-only arguments by name, and
    an argument equal to its schema default left out -- a keyword-only one always, a positional
    one when only defaults follow it -- so the function's own default applies (a
    `device j="cpu"` default reaches `def f(..., j="cpu")` as the string). Returns
    split(args) -> (positional, kwargs)."""
    from .._core.tensor import Tensor
    arguments = schema.arguments
    first_kw = next((i for i, a in enumerate(arguments) if a.kwarg_only), len(arguments))

    def is_default(a, value):
        if not a.has_default or isinstance(value, Tensor):
            return False
        if a.default is None or value is None:
            return a.default is None and value is None
        return type(value) is type(a.default) and value == a.default

    def split(args):
        n = min(first_kw, len(args))
        while n and is_default(arguments[n - 1], args[n - 1]):
            n -= 1
        kwargs = {a.name: v for a, v in zip(arguments[first_kw:], args[first_kw:])
                  if not is_default(a, v)}
        return args[:n], kwargs
    return split
