"""torch.fx's Interpreter and Transformer. An Interpreter runs a GraphModule node by node, one
overridable method per op kind (placeholder, get_attr, call_function, call_method, call_module,
output), freeing each value after its last use. A Transformer is an Interpreter whose values are
Proxies into a new graph, so overriding a method rewrites those nodes; `transform()` returns the
new GraphModule.
"""
import inspect

from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer, _Patcher

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # the node after which each value is read no more
            node_to_last_use = {}
            self.user_to_last_uses = {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on args; returns what its output node returns."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue    # given in initial_env (partial evaluation)
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    e.args = (f"{e.args[0]}\n\n{msg}" if e.args and isinstance(e.args[0], str)
                              else msg,) + tuple(e.args[1:])
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """run() with the "boxed" calling convention: the arguments come in a list, which is
        emptied, so the caller holds no reference keeping the inputs alive."""
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args_list) != len(placeholders):
            detail = "extra arguments" if len(args_list) > len(placeholders) \
                else "missing arguments"
            raise RuntimeError(f"Interpreter.boxed_run expected {len(placeholders)} arguments "
                               f"for placeholders but received {len(args_list)} ({detail})")
        env = dict(zip(placeholders, args_list))
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per op kind ----
    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from si

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # ---- helpers ----
    def fetch_attr(self, target):
        attr_itr = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(target.split('.')[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n):
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return tuple(args), dict(kwargs)

    def map_nodes_to_values(self, args, n):
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    """Every module is a leaf: a Transformer copies call_module nodes, it does not inline."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}
        self._keep_alive = []

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """Interpreter over Proxies: the default methods copy each node into `new_graph`;
    override one to rewrite the nodes of that kind (return a Proxy of the replacement)."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default_value = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default_value),
                     self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def run_node(self, n):
        # while transforming, ember's functions are the patched ones (so that an override may
        # call them on Proxies); hand overrides the function under its current name, so that
        # `target is ember.sigmoid` holds. Recording unwraps it again.
        self.tracer._current_meta = n.meta     # new nodes keep the stack trace and module stack
        try:
            if n.op == "call_function" and n.target in self._wrappers:
                args, kwargs = self.fetch_args_kwargs_from_env(n)
                return self.call_function(self._wrappers[n.target], args, kwargs)
            return super().run_node(n)
        finally:
            self.tracer._current_meta = None

    def transform(self):
        """Run the graph over Proxies and return a GraphModule of the new graph."""
        with _Patcher() as patcher:
            self._wrappers = self.tracer._install_patches(patcher, {})
            result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(result, _unwrap_proxy))
        return GraphModule(self.module, self.new_graph)


def _unwrap_proxy(a):
    return a.node if isinstance(a, Proxy) else a

