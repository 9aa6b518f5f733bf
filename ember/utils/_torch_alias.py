"""Run unchanged PyTorch code on ember: make `import torch` (and `torch.nn`, `from torch.utils.data
import DataLoader`, ...) resolve to ember's modules.

`import ember as torch` renames only the top-level name; a later `from torch import nn` or
`import torch.nn.functional as F` goes through Python's import system, which looks for a module
called `torch`. `install()` registers ember as `torch` in `sys.modules` and adds a finder that
serves every `torch.X` submodule as the matching `ember.X` (so both names are one module object).

    python -m ember train.py --epochs 1     # runs train.py with torch -> ember

Processes started with the 'spawn' or 'forkserver' method (mp.spawn, DataLoader workers) are
new interpreters that re-import the script before anything else runs; the alias reaches them
through multiprocessing's preparation data, whose unpickling installs it in the child before
the script is imported (`_AliasInChild`). Any other new interpreter (a pytest-xdist worker, a
subprocess of sys.executable) inherits a PYTHONPATH whose first directory holds placeholder
`torch`/`torchvision` packages that install the alias on import (`utils/_alias_path`), and a
PYTEST_PLUGINS entry that installs it in each pytest-xdist worker (`utils/_alias_plugin.py`).

PyTorch's own test files import their harness from `torch.testing._internal` (OpInfo database,
ModuleInfo, optimizer database, ...). ember writes the core of that harness itself
(`ember/testing/_internal`); a harness module it does not have is read from the installed torch
package's source file -- the file only, torch itself is never imported -- and executed with
`torch` meaning ember (`_harness_source`).

`torchvision` is served the same way by `ember.vision`, which plays torchvision's role (datasets,
transforms, models, ops, utils): a script's `from torchvision import datasets, transforms` gets
ember's, never a real torchvision compiled against real torch.
"""
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HARNESS = "torch.testing._internal."
_ALIASES = (("torchvision", "ember.vision"), ("torch", "ember"))   # (name, ember's module)


def _target(fullname):
    """ember's module name for `torch[.X]` / `torchvision[.X]`, or None."""
    for name, ours in _ALIASES:
        if fullname == name or fullname.startswith(name + "."):
            return ours + fullname[len(name):]
    return None


class _TorchToEmber(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if _target(fullname) is not None:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        target = _target(spec.name)
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            missing = e.name or ""     # the target itself or a package above it
            source = _harness_source(spec.name) if (target + ".").startswith(missing + ".") else None
            if source is None:
                raise ModuleNotFoundError(f"No module named '{spec.name}' (ember has no "
                                          f"'{target}' yet)", name=spec.name) from e
            spec.loader_state = source
            return importlib.util.module_from_spec(source)
        _alias_loaded()
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        source = module.__spec__.loader_state
        if not module.__name__.startswith("ember"):
            # a harness module read from torch's source: run it now, `import torch` being ember
            module.__spec__ = source
            with _torch_names(_NAMED_BY_HARNESS.get(module.__name__, ())):
                source.loader.exec_module(module)
            return
        # the ember module is already executed; the import system has just given it the
        # `torch.X` spec, which disagrees with its __package__ ("ember..."): every relative
        # import inside it would then raise ImportWarning. Its own spec goes back.
        module.__spec__ = source


# Namespaces whose __name__ a harness module reads while it is imported to name tests:
# common_modules names ModuleInfo tests `test_forward_nn_Linear_...` from
# `torch.nn.modules.__name__`; with ember's names they would read `..._ember_nn_Linear_...`.
_NAMED_BY_HARNESS = {
    "torch.testing._internal.common_modules": (
        "nn.modules", "ao.nn.qat.modules", "ao.nn.quantizable.modules",
        "ao.nn.quantized.modules"),
}


@contextlib.contextmanager
def _torch_names(namespaces):
    """While a harness module is executed, the given ember namespaces answer `__name__` with
    their torch name; afterwards their own names come back."""
    modules = [importlib.import_module("ember." + n) for n in namespaces]
    try:
        for m in modules:
            m.__name__ = "torch" + m.__name__[len("ember"):]
        yield
    finally:
        for m in modules:
            m.__name__ = "ember" + m.__name__[len("torch"):]


def _harness_source(name):
    """The spec of `torch.testing._internal.<...>` as the installed torch package's source file
    (a module or a package), or None when torch is not installed or has no such file. Found by
    the path finder alone, so the real torch package is not imported."""
    if not name.startswith(_HARNESS):
        return None
    torch_spec = importlib.machinery.PathFinder.find_spec("torch")
    if torch_spec is None or not torch_spec.submodule_search_locations:
        return None
    path = os.path.join(torch_spec.submodule_search_locations[0], *name.split(".")[1:])
    if os.path.isfile(os.path.join(path, "__init__.py")):
        return importlib.util.spec_from_file_location(
            name, os.path.join(path, "__init__.py"), submodule_search_locations=[path])
    if os.path.isfile(path + ".py"):
        return importlib.util.spec_from_file_location(name, path + ".py")
    return None


def _alias_loaded():
    """Enter every loaded ember module under its torch name too. An import of an entered name
    returns the module as it is; only a first import goes through the finder, and that one sets
    the module as an attribute of its package -- which would shadow a function of the same name
    (`torch.autograd.gradcheck` is the function; `import torch.autograd.gradcheck` must leave
    it so)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("ember.") and module is not None:
            sys.modules.setdefault("torch" + name[len("ember"):], module)
            if name == "ember.vision" or name.startswith("ember.vision."):
                sys.modules.setdefault("torchvision" + name[len("ember.vision"):], module)


class _AliasInChild:
    """Pickles as a call of install(): put in a spawned child's preparation data, it installs
    the alias there before the child imports the parent's script."""

    def __reduce__(self):
        return install, ()


def _carry_to_children():
    import multiprocessing.spawn as spawn
    prepare = spawn.get_preparation_data
    if getattr(prepare, "_ember_alias", False):
        return

    def get_preparation_data(name):
        data = prepare(name)
        data["ember_torch_alias"] = _AliasInChild()   # unknown keys are ignored by prepare()
        return data
    get_preparation_data._ember_alias = True
    spawn.get_preparation_data = get_preparation_data


def install():
    """Make `torch` mean ember for the rest of this process and the processes it spawns.
    Fails if real torch is loaded."""
    loaded = sys.modules.get("torch")
    if loaded is not None and not getattr(loaded, "__name__", "").startswith("ember"):
        raise RuntimeError("the real torch is already imported in this process; install the "
                           "ember alias before anything imports torch")
    if not any(isinstance(f, _TorchToEmber) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchToEmber())
    import ember
    sys.modules["torch"] = ember
    _alias_loaded()
    _carry_to_children()
    _hand_down_to_new_interpreters()


def _hand_down_to_new_interpreters():
    """Put the placeholder `torch`/`torchvision` packages first on the PYTHONPATH child
    interpreters inherit (pytest-xdist workers, subprocesses of sys.executable): their first
    `import torch` installs the alias there too."""
    shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_alias_path")
    paths = os.environ.get("PYTHONPATH", "")
    if shim not in paths.split(os.pathsep):
        os.environ["PYTHONPATH"] = shim + (os.pathsep + paths if paths else "")
    # pytest-xdist's workers build their sys.path themselves: a plugin installs it there
    plugins = os.environ.get("PYTEST_PLUGINS", "")
    if "ember.utils._alias_plugin" not in plugins.split(","):
        os.environ["PYTEST_PLUGINS"] = ",".join(p for p in (plugins, "ember.utils._alias_plugin")
                                                if p)
