"""ember.profiler against torch.profiler on the same programs: the rows of key_averages (names,
call counts and memory where ember's ops are PyTorch's), the table's layout, the Chrome trace
JSON, record_function, grouping by input shape and stack, step schedules and trace handlers,
and the autograd profiler's legacy API."""
import gzip
import json
import os
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _program(m, net, x):
    with m.profiler.record_function("model_forward"):
        y = net(x)
    y.sum().backward()


def _net(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 2))


def _profile(m, **kw):
    net, x = _net(m), m.tensor(np.random.default_rng(0).normal(size=(3, 4)), dtype=m.float32)
    with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU], **kw) as prof:
        _program(m, net, x)
    return prof


# names both record the same number of times (ember's linear is one fused op where PyTorch's
# decomposes into t + addmm, so t/addmm/transpose/... differ, as do PyTorch's allocation ops)
SHARED = ["model_forward", "aten::linear", "aten::relu", "aten::sum", "aten::threshold_backward",
          "AddmmBackward0", "ReluBackward0", "SumBackward0", "torch::autograd::AccumulateGrad",
          "autograd::engine::evaluate_function: AddmmBackward0",
          "autograd::engine::evaluate_function: ReluBackward0",
          "autograd::engine::evaluate_function: SumBackward0",
          "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"]


def test_key_averages_rows_as_torch():
    ours = {e.key: e for e in _profile(ember, profile_memory=True).key_averages()}
    theirs = {e.key: e for e in _profile(torch, profile_memory=True).key_averages()}
    for name in SHARED:
        assert ours[name].count == theirs[name].count, name
    node = next(e for e in _profile(ember).events() if e.name == "ReluBackward0")
    assert node.scope == 1 and node.cpu_parent.name.endswith(": ReluBackward0")
    assert [c.name for c in node.cpu_children] == ["aten::threshold_backward"]


def _profile_memory(m):
    """A program whose tensors are multiples of 512 bytes, so that ember's caching allocator
    (which rounds each block up to 512 bytes, as PyTorch's CUDA one does) and PyTorch's CPU
    allocator (which does not round) allocate alike."""
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(64, 32), m.nn.ReLU(), m.nn.Linear(32, 16))
    x = m.tensor(np.random.default_rng(0).normal(size=(32, 64)), dtype=m.float32)
    before = ember.memory.memory_allocated()
    with m.profiler.profile(profile_memory=True) as prof:
        _program(m, net, x)
    return prof, ember.memory.memory_allocated() - before


def test_memory_columns_read_the_allocator_and_equal_torchs():
    prof, moved = _profile_memory(ember)
    # every change of the allocator's statistic is in exactly one top-level event
    assert sum(e.cpu_memory_usage for e in prof.events() if e.cpu_parent is None) == moved
    ours = {e.key: e for e in prof.key_averages()}
    theirs = {e.key: e for e in _profile_memory(torch)[0].key_averages()}
    for name in ("model_forward", "aten::linear", "aten::relu", "aten::threshold_backward",
                 "ReluBackward0"):
        assert ours[name].cpu_memory_usage == theirs[name].cpu_memory_usage, name
    assert ours["aten::relu"].self_cpu_memory_usage == 32 * 32 * 4
    assert ours["model_forward"].self_cpu_memory_usage == -32 * 32 * 4  # relu's input freed
    # a tensor freed between ops is a top-level "[memory]" event, as in PyTorch
    for m in (ember, torch):
        x = m.ones(256)
        with m.profiler.profile(profile_memory=True) as prof:
            y = m.relu(x)
            del y
        rows = [(e.name, e.cpu_memory_usage) for e in prof.events()]
        assert ("[memory]", -1024) in rows and ("aten::relu", 1024) in rows


def _form(column):
    return re.sub(r"-?[\d.]+( [KMG]?B|%)?$", "0", column)


def _rows(table):
    """The table's data rows as {name: [columns]} (columns split at runs of 2+ spaces)."""
    lines = table.splitlines()
    seps = [i for i, line in enumerate(lines) if line.startswith("---")]
    rows = {}
    for line in lines[seps[1] + 1:seps[2]]:
        cols = re.split(r"\s{2,}", line.strip())
        rows[cols[0]] = cols[1:]
    return lines, rows


@pytest.mark.parametrize("kw", [dict(), dict(profile_memory=True),
                                dict(record_shapes=True, profile_memory=True)])
