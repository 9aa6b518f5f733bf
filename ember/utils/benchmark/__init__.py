"""torch.utils.benchmark: timing a statement (`Timer`), the statistics of the times
(`Measurement`: median, mean, IQR, significant figures, warnings) and a table comparing many
(`Compare`). Times are wall-clock, `time.perf_counter` through `timeit`, as PyTorch's on the CPU.
The fuzzers and Callgrind collection are not provided."""
from .utils.common import *  # noqa: F401,F403
from .utils.timer import *  # noqa: F401,F403
from .utils.compare import *  # noqa: F401,F403
