import random

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._columns import source_length

__all__ = ["SamplerIterDataPipe", "ShufflerIterDataPipe"]


class SamplerIterDataPipe(IterDataPipe):
    """The items of `datapipe` in the order a `sampler` (built as
    `sampler(datapipe, *sampler_args, **sampler_kwargs)`) yields them."""

    def __init__(self, datapipe, sampler=None, sampler_args=None, sampler_kwargs=None):
        from ...sampler import SequentialSampler
        if not hasattr(datapipe, "__len__"):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        super().__init__()
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else sampler_kwargs
        self.sampler = (sampler or SequentialSampler)(
            *self.sampler_args, data_source=self.datapipe, **self.sampler_kwargs)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return source_length(self, self.sampler)


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    """The items of `datapipe` shuffled through a buffer of `buffer_size` (functional name:
    ``shuffle``): once the buffer is full, each new item takes the place of a random one, which
    is yielded; at the end the rest come out in random order.

    Randomness comes from a Python `random.Random` seeded at each new iterator: by `set_seed`
    if it was called since the last pass (the DataLoader does, from its generator, so that all
    workers shuffle alike before sharding), else by a draw from ember's default generator.
    `set_shuffle(False)` turns it into a pass-through."""

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        super().__init__()
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        if unbatch_level == 0:
            self.datapipe = datapipe
        else:
            self.datapipe = datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._buffer = []
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                idx = self._rng.randint(0, len(self._buffer) - 1)
                val, self._buffer[idx] = self._buffer[idx], x
                yield val
            else:
                self._buffer.append(x)
        while self._buffer:
            idx = self._rng.randint(0, len(self._buffer) - 1)
            yield self._buffer.pop(idx)

    def __len__(self):
        return source_length(self, self.datapipe)

    def reset(self):
        from ..... import empty, int64
        self._buffer = []
        if self._enabled:
            if self._seed is None:
                self._seed = int(empty((), dtype=int64).random_().item())
            self._rng.seed(self._seed)
            self._seed = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_rng"] = self._rng.getstate()
        return state

    def __setstate__(self, state):
        rng_state = state.pop("_rng")
        self.__dict__.update(state)
        self._rng = random.Random()
        self._rng.setstate(rng_state)
