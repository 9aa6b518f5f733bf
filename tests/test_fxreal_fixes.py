"""Fixes found by running PyTorch's test/test_fx.py (class TestFX) under ember: each case runs
the same code with ember.fx and torch.fx and compares what they record, print and compute
(ember spells its namespace `ember.` where torch prints `torch.`)."""
import copy
import io
import pickle

import numpy as np
import pytest

import ember
import ember.fx
from ember.fx.passes import shape_prop as ember_shape_prop

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402
from torch.fx.passes import shape_prop as torch_shape_prop  # noqa: E402

LIBS = [ember, torch]


def _np(t):
    return np.asarray(t.detach().numpy())


def _same_text(e, t):
    assert e.replace("ember.", "torch.") == t


def _leaf(a, b):      # a module-level call target, so a pickled graph can name it
    return a + b


# ---- pickling and copying GraphModules -------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS, ids=["ember", "torch"])
def test_pickle_graphmodule_roundtrip(lib):
    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 3)
    graph = lib.fx.Graph()
    x, y = graph.placeholder("x"), graph.placeholder("y")
    out = graph.call_function(lib.sin, (graph.call_function(_leaf, (graph.call_module("lin", (x,)), y)),))
    graph.output(out)
    root = lib.nn.Module()
    root.lin = lin
    gm = lib.fx.GraphModule(root, graph, "MyGraph")
    loaded = pickle.loads(pickle.dumps(gm))
    loaded.graph.lint()
    assert type(gm).__name__ == "MyGraph"
    assert type(loaded).__name__ == "GraphModule" and type(loaded) is not type(gm)
    a, b = lib.rand(2, 4), lib.rand(2, 3)
    np.testing.assert_array_equal(_np(loaded(a, b)), _np(gm(a, b)))
    buf = io.BytesIO()
    lib.save(gm, buf)
    buf.seek(0)
    reloaded = lib.load(buf, weights_only=False)
    np.testing.assert_array_equal(_np(reloaded(a, b)), _np(gm(a, b)))


def _ops_fn(lib):
    def f(a):
        b = lib.ops.aten.sigmoid(a)
        c = lib.ops.aten.cat([a, b])
        return lib.ops.aten.add.Tensor(c, c)
    return f


def test_trace_torch_ops_calls():
    egm = ember.fx.symbolic_trace(_ops_fn(ember))
    tgm = torch.fx.symbolic_trace(_ops_fn(torch))
    _same_text(egm.code, tgm.code)
    _same_text(str(egm.graph), str(tgm.graph))
    overload = [n.target for n in egm.graph.nodes if n.name == "add_tensor"][0]
    assert isinstance(overload, ember._ops.OpOverload) and overload.__name__ == "add.Tensor"
    x = ember.randn(3)
    np.testing.assert_allclose(_np(pickle.loads(pickle.dumps(egm))(x)), _np(egm(x)))
    assert pickle.loads(pickle.dumps(ember.ops.aten.add.Tensor)) is ember.ops.aten.add.Tensor
    assert pickle.loads(pickle.dumps(ember.ops.aten.cat)) is ember.ops.aten.cat


def test_tensor_method_given_a_proxy_is_call_method():
    def make(lib):
        c = lib.ones(3)

        def f(x):
            return c @ x, c + x, lib.ones(3).add_(x)
        return f
    _same_text(ember.fx.symbolic_trace(make(ember)).code, torch.fx.symbolic_trace(make(torch)).code)


def test_assert_is_recorded():
    def make(lib):
        def f(x):
            lib._assert(x.shape[1] > 4, "assert_foobar")
            return x
        return f
    egm, tgm = ember.fx.symbolic_trace(make(ember)), torch.fx.symbolic_trace(make(torch))
    assert [n.name for n in egm.graph.nodes] == [n.name for n in tgm.graph.nodes]
    egm(ember.rand(4, 5))
    with pytest.raises(AssertionError, match="assert_foobar"):
        egm(ember.rand(4, 3))
    with pytest.raises(AssertionError, match="assert_foobar"):
        ember._assert(False, "assert_foobar")


