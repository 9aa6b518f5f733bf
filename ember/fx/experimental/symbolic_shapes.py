"""torch.fx.experimental.symbolic_shapes' errors.

PyTorch's capture gives sizes and data-dependent scalars symbols; Python code that branches on
a symbol whose value depends on tensor data cannot be captured and raises
GuardOnDataDependentSymNode. ember's capture (ember.export) keeps no symbols for tensor data but
raises the same error at the same places: when a traced program reads a tensor's value.
"""

__all__ = ["GuardOnDataDependentSymNode", "ConstraintViolationError", "ShapeEnv"]


class GuardOnDataDependentSymNode(RuntimeError):
    pass


class ConstraintViolationError(RuntimeError):
    pass


class ShapeEnv:
    """PyTorch's record of the symbols of a trace and the guards on them. ember's capture has
    no symbolic sizes, so a ShapeEnv only keeps the options it was made with."""

    def __init__(self, *, allow_dynamic_output_shape_ops=True, **options):
        self.allow_dynamic_output_shape_ops = allow_dynamic_output_shape_ops
        self.options = options
