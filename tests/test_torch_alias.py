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
    import torch.autograd.gradcheck  # a submodule named as a function: the function stays
    print(callable(torch.autograd.gradcheck))
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


def test_harness_module_ember_lacks_is_read_from_torchs_source():
    """A `torch.testing._internal` module ember does not write itself runs from the installed
    torch package's file, with `torch` inside it meaning ember; torch itself stays unimported."""
    code = textwrap.dedent('''
        import sys
        import ember.utils._torch_alias as a
        a.install()
        import torch
        import torch.testing._internal.custom_tensor as m
        print(m.torch is torch, torch.__name__, m.__name__, m.__file__.endswith(
            "torch/testing/_internal/custom_tensor.py"))
        import torch.testing._internal.common_utils as cu
        print(type(cu).__name__, cu.__name__)
        for name in ("torch.testing._internal.no_such_harness", "torch.no_such_module"):
            try:
                __import__(name)
            except ModuleNotFoundError as e:
                print(e.name)
        ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    lines = out.stdout.splitlines()
    assert lines[0] == "True ember torch.testing._internal.custom_tensor True", out.stderr
    # ember's own harness modules are still ember's (not re-read from torch)
    assert lines[1] == "module ember.testing._internal.common_utils"
    assert lines[2:] == ["torch.testing._internal.no_such_harness", "torch.no_such_module"]


def test_module_db_names_tests_as_under_torch():
    """PyTorch's common_modules names its ModuleInfo tests from torch.nn.modules.__name__
    (`test_forward_nn_Linear_cpu_float32`); run on ember it gives the same names."""
    code = "import torch\nfrom torch.testing._internal.common_modules import module_db\n" \
           "print(sorted(m.formatted_name for m in module_db), torch.nn.modules.__name__)"
    ours = subprocess.run([sys.executable, "-m", "ember", "-c", code], capture_output=True,
                          text=True, timeout=300)
    theirs = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    names, own = ours.stdout.rsplit(" ", 1)
    assert own.strip() == "ember.nn.modules", ours.stderr[-2000:]   # ember's name is back
    assert names == theirs.stdout.rsplit(" ", 1)[0] and "nn_Linear" in names


def test_new_interpreters_started_under_the_alias_get_it_too(tmp_path):
    # a subprocess of sys.executable and pytest-xdist's workers are new interpreters: without
    # the alias handed down they would import the real torch and test it instead of ember
    child = ("import subprocess, sys\n"
             "code = 'import torchvision, torch, torch.nn.functional as F; "
             "print(torch.__name__, torchvision.__name__, F.__name__)'\n"
             "print(subprocess.run([sys.executable, '-c', code], capture_output=True, "
             "text=True).stdout.strip())")
    out = subprocess.run([sys.executable, "-m", "ember", "-c", child], capture_output=True,
                         text=True, timeout=300)
    assert out.stdout.strip() == "ember ember.vision ember.nn.functional", out.stderr
    pytest.importorskip("xdist")
    (tmp_path / "test_which.py").write_text(
        "import torch\n\ndef test_which():\n    assert torch.__name__ == 'ember', torch.__file__\n")
    out = subprocess.run([sys.executable, "-m", "ember", "-m", "pytest", "-q", "-n", "2",
                          "-p", "no:cacheprovider", str(tmp_path / "test_which.py")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout + out.stderr
