"""ember.fx against torch.fx: the same models, written once against a library `lib`, traced by
both; the graphs must hold the same nodes in the same order (op kind, name, target by name,
argument structure). Then: generated code runs and equals eager, graph edits, Interpreter and
Transformer, replace_pattern, ShapeProp (on ember's meta device) against torch's ShapeProp."""
import functools
import math
import operator

import numpy as np
import pytest

import ember
import ember.fx
from ember.fx.passes.shape_prop import ShapeProp

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp  # noqa: E402


# ---- comparing graphs -----------------------------------------------------------------------

def _target(n, lib):
    if lib is torch:
        name = torch.fx.node.Node._pretty_print_target(n.target)
        # a public function by its public name (torch.functional.split is torch.split,
        # torch._C._nn.gelu is F.gelu), as ember spells it
        for public in ("torch", "torch.nn.functional"):
            short = getattr(n.target, "__name__", "")
            if callable(n.target) and getattr(eval(public), short, None) is n.target:
                name = f"{public}.{short}"
                break
    else:
        name = ember.fx.node._pretty_print_target(n.target)
        if name.startswith("ember."):
            name = "torch." + name[len("ember."):]
    return {"torch._assert": "_assert",
            "torch.fx._symbolic_trace._assert": "_assert"}.get(name, name)


def _canon(a, lib):
    node_type = torch.fx.Node if lib is torch else ember.fx.Node
    if isinstance(a, node_type):
        return ("%", a.name)
    if isinstance(a, (list, tuple)):
        return type(a).__mro__[-2](_canon(x, lib) for x in a) if not hasattr(a, "_fields") \
            else tuple(_canon(x, lib) for x in a)
    if isinstance(a, dict):
        return {k: _canon(v, lib) for k, v in a.items()}
    if isinstance(a, slice):
        return ("slice", _canon(a.start, lib), _canon(a.stop, lib), _canon(a.step, lib))
    if isinstance(a, (lib.dtype, lib.device)):
        return str(a)
    return a


def rows(gm, lib):
    return [(n.op, n.name, _target(n, lib), _canon(n.args, lib), _canon(n.kwargs, lib))
            for n in gm.graph.nodes]


def assert_same_graph(egm, tgm):
    e, t = rows(egm, ember), rows(tgm, torch)
    for i, (er, tr) in enumerate(zip(e, t)):
        assert er == tr, f"node {i}: ember {er} != torch {tr}"
    assert len(e) == len(t), (len(e), len(t))


# ---- the models, written once -----------------------------------------------------------------

def mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.act = nn.ReLU()
            self.drop = nn.Dropout(0.1)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = x.view(x.size(0), -1)
            x = self.drop(self.act(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)
    return MLP()


def lenet(lib):
    nn, F = lib.nn, lib.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 4 * 4, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)
    return LeNet()


def lstm_wrapper(lib):
    nn = lib.nn

    class LSTMHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out[:, -1]) + h[-1].sum(-1, keepdim=True) * c.mean()
    return LSTMHead()


def encoder_layer(lib):
    nn, F = lib.nn, lib.nn.functional

    class EncoderLayer(nn.Module):
        """A post-norm Transformer encoder layer, MultiheadAttention as a leaf."""

        def __init__(self, d_model=16, nhead=4, dim_feedforward=32):
            super().__init__()
            self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=0.0, batch_first=True)
            self.linear1 = nn.Linear(d_model, dim_feedforward)
            self.dropout = nn.Dropout(0.1)
            self.linear2 = nn.Linear(dim_feedforward, d_model)
            self.norm1 = nn.LayerNorm(d_model)
            self.norm2 = nn.LayerNorm(d_model)

        def forward(self, src):
            attn, _ = self.self_attn(src, src, src, need_weights=False)
            x = self.norm1(src + F.dropout(attn, p=0.1, training=self.training))
            ff = self.linear2(self.dropout(F.relu(self.linear1(x))))
            return self.norm2(x + ff)
    return EncoderLayer()


def library_encoder_layer(lib):
    nn = lib.nn

    class Wrapped(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)

        def forward(self, x):
            return self.layer(x).softmax(-1)
    return Wrapped()


