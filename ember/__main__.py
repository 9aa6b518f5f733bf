"""`python -m ember script.py [args]`, `python -m ember -m module [args]` or `python -m ember -c
code [args]`: run a PyTorch script, module (e.g. `-m pytest`) or program text unchanged, with
torch -> ember."""
import os
import runpy
import sys
import types

from .utils._torch_alias import install

_USAGE = ("usage: python -m ember SCRIPT.py [ARGS...]  or  python -m ember -m MODULE [ARGS...]"
          "  or  python -m ember -c CODE [ARGS...]   (runs SCRIPT, MODULE or CODE with "
          "torch -> ember)")


def main():
    args = sys.argv[1:]
    if not args or (args[0] in ("-m", "-c") and len(args) < 2):
        print(_USAGE, file=sys.stderr)
        raise SystemExit(2)
    install()
    if args[0] == "-m":
        # as `python -m MODULE`: argv[0] becomes the module's file, the current directory is importable
        sys.argv = args[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        # as `python -c CODE`: argv[0] is "-c", the current directory is importable
        # (the program text is module __main__ itself, so unittest.main() finds its tests)
        sys.argv = ["-c"] + args[2:]
        sys.path.insert(0, "")
        main_module = types.ModuleType("__main__")
        sys.modules["__main__"] = main_module
        exec(compile(args[1], "<string>", "exec"), main_module.__dict__)
    else:
        sys.argv = args
        runpy.run_path(os.path.abspath(args[0]), run_name="__main__")  # __file__ absolute, as python sets it


if __name__ == "__main__":
    main()
