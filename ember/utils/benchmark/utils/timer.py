"""Timer: runs a statement many times with `timeit` and returns a Measurement.

`blocked_autorange` first finds a block size (runs per timing) large enough that the timer's own
overhead is under 0.01% of a block and a block takes at least min_run_time / 1000, then times
blocks until min_run_time has passed; `adaptive_autorange` keeps timing blocks until the IQR
is below `threshold` of the median (or max_run_time passes); `timeit(number)` is one block.
"""
import enum
import statistics
import textwrap
import timeit

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The clock: wall time (ember has no accelerator to synchronize with first)."""
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time `stmt` after running `setup`, with `globals` as the namespace (`torch` in it is
    ember); `label`, `sub_label`, `description` and `env` place it in a Compare table."""
    _timer_cls = timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("Timer(language='c++') compiles the statement against "
                                      "PyTorch's C++ library; ember has no C++ runtime. Time "
                                      "Python statements instead.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this "
                             "code can simply be moved to `setup`.")
        import ember
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        self._language = Language.PYTHON
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)  # never 0: statistics divide by it

    def timeit(self, number=1000000):
        """One block of `number` runs, after a warm-up of number // 100."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = statistics.median_low([self._timeit(0) for _ in range(5)])
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a fixed size, timed until `min_run_time` seconds have passed."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time,
                                       callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks timed until IQR / median < threshold (at least 4 blocks and min_run_time;
        at most max_run_time)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times,
                task_spec=self._task_spec).meets_confidence(threshold=threshold)
        times = self._measurement_loop(number, stop, min_run_time, max_run_time,
                                       callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True,
                          retain_out_file=False):
        raise NotImplementedError("Timer.collect_callgrind counts instructions with Valgrind "
                                  "through PyTorch's C++ bindings, which ember does not have; "
                                  "use blocked_autorange for wall-clock times.")


def _clean(code):
    """Dedented, without a leading newline or trailing space, as PyTorch stores it."""
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()
