"""Typical PyTorch tutorial / pytorch-examples programs (tests/programs/*.py), run unchanged
under real torch and under `python -m ember`: the printed output must be identical. Plus a
focused regression test for each ember bug the programs revealed."""
import os
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

PROGRAMS = sorted((pathlib.Path(__file__).parent / "programs").glob("*.py"))


def start(path, *prefix):
    env = dict(os.environ, OMP_NUM_THREADS="1")  # torch's thread pool only slows tiny programs
    return subprocess.Popen([sys.executable, *prefix, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=path.parent, env=env)


def output(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return out.splitlines()


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_prints_what_torch_prints(path):
    theirs, ours = start(path), start(path, "-m", "ember")  # side by side
    theirs, ours = output(theirs), output(ours)
    assert theirs, "the program printed nothing"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"line {i + 1} differs:\n ember: {a}\n torch: {b}"
    assert len(ours) == len(theirs)


# --- regressions for the bugs the programs found ---

def test_cuda_module_reports_no_device():
    # blitz_tour: `if torch.cuda.is_available(): ...` raised AttributeError
    assert ember.cuda.is_available() is torch.cuda.is_available() is False
    assert ember.cuda.device_count() == torch.cuda.device_count() == 0
    ember.cuda.manual_seed(0), ember.cuda.manual_seed_all(0)
    torch.cuda.manual_seed(0), torch.cuda.manual_seed_all(0)
    assert ember.cuda.is_initialized() == torch.cuda.is_initialized()
    for name in ("current_device", "synchronize"):
        with pytest.raises(AssertionError) as theirs:
            getattr(torch.cuda, name)()
        with pytest.raises(AssertionError) as ours:
            getattr(ember.cuda, name)()
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("loss", ["cross_entropy", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_fused_loss_grad_fn_names(loss):
    # blitz_tour printed <_BinaryCrossEntropyWithLogitsBackward ...> for the loss's grad_fn
    names = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        x = lib.randn(3, 4, requires_grad=True)
        if loss == "cross_entropy":
            args = (x, lib.tensor([0, 1, 2]))
        elif loss == "binary_cross_entropy":
            args = (x.sigmoid(), lib.rand(3, 4))
        else:
            args = (x, lib.rand(3, 4))
        g = getattr(lib.nn.functional, loss)(*args).grad_fn
        names.append((type(g).__name__, g.name()))
    assert names[0] == names[1]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid_matches_bit_for_bit(align_corners, dtype):
    # mnist_stn: the grid of an identity theta was off in the last bit (base coordinates made
    # in float64), so sample points crossed pixel boundaries and grid_sample's theta gradient
    # jumped. The base grid must be PyTorch's, bit for bit.
    theta = torch.eye(2, 3, dtype=getattr(torch, dtype)).unsqueeze(0)
    theirs = torch.nn.functional.affine_grid(theta, (1, 1, 28, 13),
                                             align_corners=align_corners)
    ours = ember.nn.functional.affine_grid(ember.from_numpy(theta.numpy()), (1, 1, 28, 13),
                                           align_corners=align_corners)
    assert str(ours.dtype) == str(theirs.dtype)
    assert (ours.numpy() == theirs.numpy()).all()


def test_backends_and_accelerator_queries():
    # the device-selection preamble of pytorch/examples (mnist: torch.accelerator, older
    # versions: torch.backends.mps / cudnn.benchmark) failed with AttributeError
    for name in ("is_available", "current_accelerator", "device_count"):
        assert getattr(ember.accelerator, name)() == getattr(torch.accelerator, name)()
    assert ember.backends.mps.is_available() == torch.backends.mps.is_available()
    assert ember.backends.mps.is_built() == torch.backends.mps.is_built()
    assert ember.backends.cudnn.is_available() == torch.backends.cudnn.is_available()
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(ember.backends.cudnn, flag) == getattr(torch.backends.cudnn, flag)


@pytest.mark.parametrize("op", ["max", "sort", "topk", "aminmax"])
def test_return_types_repr(op):
    # blitz_tour: printing `x.max(dim=0)` gave `max(values=..., indices=...)` on one line
    args = {"max": (0,), "sort": (), "topk": (2,), "aminmax": ()}[op]
    x = torch.tensor([[3., 1., 2.], [0., 5., 4.]])
    theirs = getattr(x, op)(*args)
    ours = getattr(ember.tensor(x.tolist()), op)(*args)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert type(ours).__name__ == type(theirs).__name__


def test_float32_matmul_precision():
    # the "speed up float32 matmuls" line many recent tutorials start with
    saved = torch.get_float32_matmul_precision()
    try:
        for lib in (torch, ember):
            assert lib.get_float32_matmul_precision() == "highest"
            lib.set_float32_matmul_precision("high")
            assert lib.get_float32_matmul_precision() == "high"
            with pytest.warns(UserWarning, match="is not one of"):
                lib.set_float32_matmul_precision("bogus")
            assert lib.get_float32_matmul_precision() == "high"
            with pytest.raises(RuntimeError, match="expects a str"):
                lib.set_float32_matmul_precision(3)
            lib.set_float32_matmul_precision("highest")
    finally:
        torch.set_float32_matmul_precision(saved)
