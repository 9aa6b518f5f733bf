"""benchmarks/run.py's pairing: torch and ember loops alternate round by round, and the ratio
printed is the median of the rounds' ratios (the runner imports torch, as it times both)."""
import os

import pytest

pytest.importorskip("torch", reason="benchmarks/run.py times torch beside ember")


@pytest.fixture
def run(monkeypatch):
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "benchmarks")
    monkeypatch.syspath_prepend(bench)
    import run as runner
    return runner


def test_rounds_alternate_and_the_ratio_is_the_median_of_the_rounds(run, monkeypatch):
    calls = []
    # seconds per loop of each round: torch's third round is an outlier (the machine busy)
    loops = {"torch": iter([1.0, 1.0, 9.0, 1.0, 1.0]), "ember": iter([1.5, 1.2, 1.4, 1.3, 1.6])}

    def fake_loop(fn, number):
        calls.append(fn.__name__)
        return next(loops[fn.__name__]) * number

    def torch():  # the two loops' functions, named for the fake timer
        pass

    def ember():
        pass

    monkeypatch.setattr(run, "time_loop", fake_loop)
    monkeypatch.setattr(run, "calibrate", lambda fn: 4)
    t_torch, t_ember, ratio = run.measure_pair(torch, ember, 5)
    assert calls == ["torch", "ember"] * 5
    assert (t_torch, t_ember) == (1.0, 1.2)
    # rounds' ratios 1.5, 1.2, 0.156, 1.3, 1.6: the median is 1.3, where best/best says 1.2
    assert ratio == pytest.approx(1.3)


def test_calibrate_grows_the_loop_to_the_minimum_time(run, monkeypatch):
    monkeypatch.setattr(run, "time_loop", lambda fn, number: number * 0.01)
    assert run.calibrate(lambda: None, warmup=0, min_time=0.2) >= 20
