"""`import torchvision` in a new interpreter started under `python -m ember`: ember.vision, as
in the parent (see ../torch/__init__.py)."""
import sys

if __name__ == "torchvision":  # imported as the placeholder, not walked as an ember submodule
    del sys.modules["torchvision"]
    from ember.utils._torch_alias import install
    install()
    import ember.vision
    sys.modules["torchvision"] = ember.vision
