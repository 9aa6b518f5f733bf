"""The symbolic-function registry: for each op ("aten::conv2d", "mylib::op"), the functions that
write it as ONNX nodes, by the opset each was written for (PyTorch's torch.onnx registration).

A symbolic function is `fn(g, *args)`: `g` is the GraphContext, tensor arguments arrive as
Values and the others as the Python values the op was called with. It returns the Value (or a
tuple of Values) standing for the op's tensor results. Export picks, for its opset, the function
registered for the highest opset not above it. An in-place op (`relu_`) uses its out-of-place
op's function.
"""
import re

from .errors import OnnxExporterError

MIN_OPSET = 17

_symbolics = {}  # qualified op name -> {opset: fn}


def onnx_symbolic(name, opset=MIN_OPSET):
    """Decorator registering `fn` as the symbolic function of op `name` from `opset` on."""
    def deco(fn):
        _symbolics.setdefault(name, {})[opset] = fn
        return fn
    return deco


def lookup(name, opset):
    """The symbolic function of op `name` ("aten::add") for `opset`, or None."""
    for candidate in (name, name[:-1] if name.endswith("_") else None):
        versions = _symbolics.get(candidate)
        if versions:
            usable = [v for v in versions if v <= opset]
            if usable:
                return versions[max(usable)]
    return None


def first_opset(name):
    """The lowest opset op `name` has a symbolic function for, or None."""
    versions = _symbolics.get(name) or _symbolics.get(name[:-1] if name.endswith("_") else "")
    return min(versions) if versions else None


def has_symbolic(name):
    return name in _symbolics or (name.endswith("_") and name[:-1] in _symbolics)


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Register `symbolic_fn(g, *args)` for op `symbolic_name` ("namespace::name") from opset
    `opset_version` on; it replaces the built-in one where both apply."""
    if symbolic_name.startswith("::"):
        symbolic_name = "aten" + symbolic_name
    if not re.match(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$", symbolic_name):
        raise OnnxExporterError(
            f"Failed to register operator {symbolic_name}. The symbolic name must match the "
            "format domain::name, and should start with a letter and contain only "
            "alphanumerical characters")
    if symbolic_name.split("::")[0] == "onnx":
        raise OnnxExporterError(f"Failed to register operator {symbolic_name}. onnx domain is "
                                "reserved for ONNX operators.")
    _custom.setdefault(symbolic_name, {})[opset_version] = _symbolics.get(
        symbolic_name, {}).get(opset_version)
    onnx_symbolic(symbolic_name, opset_version)(symbolic_fn)


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Remove a registration made by register_custom_op_symbolic (a built-in function it
    replaced comes back)."""
    if symbolic_name.startswith("::"):
        symbolic_name = "aten" + symbolic_name
    replaced = _custom.get(symbolic_name, {}).pop(opset_version, None)
    versions = _symbolics.get(symbolic_name, {})
    if replaced is not None:
        versions[opset_version] = replaced
    else:
        versions.pop(opset_version, None)
        if not versions:
            _symbolics.pop(symbolic_name, None)


_custom = {}  # name -> {opset: the built-in function a custom one replaced (or None)}
