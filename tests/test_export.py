"""ember.export against torch.export (torch 2.13, non-strict): the placeholders and their kinds,
the ATen ops both record (in order), the outputs of `ep.module()`, buffer mutations, save/load,
dynamic dims and the errors."""
import io
import warnings
import zipfile

import numpy as np
import pytest

import ember
from ember.export import Dim
from ember.utils import _pytree as pytree

torch = pytest.importorskip("torch", reason="torch is the oracle for ember.export")
import torch.export  # noqa: E402
from test_fx import lenet  # noqa: E402  (the fx tests' LeNet, 1x28x28 inputs)


# ---- the same models written against either library ------------------------------------------
def mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))
    return MLP()


def conv_bn(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4)

        def forward(self, x):
            return lib.relu(self.bn(self.conv(x)))
    return Block()


def with_kwargs(lib):
    nn = lib.nn

    class KW(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, *, scale=None, y=None):
            h = self.fc(x)
            if y is not None:
                h = h + y
            return h * scale, h.sum(1)
    return KW()


def lenet_dropout(lib):
    nn, F = lib.nn, lib.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2 = nn.Linear(16 * 4 * 4, 32), nn.Linear(32, 10)
            self.drop = nn.Dropout(0.25)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = self.drop(F.relu(self.fc1(lib.flatten(x, 1))))
            return self.fc2(x)
    return LeNet()


def res_block(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(4)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(out)) + x)
    return Block()


def mutations(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", lib.zeros(3))
            self.fc = lib.nn.Linear(3, 3)
            self.norm = lib.nn.LayerNorm(3)

        def forward(self, x):
            self.count.add_(1)
            x.mul_(2)
            return self.norm(self.fc(x) + self.count)
    return M()


def classifier(lib):
    nn, F = lib.nn, lib.nn.functional

    class C(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            h = self.fc(x)
            return F.log_softmax(h, dim=1), h.softmax(-1)
    return C()


def slicer(lib):
    class S(lib.nn.Module):
        def forward(self, x):       # a whole-dim slice records no op, a lone x[:] does
            unused = x * 2          # noqa: F841 -- kept until run_decompositions, as torch's
            values, _ = lib.max(x, 1)   # both getitems kept until then too
            return x[:, -1], x[:, 1:], x[..., :2], x[:], values
    return S()


def twins(make):
    """The model in ember and in torch with the same weights."""
    e, t = make(ember), make(torch)
    t.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                       for k, v in e.state_dict().items()})
    return e, t


def pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def t_export(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.export.export(*args, **kwargs)


# ---- comparing graphs -----------------------------------------------------------------------
def placeholders(ep):
    return [(s.arg.name, s.kind.name, s.target) for s in ep.graph_signature.input_specs]


def targets(ep):
    """The call_function targets as 'op.overload' (getitem left out)."""
    out = []
    for n in ep.graph.nodes:
        if n.op == "call_function" and hasattr(n.target, "_schema" if
                                               isinstance(n.target, torch._ops.OpOverload)
                                               else "schema"):
            out.append(str(n.target).removeprefix("aten.") if isinstance(
                n.target, torch._ops.OpOverload) else
                f"{n.target.schema.name}.{n.target.schema.overload or 'default'}")
    return out


def assert_same_common_ops(eep, tep):
    """The ops both graphs record appear in the same order in both."""
    e, t = targets(eep), targets(tep)
    common = set(e) & set(t)
    assert common, (e, t)
    assert [x for x in e if x in common] == [x for x in t if x in common]
    return common


def _arg(a):
    """A node argument with nodes as '%name' and ember's names as torch's."""
    if hasattr(a, "op") and hasattr(a, "name") and hasattr(a, "target"):
        return "%" + a.name
    if isinstance(a, (list, tuple)):
        return [_arg(x) for x in a]
    if isinstance(a, dict):
        return {k: _arg(v) for k, v in a.items()}
    return repr(a).replace("ember.", "torch.")


def _target(n):
    t = n.target
    if n.op != "call_function":
        return str(t)
    if isinstance(t, torch._ops.OpOverload):
        return str(t).removeprefix("aten.")
    if hasattr(t, "schema"):
        return f"{t.schema.name}.{t.schema.overload or 'default'}"
    return t.__name__


def node_sequence(ep):
    """Each node as (kind, name, target, args, kwargs)."""
    return [(n.op, n.name, _target(n), _arg(n.args), _arg(n.kwargs)) for n in ep.graph.nodes]


def signature(ep):
    sig = ep.graph_signature
    return ([(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs],
            [(s.kind.name, s.arg.name, s.target) for s in sig.output_specs])


def readable(ep):
    """print(ep) without torch's `# File:` comments and blank lines, torch's names as ember's."""
    lines = [line for line in str(ep).replace("torch.", "ember.").splitlines()
             if line.strip() and not line.strip().startswith("#")]
    return "\n".join(line.split(";  ")[0] for line in lines)


def assert_close(e, t, atol=1e-5):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-5)


# ---- the tests ------------------------------------------------------------------------------
def test_mlp_graph_and_outputs_match_torch():
    em, tm = twins(mlp)
    ex, tx = pair(2, 4)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert placeholders(eep) == placeholders(tep)
    assert targets(eep) == targets(tep) == ["linear.default", "relu.default", "linear.default"]
    assert [n.name for n in eep.graph.nodes] == [n.name for n in tep.graph.nodes]
    assert_close(eep.module()(ex), tep.module()(tx))
    assert_close(eep.module()(ex), em(ex))
    assert eep.graph_signature.user_outputs == tep.graph_signature.user_outputs
    assert list(eep.state_dict) == list(tep.state_dict)
    text = str(eep)
    assert text.startswith("ExportedProgram:\n    class GraphModule(ember.nn.Module):\n"
                           "        def forward(self, p_fc1_weight: \"f32[8, 4]\"")
    assert 'linear: "f32[2, 8]" = ember.ops.aten.linear.default(x, p_fc1_weight, p_fc1_bias)' \
        in text
    tail = str(tep)[str(tep).index("Graph signature:"):]
    assert text[text.index("Graph signature:"):] == tail
    with pytest.raises(RuntimeError, match="exported_program.module()"):
        eep(ex)


def test_lenet_common_ops_and_decomposition_match_torch():
    em, tm = twins(lenet)
    ex, tx = pair(2, 1, 28, 28)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert placeholders(eep) == placeholders(tep)
    assert {"linear.default", "relu.default"} <= assert_same_common_ops(eep, tep)
    assert_close(eep.module()(ex), tep.module()(tx))
    edec, tdec = eep.run_decompositions(), tep.run_decompositions()
    assert {"convolution.default", "addmm.default", "permute.default", "relu.default"} <= \
        assert_same_common_ops(edec, tdec)
    assert "linear.default" not in targets(edec)
    assert_close(edec.module()(ex), tdec.module()(tx))


@pytest.mark.parametrize("training", [True, False])
def test_conv_bn_block_buffers_and_mutations_match_torch(training):
    em, tm = twins(conv_bn)
    em.train(training), tm.train(training)
    ex, tx = pair(2, 3, 5, 5)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert placeholders(eep) == placeholders(tep)
    assert [s.persistent for s in eep.graph_signature.input_specs] == \
        [s.persistent for s in tep.graph_signature.input_specs]
    assert_same_common_ops(eep, tep)
    # exporting ran nothing for real: the running statistics are untouched, as in torch
    assert_close(em.bn.running_mean, tm.bn.running_mean)
    assert int(em.bn.num_batches_tracked) == int(tm.bn.num_batches_tracked) == 0
    emod, tmod = eep.module(), tep.module()
    assert_close(emod(ex), tmod(tx))
    assert_close(emod(ex), tmod(tx))
    for name in ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked"):
        assert_close(emod.get_buffer(name), tmod.get_buffer(name))
    edec, tdec = eep.run_decompositions(), tep.run_decompositions()
    assert list(edec.graph_signature.buffers_to_mutate.values()) == \
        list(tdec.graph_signature.buffers_to_mutate.values())
    assert [s.kind.name for s in edec.graph_signature.output_specs] == \
        [s.kind.name for s in tdec.graph_signature.output_specs]
    emod, tmod = edec.module(), tdec.module()
    assert_close(emod(ex), tmod(tx))
    for name in ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked"):
        assert_close(emod.get_buffer(name), tmod.get_buffer(name))


def test_kwargs_and_several_outputs_match_torch():
    em, tm = twins(with_kwargs)
    (ex, tx), (ey, ty) = pair(2, 4), pair(2, 4, seed=1)
    es, ts = ember.tensor(2.0), torch.tensor(2.0)
    eep = ember.export.export(em, (ex,), {"scale": es, "y": ey})
    tep = t_export(tm, (tx,), {"scale": ts, "y": ty})
    assert placeholders(eep) == placeholders(tep)
    assert targets(eep) == targets(tep)
    assert [n.name for n in eep.graph.nodes] == [n.name for n in tep.graph.nodes]
    eout, tout = eep.module()(ex, scale=es, y=ey), tep.module()(tx, scale=ts, y=ty)
    assert type(eout) is tuple and len(eout) == 2
    for e, t in zip(eout, tout):
        assert_close(e, t)
    for e, t in zip(eout, em(ex, scale=es, y=ey)):
        assert_close(e, t)
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        eep.module()(ex, ey, scale=es, y=ey)


def test_save_load_round_trip(tmp_path):
    em = conv_bn(ember).train()
    ex = ember.randn(2, 3, 5, 5)
    ep = ember.export.export(em, (ex,)).run_decompositions()
    path = tmp_path / "block.pt2"
    ember.export.save(ep, path, extra_files={"note": "hello"})
    with zipfile.ZipFile(path) as z:
        assert "archive/program.json" in z.namelist()
    extra = {"note": ""}
    loaded = ember.export.load(path, extra_files=extra)
    assert extra["note"] == "hello"
    assert str(loaded) == str(ep)
    assert loaded.graph_signature.buffers_to_mutate == ep.graph_signature.buffers_to_mutate
    a, b = ep.module(), loaded.module()
    assert_close(a(ex), b(ex))
    assert_close(a.get_buffer("bn.running_mean"), b.get_buffer("bn.running_mean"))
    buf = io.BytesIO()
    ember.export.save(loaded, buf)
    buf.seek(0)
    assert str(ember.export.load(buf)) == str(ep)


def test_dynamic_batch_accepts_other_sizes_and_rejects_violations_as_torch():
    em, tm = twins(mlp)
    ex, tx = pair(3, 4)
    eb, tb = Dim("batch", min=2, max=16), torch.export.Dim("batch", min=2, max=16)
    eep = ember.export.export(em, (ex,), dynamic_shapes={"x": {0: eb}})
    tep = t_export(tm, (tx,), dynamic_shapes={"x": {0: tb}})
    assert [str(r) for r in eep.range_constraints.values()] == \
        [str(r) for r in tep.range_constraints.values()]
    assert 'x: "f32[s0, 4]"' in str(eep)
    emod, tmod = eep.module(), tep.module()
    ex5, tx5 = pair(5, 4)
    assert_close(emod(ex5), tmod(tx5))
    for shape in [(17, 4), (3, 5)]:
        e_in, t_in = pair(*shape)
        with pytest.raises(AssertionError) as t_err:
            tmod(t_in)
        with pytest.raises(AssertionError) as e_err:
            emod(e_in)
        assert str(e_err.value) == str(t_err.value)
    static = ember.export.export(em, (ex,)).module()
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 3"):
        static(ex5)


def test_dynamic_shape_mistakes_raise_torchs_error_types():
    em, tm = twins(mlp)
    ex, tx = pair(3, 4)
    e1, t1 = pair(1, 4)
    from ember.fx.experimental.symbolic_shapes import ConstraintViolationError
    cases = [((ex,), {"y": {0: Dim("b")}}, (tx,), {"y": {0: torch.export.Dim("b")}},
              ember._dynamo.exc.UserError),
             ((e1,), {"x": {0: Dim("b")}}, (t1,), {"x": {0: torch.export.Dim("b")}},
              ember._dynamo.exc.UserError),
             ((ex,), {"x": {0: Dim("b", min=4)}}, (tx,), {"x": {0: torch.export.Dim("b", min=4)}},
              ConstraintViolationError)]
    for eargs, eds, targs, tds, error in cases:
        with pytest.raises(Exception) as t_err:
            t_export(tm, targs, dynamic_shapes=tds)
        with pytest.raises(error):
            ember.export.export(em, eargs, dynamic_shapes=eds)
        assert type(t_err.value).__name__ == error.__name__
    for auto in (Dim.AUTO, Dim.DYNAMIC):
        ep = ember.export.export(em, (ex,), dynamic_shapes=({0: auto},))
        tep = t_export(tm, (tx,), dynamic_shapes=({0: getattr(torch.export.Dim, auto)},))
        assert [str(r) for r in ep.range_constraints.values()] == \
            [str(r) for r in tep.range_constraints.values()]


def test_dynamic_batch_through_recorded_sizes_matches_torch():
    # ember records flatten as a view to [batch, 400]: the size becomes x.size(0)
    em, tm = twins(lenet)
    ex, tx = pair(3, 1, 28, 28)
    eep = ember.export.export(em, (ex,), dynamic_shapes={"x": {0: Dim("batch", max=64)}})
    tep = t_export(tm, (tx,), dynamic_shapes={"x": {0: torch.export.Dim("batch", max=64)}})
    assert [str(r) for r in eep.range_constraints.values()] == \
        [str(r) for r in tep.range_constraints.values()]
    ex7, tx7 = pair(7, 1, 28, 28, seed=3)
    assert_close(eep.module()(ex7), tep.module()(tx7))
    dec = eep.run_decompositions()
    assert_close(dec.module()(ex7), tep.module()(tx7))
    assert 'sym_size_int: "Sym(s0)" = x.size(0)' in str(dec)
    buf = io.BytesIO()
    ember.export.save(dec, buf)
    buf.seek(0)
    loaded = ember.export.load(buf)
    assert str(loaded) == str(dec)
    assert_close(loaded.module()(ex7), tep.module()(tx7))


def test_non_affine_dynamic_size_is_refused():
    class M(ember.nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0] * x.shape[1])
    with pytest.raises(ember._dynamo.exc.UserError, match="aten.reshape"):
        ember.export.export(M(), (ember.randn(3, 4),),
                            dynamic_shapes={"x": {0: Dim("a"), 1: Dim("b")}})


