"""The "ember" compile backend (torch._inductor's role): graph passes, elementwise fusion and
a static memory plan, then generated Python over NumPy."""
