"""ember.distributed in processes that no mpiexec started: mp.spawn with MASTER_ADDR/PORT,
torchrun's environment variables (one process per rank), init_method tcp:// and file://, and
store=. Each launch runs tests/distributed_programs/spawn_programs.py with a hard timeout; a
rank that dies must surface as an error on the others, never as a hang.

The DDP runs train 2 ranks x batch 8 and must end with the parameters of one process trained on
the batch of 16 (ddp_setup.reference), as the mpiexec runs in test_distributed_multirank.py."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py")

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "distributed_programs"
sys.path.insert(0, str(PROGRAMS))
import ddp_setup  # noqa: E402

LAUNCHER_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                      "MASTER_PORT", "TORCHELASTIC_RUN_ID", "PMI_RANK", "PMI_SIZE", "PMI_FD",
                      "PMI_PORT")
TIMEOUT = 150


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(**extra):
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    clean = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    return dict(clean, PYTHONPATH=os.pathsep.join(paths), OMP_NUM_THREADS="1", **extra)


def start(args, **extra):
    return subprocess.Popen([sys.executable, str(PROGRAMS / "spawn_programs.py"), *map(str, args)],
                            env=env(**extra), cwd=PROGRAMS, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(procs, timeout=TIMEOUT):
    """(returncode, stdout, stderr) of each process; killing them all past `timeout` seconds
    fails the test (a hang is a failure, never a wait)."""
    deadline = time.monotonic() + timeout
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            outs = [q.communicate() for q in procs]
            pytest.fail(f"did not end within {timeout} s: {outs}")
        results.append((p.returncode, out, err))
    return results


def spawn_run(how, out_dir):
    return finish([start([how, out_dir, free_port()])])[0]


def env_run(args, world=2):
    port = free_port()
    procs = [start(args, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)) for r in range(world)]
    return finish(procs)


def assert_equals_single_process(out_dir, how):
    want = {k: v.numpy() for k, v in ddp_setup.reference("plain", 2).state_dict().items()}
    ranks = [np.load(out_dir / f"{how}_rank{r}.npz") for r in range(2)]
    for got in ranks:
        assert set(got.files) == set(want)
        for key, value in want.items():
            rel = np.abs(got[key] - value).max() / max(np.abs(value).max(), 1e-12)
            assert rel < 1e-6, (how, key, rel)
    for key in want:
        np.testing.assert_array_equal(ranks[0][key], ranks[1][key])


def test_ddp_via_mp_spawn(tmp_path):
    code, out, err = spawn_run("spawn", tmp_path)
    assert code == 0, out + err
    assert "rank 0 ok" in out and "rank 1 ok" in out, out + err
    assert_equals_single_process(tmp_path, "spawn")


def test_ddp_via_torchrun_environment(tmp_path):
    results = env_run(["env", tmp_path])
    for rank, (code, out, err) in enumerate(results):
        assert code == 0 and f"rank {rank} ok" in out, out + err
    assert_equals_single_process(tmp_path, "env")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["tcp", "file", "store"])
def test_ddp_via_init_method_or_store(tmp_path, how):
    code, out, err = spawn_run(how, tmp_path)
    assert code == 0, out + err
    assert_equals_single_process(tmp_path, how)


def test_raising_rank_is_raised_by_mp_spawn():
    """Rank 1 raises while rank 0 waits in all_reduce: the parent raises the child's error
    (or rank 0's, which names rank 1), and no process is left behind."""
    start_time = time.monotonic()
    code, out, err = finish([start(["fail", "raise", free_port()])])[0]
    assert code != 0
    assert "ProcessRaisedException" in err, err
    assert ("ValueError: rank one is broken" in err or
            "rank 1 has died" in err), err
    assert "rank 0 finished" not in out
    assert time.monotonic() - start_time < TIMEOUT


def test_killed_rank_surfaces_on_the_other_rank():
    """torchrun-style processes: rank 1 is SIGKILLed; rank 0, waiting in all_reduce, fails
    naming it within seconds (its timeout is 4 s, the error comes from the process manager's
    notice), and ends non-zero."""
    results = env_run(["fail-env", "kill"])
    (code0, out0, err0), (code1, _, _) = results
    assert code1 == -9
    assert code0 != 0
    assert "cannot complete: rank 1 has died: its process ended before MPI_Finalize" in err0, err0
    assert "rank 0 of 2 failed with DistBackendError" in err0, err0


@pytest.mark.slow
def test_stuck_rank_times_out_under_mp_spawn():
    code, out, err = finish([start(["fail", "stuck", free_port()])])[0]
    assert code != 0
    assert "did not complete within the timeout of 0:00:04" in err, err


def test_pytorch_spawn_program_prints_what_pytorch_prints():
    """The program of the brief, unchanged: PyTorch, and ember through `python -m ember`
    (the torch alias reaches the spawned children), print the same lines."""
    pytest.importorskip("torch")
    program = str(PROGRAMS / "torch_spawn_program.py")
    theirs, ours = finish([
        subprocess.Popen([sys.executable, program, str(free_port())], env=env(), cwd=PROGRAMS,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([sys.executable, "-m", "ember", program, str(free_port())],
                         env=env(), cwd=PROGRAMS, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)])
    assert theirs[0] == 0, theirs[2]
    assert ours[0] == 0, ours[2]
    assert "mean loss" in ours[1]
    assert ours[1].splitlines() == theirs[1].splitlines()
    for rank in range(2):          # the children of `python -m ember` ran on ember
        assert f"rank {rank} runs on ember" in ours[2], ours[2]
        assert f"rank {rank} runs on torch" in theirs[2], theirs[2]
