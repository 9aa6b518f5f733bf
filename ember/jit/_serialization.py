"""`jit.save` / `jit.load` for traced modules, in ember's own zip format.

PyTorch's TorchScript archive is a zip of code and tensor data; ember's is too, and loading it
runs no code from the file -- nothing is unpickled and the Python in `code/` is only for people
to read. The graph itself is JSON data: op names looked up in the dispatcher's registry,
arguments as literals.

    archive/version          "1"
    archive/code/forward.py  the generated Python (ScriptModule.code), for reading
    archive/graph.json       inputs, calls [{op, args, outs}], outputs, state, constants
    archive/data/N.npy       tensor N (a parameter, buffer or constant), saved without pickle
"""
import io
import json
import math
import os
import zipfile

import numpy as np

from .._core import dtype as D
from .._core.device import device as _device
from .._dispatch import dispatcher as _dispatcher
from .._dispatch.recorder import Graph, Value, Call
from ..nn.parameter import Parameter
from ._codegen import python_code
from ._trace import TopLevelTracedModule, ScriptFunction, ScriptModule, _adopt_state

_FORMAT = "1"


def _encode(a):
    if type(a) is Value:
        return {"value": a.index}
    if type(a) is list:
        return [_encode(x) for x in a]
    if type(a) is tuple:
        return {"tuple": [_encode(x) for x in a]}
    if a is None or type(a) in (bool, str):
        return a
    if type(a) is int:
        return a
    if type(a) is float:
        return a if math.isfinite(a) else {"float": repr(a)}
    if type(a) is complex:
        return {"complex": [_encode(a.real), _encode(a.imag)]}
    kind = type(a).__name__
    if kind in ("dtype", "layout", "memory_format"):
        return {kind: str(a).removeprefix("torch.")}
    if kind == "device":
        return {"device": str(a)}
    raise RuntimeError(f"jit.save cannot store an argument of type {kind} ({a!r})")


def _decode(a, values):
    if type(a) is list:
        return [_decode(x, values) for x in a]
    if type(a) is not dict:
        return a
    (kind, x), = a.items()
    if kind == "value":
        return values[x]
    if kind == "tuple":
        return tuple(_decode(y, values) for y in x)
    if kind == "float":
        return float(x)
    if kind == "complex":
        return complex(_decode(x[0], values), _decode(x[1], values))
    if kind == "device":
        return _device(x)
    import ember
    return getattr(ember, x)


def _array_bytes(t):
    buf = io.BytesIO()
    a = t.detach()._np
    if t.dtype is D.bfloat16:
        a = a.astype(np.float32)
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def save(m, f, _extra_files=None):
    from ._script import _PythonScriptModule
    if isinstance(m, _PythonScriptModule):
        m.save  # raises: a module scripted without example inputs has no graph to save
    if not isinstance(m, ScriptModule) or m._graph is None:
        raise RuntimeError(f"ember.jit.save expects a module made by ember.jit.trace or "
                           f"ember.jit.script, got {type(m).__name__}")
    g = m._graph
    state = dict(m.named_parameters())
    state.update(m.named_buffers())
    values = {}
    for v in list(g.inputs) + list(g.constants):
        values[v] = v
    for c in g.calls:
        for v in c.outs:
            if v is not None:
                values[v] = v
    tensors = []
    meta = {
        "kind": "function" if isinstance(m, ScriptFunction) else "module",
        "name": getattr(m, "_original_name", type(m).__name__),
        "n_args": m._n_args, "out_spec": _encode_spec(m._out_spec),
        "values": [{"index": v.index, "name": v.name, "shape": list(v.shape),
                    "dtype": str(v.dtype).removeprefix("torch.")} for v in values],
        "inputs": [v.index for v in g.inputs],
        "calls": [{"op": c.op.name, "args": [_encode(a) for a in c.args],
                   "outs": [None if v is None else v.index for v in c.outs]} for c in g.calls],
        "outputs": [_encode(o) for o in g.outputs],
        "state": [], "constants": [], "training": m.training,
    }
    for name, t in state.items():
        meta["state"].append({"name": name, "data": len(tensors), "parameter":
                              isinstance(t, Parameter), "requires_grad": t.requires_grad,
                              "dtype": str(t.dtype).removeprefix("torch.")})
        tensors.append(t)
    for v, t in g.constants.items():
        meta["constants"].append({"value": v.index, "data": len(tensors),
                                  "dtype": str(t.dtype).removeprefix("torch.")})
        tensors.append(t)
    if isinstance(f, (str, os.PathLike)):
        f = open(f, "wb")
        close = True
    else:
        close = False
    try:
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("archive/version", _FORMAT)
            z.writestr("archive/code/forward.py", python_code(g, m._n_args))
            z.writestr("archive/graph.json", json.dumps(meta, indent=1))
            for i, t in enumerate(tensors):
                z.writestr(f"archive/data/{i}.npy", _array_bytes(t))
            for name, content in (_extra_files or {}).items():
                z.writestr(f"archive/extra/{name}", content)
    finally:
        if close:
            f.close()


