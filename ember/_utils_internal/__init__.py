"""torch._utils_internal: path helpers PyTorch's own code and tests import: `get_file_path`
(components under the directory holding the package), `get_file_path_2` (the components
joined), `get_writable_path` (the path if writable, else a new temporary directory)."""
import os
import tempfile

torch_parent = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def get_file_path(*path_components):
    return os.path.join(torch_parent, *path_components)


def get_file_path_2(*path_components):
    return os.path.join(*path_components)


def get_writable_path(path):
    if os.access(path, os.W_OK):
        return path
    return tempfile.mkdtemp(suffix=os.path.basename(path))
