"""torch.Tag (torch._C.Tag): the labels an operator's definition carries.

PyTorch reads them from native_functions.yaml's `tags:` (and from `Library.define(tags=...)` for
an op defined in Python): passes consult them, e.g. `pointwise` ops may be fused, `inplace` /
`out` mark an op that writes its first / keyword-only arguments, `needs_fixed_stride_order`
asks a compiler to keep the inputs' stride order. Every aten op is `pt2_compliant_tag`.
The members and their numbers are PyTorch's.
"""
import enum

Tag = enum.IntEnum("Tag", [(name, i) for i, name in enumerate((
    "core", "cudagraph_unsafe", "data_dependent_output", "dynamic_output_shape",
    "flexible_layout", "generated", "inplace", "inplace_view", "maybe_aliasing_or_mutating",
    "needs_contiguous_strides", "needs_exact_strides", "needs_fixed_stride_order",
    "nondeterministic_bitwise", "nondeterministic_seeded", "out", "out_variant", "pointwise",
    "pt2_compliant_tag", "reduction", "view_copy"))], module="torch")
Tag.__repr__ = lambda self: f"<Tag.{self.name}: {self.value}>"
Tag.__str__ = lambda self: f"Tag.{self.name}"


def as_tags(tags):
    """`tags=` as PyTorch's define takes it: one Tag or an iterable of them, as a list."""
    if isinstance(tags, Tag):
        return [tags]
    return list(tags)
