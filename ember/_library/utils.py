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
