"""Which public callables of `torch`, `torch.Tensor`, `torch.nn.functional`, `torch.fft`,
`torch.signal.windows`, `torch.special`, `torch.linalg` and `torch.masked` ember has.

Run `python tools/coverage.py` (PyTorch must be installed): it prints, per namespace, how many of
torch's public callables exist in ember, the total, and the missing names. Private names
(a leading underscore), classes that are not functions (dtypes, modules, storage types,
exceptions) and torch-internal plumbing are left out: they are not the op surface.
"""
import inspect
import sys
import types

import torch
import torch.fft
import torch.linalg
import torch.masked
import torch.nn.functional
import torch.signal.windows
import torch.special

import ember
import ember.fft
import ember.linalg
import ember.masked
import ember.nn.functional
import ember.signal.windows
import ember.special

# torch attributes that are callable but are not operators a model or tutorial would call
_PLUMBING_PREFIXES = ("is_", "set_", "get_", "use_", "compile", "export", "jit", "cuda", "mps",
                      "xpu", "sym_", "fbgemm", "quantize", "q_", "mkldnn", "miopen", "cudnn",
                      "sparse", "fake_quantize", "native_", "batch_norm_", "conv_tbc",
                      "_", "vmap", "cond", "while_loop", "library", "fork", "wait", "save",
                      "load", "from_file", "promote_types", "typename", "autocast",
                      "segment_reduce", "nested", "quantized")


def _public_callables(obj, skip_prefixes=()):
    names = set()
    for name in dir(obj):
        if name.startswith("_") or name.startswith(skip_prefixes):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 -- some attributes raise on access
            continue
        if isinstance(value, types.ModuleType) or not callable(value):
            continue
        if inspect.isclass(value):  # dtypes, storages, exceptions, nn.Module classes
            continue
        names.add(name)
    return names


def namespaces():
    """(label, torch object, ember object, names that count)."""
    return [
        ("torch", torch, ember, _public_callables(torch, _PLUMBING_PREFIXES)),
        ("torch.Tensor", torch.Tensor, ember.Tensor,
         {n for n in _public_callables(torch.Tensor) if not n.startswith(_PLUMBING_PREFIXES)} |
         {n for n in dir(torch.Tensor) if n.startswith("__") and n.endswith("__") and
          n[2:-2] in _DUNDER_OPS}),
        ("torch.nn.functional", torch.nn.functional, ember.nn.functional,
         _public_callables(torch.nn.functional) - _NOT_FUNCTIONAL),
        ("torch.fft", torch.fft, ember.fft, _public_callables(torch.fft)),
        ("torch.signal.windows", torch.signal.windows, ember.signal.windows,
         _public_callables(torch.signal.windows)),
        ("torch.special", torch.special, ember.special, _public_callables(torch.special)),
        ("torch.linalg", torch.linalg, ember.linalg, _public_callables(torch.linalg)),
        # MaskedTensor is a class: counted by name, as the functions are
        ("torch.masked", torch.masked, ember.masked,
         _public_callables(torch.masked) | {"MaskedTensor"}),
    ]


# arithmetic and comparison dunders are part of the Tensor API
_DUNDER_OPS = {"add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv",
               "rtruediv", "itruediv", "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod",
               "pow", "rpow", "ipow", "matmul", "rmatmul", "neg", "pos", "abs", "invert", "eq",
               "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "lshift", "rshift",
               "getitem", "setitem", "len", "iter", "bool", "float", "int", "index", "repr"}
# typing helpers and re-exports torch.nn.functional happens to carry
_NOT_FUNCTIONAL = {"Callable", "Optional", "Union", "List", "Tuple", "boolean_dispatch",
                   "handle_torch_function", "has_torch_function", "has_torch_function_unary",
                   "has_torch_function_variadic", "assert_int_or_pair", "TYPE_CHECKING"}


def report(show_missing=True, out=sys.stdout):
    total_have = total_all = 0
    for label, _, ember_obj, names in namespaces():
        have = sorted(n for n in names if hasattr(ember_obj, n))
        missing = sorted(names - set(have))
        total_have += len(have)
        total_all += len(names)
        print(f"{label:22s} {len(have):4d} / {len(names):4d} present", file=out)
        if show_missing and missing:
            print(f"  missing: {', '.join(missing)}", file=out)
    print(f"{'total':22s} {total_have:4d} / {total_all:4d} public callables of torch present",
          file=out)
    return total_have, total_all


if __name__ == "__main__":
    report(show_missing="--counts" not in sys.argv)
