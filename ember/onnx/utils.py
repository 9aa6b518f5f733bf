"""torch.onnx.export for ember: trace the model once (tracer.py), write each recorded op as ONNX
nodes through its symbolic function (registry.py, symbolic_opset17.py), and save the model after
onnx.checker has accepted it -- PyTorch's TorchScript-based exporter, step by step:

    model(*args) under the tracer  ->  TracedNodes (aten ops, Functions with `symbolic`)
    each node -> symbolic fn(g, ...)  ->  ONNX NodeProtos, known arrays folded
    parameters and buffers             ->  initializers (by state-dict name)
    eval-mode Conv + BatchNormalization ->  one Conv (as PyTorch's eval peephole)
    dynamic_axes                       ->  named dims on the graph's inputs and outputs
"""
import contextlib
import enum
import inspect
import os
import warnings

import numpy as np

from .errors import OnnxExporterError, SymbolicValueError, UnsupportedOperatorError
from .graph import GraphContext, Value
from .registry import MIN_OPSET, first_opset, has_symbolic, lookup
from .tracer import Trace, _tensors, _traced_in
from . import symbolic_opset17  # noqa: F401  (registers the built-in symbolic functions)

DEFAULT_OPSET = 20  # PyTorch 2.13's default for the TorchScript exporter


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


_exporting = [False]


def is_in_onnx_export():
    """Whether an export is running (model code may branch on it, as in PyTorch)."""
    return _exporting[0]


def _require_onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("ember.onnx needs the onnx package: pip install 'ember[onnx]' "
                          "(installs onnx and onnxruntime)") from e
    return onnx


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Export `model` run on `args` to the ONNX file `f` (a path or a binary file object).

    ember has one exporter, the tracing one: `dynamo=True` (PyTorch's default, which exports
    through torch.export) takes the same path. `model` may be an ExportedProgram
    (ember.export): its `module()` is traced, on its example inputs unless `args` are given,
    in the mode it was exported in. Returns None; `f=None` returns the ModelProto.
    """
    from ..export import ExportedProgram
    if isinstance(model, ExportedProgram):
        if not args and not kwargs:
            args, kwargs = model.example_inputs
        model, training = model.module(), TrainingMode.PRESERVE
    onnx = _require_onnx()
    opset = DEFAULT_OPSET if opset_version is None else opset_version
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise ValueError(f"Unsupported ONNX opset version: {opset}. ember exports opsets "
                         f"{MIN_OPSET} to {newest} (the newest the installed onnx knows)")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise OnnxExporterError(f"operator_export_type {operator_export_type!r} is not "
                                "supported; ember exports pure ONNX")
    if dynamic_shapes is not None:
        raise OnnxExporterError("dynamic_shapes belongs to the torch.export-based exporter; "
                                "give dynamic_axes={input or output name: {dim: name}}")
    if export_modules_as_functions:
        raise OnnxExporterError("export_modules_as_functions is not supported")
    args = args if isinstance(args, tuple) else (args,)
    if kwargs:
        args = args + (dict(kwargs),)
    args = _decide_input_format(model, args)
    model_proto = _export(model, args, {}, opset, input_names, output_names,
                          dynamic_axes or {}, export_params, keep_initializers_as_inputs,
                          training, do_constant_folding, custom_opsets or {})
    if verbose:
        print(onnx.helper.printable_graph(model_proto.graph))
    if f is None:
        return model_proto
    data = model_proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)
    return None


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Put `model` in the mode the export asks for and restore its mode afterwards."""
    was_training = getattr(model, "training", False)
    if mode == TrainingMode.EVAL or mode is None:
        model.train(False)
    elif mode == TrainingMode.TRAINING:
        model.train(True)
    try:
        yield
    finally:
        if mode != TrainingMode.PRESERVE:
            model.train(was_training)


