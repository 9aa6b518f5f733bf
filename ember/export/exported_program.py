"""torch.export's ExportedProgram: a captured graph with its signature and the state it reads.

The graph (`graph_module`) is a pure function of flat inputs -- lifted parameters, buffers and
constants first, then the user's inputs -- whose call_function nodes are ATen op overloads.
`module()` turns it back into a callable Module ("unlifting"): the lifted placeholders become
get_attr nodes of parameters and buffers, buffer mutations become `copy_` writes, and hooks
flatten the caller's (args, kwargs) by the exported input spec -- checking the structure and
each tensor's sizes against what was exported (static sizes, or a `Dim`'s range and the
equalities between dims that share a `Dim`) -- and rebuild the outputs' structure.

`run_decompositions()` re-captures the graph with composite ops decomposed into the ops they
are written in and the in-place ops functionalized, so that mutated buffers become outputs
(`buffers_to_mutate`), as torch's does when it lowers to the core ATen set.
"""
import copy

from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from ..fx.graph import Graph as FxGraph
from ..fx.graph_module import GraphModule
from ..utils import _pytree as pytree
from . import _trace
from .graph_signature import ExportGraphSignature, InputKind, OutputKind

__all__ = ["ExportedProgram", "default_decompositions"]


class ExportedProgram:
    """What `ember.export.export` returns (see the module docstring)."""

    def __init__(self, root, graph, graph_signature, state_dict, range_constraints,
                 module_call_graph=None, example_inputs=None, constants=None, *,
                 verifiers=None, _in_spec=None, _out_spec=None, _input_checks=None):
        self._graph_module = root if isinstance(root, GraphModule) else GraphModule(root, graph)
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._module_call_graph = module_call_graph or []
        self._example_inputs = example_inputs
        self._constants = constants or {}
        self._in_spec = _in_spec
        self._out_spec = _out_spec
        # per user input leaf: [(dim, expected size or (symbol, Dim))] -- see _check_inputs
        self._input_checks = _input_checks or []

    graph_module = property(lambda self: self._graph_module)
    graph = property(lambda self: self._graph_module.graph)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    range_constraints = property(lambda self: self._range_constraints)
    module_call_graph = property(lambda self: self._module_call_graph)
    example_inputs = property(lambda self: self._example_inputs)
    constants = property(lambda self: self._constants)
    tensor_constants = constants
    dialect = property(lambda self: "TRAINING")
    verifiers = property(lambda self: [])

    @property
    def call_spec(self):
        from collections import namedtuple
        return namedtuple("CallSpec", ["in_spec", "out_spec"])(self._in_spec, self._out_spec)

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        non_persistent = set(self._graph_signature.non_persistent_buffers)
        for name in self._graph_signature.buffers:
            yield name, (self._constants[name] if name in non_persistent
                         else self._state_dict[name])

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. "
                           "You should use `exported_program.module()` instead.")

    def validate(self):
        self.graph.lint()

    # ---- printing ----
    def __str__(self):
        code = self.graph.python_code(root_module="self", verbose=True).src
        body = code.strip("\n").rstrip()
        readable = "class GraphModule(ember.nn.Module):\n" + "\n".join(
            "    " + line for line in body.splitlines()) + "\n"
        readable = readable.replace("\n", "\n    ")
        signature = str(self._graph_signature).replace("\n", "\n    ")
        return ("ExportedProgram:\n"
                f"    {readable}\n"
                f"Graph signature: {signature}\n"
                f"Range constraints: {_format_ranges(self._range_constraints)}\n")

    __repr__ = __str__

    # ---- the lifted state, by placeholder ----
    def _lifted_value(self, spec):
        if spec.kind == InputKind.PARAMETER:
            return self._state_dict[spec.target]
        if spec.kind == InputKind.BUFFER:
            if spec.persistent:
                return self._state_dict[spec.target]
            return self._constants[spec.target]
        return self._constants[spec.target]

    # ---- module() ----
    def module(self):
        """A GraphModule computing the same as the exported module, its parameters and
        buffers as attributes (shared with this program's state_dict)."""
        sig = self._graph_signature
        specs = {s.arg.name: s for s in sig.input_specs}
        g = FxGraph()
        env = {}
        attrs = {}
        for node in self.graph.nodes:
            if node.op == "placeholder":
                spec = specs[node.name]
                if spec.kind == InputKind.USER_INPUT:
                    env[node] = g.placeholder(node.name)
                else:
                    attrs[spec.target] = self._lifted_value(spec)
                    env[node] = g.get_attr(spec.target)
                env[node].meta = dict(node.meta)
            elif node.op == "output":
                values = node.args[0]
                user = []
                for spec, v in zip(sig.output_specs, values):
                    mapped = env[v] if hasattr(v, "op") else v
                    if spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.PARAMETER_MUTATION):
                        g.call_function(_dispatcher.lookup("copy_"),
                                        (g.get_attr(spec.target), mapped))
                    elif spec.kind == OutputKind.USER_INPUT_MUTATION:
                        target = next(env[n] for n in self.graph.nodes
                                      if n.op == "placeholder" and n.name == spec.target)
                        g.call_function(_dispatcher.lookup("copy_"), (target, mapped))
                    else:
                        user.append(mapped)
                g.output(tuple(user))
            else:
                env[node] = g.node_copy(node, lambda n: env[n])
        gm = GraphModule(attrs, g)
        gm.training = self._graph_module.training
        for spec in sig.input_specs:    # as the module had them: out of its state_dict
            if spec.kind == InputKind.BUFFER and not spec.persistent:
                owner, _, name = spec.target.rpartition(".")
                gm.get_submodule(owner)._non_persistent_buffers_set.add(name)
            elif spec.kind == InputKind.CONSTANT_TENSOR:
                owner, _, name = spec.target.rpartition(".")
                holder = gm.get_submodule(owner)
                value = holder._buffers.pop(name)
                setattr(holder, name, value)
        in_spec, out_spec = self._in_spec, self._out_spec
        checks = self._input_checks
        names = [s.arg.name for s in sig.input_specs if s.kind == InputKind.USER_INPUT]

        def flatten_inputs(module, args, kwargs):
            leaves, spec = pytree.tree_flatten((args, kwargs))
            if spec != in_spec:
                _raise_spec_mismatch(in_spec, spec, kwargs)
            _check_inputs(leaves, names, checks)
            return tuple(leaves), {}

        def rebuild_outputs(module, args, out):
            return pytree.tree_unflatten(list(out), out_spec)

        type(gm).train = _refuse_mode_switch   # the graph holds the mode it was captured in
        gm.register_forward_pre_hook(flatten_inputs, with_kwargs=True)
        gm.register_forward_hook(rebuild_outputs)
        return gm

    # ---- run_decompositions() ----
    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """The program re-captured with composites decomposed (CompositeImplicitAutograd
        kernels, and the decompositions of `decomp_table`, by default
        `default_decompositions()`) and in-place ops functionalized."""
        table = default_decompositions() if decomp_table is None else dict(decomp_table)
        sig = self._graph_signature
        inputs, flat = [], []
        for spec in sig.input_specs:
            name = spec.arg.name
            if spec.kind == InputKind.USER_INPUT:
                example = _example_leaf(self, name)
                if isinstance(example, Tensor):    # the graph may write its inputs
                    example = example.detach().clone()
                flat.append(example)
                if isinstance(example, Tensor):
                    inputs.append((name, example))
            else:
                # a copy, so the capture's own writes (running statistics) do not land
                value = self._lifted_value(spec).detach().clone()
                inputs.append((name, value))
                flat.append(value)
        gm = self._graph_module
        graph, values, result = _trace.capture(lambda: gm(*flat), inputs, table)
        sym = None
        if self._range_constraints:
            sym = _check_decomposition_keeps_dims(self, gm, flat, inputs, table, graph)
        n_mutations = sum(1 for s in sig.output_specs if s.kind not in
                          (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT))
        outputs = [values.get(id(r), r) for r in result]
        user_outputs = outputs[n_mutations:]
        old_mutations = list(zip(outputs[:n_mutations], sig.output_specs[:n_mutations]))
        graph.outputs = list(user_outputs)
        written = _trace.functionalize(graph)
        by_name = {v.name: v for v in graph.inputs}
        for v, spec in old_mutations:     # earlier mutation outputs stay mutation outputs
            written.setdefault(by_name[_mutated_input(spec, sig)], v)
        kinds = {s.arg.name: s for s in sig.input_specs}
        mutations, mutated = [], []
        for v in graph.inputs:
            if v not in written:
                continue
            spec = kinds[v.name]
            kind = {InputKind.PARAMETER: OutputKind.PARAMETER_MUTATION,
                    InputKind.BUFFER: OutputKind.BUFFER_MUTATION}.get(
                        spec.kind, OutputKind.USER_INPUT_MUTATION)
            mutations.append((kind, spec.target if kind != OutputKind.USER_INPUT_MUTATION
                              else spec.arg.name))
            mutated.append(written[v])
        graph.outputs = mutated + list(graph.outputs)
        if graph.constants:
            raise NotImplementedError(
                "run_decompositions: the decomposed graph reads tensors that are not inputs "
                f"({', '.join(v.name for v in graph.constants)})")
        by_name = {v.name: v for v in graph.inputs}
        fx_inputs = [(s.arg.name, by_name.get(s.arg.name)) for s in sig.input_specs]
        fx_graph, _ = _trace.to_fx(graph, fx_inputs, graph.outputs, sym)
        out_specs = _trace.output_specs(fx_graph, mutations, len(user_outputs))
        signature = ExportGraphSignature([copy.copy(s) for s in sig.input_specs], out_specs)
        gm_new = GraphModule({}, fx_graph)
        gm_new.training = gm.training
        return ExportedProgram(gm_new, fx_graph, signature, self._state_dict,
                               self._range_constraints, self._module_call_graph,
                               self._example_inputs, self._constants, _in_spec=self._in_spec,
                               _out_spec=self._out_spec, _input_checks=self._input_checks)


