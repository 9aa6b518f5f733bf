"""The Reducer: DistributedDataParallel's gradient synchronisation (PyTorch's C++
c10d::Reducer, reducer.cpp), overlapping the all-reduce of gradients with backward.

Note [Buckets, readiness and overlap]
-------------------------------------
After backward, every rank must hold the average of all ranks' gradients. All-reducing each
parameter's gradient separately costs one collective per parameter (a ResNet-18 has 62 of
them, most tiny); all-reducing one flat buffer of every gradient after backward costs a
single collective but leaves the network idle during backward and the CPU idle during
communication. DDP does neither: it groups the parameters into *buckets* of about
`bucket_cap_mb` (25 MiB; the first one 1 MiB so that communication starts early), each
bucket one flat buffer with a view per parameter, and all-reduces a bucket as soon as every
gradient in it has been computed — while backward goes on computing the others.

Which gradients come first? Backward visits the graph roughly in reverse order of the
forward pass, and a module registers its parameters roughly in forward order, so the buckets
are filled in *reverse order of registration*: bucket 0 holds the last parameters (the
output layer), whose gradients are ready first. Parameters of different dtypes never share a
bucket.

Readiness. Each parameter gets a post-accumulate-grad hook (it runs once the parameter's
`.grad` holds this backward's gradient). The hook copies the gradient, divided by the world
size, into the parameter's view of its bucket (with `gradient_as_bucket_view`, `.grad`
becomes that view, so later iterations accumulate straight into the bucket and the copy
disappears) and counts the bucket's pending gradients down. When a bucket's count reaches
zero it is *ready*, and its all-reduce (SUM of the pre-divided gradients = the average) is
launched with async_op=True.

Order. MPI, like NCCL, requires every rank to issue the same collectives in the same
order. Gradients may become ready in a slightly different order on different ranks, so a
ready bucket is launched only when all buckets before it have been launched: buckets go out
strictly in index order (`next_bucket`), exactly as PyTorch's reducer does.

Progress. A non-blocking MPI collective moves bytes only while the process calls into MPI.
Every hook therefore also polls the oldest all-reduce still in flight (Work.is_completed,
one MPI_Testall), which drives MPI's progress engine during backward; that, and the time
the peer ranks need to reach the same bucket, is what the overlap hides.

Finalisation. When the last bucket has been launched, backward has produced every gradient
this reducer waits for. PyTorch queues a callback that runs when the autograd engine
finishes; ember's reducer does the same work right there, in the last hook: wait for the
all-reduces, then write each bucket view back into its parameter's `.grad` (nothing to
write with gradient_as_bucket_view). The engine may still have nodes to run that lead to no
parameter, which is harmless.

Unused parameters. A parameter that does not take part in the forward pass never gets a
gradient, its bucket never becomes ready, and every rank waits. With
`find_unused_parameters=True`, the reducer walks the autograd graph from the forward's
outputs once forward ends, and parameters it does not reach are marked ready (as zeros) at
the first hook of backward. A bitmap of the parameters each rank actually used is
all-reduced after the buckets; a parameter no rank used keeps its `.grad` untouched (None
stays None). Without the flag, the next forward finds the reduction unfinished and raises
PyTorch's error naming the parameters that got no gradient.
"""
import functools
import time
import weakref

import ember
from ... import distributed as dist

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25


def compute_bucket_assignment_by_size(params, bucket_size_limits):
    """Parameter indices per bucket: walk the parameters in reverse order of registration,
    a bucket per dtype filling up to its size limit (the first limit for the first bucket of
    each dtype, the last limit for every later one). Buckets come out in the order they are
    expected to become ready."""
    open_buckets = {}
    closed = []
    for i in reversed(range(len(params))):
        p = params[i]
        key = p.dtype
        bucket = open_buckets.setdefault(key, {"indices": [], "bytes": 0, "count": 0})
        bucket["indices"].append(i)
        bucket["bytes"] += p.numel() * p.element_size()
        limit = bucket_size_limits[min(bucket["count"], len(bucket_size_limits) - 1)]
        if bucket["bytes"] >= limit:
            closed.append(bucket["indices"])
            open_buckets[key] = {"indices": [], "bytes": 0, "count": bucket["count"] + 1}
    closed.extend(b["indices"] for b in open_buckets.values() if b["indices"])
    closed.sort(key=lambda indices: -max(indices))
    return closed


