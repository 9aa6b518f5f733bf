"""ember.utils.benchmark against torch.utils.benchmark: Measurement's statistics and printing
and Compare's tables for the same recorded times, TaskSpec titles, and Timer's measuring loops
(timeit, blocked_autorange, adaptive_autorange) on a real statement."""
import random
import re

import pytest

import ember
import ember.utils.benchmark as eb

torch = pytest.importorskip("torch")
import torch.utils.benchmark as tb  # noqa: E402


def _measurements(b, seed=0):
    r = random.Random(seed)
    ms = []
    for desc in ("ember", "torch"):
        for n in (1, 64, 4096):
            for threads in (1, 2):
                spread = 1.02 if n == 64 else 1.6
                times = [r.uniform(1.0, spread) * n * 1e-6 for _ in range(9)]
                ms.append(b.Measurement(10, times, b.TaskSpec(
                    stmt="x + y", setup="x = 1", label="add", sub_label=f"n={n}",
                    description=desc, num_threads=threads)))
    ms.append(b.Measurement(100, [2e-3, 2.2e-3], b.TaskSpec(stmt="x * y", setup="pass",
                                                            label="mul", env="env A")))
    ms.append(b.Measurement(100, [2.5e-3], b.TaskSpec(stmt="x * y", setup="pass",
                                                       label="mul", env="env B")))
    return ms


def _repr(m):
    return repr(m).split("\n", 1)[1]  # after the object's address


def test_measurement_as_torch():
    for mt, me in zip(_measurements(tb), _measurements(eb)):
        assert _repr(me) == _repr(mt)
        assert me.median == pytest.approx(mt.median, rel=1e-12)
        assert me.mean == pytest.approx(mt.mean, rel=1e-12)
        assert me.iqr == pytest.approx(mt.iqr, rel=1e-9, abs=1e-18)
        assert (me.significant_figures, me.has_warnings, me.meets_confidence(0.3), me.title,
                me.env, me.as_row_name, me.num_threads) == \
            (mt.significant_figures, mt.has_warnings, mt.meets_confidence(0.3), mt.title,
             mt.env, mt.as_row_name, mt.num_threads)
    assert [_repr(m) for m in eb.Measurement.merge(_measurements(eb))] == \
        [_repr(m) for m in tb.Measurement.merge(_measurements(tb))]


def test_task_spec_titles_as_torch():
    for kw in (dict(stmt="a\nb", setup="s1\ns2", sub_label="sub"), dict(stmt="f(x)", setup=""),
               dict(stmt="f(x)", setup="pass", label="L", description="D")):
        assert eb.TaskSpec(**kw).summarize() == tb.TaskSpec(**kw).summarize()


@pytest.mark.parametrize("options", [(), ("trim",), ("trim", "warn"), ("color",),
                                     ("color_rows", "trim", "warn")])
def test_compare_as_torch(options):
    tables = []
    for b in (tb, eb):
        c = b.Compare(_measurements(b)[:-2])  # (PyTorch's Compare fails on unlabelled envs)
        if "trim" in options:
            c.trim_significant_figures()
        if "warn" in options:
            c.highlight_warnings()
        if "color" in options:
            c.colorize()
        if "color_rows" in options:
            c.colorize(rowwise=True)
        tables.append(str(c))
    assert tables[1] == tables[0]
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        eb.Compare([1])


def test_helpers_as_torch():
    from ember.utils.benchmark.utils import common as ec
    from torch.utils.benchmark.utils import common as tc
    for t in (3.2e-9, 4.5e-5, 0.02, 7.0):
        assert ec.select_unit(t) == tc.select_unit(t)
    for x, n in ((123.456, 2), (0.0012345, 3), (98765.4, 4)):
        assert ec.trim_sigfig(x, n) == tc.trim_sigfig(x, n)


def test_timer_measures():
    t = eb.Timer("x.sum()", setup="x = torch.ones(8)", label="sum", description="ember")
    m = t.timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.median > 0
    m = t.blocked_autorange(min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1
    seen = []
    m = t.adaptive_autorange(threshold=0.5, min_run_time=0.01, max_run_time=0.5,
                             callback=lambda n, s: seen.append(n))
    assert len(m.times) >= 4 or sum(m.raw_times) > 0.5
    assert seen and set(seen) == {m.number_per_run}
    assert re.search(r"\d+\.\d\d us|\d+\.\d\d ms", repr(m))
    text = str(eb.Compare([m]))
    assert text.startswith("[") and "x.sum()" in text
    g = eb.Timer("f()", globals={"f": lambda: None}).timeit(10)
    assert g.median > 0
    assert eb.Timer("torch.ones(1)")._globals["torch"] is ember


def test_timer_refusals_as_torch():
    for b in (tb, eb):
        with pytest.raises(ValueError, match="only a `str` stmt"):
            b.Timer(lambda: None)
        with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
            b.Timer("x", global_setup="int x;")
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            b.Timer("x").autorange()
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        eb.Timer("x", language="c++")