def test_table_layout_as_torch(kw):
    group = kw.get("record_shapes", False)
    ours = _profile(ember, **kw).key_averages(group_by_input_shape=group)
    theirs = _profile(torch, **kw).key_averages(group_by_input_shape=group)
    ours_lines, our_rows = _rows(ours.table(sort_by="cpu_time_total", row_limit=100))
    their_lines, their_rows = _rows(theirs.table(sort_by="cpu_time_total", row_limit=100))
    if not group:  # the name column's width follows the longest name, the same in both
        assert ours_lines[:3] == their_lines[:3]
    else:  # the shapes column is as wide as the widest shapes, which differ with the ops
        assert ours_lines[1].split("# of Calls")[0] == their_lines[1].split("# of Calls")[0]
        assert ours_lines[1].rstrip().endswith("Input Shapes")
    assert ours_lines[-1].startswith("Self CPU time total: ")
    for name in SHARED:
        if group and name != "aten::relu":
            continue
        ours_row, their_row = our_rows[name[:52] + "..." if len(name) > 52 else name], \
            their_rows[name[:52] + "..." if len(name) > 52 else name]
        assert len(ours_row) == len(their_row)
        assert ours_row[-1 - group] == their_row[-1 - group]  # # of Calls
        for ours_col, their_col in zip(ours_row, their_row):
            # numbers aside (times, and memory: ember's blocks are 512-byte multiples)
            assert _form(ours_col) == _form(their_col) \
                or ours_col.endswith(("us", "ms")) and their_col.endswith(("us", "ms"))
    if group:
        linear = [[line.split()[-4:] for line in lines if " aten::linear " in line]
                  for lines in (ours_lines, their_lines)]
        assert sorted(linear[0]) == sorted(linear[1])
        assert any(line.endswith("[[3, 4], [8, 4], [8]]  ") for line in ours_lines)
    # row_limit and sort_by as torch
    assert len(_rows(ours.table(sort_by="count", row_limit=3))[1]) == 3
    lines = _rows(ours.table(sort_by="count"))[0]
    counts = [int(re.split(r"\s{2,}", line.strip())[-1 - group]) for line in lines[3:-2]]
    assert counts == sorted(counts, reverse=True)


def test_chrome_trace_is_valid_json_with_pytorchs_fields(tmp_path):
    path = str(tmp_path / "trace.json")
    prof = _profile(ember, record_shapes=True, profile_memory=True)
    prof.export_chrome_trace(path)
    with open(path) as f:
        doc = json.load(f)
    assert doc["schemaVersion"] == 1 and doc["displayTimeUnit"] == "ms"
    assert doc["record_shapes"] == 1 and doc["profile_memory"] == 1
    events = doc["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X", "i"}
    spans = [e for e in events if e["ph"] == "X"]
    for e in spans:
        assert {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"} <= set(e)
        assert e["dur"] >= 0 and e["cat"] in ("cpu_op", "user_annotation")
    names = [e["name"] for e in spans]
    assert names[0] == "model_forward" and "aten::relu" in names
    outer = spans[0]
    inside = [e for e in spans[1:] if e["ts"] < outer["ts"] + outer["dur"]]
    assert all(e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] for e in inside)
    relu = next(e for e in spans if e["name"] == "aten::relu")
    assert relu["args"]["Input Dims"] == [[3, 8]] and relu["args"]["Input type"] == ["float"]
    mem = [e for e in events if e["ph"] == "i"]
    assert all(e["name"] == "[memory]" and "Bytes" in e["args"] for e in mem) and mem
    # torch's own trace of the same program has the same kinds of complete events
    torch_path = str(tmp_path / "torch.json")
    _profile(torch, record_shapes=True).export_chrome_trace(torch_path)
    with open(torch_path) as f:
        theirs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    assert {e["cat"] for e in theirs} >= {e["cat"] for e in spans}
    assert {"Input Dims", "Input type"} <= set(
        next(e for e in theirs if e["name"] == "aten::relu")["args"])


def test_gzip_export_and_tensorboard_trace_handler(tmp_path):
    prof = _profile(ember)
    prof.export_chrome_trace(str(tmp_path / "t.json.gz"))
    with gzip.open(tmp_path / "t.json.gz") as f:
        assert json.load(f)["traceEvents"]
    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0")
    handler(prof)
    (name,) = os.listdir(tmp_path / "tb")
    assert re.fullmatch(r"w0\.\d+\.pt\.trace\.json", name)


def _scheduled(m, acc_events=False, **sched):
    """Ten steps under a schedule: per on_trace_ready call, the step and the recorded names."""
    net, x = _net(m), m.ones(3, 4)
    ready = []

    def on_ready(p):
        ready.append((p.step_num, sorted({(e.key, e.count) for e in p.key_averages()
                                          if e.key.startswith(("ProfilerStep", "aten::relu",
                                                               "model_forward"))}),
                      sorted({e.trace_name for e in p.events()
                              if e.name.startswith("ProfilerStep")})))
    with pytest.warns(UserWarning) if sched.get("warmup", 1) == 0 else _nothing():
        schedule = m.profiler.schedule(**sched)
    with m.profiler.profile(schedule=schedule, on_trace_ready=on_ready,
                            acc_events=acc_events) as prof:
        for _ in range(10):
            _program(m, net, x)
            prof.step()
    return ready, prof.step_num


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("sched", [dict(wait=1, warmup=1, active=2, repeat=2),
                                   dict(wait=0, warmup=0, active=3),
                                   dict(wait=2, warmup=1, active=1, skip_first=3),
                                   dict(wait=5, warmup=1, active=2, skip_first=1,
                                        skip_first_wait=1)])
