"""torch.fx's Graph: an ordered list of Nodes (a doubly-linked list around a sentinel root), the
names they carry, the edits passes make on it (create, insert before/after, erase, copy, dead-code
elimination), `lint()` to check it, and the code generator that turns it back into the Python
source of a `forward` function (read by GraphModule).

    graph():
        %x : [num_users=1] = placeholder[target=x]
        %linear : [num_users=1] = call_module[target=linear](args = (%x,), kwargs = {})
        %relu : [num_users=1] = call_function[target=ember.relu](args = (%linear,), kwargs = {})
        return relu
"""
import builtins
import contextlib
import enum
import inspect
import keyword
import functools
import math
import re
import types
import typing
import warnings

from .._dispatch.dispatcher import OpOverload, OpOverloadPacket
from . import _overrides
from .node import Node, _format_arg, _pretty_print_target, _type_repr, map_arg

__all__ = ["Graph", "PythonCode"]

# operator functions the code generator writes as Python syntax
reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}", **reflectable_magic_methods,
}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


# typing's aliases of the builtin containers, named for `typing.List[...]` annotations
_origin_type_map = {list: typing.List, dict: typing.Dict, set: typing.Set,  # noqa: UP006
                    frozenset: typing.FrozenSet, tuple: typing.Tuple}  # noqa: UP006

_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)    # a node name must not shadow a builtin


@functools.lru_cache(maxsize=None)
def _custom_builtins():
    """Names the generated code may use without importing them: what reprs of values print
    (`inf`, `torch.float32`, `device(type='cpu')`) and the `ember` namespace itself."""
    import ember
    names = {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": ember,
             "ember": ember, "device": ember.device}
    _illegal_names.update(names)
    return names


_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_case(s):
    return _snake_case_sub.sub(r"_\1", s).lower()


def _get_qualified_name(func):
    """The dotted name generated code calls a function by: `getattr`, `ember.flatten`,
    `ember.nn.functional.relu`, `operator.add`, or `module.qualname` for others."""
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return func.__name__
    if isinstance(func, OpOverload):    # an op: ember.ops.aten.add.Tensor
        schema = func.schema
        return f"ember.ops.{schema.namespace}.{schema.name}.{schema.overload or 'default'}"
    if isinstance(func, OpOverloadPacket):  # all overloads of a name: ember.ops.aten.add
        return f"ember.ops.{func._namespace}.{func._name}"
    ember_name = _overrides.qualified_name(func)
    if ember_name is not None:
        return ember_name
    module = getattr(func, "__module__", None) or "builtins"
    if module == "_operator":
        module = "operator"
    return f"{module}.{getattr(func, '__qualname__', func.__name__)}"


