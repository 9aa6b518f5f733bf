"""`python -m ember.distributed.run`: torchrun's command line, with mpiexec starting the ranks.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3

runs `mpiexec -n 2 python -m ember.distributed.worker train.py --epochs 3`. The worker entry
sets, in each rank, the environment torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, ...)
from what mpiexec told it, then runs the script as `__main__`. So a script written for
torchrun reads its LOCAL_RANK and calls init_process_group as usual.

Torchrun's elastic agent supervises its workers and reports the first failure; here mpiexec
supervises the ranks (and ends them all when one fails, see failure.py) and the launcher
reports: each worker leaves a record in the run directory ($EMBER_RUN_DIR) when it starts
(rank, pid) and when it fails (the exception and traceback), and mpiexec's banner names the
pid of a rank that was killed. After a failed run the launcher prints which rank failed
first and how, and exits with mpiexec's status.

Differences from torchrun: one node (for several, call mpiexec with a host list directly);
no restarts (--max-restarts must be 0); the rendezvous options are accepted and ignored, MPI
does the rendezvous.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from . import _mpi

__all__ = ["main", "get_args_parser", "parse_args", "run"]


def get_args_parser():
    parser = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start N ranks of a training script through mpiexec, with torchrun's "
                    "options and environment variables.")

    def option(*names, **kw):
        # torchrun accepts every option with dashes or underscores
        aliases = []
        for name in names:
            aliases.append(name)
            if name.startswith("--") and "-" in name[2:]:
                aliases.append("--" + name[2:].replace("-", "_"))
        parser.add_argument(*aliases, **kw)

    option("--nnodes", default="1", help="number of nodes (only 1: use mpiexec for more)")
    option("--nproc-per-node", default="1",
           help="ranks to start on this node: a number, or 'cpu'/'auto' (one per core)")
    option("--node-rank", type=int, default=0, help="rank of this node (0)")
    option("--master-addr", default="127.0.0.1", help="exported as MASTER_ADDR")
    option("--master-port", type=int, default=29500, help="exported as MASTER_PORT")
    option("--standalone", action="store_true", help="single-node run (the default here)")
    option("--rdzv-backend", default="static", help="accepted; MPI does the rendezvous")
    option("--rdzv-endpoint", default="", help="accepted; MPI does the rendezvous")
    option("--rdzv-id", default="none", help="exported as TORCHELASTIC_RUN_ID")
    option("--rdzv-conf", default="", help="accepted and ignored")
    option("--max-restarts", type=int, default=0, help="must be 0: no restarts")
    option("--monitor-interval", type=float, default=0.1, help="accepted and ignored")
    option("--start-method", default="spawn", help="accepted; mpiexec starts the ranks")
    option("--role", default="default", help="exported as ROLE_NAME")
    option("-m", "--module", action="store_true",
           help="run the script as a module (python -m)")
    option("--no-python", action="store_true",
           help="run the script as an executable, not with python")
    option("--run-path", action="store_true", help="run the script with runpy.run_path")
    option("--log-dir", default=None, help="keep the ranks' records here")
    option("-r", "--redirects", default="0", help="accepted and ignored")
    option("-t", "--tee", default="0", help="accepted and ignored")
    option("--local-addr", default=None, help="accepted and ignored")
    option("--mpiexec-args", default="",
           help="extra arguments for mpiexec (e.g. \"-bind-to core\")")
    parser.add_argument("training_script", help="the script (or module, or program) to run")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nproc(value):
    if value in ("cpu", "auto", "gpu", "xpu"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"Unsupported nproc_per_node value: {value}") from None
    if n < 1:
        raise ValueError(f"nproc_per_node must be at least 1, got {n}")
    return n


def _single_node(nnodes):
    low, _, high = str(nnodes).partition(":")
    if int(low) != 1 or (high and int(high) != 1):
        raise ValueError(f"ember.distributed.run starts ranks on one node (got --nnodes "
                         f"{nnodes}); for several nodes, start them with mpiexec directly, "
                         "e.g. `mpiexec -hosts node1,node2 -ppn 2 python train.py`")


def worker_environment(args, nproc, run_dir):
    """The environment every rank inherits (the per-rank part is set by the worker entry)."""
    env = dict(os.environ)
    env.update({
        "MASTER_ADDR": args.master_addr,
        "MASTER_PORT": str(args.master_port),
        "WORLD_SIZE": str(nproc),
        "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_RANK": str(args.node_rank),
        "GROUP_WORLD_SIZE": "1",
        "ROLE_NAME": args.role,
        "ROLE_WORLD_SIZE": str(nproc),
        "TORCHELASTIC_RUN_ID": args.rdzv_id,
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": "0",
        "EMBER_RUN_DIR": run_dir,
    })
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        sys.stderr.write("ember.distributed.run: setting OMP_NUM_THREADS=1 for each rank "
                         "(as torchrun does) so the ranks do not oversubscribe the cores; "
                         "set it yourself to change that\n")
        env["OMP_NUM_THREADS"] = "1"
    return env


def build_command(args, nproc):
    command = [_mpi.find_mpiexec(), "-n", str(nproc), *args.mpiexec_args.split(),
               sys.executable, "-m", "ember.distributed.worker"]
    if args.module:
        command.append("--module")
    if args.no_python:
        command.append("--no-python")
    return command + [args.training_script, *args.training_script_args]


_BANNER_PID = re.compile(r"PID (\d+) RUNNING AT")
_BANNER_EXIT = re.compile(r"EXIT CODE: (\d+)")


def _stream(process):
    """Copy mpiexec's stdout through, noting the pid and exit code of its failure banner."""
    banner = {}
    for line in iter(process.stdout.readline, b""):
        sys.stdout.buffer.write(line)
        sys.stdout.flush()
        text = line.decode(errors="replace")
        for key, pattern in (("pid", _BANNER_PID), ("exitcode", _BANNER_EXIT)):
            m = pattern.search(text)
            if m and key not in banner:
                banner[key] = int(m.group(1))
    return banner


