"""AOT autograd (torch._functorch's role): the forward and backward graphs compiled together."""
