"""torch.fx's GraphModule: a Module made from a Graph. It holds the submodules, parameters and
buffers the graph's call_module and get_attr nodes name (copied from the traced root, or taken
from a dict), and a `forward` compiled from Python source generated from the graph; `code` shows
that source and `recompile()` regenerates it after the graph was edited.
"""
import collections
import copy
import itertools
import linecache
import os
import sys
import traceback

from ..nn import Module
from .graph import Graph

__all__ = ["GraphModule"]

_source_counter = itertools.count()


def _forward_from_src(src, globals_, name, co_fields=None):
    """exec the generated source under a unique file name registered with linecache, so
    tracebacks through generated code show its lines. The name tells where the traced code
    came from (`<eval_with_key>.3 from model.py:12 in forward`) when the graph knows it."""
    key = f"<eval_with_key>.{next(_source_counter)}"
    if co_fields:
        key += (f" from {co_fields['co_filename']}:{co_fields['co_firstlineno']} in "
                f"{co_fields['co_name']}")
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    scope = dict(globals_)
    exec(compile(src, key, "exec"), scope)
    forward = scope["forward"]
    forward.__qualname__ = f"{name}.forward"
    return forward


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_MODULE_CALL_FILE = os.path.join(_EMBER_DIR, "nn", "modules", "module.py")


def _raising_generated_frame(frames):
    """The generated-code frame an error came from, if it raised there: in PyTorch the
    raising op is C++ code, so the generated line is the innermost Python frame. ember's ops
    are Python, so frames of ember's own op code below the generated line count as the op;
    a submodule call below it (Module.__call__) means the error came from that module."""
    for i in range(len(frames) - 1, -1, -1):
        if "eval_with_key" in frames[i].filename:
            below = [f.filename for f in frames[i + 1:]]
            if all(f.startswith((_EMBER_DIR, "<ember")) and f != _MODULE_CALL_FILE
                   for f in below):     # "<ember generated bindings>": ember's own code too
                return frames[i]
            return None
    return None


def _generated_line_message(frame):
    """The traceback, then the generated line that raised, marked, with two lines around it."""
    lines = linecache.getlines(frame.filename)
    lineno = frame.lineno
    return "\n".join([traceback.format_exc(),
                      f"Call using an FX-traced Module, line {lineno} of the traced Module's "
                      "generated forward function:",
                      "".join(lines[lineno - 2:lineno]),
                      "~" * len(frame.line) + "~~~ <--- HERE",
                      "\n".join(lines[lineno:lineno + 2])])


