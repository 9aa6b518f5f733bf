"""torch.utils.tensorboard: log scalars, histograms, images, text and hyperparameters to event
files that TensorBoard reads. The files are written by the `tensorboard` package's own
writer (an optional dependency: `pip install tensorboard`, or ember's `tensorboard` extra),
imported when this module is."""
try:
    import tensorboard  # noqa: F401
except ImportError:
    raise ImportError("ember.utils.tensorboard needs the `tensorboard` package: "
                      "pip install tensorboard") from None

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: F401 (as torch's)

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
