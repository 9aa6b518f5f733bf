"""DistributedDataParallel: one model replica per process, gradients averaged across the
processes during backward (PyTorch's torch.nn.parallel.DistributedDataParallel).

At construction the parameters and buffers of rank 0 are broadcast to every rank, so all
replicas start equal; after that they stay equal because every rank applies the same
averaged gradients. Each forward may first broadcast the buffers again (`broadcast_buffers`,
e.g. BatchNorm's running statistics, from rank 0). The gradient averaging itself, bucketed
and overlapped with backward, is the Reducer's (reducer.py). Each rank feeds its own share
of the data (DistributedSampler), so N ranks with batch B train like one process with batch
N x B.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from contextlib import contextmanager

import ember
from ..modules.module import Module
from ..parameter import UninitializedParameter
from ... import distributed as dist
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from .reducer import (Reducer, compute_bucket_assignment_by_size, DEFAULT_BUCKET_CAP_MB,
                      DEFAULT_FIRST_BUCKET_BYTES)

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_BROADCAST_BUCKET_BYTES = 250 * _MB


def find_tensors(obj):
    """The tensors in a (nested) forward output: tuples, lists, dicts, dataclasses."""
    if isinstance(obj, ember.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in find_tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in find_tensors(x)]
    if hasattr(obj, "__dataclass_fields__"):
        return [t for name in obj.__dataclass_fields__ for t in find_tensors(getattr(obj, name))]
    return []


def _chunks(tensors, bucket_bytes):
    chunk, size = [], 0
    for t in tensors:
        nbytes = t.numel() * t.element_size()
        if chunk and size + nbytes > bucket_bytes:
            yield chunk
            chunk, size = [], 0
        chunk.append(t)
        size += nbytes
    if chunk:
        yield chunk


def broadcast_coalesced(tensors, src, group, bucket_bytes=_BROADCAST_BUCKET_BYTES):
    """Broadcast `tensors` from rank `src` of `group`, packed into flat buffers of at most
    `bucket_bytes` per dtype (one collective per buffer instead of one per tensor)."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    receiving = dist.get_rank(group) != src
    with ember.no_grad():
        for same_dtype in by_dtype.values():
            for chunk in _chunks(same_dtype, bucket_bytes):
                flat = ember.cat([t.detach().reshape(-1) for t in chunk])
                dist.broadcast(flat, group=group, group_src=src)
                if receiving:
                    offset = 0
                    for t in chunk:
                        n = t.numel()
                        t.copy_(flat[offset:offset + n].view(t.shape))
                        offset += n


