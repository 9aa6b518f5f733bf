"""torch.utils.tensorboard.SummaryWriter: the training-loop side of TensorBoard.

`SummaryWriter(log_dir)` owns a FileWriter, which appends Event records (a Summary, a step,
a wall time) to an `events.out.tfevents.*` file through tensorboard's EventFileWriter: a
queue drained by a background thread that flushes every `flush_secs` seconds or `max_queue`
events, so logging does not stall training. `add_scalars` writes each series to its own
sub-run (`<log_dir>/<main_tag>_<tag>`), which is how TensorBoard overlays them in one chart;
`add_hparams` writes to a sub-run named by `run_name`.

    writer = SummaryWriter("runs/exp1")
    for step in range(100):
        writer.add_scalar("loss", loss.item(), step)
    writer.close()            # then: tensorboard --logdir runs
"""
import os
import time

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ._embedding import write_embedding
from ._utils import figure_to_image, make_np
from .summary import (audio, custom_scalars, histogram, histogram_raw, hparams, image,
                      image_boxes, pr_curve, pr_curve_raw, scalar, tensor_proto, text)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protocol buffers to one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


class SummaryWriter:
    """Logs to `log_dir` (default `runs/<date>_<host><comment>`); a context manager.

    Args:
        purge_step: after a crash, make TensorBoard drop events at or after this step from
            earlier runs in the directory.
        max_queue, flush_secs: when the background writer flushes.
        filename_suffix: appended to the event file's name.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()

        # TensorFlow's default histogram buckets: +-1e-12 growing by 10% up to +-1e20
        v = 1e-12
        buckets, neg_buckets = [], []
        while v < 1e20:
            buckets.append(v)
            neg_buckets.append(-v)
            v *= 1.1
        self.default_bins = neg_buckets[::-1] + [0] + buckets

    def _get_file_writer(self):
        """The main FileWriter, (re)opened on demand, e.g. after `close`."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Log one run's hyperparameters and its final metrics for the HParams dashboard,
        into the sub-run `run_name` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for summary in (exp, ssi, sei):
                w_hp.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log a number (a Python number or a one-element tensor)."""
        self._get_file_writer().add_summary(
            scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
            global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several series under one chart; each goes to its own sub-run."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Log a whole tensor (tensor plugin)."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Log the distribution of `values`; `bins` as np.histogram takes it, or
        "tensorflow" for TensorFlow's exponential buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
            global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image: uint8 in 0..255 or float in 0..1, laid out as `dataformats`."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images, tiled into one grid image."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Log a matplotlib figure (or a list of them) as an image."""
        if isinstance(figure, list):
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Log a mono clip with values in [-1, 1]."""
        self._get_file_writer().add_summary(audio(tag, snd_tensor, sample_rate=sample_rate),
                                            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a string (Markdown)."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """PyTorch traces the model (torch.jit.trace) into a GraphDef for the Graphs
        dashboard; ember cannot yet."""
        raise NotImplementedError(
            "SummaryWriter.add_graph needs a traced graph of the model, and ember's graph "
            "capture (fx.symbolic_trace / jit.trace) has not landed yet")

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """An image with boxes drawn on it (box_tensor: N x 4 pixel corners); labels that do
        not match the boxes one to one are dropped, as in PyTorch."""
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._get_file_writer().add_summary(
            image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats,
                        labels=labels), global_step, walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points (N x D) for TensorBoard's projector, with optional labels (N, or N rows of
        columns named by `metadata_header`) and images (N x C x H x W)."""
        if not hasattr(self, "_projector_config"):
            from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
            self._projector_config = ProjectorConfig()
        write_embedding(self._projector_config, self._get_file_writer().get_logdir(), mat,
                        metadata, label_img, global_step, tag, metadata_header)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Log a precision-recall curve of `predictions` (in [0, 1]) against `labels`."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._get_file_writer().add_summary(
            pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        self._get_file_writer().add_summary(
            pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, num_thresholds, weights),
            global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout):
        """Lay out the Custom Scalars dashboard (see summary.custom_scalars)."""
        self._get_file_writer().add_summary(custom_scalars(layout))

    def flush(self):
        """Write everything queued to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close every file; a later add_* opens a new event file."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
