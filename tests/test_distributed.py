"""ember.distributed and nn.parallel in one process: what needs no MPI (errors before
init_process_group, names, the launcher's command line and failure report, DDP's bucket
assignment) and DataParallel, whose replicas run in threads. The multi-rank behaviour is in
test_distributed_multirank.py; MPI is never initialised in this (pytest) process."""
import json
import os
import warnings
from collections import namedtuple

import numpy as np
import pytest

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.distributed import run as launcher
from ember.distributed import worker
from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
from ember.nn.parallel import (DataParallel, DistributedDataParallel, data_parallel, gather,
                               parallel_apply, replicate, scatter)
from ember.nn.parallel.reducer import compute_bucket_assignment_by_size

NOT_INIT = "Default process group has not been initialized, please make sure to call " \
           "init_process_group."


# ---- before init_process_group ----------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: dist.get_rank(), lambda: dist.get_world_size(), lambda: dist.barrier(),
    lambda: dist.all_reduce(ember.ones(2)), lambda: dist.broadcast(ember.ones(2), src=0),
    lambda: dist.new_group([0]), lambda: dist.all_gather_object([None], 1),
    lambda: DistributedDataParallel(nn.Linear(2, 2)),
    lambda: ember.utils.data.DistributedSampler(list(range(4))),
])
def test_before_init_raises_pytorchs_error(call):
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        call()


def test_state_queries_before_init():
    assert dist.is_available() and dist.is_mpi_available() and dist.is_gloo_available()
    assert not dist.is_initialized() and not dist.is_nccl_available()
    assert dist.group.WORLD is None and dist.GroupMember.NON_GROUP_MEMBER == -100
    assert dist.get_rank(dist.GroupMember.NON_GROUP_MEMBER) == -1
    assert dist.default_pg_timeout.total_seconds() == 1800
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        dist.destroy_process_group()


def test_torch_alias_namespace():
    torch = pytest.importorskip("torch")
    assert ember.distributed.ReduceOp.SUM == torch.distributed.ReduceOp.SUM == 0
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        assert int(getattr(dist.ReduceOp, name)) == int(getattr(torch.distributed.ReduceOp,
                                                                name))
    for name in ("init_process_group", "all_reduce", "all_gather_into_tensor",
                 "reduce_scatter_tensor", "all_to_all_single", "broadcast_object_list",
                 "batch_isend_irecv", "monitored_barrier", "get_node_local_rank"):
        assert callable(getattr(dist, name))
    assert ember.nn.SyncBatchNorm and ember.nn.DataParallel is DataParallel
    assert ember.nn.parallel.DistributedDataParallel is DistributedDataParallel


def test_backend_names():
    assert dist.Backend("GLOO") == "gloo" == dist.Backend.GLOO
    assert dist.Backend("cpu:gloo,cuda:nccl") == "cpu:gloo,cuda:nccl"
    from ember.distributed.process_group import _engine_name
    assert _engine_name(None) == _engine_name("gloo") == "gloo"
    assert _engine_name("mpi") == "mpi" and _engine_name("cpu:gloo,cuda:nccl") == "gloo"
    with pytest.raises(RuntimeError, match="no NCCL backend"):
        _engine_name("nccl")
    with pytest.raises(ValueError, match="Invalid backend"):
        _engine_name("carrier-pigeon")


def test_init_checks_its_arguments_before_starting_mpi():
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("gloo", timeout=30)
    with pytest.raises(ValueError, match="Cannot specify both init_method and store"):
        dist.init_process_group("gloo", init_method="env://", store=object())
    with pytest.raises(RuntimeError, match="No rendezvous handler for foo://"):
        dist.init_process_group("gloo", init_method="foo://x")
    assert not dist.is_initialized()


def test_rendezvous_settings_from_url_and_environment(monkeypatch):
    from ember.distributed.process_group import _expected_rank_and_size
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert _expected_rank_and_size(None, -1, -1) == (None, None)
    assert _expected_rank_and_size("tcp://10.0.0.1:23456?rank=1&world_size=4", -1, -1) == (1, 4)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert _expected_rank_and_size("env://", -1, -1) == (2, 3)
    assert _expected_rank_and_size(None, 5, 0) == (0, 5)


def test_node_local_rank(monkeypatch):
    for name in ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    monkeypatch.setenv("MPI_LOCALRANKID", "1")
    assert dist.get_node_local_rank() == 1
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert dist.get_node_local_rank() == 0


# ---- the launcher --------------------------------------------------------------------

