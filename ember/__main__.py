"""`python -m ember script.py [args]` or `python -m ember -m module [args]`: run a PyTorch script
or module (e.g. `-m pytest`) unchanged, with torch -> ember."""
import os
import runpy
import sys

from .utils._torch_alias import install

_USAGE = ("usage: python -m ember SCRIPT.py [ARGS...]  or  python -m ember -m MODULE [ARGS...]"
          "   (runs SCRIPT or MODULE with torch -> ember)")


def main():
    args = sys.argv[1:]
    if not args or (args[0] == "-m" and len(args) < 2):
        print(_USAGE, file=sys.stderr)
        raise SystemExit(2)
    install()
    if args[0] == "-m":
        # as `python -m MODULE`: argv[0] becomes the module's file, the current directory is importable
        sys.argv = args[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        runpy.run_path(os.path.abspath(args[0]), run_name="__main__")  # __file__ absolute, as python sets it


if __name__ == "__main__":
    main()
