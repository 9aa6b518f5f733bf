"""torch.utils.collect_env: the environment report a bug report starts with
(`python -m torch.utils.collect_env`, or `python -m ember.utils.collect_env`).

PyTorch's report names its build (CUDA, ROCm, compilers) and the GPUs it finds. ember is Python
on NumPy (optionally CuPy for CUDA), so its report names the versions of those, the Python and
OS running them, the CPU, the threads ember's kernels use, and whether a CUDA device is usable.
"""
import collections
import importlib.metadata
import locale
import os
import platform
import subprocess
import sys

__all__ = ["get_env_info", "get_pretty_env_info", "main"]

SystemEnv = collections.namedtuple("SystemEnv", [
    "torch_version", "is_debug_build", "cuda_compiled_version", "hip_compiled_version",
    "os", "libc_version", "python_version", "python_platform", "cpu_count", "cpu_info",
    "num_threads", "is_cuda_available", "cuda_runtime_version", "default_dtype",
    "default_device", "pip_packages"])

_RELEVANT_PACKAGES = ("numpy", "scipy", "cupy", "cupy-cuda12x", "cupy-cuda11x", "ml_dtypes",
                      "onnx", "onnxruntime", "torch", "torchvision", "optree")


def _run(command):
    """stdout of a shell command, or None if it fails."""
    try:
        out = subprocess.run(command, shell=True, capture_output=True, timeout=30,
                             encoding=locale.getpreferredencoding(), errors="replace")
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _os_name():
    if sys.platform.startswith("linux"):
        release = platform.freedesktop_os_release() if hasattr(platform, "freedesktop_os_release") \
            else {}
        name = release.get("PRETTY_NAME", "Linux")
        return f"{name} ({platform.machine()})"
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]} ({platform.machine()})"
    return f"{platform.system()} {platform.release()} ({platform.machine()})"


def _cpu_info():
    if sys.platform.startswith("linux"):
        return _run("lscpu") or "Could not collect"
    return platform.processor() or "Could not collect"


def _pip_packages():
    found = []
    for name in _RELEVANT_PACKAGES:
        try:
            found.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def get_env_info():
    import ember
    from ember import version as _version
    libc = "-".join(part for part in platform.libc_ver() if part) or "N/A"
    cuda_available = ember.cuda.is_available()
    return SystemEnv(
        torch_version=str(_version.__version__),
        is_debug_build=_version.debug,
        cuda_compiled_version=_version.cuda,
        hip_compiled_version=_version.hip or "N/A",
        os=_os_name(),
        libc_version=libc,
        python_version=f"{sys.version.replace(chr(10), ' ')} ({sys.maxsize.bit_length() + 1}-bit "
                       "runtime)",
        python_platform=platform.platform(),
        cpu_count=os.cpu_count(),
        cpu_info=_cpu_info(),
        num_threads=ember.get_num_threads(),
        is_cuda_available=cuda_available,
        cuda_runtime_version=_run("nvcc --version | tail -n 1") if cuda_available else None,
        default_dtype=str(ember.get_default_dtype()),
        default_device=str(ember.get_default_device()),
        pip_packages=_pip_packages())


def _text(value):
    if value is None:
        return "Could not collect"
    return str(value)


def get_pretty_env_info():
    info = get_env_info()
    lines = [
        f"PyTorch version: {info.torch_version}",
        "Implementation: ember (PyTorch's API in Python on NumPy)",
        f"Is debug build: {info.is_debug_build}",
        f"CUDA used to build PyTorch: {_text(info.cuda_compiled_version)}",
        f"ROCM used to build PyTorch: {info.hip_compiled_version}",
        "",
        f"OS: {info.os}",
        f"Libc version: {info.libc_version}",
        "",
        f"Python version: {info.python_version}",
        f"Python platform: {info.python_platform}",
        f"Is CUDA available: {info.is_cuda_available}",
        f"CUDA runtime version: {_text(info.cuda_runtime_version)}",
        f"Default dtype: {info.default_dtype}",
        f"Default device: {info.default_device}",
        f"Intra-op threads: {info.num_threads}",
        "",
        f"CPU ({info.cpu_count} logical):",
        info.cpu_info,
        "",
        "Versions of relevant libraries:",
    ]
    lines += [f"[pip3] {package}" for package in info.pip_packages] or ["[pip3] none found"]
    return "\n".join(lines) + "\n"


def main():
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