class _DDPJoinHook(JoinHook):
    """What a rank that has run out of inputs does while the others still train: the same
    collectives as one DDP iteration, with zeros for gradients."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        ddp._check_and_sync_module_buffers()
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        works = [dist.all_reduce(z, group=ddp.process_group, async_op=True)
                 for z in ddp.reducer.zeros_like_buckets()]
        for w in works:
            w.wait()
        if ddp.find_unused_parameters:
            dist.all_reduce(ember.zeros_like(ddp.reducer.local_used), group=ddp.process_group)

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    """Data parallelism across processes: wraps `module`, keeps its replicas equal on every
    rank of `process_group` and averages gradients during backward.

    bucket_cap_mb: size of the gradient buckets (25 MiB; the first 1 MiB by default).
    find_unused_parameters: walk the graph after forward to find parameters that get no
    gradient this iteration. broadcast_buffers: broadcast rank 0's buffers before each
    forward. gradient_as_bucket_view: `.grad` is a view into the bucket (no copies).
    static_graph: the set of used parameters is the same every iteration (found once).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        Module.__init__(self)
        Joinable.__init__(self)
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if device_mesh is not None:
            raise NotImplementedError("DistributedDataParallel(device_mesh=...) is not "
                                      "supported by ember; pass process_group")
        if mixed_precision is not None or delay_all_reduce_named_params is not None:
            raise NotImplementedError("DistributedDataParallel: mixed_precision and "
                                      "delay_all_reduce_named_params are not supported by "
                                      "ember")
        self.process_group = process_group if process_group is not None \
            else dist.GroupMember.WORLD
        if self.process_group is None:
            dist.get_rank()  # raises PyTorch's "Default process group has not been initialized"
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore",
                                                ()))
        named = [(n, p) for n, p in module.named_parameters()
                 if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for _, p in named):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        devices = {p.device.type for _, p in named}
        if len(devices) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type "
                             f"of devices, but input module parameters locate in {devices}.")
        self.device_type = next(iter(devices))
        if device_ids or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters { {p.device for _, p in named} }.")
        for _, p in named:
            if isinstance(p, UninitializedParameter):
                raise RuntimeError("Modules with uninitialized parameters can't be used with "
                                   "`DistributedDataParallel`. Run a dummy forward pass to "
                                   "correctly initialize the modules")
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.module = module
        self.device = named[0][1].device
        if broadcast_buffers is not None:
            warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` "
                          "instead. IMPORTANT: unlike `broadcast_buffers=False`, "
                          "`forward_sync_buffers=False` still syncs buffers at init.",
                          FutureWarning, stacklevel=_user_stacklevel())
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            init_sync_buffers = True
        else:
            self.forward_sync_buffers = True if broadcast_buffers is None else broadcast_buffers
            init_sync_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module "
                          "is deprecated. Please avoid using it.", FutureWarning, stacklevel=_user_stacklevel())
        if bucket_cap_mb_list:
            caps = [int(mb * _MB) for mb in bucket_cap_mb_list]
        elif bucket_cap_mb is None:
            caps = [DEFAULT_FIRST_BUCKET_BYTES, DEFAULT_BUCKET_CAP_MB * _MB]
        else:
            caps = [int(bucket_cap_mb * _MB)]
        self.bucket_bytes_cap = caps[-1]
        self.broadcast_bucket_size = _BROADCAST_BUCKET_BYTES
        self._divide_by_initial_world_size = True

        params, names = self._build_params_for_reducer()
        if init_sync:
            self._verify_param_shape_across_processes(params, names)
            self._sync_module_states(src=0, broadcast_buffers=init_sync_buffers)
        self.modules_buffers = [b for n, b in module.named_buffers()
                                if n not in self.parameters_to_ignore]
        self.reducer = Reducer(params, names, compute_bucket_assignment_by_size(params, caps),
                               self.process_group, find_unused_parameters,
                               gradient_as_bucket_view, static_graph)

    # ---- construction helpers -----------------------------------------------------
    def _build_params_for_reducer(self):
        """The parameters whose gradients are averaged, once each, in registration order."""
        seen = set()
        params, names = [], []
        for mod_name, mod in self.module.named_modules():
            for name, p in mod.named_parameters(recurse=False):
                full = f"{mod_name}.{name}" if mod_name else name
                if full in self.parameters_to_ignore or not p.requires_grad or id(p) in seen:
                    continue
                seen.add(id(p))
                params.append(p)
                names.append(full)
        return params, names

    def _verify_param_shape_across_processes(self, params, names):
        shapes = [tuple(p.shape) for p in params]
        everyone = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(everyone, shapes, group=self.process_group)
        reference = everyone[0]
        for rank, theirs in enumerate(everyone):
            if len(theirs) != len(reference):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {rank} "
                                   f"has {len(theirs)} params, while rank 0 has inconsistent "
                                   f"{len(reference)} params.")
            for i, (a, b) in enumerate(zip(reference, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but rank "
                                       f"{rank}'s parameter {names[i]} has shape {list(b)} "
                                       f"while rank 0's has shape {list(a)}.")

    def _sync_module_states(self, src, broadcast_buffers):
        tensors = [p for n, p in self.module.named_parameters()
                   if n not in self.parameters_to_ignore]
        if broadcast_buffers:
            tensors += [b for n, b in self.module.named_buffers()
                        if n not in self.parameters_to_ignore]
        broadcast_coalesced(tensors, src, self.process_group, self.broadcast_bucket_size)

    # ---- forward --------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        inputs, kwargs = self._pre_forward(*inputs, **kwargs)
        output = self.module(*inputs, **kwargs)
        return self._post_forward(output)

    def _pre_forward(self, *inputs, **kwargs):
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_forward()
        work = Join.notify_join_context(self)
        if work:
            self.reducer.set_forward_pass_work_handle(work, self._divide_by_initial_world_size)
        if self.will_sync_module_buffers():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        return inputs, kwargs

    def _post_forward(self, output):
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            needs_graph = self.find_unused_parameters or (
                self.static_graph and self.reducer._static_unused is None)
            self.reducer.prepare_for_backward(find_tensors(output) if needs_graph else [])
        else:
            self.require_forward_param_sync = False
        return output

    @property
    def broadcast_buffers(self):
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value):
        self.forward_sync_buffers = value

    def will_sync_module_buffers(self):
        return (self.require_forward_param_sync and self.forward_sync_buffers
                and len(self.modules_buffers) > 0)

    def _find_common_rank(self, input_rank, rank_cond):
        rank_to_use = ember.tensor([input_rank if rank_cond else -1])
        dist.all_reduce(rank_to_use, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process.")
        return int(rank_to_use.item())

    def _sync_buffers(self):
        if self._join_config.enable:
            authoritative_rank = self._find_common_rank(self._distributed_rank, True)
        else:
            authoritative_rank = 0
        self._sync_module_buffers(authoritative_rank)

    def _sync_module_buffers(self, authoritative_rank):
        broadcast_coalesced(self.modules_buffers, authoritative_rank, self.process_group,
                            self.broadcast_bucket_size)

    @property
    def _distributed_rank(self):
        return dist.get_rank(self.process_group)

    # ---- gradient accumulation, uneven inputs ---------------------------------------
    @contextmanager
    def no_sync(self):
        """Inside this context, backward accumulates gradients locally without averaging;
        the first synchronised backward after it averages the accumulated gradients. Run the
        forward pass inside the context too."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Context manager for uneven inputs: a rank that runs out of batches shadows the
        others' collectives until every rank is done (distributed.algorithms.Join)."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        flag = ember.ones(1) if (not is_joined_rank and self.require_backward_grad_sync) \
            else ember.zeros(1)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return flag.item() != 0
        return None

    def _check_and_sync_module_buffers(self):
        if self.will_sync_module_buffers():
            authoritative_rank = self._find_common_rank(self._distributed_rank, False)
            self._sync_module_buffers(authoritative_rank)

    def _sync_final_model(self, is_last_joiner):
        src = self._find_common_rank(self._distributed_rank, is_last_joiner)
        self._sync_module_states(src=src, broadcast_buffers=self.forward_sync_buffers)

    # ---- introspection --------------------------------------------------------------
    def explain(self):
        """The timeline of the last synchronised backward: when each gradient bucket's
        all-reduce was launched and completed, against when the last gradient was ready."""
        return self.reducer.timeline

    def _get_ddp_logging_data(self):
        """PyTorch's DDP logging data: the configuration, and the average backward compute
        time, communication time and their overlap (nanoseconds, as in PyTorch)."""
        stats = self.reducer.stats
        n = max(stats["iterations"], 1)
        return {
            "world_size": dist.get_world_size(self.process_group),
            "rank": dist.get_rank(self.process_group),
            "module_name": type(self.module).__name__,
            "backend_name": dist.get_backend(self.process_group),
            "bucket_cap_bytes": self.bucket_bytes_cap,
            "find_unused_parameters": self.find_unused_parameters,
            "gradient_as_bucket_view": self.gradient_as_bucket_view,
            "broadcast_buffers": self.forward_sync_buffers,
            "static_graph": self.static_graph,
            "num_buckets": len(self.reducer.buckets),
            "bucket_sizes": [b.nbytes for b in self.reducer.buckets],
            "total_parameter_size_bytes": sum(b.nbytes for b in self.reducer.buckets),
            "avg_backward_compute_time": int(stats["compute"] / n * 1e9),
            "avg_backward_comm_time": int(stats["comm"] / n * 1e9),
            "avg_backward_compute_comm_overlap_time": int(stats["overlap"] / n * 1e9),
        }

    def train(self, mode=True):
        super().train(mode)
        return self
