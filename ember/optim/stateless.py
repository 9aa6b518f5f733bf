"""optim.swap_in_optimizer_params_and_state: run an optimizer, for the length of a `with`
block, on other parameter tensors and another state (given as an `optimizer.state_dict()`), then
put its own back.

The given state is keyed by packed parameter ids; the given parameters are matched to the
optimizer's groups in order (group 0's parameters first). Inside the block each live group holds
the given parameters and the given group's hyperparameters, and `optimizer.state` maps each given
parameter to a shallow copy of its state dict: in-place updates of state tensors reach the caller's
state_dict, new entries do not. On exit every group dict gets its old contents back (the same
`params` list object) and the old state.
"""
import contextlib
from collections import defaultdict

from .._core.tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           f"packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           f"packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           f"dictionaries.")
    return state


def _check_groups(optimizer, groups):
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than "
                           "the live optimizer.")
    return groups


def _group_ids(idx, live, given):
    """The packed ids of given group `idx`, after checking it matches the live group."""
    if not isinstance(given, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = given.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           f"param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           f"params than the live optimizer param group.")
    only_given = [k for k in given if k not in live]
    only_live = [k for k in live if k not in given]
    if only_given or only_live:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to "
                           f"exactly match the live optimizer group keys for group {idx}. Keys "
                           f"only in swap-in: {only_given}. Keys only in live: {only_live}.")
    return ids


def _plan(optimizer, parameters, optim_state):
    """(given state by packed id, [(live group, given group, its parameters)]), checked."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(optim_state.get("state"))
    groups = _check_groups(optimizer, optim_state.get("param_groups"))
    flat = list(parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (live, given) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(idx, live, given)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               f"optimizer.param_groups ordering.")
        plan.append((live, given, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra keys "
                           f"{extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    old_state = optimizer.state
    old_groups = [dict(g) for g in optimizer.param_groups]
    try:
        new_state = defaultdict(dict)
        for live, given, params in plan:
            live["params"] = params
            live.update((k, v) for k, v in given.items() if k != "params")
            for p, pid in zip(params, given["params"]):
                new_state[p] = dict(state.get(pid, {}))
        optimizer.state = new_state
        yield
    finally:
        for group, old in zip(optimizer.param_groups, old_groups):
            group.clear()
            group.update(old)
        optimizer.state = old_state
