"""`ember.export.save` / `load`: an ExportedProgram in ember's own zip, with no code in it.

torch.export's .pt2 file stores the graph as serialized nodes (a schema of op names and typed
arguments), not as Python; ember's does the same, in JSON, and the weights in ember's
(PyTorch's) tensor zip format, read back with `weights_only=True`. Loading looks each op up in
the dispatcher's registry by name and executes nothing from the file; `code/forward.py` is the
generated source, for people to read.

    archive/version            "1"
    archive/program.json       nodes [{op, name, target, args, kwargs, meta}], input and output
                               specs, input/output tree specs, range constraints, size checks
    archive/weights.pt         {"state_dict", "constants", "example_inputs"} via ember.save
    archive/code/forward.py    the graph's Python, for reading
    archive/extra/<name>       extra_files
"""
import io
import json
import operator
import os
import zipfile

from .._dispatch import dispatcher as _dispatcher
from ..fx.graph import Graph as FxGraph
from ..fx.graph_module import GraphModule
from ..fx.node import Node
from ..jit._serialization import _encode as _encode_literal, _decode as _decode_literal
from ..utils import _pytree as pytree
from . import graph_signature as gs
from .dynamic_shapes import Dim, Symbol, ValueRange

_FORMAT = "1"


def _encode(a):
    if isinstance(a, Node):
        return {"node": a.name}
    if isinstance(a, list):     # a node's arguments are fx's immutable lists
        return [_encode(x) for x in a]
    if isinstance(a, tuple):
        return {"tuple": [_encode(x) for x in a]}
    return _encode_literal(a)


def _decode(a, env):
    if type(a) is list:
        return [_decode(x, env) for x in a]
    if type(a) is dict and "node" in a:
        return env[a["node"]]
    if type(a) is dict and "tuple" in a:
        return tuple(_decode(x, env) for x in a["tuple"])
    return _decode_literal(a, None)


def _target_name(node):
    t = node.target
    if node.op != "call_function":
        return t
    if isinstance(t, _dispatcher.OpOverload):
        return {"op": t.name}
    if getattr(t, "__module__", None) == "_operator":
        return {"operator": t.__name__}
    raise RuntimeError(f"ember.export.save cannot store the call_function target {t!r} of "
                       f"node '{node.name}'")


_NODE_KINDS = ("placeholder", "call_function", "call_method", "output")
_METHODS = ("size",)    # the methods an exported graph calls (x.size(d) for dynamic dims)


def _target(op, entry):
    if op not in _NODE_KINDS:
        raise RuntimeError(f"ember.export.load: unknown node kind {op!r}")
    if op == "call_method" and entry not in _METHODS:
        raise RuntimeError(f"ember.export.load: refusing to call the method {entry!r}")
    if type(entry) is not dict:
        return entry
    if "op" in entry:
        return _dispatcher.lookup(entry["op"])
    return getattr(operator, entry["operator"])


def _meta(node):
    if "sym_expr" in node.meta:
        return {"sym_expr": str(node.meta["sym_expr"])}
    val = node.meta.get("val")
    if val is None or not hasattr(val, "dtype"):
        return None
    meta = {"shape": list(val.shape), "dtype": str(val.dtype).removeprefix("torch.")}
    if "sym_shape" in node.meta:
        meta["sym_shape"] = [str(s) for s in node.meta["sym_shape"]]
    return meta


def _spec_json(spec):
    arg = spec.arg
    a = {"name": arg.name}
    if isinstance(arg, gs.ConstantArgument):
        a["constant"] = _encode_literal(arg.value)
    out = {"kind": spec.kind.name, "arg": a, "target": spec.target}
    if isinstance(spec, gs.InputSpec):
        out["persistent"] = spec.persistent
    return out


def _spec_from(d, input_side):
    a = d["arg"]
    arg = (gs.ConstantArgument(a["name"], _decode_literal(a["constant"], None))
           if "constant" in a else gs.TensorArgument(a["name"]))
    if input_side:
        return gs.InputSpec(gs.InputKind[d["kind"]], arg, d["target"], d["persistent"])
    return gs.OutputSpec(gs.OutputKind[d["kind"]], arg, d["target"])


def _checks_json(checks):
    out = []
    for c in checks:
        if isinstance(c, list):
            out.append({"dims": [x if isinstance(x, int) else
                                 [str(x[0]), x[1].__name__, x[1].min, x[1].max] for x in c]})
        else:
            out.append({"constant": _encode_literal(c)})
    return out


