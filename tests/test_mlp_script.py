"""The acceptance test: an ordinary PyTorch training script, unchanged, under `import ember as
torch`, reaches the same losses as under PyTorch from the same seed (the initial weights and
the data are the same because ember's generator reproduces PyTorch's random streams)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def train(lib, steps=60):
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 5))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    x = lib.randn(256, 20)
    y = (x[:, :5] * lib.arange(1, 6)).argmax(dim=1)
    losses = []
    for step in range(steps):
        idx = lib.randperm(256)[:32]
        opt.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with lib.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    return losses, acc, [p.detach().numpy().copy() for p in model.parameters()]


def test_same_losses_and_weights_as_torch():
    ours, acc_e, w_e = train(ember)
    theirs, acc_t, w_t = train(torch)
    assert ours == pytest.approx(theirs, rel=1e-4, abs=1e-5)
    assert acc_e == pytest.approx(acc_t, abs=1e-6)
    for a, b in zip(w_e, w_t):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert abs(a - b).max() < 1e-4
    assert ours[-1] < ours[0] * 0.5  # it really trained


def _run(*args):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "mlp.py"), *args],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return [float(v) for v in re.findall(r"(?:loss|accuracy)\s+([0-9.]+)", out.stdout)]


def test_example_script_prints_what_torch_prints():
    ours = _run()
    theirs = _run("--torch")
    assert len(ours) == len(theirs) > 3
    assert ours == pytest.approx(theirs, abs=2e-3)