class _Namespace:
    """Unique Python identifiers for nodes and globals: the candidate is sanitised, kept off
    keywords and builtins, and numbered (`add`, `add_1`, ...) when taken."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name.setdefault(obj, name)


class PythonCode:
    """Generated source of `forward` and the globals it needs to run. `_lineno_map` maps a
    line of the function (its `def` is line 1) to the index of the node that wrote it;
    `_prologue_start` is the line of src the `def` is on."""

    def __init__(self, src, globals, _lineno_map=None, _prologue_start=0):
        self.src = src
        self.globals = globals
        self._lineno_map = _lineno_map
        self._prologue_start = _prologue_start


_counter_regexp = re.compile(r"# COUNTER: (\d+)")


def _format_target(base, target):
    """`self.layer1.0.conv1` spelled as valid Python: getattr(self.layer1, "0").conv1."""
    r = base
    for elem in target.split("."):
        r = f"{r}.{elem}" if elem.isidentifier() else f'getattr({r}, "{elem}")'
    return r


class _NodeList:
    """The live view graph.nodes: iterates in program order, skipping erased nodes, so a pass
    may erase the node it is looking at."""

    def __init__(self, graph, direction="_next"):
        self._graph = graph
        self._direction = direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self._direction)

    def __reversed__(self):
        return _NodeList(self._graph, "_prev" if self._direction == "_next" else "_next")


class Graph:
    """A program as Nodes in order. Build it through the op-kind methods (placeholder,
    get_attr, call_function, call_method, call_module, output); new nodes go at the insert
    point, the end unless inside `inserting_before/after`."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        _custom_builtins()
        self._root = _root_sentinel(self)
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._co_fields = {}
        self._body_transformer = None

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ----
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        if self.owning_module is not None and not _attr_reference_exists(self.owning_module,
                                                                         qualified_name):
            warnings.warn("Attempted to insert a get_attr Node with no underlying reference in "
                          "the owning GraphModule! Call GraphModule.add_submodule to add the "
                          "necessary submodule, GraphModule.add_parameter to add the necessary "
                          "Parameter, or nn.Module.register_buffer to add the necessary buffer",
                          stacklevel=2)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        # as torch.fx: a missing submodule raises AttributeError from get_submodule
        if self.owning_module is not None and \
                self.owning_module.get_submodule(module_name) is None:
            warnings.warn("Attempted to insert a call_module Node with no underlying reference "
                          "in the owning GraphModule! Call GraphModule.add_submodule to add "
                          "the necessary submodule", stacklevel=2)
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None):
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of `node` (from any graph) at the insert point, its Node arguments mapped
        through arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy g's nodes into this graph (val_map: g's Nodes -> the values that replace them,
        filled as it goes); returns the value g's output node returns."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    @contextlib.contextmanager
    def inserting_before(self, n=None):
        """New nodes go just before n (the start of the graph if n is None) inside the block."""
        if n is None:
            with self.inserting_after(None):
                yield
            return
        if n.graph is not self:
            raise ValueError("Node to insert before is not in graph.")
        previous, self._insert = self._insert, n.prepend
        try:
            yield
        finally:
            self._insert = previous

    @contextlib.contextmanager
    def inserting_after(self, n=None):
        """New nodes go just after n (in the order they are made) inside the block."""
        anchor = self._root if n is None else n
        if anchor.graph is not self:
            raise ValueError("Node to insert after is not in graph.")
        previous = self._insert
        last = [anchor]

        def insert(new_node):
            last[0].append(new_node)
            last[0] = new_node

        self._insert = insert
        try:
            yield
        finally:
            self._insert = previous

    def __getstate__(self):
        # the owning GraphModule is not part of a pickled graph: it pickles the graph itself
        # and becomes the owner again when it is rebuilt
        state = dict(self.__dict__)
        state["_owning_module"] = None
        return state

    def __deepcopy__(self, memo):
        """Copied node by node (a generic deepcopy would recurse along the node list)."""
        g = Graph(tracer_cls=self._tracer_cls)
        result = g.graph_copy(self, val_map={}, return_output_node=True)
        if result is not None:
            output_value, output_node = result
            g.output(output_value, type_expr=output_node.type)
        return g

    # ---- editing ----
    def erase_node(self, to_erase):
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase nodes nobody uses and that have no side effect, last to first (one backward
        sweep suffices: erasing a node can only make earlier nodes dead)."""
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the invariants passes rely on; RuntimeError naming the first broken one."""
        seen_names, seen_nodes = set(), set()
        prev = self._root
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node._prev is not prev or prev._next is not node:
                raise RuntimeError(f"Node '{node}' has broken prev/next links")
            if node.op not in ("placeholder", "get_attr", "call_function", "call_method",
                               "call_module", "output"):
                raise RuntimeError(f"Node '{node}' has unknown opcode {node.op!r}")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to "
                                       "this Graph!")
                if arg not in seen_nodes:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is not among its users")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            seen_nodes.add(node)
            prev = node
        if prev._next is not self._root:
            raise RuntimeError("The last node does not link back to the graph's root")
        if self.owning_module is None:
            return
        for node in self.nodes:
            if node.op not in ("get_attr", "call_module"):
                continue
            obj = self.owning_module
            for i, atom in enumerate(node.target.split(".")):
                if not hasattr(obj, atom):
                    seen_qualname = ".".join(node.target.split(".")[:i])
                    raise RuntimeError(f"Node {node} target {node.target} references "
                                       f"nonexistent attribute {atom} of {seen_qualname}")
                obj = getattr(obj, atom)
            if node.op == "call_module":
                from ..nn import Module
                if not isinstance(obj, Module):
                    raise RuntimeError(f"Node {node} target {node.target} {atom} of "
                                       f"{seen_qualname if i else 'root'} does not reference "
                                       "an nn.Module")

    # ---- printing ----
    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return _snake_case(op)

    def __str__(self):
        return "graph():\n    " + "\n    ".join(n.format_node() for n in self.nodes)

    def print_tabular(self):
        """One row per node: opcode, name, target, args, kwargs (torch.fx prints the same
        columns through `tabulate`; ember lays out the plain table itself)."""
        rows = [[n.op, n.name, _pretty_print_target(n.target), _format_arg(n.args).replace("%", ""),
                 _format_arg(n.kwargs).replace("%", "")] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(5)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
                 "  ".join("-" * w for w in widths)]
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        print("\n".join(lines))

    # ---- code generation ----
    def on_generate_code(self, make_transformer):
        """Install a transformer of the generated body (a list of lines, in, out): make_transformer
        gets the one installed before (or None) and returns the new one. The returned context
        manager puts the previous one back on exit (or leave it installed by not using it)."""
        previous = self._body_transformer
        self._body_transformer = make_transformer(previous)

        @contextlib.contextmanager
        def restore():
            try:
                yield
            finally:
                self._body_transformer = previous
        return restore()

    def python_code(self, root_module, *, verbose=False):
        """The source of `def forward(self, ...)` computing this graph, and its globals.
        `verbose=True` annotates each value with the dtype and shape recorded in its node's
        `meta["val"]` (`linear: "f32[2, 8]" = ...`), as print_readable shows them."""
        return _CodeGen(self, root_module, verbose).generate()


