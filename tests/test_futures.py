"""ember.futures against torch.futures: completion once, wait/value/done, then-chains (results
and callback errors), add_done_callback, set_exception, collect_all and wait_all, and a result
set from another thread."""
import threading
import time

import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(call):
    try:
        return ("ok", call())
    except BaseException as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e).split("\n")[0])


def _script(lib):
    F = lib.futures.Future
    out = []
    f = F()
    out.append(f.done())
    g = f.then(lambda x: x.wait() + 1)
    h = f.then(lambda x: 1 / 0)
    seen = []
    f.add_done_callback(lambda x: seen.append(x.value()))
    f.set_result(5)
    out += [f.done(), f.value(), f.wait(), g.wait(), seen, h.done(), _outcome(h.wait),
            _outcome(h.value)]
    later = f.then(lambda x: x.value() * 10)  # chained after completion: runs at once
    out.append(later.wait())
    twice = F()
    twice.set_result(1)
    # (after a refused set_exception, PyTorch's future no longer reads back: not compared)
    out += [_outcome(lambda: twice.set_result(6)),
            _outcome(lambda: twice.set_exception(ValueError("x")))]
    e = F()
    e.set_exception(ValueError("bad"))
    out += [_outcome(e.wait), _outcome(e.value), e.done(), e.then(lambda x: 7).wait(),
            _outcome(lambda: F().set_exception(3))]
    a, b = F(), F()
    c = lib.futures.collect_all([a, b])
    a.set_result(1)
    out.append(c.done())
    b.set_result(lib.ones(2))
    out.append([str(x.wait()) for x in c.wait()])
    a, b = F(), F()
    a.set_result(1)
    b.set_exception(RuntimeError("boom"))
    out += [_outcome(lambda: lib.futures.wait_all([a, b])),
            _outcome(lib.futures.collect_all([a, b]).wait),
            lib.futures.wait_all([a, a])]
    w = F()
    threading.Thread(target=lambda: (time.sleep(0.05), w.set_result("t"))).start()
    out.append(w.wait())
    return out


def test_futures_as_torch():
    assert _script(ember) == _script(torch)


def test_callback_error_names_the_exception():
    f = ember.futures.Future()
    g = f.then(lambda x: {}["missing"])
    f.set_result(None)
    with pytest.raises(RuntimeError, match="Got the following error when running the "
                                           "callback: KeyError: 'missing'") as info:
        g.wait()
    assert "\n\nAt:\n" in str(info.value)


def test_collect_all_refuses_non_futures():
    with pytest.raises(TypeError, match="int"):
        ember.futures.collect_all([1])


def test_jit_fork_returns_a_completed_future_as_torch():
    results = []
    for lib in (torch, ember):
        fut = lib.jit.fork(lambda x, y=2: x + y, lib.ones(2), y=5)
        results.append((fut.done(), lib.jit.wait(fut).tolist()))
        assert isinstance(fut, lib.futures.Future if lib is ember else torch._C.Future)

        def bad(x):
            raise ValueError("bad")
        with pytest.raises(ValueError, match="bad"):
            lib.jit.fork(bad, 1)
    assert results[0] == results[1]
