"""torch.backends.cpu: the vector instruction set the CPU kernels use. ember's kernels are
NumPy's, whose SIMD dispatch picks the widest set the CPU has; this reports that set in
PyTorch's words."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """'AVX512', 'AVX2' or 'DEFAULT' (PyTorch's names), from the features NumPy detected."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:   # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    if features.get("AVX512F"):
        return "AVX512"
    if features.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
