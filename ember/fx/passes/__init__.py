"""Passes over fx graphs (torch.fx.passes): shape propagation, graph drawing."""
