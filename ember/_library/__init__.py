"""The machinery behind `ember.library.custom_op` (PyTorch's torch._library)."""
