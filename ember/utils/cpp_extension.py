"""torch.utils.cpp_extension: building C++/CUDA extensions. ember is pure Python on NumPy with
no C++ runtime to compile against, so importing works (build scripts import this module at the
top) and every call that would build or load an extension raises an error saying so; write the
op in Python with `ember.library` instead (docs/extending.md)."""
import os

__all__ = ["load", "load_inline", "CppExtension", "CUDAExtension", "BuildExtension",
           "include_paths", "library_paths", "get_compiler_abi_compatibility_and_version",
           "verify_ninja_availability", "is_ninja_available", "ROCM_HOME", "CUDA_HOME",
           "SYCL_HOME", "IS_HIP_EXTENSION"]

CUDA_HOME = None
ROCM_HOME = None
SYCL_HOME = None
IS_HIP_EXTENSION = False
IS_WINDOWS = os.name == "nt"
IS_MACOS = False
IS_LINUX = not IS_WINDOWS


def _no_cpp(what):
    return RuntimeError(f"torch.utils.cpp_extension.{what}: ember has no C++ extensions: it is "
                        "PyTorch rebuilt in Python on NumPy, with no C++ runtime to compile or "
                        "link an extension against. Define the op in Python with "
                        "ember.library (define / impl / register_autograd) instead.")


def load(name, sources, *args, **kwargs):
    raise _no_cpp("load")


def load_inline(name, cpp_sources, *args, **kwargs):
    raise _no_cpp("load_inline")


def CppExtension(name, sources, *args, **kwargs):
    raise _no_cpp("CppExtension")


def CUDAExtension(name, sources, *args, **kwargs):
    raise _no_cpp("CUDAExtension")


class BuildExtension:
    def __init__(self, *args, **kwargs):
        raise _no_cpp("BuildExtension")

    @classmethod
    def with_options(cls, **options):
        raise _no_cpp("BuildExtension")


def include_paths(device_type="cpu", torch_include_dirs=True):
    raise _no_cpp("include_paths")


def library_paths(device_type="cpu", torch_include_dirs=True, cross_target_platform=None):
    raise _no_cpp("library_paths")


def get_compiler_abi_compatibility_and_version(compiler):
    raise _no_cpp("get_compiler_abi_compatibility_and_version")


def is_ninja_available():
    import shutil
    return shutil.which("ninja") is not None


def verify_ninja_availability():
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja)")