def _attr_reference_exists(mod, qualified_name):
    """Whether `qualified_name` names a submodule, parameter or buffer of mod (what a get_attr
    node may read without warning)."""
    module_path, _, name = qualified_name.rpartition(".")
    try:
        submod = mod.get_submodule(module_path)
    except AttributeError:
        warnings.warn(f"Failed to fetch module {module_path}!")
        return False
    if not hasattr(submod, name):
        return False
    from ..nn import Module, Parameter
    res = getattr(submod, name)
    return isinstance(res, (Module, Parameter)) or name in submod._buffers


def _root_sentinel(graph):
    """The node that closes the graph's ring; never listed, never erased."""
    root = Node.__new__(Node)
    root.graph, root.name, root.op, root.target = graph, "", "root", ""
    root._input_nodes, root._args, root._kwargs, root.users = {}, (), {}, {}
    root._prev = root._next = root
    root._erased = False
    root.meta = {}
    root.type = None
    return root


# dtypes as print_readable abbreviates them in annotations
_DTYPE_ABBR = {
    "torch.float32": "f32", "torch.float64": "f64", "torch.float16": "f16", "torch.bfloat16": "bf16",
    "torch.int64": "i64", "torch.int32": "i32", "torch.int16": "i16", "torch.int8": "i8",
    "torch.uint8": "u8", "torch.bool": "b8", "torch.complex64": "c64", "torch.complex128": "c128",
}


