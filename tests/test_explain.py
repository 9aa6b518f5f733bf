"""ember.explain(): the rows it records for op calls and backward nodes, their nesting, and
the printed table."""
import ember


def _rows(ex, kind=None):
    return [r for r in ex.records if kind is None or r["kind"] == kind]


def test_records_op_keys_kernel_node_and_time():
    x = ember.randn(3, requires_grad=True)
    c = ember.ones(3)
    with ember.explain() as ex:
        y = (x * 2).tanh()
        z = c + 1
    ops = _rows(ex, "op")
    assert [r["op"] for r in ops] == ["mul.Tensor", "tanh", "add.Tensor"]
    mul, tanh, add = ops
    assert mul["keys"] == ["Autograd", "CPU"] and mul["node"] == "MulBackward0"
    assert mul["kernel"] == "elementwise.mul"
    assert tanh["node"] == "TanhBackward0" and y.grad_fn.name() == "TanhBackward0"
    assert add["keys"] == ["CPU"] and add["node"] == "" and not z.requires_grad
    assert all(r["depth"] == 0 and r["time_us"] > 0 for r in ops)


def test_backward_nodes_and_their_ops_are_nested():
    x = ember.randn(3, requires_grad=True)
    with ember.explain() as ex:
        (x * 2).tanh().sum().backward()
    nodes = _rows(ex, "node")
    assert [r["op"] for r in nodes] == ["SumBackward0", "TanhBackward0", "MulBackward0",
                                        "torch::autograd::AccumulateGrad"]
    assert all(r["keys"] == ["engine"] and r["depth"] == 0 for r in nodes)
    assert nodes[1]["kernel"] == "derivative of tanh"
    assert nodes[3]["kernel"] == "accumulate into .grad"
    # the ops a formula calls sit one level deeper, right after their node
    i = ex.records.index(nodes[1])
    assert ex.records[i + 1]["op"] == "tanh_backward" and ex.records[i + 1]["depth"] == 1


def test_grad_mode_decides_the_keys():
    x = ember.randn(2, requires_grad=True)
    with ember.explain() as ex:
        with ember.no_grad():
            x * 2
        x * 2
    assert [r["keys"] for r in ex.records] == [["CPU"], ["Autograd", "CPU"]]


def test_composite_and_meta_calls():
    m = ember.empty(2, 3, device="meta", requires_grad=True)
    with ember.explain() as ex:
        (m * 2).sum()
    assert ex.records[0]["keys"] == ["Autograd", "Meta"]


def test_create_graph_backward_records_autograd_inside_nodes():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    y = (x * x).sum()
    with ember.explain() as ex:
        ember.autograd.grad(y, x, create_graph=True)
    mul_node = next(r for r in ex.records if r["op"] == "MulBackward0")
    inner = ex.records[ex.records.index(mul_node) + 1]
    assert inner["depth"] == 1 and inner["keys"] == ["Autograd", "CPU"]


def test_nested_explain_and_restore():
    x = ember.randn(2, requires_grad=True)
    with ember.explain() as outer:
        x * 2
        with ember.explain() as inner:
            x + 1
        x - 1
    assert [r["op"] for r in inner.records] == ["add.Tensor"]
    assert [r["op"] for r in outer.records] == ["mul.Tensor", "add.Tensor", "sub.Tensor"]
    assert not ember._dispatch.dispatcher._modes and ember.autograd.engine._observer is None
    x * 3  # nothing records outside the block
    assert len(outer.records) == 3


def test_printed_table():
    x = ember.randn(3, requires_grad=True)
    with ember.explain() as ex:
        (x * 2).sum().backward()
    text = str(ex)
    lines = text.splitlines()
    assert lines[0].split() == ["op", "dispatch", "keys", "kernel", "autograd", "node",
                                "time", "(us)"]
    assert set(lines[1]) <= {"-", " "}
    assert any(line.startswith("mul.Tensor") and "Autograd -> CPU" in line and
               "MulBackward0" in line for line in lines)
    assert any(line.startswith("  ") and "expand" in line for line in lines)  # nested
    assert repr(ex) == f"<ember.explain: {len(ex.records)} op calls>"


def test_explain_with_inference_mode():
    x = ember.randn(2, requires_grad=True)
    with ember.explain() as ex:
        with ember.inference_mode():
            y = x * 2
    assert y.is_inference() and ex.records[0]["keys"] == ["CPU"]


