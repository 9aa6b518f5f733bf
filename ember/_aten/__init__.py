"""ATen's role: operator schemas (native_functions.py) and their CPU and Meta kernels."""