# ---- tracer behaviour --------------------------------------------------------------------------

def _models(lib):
    class Sub(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(2, 2, 3, padding=1, bias=False)

        def forward(self, x):
            return self.conv(x).relu()

    class Top(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()

        def forward(self, x):
            y = self.sub(x)
            return self.sub(y) + x

    return Top()


def _module_stacks(gm):
    return [(n.name, [(k, v[0], v[1].__name__) for k, v in n.meta.get("nn_module_stack", {}).items()])
            for n in gm.graph.nodes]


def test_nn_module_stack_and_stack_traces():
    assert _module_stacks(ember.fx.symbolic_trace(_models(ember))) == \
        _module_stacks(torch.fx.symbolic_trace(_models(torch)))
    for lib in LIBS:
        tracer = lib.fx.Tracer()
        tracer.record_stack_traces = True
        graph = tracer.trace(_models(lib))
        traces = {n.name: n.stack_trace for n in graph.nodes}
        assert "return self.conv(x).relu()" in traces["sub_conv"]
        assert "y = self.sub(x)" in traces["sub_conv"]
        assert "return self.sub(y) + x" in traces["add"]
        assert traces["x"] is None and traces["output"] is None
        # a Transformer's copies keep them
        new = lib.fx.Transformer(lib.fx.GraphModule(tracer.root, graph)).transform()
        assert {n.name: n.stack_trace for n in new.graph.nodes if n.op != "placeholder"
                and n.op != "output"} == {k: v for k, v in traces.items() if k not in ("x", "output")}
        assert _module_stacks(new) == _module_stacks(lib.fx.GraphModule(tracer.root, graph))


def test_varargs_concrete_and_traced_func_name():
    def make(lib):
        class T(lib.nn.Module):
            def forward(self, *args, **kwargs):
                return args[0] + args[1]
        return T()
    names = [[n.name for n in lib.fx.symbolic_trace(make(lib), concrete_args=(lib.fx.PH, lib.fx.PH))
              .graph.nodes] for lib in LIBS]
    assert names[0] == names[1] == ["input_0", "input_1", "add", "output"]
    messages = []
    for lib in LIBS:
        tracer = lib.fx.Tracer()
        tracer.traced_func_name = "add_forward"
        with pytest.raises(AssertionError) as info:
            tracer.trace(make(lib))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_generated_code_file_names_the_source():
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(_models(lib))
        filename = gm.forward.__code__.co_filename
        assert filename.startswith("<eval_with_key>.") and __file__ in filename
        assert filename.endswith(" in forward")


def test_boxed_run():
    messages = []
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(lambda lhs, rhs: lhs + rhs)
        interp = lib.fx.Interpreter(gm)
        args = [lib.tensor(1.0), lib.tensor(2.0)]
        assert float(interp.boxed_run(args)) == 3.0 and args == []
        for bad in ([lib.tensor(1.0)] * 3, [lib.tensor(1.0)]):
            with pytest.raises(RuntimeError) as info:
                interp.boxed_run(bad)
            messages.append(str(info.value))
    assert messages[:2] == messages[2:]


# ---- ShapeProp ---------------------------------------------------------------------------------

def test_shape_prop_memory_format_and_tensor_attributes():
    results = []
    for lib, sp in ((ember, ember_shape_prop), (torch, torch_shape_prop)):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.attr = lib.randn(3, 4)     # a plain tensor attribute, not a buffer
                self.conv = lib.nn.Conv2d(3, 3, 1)

            def forward(self, x):
                return self.conv(x) + self.attr
        gm = lib.fx.symbolic_trace(M())
        x = lib.randn(2, 3, 3, 4).contiguous(memory_format=lib.channels_last)
        sp.ShapeProp(gm).propagate(x)
        results.append([(n.name, str(n.meta["tensor_meta"].memory_format), tuple(n.meta["tensor_meta"].shape))
                        for n in gm.graph.nodes if "tensor_meta" in n.meta])
    assert [(a, b.replace("ember.", "torch."), c) for a, b, c in results[0]] == results[1]


# ---- harness pieces --------------------------------------------------------------------------

@pytest.mark.parametrize("build,ok", [
    (lambda fc: fc.check("a").check("c"), True),
    (lambda fc: fc.check("c").check("a"), False),
    (lambda fc: fc.check_count("b", 2, exactly=True), True),
    (lambda fc: fc.check_count("b", 1, exactly=True), False),
    (lambda fc: fc.check_count("b", 3), False),
    (lambda fc: fc.check("a").check_not("x").check("c"), True),
    (lambda fc: fc.check("a").check_not("b").check("c"), False),
    (lambda fc: fc.check("a").check_next("b"), True),
    (lambda fc: fc.check("a").check_same("b"), False),
    (lambda fc: fc.check("c").check_not("b"), True),
])
def test_filecheck(build, ok):
    text = "a\nb\nb c\n"
    for lib in LIBS:
        fc = build(lib.testing.FileCheck())
        if ok:
            fc.run(text)
        else:
            with pytest.raises(RuntimeError):
                fc.run(text)


def test_pickled_graphmodule_of_local_classes_drops_meta():
    # nn_module_stack names local classes; pickling keeps the nodes, not their meta (torch
    # re-traces the pickled code, which records only the called leaf module)
    stacks = []
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(_models(lib))
        loaded = pickle.loads(pickle.dumps(gm))
        assert [n.name for n in loaded.graph.nodes] == [n.name for n in gm.graph.nodes]
        stacks.append(_module_stacks(loaded))
        assert all(set(n.meta) <= {"nn_module_stack"} for n in loaded.graph.nodes)
        x = lib.randn(1, 2, 4, 4)
        np.testing.assert_allclose(_np(loaded(x)), _np(gm(x)))
    assert stacks[0] == stacks[1]
    egm = ember.fx.symbolic_trace(_models(ember))
    assert str(copy.deepcopy(egm).graph) == str(egm.graph)


# ---- ProxyableClassMeta, cross-graph nodes, Proxy deepcopy ----------------------------------

def _pair_fn(lib):
    class TensorPair(metaclass=lib.fx.ProxyableClassMeta):
        def __init__(self, left, right):
            self.left, self.right = left, right

        def add(self, other):
            return TensorPair(self.left + other.left, self.right + other.right)

    def f(x, y):
        s = x.add(TensorPair(lib.zeros(2), lib.zeros(2)))     # a constant instance
        return s.add(TensorPair(y, y))                           # an instance of Proxies
    return f, TensorPair


def test_proxyable_class_meta():
    graphs, results = [], []
    for lib in LIBS:
        f, pair = _pair_fn(lib)
        gm = lib.fx.symbolic_trace(f)
        graphs.append([(n.op, n.name, n.target if isinstance(n.target, str) else n.target.__name__)
                       for n in gm.graph.nodes])
        lib.manual_seed(0)
        x, y = pair(lib.randn(2), lib.randn(2)), lib.randn(2)
        out = gm(x, y)
        results.append((_np(out.left), _np(out.right)))
    assert graphs[0] == graphs[1]
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)


def test_node_copy_without_remap_is_a_lint_error_and_proxy_deepcopy():
    messages = []
    for lib in LIBS:
        g = lib.fx.symbolic_trace(lambda x: lib.relu(x + 3.0)).graph
        copied = lib.fx.Graph()
        for node in g.nodes:
            copied.node_copy(node)
        with pytest.raises(RuntimeError, match="does not belong to this Graph"):
            copied.lint()

        class NamedTracer(lib.fx.Tracer):
            def __init__(self, name):
                super().__init__()
                self.name = name
        node = list(g.nodes)[-2]
        tracer = NamedTracer("mytracer")
        p2 = copy.deepcopy(lib.fx.Proxy(node, tracer))
        assert p2.tracer is not tracer and p2.tracer.name == "mytracer"
        assert p2.node is not node and p2.node.name == node.name
        messages.append(p2.node.name)
    assert messages[0] == messages[1]


# ---- type annotations, immutable collections, small graph APIs --------------------------------

def _annotated(lib):
    import typing

    class M(lib.nn.Module):
        def forward(self, x: lib.Tensor, y: typing.Optional[lib.Tensor] = None,
                    z: typing.List[int] = None) -> typing.Tuple[lib.Tensor, int]:
            return x.relu(), 3
    return M()


def test_type_annotations_in_code_and_graph():
    egm, tgm = ember.fx.symbolic_trace(_annotated(ember)), torch.fx.symbolic_trace(_annotated(torch))
    _same_text(egm.code, tgm.code)
    _same_text(str(egm.graph), str(tgm.graph))
    assert egm(ember.ones(2))[1] == 3
    texts = []
    for lib in LIBS:
        g = lib.fx.Graph()
        x = g.placeholder("x")
        g.output(g.call_function(lib.relu, (x,), type_expr=float | lib.Tensor | None))
        texts.append((str(g), lib.fx.GraphModule(lib.nn.Module(), g).code))
    _same_text(texts[0][0], texts[1][0])
    _same_text(texts[0][1], texts[1][1])


def test_immutable_collections_and_prepend_self():
    from ember.fx.immutable_collections import immutable_dict, immutable_list
    import ember.utils._pytree as epytree
    from torch.fx.immutable_collections import immutable_list as tlist
    import torch.utils._pytree as tpytree
    for cls, pytree in ((immutable_list, epytree), (tlist, tpytree)):
        lst = cls([3, [4, 42]])
        leaves, spec = pytree.tree_flatten(lst)
        assert leaves == [3, 4, 42]
        assert type(pytree.tree_unflatten(leaves, spec)) is cls
        with pytest.raises(TypeError, match="new_args"):
            lst[0] = 4
    d = immutable_dict({"a": 1, "b": [2]})
    leaves, spec = epytree.tree_flatten(d)
    assert leaves == [1, 2] and type(epytree.tree_unflatten(leaves, spec)) is immutable_dict
    for lib in LIBS:
        graph = lib.fx.Graph()
        x = graph.placeholder("x")
        b = graph.call_function(lib.relu, (x,))
        graph.output(b)
        b.prepend(b)
        x.append(b)
        assert [n.name for n in graph.nodes] == ["x", "relu", "output"]


def test_dataclass_result_and_like_factories_pin_memory():
    from dataclasses import dataclass
    for lib in LIBS:
        @dataclass
        class Out:
            foo: object
            bar: object

        def f(d):
            return Out(foo=d + d, bar=lib.empty_like(d, pin_memory=False).fill_(0))
        gm = lib.fx.symbolic_trace(f)
        out = gm(lib.ones(2))
        assert type(out) is Out and float(out.foo.sum()) == 4.0 and float(out.bar.sum()) == 0.0
        assert [n.op for n in gm.graph.nodes][-2] == "call_function"


def _dot_model(lib, submodule):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.W = lib.nn.Parameter(lib.randn(5))
            self.linear = lib.nn.Linear(3, 4)

        def forward(self, x):
            return self.linear(x) if submodule else lib.dot(self.W, x)
    return lib.fx.symbolic_trace(M())


@pytest.mark.parametrize("submodule", [False, True])
def test_error_on_generated_line_is_reported(submodule, capsys):
    reported = []
    for lib in LIBS:
        gm = _dot_model(lib, submodule)
        # dot of a number: raised by the op the generated line calls; a wrongly shaped input:
        # raised inside the Linear submodule, which the report leaves out
        with pytest.raises(RuntimeError if submodule else TypeError):
            gm(lib.ones(2, 5) if submodule else 5)
        err = capsys.readouterr().err
        reported.append("Call using an FX-traced Module, line" in err)
        if reported[-1]:
            assert "~~~ <--- HERE" in err and "dot" in err
    assert reported == [not submodule] * 2


def test_op_typename():
    for op in ("add.Tensor", "relu.default"):
        name, overload = op.split(".")
        assert ember.typename(getattr(getattr(ember.ops.aten, name), overload)) == \
            torch.typename(getattr(getattr(torch.ops.aten, name), overload))


# ---- mutable operations, submodule bookkeeping --------------------------------------------------

def test_check_mutable_operations_refuses_out_and_inplace():
    messages = []
    for lib in LIBS:
        class MyTracer(lib.fx.Tracer):
            check_mutable_operations = True

        def out_variant(x):
            y = lib.rand_like(x)
            lib.sigmoid(x, out=y)
            return y

        def inplace(x):
            return lib.ops.aten.add_.Tensor(x, x)

        for fn in (out_variant, inplace):
            with pytest.raises(RuntimeError) as info:
                MyTracer().trace(fn)
            messages.append(str(info.value))
        MyTracer().trace(lambda x: lib.sigmoid(x) + lib.add(x, x, alpha=2))   # functional: fine
    assert messages[:2] == messages[2:]


def test_unused_submodules_leaf_replica_and_get_attr_warning():
    for lib in LIBS:
        class Sub(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = lib.nn.Linear(4, 4)

            def forward(self, x):
                return self.linear(x).relu()

        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.submod = Sub()
                self.unused = lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.submod(x)

        class SubIsLeaf(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return qualname == "submod"

        model = Model()
        gm = lib.fx.GraphModule(model, SubIsLeaf().trace(model))
        gm.add_submodule("extra", lib.nn.ReLU())
        gm.delete_all_unused_submodules()
        assert [name for name, _ in gm.named_modules()] == ["", "submod", "submod.linear"]
        x = lib.randn(2, 4)
        replica = gm._replicate_for_data_parallel()
        np.testing.assert_array_equal(_np(replica(x)), _np(gm(x)))
        with pytest.warns(UserWarning, match="no underlying reference"):
            gm.graph.erase_node(gm.graph.get_attr("submod.nothing"))


def test_meta_deepcopy_enum_insert_arg_and_tracer_deepcopy():
    from enum import Enum

    class Color(Enum):
        RED = 1

    def leaf_fn(arr, value):
        arr.append(value)
        return arr[-1].value

    codes = []
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(lambda x: leaf_fn(x, Color.RED))
        assert gm([]) == 1
        codes.append(gm.code)
        m = lib.fx.symbolic_trace(lambda x: lib.relu(x + 3.0))
        m.meta["self"] = m
        copied = copy.deepcopy(m)
        assert copied.meta["self"] is copied
        out = list(m.graph.nodes)[-1]
        with m.graph.inserting_before(out):
            x = m.graph.placeholder("y")
        out.insert_arg(0, x)
        assert out.args[0] is x and list(x.users) == [out]
        tracer = lib.fx.Tracer()
        tracer.trace(lambda a, b: (a + b).relu())
        assert str(copy.deepcopy(tracer).graph) == str(tracer.graph)
    _same_text(codes[0], codes[1])


def test_lineno_map_and_on_generate_code():
    results = []
    for lib in LIBS:
        def f(a, b):
            return lib.sin(a) + lib.cos(b)
        gm = lib.fx.symbolic_trace(f)
        first = (dict(gm._lineno_map), gm._prologue_start)
        with gm.graph.on_generate_code(lambda _: lambda body: ["print('hello!')\n", *body]):
            gm.recompile()
            second = (dict(gm._lineno_map), gm._prologue_start, gm.code)
        gm.recompile()
        results.append((first, second[:2], "print('hello!')" in second[2],
                        "print('hello!')" in gm.code))
        empty = lib.fx.GraphModule(lib.nn.Module(), lib.fx.Graph())
        results.append(empty.code)
    assert results[:2] == results[2:]


def test_unpickled_graphmodule_keeps_unused_attributes():
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(lambda x: x + x)
        gm.add_submodule("foo", lib.nn.Linear(2, 2))
        gm.register_buffer("dummy_buffer", lib.ones(1))
        gm.register_parameter("dummy_parameter", lib.nn.Parameter(lib.ones(1)))
        buf = io.BytesIO()
        lib.save(gm, buf)
        buf.seek(0)
        loaded = lib.load(buf, weights_only=False)
        assert sorted(dict(loaded.named_parameters())) == \
            ["dummy_parameter", "foo.bias", "foo.weight"]
        assert list(dict(loaded.named_buffers())) == ["dummy_buffer"]
