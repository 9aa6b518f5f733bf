"""`python -m ember script.py` runs a PyTorch script unchanged -- including `from torch import
nn`, `import torch.nn.functional as F` and `from torch.utils.data import DataLoader`, which
`import ember as torch` alone cannot redirect -- and prints what PyTorch prints."""
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

SCRIPT = textwrap.dedent('''
    import torch
    from torch import nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset
    from torch.autograd.gradcheck import GradcheckError  # the function stays the package's

    torch.manual_seed(0)
    X = torch.randn(256, 10)
    Y = (X.sum(1) > 0).long()
    loader = DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 32)
            self.fc2 = nn.Linear(32, 2)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, 0.5)
    for epoch in range(2):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(net(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
        sched.step()
        print(epoch, round(total, 3))
    print(torch.__name__)
    print(net)
    print(callable(torch.autograd.gradcheck), issubclass(GradcheckError, RuntimeError))
''')


def run(tmp_path, *prefix):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    out = subprocess.run([sys.executable, *prefix, str(path)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_unchanged_script_matches_torch(tmp_path):
    ours = run(tmp_path, "-m", "ember")
    theirs = run(tmp_path)
    assert (ours[2], theirs[2]) == ("ember", "torch")
    assert ours[:2] == theirs[:2]  # the losses, to three decimals
    assert ours[3:] == theirs[3:]  # the module repr


def test_install_refuses_when_real_torch_is_loaded():
    code = "import torch, ember.utils._torch_alias as a\ntry:\n    a.install()\nexcept RuntimeError " \
           "as e:\n    print('refused')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "refused", out.stderr
