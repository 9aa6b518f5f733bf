"""torch.fx.experimental: the parts ember has (symbolic_shapes' errors, raised by ember.export)."""
