"""functional_call: run a module with some of its parameters and buffers replaced by given
tensors, as if they were its own, without changing the module afterwards.

The given tensors are swapped into the owning submodules' `_parameters` / `_buffers` (or set
as plain attributes) for the duration of the call and the originals are swapped back in a
`finally`. The tensors need not be leaves or Parameters, so gradients flow back to whatever
they were computed from, which is what makes meta-learning and per-sample-gradient code work.

Tied weights (one tensor reachable under several names) stay tied by default: a value given
for one of the names is used for all of them.
"""
import contextlib
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ..._core.tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _owner(module, name):
    """The submodule holding the dotted `name`, and the last component of the name."""
    prefix, _, attr = name.rpartition(".")
    owner = module
    if prefix:
        for part in prefix.split("."):
            try:
                child = getattr(owner, part)
            except AttributeError as ex:
                raise AttributeError(f"{owner._get_name()} has no attribute `{part}`") from ex
            if not isinstance(child, Module):
                raise TypeError(f"submodule `{prefix}`: {child} is not an instance of "
                                "torch.nn.Module")
            owner = child
    return owner, attr


def _swap_tensor(module, name, tensor):
    """Put `tensor` under the dotted `name` (deleting it for _MISSING) and return what was
    there before (_MISSING if nothing was)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    owner, attr = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            orig = table[attr]
            if tensor is _MISSING:
                del table[attr]
            else:
                table[attr] = tensor
            return orig
    orig = getattr(owner, attr) if hasattr(owner, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(owner, attr, tensor)
    elif hasattr(owner, attr):
        delattr(owner, attr)
    return orig


def _named_tensors(module):
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Extend the given name -> tensor map to every other name of each tied tensor; a
    ValueError if different values were given for names of the same tensor."""
    names_of = {}
    for name, tensor in _named_tensors(module):
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = [name for name in parameters_and_buffers if name in tied]
    for name in given_tied:
        given_values = {id(parameters_and_buffers[n]) for n in tied[name]
                        if n in parameters_and_buffers}
        if len(given_values) > 1:
            raise ValueError(f"functional_call got multiple values for keys "
                             f"{sorted(tied[name])}, which are tied. Consider using "
                             "tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    if tie_weights:
        replacements = _untie_named_tensors_map(module, parameters_and_buffers)
    else:
        replacements = parameters_and_buffers
    if strict:
        valid = {name for name, _ in _named_tensors(module)}
        unexpected = sorted(set(replacements) - valid)
        missing = sorted(valid - set(replacements))
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    originals = {}
    try:
        for name, tensor in replacements.items():
            originals[name] = _swap_tensor(module, name, tensor)
        yield
    finally:
        # put the originals back; the dict passed in gets what the call left in the module
        # (the same tensors, unless the forward reassigned an attribute)
        current = {name: _swap_tensor(module, name, orig) for name, orig in originals.items()}
        parameters_and_buffers.update({k: current[k] for k in parameters_and_buffers
                                       if k in current})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    from ... import jit
    from ..parallel import DataParallel
    # a scripted or traced module replays a recorded graph, so swapped-in tensors would not
    # reach it; PyTorch refuses rather than silently computing with the old weights
    if jit.is_tracing() or jit.is_scripting() or jit._is_script_module(module):
        raise RuntimeError("The stateless API can't be used with Jitted modules")
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated: `torch.func.functional_call` is the same call."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=_user_stacklevel())
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