def _check_decomposition_keeps_dims(ep, gm, flat, inputs, table, graph):
    """Capture the decomposition again with the dynamic sizes changed, to find the sizes it
    records (a `view` to [6, 4]) as functions of the dims (dynamic_shapes.generalize).
    Returns the symbolic information to_fx needs."""
    from .dynamic_shapes import generalize
    sig = ep.graph_signature
    names = [s.arg.name for s in sig.input_specs if s.kind == InputKind.USER_INPUT]
    found = [{i: d for i, d in enumerate(c) if not isinstance(d, int)}
             if isinstance(c, list) else {} for c in ep._input_checks]
    examples = [_example_leaf(ep, n) for n in names]
    all_names = [s.arg.name for s in sig.input_specs]

    def capture_with(new_leaves):
        changed = dict(zip(names, new_leaves))
        flat2 = [changed.get(n, x) for n, x in zip(all_names, flat)]
        inputs2 = [(n, changed.get(n, x)) for n, x in inputs]
        return _trace.capture(lambda: gm(*flat2), inputs2, table)[0]
    shapes, sym_args, sources = generalize(graph, capture_with, examples, found)
    return shapes, sym_args, {s: (names[k], d) for s, (k, d) in sources.items()}


def _refuse_mode_switch(self, mode=True):
    raise NotImplementedError(f"Calling {'train' if mode else 'eval'}() is not supported yet.")


