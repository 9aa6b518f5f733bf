"""torch.cuda.jiterator: elementwise CUDA kernels compiled at run time from a C++ string. The
functions it makes exist (code defines them at import), and calling one raises PyTorch's
AssertionError for a machine without a GPU."""


class _JittedFunction:
    def __init__(self, code_string, return_by_ref=False, num_outputs=1, **kwargs):
        self.code_string = code_string
        self.return_by_ref = return_by_ref
        self.num_outputs = num_outputs
        self.kwargs_dict = kwargs

    def __call__(self, *tensors, **kwargs):
        raise AssertionError("Jiterator is only supported on CUDA and ROCm GPUs, none are "
                             "available.")


def _create_jit_fn(code_string, **kwargs):
    return _JittedFunction(code_string, **kwargs)


def _create_multi_output_jit_fn(code_string, num_outputs, **kwargs):
    return _JittedFunction(code_string, return_by_ref=True, num_outputs=num_outputs, **kwargs)