class _Bucket:
    """One flat gradient buffer and the parameters that own views of it."""

    def __init__(self, index, param_indices, params):
        self.index = index
        self.param_indices = param_indices
        dtype = params[param_indices[0]].dtype
        self.flat = ember.zeros(sum(params[i].numel() for i in param_indices), dtype=dtype)
        self.views = []
        offset = 0
        for i in param_indices:
            n = params[i].numel()
            self.views.append(self.flat[offset:offset + n].view(params[i].shape))
            offset += n
        self.pending = len(param_indices)
        self.work = None

    @property
    def nbytes(self):
        return self.flat.numel() * self.flat.element_size()


class Reducer:
    """Buckets a module's parameters and all-reduces their gradients during backward (see
    Note [Buckets, readiness and overlap])."""

    def __init__(self, params, names, bucket_indices, process_group, find_unused_parameters,
                 gradient_as_bucket_view, static_graph=False):
        self.params = params
        self.names = names
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.buckets = [_Bucket(b, idx, params) for b, idx in enumerate(bucket_indices)]
        self.locate = {}
        for bucket in self.buckets:
            for k, i in enumerate(bucket.param_indices):
                self.locate[i] = (bucket, k)
        self.expect_hooks = False
        self.require_finalize = False
        self.ready = [False] * len(params)
        self.num_ready = 0
        self.unused = []
        self._static_unused = None
        self.has_marked_unused = False
        self.next_bucket = 0
        self.next_done = 0
        self.div_factor = None
        self._forward_work = None
        self._divide_by_initial_world_size = True
        self.local_used = ember.zeros(len(params), dtype=ember.int32)
        self._used_work = None
        self.timeline = Timeline(self)
        self.stats = {"iterations": 0, "compute": 0.0, "comm": 0.0, "overlap": 0.0}
        # the hooks hold the reducer weakly: a dropped DDP wrapper leaves inert hooks behind,
        # not its buckets
        me = weakref.ref(self)
        self._hooks = [p.register_post_accumulate_grad_hook(functools.partial(_hook, me, i))
                       for i, p in enumerate(params)]

    # ---- iteration boundaries (called by DistributedDataParallel) ---------------------
    def prepare_for_forward(self):
        if self.require_finalize:
            self._raise_unfinished()

    def prepare_for_backward(self, outputs):
        """Forward has ended and backward is expected: reset the buckets' counts, and find
        the parameters the outputs do not depend on (find_unused_parameters)."""
        self.expect_hooks = True
        self.ready = [False] * len(self.params)
        self.num_ready = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.param_indices)
            bucket.work = None
        self.next_bucket = self.next_done = 0
        self.has_marked_unused = False
        self._used_work = None
        self.unused = []
        if self.find_unused_parameters:
            self.unused = self._search_unused(outputs)
            self.local_used.zero_()
        elif self.static_graph:
            if self._static_unused is None:
                self._static_unused = self._search_unused(outputs)
            self.unused = self._static_unused
        self.timeline.start()

    def set_forward_pass_work_handle(self, work, divide_by_initial_world_size):
        """Join: the all-reduce counting the ranks still training; unless dividing by the
        initial world size, gradients are averaged over those ranks only."""
        self._forward_work = work
        self._divide_by_initial_world_size = divide_by_initial_world_size

    def _search_unused(self, outputs):
        """Parameters not reachable from `outputs` in the autograd graph (no recursion)."""
        seen = set()
        reached = set()
        stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
        stack += [t for t in outputs if t.grad_fn is None and t.requires_grad]
        while stack:
            node = stack.pop()
            if isinstance(node, ember.Tensor):
                reached.add(id(node))
                continue
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None:
                reached.add(id(variable))
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
        return [i for i, p in enumerate(self.params) if id(p) not in reached]

    # ---- the hooks ------------------------------------------------------------------
    def _autograd_hook(self, index, param):
        if not self.expect_hooks:
            return
        if self.find_unused_parameters:
            self.local_used[index] = 1
        if not self.has_marked_unused:
            self.has_marked_unused = True
            self.require_finalize = True
            self.timeline.event("first gradient ready", self.names[index])
            for i in self.unused:
                self._mark_ready(i)
        self._mark_ready(index)

    def _mark_ready(self, index):
        if self.ready[index]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. Parameter {self.names[index]} "
                f"(index {index}) has been marked as ready twice. This happens when a "
                "parameter takes part in two backward passes of one iteration (e.g. "
                "retain_graph=True with two losses) or is shared in a way DDP cannot see.")
        self.ready[index] = True
        self.num_ready += 1
        if self.num_ready == len(self.params):
            self.timeline.event("last gradient ready", self.names[index])
        if self.div_factor is None:
            self.div_factor = self._compute_div_factor()
        bucket, k = self.locate[index]
        self._copy_grad_to_bucket(self.params[index], bucket.views[k])
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()
        self._poll()

    def _compute_div_factor(self):
        work = self._forward_work
        if work is not None and not self._divide_by_initial_world_size:
            work.wait()
            return int(work.result()[0].item())
        return dist.get_world_size(self.process_group)

    def _copy_grad_to_bucket(self, param, view):
        grad = param.grad
        if grad is None:
            view.zero_()
        elif grad.data_ptr() == view.data_ptr():
            view.div_(self.div_factor)
        else:
            ember.mul(grad, 1.0 / self.div_factor, out=view)
            if self.gradient_as_bucket_view:
                param.grad = view

    def _launch_ready_buckets(self):
        n = len(self.buckets)
        while self.next_bucket < n and self.buckets[self.next_bucket].pending == 0:
            bucket = self.buckets[self.next_bucket]
            bucket.work = dist.all_reduce(bucket.flat, group=self.process_group,
                                          async_op=True)
            self.timeline.event("all_reduce launched", bucket)
            self.next_bucket += 1
        if self.next_bucket == n:
            if self.find_unused_parameters:
                self._used_work = dist.all_reduce(self.local_used, group=self.process_group,
                                                  async_op=True)
            self._finalize_backward()

    def _poll(self):
        """Drive the oldest all-reduce in flight (MPI progresses only inside MPI calls)."""
        while self.next_done < self.next_bucket:
            bucket = self.buckets[self.next_done]
            if bucket.work is None or not bucket.work.is_completed():
                return
            self.timeline.event("all_reduce completed", bucket)
            self.next_done += 1

    def _finalize_backward(self):
        for bucket in self.buckets[self.next_done:]:
            bucket.work.wait()
            self.timeline.event("all_reduce completed", bucket)
        self.next_done = len(self.buckets)
        globally_used = None
        if self._used_work is not None:
            self._used_work.wait()
            globally_used = self.local_used.tolist()
        for bucket in self.buckets:
            for k, i in enumerate(bucket.param_indices):
                if globally_used is not None and globally_used[i] == 0:
                    continue
                self._copy_bucket_to_grad(self.params[i], bucket.views[k])
        self.expect_hooks = False
        self.require_finalize = False
        self.div_factor = None
        self._forward_work = None
        self.timeline.event("gradients written back")
        self.timeline.finish()

    def _copy_bucket_to_grad(self, param, view):
        grad = param.grad
        if grad is not None and grad.data_ptr() == view.data_ptr():
            return
        if self.gradient_as_bucket_view:
            param.grad = view
        elif grad is None:
            param.grad = view.clone()
        else:
            grad.copy_(view)

    def _raise_unfinished(self):
        missing = [i for i, r in enumerate(self.ready) if not r]
        names = ", ".join(self.names[i] for i in missing)
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss. You can enable unused parameter detection by passing the keyword "
            "argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
            "function outputs participate in calculating loss.\n"
            f"Parameter indices which did not receive grad for rank "
            f"{dist.get_rank(self.process_group)}: {' '.join(map(str, missing))}\n"
            f"Parameters which did not receive grad for rank "
            f"{dist.get_rank(self.process_group)}: {names}")

    # ---- join support ---------------------------------------------------------------
    def zeros_like_buckets(self):
        return [ember.zeros_like(b.flat) for b in self.buckets]

    def remove_hooks(self):
        for handle in self._hooks:
            handle.remove()
        self._hooks = []