def test_launcher_accepts_torchruns_options():
    args = launcher.parse_args(["--nproc_per_node=3", "--master-port", "1234", "--standalone",
                                "--rdzv-backend=c10d", "train.py", "--lr", "0.1"])
    assert (args.nproc_per_node, args.master_port, args.standalone) == ("3", 1234, True)
    assert args.training_script == "train.py" and args.training_script_args == ["--lr", "0.1"]
    command = launcher.build_command(args, 3)
    assert command[1:3] == ["-n", "3"] and os.path.basename(command[0]).startswith("mpi")
    assert command[-4:] == ["ember.distributed.worker", "train.py", "--lr", "0.1"]
    assert launcher._nproc("cpu") == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="one node"):
        launcher._single_node("2")
    with pytest.raises(ValueError, match="Unsupported nproc_per_node"):
        launcher._nproc("many")


def test_launcher_environment(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    args = launcher.parse_args(["--nproc-per-node", "2", "x.py"])
    env = launcher.worker_environment(args, 2, "/tmp/run")
    assert env["WORLD_SIZE"] == env["LOCAL_WORLD_SIZE"] == "2"
    assert env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "29500"
    assert env["OMP_NUM_THREADS"] == "1" and env["EMBER_RUN_DIR"] == "/tmp/run"


def test_mpiexec_is_found():
    pytest.importorskip("mpi4py")
    from ember.distributed import _mpi
    path = _mpi.find_mpiexec()
    assert os.access(path, os.X_OK)


def test_worker_reads_the_mpi_launchers_environment(monkeypatch):
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_SIZE",
                 "SLURM_NTASKS", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"):
        monkeypatch.delenv(name, raising=False)
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "ROLE_RANK"):   # restored afterwards
        monkeypatch.setenv(name, "-1")
    monkeypatch.setenv("PMI_RANK", "3")
    monkeypatch.setenv("PMI_SIZE", "4")
    monkeypatch.setenv("MPI_LOCALRANKID", "1")
    assert worker._export_rank_environment() == (3, 1, 4)
    assert (os.environ["RANK"], os.environ["LOCAL_RANK"], os.environ["WORLD_SIZE"]) == \
        ("3", "1", "4")


def test_failure_report_names_the_first_failed_rank(tmp_path):
    records = {
        0: {"rank": 0, "local_rank": 0, "pid": 100, "host": "h"},
        1: {"rank": 1, "local_rank": 1, "pid": 101, "host": "h", "time": 2.0,
            "error": "ValueError: late", "traceback": "Traceback ...\nValueError: late"},
        2: {"rank": 2, "local_rank": 2, "pid": 102, "host": "h", "time": 1.0,
            "error": "KeyError: 'x'", "traceback": ""},
    }
    for r in records.values():
        (tmp_path / f"rank_{r['rank']}.json").write_text(json.dumps(r))
    report = launcher.failure_report("train.py", launcher.read_records(tmp_path), {}, 1)
    root = report[report.index("Root Cause"):report.index("Other failures")]
    assert "rank      : 2 (local_rank: 2)" in root and "KeyError" in root
    assert "rank 1 (pid 101): ValueError: late" in report
    killed = launcher.failure_report("train.py", {0: records[0]}, {"pid": 100, "exitcode": 9},
                                     9)
    assert "rank      : 0" in killed and "signal 9: SIGKILL" in killed


# ---- DDP's buckets ----------------------------------------------------------------------

def test_buckets_fill_in_reverse_order_of_registration():
    params = [ember.zeros(n) for n in (100, 50, 300, 10, 200)]      # float32: 4 bytes each
    # first bucket capped at 400 bytes, the others at 1000
    assert compute_bucket_assignment_by_size(params, [400, 1000]) == [[4], [3, 2], [1, 0]]
    assert compute_bucket_assignment_by_size(params, [10 ** 6]) == [[4, 3, 2, 1, 0]]
    mixed = [ember.zeros(10), ember.zeros(10, dtype=ember.float64), ember.zeros(10)]
    assert compute_bucket_assignment_by_size(mixed, [10 ** 6]) == [[2, 0], [1]]


def test_consume_prefix_in_state_dict():
    sd = DataParallel(nn.Linear(2, 3)).state_dict()
    assert list(sd) == ["module.weight", "module.bias"]
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == ["weight", "bias"]
    nn.Linear(2, 3).load_state_dict(sd)


# ---- SyncBatchNorm without a process group ----------------------------------------------

def test_syncbn_is_batchnorm_without_a_process_group():
    ember.manual_seed(0)
    x = ember.randn(6, 3, 4, 4, requires_grad=True)
    sync, plain = nn.SyncBatchNorm(3), nn.BatchNorm2d(3)
    y1, y2 = sync(x), plain(x)
    assert ember.allclose(y1, y2)
    assert ember.allclose(sync.running_mean, plain.running_mean)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        sync(ember.ones(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(ember.ones(2, 0))


def test_convert_sync_batchnorm_keeps_parameters_and_buffers():
    net = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2),
                        nn.Sequential(nn.BatchNorm1d(4, momentum=None)))
    net[1].running_mean.fill_(3.0)
    net.eval()
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert isinstance(converted[2][0], nn.SyncBatchNorm) and converted[2][0].momentum is None
    assert converted[1].weight is net[1].weight
    assert converted[1].running_mean is net[1].running_mean
    assert not converted[1].training
    assert repr(converted[1]).startswith("SyncBatchNorm(2, eps=1e-05")


