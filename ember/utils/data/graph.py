"""The graph of a DataPipe pipeline: which DataPipes each stage reads from.

`traverse_dps(datapipe)` returns `{id(dp): (dp, {its sources, the same way})}`. A stage's
sources are the DataPipes among its attributes (directly, or inside a list, tuple, set or dict
attribute). A DataPipe reached twice (two stages reading from one source) appears under both,
and a cycle stops at the DataPipe already on the path.
"""
from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ["DataPipe", "DataPipeGraph", "traverse_dps"]

DataPipe = IterDataPipe | MapDataPipe
DataPipeGraph = dict


def _sources(datapipe):
    found = []

    def visit(value):
        if isinstance(value, (IterDataPipe, MapDataPipe)):
            found.append(value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    for value in getattr(datapipe, "__dict__", {}).values():
        visit(value)
    return found


def traverse_dps(datapipe):
    """The graph of `datapipe` and everything it reads from (see the module docstring)."""
    return _traverse(datapipe, ())


def _traverse(datapipe, path):
    path = path + (id(datapipe),)
    children = {}
    for source in _sources(datapipe):
        if id(source) not in path:
            children.update(_traverse(source, path))
        else:
            children[id(source)] = (source, {})
    return {id(datapipe): (datapipe, children)}