def _hook(reducer_ref, index, param):
    reducer = reducer_ref()
    if reducer is not None:
        reducer._autograd_hook(index, param)


class Timeline:
    """When each gradient bucket was launched and completed during the last backward,
    relative to the end of forward: the evidence that all-reduce overlaps backward."""

    def __init__(self, reducer):
        self.reducer = reducer
        self.events = []
        self._t0 = None
        self._last = []
        self._last_t0 = None

    def start(self):
        self._t0 = time.perf_counter()
        self.events = []

    def event(self, what, subject=None):
        if self._t0 is None:
            return
        self.events.append((time.perf_counter() - self._t0, what, subject))

    def finish(self):
        self._last = self.events
        self._last_t0 = self._t0
        stats = self.summary()
        if stats is None:
            return
        agg = self.reducer.stats
        agg["iterations"] += 1
        agg["compute"] += stats["backward_compute_time"]
        agg["comm"] += stats["backward_comm_time"]
        agg["overlap"] += stats["backward_compute_comm_overlap_time"]

    def summary(self):
        """Seconds, from the events of the last backward: PyTorch's three (compute: forward
        end to last gradient; comm: first launch to last completion; overlap: first launch
        to last gradient), and per bucket, how long its all-reduce was in flight and how
        much of that lay before the last gradient (hidden behind backward); the exposed
        time runs from the last gradient to the gradients written back."""
        events = self._last
        launched = {b.index: t for t, what, b in events if what == "all_reduce launched"}
        completed = {b.index: t for t, what, b in events if what == "all_reduce completed"}
        last_grad = [t for t, what, _ in events if what == "last gradient ready"]
        written = [t for t, what, _ in events if what == "gradients written back"]
        if not launched or not completed or not last_grad or not written:
            return None
        end = last_grad[0]
        in_flight = sum(completed[b] - launched[b] for b in launched)
        hidden = sum(max(0.0, min(completed[b], end) - launched[b]) for b in launched)
        return {"started_at": self._last_t0,     # time.perf_counter() at the end of forward
                "backward_compute_time": end,
                "backward_comm_time": max(completed.values()) - min(launched.values()),
                "backward_compute_comm_overlap_time": max(0.0, end - min(launched.values())),
                "all_reduce_in_flight_time": in_flight,
                "all_reduce_hidden_time": hidden,
                "exposed_time": written[0] - end,
                "buckets_launched_before_backward_end": sum(t < end for t in launched.values()),
                "buckets": len(launched)}

    def __str__(self):
        if not self._last:
            return "DistributedDataParallel: no synchronised backward has run yet"
        r = self.reducer
        lines = [f"DistributedDataParallel backward on rank {dist.get_rank(r.process_group)} "
                 f"of {dist.get_world_size(r.process_group)}: {len(r.buckets)} buckets",
                 f"{'time (ms)':>10}  event"]
        for t, what, subject in self._last:
            if isinstance(subject, _Bucket):
                detail = (f"bucket {subject.index} ({len(subject.param_indices)} params, "
                          f"{subject.nbytes / 2**20:.2f} MiB)")
            else:
                detail = subject or ""
            lines.append(f"{t * 1e3:10.2f}  {what} {detail}".rstrip())
        s = self.summary()
        if s is not None:
            hidden = s["all_reduce_hidden_time"] / s["all_reduce_in_flight_time"] \
                if s["all_reduce_in_flight_time"] > 0 else 0.0
            lines.append(f"{s['buckets_launched_before_backward_end']} of {s['buckets']} "
                         f"all-reduces started before the last gradient was ready; of their "
                         f"{s['all_reduce_in_flight_time'] * 1e3:.2f} ms in flight, "
                         f"{s['all_reduce_hidden_time'] * 1e3:.2f} ms ({hidden:.0%}) ran "
                         f"during backward; backward then waited "
                         f"{s['exposed_time'] * 1e3:.2f} ms for the gradients")
        return "\n".join(lines)

    __repr__ = __str__