def _export(model, args, kwargs, opset, input_names, output_names, dynamic_axes, export_params,
            keep_initializers_as_inputs, training, do_constant_folding, custom_opsets):
    from ..autograd.grad_mode import no_grad
    args = _numbers_as_tensors(_distinct(args))
    inputs = _tensors(args)
    names = _input_names(model, args, input_names)
    params = _parameter_names(model)
    trace = Trace(params, lambda op: has_symbolic(op.name.split(".")[0]))
    _exporting[0] = True
    try:
        with select_model_mode_for_export(model, training), no_grad():
            out = trace.run(lambda *xs: model(*xs, **kwargs), args, inputs, names)
    finally:
        _exporting[0] = False
    grown = None
    if dynamic_axes:
        grown = _free_dynamic_sizes(trace, model, args, kwargs, inputs, names, params,
                                    dynamic_axes, training)
    outs = _flatten_outputs(out)
    if any(t.is_complex() for t in outs):
        raise SymbolicValueError("a complex output is not exported (ONNX has no complex "
                                 "tensors); return torch.view_as_real(output)")
    out_names = list(output_names or [])
    out_names += [f"output_{i}" if len(outs) > 1 else "output"
                  for i in range(len(out_names), len(outs))]
    if grown is not None:
        dynamic_axes = _output_dynamic_axes(dynamic_axes, out_names, outs,
                                            _flatten_outputs(grown))

    g = GraphContext(opset, do_constant_folding)
    env = {}   # TracedValue -> graph Value
    for v in trace.inputs:
        env[v] = Value(v.name, v.shape, v.dtype._np)
    for node in _live_nodes(trace, outs):
        _convert(g, trace, node, env, opset)
    results = [_graph_value(g, trace, trace.value_of(t), env) for t in outs]
    if do_constant_folding and training != TrainingMode.TRAINING:
        _fold_batch_norm_into_conv(g)
    return _assemble(g, trace, env, results, out_names, dynamic_axes, export_params,
                     keep_initializers_as_inputs, custom_opsets)


_RESHAPES = ("aten::view", "aten::reshape", "aten::_unsafe_view", "aten::_reshape_alias")


