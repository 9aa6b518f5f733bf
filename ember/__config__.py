"""torch.__config__: how this build was made, as text. ember has no C++ build: `show()` names
NumPy and its BLAS, `parallel_info()` the thread counts ember's kernels use, and there are no
compiler flags."""
import os

__all__ = ["show", "parallel_info"]


def show():
    """The build configuration: ember's version, NumPy's, and the BLAS NumPy links."""
    import numpy as np
    from .version import __version__
    blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    return (f"ember {__version__} built with:\n"
            f"  - NumPy {np.__version__}\n"
            f"  - BLAS: {blas.get('name', 'unknown')} {blas.get('version', '')}\n"
            f"  - CPU capability usage: {_cpu_capability()}\n")


def _cpu_capability():
    from .backends.cpu import get_cpu_capability
    return get_cpu_capability()


def parallel_info():
    """The thread counts, in PyTorch's layout ('ATen/Parallel:' then one line per setting)."""
    from . import get_num_threads, get_num_interop_threads
    env = "\n".join(f"\t{name} : {os.environ.get(name, '[not set]')}"
                    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"))
    return (f"ATen/Parallel:\n\tat::get_num_threads() : {get_num_threads()}\n"
            f"\tat::get_num_interop_threads() : {get_num_interop_threads()}\n"
            f"std::thread::hardware_concurrency() : {os.cpu_count()}\n"
            f"Environment variables:\n{env}\nATen parallel backend: NumPy and a thread pool\n")


def _cxx_flags():
    """The C++ compiler flags of the build: none, ember is Python."""
    return ""
