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

    def stacked_leaf(tensors, name):
        flags = {t.requires_grad for t in tensors}
        if len(flags) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        out = stack([t.detach() for t in tensors], 0)
        return out.requires_grad_() if True in flags else out

    def construct(named):
        tables = [dict(named(m)) for m in models]
        return {name: stacked_leaf([t[name] for t in tables], name) for name in tables[0]}
    return construct(lambda m: m.named_parameters()), construct(lambda m: m.named_buffers())