def test_schedule_steps_as_torch(sched):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _scheduled(ember, **sched), _scheduled(torch, **sched)
    assert ours == theirs and ours[0]


def test_schedule_actions_and_errors_as_torch():
    for m in (torch, ember):
        fn = m.profiler.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
        assert [fn(i).name for i in range(7)] == ["NONE", "NONE", "WARMUP", "RECORD",
                                                  "RECORD_AND_SAVE", "NONE", "NONE"]
        with pytest.raises(AssertionError, match="Invalid profiler schedule"):
            m.profiler.schedule(wait=0, warmup=0, active=0)


def test_record_function_as_decorator_and_without_a_profiler():
    for m in (torch, ember):
        @m.profiler.record_function("my_block")
        def f(a):
            return a.relu()
        f(m.ones(2))  # no profiler: nothing recorded, nothing raised
        with m.profiler.profile() as prof:
            f(m.ones(2))
        rows = {e.key: e.count for e in prof.key_averages()}
        assert rows["my_block"] == 1 and rows["aten::relu"] == 1
        block = next(e for e in prof.events() if e.name == "my_block")
        assert block.is_user_annotation and "aten::relu" in [c.name for c in block.cpu_children]


def test_with_stack_points_at_the_caller():
    prof = _profile(ember, with_stack=True)
    relu = next(e for e in prof.events() if e.name == "aten::relu")
    assert any("test_profiler.py" in entry and "_program" in entry for entry in relu.stack)
    assert not any("/ember/" in entry for entry in relu.stack)
    table = prof.key_averages(group_by_stack_n=2).table(sort_by="count", row_limit=5)
    assert "Source Location" in table.splitlines()[1]


def test_legacy_autograd_profiler_as_torch():
    results = []
    for m in (torch, ember):
        net, x = _net(m), m.ones(3, 4)
        prof = m.autograd.profiler.profile(record_shapes=True)
        assert len(prof.key_averages()) == 0 and prof.table() == ""
        with prof:
            with m.autograd.profiler.record_function("outer"):
                net(x).sum()
        rows = {e.key: e.count for e in prof.key_averages()}
        results.append((rows["outer"], rows["aten::relu"], rows["aten::linear"],
                        prof.self_cpu_time_total > 0, prof.total_average().key))
        assert "Self CPU time total" in prof.table()
    assert results[0] == results[1]


def test_profiling_is_off_outside_the_region_and_under_explain():
    with ember.profiler.profile() as prof:
        ember.ones(2).relu()
    ember.ones(2).exp()
    assert "aten::exp" not in {e.key for e in prof.key_averages()}
    for outer, inner in ((ember.explain, ember.profiler.profile),
                         (ember.profiler.profile, ember.explain)):
        with outer() as a, inner() as b:
            x = ember.ones(2, requires_grad=True)
            x.exp().sum().backward()
        ex, prof = (a, b) if outer is ember.explain else (b, a)
        assert "ExpBackward0" in {e.key for e in prof.key_averages()}
        assert "ExpBackward0" in [r["op"] for r in ex.records]
        assert ember.autograd.engine._observer is None


def test_an_error_inside_the_region_ends_the_ranges():
    with pytest.raises(RuntimeError):
        with ember.profiler.profile() as prof:
            with ember.profiler.record_function("block"):
                ember.ones(2, 3) @ ember.ones(2, 3)
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["block"].count == 1 and rows["aten::matmul"].count == 1
    assert ember._dispatch.dispatcher._modes == []


def _flops_program(m):
    F = m.nn.functional
    m.manual_seed(0)
    a, b, c, d = m.randn(8, 16), m.randn(16, 4), m.randn(3, 8, 16), m.randn(3, 16, 4)
    x = m.randn(2, 3, 10, 10)
    with m.profiler.profile(with_flops=True) as prof:
        m.mm(a, b), m.addmm(m.zeros(8, 4), a, b), m.bmm(c, d), m.baddbmm(m.zeros(3, 8, 4), c, d)
        m.matmul(c, d), F.linear(a, b.t()), F.linear(c, b.t(), m.ones(4))
        F.conv2d(x, m.randn(5, 3, 3, 3), stride=2, padding=1)
        F.conv2d(x, m.randn(6, 1, 3, 3), groups=3, dilation=2)
        a * a, a + a, a * 2, a - a, m.add(a, a, alpha=2)
        F.conv1d(m.randn(2, 3, 10), m.randn(4, 3, 3))  # PyTorch counts 2-d convolutions only
    return prof


