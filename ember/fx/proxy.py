"""torch.fx's Proxy: the stand-in value a symbolic trace passes through a forward function. Every
operation on a Proxy (an operator, a method call, an attribute, an indexing, a call of an ember
function) appends a Node to the tracer's graph and returns a new Proxy for its result, so running
the Python code once writes down what it computes. TracerBase turns the Python values appearing
as arguments into graph arguments (`create_arg`).
"""
import bisect
import copy
import dataclasses
import dis
import enum
import inspect
import operator
import os
import traceback

from .graph import magic_methods, reflectable_magic_methods
from .node import Node, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute"]


class TraceError(ValueError):
    pass


# the meta fields a rewritten node keeps from the node it replaces
_COPY_META_FIELDS = ["nn_module_stack", "torch_fn", "source_fn_stack", "original_aten",
                     "recompute", "ac_graph_id", "has_backward_hook", "from_node",
                     "quantization_tag", "_numeric_debug_handle", "custom", "partitioner_tag"]

_FX_DIR = os.path.dirname(os.path.abspath(__file__))
_EMBER_INIT = os.path.join(os.path.dirname(_FX_DIR), "__init__.py")


def _matched_schema(target, args, kwargs):
    """The schema of the op a call_function target runs, when the call's arguments fit exactly
    one overload (by count and keyword names); None for other targets or ambiguous calls."""
    from .._dispatch.dispatcher import OpOverload, OpOverloadPacket
    if isinstance(target, OpOverload):
        return target.schema
    packet = target if isinstance(target, OpOverloadPacket) else None
    if packet is None and getattr(target, "__module__", "").startswith("ember"):
        import ember
        packet = getattr(ember.ops.aten, getattr(target, "__name__", ""), None)
    if packet is None:
        return None
    names = set(kwargs) - {"out"}
    fits = []
    for overload in packet.overloads():
        schema = getattr(packet, overload).schema
        positional = [a for a in schema.arguments if not a.kwarg_only]
        if len(args) <= len(positional) and names <= {a.name for a in schema.arguments}:
            fits.append(schema)
    return fits[0] if len(fits) == 1 else None


def _check_for_mutable_operation(target, args, kwargs):
    """check_mutable_operations: refuse an op that writes to an argument, an in-place one or
    (given `out=`) the `.out` overload, naming its schema as PyTorch does."""
    schema = _matched_schema(target, args, kwargs)
    if schema is None:
        return
    text = str(schema)      # aten::add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)
    if "out" in kwargs and not schema.has_out:
        params = text[text.index("(") + 1:text.rindex(") ->")]
        params += ", Tensor(a!) out" if "*" in params else ", *, Tensor(a!) out"
        text = f"{schema.namespace}::{schema.name}.out({params}) -> Tensor(a!)"
    elif not any(a.mutable for a in schema.arguments):
        return
    raise RuntimeError(f"Tried to trace mutable operation {text}. FX only supports functional "
                       "code, so operations that mutate operands in-place (e.g. via `out` "
                       "arguments) are not supported")


def _user_stack_trace():
    """The Python stack from the first `forward` frame on, without ember.fx's own frames (the
    tracer, Proxy operators, patched functions); None outside a forward."""
    frames = list(traceback.walk_stack(None))[::-1]     # outermost first, no source read yet
    first = next((i for i, (f, _) in enumerate(frames) if f.f_code.co_name == "forward"), None)
    if first is None:
        return None
    user = [(f, lineno) for f, lineno in frames[first:]
            if not (f.f_code.co_filename.startswith(_FX_DIR)
                    or f.f_code.co_filename == _EMBER_INIT)]
    return "".join(traceback.StackSummary.extract(user).format()).strip()


def _base_types():
    import ember
    return (str, int, float, bool, complex, ember.dtype, ember.device, ember.layout,
            ember.memory_format)


