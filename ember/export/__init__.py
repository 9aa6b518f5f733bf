"""torch.export: capture a module's forward into an ExportedProgram, a graph of ATen op calls.

    ep = ember.export.export(model, (x,))              # non-strict capture at the dispatcher
    print(ep)                                          # the graph, its signature, ranges
    ep.module()(x)                                     # a GraphModule computing the same
    ep.run_decompositions()                            # lowered and functionalized
    ember.export.save(ep, "model.pt2"); ember.export.load("model.pt2")

The capture is `_trace.py`, the program `exported_program.py`, the placeholder/output kinds
`graph_signature.py`, `Dim` and the size checks `dynamic_shapes.py`, the file format
`_serialize.py`.
"""
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._dynamo.exc import UserError, UserErrorType
from ..fx.graph_module import GraphModule
from ..utils import _pytree as pytree
from . import _trace
from .dynamic_shapes import Dim, dims, symbolic_dims, generalize, _per_leaf
from .exported_program import ExportedProgram, default_decompositions
from .graph_signature import ExportBackwardSignature, ExportGraphSignature, InputKind
from ._serialize import save, load

__all__ = ["Dim", "ExportBackwardSignature", "ExportGraphSignature", "ExportedProgram",
           "default_decompositions", "dims", "export", "load", "save"]


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=(), prefer_deferred_runtime_asserts_over_guards=False):
    """Capture `mod(*args, **kwargs)` into an ExportedProgram (see the module docstring).

    ember captures at the dispatcher as torch.export's non-strict mode does; `strict=True`
    (torch's bytecode-level capture through Dynamo) gives the same graph here for programs
    both modes accept."""
    from ..nn import Module
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(UserErrorType.INVALID_INPUT,
                        f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}")
    if preserve_module_call_signature:
        raise NotImplementedError(
            "ember.export: preserve_module_call_signature is not supported (the exported graph "
            f"is flat; no submodule call signatures are kept for {preserve_module_call_signature})")
    kwargs = dict(kwargs or {})
    names = _trace.user_input_names(mod.forward, args, kwargs)
    leaves, in_spec = pytree.tree_flatten((args, kwargs))
    entries = _per_leaf(dynamic_shapes, _trace.positional_names(mod.forward), args, kwargs)
    sym_dims, ranges = symbolic_dims(leaves, names, entries)

    lifted = _trace.module_state(mod)
    graph, outputs, out_spec, constants = _capture_module(mod, args, kwargs, lifted, names,
                                                           leaves)
    sym = None
    if ranges:
        def capture_with(new_leaves):
            new_args, new_kwargs = pytree.tree_unflatten(new_leaves, in_spec)
            return _capture_module(mod, new_args, new_kwargs, lifted, names, new_leaves)[0]
        shapes, sym_args, sources = generalize(graph, capture_with, leaves, sym_dims)
        sym = (shapes, sym_args, {s: (names[k], d) for s, (k, d) in sources.items()})

    const_targets = _trace.constant_names(mod, constants)
    const_inputs = [(_trace.placeholder_name("c_", const_targets[v]), v) for v in constants]
    user_values = graph.inputs[len(lifted):]
    tensor_leaf = iter(user_values)
    user_inputs = [(name, next(tensor_leaf) if isinstance(x, Tensor) else None)
                   for name, x in zip(names, leaves)]
    inputs = [(x.name, v) for x, v in zip(lifted, graph.inputs)] + const_inputs + user_inputs
    fx_graph, _ = _trace.to_fx(graph, inputs, outputs, sym, dead_code=True)
    signature = ExportGraphSignature(
        _trace.input_specs(lifted, [(n, const_targets[v]) for n, v in const_inputs], names,
                           leaves),
        _trace.output_specs(fx_graph, [], len(outputs)))

    state_dict = {x.target: x.value for x in lifted if x.persistent is not False}
    consts = {const_targets[v]: t for v, t in constants.items()}
    consts.update((x.target, x.value) for x in lifted if x.persistent is False)
    checks = []
    for x, found in zip(leaves, sym_dims):
        if isinstance(x, Tensor):
            checks.append([found.get(i, size) for i, size in enumerate(x.shape)])
        else:
            checks.append(x)
    gm = GraphModule({}, fx_graph)
    gm.training = mod.training
    return ExportedProgram(gm, fx_graph, signature, state_dict, ranges,
                           example_inputs=(args, kwargs), constants=consts, _in_spec=in_spec,
                           _out_spec=out_spec, _input_checks=checks)


def _capture_module(mod, args, kwargs, lifted, names, leaves):
    """Record mod(*args, **kwargs) with the lifted state and the user's tensor leaves as the
    graph's inputs; the buffers and inputs it writes and the random generator are put back
    afterwards (a parameter written in place is refused: ember keeps no copy of the weights).
    Returns (graph, flat output Values/constants, output spec, {Value: constant tensor})."""
    from .._core.generator import default_generator
    written = [x.value for x in lifted if x.kind == InputKind.BUFFER]
    written += [x for x in leaves if isinstance(x, Tensor)]
    saved = [(t, t.detach().clone()) for t in written]
    params = [(x, x.value._storage_()._version) for x in lifted
              if x.kind == InputKind.PARAMETER]
    rng = default_generator.get_state()
    inputs = [(x.name, x.value) for x in lifted]
    inputs += [(n, x) for n, x in zip(names, leaves) if isinstance(x, Tensor)]
    try:
        graph, values, result = _trace.capture(lambda: mod(*args, **kwargs), inputs)
    finally:
        with no_grad():    # every one: kernels such as batch norm's write without a version bump
            for t, copy in saved:
                t.copy_(copy)
        default_generator.set_state(rng)
    for x, version in params:
        if x.value._storage_()._version != version:
            raise NotImplementedError(f"ember.export: forward writes the parameter "
                                      f"'{x.target}' in place; ember captures on the real "
                                      "weights and cannot leave them unchanged")
    out_leaves, out_spec = pytree.tree_flatten(result)
    outputs = []
    for o in out_leaves:
        if isinstance(o, Tensor):
            v = values.get(id(o))
            if v is None:       # a tensor no op made: a constant of the graph
                v = graph.new_value(o, f"c{len(graph.constants)}")
                graph.constants[v] = o
            outputs.append(v)
        else:
            outputs.append(o)
    return graph, outputs, out_spec, dict(graph.constants)
