"""torch._functorch.config: AOTAutograd's switches. ember has no AOT tracer; the switches exist
so code that reads or patches them runs."""

# whether AOTAutograd checks that a custom op's outputs do not alias its inputs
check_custom_op_aliasing = True