def read_records(run_dir):
    """{rank: record} from the workers' start and failure records."""
    records = {}
    for name in sorted(os.listdir(run_dir)):
        if name.startswith("rank_") and name.endswith(".json"):
            with open(os.path.join(run_dir, name)) as f:
                record = json.load(f)
            records[record["rank"]] = record
    return records


def failure_report(script, records, banner, returncode):
    """torchrun's ChildFailedError summary: which rank failed first, and how."""
    failed = sorted((r for r in records.values() if "error" in r), key=lambda r: r["time"])
    if "pid" in banner:
        dead = next((r for r in records.values() if r["pid"] == banner["pid"]), None)
        if dead is not None and not any(r["rank"] == dead["rank"] for r in failed):
            code = banner.get("exitcode")
            how = f"died without an error record; mpiexec reports exit code {code}"
            try:
                how += f" (signal {code}: {signal.Signals(code).name})"
            except (ValueError, TypeError):
                pass
            failed.insert(0, dict(dead, error=how))
    lines = ["=" * 60, f"{script} FAILED", "-" * 60]
    if not failed:
        lines.append(f"mpiexec exited with status {returncode}; no rank left an error record "
                     "(a rank may have failed before its worker entry started)")
        if "pid" in banner:
            lines.append(f"mpiexec reported pid {banner['pid']} (exit code "
                         f"{banner.get('exitcode')})")
        lines.append("=" * 60)
        return "\n".join(lines)
    root = failed[0]
    lines.append("Root Cause (first observed failure):")
    lines.append(f"  rank      : {root['rank']} (local_rank: {root['local_rank']})")
    lines.append(f"  host      : {root['host']}")
    lines.append(f"  pid       : {root['pid']}")
    lines.append(f"  error     : {root['error']}")
    if root.get("traceback"):
        lines.append("  traceback :")
        lines.extend("    " + t for t in root["traceback"].rstrip().splitlines())
    others = failed[1:]
    if others:
        lines.append("Other failures:")
        for r in others:
            lines.append(f"  rank {r['rank']} (pid {r['pid']}): {r['error']}")
    lines.append("=" * 60)
    return "\n".join(lines)


def run(args):
    _single_node(args.nnodes)
    if args.max_restarts:
        raise ValueError("ember.distributed.run does not restart failed ranks; use "
                         "--max-restarts 0")
    nproc = _nproc(args.nproc_per_node)
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
        run_dir = tempfile.mkdtemp(prefix="ember_run_", dir=args.log_dir)
    else:
        run_dir = tempfile.mkdtemp(prefix="ember_run_")
    if args.rdzv_id == "none":
        args.rdzv_id = uuid.uuid4().hex[:12]
    env = worker_environment(args, nproc, run_dir)
    process = subprocess.Popen(build_command(args, nproc), env=env, stdout=subprocess.PIPE)

    def forward(signum, frame):
        process.send_signal(signum)
    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        banner = _stream(process)
        returncode = process.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if returncode != 0:
        time.sleep(0.05)   # a failing rank's record is written before it aborts; be safe
        sys.stderr.write(failure_report(args.training_script, read_records(run_dir), banner,
                                        returncode) + "\n")
    if not args.log_dir:
        for name in os.listdir(run_dir):
            os.remove(os.path.join(run_dir, name))
        os.rmdir(run_dir)
    return returncode


def main(args=None):
    sys.exit(run(parse_args(args)))


if __name__ == "__main__":
    main()
