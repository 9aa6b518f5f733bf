"""ember.utils.tensorboard.SummaryWriter writes the event files torch's SummaryWriter writes:
both are read back with tensorboard's own event reader and compared record by record."""
import glob
import io
import os

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing import event_accumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    EventFileLoader, RawEventFileLoader)
from tensorboard.compat.proto.event_pb2 import Event  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from ember.utils.tensorboard import SummaryWriter  # noqa: E402

R = np.random.default_rng(0)
IMAGE = R.uniform(size=(3, 8, 10)).astype(np.float32)
IMAGES = R.uniform(size=(5, 1, 6, 4)).astype(np.float32)
HWC_U8 = R.integers(0, 256, size=(7, 5, 3)).astype(np.uint8)
VALUES = R.normal(size=1000).astype(np.float32)
LABELS = R.integers(0, 2, size=50)
PREDS = R.uniform(size=50).astype(np.float32)


def log_everything(writer, lib):
    t = lambda a: lib.tensor(a)  # noqa: E731
    for step in range(3):
        writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=100.0 + step)
        writer.add_scalar("loss_tensor", t(np.float32(0.5 * step)), step, walltime=100.0)
        writer.add_scalar("new_style", 2.5, step, walltime=100.0, new_style=True)
        writer.add_scalar("double", 2.5, step, walltime=100.0, new_style=True,
                          double_precision=True)
    writer.add_scalars("run", {"train": 1.0, "val": 2.0}, 0, walltime=100.0)
    writer.add_scalars("run", {"train": 0.5, "val": 1.5}, 1, walltime=101.0)
    writer.add_histogram("weights", t(VALUES), 0, walltime=100.0)
    writer.add_histogram("weights_auto", t(VALUES), 0, bins="auto", walltime=100.0)
    writer.add_histogram("weights_max", t(VALUES), 0, bins=50, max_bins=7, walltime=100.0)
    writer.add_histogram("ints", t(np.arange(20)), 0, walltime=100.0)
    writer.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                             bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3],
                             global_step=0, walltime=100.0)
    writer.add_image("image", t(IMAGE), 0, walltime=100.0)
    writer.add_image("image_hwc_uint8", t(HWC_U8), 0, walltime=100.0, dataformats="HWC")
    writer.add_image("image_hw", t(IMAGE[0]), 0, walltime=100.0, dataformats="HW")
    writer.add_images("images", t(IMAGES), 0, walltime=100.0)
    boxes = t(np.array([[1.0, 1.0, 6.0, 5.0], [2.0, 0.0, 9.0, 7.0]], dtype=np.float32))
    writer.add_image_with_boxes("boxes", t(IMAGE), boxes, 0, walltime=100.0)
    writer.add_image_with_boxes("boxes_labels", t(IMAGE), boxes, 0, walltime=100.0,
                                labels=["cat", "dog"], rescale=2)
    writer.add_image_with_boxes("boxes_bad_labels", t(HWC_U8), boxes[:1], 0, walltime=100.0,
                                dataformats="HWC", labels=["a", "b"])
    writer.add_text("note", "**bold** text", 0, walltime=100.0)
    writer.add_tensor("tensor", t(np.arange(6, dtype=np.float32).reshape(2, 3)), 0, walltime=100.0)
    writer.add_tensor("tensor_i64", t(np.arange(4)), 0, walltime=100.0)
    writer.add_tensor("tensor_f16", t(np.arange(4, dtype=np.float16)), 0, walltime=100.0)
    writer.add_pr_curve("pr", t(LABELS), t(PREDS), 0, walltime=100.0)
    writer.add_audio("audio", t(np.sin(np.arange(100) / 5.0)), 0, sample_rate=8000,
                     walltime=100.0)
    writer.add_custom_scalars_multilinechart(["loss", "loss_tensor"])
    writer.add_custom_scalars_marginchart(["a", "b", "c"], category="c", title="m")
    writer.add_hparams({"lr": 0.1, "opt": "sgd", "bs": 32, "flag": True, "t": t(np.array([0.5]))},
                       {"hparam/acc": 0.9}, run_name="hp", global_step=1)
    writer.flush()