def test_with_flops_counts_as_torch():
    ours, theirs = _flops_program(ember), _flops_program(torch)
    first = [{}, {}]
    for seen, prof in zip(first, (ours, theirs)):
        for e in prof.events():
            seen.setdefault(e.name, e.flops)
    # the same ops count the same; ember's fused linear/matmul/convolution count what PyTorch's
    # decomposition into addmm/mm/bmm/conv2d counts
    for name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mul",
                 "aten::add"):
        assert first[0][name] == first[1][name] > 0, name
    assert sum(e.flops for e in ours.events()) == sum(e.flops for e in theirs.events())
    assert sum(e.flops for e in ours.events() if e.name == "aten::convolution") == sum(
        e.flops for e in theirs.events() if e.name == "aten::conv2d") == 13500 + 7776
    (our_lines, our_rows), (their_lines, their_rows) = [
        _rows(p.key_averages().table(sort_by="flops", row_limit=5)) for p in (ours, theirs)]
    assert our_lines[1].endswith("# of Calls   Total FLOPs  ")
    assert their_lines[1].endswith("# of Calls   Total FLOPs  ")
    assert our_rows["aten::baddbmm"][-1] == their_rows["aten::baddbmm"][-1] == "3072.000"
    assert our_rows["aten::convolution"][-1] == "21276.000"


def test_export_stacks_folds_each_stack_with_its_self_time(tmp_path):
    def forward(m, a):
        return m.mm(a, a).relu()

    path = str(tmp_path / "stacks.txt")
    with ember.profiler.profile(with_stack=True) as prof:
        forward(ember, ember.ones(16, 16))
    prof.export_stacks(path)
    lines = open(path).read().splitlines()
    assert lines and all(re.fullmatch(r"\S+ \d+", line) for line in lines)
    assert any(";" in line.split()[0] and "forward" in line for line in lines)
    for m in (torch, ember):
        with m.profiler.profile() as prof:
            m.ones(2).sum()
        with pytest.raises(AssertionError, match="requires with_stack=True"):
            prof.export_stacks(path)
        with m.profiler.profile(with_stack=True) as prof:
            m.ones(2).sum()
        with pytest.raises(ValueError, match="metric should be one of"):
            prof.export_stacks(path, "cpu_time_total")


def _traced_inner(m, a):
    return m.mm(a, a).relu()


def _traced_outer(m, a):
    return _traced_inner(m, a).sum()


def _python_caller(event):
    parent = event.cpu_parent
    while parent.name.startswith("<built-in"):
        parent = parent.cpu_parent
    return parent.name


def test_with_stack_records_python_functions_as_torch(tmp_path):
    """with_stack: the Python functions around the ops become events ("file(line): name",
    category python_function), with the ops inside them; nothing inside an op."""
    found = []
    for m in (torch, ember):
        with m.profiler.profile(with_stack=True) as prof:
            _traced_outer(m, m.ones(4, 4))
        events = prof.events()
        python = {e.name: e for e in events if e.is_python_function and "_traced_" in e.name}
        ops = {e.name: e for e in events if e.name in ("aten::relu", "aten::sum")}
        # the nearest Python function around each op (PyTorch has the C method call, such as
        # "<built-in method relu of Tensor object>", in between; ember's methods are Python)
        found.append((sorted(python), _python_caller(ops["aten::relu"]),
                      _python_caller(ops["aten::sum"]),
                      python[next(n for n in python if "_traced_inner" in n)].cpu_parent.name))
        path = str(tmp_path / f"{m.__name__}.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            spans = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "python_function"]
        assert any("_traced_outer" in e["name"] for e in spans)
        assert all({"Python id", "Python parent id"} <= set(e["args"]) for e in spans)
    assert found[0] == found[1]
    assert not [e for e in events if e.is_python_function and e.cpu_parent is not None
                and e.cpu_parent.name.startswith("aten::")]


def test_with_stack_and_a_step_inside_a_function():
    """profiler.step() called inside a traced function ends the step range around it; the
    function's own return must not end the next step's range."""
    def train_step(m, prof):
        m.ones(2).relu()
        prof.step()

    for m in (torch, ember):
        sched = m.profiler.schedule(wait=0, warmup=0, active=3)
        with m.profiler.profile(with_stack=True, schedule=sched) as prof:
            for _ in range(2):
                train_step(m, prof)
        steps = [e for e in prof.events() if e.name.startswith("ProfilerStep")]
        relus = [e for e in prof.events() if e.name == "aten::relu"]
        assert len(relus) == 2 and len(steps) >= 2
        assert all(_python_caller(r).endswith(": train_step") for r in relus)
        assert all(s.cpu_parent is not None for s in steps)
