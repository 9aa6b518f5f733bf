"""Generated checks of the function transforms over the op db (test_func.py, test_forward_ad.py):
for each row, its first small float64 sample, run through vmap or forward-mode AD in ember and in
torch. Known failures are listed by kind, as op_db_edges.EDGE_XFAIL does for edge samples."""
import numpy as np

import ember
from op_db import OPS, T
from test_ops import build, flat_outputs, _rng


def first_sample(op, max_numel=64):
    """The row's first float64 sample whose tensors are contiguous and small."""
    if "float64" not in op.dtypes:
        return None
    for s in op.samples("float64", _rng(op.name, "func")):
        tensors = [a for a in list(s.args) + list(s.kwargs.values()) if isinstance(a, T)]
        if tensors and all(a.layout == "contiguous" and a.data.size <= max_numel
                           for a in tensors):
            return s
    return None


def float_tensor_slots(sample):
    """(where, key) of the sample's float64 tensors that require grad."""
    return [("a", i) for i, a in enumerate(sample.args) if isinstance(a, T) and a.grad and
            a.dtype == "float64"] + \
        [("k", k) for k, a in sample.kwargs.items() if isinstance(a, T) and a.grad and
         a.dtype == "float64"]


def get(args, kwargs, slot):
    where, key = slot
    return args[key] if where == "a" else kwargs[key]


def put(args, kwargs, slot, value):
    where, key = slot
    if where == "a":
        args[key] = value
    else:
        kwargs[key] = value


def plain(m, sample):
    """The sample's arguments as `m`'s tensors, none requiring grad."""
    args, kwargs = build(m, sample)
    args = [a.detach() if isinstance(a, m.Tensor) else a for a in args]
    kwargs = {k: (v.detach() if isinstance(v, m.Tensor) else v) for k, v in kwargs.items()}
    return args, kwargs


def tensor_outputs(out):
    return [o for o in flat_outputs(out) if hasattr(o, "dtype")]


def to_np(t):
    return np.asarray(t.detach().numpy()) if isinstance(t, ember.Tensor) else \
        t.detach().numpy(force=True)


def close(a, b, rtol=1e-6, atol=1e-7):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


OPS_BY_NAME = {op.name: op for op in OPS}


def batched_versions(sample, size=3):
    """The sample's tensors, each as `size` examples: its data rolled by 0, 1, 2 elements (the
    values stay in the op's domain and valid as indices)."""
    out = {}
    for slot in [("a", i) for i, a in enumerate(sample.args) if isinstance(a, T)] + \
            [("k", k) for k, a in sample.kwargs.items() if isinstance(a, T)]:
        a = get(list(sample.args), dict(sample.kwargs), slot)
        flat = a.data.reshape(-1)
        out[slot] = np.stack([np.roll(flat, b).reshape(a.data.shape) for b in range(size)])
    return out


def vmap_call(m, vmap, op, sample, batches):
    """vmap(op)(batched tensors) in `m`, all tensor arguments batched along dim 0."""
    args, kwargs = plain(m, sample)
    slots = list(batches)

    def f(*xs):
        a, kw = list(args), dict(kwargs)
        for s, x in zip(slots, xs):
            put(a, kw, s, x)
        return op.op(m, *a, **kw)
    xs = [m.from_numpy(batches[s].copy()).to(get(args, kwargs, s).dtype) for s in slots]
    return vmap(f)(*xs), f, xs


def loop_call(m, f, xs, size=3):
    outs = [f(*[x[b] for x in xs]) for b in range(size)]
    first = tensor_outputs(outs[0])
    return [m.stack([tensor_outputs(o)[k] for o in outs]) for k in range(len(first))]