def _checks_from(data):
    out = []
    for c in data:
        if "dims" in c:
            out.append([x if isinstance(x, int) else
                        (Symbol(x[0]), Dim(x[1], min=x[2], max=x[3])) for x in c["dims"]])
        else:
            out.append(_decode_literal(c["constant"], None))
    return out


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    from .exported_program import ExportedProgram
    from ..serialization import save as save_tensors
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    nodes = []
    for n in ep.graph.nodes:
        nodes.append({"op": n.op, "name": n.name, "target": _target_name(n),
                      "args": [_encode(a) for a in n.args],
                      "kwargs": {k: _encode(v) for k, v in n.kwargs.items()},
                      "meta": _meta(n)})
    sig = ep.graph_signature
    program = {
        "nodes": nodes,
        "input_specs": [_spec_json(s) for s in sig.input_specs],
        "output_specs": [_spec_json(s) for s in sig.output_specs],
        "in_spec": pytree.treespec_dumps(ep._in_spec),
        "out_spec": pytree.treespec_dumps(ep._out_spec),
        "range_constraints": {str(k): [v.lower, v.upper] for k, v in
                              ep.range_constraints.items()},
        "input_checks": _checks_json(ep._input_checks),
        "training": ep.graph_module.training,
    }
    weights = io.BytesIO()
    save_tensors({"state_dict": dict(ep.state_dict), "constants": dict(ep.constants),
                  "example_inputs": ep.example_inputs}, weights)
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("archive/version", _FORMAT)
        z.writestr("archive/program.json", json.dumps(program, indent=1))
        z.writestr("archive/weights.pt", weights.getvalue())
        z.writestr("archive/code/forward.py",
                   ep.graph.python_code(root_module="self", verbose=True).src)
        for name, content in (extra_files or {}).items():
            z.writestr(f"archive/extra/{name}", content)


def load(f, *, extra_files=None, expected_opset_version=None):
    """The ExportedProgram stored by `save` (nothing from the file is executed)."""
    import ember
    from .exported_program import ExportedProgram
    from ..serialization import load as load_tensors
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
        if not os.path.exists(f):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: '{f}'")
    with zipfile.ZipFile(f) as z:
        version = z.read("archive/version").decode()
        if version != _FORMAT:
            raise RuntimeError(f"ember.export.load: unknown archive version {version!r}")
        program = json.loads(z.read("archive/program.json"))
        weights = load_tensors(io.BytesIO(z.read("archive/weights.pt")), weights_only=True)
        for name in (extra_files or {}):
            extra_files[name] = z.read(f"archive/extra/{name}").decode()
    g = FxGraph()
    env = {}
    for d in program["nodes"]:
        args = tuple(_decode(a, env) for a in d["args"])
        kwargs = {k: _decode(v, env) for k, v in d["kwargs"].items()}
        if d["op"] == "output":
            g.output(args[0])
            continue
        node = g.create_node(d["op"], _target(d["op"], d["target"]), args, kwargs,
                             name=d["name"])
        if d["meta"] is not None and "sym_expr" in d["meta"]:
            node.meta["sym_expr"] = d["meta"]["sym_expr"]
        elif d["meta"] is not None:
            m = d["meta"]
            node.meta["val"] = ember.empty(tuple(m["shape"]), dtype=getattr(ember, m["dtype"]),
                                           device="meta")
            if "sym_shape" in m:
                node.meta["sym_shape"] = [int(s) if s.isdigit() else s for s in m["sym_shape"]]
        env[d["name"]] = node
    signature = gs.ExportGraphSignature(
        [_spec_from(s, True) for s in program["input_specs"]],
        [_spec_from(s, False) for s in program["output_specs"]])
    gm = GraphModule({}, g)
    gm.training = program["training"]
    ranges = {Symbol(k): ValueRange(*v) for k, v in program["range_constraints"].items()}
    return ExportedProgram(gm, g, signature, weights["state_dict"], ranges,
                           example_inputs=weights["example_inputs"],
                           constants=weights["constants"],
                           _in_spec=pytree.treespec_loads(program["in_spec"]),
                           _out_spec=pytree.treespec_loads(program["out_spec"]),
                           _input_checks=_checks_from(program["input_checks"]))