class TracerBase:
    """Records nodes into `self.graph`; subclasses decide how values become arguments and what
    happens at module calls."""
    graph = None
    record_stack_traces = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    # Off by default, as in torch.fx (whose own tests turn it on): when set, a call_function of
    # an op whose matched schema writes to an argument (an `out=` overload) is refused
    check_mutable_operations = False

    # set by a Transformer while it re-creates a node: the meta of the node being copied
    _current_meta = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """The node, with where it came from in its meta: the meta fields a Transformer
        carries over from the node it rewrites, else the stack of modules whose forward is
        being traced (`nn_module_stack`), and the user's stack (`stack_trace`) when
        record_stack_traces is set."""
        if kind == "call_function" and self.check_mutable_operations:
            _check_for_mutable_operation(target, args, kwargs)
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self._current_meta is not None:
            if self._current_meta.get("stack_trace"):
                node.meta["stack_trace"] = self._current_meta["stack_trace"]
            for field in _COPY_META_FIELDS:
                if field in self._current_meta:
                    node.meta[field] = copy.copy(self._current_meta[field])
        elif getattr(self, "module_stack", None):
            node.meta["nn_module_stack"] = copy.copy(self.module_stack)
        if self.record_stack_traces and not node.stack_trace:
            stack_trace = _user_stack_trace()
            if stack_trace:
                node.stack_trace = stack_trace
        return node

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Record `target` applied to args/kwargs (Python values, Proxies among them) and
        return the Proxy of its result."""
        if kind == "call_function":     # a function patched for the trace: record the original
            target = getattr(target, "_fx_original", target)
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*[self.create_arg(elem) for elem in a])
            return tuple(self.create_arg(elem) for elem in a)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, Node):
            return a
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            # a dataclass instance is rebuilt in the graph from its (traced) fields
            kwargs = {field.name: self.create_arg(getattr(a, field.name))
                      for field in dataclasses.fields(a)}
            return self.create_node("call_function", a.__class__, (), kwargs)
        if isinstance(a, (*_base_types(), enum.Enum)) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy "
                         "is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs for what control flow can be traced")

    def keys(self, obj):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph (used when building graphs by hand and
    by Transformer)."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph


def _calling_instruction():
    """The bytecode instruction of the frame that triggered the dunder calling this."""
    frame = inspect.currentframe().f_back.f_back
    instructions = list(dis.get_instructions(frame.f_code))
    idx = bisect.bisect_left(instructions, frame.f_lasti, key=lambda ins: ins.offset)
    return instructions[idx]


class Proxy:
    """The value of `node` during a trace. Arithmetic, comparisons and indexing record
    `operator.*` call_function nodes; attributes record `getattr`; method calls record
    call_method nodes; Python control flow on a Proxy is an error (its value is unknown)."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # a method call is recorded as call_method when the Attribute is called; only a
        # plain attribute read records a getattr node
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        # a tracer holds things deepcopy refuses (modules to autowrap): those attributes are
        # copied shallowly instead, as torch.fx does
        new = Proxy.__new__(type(self))
        for k, v in self.__dict__.items():
            try:
                new.__dict__[k] = copy.deepcopy(v, memo)
            except Exception:
                new.__dict__[k] = copy.copy(v)
        return new

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        """A call that meets a Proxy among its arguments without having been patched for the
        trace (a Tensor method of a real tensor given a Proxy, `ember.ops.aten.*`) records
        itself: Tensor methods as call_method nodes, anything else as call_function."""
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while trying "
                               f"to trace operations {orig_method}")
        tracer = next(iter(tracers))
        if getattr(orig_method, "__qualname__", "").startswith("Tensor."):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))

    def __iter__(self):
        # `a, b = proxy` unpacks into getitem nodes; the bytecode that asked tells the count
        inst = _calling_instruction()
        if inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call ember.fx.wrap('len') at "
                           "module scope")


class Attribute(Proxy):
    """`proxy.name`: becomes a call_method node if called, else a getattr node when used."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _define_magic(method):
    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", getattr(operator, method), args,
                                           kwargs)
    impl.__name__ = method
    setattr(Proxy, f"__{method.strip('_')}__", impl)


def _define_reflectable(method):
    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", getattr(operator, method),
                                        (rhs, self), {})
    impl.__name__ = f"__r{method.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


for _method in magic_methods:
    _define_magic(_method)
for _method in reflectable_magic_methods:
    _define_reflectable(_method)