def _copy_attr(from_module, to_module, target):
    """Install from_module's `a.b.c` at the same path on to_module, making empty Modules for
    intermediate levels that do not exist yet."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:      # a parent is already installed, with everything below it
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    # a tensor that is not a Parameter (a buffer, or a traced `_tensor_constant`) becomes a
    # buffer of the GraphModule, as PyTorch registers it: named_buffers() lists it
    from .._core.tensor import Tensor
    from ..nn import Parameter
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter) \
            and field not in to_module._parameters:
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    from .._core.tensor import Tensor
    from ..nn import Parameter
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _graph_without_meta(graph):
    """A copy of graph's nodes (names, targets, arguments, types) without their meta (which
    may hold anything, local classes included); the tracer class is kept if importable."""
    tracer_cls = graph._tracer_cls
    if tracer_cls is not None and "<locals>" in tracer_cls.__qualname__:
        tracer_cls = None
    copied = Graph(tracer_cls=tracer_cls)
    result = copied.graph_copy(graph, {}, return_output_node=True)
    if result is not None:
        copied.output(result[0], type_expr=result[1].type)
    for node in copied.nodes:
        node.meta = {}
    return copied


def _reconstruct_graph_module(state, graph):
    """Unpickling: a GraphModule with the pickled module state (parameters, buffers,
    submodules, hooks, training flag) and graph, `forward` compiled anew."""
    holder = Module()
    holder.__dict__ = state
    gm = GraphModule(holder, graph)
    # keep what no node refers to too: the unpickled module is the one that was pickled
    for name, _ in (*holder.named_children(), *holder.named_buffers(),
                    *holder.named_parameters()):
        _copy_attr(holder, gm, name)
    # the module stack PyTorch's loading records, re-tracing the code with every module a leaf
    calls = {}
    for node in graph.nodes:
        if node.op == "call_module":
            n = calls[node.target] = calls.get(node.target, -1) + 1
            key = f"{node.target}@{n}" if n else node.target
            node.meta["nn_module_stack"] = collections.OrderedDict(
                [(key, (node.target, type(gm.get_submodule(node.target))))])
    for key, value in state.items():
        gm.__dict__.setdefault(key, value)
    return gm


class GraphModule(Module):
    """GraphModule(root, graph, class_name='GraphModule'): root is the Module the graph was
    traced from, or a dict from qualified names to the modules/tensors the graph refers to.

    Each GraphModule gets a class of its own, so that `forward` can be set on the class when
    the graph is recompiled without touching other GraphModules."""

    def __new__(cls, *args, **kwargs):
        for t in cls.__mro__:
            if t.__name__ != "GraphModuleImpl" and t.__qualname__ != "GraphModuleImpl":
                break
        impl = type("GraphModuleImpl", (t,), {})
        return super().__new__(impl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.graph = graph
        self.meta = {}      # free-form annotations of passes, kept by deepcopy

    def __call__(self, *args, **kwargs):
        # An error raised by a line of the generated forward is reported with that line and
        # its neighbours (tracebacks through generated code otherwise show only a file name
        # like `<eval_with_key>.3`), then re-raised.
        try:
            return super().__call__(*args, **kwargs)
        except Exception as e:
            frame = _raising_generated_frame(traceback.extract_tb(e.__traceback__))
            if frame is None:
                raise
            print(_generated_line_message(frame), file=sys.stderr)
            raise e.with_traceback(None)  # noqa: B904

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to ember")
        return self._code

    def recompile(self):
        """Regenerate `code` and `forward` from the graph (call after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        self._prologue_start = python_code._prologue_start
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals, cls.__name__,
                                        getattr(self._graph, "_co_fields", None))
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The generated code as a class definition, nested GraphModules included."""
        lines = self._readable_lines(type(self).__name__)
        text = "\n".join(lines) + "\n"
        if print_output:
            print(text)
        return text

    def _readable_lines(self, name):
        lines = [f"class {name}(ember.nn.Module):"]
        for child_name, child in self.named_children():
            if isinstance(child, GraphModule):
                lines.extend("    " + line for line in child._readable_lines(child_name))
                lines.append("")
        body = self._code.strip("\n").rstrip()
        lines.extend("    " + line for line in body.splitlines())
        return lines

    def add_submodule(self, target, m):
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        *path, field = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, field) or not isinstance(getattr(mod, field), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self):
        """Delete the submodules no node reaches: those on the path of a call_module or
        get_attr target are used, and so is everything inside a called module."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                used.update(".".join(fullpath[:i]) for i in range(1, len(fullpath) + 1))
            if node.op == "call_module":
                try:
                    submod = self.get_submodule(node.target)
                except AttributeError:
                    continue
                used.update(f"{node.target}.{name}" for name, _ in submod.named_modules() if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def __reduce__(self):
        # Pickle by content, not by class: each GraphModule's class is made on the fly (see
        # __new__), so pickle could not look it up by name. The module's state and its graph's
        # nodes are pickled, and loading builds a fresh GraphModule from them, regenerating
        # `forward`. What comes back is what PyTorch's pickle (which re-traces the generated
        # code) gives: a class named GraphModule, nodes without meta.
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_reconstruct_graph_module, (state, _graph_without_meta(self._graph)))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        holder = Module()
        holder.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, holder, holder.__dict__["_graph"], type(self).__name__)
        res.meta = holder.__dict__.get("meta", {})
        return res

    def _replicate_for_data_parallel(self):
        replica = self.__copy__()
        replica._is_replica = True
        return replica

    def __copy__(self):
        return GraphModule(self, self.graph, type(self).__name__)

    def __str__(self):
        return super().__str__() + "\n\n" + self._code
