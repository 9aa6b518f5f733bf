"""make_fx (torch/fx/experimental/proxy_tensor.py): trace a function into a GraphModule of the
ATen ops it runs.

PyTorch's make_fx runs `f` on proxy tensors under a dispatch mode; every op that reaches the
dispatcher below autograd and the functorch transforms becomes a `call_function` node, with
CompositeImplicitAutograd ops decomposed into what they call. ember runs `f` on the example
inputs under its GraphRecorder mode (ember/_dispatch/recorder.py) with decomposition on and
converts the recorded calls to an fx Graph the way torch.export's capture does
(ember/export/_trace.py). The transforms (vmap's batching rules, grad's derivative formulas)
run their ops through the dispatcher too, so `make_fx(vmap(f))` records the batched ops.

The graph's placeholders are the flat leaves of the arguments, named after the parameters of
`f` (`x_1`; a leaf of a nested argument `x_1`, `x_2`, ...); calling the GraphModule takes the
arguments in `f`'s structure and returns results in `f`'s output structure.
"""
import inspect

from ..._core.tensor import Tensor
from ..._dispatch.recorder import GraphRecorder
from ...utils import _pytree as pytree
from ..graph_module import GraphModule

__all__ = ["make_fx"]


def _placeholder_names(f, args):
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        p = params[i] if i < len(params) and params[i].kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) else None
        base = p.name if p is not None else "args"
        n = len(pytree.tree_leaves(a))
        names += [f"{base}_{k + 1}" for k in range(n)]
    return names


class _TracedModule(GraphModule):
    """A GraphModule over the flat leaves of `f`'s arguments that takes and returns `f`'s
    structures."""

    def __call__(self, *args):
        flat = pytree.tree_leaves(args)
        out = super().__call__(*flat)
        return pytree.tree_unflatten(list(out), self._out_spec)


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False,
            *, pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True, record_stack_traces=False):
    """`make_fx(f)(*args)`: the GraphModule of the ops `f(*args)` runs."""
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    from ...export._trace import to_fx

    def wrapped(*args):
        flat_args, _ = pytree.tree_flatten(args)
        names = _placeholder_names(f, args)
        recorder = GraphRecorder(decompose=True)
        with recorder:
            inputs = [(name, recorder.add_input(a, name) if isinstance(a, Tensor) else None)
                      for name, a in zip(names, flat_args)]
            out = f(*args)
        flat_out, out_spec = pytree.tree_flatten(out)
        outputs = [recorder.value_of(o) if isinstance(o, Tensor) else o for o in flat_out]
        graph = recorder.graph
        # tensors the calls read that no call made: attributes of the module (get_attr nodes)
        constants = {f"_tensor_constant{i}": (v, t)
                     for i, (v, t) in enumerate(graph.constants.items())}
        fx_graph, _ = to_fx(graph, inputs + [(name, v) for name, (v, _) in constants.items()],
                            outputs)
        for node in list(fx_graph.nodes):
            if node.op == "placeholder" and node.name in constants:
                with fx_graph.inserting_before(node):
                    attr = fx_graph.get_attr(node.name)
                node.replace_all_uses_with(attr)
                fx_graph.erase_node(node)
                attr.name = node.name
        gm = _TracedModule({name: t for name, (_, t) in constants.items()}, fx_graph)
        gm._out_spec = out_spec
        return gm
    return wrapped
