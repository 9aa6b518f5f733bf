"""ember.distributed with several ranks: the programs in tests/distributed_programs run under
`mpiexec -n N` (or `python -m ember.distributed.run`), each launch with a hard timeout.

- collectives.py checks every collective against NumPy on 2 and 3 ranks;
- ddp.py trains with DistributedDataParallel; here its final weights are compared with
  single-process training on the combined batch (ddp_setup.reference);
- syncbn.py runs SyncBatchNorm; here its outputs, gradients and running statistics are
  compared with torch's BatchNorm on the combined batch;
- failures.py makes rank 1 raise, die, leave or hang: the job must end, naming rank 1;
- show_env.py reports what the launcher gave each rank;
- torch_ddp_program.py, a plain PyTorch DDP program, prints under ember (launcher + torch
  alias) what it prints under torchrun and PyTorch;
- examples/ddp_mnist.py is run through the launcher with --check.
"""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py")

from ember.distributed import _mpi  # noqa: E402

try:
    MPIEXEC = _mpi.find_mpiexec()
except FileNotFoundError:
    pytest.skip("mpiexec not found (pip install mpich)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "distributed_programs"
sys.path.insert(0, str(PROGRAMS))
import ddp_setup  # noqa: E402


LAUNCHER_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                      "ROLE_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")


def env():
    """This environment, minus what a launcher would set, plus ember on the path."""
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    clean = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    return dict(clean, PYTHONPATH=os.pathsep.join(paths), OMP_NUM_THREADS="1")


def run(command, timeout=120):
    """Run `command`; a job that outlives `timeout` seconds is a failure (never a hang)."""
    start = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=env(), cwd=PROGRAMS)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(map(str, command))} did not end within {timeout} s:\n"
                    f"{e.stdout}\n{e.stderr}")
    proc.elapsed = time.monotonic() - start
    return proc


def mpiexec(n, program, *args, timeout=120):
    return run([MPIEXEC, "-n", str(n), sys.executable, str(PROGRAMS / program), *map(str, args)],
               timeout)


def launcher(n, program, *args, timeout=120, options=()):
    return run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(n),
                *options, str(program), *map(str, args)], timeout)


def json_objects(text):
    """The JSON objects printed in `text` (the ranks' lines may run together)."""
    decoder, objects, i = json.JSONDecoder(), [], text.find("{")
    while i != -1:
        obj, end = decoder.raw_decode(text, i)
        objects.append(obj)
        i = text.find("{", end)
    return objects


def assert_ok(proc, n):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(n):
        assert f"rank {r} ok" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("world", [2, 3])
def test_collectives_against_numpy(world):
    assert_ok(mpiexec(world, "collectives.py"), world)


@pytest.fixture(scope="module")
def ddp_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    assert_ok(mpiexec(2, "ddp.py", out), 2)
    return out


@pytest.mark.parametrize("scenario", ["plain", "no_sync", "unused", "bucket_view", "join"])
def test_ddp_equals_single_process_on_combined_batch(ddp_results, scenario):
    """2 ranks x batch 8 train like one process with batch 16 (no_sync: accumulation over
    two micro-batches; unused: a branch only rank 0 uses on some steps and a layer nobody
    uses; bucket_view: gradient_as_bucket_view + static_graph; join: rank 1 has one batch
    more than rank 0)."""
    want = {k: v.numpy() for k, v in ddp_setup.reference(scenario, 2).state_dict().items()}
    ranks = [np.load(ddp_results / f"{scenario}_rank{r}.npz") for r in range(2)]
    for got in ranks:
        assert set(got.files) == set(want)
        for key, value in want.items():
            rel = np.abs(got[key] - value).max() / max(np.abs(value).max(), 1e-12)
            assert rel < 1e-6, (scenario, key, rel)
    for key in want:                       # the replicas are identical, not just close
        np.testing.assert_array_equal(ranks[0][key], ranks[1][key])


@pytest.fixture(scope="module")
def syncbn_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("syncbn")
    assert_ok(mpiexec(2, "syncbn.py", out), 2)
    return out


