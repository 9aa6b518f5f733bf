"""`python -m ember script.py [args]`: run a PyTorch script unchanged, with torch -> ember."""
import os
import runpy
import sys

from .utils._torch_alias import install


def main():
    if len(sys.argv) < 2:
        print("usage: python -m ember SCRIPT.py [ARGS...]   (runs SCRIPT with torch -> ember)",
              file=sys.stderr)
        raise SystemExit(2)
    install()
    sys.argv = sys.argv[1:]
    runpy.run_path(os.path.abspath(sys.argv[0]), run_name="__main__")  # __file__ absolute, as python sets it


if __name__ == "__main__":
    main()