# torchvision's ResNet-18, written here for torch (torchvision is not installed)
class TorchBasicBlock(torch.nn.Module):
    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class TorchResNet18(torch.nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        nn = torch.nn
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, 1)
        self.layer2 = self._make_layer(128, 2)
        self.layer3 = self._make_layer(256, 2)
        self.layer4 = self._make_layer(512, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def _make_layer(self, planes, stride):
        nn = torch.nn
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes))
        layers = [TorchBasicBlock(self.inplanes, planes, stride, downsample),
                  TorchBasicBlock(planes, planes)]
        self.inplanes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


def resnet18(lib):
    if lib is torch:
        return TorchResNet18()
    from ember.vision.models import resnet18 as ember_resnet18
    return ember_resnet18()


MODELS = {
    "mlp": (mlp, (4, 16)),
    "lenet": (lenet, (2, 1, 28, 28)),
    "resnet18": (resnet18, (1, 3, 32, 32)),
    "lstm": (lstm_wrapper, (3, 5, 8)),
    "encoder_layer": (encoder_layer, (2, 5, 16)),
    "library_encoder_layer": (library_encoder_layer, (2, 5, 16)),
}


@functools.lru_cache(maxsize=None)
def _both(builder):
    """The model built in both libraries with torch's weights (cached: ember's ResNet-18 takes
    seconds to initialise)."""
    ember.manual_seed(0)
    torch.manual_seed(0)
    e, t = builder(ember), builder(torch)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return e.eval(), t.eval()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_trace_matches_torch_fx_node_by_node(name):
    builder, shape = MODELS[name]
    e, t = _both(builder)
    egm, tgm = ember.fx.symbolic_trace(e), torch.fx.symbolic_trace(t)
    assert_same_graph(egm, tgm)
    egm.graph.lint()
    # the generated forward is torch.fx's, character for character, with ember for torch
    assert egm.code.replace("ember.", "torch.") == tgm.code
    assert type(egm).__name__ == type(e).__name__


@pytest.mark.parametrize("name", sorted(MODELS))
def test_generated_code_runs_and_equals_eager(name):
    builder, shape = MODELS[name]
    e, t = _both(builder)
    egm = ember.fx.symbolic_trace(e)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    got, eager = egm(ember.tensor(x)), e(ember.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(), eager.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got.detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-4)
    assert "def forward(self" in egm.code


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shape_prop_on_meta_equals_torch(name):
    builder, shape = MODELS[name]
    e, t = _both(builder)
    egm, tgm = ember.fx.symbolic_trace(e), torch.fx.symbolic_trace(t)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = ShapeProp(egm).propagate(ember.tensor(x))
    TorchShapeProp(tgm).propagate(torch.tensor(x))
    assert out.device.type == "meta"
    assert next(egm.parameters()).device.type == "cpu"     # the module itself is untouched
    for en, tn in zip(egm.graph.nodes, tgm.graph.nodes):
        em, tm = en.meta.get("tensor_meta"), tn.meta.get("tensor_meta")
        assert (em is None) == (tm is None), en.name
        if tm is None:
            continue
        ems = em if isinstance(em, (tuple, list)) and not hasattr(em, "shape") else [em]
        tms = tm if isinstance(tm, (tuple, list)) and not hasattr(tm, "shape") else [tm]
        for a, b in zip(_leaves(ems), _leaves(tms)):
            assert (tuple(a.shape), str(a.dtype), a.requires_grad, tuple(a.stride)) == \
                (tuple(b.shape), str(b.dtype), b.requires_grad, tuple(b.stride)), en.name
            assert str(a.memory_format) == str(b.memory_format), en.name


def _leaves(meta):
    out, stack = [], [meta]
    while stack:
        m = stack.pop()
        if hasattr(m, "shape") and hasattr(m, "memory_format"):
            out.append(m)
        elif isinstance(m, (tuple, list)):
            stack.extend(reversed(m))
    return out


# ---- functions the tracer records, and with what arguments --------------------------------------

