"""torch.fx's Node: one operation in a Graph, with the values it reads (`args`, `kwargs`, which may
hold other Nodes) and the Nodes that read it (`users`). The six op kinds are placeholder (a
function input), get_attr (a parameter, buffer or submodule of the root), call_function,
call_method, call_module and output. Nodes of one Graph form a doubly-linked list in program order.
"""
import builtins
import operator
import types

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Argument", "Target"]

_OP_KINDS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

Argument = object   # a Node, a base value, or a tuple/list/dict/slice of Arguments
Target = object     # a str (attribute path, method name) or a callable


# call_function targets that dead-code elimination must keep (asserts, setitem, and those
# registered with has_side_effect); in-place functions (`relu_`, `inplace=True`) are kept too
_side_effectful_functions = {operator.setitem}


def has_side_effect(fn):
    """Register fn as a call_function target that eliminate_dead_code must not remove."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a, fn):
    """Apply fn to every leaf of a nested tuple/list/dict/slice argument structure, rebuilding the
    structure (lists and dicts come back immutable, namedtuples keep their type)."""
    if isinstance(a, tuple):
        items = tuple(map_aggregate(elem, fn) for elem in a)
        return items if not hasattr(a, "_fields") else type(a)(*items)
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply fn to every Node inside an argument structure, leaving other values as they are."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _operator_or_builtin_name(target):
    module = getattr(target, "__module__", None)
    name = getattr(target, "__name__", None)
    if module == "builtins" or getattr(builtins, name or "", None) is target:
        return f"builtins.{name}"
    if module == "_operator":
        return f"operator.{name}"
    return None


def _pretty_print_target(target):
    """A target as a reader writes it: `operator.add`, `builtins.getattr`, `ember.flatten`,
    `ember.nn.functional.relu`, or the attribute path / method name of a str target."""
    if isinstance(target, str):
        return target
    from .graph import _get_qualified_name
    return _operator_or_builtin_name(target) or _get_qualified_name(target)


def _type_repr(obj):
    """How a type annotation prints: a class by module and qualified name (`ember.Tensor`,
    builtins bare: `int`), a function by name, anything else (`list[float]`,
    `typing.List[float]`, `float | None`) by repr."""
    if isinstance(obj, type) and not isinstance(obj, types.GenericAlias):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg, max_list_len=float("inf")):
    if isinstance(arg, Node):
        return "%" + str(arg)
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        maybe_comma = "," if len(arg) == 1 else ""
        return f"({items}{maybe_comma}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


class Node:
    """One operation of a Graph. `args`/`kwargs` are its inputs; assigning them updates the
    `users` of the Nodes they mention, so the def-use edges stay consistent both ways."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OP_KINDS:
            raise ValueError(f"Node op must be one of {_OP_KINDS}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op != "call_function" and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}      # the Nodes this one reads, as an ordered set
        self._args = ()
        self._kwargs = {}
        self.users = {}             # the Nodes that read this one, as an ordered set
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta = {}
        self._update_args_kwargs(args, kwargs)

    @property
    def stack_trace(self):
        """The user's Python stack where the node was recorded (innermost frame last), if the
        tracer recorded it (`record_stack_traces`)."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ---- position in the graph's list ----
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Move (or insert) Node x to just before this one."""
        if self is x:
            return      # prepending a node to itself leaves the graph as it is
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Move (or insert) Node x to just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- inputs ----
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    def insert_arg(self, idx, arg):
        """Insert a positional argument before args[idx] (0 <= idx <= len(args))."""
        if not 0 <= idx <= len(self.args):
            raise AssertionError(f"insert_args index must be between 0 and len(self.args), "
                                 f"got {idx}")
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old_use in self._input_nodes:
            old_use.users.pop(self)
        self._input_nodes = {}

        def record(n):
            # a Node of another graph is accepted here (as torch.fx does); lint() reports it
            self._input_nodes.setdefault(n)
            return n

        self._args = map_arg(tuple(new_args), record)
        self._kwargs = map_arg(dict(new_kwargs), record)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    # ---- rewriting ----
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):
        """Make every user of this Node read `replace_with` instead (those for which
        delete_user_cb returns True); returns the users that were changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has .meta")
            replace_with.meta.update(self.meta)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for use_node in to_process:
            use_node._update_args_kwargs(
                map_arg(use_node.args, lambda n: replace_with if n is self else n),
                map_arg(use_node.kwargs, lambda n: replace_with if n is self else n))
        return to_process

    def replace_input_with(self, old_input, new_input):
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self.args, swap), map_arg(self.kwargs, swap))

    def is_impure(self):
        """placeholder and output nodes, and calls that mutate (in-place methods, or ops marked
        impure), must survive dead-code elimination."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_function":
            name = getattr(self.target, "__name__", "")
            schema = getattr(self.target, "schema", None)
            if schema is not None and any(a.mutable for a in schema.arguments):
                return True     # an op that writes one of its arguments (add_.Tensor)
            return (self.target in _side_effectful_functions or self.kwargs.get("inplace") is True
                    or (name.endswith("_") and not name.endswith("__")))
        if self.op == "call_module":
            submodule = self.graph.owning_module.get_submodule(self.target) \
                if self.graph.owning_module is not None else None
            return getattr(submodule, "_is_impure", False)
        return False

    # ---- printing ----
    def format_node(self):
        """The node as one line of `print(graph)`, its type (if it has one) after the name."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            default_val = f"(default={self.args[0]})" if self.args else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default_val}")
        if self.op == "get_attr":
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={_pretty_print_target(self.target)}]")
        if self.op == "output":
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={_pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name

