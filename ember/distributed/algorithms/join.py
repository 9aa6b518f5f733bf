"""The join context manager: training with uneven inputs across ranks (PyTorch's
torch.distributed.algorithms.join).

When one rank runs out of batches before the others, the others' next collective would wait
for it forever. Inside `with Join([ddp_model, ...]):` a rank that has left its loop does not
exit; it *shadows* the collectives the others still run, iteration by iteration, until all
have joined:

- each iteration, every rank still training all-reduces a 1 (`notify_join_context`, called
  by the first Joinable, e.g. at the start of DDP's forward); a joined rank all-reduces a 0
  in the same slot, so the sum counts the ranks still training;
- if that count is non-zero, the joined rank calls each Joinable's `main_hook`, which issues
  the same collectives the training ranks issue in one iteration (for DDP: the buffer
  broadcast, and one all-reduce of zeros per gradient bucket);
- once the count is zero every rank has joined; the `post_hook`s run (DDP broadcasts the
  final model from the last rank to join) and the context exits.
"""
import warnings
from collections import namedtuple

import ember
from .. import collectives, process_group

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank does: `main_hook()` once per iteration that others still run,
    `post_hook(is_last_joiner)` once all ranks have joined."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


_JoinConfig = namedtuple("_JoinConfig", ["enable", "throw_on_early_termination",
                                         "is_first_joinable"])
_DISABLED = _JoinConfig(False, False, False)


class Joinable:
    """A class that takes part in Join: it provides `join_hook()`, `join_device` and
    `join_process_group`, and calls `Join.notify_join_context(self)` before the collectives
    of each iteration."""

    def __init__(self):
        self._join_config = _DISABLED

    def join_hook(self, **kwargs):
        raise NotImplementedError

    @property
    def join_device(self):
        raise NotImplementedError

    @property
    def join_process_group(self):
        raise NotImplementedError


class Join:
    """Context manager that lets ranks with fewer inputs shadow the others until all are done
    (see the module docstring)."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group) for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[0].join_device
        self._rank = process_group.get_rank(self._process_group)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if not self._enable or exc_type is not None:
                return
            is_last_joiner = True
            iterations = 0
            while self._count_training_ranks():
                if iterations == 1000:
                    warnings.warn(f"Detected uneven input skew of greater than 1000. This "
                                  f"means that rank {self._rank} has at least 1000 fewer "
                                  f"inputs than other currently-active ranks. This level of "
                                  f"skew could lead to performance degradation during "
                                  f"training.")
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                iterations += 1
            for hook in self._join_hooks:
                hook.post_hook(is_last_joiner)
        finally:
            for j in self._joinables:
                j._join_config = _DISABLED

    def _count_training_ranks(self):
        count = ember.zeros(1)
        collectives.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self):
        ones = ember.ones(1)
        collectives.all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a Joinable before its collectives of an iteration: all-reduces a 1 (this
        rank is still training). Returns that all-reduce's Work for the first Joinable in a
        join context, else None. With throw_on_early_termination, raises on every rank once
        some rank has joined."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        work = collectives.all_reduce(ember.ones(1), group=group, async_op=True)
        if config.throw_on_early_termination:
            zeros = ember.zeros(1)
            collectives.all_reduce(zeros, group=group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