def _encode_spec(spec):
    if spec is None:
        return None
    kind, specs = spec
    if kind is tuple or kind is list:
        k = kind.__name__
    elif kind[0] == "dict":
        k = {"dict": kind[1]}
    else:
        raise RuntimeError("jit.save cannot store a namedtuple output")
    return [k, [[n, _encode_spec(s)] for n, s in specs]]


def _decode_spec(spec):
    if spec is None:
        return None
    k, specs = spec
    kind = {"tuple": tuple, "list": list}[k] if isinstance(k, str) else ("dict", k["dict"])
    return (kind, [(n, _decode_spec(s)) for n, s in specs])


def _tensor(z, i, dtype_name):
    import ember
    with z.open(f"archive/data/{i}.npy") as fh:
        a = np.load(io.BytesIO(fh.read()), allow_pickle=False)
    return ember.from_numpy(a).to(getattr(ember, dtype_name)).clone()


def load(f, map_location=None, _extra_files=None):
    """A module replaying the graph stored by `save` (no code from the file is executed)."""
    if isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {f} does not exist")
    with zipfile.ZipFile(f) as z:
        if z.read("archive/version").decode() != _FORMAT:
            raise RuntimeError("ember.jit.load: unknown archive version "
                               f"{z.read('archive/version').decode()!r}")
        meta = json.loads(z.read("archive/graph.json"))
        state = []
        for s in meta["state"]:
            t = _tensor(z, s["data"], s["dtype"])
            t = Parameter(t, requires_grad=s["requires_grad"]) if s["parameter"] else t
            state.append((s["name"], t))
        constants = {c["value"]: _tensor(z, c["data"], c["dtype"]) for c in meta["constants"]}
        for name in (_extra_files or {}):
            _extra_files[name] = z.read(f"archive/extra/{name}").decode()
    import ember
    g = Graph()
    values = {}
    for d in meta["values"]:
        values[d["index"]] = Value(d["index"], d["name"], tuple(d["shape"]),
                                   getattr(ember, d["dtype"]))
    g._count = max(values, default=-1) + 1
    g.inputs = [values[i] for i in meta["inputs"]]
    g.constants = {values[i]: t for i, t in constants.items()}
    for c in meta["calls"]:
        g.calls.append(Call(_dispatcher.lookup(c["op"]), tuple(_decode(a, values) for a in
                                                              c["args"]),
                            tuple(None if i is None else values[i] for i in c["outs"])))
    g.outputs = [_decode(o, values) for o in meta["outputs"]]
    if meta["kind"] == "function":
        m = ScriptFunction(meta["name"])
    else:
        m = TopLevelTracedModule()
        holder = _StateHolder(state)
        _adopt_state(m, holder)
    input_names = {v.name for v in g.inputs}
    m.__dict__.update(_graph=g, _out_spec=_decode_spec(meta["out_spec"]), _n_args=meta["n_args"],
                      _state_names=[n for n, _ in state if n in input_names],
                      _original_name=meta["name"])
    m.train(meta["training"])
    return m


class _StateHolder:
    def __init__(self, state):
        self.state = state

    def named_parameters(self):
        return [(n, t) for n, t in self.state if isinstance(t, Parameter)]

    def named_buffers(self):
        return [(n, t) for n, t in self.state if not isinstance(t, Parameter)]
