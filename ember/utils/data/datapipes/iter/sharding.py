from enum import IntEnum

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["SHARDING_PRIORITIES", "ShardingFilterIterDataPipe"]


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


class _ShardingIterDataPipe(IterDataPipe):
    def apply_sharding(self, num_of_instances, instance_id, sharding_group):
        raise NotImplementedError


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(_ShardingIterDataPipe):
    """Every `num_of_instances`-th item, starting at `instance_id` (functional name:
    ``sharding_filter``). The DataLoader calls `apply_sharding(num_workers, worker_id)` in each
    worker, so the workers split the stream between them instead of each yielding all of it.

    Sharding groups nest: with DISTRIBUTED (n ranks) and MULTIPROCESSING (m workers) both set,
    the stream is split n*m ways, the instance being rank + n * worker."""

    def __init__(self, source_datapipe, sharding_group_filter=None):
        super().__init__()
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups = {}
        self.num_of_instances = 1
        self.instance_id = 0
        self._update_num_of_instances()

    def apply_sharding(self, num_of_instances, instance_id,
                       sharding_group=SHARDING_PRIORITIES.DEFAULT):
        if instance_id >= num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than "
                             f"num_of_instances({num_of_instances})")
        has_default = SHARDING_PRIORITIES.DEFAULT in self.groups
        if (has_default and sharding_group != SHARDING_PRIORITIES.DEFAULT) or \
                (self.groups and not has_default and sharding_group == SHARDING_PRIORITIES.DEFAULT):
            raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self._update_num_of_instances()

    def _update_num_of_instances(self):
        self.num_of_instances, self.instance_id = 1, 0
        for key in sorted(self.groups, reverse=True):
            if self.sharding_group_filter is None or key == self.sharding_group_filter:
                group_instances, group_id = self.groups[key]
                self.instance_id += self.num_of_instances * group_id
                self.num_of_instances *= group_instances

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        if hasattr(self.source_datapipe, "__len__"):
            total = len(self.source_datapipe)
            return total // self.num_of_instances + \
                (1 if self.instance_id < total % self.num_of_instances else 0)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
