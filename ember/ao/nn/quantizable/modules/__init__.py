"""torch.ao.nn.quantizable.modules: no module classes in ember (see ember.ao)."""

__all__ = []