def test_data_dependent_control_flow_raises_torchs_error():
    def branchy(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return x + 1 if x.sum() > 0 else x - 1
        return M()
    ex, tx = pair(3)
    with pytest.raises(RuntimeError) as t_err:
        t_export(branchy(torch), (tx,))
    from ember.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    with pytest.raises(GuardOnDataDependentSymNode, match="aten.gt"):
        ember.export.export(branchy(ember), (ex,))
    assert type(t_err.value).__name__ == "GuardOnDataDependentSymNode"


def test_constants_nested_and_non_tensor_inputs_match_torch():
    def model(lib):
        class C(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = lib.tensor([2.0, 3.0])
                self.register_buffer("offset", lib.ones(2), persistent=False)

            def forward(self, x, n, pair):
                return x * self.scale + self.offset + n + pair[0] - pair[1]["b"]
        return C()

    def inputs(lib, n=3):
        return (lib.ones(3, 2), n, (lib.ones(2), {"b": lib.ones(2)}))
    eep = ember.export.export(model(ember), inputs(ember))
    tep = t_export(model(torch), inputs(torch))
    assert str(eep.graph_signature) == str(tep.graph_signature)
    assert list(eep.constants) == list(tep.constants) and list(eep.state_dict) == []
    assert targets(eep) == targets(tep)
    assert_close(eep.module()(*inputs(ember)), tep.module()(*inputs(torch)))
    emod, tmod = eep.module(), tep.module()
    assert list(emod.state_dict()) == list(tmod.state_dict()) == []
    assert [n for n, _ in emod.named_buffers()] == [n for n, _ in tmod.named_buffers()]
    buf = io.BytesIO()
    ember.export.save(eep, buf)
    buf.seek(0)
    assert_close(ember.export.load(buf).module()(*inputs(ember)), tmod(*inputs(torch)))
    with pytest.raises(AssertionError) as t_err:
        tep.module()(*inputs(torch, 4))
    with pytest.raises(AssertionError) as e_err:
        eep.module()(*inputs(ember, 4))
    assert str(e_err.value) == str(t_err.value)


def test_module_refuses_mode_switch_and_unsupported_options():
    em = mlp(ember)
    ep = ember.export.export(em, (ember.randn(2, 4),))
    with pytest.raises(NotImplementedError, match=r"Calling eval\(\) is not supported yet."):
        ep.module().eval()
    with pytest.raises(NotImplementedError, match="preserve_module_call_signature"):
        ember.export.export(em, (ember.randn(2, 4),), preserve_module_call_signature=("fc1",))
    with pytest.raises(ValueError, match="Expected `mod` to be an instance"):
        ember.export.export(lambda x: x, (ember.randn(2),))


def test_exported_program_goes_to_onnx():
    pytest.importorskip("onnx", reason="ONNX export needs `pip install 'ember[onnx]'`")
    ort = pytest.importorskip("onnxruntime", reason="needs `pip install 'ember[onnx]'`")
    em = lenet(ember)
    x = ember.randn(2, 1, 28, 28)
    proto = ember.onnx.export(ember.export.export(em, (x,)), f=None)
    session = ort.InferenceSession(proto.SerializeToString())
    out = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    np.testing.assert_allclose(out, em(x).detach().numpy(), atol=1e-5)


def test_input_mutation_constant_output_and_gradients_match_torch():
    def model(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2)

            def forward(self, x):
                x.add_(1)
                return self.fc(x), 3
        return M()
    em, tm = twins(model)
    ex, tx = pair(2, 3)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert_close(ex, tx)        # exporting wrote nothing into the example input
    assert eep.graph_signature.user_outputs == tep.graph_signature.user_outputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdec = tep.run_decompositions()
    edec = eep.run_decompositions()
    assert str(edec.graph_signature) == str(tdec.graph_signature)
    e_in, t_in = pair(2, 3, seed=5)
    (eout, en), (tout, tn) = edec.module()(e_in), tdec.module()(t_in)
    assert en == tn == 3
    assert_close(eout, tout)
    assert_close(e_in, t_in)    # the mutation reached the caller's tensor
    emod, tmod = eep.module(), tep.module()
    emod(pair(2, 3)[0])[0].square().sum().backward()
    tmod(pair(2, 3)[1])[0].square().sum().backward()
    assert_close(emod.fc.weight.grad, tmod.fc.weight.grad)
    assert_close(emod.fc.bias.grad, tmod.fc.bias.grad)


def test_builtin_named_input_list_results_and_device_arguments():
    def model(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 3)

            def forward(self, input):
                a, b = input.chunk(2, dim=1)            # an op returning Tensor[]
                h = self.fc(lib.cat([b, a], 1).transpose(0, 1))   # non-contiguous
                return h + lib.ones(3, device=input.device)
        return M()
    em, tm = twins(model)
    ex, tx = pair(2, 5, 4)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert placeholders(eep) == placeholders(tep)     # `input` keeps its name
    assert "def forward(self, p_fc_weight" in str(eep) and 'input: "f32[2, 5, 4]"' in str(eep)
    assert_close(eep.module()(ex), tep.module()(tx))
    assert_close(eep.run_decompositions().module()(ex), tep.module()(tx))
    assert ember.device(type="cpu") == ember.device("cpu")


@pytest.mark.parametrize("make, shape, training", [
    (mlp, (2, 4), True), (lenet_dropout, (2, 1, 28, 28), True),
    (lenet_dropout, (2, 1, 28, 28), False), (res_block, (2, 4, 6, 6), True),
    (res_block, (2, 4, 6, 6), False), (mutations, (2, 3), True), (classifier, (2, 4), True),
    (slicer, (2, 5, 3), True)],
    ids=["mlp", "lenet-train", "lenet-eval", "resblock-train", "resblock-eval", "mutations",
         "softmaxes", "slices"])
def test_graphs_signatures_and_decompositions_equal_torchs(make, shape, training):
    """Node by node (kind, name, target, arguments), the signature and the printed program, as
    exported and after run_decompositions: composites (conv2d, batch_norm, max_pool2d, flatten,
    dropout, layer_norm) kept whole, then lowered to torch's core ATen ops."""
    em, tm = twins(make)
    em.train(training), tm.train(training)
    (ex, tx), (ex2, tx2) = pair(*shape), pair(*shape, seed=1)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert node_sequence(eep) == node_sequence(tep)
    assert signature(eep) == signature(tep)
    assert readable(eep) == readable(tep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdec = tep.run_decompositions()
    edec = eep.run_decompositions()
    assert node_sequence(edec) == node_sequence(tdec)
    assert signature(edec) == signature(tdec)
    assert readable(edec) == readable(tdec)
    for e, t in ((eep, tep), (edec, tdec)):     # dropout draws the same stream in both
        emod, tmod = e.module(), t.module()
        ember.manual_seed(3), torch.manual_seed(3)
        for eo, to in zip(pytree.tree_leaves(emod(ex2.clone())),
                          pytree.tree_leaves(tmod(tx2.clone()))):
            assert_close(eo, to)
        for (name, eb), (_, tb) in zip(emod.named_buffers(), tmod.named_buffers()):
            assert_close(eb, tb), name


def test_decomposed_batch_norm_and_dropout_programs_go_to_onnx():
    pytest.importorskip("onnx", reason="ONNX export needs `pip install 'ember[onnx]'`")
    ort = pytest.importorskip("onnxruntime", reason="needs `pip install 'ember[onnx]'`")
    for make, shape in ((res_block, (2, 4, 6, 6)), (lenet_dropout, (2, 1, 28, 28))):
        em = make(ember).eval()
        x = ember.randn(*shape)
        for ep in (ember.export.export(em, (x,)),
                   ember.export.export(em, (x,)).run_decompositions()):
            proto = ember.onnx.export(ep, f=None)
            session = ort.InferenceSession(proto.SerializeToString())
            out = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
            np.testing.assert_allclose(out, em(x).detach().numpy(), atol=1e-5)


def test_lstm_graph_equals_torchs_before_decomposition():
    """nn.LSTM records torch's zeros states and one aten.lstm.input; run_decompositions keeps
    ember's per-layer `_rnn_layer` (torch unrolls the time steps), with the same results."""
    def lstm_head(lib):
        class Head(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = lib.nn.LSTM(8, 16, batch_first=True)
                self.head = lib.nn.Linear(16, 4)

            def forward(self, x):
                out, (h, c) = self.lstm(x)
                return self.head(out[:, -1] + h[-1] * c[-1])
        return Head()
    em, tm = twins(lstm_head)
    ex, tx = pair(2, 5, 8)
    eep, tep = ember.export.export(em, (ex,)), t_export(tm, (tx,))
    assert node_sequence(eep) == node_sequence(tep)
    assert signature(eep) == signature(tep)
    assert readable(eep) == readable(tep)
    assert "lstm.input" in targets(eep)
    (ex2, tx2) = pair(2, 5, 8, seed=4)
    assert_close(eep.module()(ex2), tep.module()(tx2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdec = tep.run_decompositions()
    edec = eep.run_decompositions()
    assert "_rnn_layer.default" in targets(edec) and "lstm.input" not in targets(edec)
    assert signature(edec)[0] == signature(tdec)[0]
    assert [k for k, _, _ in signature(edec)[1]] == [k for k, _, _ in signature(tdec)[1]]
    assert_close(edec.module()(ex2), tdec.module()(tx2))