@pytest.mark.parametrize("key", ["1d", "2d", "3d"])
def test_syncbn_equals_torch_batchnorm_on_combined_batch(syncbn_results, key):
    torch = pytest.importorskip("torch")
    import syncbn_setup
    sample = syncbn_setup.SHAPES[key]
    ranks = [np.load(syncbn_results / f"syncbn_{key}_rank{r}.npz") for r in range(2)]
    bn_class = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm2d,
                4: torch.nn.BatchNorm3d}[len(sample)]
    bn = bn_class(sample[0], momentum=0.3).double()
    with torch.no_grad():
        bn.weight.copy_(torch.linspace(0.5, 1.5, sample[0]))
        bn.bias.copy_(torch.linspace(-1, 1, sample[0]))
    for step in range(3):
        x_all, w_all = syncbn_setup.global_data(key, step, 2)
        x = torch.tensor(x_all, requires_grad=True)
        y = bn(x)
        (y * torch.tensor(w_all)).sum().backward()
        np.testing.assert_allclose(np.concatenate([r[f"y{step}"] for r in ranks]),
                                   y.detach().numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.concatenate([r[f"dx{step}"] for r in ranks]),
                                   x.grad.numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(sum(r[f"dw{step}"] for r in ranks), bn.weight.grad.numpy(),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(sum(r[f"db{step}"] for r in ranks), bn.bias.grad.numpy(),
                                   rtol=1e-10, atol=1e-10)
        bn.zero_grad()
    for r in ranks:
        np.testing.assert_allclose(r["running_mean"], bn.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(r["running_var"], bn.running_var.numpy(), rtol=1e-12)
        assert int(r["num_batches_tracked"]) == int(bn.num_batches_tracked)


# ---- a rank that fails ends the job, naming itself -------------------------------------

def test_raising_rank_aborts_the_job_under_mpiexec():
    proc = mpiexec(2, "failures.py", "raise", timeout=60)
    assert proc.returncode != 0
    assert "rank 1 of 2 failed with ValueError: rank one is broken" in proc.stderr
    assert "rank 0 finished" not in proc.stdout


def test_rank_that_exits_early_is_named_by_the_waiting_rank():
    proc = mpiexec(2, "failures.py", "exit", timeout=60)
    assert proc.returncode != 0
    assert "cannot complete: rank 1 has exited" in proc.stderr, proc.stderr
    assert "rank 0 of 2 failed with DistBackendError" in proc.stderr


def test_stuck_rank_times_out():
    proc = mpiexec(2, "failures.py", "stuck", timeout=60)
    assert proc.returncode != 0
    assert "did not complete within the timeout of 0:00:03" in proc.stderr, proc.stderr
    assert proc.elapsed < 30


def test_monitored_barrier_names_the_missing_rank():
    proc = mpiexec(2, "failures.py", "monitored", timeout=60)
    assert proc.returncode != 0
    assert "Rank 1 failed to pass monitoredBarrier in 2000 ms" in proc.stderr, proc.stderr


@pytest.mark.parametrize("mode, error", [
    ("raise", "ValueError: rank one is broken"),
    ("kill", "signal 9: SIGKILL"),
])
def test_launcher_reports_the_failed_rank(mode, error):
    proc = launcher(2, PROGRAMS / "failures.py", mode, timeout=60)
    assert proc.returncode != 0
    report = proc.stderr[proc.stderr.index("Root Cause"):]
    assert re.search(r"rank\s+: 1 \(local_rank: 1\)", report), report
    assert error in report, report
    if mode == "raise":
        assert 'raise ValueError("rank one is broken")' in report      # the traceback


# ---- the launcher --------------------------------------------------------------------

def test_launcher_sets_torchrun_environment():
    proc = launcher(2, PROGRAMS / "show_env.py", "--flag", "value",
                    options=("--master-port", "29511"))
    assert proc.returncode == 0, proc.stderr
    reports = sorted(json_objects(proc.stdout), key=lambda r: r["rank"])
    assert [r["rank"] for r in reports] == [0, 1]
    for r, report in enumerate(reports):
        e = report["env"]
        assert (e["RANK"], e["LOCAL_RANK"], e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"]) == \
            (str(r), str(r), "2", "2")
        assert e["MASTER_PORT"] == "29511" and e["MASTER_ADDR"] == "127.0.0.1"
        assert e["GROUP_RANK"] == "0" and e["ROLE_RANK"] == str(r) and e["OMP_NUM_THREADS"]
        assert report["world"] == 2 and report["local_rank"] == r and report["sum"] == 2.0
        assert report["launched"] and report["argv"] == ["--flag", "value"]
        assert report["name"] == "__main__"


def test_launcher_runs_a_module():
    proc = launcher(2, "show_env", options=("-m",))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('"sum": 2.0') == 2


def test_plain_mpiexec_reads_the_mpi_environment():
    proc = mpiexec(2, "show_env.py")
    assert proc.returncode == 0, proc.stderr
    reports = json_objects(proc.stdout)
    assert sorted(r["rank"] for r in reports) == [0, 1]
    assert all(r["local_rank"] == r["rank"] and not r["launched"] for r in reports)


def test_pytorch_ddp_program_prints_what_torchrun_prints():
    """An ordinary torchrun program (DistributedSampler, DDP with BatchNorm, all_reduce,
    all_gather_object): PyTorch under torchrun and ember under its launcher with the torch
    alias (`-m ember`) print the same lines."""
    pytest.importorskip("torch")
    program = "torch_ddp_program.py"
    theirs = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                  "--nproc-per-node", "2", program], timeout=300)
    ours = launcher(2, "ember", program, options=("-m",), timeout=300)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert "mean loss" in ours.stdout
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()


def test_ddp_mnist_example_equals_one_process_on_the_combined_batch():
    # Three steps: the split batch and the combined one sum each gradient in a different
    # order, a few float32 ulps apart, and once such a difference flips a near-tie of a
    # max-pool window or a ReLU the two runs part for real (measured with one summation
    # order: 5.7e-07 after 3 steps, 5.0e-05 after 4, 2.4e-03 after 6; with another, 1.7e-06
    # after 6). Three steps still carry SyncBatchNorm's statistics and the momentum.
    proc = launcher(2, ROOT / "examples" / "ddp_mnist.py", "--max-steps", "3", "--check",
                    timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = re.search(r"max relative difference (\S+)", proc.stdout)
    assert m, proc.stdout
    assert float(m.group(1)) < 1e-5, proc.stdout
