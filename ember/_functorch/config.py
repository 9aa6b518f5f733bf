"""torch._functorch.config: switches of functorch's tracing. ember reads
`fake_tensor_allow_meta` (whether a FakeTensorMode may make fakes on the meta device); the others
exist so code that sets or patches them runs."""
import os

fake_tensor_allow_meta = True
fake_tensor_propagate_real_tensors = False
fake_tensor_crossref = False
debug_assert = False
# whether AOTAutograd checks that a custom op's outputs do not alias its inputs
check_custom_op_aliasing = True
# whether a violation raises (True) or warns; on by default where the CI variable is set, and
# TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING=1/0 forces it
error_on_custom_op_aliasing = {"1": True, "0": False}.get(
    os.environ.get("TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING"), bool(os.getenv("CI")))
