"""torch.fx.experimental.symbolic_shapes' errors.

PyTorch's capture gives sizes and data-dependent scalars symbols; Python code that branches on
a symbol whose value depends on tensor data cannot be captured and raises
GuardOnDataDependentSymNode. ember's capture (ember.export) keeps no symbols for tensor data but
raises the same error at the same places: when a traced program reads a tensor's value.
"""

__all__ = ["GuardOnDataDependentSymNode", "ConstraintViolationError"]


class GuardOnDataDependentSymNode(RuntimeError):
    pass


class ConstraintViolationError(RuntimeError):
    pass