def read_runs(log_dir):
    """{run (relative dir): [events as written]} for every event file under log_dir (the raw
    records: EventFileLoader would migrate histograms and images to tensors on reading)."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"),
                                 recursive=True)):
        run = os.path.relpath(os.path.dirname(path), log_dir)
        events = [Event.FromString(record) for record in RawEventFileLoader(path).Load()]
        runs[run] = [e for e in events if not e.HasField("file_version")]
    return runs


def _strip(event, keep_walltime):
    event = type(event).FromString(event.SerializeToString())
    if not keep_walltime:
        event.wall_time = 0
    return event


def test_event_files_equal_torch(tmp_path):
    mine, theirs = tmp_path / "ember", tmp_path / "torch"
    with SummaryWriter(str(mine)) as w:
        log_everything(w, ember)
    with TorchWriter(str(theirs)) as w:
        log_everything(w, torch)
    got, want = read_runs(str(mine)), read_runs(str(theirs))
    assert sorted(got) == sorted(want) == [".", "hp", "run_train", "run_val"]
    for run in want:
        # hparams sub-runs and custom scalars take the clock's time: compare without it
        keep = run != "hp"
        e = [_strip(x, keep) for x in got[run] if not x.summary.value
             or x.summary.value[0].tag != "custom_scalars__config__"]
        t = [_strip(x, keep) for x in want[run] if not x.summary.value
             or x.summary.value[0].tag != "custom_scalars__config__"]
        assert len(e) == len(t), run
        for a, b in zip(e, t):
            assert a == b, f"{run}:\n{a}\n!=\n{b}"
        custom = lambda evs: [x.summary for x in evs if x.summary.value  # noqa: E731
                              and x.summary.value[0].tag == "custom_scalars__config__"]
        assert custom(got[run]) == custom(want[run])


def test_tensorboard_reads_the_dashboards(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_histogram("w", ember.randn(200), 0)
        w.add_image("img", ember.rand(3, 4, 4), 0)
        w.add_text("txt", "hello", 0)
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"] and tags["histograms"] == ["w"] and tags["images"] == ["img"]
    assert "txt/text_summary" in tags["tensors"]
    assert [s.step for s in acc.Scalars("loss")] == [0, 1, 2, 3, 4]
    assert acc.Scalars("loss")[4].value == pytest.approx(0.2)
    assert acc.Histograms("w")[0].histogram_value.num == 200
    assert acc.Images("img")[0].width == 4


def test_writer_behaviour(tmp_path):
    w = SummaryWriter(str(tmp_path), filename_suffix=".x", purge_step=3)
    w.add_scalar("a", 1, 5)
    w.close()
    w.add_scalar("a", 2, 6)  # reopens a new file after close
    w.close()
    files = glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*.x"))
    assert len(files) == 2
    events = [e for f in files for e in EventFileLoader(f).Load()]
    assert any(e.session_log.status == e.session_log.START and e.step == 3 for e in events)
    with pytest.raises(NotImplementedError, match="graph capture"):
        w.add_graph(ember.nn.Linear(2, 2), ember.randn(1, 2))
    with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
        w.add_hparams([1], {})
    with pytest.raises(AssertionError, match="Tensor should contain one element"):
        w.add_scalar("bad", ember.ones(2))
    with pytest.raises(ValueError, match="len\\(bucket_limits\\) != len\\(bucket_counts\\)"):
        w.add_histogram_raw("r", 0, 1, 1, 1, 1, [1.0], [1, 2])
    w.close()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        default = SummaryWriter(comment="_c")
        assert default.get_logdir().startswith("runs") and default.get_logdir().endswith("_c")
        default.close()
    finally:
        os.chdir(cwd)


def _embedding_files(lib, root):
    writer_cls = TorchWriter if lib is torch else SummaryWriter
    lib.manual_seed(0)
    mat = lib.tensor(np.random.default_rng(0).normal(size=(5, 3)), dtype=lib.float32)
    images = lib.tensor(np.random.default_rng(1).uniform(size=(5, 3, 4, 4)),
                        dtype=lib.float32)
    with writer_cls(str(root)) as w:
        w.add_embedding(mat, metadata=list("abcde"), label_img=images, tag="a/b")
        w.add_embedding(mat * 2, metadata=[[i, i * i] for i in range(5)],
                        metadata_header=["i", "square"], global_step=3)
        with pytest.raises(AssertionError, match="#labels should equal"):
            w.add_embedding(mat, metadata=["x"], global_step=4)
    files = {}
    for path in sorted(glob.glob(os.path.join(str(root), "**", "*.*"), recursive=True)):
        rel = os.path.relpath(path, str(root))
        if not rel.startswith("events."):
            with open(path, "rb") as f:
                files[rel] = f.read()
    return files


def test_add_embedding_writes_torchs_projector_files(tmp_path):
    ours = _embedding_files(ember, tmp_path / "ember")
    theirs = _embedding_files(torch, tmp_path / "torch")
    assert sorted(ours) == sorted(theirs) and "projector_config.pbtxt" in ours
    for name in ours:
        if name.endswith(".png"):  # the same pixels (PNG encoders may differ in bytes)
            from PIL import Image
            pixels = [np.asarray(Image.open(io.BytesIO(data)))
                      for data in (ours[name], theirs[name])]
            np.testing.assert_array_equal(*pixels)
        else:
            assert ours[name] == theirs[name], name
