"""torch.backends.python_native: PyTorch's switches for the operator overrides written in GPU
kernel DSLs (Triton, CuTeDSL). ember has no such overrides: both DSLs are known, none is
available, and no operation is overridden."""

all_dsls = ["cutedsl", "triton"]
available_dsls = []


def get_dsl_operations(dsl_name):
    return []


def is_dsl_disabled(dsl_name):
    return True


def is_operation_disabled(op_name):
    return False
