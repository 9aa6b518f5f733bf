"""examples/mnist.py, the main job, run as a script: it trains (the loss falls), its checkpoint
loads with torch.load and with ember.load, --resume continues from it, --plot writes a PNG, the
same script under --torch starts with the same losses, and --dataset fashion-mnist reads a
user's folder.

To stay fast the runs use a slice of the bundled MNIST (1,600 training and 400 test images)
written to a temporary folder, small batches and --max-steps."""
import gzip
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")
import ember  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "data" / "mnist"


def _write_idx_slice(source, target, count):
    """The first `count` items of a bundled IDX file, header adjusted, as a plain IDX file."""
    data = gzip.decompress(source.read_bytes())
    ndim = data[3]
    item = int(np.prod(np.frombuffer(data, ">u4", ndim, 4)[1:]))
    header = bytearray(data[:4 + 4 * ndim])
    header[4:8] = count.to_bytes(4, "big")
    target.write_bytes(bytes(header) + data[len(header):len(header) + count * item])


@pytest.fixture(scope="module")
def small_mnist(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mnist")
    for prefix, count in (("train", 1600), ("t10k", 400)):
        for kind in ("images-idx3", "labels-idx1"):
            name = f"{prefix}-{kind}-ubyte"
            _write_idx_slice(BUNDLED / f"{name}.gz", folder / name, count)
    return folder


def run(*args, expect_ok=True):
    # One BLAS/OpenMP thread: on a shared, loaded machine spinning pool threads only slow it down.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "mnist.py"), *map(str, args)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    if expect_ok:
        assert out.returncode == 0, out.stderr[-3000:]
    return out


def accuracy(stdout):
    return [int(a) / int(b) for a, b in re.findall(r"Accuracy: (\d+)/(\d+)", stdout)]


@pytest.fixture(scope="module")
def trained(small_mnist, tmp_path_factory):
    """One epoch of 100 steps of 16 images on ember, with a checkpoint and a plot."""
    folder = tmp_path_factory.mktemp("run")
    out = run("--data-dir", small_mnist, "--batch-size", 16, "--test-batch-size", 200,
              "--max-steps", 100, "--save-model", folder / "ckpt.pt", "--plot", folder / "curves.png")
    return out, folder


def test_trains_and_writes_checkpoint_and_plot(trained):
    out, folder = trained
    assert "mnist on ember" in out.stdout and "epoch 1" in out.stderr  # the tqdm bar
    checkpoint = ember.load(folder / "ckpt.pt")
    losses = checkpoint["history"]["train_loss"]
    assert len(losses) == len(checkpoint["history"]["train_accuracy"]) == 100 and checkpoint["epoch"] == 1
    assert np.mean(losses[-20:]) < 0.5 * np.mean(losses[:10])
    assert accuracy(out.stdout) == [checkpoint["history"]["test_accuracy"][0]]
    assert accuracy(out.stdout)[0] > 0.7
    png = (folder / "curves.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10000


def test_checkpoint_loads_in_torch(trained, monkeypatch):
    _, folder = trained
    theirs = torch.load(folder / "ckpt.pt")  # weights_only=True, torch's default
    ours = ember.load(folder / "ckpt.pt")
    assert set(theirs) == {"model", "optimizer", "scheduler", "epoch", "rng_state", "history"}
    assert list(theirs["model"]) == list(ours["model"]) == [
        "conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
        "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    for key, value in theirs["model"].items():
        assert isinstance(value, torch.Tensor) and value.dtype == torch.float32
        np.testing.assert_array_equal(value.numpy(), ours["model"][key].numpy())
    # the state dicts plug into the script's own Net, optimizer and scheduler built on torch
    module = _import_example(monkeypatch, "--torch")
    assert module.torch is torch
    model = module.Net()
    model.load_state_dict(theirs["model"])
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    optimizer.load_state_dict(theirs["optimizer"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    scheduler.load_state_dict(theirs["scheduler"])
    assert scheduler.get_last_lr() == [pytest.approx(0.7)]
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.7)
    assert theirs["rng_state"].dtype == torch.uint8


def _import_example(monkeypatch, *argv):
    """examples/mnist.py as a module; it picks torch or ember from sys.argv when imported."""
    monkeypatch.setattr(sys, "argv", ["mnist.py", *argv])
    spec = importlib.util.spec_from_file_location("mnist_example", ROOT / "examples" / "mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_resume_continues(trained, small_mnist, tmp_path):
    _, folder = trained
    out = run("--data-dir", small_mnist, "--batch-size", 16, "--test-batch-size", 200, "--max-steps", 20,
              "--epochs", 2, "--resume", folder / "ckpt.pt", "--save-model", tmp_path / "ckpt2.pt")
    assert "Resumed from" in out.stdout and "after epoch 1" in out.stdout
    assert "epoch 2" in out.stderr and "epoch 1:" not in out.stderr
    before, after = ember.load(folder / "ckpt.pt"), ember.load(tmp_path / "ckpt2.pt")
    assert after["epoch"] == 2
    assert after["history"]["train_loss"][:100] == before["history"]["train_loss"]
    assert len(after["history"]["train_loss"]) == 120 and len(after["history"]["test_accuracy"]) == 2
    assert after["scheduler"]["last_epoch"] == 2 and after["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.49)


def test_same_first_losses_as_torch(trained, small_mnist, tmp_path):
    """Same seed, so the same initial weights, shuffle order and dropout masks: the first
    losses under --torch are ember's, up to float rounding."""
    _, folder = trained
    out = run("--data-dir", small_mnist, "--batch-size", 16, "--test-batch-size", 200,
              "--max-steps", 5, "--save-model", tmp_path / "torch.pt", "--torch")
    assert "mnist on torch" in out.stdout
    theirs = torch.load(tmp_path / "torch.pt")["history"]["train_loss"]
    ours = ember.load(folder / "ckpt.pt")["history"]["train_loss"][:5]
    np.testing.assert_allclose(ours, theirs, rtol=1e-3)


def test_fashion_mnist_from_user_folder(tmp_path):
    rng = np.random.default_rng(0)
    raw = tmp_path / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for prefix, count in (("train", 32), ("t10k", 8)):
        images = rng.integers(0, 256, (count, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, count, dtype=np.uint8)
        (raw / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(
            bytes([0, 0, 8, 3]) + np.array([count, 28, 28], ">u4").tobytes() + images.tobytes()))
        (raw / f"{prefix}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(
            bytes([0, 0, 8, 1]) + np.array([count], ">u4").tobytes() + labels.tobytes()))
    out = run("--dataset", "fashion-mnist", "--data-dir", tmp_path, "--dry-run", "--test-batch-size", 8)
    assert "fashion-mnist on ember" in out.stdout and accuracy(out.stdout)[0] >= 0
    assert re.search(r"Accuracy: \d+/8 ", out.stdout)

    out = run("--dataset", "fashion-mnist", expect_ok=False)
    assert out.returncode == 2 and "--data-dir" in out.stderr
    out = run("--data-dir", tmp_path / "nothing", expect_ok=False)
    assert out.returncode != 0 and "train-images-idx3-ubyte" in out.stderr