def functional_calls(lib, x, idx):
    F = lib.nn.functional
    a = F.dropout(x, 0.2, training=False)
    b = F.softmax(a, -1) + F.log_softmax(a, dim=-1)
    c = F.layer_norm(b, (8,)) * F.gelu(b)
    d = F.max_pool2d(c.unsqueeze(0), 2) .sum() + F.adaptive_avg_pool2d(c.unsqueeze(0), 1).sum()
    e = lib.cat([c, c], 1) + lib.stack((c, c))[0].repeat(1, 2)
    s1, s2 = lib.split(e, 8, dim=1)
    f = lib.einsum("ij,ij->i", s1, s2) + F.cross_entropy(s1, idx, reduction="sum")
    g = F.embedding(idx, c) + F.linear(c[:2], c[:3], None).sum()
    h = F.interpolate(c[None, None], scale_factor=2.0, mode="nearest")
    return f + d + math.sqrt(x.size(0)) + g.sum() + h.mean() + lib.relu(-x).sum(dim=1) + abs(x)[:, 0]


def test_functional_arguments_as_torch_function_sees_them():
    egm = ember.fx.symbolic_trace(lambda x, idx: functional_calls(ember, x, idx))
    tgm = torch.fx.symbolic_trace(lambda x, idx: functional_calls(torch, x, idx))
    assert_same_graph(egm, tgm)
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    idx = np.array([1, 0, 3, 2])
    np.testing.assert_allclose(
        egm(ember.tensor(x), ember.tensor(idx)).numpy(),
        functional_calls(torch, torch.tensor(x), torch.tensor(idx)).numpy(), rtol=1e-5, atol=1e-5)


def test_python_level_tables_are_pytorchs():
    import types
    import torch.nn.functional as tF
    from ember.fx import _overrides
    c_level = {n for n in dir(tF) if not n.startswith("_")
               and isinstance(getattr(tF, n), types.BuiltinFunctionType)
               and not n.startswith("has_torch_function")}
    assert c_level == set(_overrides._C_LEVEL_FUNCTIONAL)
    torch_python = {n for n in dir(torch) if not n.startswith("_")
                    and isinstance(getattr(torch, n), types.FunctionType)}
    ours = set(_overrides._PYTHON_LEVEL["ember"]) - _overrides._PRIVATE_OVERRIDABLE
    assert ours <= torch_python
    assert all(isinstance(getattr(torch, n), types.FunctionType)
               for n in _overrides._PRIVATE_OVERRIDABLE)
    for name in torch_python - ours - _overrides._NOT_OVERRIDABLE:
        assert not hasattr(ember, name) or name in ("classproperty", "cond", "while_loop",
                                                    "vmap", "symeig", "eig", "solve", "lstsq",
                                                    "matrix_rank", "lobpcg", "pca_lowrank",
                                                    "svd_lowrank", "get_file_path",
                                                    "compiled_with_cxx11_abi", "sym_float",
                                                    "sym_int", "sym_max", "sym_min", "sym_not",
                                                    "sym_sqrt", "sym_sum", "sym_ite",
                                                    "sym_fresh_size",
                                                    "prepare_multiprocessing_environment",
                                                    "thread_safe_generator",
                                                    "profiler_allow_cudagraph_cupti_lazy_"
                                                    "reinit_cuda12"), name


# ---- Tracer features: wrap, autowrap_functions, concrete_args, leaves, errors --------------------

def helper_len(x):
    return len(x) * 2


def other_helper(x):
    return x.shape[0] + 1


ember.fx.wrap("helper_len")
torch.fx.wrap("helper_len")


def wrap_user(lib):
    def f(x):
        return x + helper_len(x) + other_helper(x)
    return f


