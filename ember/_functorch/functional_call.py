"""stack_module_state (torch/_functorch/functional_call.py): the parameters and buffers of
several same-shaped modules stacked along a new first dim, for vmap over an ensemble."""
from .._dispatch.dispatcher import lookup as _lookup


def stack_module_state(models):
    """({name: stacked parameter}, {name: stacked buffer}) of `models`; the stacked
    parameters are new leaves that require grad (as PyTorch's)."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    stack = _lookup("stack")

    def construct(named):
        names = [n for n, _ in named(models[0])]
        out = {}
        for k, name in enumerate(names):
            tensors = [list(named(m))[k][1] for m in models]
            out[name] = stack([t.detach() for t in tensors], 0)
        return out
    params = construct(lambda m: m.named_parameters())
    for name, p in params.items():
        p.requires_grad_(dict(models[0].named_parameters())[name].requires_grad)
    buffers = construct(lambda m: m.named_buffers())
    return params, buffers
