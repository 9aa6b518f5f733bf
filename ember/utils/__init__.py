"""torch.utils: hooks and data loading live here as they are built."""