class _CodeGen:
    """Writes one statement per node. After a node's statement, the values it was the last
    reader of are set to None (`;  a = b = None`), so generated code frees intermediates as
    eagerly as the graph allows, as torch.fx's does."""

    def __init__(self, graph, root_module, verbose=False):
        self.graph = graph
        self.root_module = root_module
        self.verbose = verbose
        self.namespace = _Namespace()
        self.globals = {}
        for name, obj in _custom_builtins().items():
            self.namespace._used_names.add(name)
            self.namespace.associate_name_with_obj(name, obj)
            self.globals[name] = obj

    def add_global(self, name_hint, obj):
        if name_hint.startswith("ember."):
            return name_hint
        global_name = self.namespace.create_name(name_hint, obj)
        existing = self.globals.setdefault(global_name, obj)
        if existing is not obj:
            raise AssertionError(f"Global name {global_name} already assigned to {existing!r}")
        return global_name

    def repr_arg(self, arg):
        if isinstance(arg, Node):
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            cls = type(arg)
            return f"{self.add_global(cls.__name__, cls)}{tuple(arg)!r}"
        if isinstance(arg, tuple):
            if len(arg) == 1:
                return f"({self.repr_arg(arg[0])},)"
            return "(" + ", ".join(self.repr_arg(a) for a in arg) + ")"
        if isinstance(arg, list):
            return "[" + ", ".join(self.repr_arg(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr_arg(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return (f"slice({self.repr_arg(arg.start)}, {self.repr_arg(arg.stop)}, "
                    f"{self.repr_arg(arg.step)})")
        if isinstance(arg, enum.Enum):      # Color.RED, its class a global
            return f"{self.add_global(type(arg).__name__, type(arg))}.{arg.name}"
        if callable(arg) and hasattr(arg, "__name__") and not isinstance(arg, type):
            return self.add_global(_get_qualified_name(arg), arg)
        return repr(arg)

    def format_args(self, args, kwargs):
        parts = [self.repr_arg(a) for a in args]
        parts.extend(f"{k} = {self.repr_arg(v)}" for k, v in kwargs.items())
        return ", ".join(parts)

    def type_repr(self, o):
        """A type annotation as code, the globals it names registered: `ember.Tensor`, `int`,
        `list[str]`, `typing_List[str]` (typing's aliases by their own global name),
        `float|ember.Tensor|NoneType`."""
        if o == ():
            return "()"     # the empty tuple of Tuple[()]
        typename = _type_repr(o)
        if isinstance(o, types.UnionType) and "|" in typename:
            return "|".join(self.type_repr(arg) for arg in typing.get_args(o))
        origin_type = getattr(o, "__origin__", None)
        if origin_type:
            if isinstance(o, typing._GenericAlias):     # typing.List[...]: name typing's alias
                origin_type = _origin_type_map.get(origin_type, origin_type)
            origin_typename = self.add_global(_type_repr(origin_type), origin_type)
            args = typing.get_args(o)
            if args:
                return f"{origin_typename}[{','.join(self.type_repr(a) for a in args)}]"
            return origin_typename
        return self.add_global(typename, o)

    def annotation(self, node):
        """`: "f32[2, 8]"` from the recorded value when printing verbosely, else the node's
        type (` : ember.Tensor`) if it has one."""
        if self.verbose:
            if "sym_expr" in node.meta:     # a size computed from symbolic sizes
                return f': "Sym({node.meta["sym_expr"]})"'
            val = node.meta.get("val")
            if val is not None and hasattr(val, "dtype"):
                shape = node.meta.get("sym_shape", tuple(val.shape))
                return (f': "{_DTYPE_ABBR.get(str(val.dtype), str(val.dtype))}'
                        f'[{", ".join(map(str, shape))}]"')
        return "" if node.type is None else f" : {self.type_repr(node.type)}"

    def emit(self, node):
        name = repr(node)
        if node.op == "placeholder":
            default = "" if not node.args else f" = {self.repr_arg(node.args[0])}"
            self.free_vars.append(f"{node.target}{self.annotation(node)}{default}")
            raw_name = node.target.replace("*", "")
            return f"{name} = {raw_name}" if raw_name != name else None
        if node.op == "output":
            if node.type is not None:
                self.return_annotation = f" -> {self.type_repr(node.type)}"
            return f"return {self.repr_arg(node.args[0])}"
        name += self.annotation(node)
        if node.op == "call_method":
            return (f"{name} = {_format_target(self.repr_arg(node.args[0]), node.target)}"
                    f"({self.format_args(node.args[1:], node.kwargs)})")
        if node.op == "call_function":
            target = node.target
            if getattr(target, "__module__", "") == "_operator":
                if target.__name__ in magic_methods:
                    return f"{name} = " + magic_methods[target.__name__].format(
                        *(self.repr_arg(a) for a in node.args))
                if target.__name__ in inplace_methods:
                    return inplace_methods[target.__name__].format(
                        *(self.repr_arg(a) for a in node.args)) + \
                        f";  {name} = {self.repr_arg(node.args[0])}"
            global_name = self.add_global(_get_qualified_name(target), target)
            if node.meta.get("is_wrapped", False):
                self.wrapped_fns.setdefault(global_name)
            if (global_name == "getattr" and len(node.args) == 2
                    and isinstance(node.args[1], str) and node.args[1].isidentifier()):
                return f"{name} = {_format_target(self.repr_arg(node.args[0]), node.args[1])}"
            return f"{name} = {global_name}({self.format_args(node.args, node.kwargs)})"
        if node.op == "call_module":
            return (f"{name} = {_format_target(self.root_module, node.target)}"
                    f"({self.format_args(node.args, node.kwargs)})")
        if node.op == "get_attr":
            return f"{name} = {_format_target(self.root_module, node.target)}"
        raise NotImplementedError(f"node: {node.op} {node.target}")

    def generate(self):
        nodes = list(self.graph.nodes)
        for node in nodes:
            self.namespace.create_name(node.name, node)
        last_uses = {}
        seen = set()
        for node in reversed(nodes):
            for input_node in node._input_nodes:
                if input_node not in seen:
                    seen.add(input_node)
                    last_uses.setdefault(node, []).append(input_node)
        self.free_vars = []
        self.wrapped_fns = {}
        self.return_annotation = ""
        # the body as lines ending in "\n", each node's preceded by a `# COUNTER: i` marker
        # (removed below, after a body transformer has run) that maps lines back to nodes
        body = []
        for i, node in enumerate(nodes):
            body.append(f"# COUNTER: {i}\n")
            line = self.emit(node)
            if node.op in ("placeholder", "output"):
                if line is not None:
                    body.append(line + "\n")
                continue
            to_free = list(last_uses.get(node, []))
            if not node.users:
                to_free.append(node)
            if to_free:
                line += ";  " + " = ".join([repr(n) for n in to_free] + ["None"])
            body.append(line + "\n")
        if len(body) == len(nodes):     # markers only: the body needs a statement
            body.append("pass\n")
        if self.graph._body_transformer is not None:
            body = self.graph._body_transformer(body)
        lineno_map, lines, node_idx = {}, [], None
        for line in "".join(body).split("\n"):
            counter = _counter_regexp.search(line)
            if counter is not None:
                node_idx = int(counter.group(1))
            else:
                lineno_map[len(lines) + 1] = node_idx     # line 1 is the `def`
                lines.append(line)
        code = "\n".join("    " + line for line in "\n".join(lines).lstrip("\n").split("\n"))
        signature = ", ".join([self.root_module] + self.free_vars)
        # functions recorded through `wrap` stay wrapped when the generated code is traced again
        wrap_stmts = "\n".join(f'ember.fx._symbolic_trace.wrap("{name}")'
                               for name in self.wrapped_fns)
        src = f"\n{wrap_stmts}\n\ndef forward({signature}){self.return_annotation}:\n{code}"
        return PythonCode(src, self.globals, _lineno_map=lineno_map,
                          _prologue_start=wrap_stmts.count("\n") + 4)
