"""torch.ao.nn.qat.modules: no module classes in ember (see ember.ao)."""

__all__ = []
