"""DataPipes: datasets built as a chain of small composable stages.

An `IterDataPipe` is an `IterableDataset` that wraps another one and transforms its stream
(`IterableWrapper(range(10)).map(f).filter(g).shuffle().sharding_filter()`); a `MapDataPipe` is
a map-style `Dataset` built the same way. Every stage keeps its source as an attribute, so the
pipeline is a graph that `ember.utils.data.graph.traverse_dps` can walk; the DataLoader walks it
to switch shuffling on or off, to seed the random stages, and to shard the stream among worker
processes (`ember.utils.data.graph_settings`).

Each stage has a functional form: `functional_datapipe("map")` on a class registers
`source.map(*args)` as `Mapper(source, *args)`.

Note [One iterator per IterDataPipe]
Stages may hold per-pass state (a shuffle buffer, a sharding position), so, as in PyTorch, only
the newest iterator of an IterDataPipe is valid: creating one calls the stage's `reset()` and
invalidates the older ones, and advancing an invalidated iterator raises RuntimeError. The
check wraps each subclass's generator `__iter__` (see `_track_iterator`); a stage whose
`__iter__` returns an iterator object (say `self`, with its own `__next__`) is only reset.
"""
import functools
import inspect
import pickle

from ..dataset import Dataset, IterableDataset

__all__ = ["DataChunk", "IterDataPipe", "MapDataPipe"]


class DataChunk(list):
    """A batch produced by a batching stage: a list that also keeps its items as `items`."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def raw_iterator(self):
        yield from self.items


def _invalidated_message(datapipe):
    return ("This iterator has been invalidated because another iterator has been created "
            f"from the same IterDataPipe: {type(datapipe).__name__}()\n"
            "This may be caused multiple references to the same IterDataPipe. We recommend "
            "using `.fork()` if that is necessary.")


def _new_iterator_id(datapipe):
    """Make a new iterator the valid one (Note [One iterator per IterDataPipe]) and reset."""
    datapipe._valid_iterator_id = (0 if datapipe._valid_iterator_id is None
                                   else datapipe._valid_iterator_id + 1)
    datapipe.reset()
    return datapipe._valid_iterator_id


def _track_iterator(iter_fn):
    """Wrap a subclass's `__iter__`: see Note [One iterator per IterDataPipe]."""
    if inspect.isgeneratorfunction(iter_fn):
        @functools.wraps(iter_fn)
        def tracked_generator(self, *args, **kwargs):
            gen = iter_fn(self, *args, **kwargs)
            iterator_id = _new_iterator_id(self)
            try:
                response = gen.send(None)
                while True:
                    self._number_of_samples_yielded += 1
                    request = yield response
                    if self._valid_iterator_id != iterator_id:
                        raise RuntimeError(_invalidated_message(self))
                    response = gen.send(request)
            except StopIteration:
                return
        return tracked_generator

    @functools.wraps(iter_fn)
    def tracked_iter(self, *args, **kwargs):
        iterator = iter_fn(self, *args, **kwargs)
        _new_iterator_id(self)
        return iterator
    return tracked_iter


class _FunctionalForms:
    """The registry behind `datapipe.name(...)`: each DataPipe base class has its own table."""

    functions = {}

    def __getattr__(self, name):
        # Only reached when normal lookup fails, so instance attributes win.
        function = type(self)._functional_table().get(name)
        if function is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return functools.partial(function, self)

    @classmethod
    def _functional_table(cls):
        for klass in cls.__mro__:
            if "functions" in klass.__dict__:
                return klass.__dict__["functions"]
        return {}

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            "already taken")

        def functional_form(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)

        functools.update_wrapper(functional_form, cls_to_register, assigned=("__doc__",))
        cls.functions[function_name] = functional_form

    def __repr__(self):
        return type(self).__qualname__

    __str__ = __repr__

    def __dir__(self):
        return list(super().__dir__()) + list(type(self)._functional_table())


class IterDataPipe(_FunctionalForms, IterableDataset):
    """An iterable-style DataPipe: subclasses define `__iter__` (and may define `reset()`, run
    whenever a new iterator is created, and `__len__`)."""

    functions = {}
    _valid_iterator_id = None
    _number_of_samples_yielded = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__iter__" in cls.__dict__:
            cls.__iter__ = _track_iterator(cls.__dict__["__iter__"])

    def __iter__(self):
        return self

    def reset(self):
        """Called when a new iterator is created; stages with per-pass state override it."""


class MapDataPipe(_FunctionalForms, Dataset):
    """A map-style DataPipe: subclasses define `__getitem__` and `__len__`."""

    functions = {}


class _DataPipeSerializationWrapper:
    """What the DataLoader holds in place of a DataPipe: it pickles the pipeline as one value
    (worker processes started by 'spawn' or 'forkserver' receive it that way)."""

    def __init__(self, datapipe):
        self._datapipe = datapipe

    def __getstate__(self):
        return pickle.dumps(self._datapipe), False

    def __setstate__(self, state):
        value, _use_dill = state
        self._datapipe = pickle.loads(value)

    def __len__(self):
        try:
            return len(self._datapipe)
        except Exception as e:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length") from e


class _IterDataPipeSerializationWrapper(_DataPipeSerializationWrapper, IterDataPipe):
    def __init__(self, datapipe):
        super().__init__(datapipe)
        self._datapipe_iter = None

    def __iter__(self):
        self._datapipe_iter = iter(self._datapipe)
        return self

    def __next__(self):
        if self._datapipe_iter is None:
            raise AssertionError("Iterator has not been initialized; call __iter__() before "
                                 "__next__()")
        return next(self._datapipe_iter)


class _MapDataPipeSerializationWrapper(_DataPipeSerializationWrapper, MapDataPipe):
    def __getitem__(self, idx):
        return self._datapipe[idx]
