"""torch._utils_internal: path helpers PyTorch's own code and tests import: `get_file_path`
(components under the directory holding the package), `get_file_path_2` (the components
joined), `get_writable_path` (the path if writable, else a new temporary directory), and
`deprecated` (publish a warning alias of a private function)."""
import functools
import os
import sys
import tempfile
import warnings

torch_parent = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def get_file_path(*path_components):
    return os.path.join(torch_parent, *path_components)


def get_file_path_2(*path_components):
    return os.path.join(*path_components)


def get_writable_path(path):
    if os.access(path, os.W_OK):
        return path
    return tempfile.mkdtemp(suffix=os.path.basename(path))


def deprecated():
    """Decorate a private `_name` function to also publish `name` in its module: the same
    function, warning (UserWarning) that it is deprecated on each call; `_name` stays silent."""
    def decorator(func):
        if not func.__name__.startswith("_"):
            raise ValueError("@deprecate must decorate a function whose name starts with a single "
                             "leading underscore (e.g. '_foo') as the api should be considered "
                             "internal for deprecation.")
        public_name = func.__name__[1:]
        module = sys.modules[func.__module__]
        if hasattr(module, public_name):
            raise RuntimeError(f"Cannot create alias '{public_name}' -> symbol already exists in "
                               f"{module.__name__}. Please rename it or consult a pytorch "
                               "developer on what to do")
        message = (f"{public_name} is DEPRECATED, please consider using an alternative "
                   "API(s). ")

        @functools.wraps(func)
        def alias(*args, **kwargs):
            warnings.warn(message, UserWarning, stacklevel=2)
            return func(*args, **kwargs)
        alias.__deprecated__ = message
        alias.__name__ = public_name
        outer, _, _ = func.__qualname__.rpartition(".")
        alias.__qualname__ = f"{outer}.{public_name}" if outer else public_name
        setattr(module, public_name, alias)
        return func
    return decorator
