"""`import torch` in a new interpreter started by a process that runs under `python -m ember`
(a `subprocess` of `sys.executable`): this directory is first on the PYTHONPATH the alias
hands down (ember/utils/_torch_alias.py), so the import lands here, and installs the alias --
`torch` is ember from here on, as in the parent."""
import sys

if __name__ == "torch":  # imported as the placeholder, not walked as an ember submodule
    del sys.modules["torch"]  # install() enters ember under the name
    from ember.utils._torch_alias import install
    install()
