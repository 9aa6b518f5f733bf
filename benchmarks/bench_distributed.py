"""DistributedDataParallel on ResNet-18 (CIFAR-10 variant, ~11.2 M parameters), over MPI.

    python benchmarks/bench_distributed.py [--steps N] [--batch B]

A standalone script (run.py's side-by-side runner times one process; this needs several):
it starts the 2-rank part itself through mpiexec and prints

1. the training step time of DDP with 2 ranks x 1 thread (batch B per rank) against one
   process with 2 intra-op threads on the combined batch 2B (same work, same 2 cores), and
   one process with 1 thread for reference;
2. the time ember's bucketed all-reduce of all the gradients takes (the reducer's whole
   path: copy into buckets, one all_reduce per bucket, write back), against mpi4py's raw
   Allreduce of a single buffer of the same size (target: within 1.2x), and ember's
   dist.all_reduce of that single buffer;
3. the overlap: of the all-reduce time during DDP's backward, how much ran while backward
   was still computing gradients (from DDP's own logging data and timeline).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def resnet_and_batch(ember, batch, seed=0):
    sys.path.insert(0, str(HERE))
    from bench_resnet import resnet18
    ember.manual_seed(seed)
    model = resnet18(ember)
    x = ember.randn(batch, 3, 32, 32)
    y = ember.randint(0, 10, (batch,))
    return model, x, y


def time_steps(model, x, y, steps, ember, after_step=None):
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    times = []
    for i in range(steps + 1):                   # the first step warms up
        start = time.perf_counter()
        opt.zero_grad()
        ember.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if after_step is not None:
            after_step()
        times.append(time.perf_counter() - start)
    return times[1:]


def single_process(args):
    """One process on the combined batch, with --threads intra-op threads."""
    import ember
    ember.set_num_threads(args.threads)
    model, x, y = resnet_and_batch(ember, 2 * args.batch)
    times = time_steps(model, x, y, args.steps, ember)
    print(json.dumps({"step": min(times), "steps": times}))


def best_of_each(variants, repeat, barrier):
    """{name: best time} for `variants` ({name: fn}), timed round-robin so that a change in
    the machine's load hits them all alike; each run starts after a barrier."""
    times = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            barrier()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}


def ranks(args):
    """Each of 2 ranks: DDP training steps, then the all-reduce measurements."""
    import numpy as np
    import ember
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel as DDP
    from mpi4py import MPI
    ember.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    comm = MPI.COMM_WORLD
    model, x, y = resnet_and_batch(ember, args.batch, seed=rank)
    ddp = DDP(model)
    summaries = []
    times = time_steps(ddp, x, y, args.steps, ember,
                       after_step=lambda: summaries.append(ddp.explain().summary()))
    summaries = summaries[1:]
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, summaries)     # perf_counter is one clock on one host
    timeline = str(ddp.explain())

    # the reducer's whole path with every gradient ready: what DDP adds to a raw Allreduce
    def reducer_path(reducer):
        for p in reducer.params:
            p.grad = ember.randn(p.shape)
        order = [i for bucket in reducer.buckets for i in bucket.param_indices]

        def run():
            reducer.prepare_for_backward([])
            for i in order:
                reducer._autograd_hook(i, reducer.params[i])
        return run
    view = DDP(resnet_and_batch(ember, 1, seed=rank)[0], gradient_as_bucket_view=True)
    buckets = [b.flat for b in ddp.reducer.buckets]

    def bucket_allreduces():
        for w in [dist.all_reduce(b, async_op=True) for b in buckets]:
            w.wait()
    numel = sum(p.numel() for p in ddp.reducer.params)
    flat = np.random.rand(numel).astype(np.float32)
    flat_tensor = ember.from_numpy(flat.copy())
    measured = best_of_each({
        "barrier": lambda: None,
        "raw_allreduce": lambda: comm.Allreduce(MPI.IN_PLACE, flat),
        "ember_allreduce_one_buffer": lambda: dist.all_reduce(flat_tensor),
        "ember_bucket_allreduces": bucket_allreduces,
        "ember_reducer": reducer_path(ddp.reducer),
        "ember_reducer_bucket_view": reducer_path(view.reducer),
    }, args.repeat, comm.Barrier)
    results = dict(measured, ddp_step=min(times), ddp_steps=times, numel=numel,
                   buckets=len(ddp.reducer.buckets),
                   bucket_mib=[round(b.nbytes / 2 ** 20, 2) for b in ddp.reducer.buckets],
                   timeline=timeline, summaries=summaries, everyone=everyone)
    if rank == 0:
        print(json.dumps(results))
    dist.destroy_process_group()


