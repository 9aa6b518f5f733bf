"""torch.utils._import_utils: whether an optional module is installed, found without importing
it, and `import_dill()`, the `dill` module (or None) with its global pickler changes undone."""
import functools
import importlib.util


def _check_module_exists(name):
    """True when a top-level module `name` can be found (not imported: some libraries change
    global state when imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


@functools.lru_cache
def dill_available():
    return _check_module_exists("dill")


@functools.lru_cache
def import_dill():
    if not dill_available():
        return None
    import dill
    dill.extend(use_dill=False)   # dill would otherwise extend the standard pickler's table
    return dill
