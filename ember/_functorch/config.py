"""torch._functorch.config: switches of functorch's tracing. ember reads
`fake_tensor_allow_meta` (whether a FakeTensorMode may make fakes on the meta device); the others
exist so code that sets or patches them runs."""
fake_tensor_allow_meta = True
fake_tensor_propagate_real_tensors = False
fake_tensor_crossref = False
debug_assert = False
# whether AOTAutograd checks that a custom op's outputs do not alias its inputs
check_custom_op_aliasing = True