# ---- DataParallel -----------------------------------------------------------------------

def test_dataparallel_on_a_cpu_host_wraps_and_calls_the_module():
    model = nn.Linear(3, 2)
    for device_ids in (None, [0, 1]):      # GPU indices: none here, as on PyTorch CPU hosts
        dp = DataParallel(model, device_ids=device_ids)
        assert dp.device_ids == []
        x = ember.randn(4, 3)
        assert ember.equal(dp(x), model(x))


def mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))


@pytest.mark.parametrize("n, batch", [(2, 8), (3, 7), (4, 3)])
def test_dataparallel_replicas_equal_the_plain_module(n, batch):
    """Scatter -> replicate -> threads -> gather gives the module's outputs and gradients
    (batch 3 on 4 devices uses 3 replicas, as in PyTorch)."""
    model = mlp()
    dp = DataParallel(model, device_ids=["cpu"] * n)
    assert len(dp.device_ids) == n
    x = ember.randn(batch, 5, requires_grad=True)
    out = dp(x)
    out.pow(2).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    x_grad = x.grad.clone()
    model.zero_grad()
    x.grad = None
    ref = model(x)
    ref.pow(2).sum().backward()
    assert ember.allclose(out, ref, atol=1e-6)
    assert ember.allclose(x_grad, x.grad, atol=1e-6)
    for g, p in zip(grads, model.parameters()):
        assert ember.allclose(g, p.grad, atol=1e-5)


def test_dataparallel_matches_torch():
    torch = pytest.importorskip("torch")
    model = mlp()
    ref = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    ref.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                         for k, v in model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((9, 5)).astype(np.float32)
    out = DataParallel(model, device_ids=["cpu", "cpu", "cpu"])(ember.from_numpy(x))
    out.sum().backward()
    expected = ref(torch.from_numpy(x))
    expected.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-6)
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_dataparallel_batchnorm_running_stats_follow_replica_0():
    ember.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    x = ember.randn(8, 3) * 2 + 1
    DataParallel(bn, device_ids=["cpu", "cpu"])(x)
    expected = 0.9 * ember.zeros(3) + 0.1 * x[:4].mean(0)
    assert ember.allclose(bn.running_mean, expected, atol=1e-6)


def test_dataparallel_kwargs_and_structured_outputs():
    class Two(nn.Module):
        def forward(self, x, scale=1.0, extra=None):
            return {"y": x * scale, "pair": (x.sum(), extra)}
    dp = DataParallel(Two(), device_ids=["cpu", "cpu"])
    x = ember.arange(8.).reshape(4, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = dp(x, scale=2.0, extra=None)
    assert ember.equal(out["y"], x * 2)
    assert ember.equal(out["pair"][0], ember.stack([x[:2].sum(), x[2:].sum()]))
    assert out["pair"][1] is None
    assert any("all input tensors were scalars" in str(w.message) for w in caught)


def test_functional_data_parallel_and_pieces():
    model = mlp()
    x = ember.randn(6, 5)
    assert ember.allclose(data_parallel(model, x, device_ids=["cpu", "cpu"]), model(x),
                          atol=1e-6)
    with pytest.raises(RuntimeError, match="no devices"):
        data_parallel(model, x)
    Point = namedtuple("Point", "a b")
    parts = scatter((x, Point(x, 3), {"k": x}), ["cpu"] * 3)
    assert len(parts) == 3 and ember.equal(parts[1][0], x[2:4])
    assert parts[2][1].b == 3 and ember.equal(parts[0][2]["k"], x[:2])
    assert ember.equal(gather([p[0] for p in parts], "cpu"), x)
    replicas = replicate(model, ["cpu", "cpu"])
    assert len(replicas) == 2 and list(replicas[0].parameters()) == []
    assert not replicas[0][0].weight.is_leaf and replicas[0][0].weight.requires_grad
    detached = replicate(model, ["cpu"], detach=True)
    assert not detached[0][0].weight.requires_grad
    outs = parallel_apply(replicas, [(x[:3],), (x[3:],)])
    assert ember.allclose(ember.cat(outs), model(x), atol=1e-6)


def test_parallel_apply_reraises_naming_the_replica():
    class Fails(nn.Module):
        def forward(self, x):
            if x.shape[0] < 3:
                raise ValueError("too small")
            return x
    with pytest.raises(ValueError, match="Caught ValueError in replica 1 on device cpu"):
        DataParallel(Fails(), device_ids=["cpu", "cpu"])(ember.ones(5, 1))
