"""Settings the DataLoader applies across a whole DataPipe graph (see graph.py): turning the
shuffling stages on or off, seeding the random stages, and sharding among workers."""
import inspect
import warnings

from .datapipes.iter.sharding import SHARDING_PRIORITIES, _ShardingIterDataPipe
from .graph import traverse_dps

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_settings",
           "get_all_graph_pipes"]


def get_all_graph_pipes(graph):
    """Every DataPipe of `graph`, once each, in depth-first order (a stage, then its sources)."""
    seen, result = set(), []
    stack = list(reversed(graph.items()))
    while stack:
        dp_id, (datapipe, sub_graph) = stack.pop()
        if dp_id not in seen:
            seen.add(dp_id)
            result.append(datapipe)
            stack.extend(reversed(sub_graph.items()))
    return result


def _has_method(datapipe, *names):
    return all(inspect.ismethod(getattr(datapipe, name, None)) for name in names)


def apply_sharding(datapipe, num_of_instances, instance_id,
                   sharding_group=SHARDING_PRIORITIES.DEFAULT):
    """Call `apply_sharding` on each sharding stage; two on one path would each keep 1/n of
    what the other kept, so that is an error."""

    def visit(graph, applied_above):
        for dp, sub_graph in graph.values():
            applied = applied_above
            if isinstance(dp, _ShardingIterDataPipe) or _has_method(dp, "apply_sharding"):
                if applied_above is not None:
                    raise RuntimeError("Sharding twice on a single pipeline is likely unintended "
                                       "and will cause data loss. Sharding already applied to "
                                       f"{applied_above} while trying to apply to {dp}")
                if len(inspect.signature(dp.apply_sharding).parameters) < 3:
                    dp.apply_sharding(num_of_instances, instance_id)
                else:
                    dp.apply_sharding(num_of_instances, instance_id, sharding_group=sharding_group)
                applied = dp
            visit(sub_graph, applied)

    visit(traverse_dps(datapipe), None)
    return datapipe


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turn every stage with `set_shuffle` and `set_seed` on or off; `shuffle=True` on a
    pipeline with none appends a Shuffler (and warns)."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in get_all_graph_pipes(traverse_dps(datapipe))
                 if _has_method(dp, "set_shuffle", "set_seed")]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
                      "Adding one at the end. Be aware that the default buffer size might not "
                      "be sufficient for your task.", stacklevel=2)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe, rng):
    """Give every stage with `set_seed` a seed drawn from the generator `rng`, in graph order,
    so that copies of one pipeline seeded from equal generators make equal random choices."""
    from ... import empty, int64
    seen = set()
    for dp in get_all_graph_pipes(traverse_dps(datapipe)):
        if _has_method(dp, "set_seed") and id(dp) not in seen:
            seen.add(id(dp))
            dp.set_seed(int(empty((), dtype=int64).random_(generator=rng).item()))
    return datapipe