def _free_dynamic_sizes(trace, model, args, kwargs, inputs, names, params, dynamic_axes,
                        training):
    """Let the sizes a view/reshape recorded follow the dynamic axes.

    A traced `x.view(tgt_len, bsz * heads, head_dim)` records the example's numbers; PyTorch's
    tracer records the size computation instead. ember traces the model a second time with
    every dynamic input dim one longer and compares: a reshape size that changed is written
    -1 (ONNX Reshape infers it), one per reshape; a reshape with two such sizes cannot be
    written that way and is refused by name rather than exported for the example sizes only."""
    from ..autograd.grad_mode import no_grad
    from .._core.tensor import Tensor
    axes = {name: _axes_map(name, a) for name, a in dynamic_axes.items() if name in names}
    if not axes or any(not isinstance(a, Tensor) for a in args if _is_nested_tensors(a)):
        return
    by_id = {id(t): n for t, n in zip(inputs, names)}
    grown = []
    for a in args:
        name = by_id.get(id(a)) if isinstance(a, Tensor) else None
        for dim in (axes.get(name) or {}):
            if a.shape[dim] == 0:
                return   # nothing to grow an empty dim from; keep the example's sizes
            a = _cat((a, a.narrow(dim, 0, 1)), dim)
        grown.append(a)
    other = Trace(params, trace.is_node)
    _exporting[0] = True
    try:
        with select_model_mode_for_export(model, training), no_grad(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grown_out = other.run(lambda *xs: model(*xs, **kwargs), tuple(grown),
                                  _tensors(tuple(grown)), names)
    except Exception:
        return   # the grown inputs do not fit together (split sizes taken from two inputs)
    finally:
        _exporting[0] = False
    if [n.name for n in other.nodes] != [n.name for n in trace.nodes]:
        return   # the program changed with the sizes; keep the example's (onnxruntime says so)
    for node, again in zip(trace.nodes, other.nodes):
        if node.name not in _RESHAPES or list(node.args[1]) == list(again.args[1]):
            continue
        sizes = list(node.args[1])
        changed = [i for i, (a, b) in enumerate(zip(sizes, again.args[1])) if a != b]
        if len(changed) > 1:
            raise OnnxExporterError(
                f"{node.name} to {sizes} has {len(changed)} sizes that follow the dynamic axes "
                f"{dynamic_axes}; ONNX Reshape can infer only one (-1): export with static "
                "shapes or reshape with one inferred size")
        sizes[changed[0]] = -1
        node.args = (node.args[0], sizes) + tuple(node.args[2:])
    return grown_out


def _output_dynamic_axes(dynamic_axes, out_names, outs, grown):
    """dynamic_axes with the output dims that followed the inputs' dynamic ones (between the
    two traces) named too, for outputs the caller named none of: their declared shapes then
    say what ONNX shape inference says in PyTorch's export (a symbolic dim, not the example's
    size)."""
    if len(grown) != len(outs):
        return dynamic_axes
    named = dict(dynamic_axes)
    for name, t, u in zip(out_names, outs, grown):
        if name in named or t.dim() != u.dim():
            continue
        changed = {i: f"{name}_dim_{i}" for i, (a, b) in enumerate(zip(t.shape, u.shape))
                   if a != b}
        if changed:
            named[name] = changed
    return named


def _is_nested_tensors(a):
    return isinstance(a, (tuple, list, dict))


def _cat(tensors, dim):
    from .._refs import cat
    return cat(tensors, dim)


def _decide_input_format(model, args):
    """`args` with a trailing dict of keyword inputs put in the places of forward's parameters
    (a parameter the dict does not name takes its default), as torch.onnx does: the exported
    graph's inputs are positional."""
    if not args or not isinstance(args[-1], dict):
        return args
    try:
        sig = inspect.signature(model.forward if hasattr(model, "forward") else model)
    except (TypeError, ValueError):
        return args
    named, positional = args[-1], list(args[:-1])
    for name in list(sig.parameters)[len(positional):]:
        param = sig.parameters[name]
        if name in named:
            positional.append(named[name])
        elif param.default is not param.empty:
            positional.append(param.default)
    return tuple(positional)


def _numbers_as_tensors(args):
    """The args with each Python number (in tuples and lists too) as a 0-dim tensor -- bool,
    int64 or float64, as torch.jit._flatten makes them -- so that it is a graph input, as in
    PyTorch's tracer: the model then runs on the tensor."""
    from .. import tensor, float64
    from .._core.tensor import Tensor

    def convert(a):
        if isinstance(a, (bool, int)):
            return tensor(a)
        if isinstance(a, float):
            return tensor(a, dtype=float64)
        if isinstance(a, (tuple, list)) and not isinstance(a, Tensor):
            return type(a)(convert(x) for x in a) if not hasattr(a, "_fields") else \
                type(a)(*(convert(x) for x in a))
        return a
    return tuple(convert(a) for a in args)


def _distinct(args):
    """The args with a tensor passed twice (q, k, v = x, x, x) replaced by an alias from its
    second use on, so that each argument is its own graph input, as in PyTorch."""
    from .._core.tensor import Tensor
    seen, out = set(), []
    for a in args:
        if isinstance(a, Tensor):
            if id(a) in seen:
                a = a.detach()
            seen.add(id(a))
        out.append(a)
    return tuple(out)


def _live_nodes(trace, outs):
    """The recorded nodes an output depends on, in order (a walk back from the outputs, so
    results nobody reads, like pooling indices a functional wrapper dropped, are not
    exported)."""
    needed = {id(trace.value_of(t)) for t in outs}
    live = []
    for node in reversed(trace.nodes):
        if any(o is not None and id(o) in needed for o in node.outputs):
            live.append(node)
            for t in _traced_in(node.args) + _traced_in(node.kwargs):
                needed.add(id(t))
    return live[::-1]


def _convert(g, trace, node, env, opset):
    args = _map(node.args, g, trace, env)
    kwargs = _map(node.kwargs, g, trace, env)
    if node.kind == "function":
        produced = node.target.symbolic(g, *args, **kwargs)
    else:
        name = node.name
        if name not in _COMPLEX_OPS and any(np.dtype(v.dtype._np).kind == "c"
                                            for v in _traced_in(node.args)):
            raise SymbolicValueError(
                f"{name} on a complex tensor is not exported: complex values travel in the "
                "graph as (real, imag) pairs that only " + ", ".join(sorted(_COMPLEX_OPS)) +
                " handle; take view_as_real first")
        # an overload whose results differ in kind has its own function ("aten::nonzero.as_tuple")
        fn = lookup(node.target.name, opset) or lookup(name, opset)
        if fn is None:
            raise UnsupportedOperatorError(name, opset, first_opset(name))
        produced = fn(g, *args)
    produced = list(produced) if isinstance(produced, (tuple, list)) else [produced]
    if len(produced) != len(node.outputs):
        raise SymbolicValueError(f"the symbolic function of {node.name} returned "
                                 f"{len(produced)} values for its {len(node.outputs)} results")
    for traced, value in zip(node.outputs, produced):
        if traced is None:
            continue
        if value is None:
            env[traced] = _Missing(node.name)
            continue
        if value.shape is None:
            value.shape, value.dtype = traced.shape, traced.dtype._np
        env[traced] = value


# the ops whose symbolic functions handle a complex input (carried with a trailing axis of 2)
_COMPLEX_OPS = {"aten::transpose", "aten::permute", "aten::view_as_real", "aten::clone",
                "aten::contiguous", "aten::alias", "aten::detach"}


class _Missing:
    """A result a symbolic function does not produce (e.g. max pooling's indices)."""

    def __init__(self, op):
        self.op = op


def _map(obj, g, trace, env):
    from .tracer import TracedValue
    if isinstance(obj, TracedValue):
        return _graph_value(g, trace, obj, env)
    if isinstance(obj, dict):
        return {k: _map(v, g, trace, env) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_map(v, g, trace, env) for v in obj)
    return obj


def _graph_value(g, trace, traced, env):
    v = env.get(traced)
    if v is None:
        if traced.kind == "param":
            v = Value(traced.name, traced.shape, traced.dtype._np, traced.const, is_param=True)
        elif traced.kind == "const":
            v = g.constant(traced.const)
        else:
            raise OnnxExporterError(f"ember.onnx.export: value {traced.name} was never produced")
        env[traced] = v
    if isinstance(v, _Missing):
        raise OnnxExporterError(f"ember.onnx.export: the model uses a result of {v.op} that the "
                                "ONNX form of that op does not produce (e.g. pooling indices or "
                                "batch-norm statistics)")
    return v


def _input_names(model, args, given):
    """The given names, then forward's parameter names (`hidden_0`, `hidden_1` for the
    tensors of a tuple argument `hidden`)."""
    try:
        params = [p.name for p in inspect.signature(model.forward if hasattr(model, "forward")
                                                    else model).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"input_{i}"
        inner = _tensors(a)
        names += [base] if len(inner) == 1 and a is inner[0] else \
            [f"{base}_{k}" for k in range(len(inner))]
    given = list(given or [])
    return given[:len(names)] + names[len(given):]


def _parameter_names(model):
    """id(tensor) -> its state-dict name (the first name, for tied weights)."""
    names = {}
    if hasattr(model, "named_parameters"):
        for name, t in model.named_parameters(remove_duplicate=False):
            names.setdefault(id(t), name)
        for name, t in model.named_buffers(remove_duplicate=False):
            if t is not None:
                names.setdefault(id(t), name)
    return names


def _flatten_outputs(out):
    from .._core.tensor import Tensor
    stack, flat = [out], []
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            flat.append(x)
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
        elif x is not None:
            raise OnnxExporterError(f"ember.onnx.export: the model returned a {type(x).__name__}"
                                    "; only tensors (in tuples, lists, dicts) can be outputs")
    return flat


def _fold_batch_norm_into_conv(g):
    """Conv -> BatchNormalization (eval) becomes one Conv with scaled weights and a bias, when
    the Conv's result feeds only that BatchNormalization and every array is known."""
    from onnx import numpy_helper
    consumers = {}
    for node in g.nodes:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    producer = {node.output[0]: node for node in g.nodes if node.output}
    known = dict(g.initializers)
    for node in g.nodes:
        if node.op_type == "Constant":
            known[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    kept = []
    for node in g.nodes:
        conv = producer.get(node.input[0]) if node.op_type == "BatchNormalization" else None
        if (conv is None or conv.op_type != "Conv" or consumers[node.input[0]] != 1
                or not all(n in known for n in node.input[1:5]) or conv.input[1] not in known
                or (len(conv.input) > 2 and conv.input[2] and conv.input[2] not in known)):
            kept.append(node)
            continue
        eps = next(a.f for a in node.attribute if a.name == "epsilon")
        scale, shift, mean, var = (known[n] for n in node.input[1:5])
        w = known[conv.input[1]]
        b = known[conv.input[2]] if len(conv.input) > 2 and conv.input[2] else np.zeros_like(mean)
        factor = scale / np.sqrt(var + eps)
        new_w = (w * factor.reshape(-1, *[1] * (w.ndim - 1))).astype(w.dtype)
        new_b = ((b - mean) * factor + shift).astype(w.dtype)
        w_name, b_name = f"onnx::Conv_{node.output[0]}_weight", f"onnx::Conv_{node.output[0]}_bias"
        g.initializers[w_name], g.initializers[b_name] = new_w, new_b
        x = conv.input[0]
        del conv.input[:]
        conv.input.extend([x, w_name, b_name])
        conv.output[0] = node.output[0]
    g.nodes[:] = kept


def _assemble(g, trace, env, results, out_names, dynamic_axes, export_params,
              keep_initializers_as_inputs, custom_opsets):
    from onnx import checker, helper, numpy_helper
    from .. import __version__ as ember_version

    dyn = {name: _axes_map(name, axes) for name, axes in dynamic_axes.items()}
    known_names = set(out_names) | {v.name for v in trace.inputs}
    unknown = sorted(set(dyn) - known_names)
    if unknown:
        warnings.warn(f"Provided key {', '.join(unknown)} for dynamic axes is not a valid input/"
                      "output name")
    input_names = {v.name for v in trace.inputs}
    seen, renames, identities = set(), {}, []
    for v, name in zip(results, out_names):
        if v.name in input_names or v.name in seen or v.name in g.initializers \
                or v.const is not None:
            g._define(v)
            identities.append(helper.make_node("Identity", [v.name], [name]))
        else:
            renames[v.name] = name
        seen.add(v.name)
    for node in g.nodes:
        for i, n in enumerate(node.input):
            if n in renames:
                node.input[i] = renames[n]
        for i, n in enumerate(node.output):
            if n in renames:
                node.output[i] = renames[n]
    nodes = g.nodes + identities
    used = {n for node in nodes for n in node.input}
    # an input no node reads (a traced branch did not use it) is not a graph input, as in
    # PyTorch; running the model with it then fails on the extra input. Two kinds stay, as
    # PyTorch's trace records a use of them: one whose value an op argument read into Python
    # (`torch.tril(x, n)`, with a TracerWarning) and one named in dynamic_axes (its sizes were
    # read); ember's graph holds the value or sizes of the example
    kept = trace.inputs_read() | set(dyn)
    inputs = [_value_info(v.name, env[v].dtype, v.shape, dyn.get(v.name, {}))
              for v in trace.inputs if v.name in used or v.name in kept]
    inits = {n: a for n, a in g.initializers.items() if n in used}
    outputs = [_value_info(name, v.dtype, v.shape, dyn.get(name, {}))
               for v, name in zip(results, out_names)]
    initializer_protos = [numpy_helper.from_array(a, n) for n, a in inits.items()]
    if not export_params:
        inputs += [_value_info(n, a.dtype, a.shape, {}) for n, a in inits.items()]
        initializer_protos = []
    elif keep_initializers_as_inputs:
        inputs += [_value_info(n, a.dtype, a.shape, {}) for n, a in inits.items()]
    graph = helper.make_graph(nodes, "main_graph", inputs, outputs, initializer_protos)
    opsets = [helper.make_opsetid("", g.opset)]
    for domain, version in {**g.custom_domains, **custom_opsets}.items():
        opsets.append(helper.make_opsetid(domain, version))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="ember",
                              producer_version=str(ember_version))
    model.ir_version = min(model.ir_version, 10)  # what onnxruntime reads
    checker.check_model(model)
    return model


def _axes_map(name, axes):
    if isinstance(axes, dict):
        return {int(k): str(v) for k, v in axes.items()}
    return {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}


def _value_info(name, dtype, shape, dynamic):
    from onnx import helper
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype)) if dtype is not None else 0
    dims = None if shape is None else [dynamic.get(i, s) for i, s in enumerate(shape)]
    return helper.make_tensor_value_info(name, elem, dims)
