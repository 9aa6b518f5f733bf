"""torch._vendor: the small third-party pieces PyTorch ships inside itself (packaging's
version parsing), as ember's own."""
