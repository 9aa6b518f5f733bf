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
    assert any(line.startswith("  ") and "unsqueeze" in line for line in lines)  # nested
    assert repr(ex) == f"<ember.explain: {len(ex.records)} op calls>"


def test_explain_with_inference_mode():
    x = ember.randn(2, requires_grad=True)
    with ember.explain() as ex:
        with ember.inference_mode():
            y = x * 2
    assert y.is_inference() and ex.records[0]["keys"] == ["CPU"]
