"""torch.testing._internal: the harness PyTorch's own test files are written in -- TestCase with
its tolerant assertEqual, @parametrize, device-type instantiation (`test_x_cpu_float32`), and the
dtype lists -- so that a test file written for PyTorch runs with `import ember as torch`."""
