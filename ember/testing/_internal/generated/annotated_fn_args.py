"""torch.testing._internal.generated.annotated_fn_args: PyTorch generates, from
native_functions.yaml, the argument types of each C-bound function, and test_overrides builds
one call per function from them. ember's functions are Python with readable signatures, so the
table is empty and those tests take their other path: one tensor-like per parameter without a
default in `torch.overrides.get_testing_overrides()[func]`, whose signature is the function's."""
annotated_args = {}