def run_json(command, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + paths)
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="timed training steps")
    parser.add_argument("--batch", type=int, default=32, help="batch per rank")
    parser.add_argument("--repeat", type=int, default=10, help="all-reduce repetitions")
    parser.add_argument("--part", choices=["single", "ranks"], help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "single":
        return single_process(args)
    if args.part == "ranks":
        return ranks(args)

    from ember.distributed._mpi import find_mpiexec
    me = [sys.executable, str(pathlib.Path(__file__).resolve()), "--steps", str(args.steps),
          "--batch", str(args.batch), "--repeat", str(args.repeat)]
    single = run_json(me + ["--part", "single", "--threads", "2"], threads=2)
    single1 = run_json(me + ["--part", "single", "--threads", "1"], threads=1)
    multi = run_json([find_mpiexec(), "-n", "2"] + me + ["--part", "ranks"], threads=1)

    barrier = multi["barrier"]
    ms = {k: (multi[k] - barrier) * 1e3 for k in ("raw_allreduce", "ember_allreduce_one_buffer",
                                                  "ember_bucket_allreduces", "ember_reducer",
                                                  "ember_reducer_bucket_view")}
    raw = ms["raw_allreduce"]
    summaries = multi["summaries"]

    def mean(key):
        return sum(s[key] for s in summaries) / len(summaries) * 1e3
    print(f"ResNet-18 (CIFAR), {multi['numel'] / 1e6:.2f} M parameters, "
          f"{multi['buckets']} buckets (MiB: {multi['bucket_mib']})")
    print(f"training step, global batch {2 * args.batch} (best of {args.steps}):")
    print(f"  1 process x 2 threads       {single['step']:.3f} s")
    print(f"  1 process x 1 thread        {single1['step']:.3f} s")
    print(f"  DDP 2 ranks x 1 thread      {multi['ddp_step']:.3f} s   "
          f"(ratio {multi['ddp_step'] / single['step']:.2f})")
    print(f"all-reduce of all gradients ({multi['numel'] * 4 / 2 ** 20:.1f} MiB float32), "
          f"best of {args.repeat}:")
    rows = [("mpi4py Allreduce, one buffer", "raw_allreduce"),
            ("ember dist.all_reduce, one buffer", "ember_allreduce_one_buffer"),
            ("ember, one all_reduce per DDP bucket", "ember_bucket_allreduces"),
            ("ember DDP reducer (copy in, reduce, copy out)", "ember_reducer"),
            ("ember DDP reducer, gradient_as_bucket_view", "ember_reducer_bucket_view")]
    for label, key in rows:
        print(f"  {label:<48} {ms[key]:8.2f} ms   ratio {ms[key] / raw:.2f}")
    in_flight, hidden = mean("all_reduce_in_flight_time"), mean("all_reduce_hidden_time")
    # the exposed communication: from the moment the slower rank has its last gradient to the
    # moment both have the averaged gradients written back (removes the ranks' skew)
    exposed = []
    for step in zip(*multi["everyone"]):
        last = max(s["started_at"] + s["backward_compute_time"] for s in step)
        done = max(s["started_at"] + s["backward_compute_time"] + s["exposed_time"]
                   for s in step)
        exposed.append((done - last) * 1e3)
    exposed = sum(exposed) / len(exposed)
    print(f"overlap in DDP's backward (mean of {len(summaries)} steps): rank 0's bucket "
          f"all-reduces were in flight {in_flight:.1f} ms, {hidden:.1f} ms of it "
          f"({hidden / in_flight:.0%}) before its last gradient was computed (in-flight time "
          f"includes waiting for the other rank)")
    print(f"  after the slower rank's last gradient, the averaged gradients were ready in "
          f"{exposed:.1f} ms; the same reduction after backward takes "
          f"{ms['ember_reducer']:.1f} ms, so {1 - exposed / ms['ember_reducer']:.0%} of it "
          f"was hidden behind backward")
    print("last step's timeline on rank 0:")
    print(multi["timeline"])


if __name__ == "__main__":
    main()
