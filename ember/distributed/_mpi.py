"""The MPI engine under ember.distributed, found on first use: mpi4py (the Python binding,
imported lazily so that `import ember` never starts MPI) and mpiexec (the MPI launcher)."""
import importlib.util
import os
import shutil
import sys
import sysconfig

INSTALL_HINT = ("ember.distributed runs over MPI through mpi4py, which is not installed: "
                "`pip install 'ember[distributed]'` installs mpi4py and mpich (which brings "
                "mpiexec)")


def is_available():
    """True if mpi4py can be imported (without importing it: that would initialise MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_initialized():
    """True once this process has imported mpi4py.MPI, which initialises MPI."""
    return "mpi4py.MPI" in sys.modules


def MPI():
    """The mpi4py.MPI module; importing it initialises MPI (MPI_Init_thread)."""
    try:
        from mpi4py import MPI as module
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return module


def find_mpiexec():
    """Path of the mpiexec that belongs to this Python environment.

    The mpich wheel installs mpiexec as an executable next to the interpreter's scripts
    (`<prefix>/bin`), which is not on PATH when the interpreter is called by its full path;
    so look there first, then in the user scheme (`pip install --user`), then on PATH.
    $EMBER_MPIEXEC overrides the search.
    """
    explicit = os.environ.get("EMBER_MPIEXEC")
    if explicit:
        return explicit
    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable),
               os.path.join(sys.prefix, "bin")]
    try:
        folders.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    for folder in folders:
        for name in ("mpiexec", "mpiexec.hydra", "mpirun"):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    path = shutil.which("mpiexec") or shutil.which("mpirun")
    if path is None:
        raise FileNotFoundError("mpiexec was not found next to this Python "
                                f"({sys.executable}) nor on PATH: `pip install mpich` "
                                "installs one (or set $EMBER_MPIEXEC)")
    return path