def test_wrap_and_autowrap_functions():
    egm = ember.fx.GraphModule(
        ember.nn.Module(), ember.fx.Tracer(autowrap_functions=(other_helper,)).trace(
            wrap_user(ember)))
    tgm = torch.fx.GraphModule(
        torch.nn.Module(), torch.fx.Tracer(autowrap_functions=(other_helper,)).trace(
            wrap_user(torch)))
    assert_same_graph(egm, tgm)
    targets = [n.target for n in egm.graph.nodes if n.op == "call_function"]
    assert helper_len in targets and other_helper in targets
    assert egm(ember.ones(3, 2)).tolist() == [[11.0, 11.0]] * 3
    assert egm.code.replace("ember.", "torch.") == tgm.code
    # the generated code wraps them again, so tracing the GraphModule records them as well
    again = ember.fx.symbolic_trace(egm)
    assert [n.target for n in again.graph.nodes if n.op == "call_function"] == \
        [n.target for n in egm.graph.nodes if n.op == "call_function"]


def branchy(lib):
    def f(x, flag, scale=2.0):
        if flag:
            return x.relu() * scale
        return x.sigmoid()
    return f


def test_concrete_args_specialise_control_flow():
    egm = ember.fx.symbolic_trace(branchy(ember), concrete_args={"flag": True})
    tgm = torch.fx.symbolic_trace(branchy(torch), concrete_args={"flag": True})
    assert_same_graph(egm, tgm)
    x = ember.tensor([-1.0, 2.0])
    assert egm(x, True).tolist() == [0.0, 4.0]
    with pytest.raises(AssertionError, match="specialized"):
        egm(x, False)
    with pytest.raises(ember.fx.proxy.TraceError, match="control flow"):
        ember.fx.symbolic_trace(branchy(ember))
    with pytest.raises(torch.fx.proxy.TraceError, match="control flow"):
        torch.fx.symbolic_trace(branchy(torch))


def test_len_of_proxy_raises_as_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="'len' is not supported"):
            lib.fx.symbolic_trace(lambda x: x + len(x))