# ---- a training step of real models: every differentiable computation is an op ----------------
def _graph(root):
    """Every node of the backward graph below `root` (iteratively, each once)."""
    seen, stack, nodes = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return nodes


def _explained_step(model, x, y):
    """explain() over forward, cross-entropy loss and backward; the graph's nodes."""
    with ember.explain() as ex:
        loss = ember.nn.functional.cross_entropy(model(x), y)
        graph = _graph(loss.grad_fn)
        loss.backward()
    return ex, graph


def _check_all_ops(ex, graph, forward_ops, backward_ops):
    from collections import Counter
    accumulate = "torch::autograd::AccumulateGrad"
    # no node of a Python autograd.Function: every node is an op's, or AccumulateGrad
    assert all(getattr(n, "_forward_cls", None) is None for n in graph)
    in_graph = Counter(n.name() for n in graph if n.name() != accumulate)
    # every node of the graph was made by a recorded op call ...
    made = Counter(r["node"] for r in _rows(ex, "op") if r["node"])
    assert not in_graph - made, f"nodes no recorded op made: {in_graph - made}"
    # ... and ran, once, as a recorded backward node computed by its op's derivative
    nodes = _rows(ex, "node")
    assert Counter(r["op"] for r in nodes if r["op"] != accumulate) == in_graph
    assert all(r["kernel"].startswith("derivative of ") or r["op"] == accumulate
               for r in nodes)
    ops = {r["op"] for r in _rows(ex, "op")}
    assert set(forward_ops) <= ops and set(backward_ops) <= ops, (set(forward_ops) - ops,
                                                                  set(backward_ops) - ops)
    # the backward kernels run inside their node's row
    for name in backward_ops:
        row = next(r for r in ex.records if r["op"] == name)
        assert row["depth"] == 1 and row["keys"] == ["CPU"]


class _LeNet(ember.nn.Module):
    def __init__(self):
        super().__init__()
        nn = ember.nn
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        F = ember.nn.functional
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def test_lenet_training_step_is_all_ops():
    ember.manual_seed(0)
    ex, graph = _explained_step(_LeNet(), ember.randn(4, 1, 28, 28),
                                ember.randint(0, 10, (4,)))
    _check_all_ops(ex, graph, ["convolution", "relu", "max_pool2d_with_indices",
                               "linear", "_softmax_cross_entropy"],
                   ["_softmax_cross_entropy_backward", "_convolution_backward_weight",
                    "_convolution_backward_input", "max_pool2d_with_indices_backward"])
    nodes = {r["op"] for r in _rows(ex, "node")}
    assert {"NllLossBackward0", "ConvolutionBackward0", "MaxPool2DWithIndicesBackward0"} <= nodes


class _LSTMClassifier(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm, self.fc = ember.nn.LSTM(8, 16), ember.nn.Linear(16, 5)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out + h + c).flatten(0, 1)   # every output of the layer in the loss


def test_lstm_training_step_is_all_ops():
    ember.manual_seed(0)
    ex, graph = _explained_step(_LSTMClassifier(), ember.randn(6, 3, 8),
                                ember.randint(0, 5, (18,)))
    _check_all_ops(ex, graph, ["_rnn_layer", "linear", "_softmax_cross_entropy"],
                   ["_rnn_layer_backward", "_softmax_cross_entropy_backward"])
    layer = next(r for r in _rows(ex, "op") if r["op"] == "_rnn_layer")
    assert layer["node"] == "MkldnnRnnLayerBackward0" and layer["kernel"] == "rnn.rnn_layer"


class _TransformerClassifier(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = ember.nn.TransformerEncoderLayer(16, 2, 32)
        self.fc = ember.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.layer(x).mean(0))


def test_transformer_layer_training_step_is_all_ops():
    ember.manual_seed(0)
    ex, graph = _explained_step(_TransformerClassifier(), ember.randn(5, 3, 16),
                                ember.tensor([0, 3, 1]))
    _check_all_ops(ex, graph, ["linear", "_softmax", "native_layer_norm", "relu",
                               "_softmax_cross_entropy"],
                   ["native_layer_norm_backward", "_softmax_backward_data",
                    "_softmax_cross_entropy_backward"])