def _mutated_input(spec, sig):
    """The placeholder name of the input a mutation output writes."""
    if spec.kind == OutputKind.USER_INPUT_MUTATION:
        return spec.target
    return next(s.arg.name for s in sig.input_specs
                if s.target == spec.target and s.kind != InputKind.USER_INPUT)


def _example_leaf(ep, name):
    names = [s.arg.name for s in ep.graph_signature.input_specs
             if s.kind == InputKind.USER_INPUT]
    leaves = pytree.tree_flatten(ep.example_inputs)[0]
    return leaves[names.index(name)]


def _format_ranges(ranges):
    return "{" + ", ".join(f"{k}: {v}" for k, v in ranges.items()) + "}"


def _raise_spec_mismatch(expected, got, kwargs):
    expected_keys = list(expected.child(1).context)
    if sorted(kwargs) != sorted(expected_keys):
        raise ValueError(f"Ran into a kwarg keyword mismatch: Got the following keywords "
                         f"{list(kwargs)} but expected {expected_keys}")
    raise ValueError("Trying to flatten user inputs with exported input tree spec: \n"
                     f"{expected}\nbut actually got inputs with tree spec of: \n{got}.\n"
                     "Please check that the inputs have the same number and type of args and "
                     "kwargs as the ones you used when tracing.")


def _check_inputs(leaves, names, checks):
    """Each tensor input's sizes against the exported ones: a static size must be equal, a
    dynamic one inside its Dim's range and equal to the other sizes sharing the Dim."""
    seen = {}
    for leaf, name, dims in zip(leaves, names, checks):
        if dims is None:
            continue
        if not hasattr(leaf, "shape"):
            if leaf != dims:
                raise AssertionError(f"Guard failed: {name} == {dims!r}")
            continue
        shape = leaf.shape
        if len(shape) != len(dims):
            raise AssertionError(f"Guard failed: {name}.dim() == {len(dims)}")
        for i, expected in enumerate(dims):
            size = shape[i]
            where = f"{name}.size()[{i}]"
            if isinstance(expected, int):
                if size != expected:
                    raise AssertionError(f"Guard failed: {where} == {expected}")
                continue
            symbol, dim = expected
            if symbol in seen:
                if size != seen[symbol][0]:
                    raise AssertionError(f"Guard failed: {where} == {seen[symbol][1]}")
                continue
            if dim.min > 2 and size < dim.min:
                raise AssertionError(f"Guard failed: {where} >= {dim.min}")
            if dim.max is not None and size > dim.max:
                raise AssertionError(f"Guard failed: {where} <= {dim.max}")
            seen[symbol] = (size, where)


def default_decompositions():
    """{op: decomposition}: the ops run_decompositions lowers besides the composites."""
    from . import decomp_utils
    return dict(decomp_utils.CORE_DECOMPOSITIONS)