def two_blocks(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return lib.tanh(self.lin(x)) + 1

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = Block(), Block()
            self.register_buffer("offset", lib.arange(4.0))

        def forward(self, x):
            return self.b(self.a(x)) - self.offset + lib.ones(4)
    return Net


def test_custom_leaf_modules_buffers_and_tensor_constants():
    class LeafTracer:
        def is_leaf_module(self, m, qualname):
            return type(m).__name__ == "Block" or super().is_leaf_module(m, qualname)

    graphs = []
    for lib in (ember, torch):
        tracer_cls = type("T", (LeafTracer, lib.fx.Tracer), {})
        net = two_blocks(lib)()
        for tracer in (lib.fx.Tracer(), tracer_cls()):
            graphs.append(lib.fx.GraphModule(tracer.root if hasattr(tracer, "root") else net,
                                             tracer.trace(net)))
    assert_same_graph(graphs[0], graphs[2])
    assert_same_graph(graphs[1], graphs[3])
    assert [n.op for n in graphs[1].graph.nodes].count("call_module") == 2
    x = ember.randn(2, 4)
    np.testing.assert_allclose(graphs[0](x).detach().numpy(), graphs[1](x).detach().numpy(),
                               rtol=1e-6)


# ---- Graph / Node editing ---------------------------------------------------------------------

def test_graph_edits_insert_replace_erase_and_lint():
    gm = ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    g = gm.graph
    relu = next(n for n in g.nodes if n.target is ember.relu)
    add = next(n for n in g.nodes if n.target is operator.add)
    assert list(relu.users) == [add] and add.args == (relu, 1)
    with g.inserting_after(relu):
        neg = g.call_function(ember.neg, (relu,))
        doubled = g.call_method("mul", (neg, 2))
    relu.replace_all_uses_with(doubled, delete_user_cb=lambda user: user is add)
    assert add.args[0] is doubled and set(relu.users) == {neg}
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(relu)
    with g.inserting_before(add):
        g.call_function(ember.exp, (doubled,))     # dead: removed below
    g.lint()
    gm.recompile()
    x = ember.tensor([-1.0, 2.0])
    assert gm(x).tolist() == [1.0, -3.0]
    assert "mul = neg.mul(2)" in gm.code and "exp = ember.exp(mul)" in gm.code
    assert g.eliminate_dead_code()
    gm.recompile()
    assert "exp" not in gm.code
    names = [n.name for n in g.nodes]
    assert names == ["x", "relu", "neg", "mul", "add", "output"]
    # a node moved in front of its input breaks topological order: lint says so
    add.prepend(neg)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_graph_built_by_hand_as_torch():
    results = []
    for lib in (ember, torch):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        w = g.get_attr("w")
        mm = g.call_function(lib.matmul, (x, w))
        s = g.call_method("sum", (mm,), {"dim": 1})
        g.output((s, mm))
        root = lib.nn.Module()
        root.w = lib.nn.Parameter(lib.ones(2, 3))
        gm = lib.fx.GraphModule(root, g, "Hand")
        results.append(gm)
        out = gm(lib.ones(4, 2))
        assert out[0].tolist() == [6.0] * 4
    assert_same_graph(*results)
    assert "matmul = ember.matmul(x, w)" in results[0].code


def test_print_tabular_and_readable(capsys):
    gm = ember.fx.symbolic_trace(lenet(ember))
    gm.graph.print_tabular()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert len(table) == 2 + len(gm.graph.nodes)
    assert table[3].split()[:3] == ["call_module", "conv1", "conv1"]
    text = gm.print_readable(print_output=False)
    assert text.startswith("class LeNet(ember.nn.Module):\n    def forward(self, x):")
    assert "max_pool2d = ember.nn.functional.max_pool2d(relu, (2, 2), stride = None" in text
    _, t = _both(lenet)
    assert str(gm.graph).replace("ember.", "torch.") == str(torch.fx.symbolic_trace(t).graph)


# ---- Interpreter, Transformer, replace_pattern -------------------------------------------------

def test_interpreter_runs_the_graph_and_can_be_overridden():
    e, _ = _both(lenet)
    gm = ember.fx.symbolic_trace(e)
    x = ember.randn(2, 1, 28, 28)
    np.testing.assert_array_equal(ember.fx.Interpreter(gm).run(x).detach().numpy(),
                                  gm(x).detach().numpy())

    class CountCalls(ember.fx.Interpreter):
        calls = []

        def call_module(self, target, args, kwargs):
            self.calls.append(target)
            return super().call_module(target, args, kwargs)

    CountCalls(gm).run(x)
    assert CountCalls.calls == ["conv1", "conv2", "fc1", "fc2", "fc3"]


def negate_relu(lib):
    class NegateRelu(lib.fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is lib.nn.functional.relu:
                return -super().call_function(target, args, kwargs)
            return super().call_function(target, args, kwargs)
    return NegateRelu


def test_transformer_as_torch():
    e, t = _both(lenet)
    egm = negate_relu(ember)(ember.fx.symbolic_trace(e)).transform()
    tgm = negate_relu(torch)(torch.fx.symbolic_trace(t)).transform()
    assert_same_graph(egm, tgm)
    x = np.random.default_rng(2).standard_normal((2, 1, 28, 28)).astype(np.float32)
    np.testing.assert_allclose(egm(ember.tensor(x)).detach().numpy(),
                               tgm(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-4)


def pattern_model(lib):
    class M(lib.nn.Module):
        def forward(self, x, y):
            a = lib.relu(lib.add(x, y)) * 2
            b = lib.relu(lib.add(a, x))
            c = lib.add(b, y)          # add without relu: not a match
            return lib.relu(lib.add(c, c)), c
    return M()


def test_replace_pattern_as_torch():
    graphs, matches = [], []
    for lib in (ember, torch):
        gm = lib.fx.symbolic_trace(pattern_model(lib))

        def pattern(x, y):
            return lib.relu(lib.add(x, y))

        def replacement(x, y):
            return lib.sigmoid(lib.sub(x, y))

        found = lib.fx.replace_pattern(gm, pattern, replacement)
        matches.append([(m.anchor.name, sorted((k.name, v.name) for k, v in m.nodes_map.items()))
                        for m in found])
        graphs.append(gm)
    assert matches[0] == matches[1] and len(matches[0]) == 2
    assert_same_graph(*graphs)
    graphs[0].graph.lint()
    x, y = np.float32([[0.5, -1.0]]), np.float32([[2.0, 0.25]])
    for a, b in zip(graphs[0](ember.tensor(x), ember.tensor(y)),
                    graphs[1](torch.tensor(x), torch.tensor(y))):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_deepcopy_keeps_a_working_graph_module():
    import copy
    e, _ = _both(mlp)
    gm = ember.fx.symbolic_trace(e)
    gm2 = copy.deepcopy(gm)
    assert type(gm2) is not type(gm) and gm2.code == gm.code
    x = ember.randn(4, 16)
    np.testing.assert_array_equal(gm(x).detach().numpy(), gm2(x).detach().numpy())
    assert gm2.fc1.weight is not gm.fc1.weight


# ---- drawing ------------------------------------------------------------------------------------

def test_dot_source_has_every_node_and_edge():
    from ember.fx import viz
    e, _ = _both(lenet)
    gm = ember.fx.symbolic_trace(e)
    ShapeProp(gm).propagate(ember.randn(1, 1, 28, 28))
    dot = viz.to_dot(gm, "LeNet")
    assert dot.startswith('digraph "LeNet" {')
    for node in gm.graph.nodes:
        assert f'"{node.name}" [label="{node.name}' in dot
        for user in node.users:
            assert f'"{node.name}" -> "{user.name}";' in dot
    assert "call_module  conv1: Conv2d\\nfloat32[1, 6, 24, 24]" in dot


@pytest.mark.parametrize("engine", ["dot", "matplotlib"])
def test_draw_writes_svg_and_png(engine, tmp_path):
    import shutil
    from ember.fx import viz
    if engine == "dot" and not shutil.which("dot"):
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz)")
    if engine == "matplotlib":
        pytest.importorskip("matplotlib")
    gm = ember.fx.symbolic_trace(pattern_model(ember))
    svg, png = tmp_path / "g.svg", tmp_path / "g.png"
    assert viz.draw(gm, str(svg), engine=engine) == engine
    assert viz.draw(gm, str(png), engine=engine) == engine
    assert "<svg" in svg.read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=".svg or .png"):
        viz.draw(gm, str(tmp_path / "g.pdf"))


def test_viz_command_line(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from ember.fx import viz
    out = tmp_path / "mlp.png"
    viz.main([f"{__file__}:_mlp_for_cli", "--input-shape", "2,16", "-o", str(out),
              "--engine", "matplotlib"])
    assert "wrote" in capsys.readouterr().out and out.stat().st_size > 0


def _mlp_for_cli():
    return mlp(ember)


def test_dead_code_elimination_keeps_in_place_calls():
    # A deliberate difference: torch.fx's eliminate_dead_code on this graph removes the
    # in-place calls too (leaving ['x', 'output']), which changes what f returns; ember keeps
    # them and drops only the unused pure calls.
    def f(x):
        x.add_(1)
        ember.nn.functional.relu(x, inplace=True)
        ember.neg(x)
        ember.relu_(x)
        x.neg()
        return x

    gm = ember.fx.symbolic_trace(f)
    assert gm.graph.eliminate_dead_code()
    gm.recompile()
    assert [n.name for n in gm.graph.nodes] == ["x", "add_", "relu", "relu_", "output"]
    assert gm(ember.tensor([-3.0, 1.0])).tolist() == f(ember.tensor([-3.0, 1.0])).tolist()


def varargs_fn(lib):
    def f(x, *rest, scale=2.0):
        return x * scale + rest[0]
    return f


def test_keyword_only_and_varargs_placeholders_as_torch():
    egm = ember.fx.symbolic_trace(varargs_fn(ember))
    tgm = torch.fx.symbolic_trace(varargs_fn(torch))
    assert_same_graph(egm, tgm)
    assert egm.code.replace("ember.", "torch.") == tgm.code
    assert "def forward(self, x, scale = 2.0, *rest):" in egm.code
    # the generated signature puts *rest last, as torch.fx's does
    assert egm(ember.ones(2), 3.0, ember.ones(2)).tolist() == \
        tgm(torch.ones(2), 3.0, torch.ones(2)).tolist() == [4.0, 4.0]
