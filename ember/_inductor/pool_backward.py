"""The ReLU mask moved in front of max pooling's scatter (a compile-time graph rewrite).

A CNN's `relu -> max_pool2d` makes, in backward, `max_pool2d_with_indices_backward` (each
gradient scattered to its window's argmax, zeros elsewhere) followed by `threshold_backward`
(zero where the ReLU's output is <= 0) over the whole, four times larger, input. The mask only
changes the scattered positions, and at a window's argmax the ReLU's output is the pooled value
itself (the same number: the maximum is one of the window's elements), so

    threshold_backward(scatter(g, idx), x, t)  ==  scatter(threshold_backward(g, values, t), idx)

bit for bit: the comparison `<= t` sees the same number (or NaN) on both sides, and every other
position is +0.0 either way. The backward then masks the pooled-size gradient and reads the
forward's pooled values (saved for it) instead of the ReLU's output.

Made only when the pooling's input, values and indices are written by nothing, the scattered
gradient is read only by the mask, and the mask reads the pooling's own input.
"""
from .._dispatch.recorder import Value
from ..autograd.grad_mode import no_grad


def mask_before_scatter(fwd, bwd, written, tensors):
    """Rewrite bwd in place; returns the number of rewrites. The masked gradient's tensor on
    the capture run is added to `tensors` (for the lowerings' checks)."""
    pools = {}
    for c in fwd.calls:
        if c.op.short_name == "max_pool2d_with_indices" and None not in c.outs and \
                len(c.args) == 6 and type(c.args[0]) is Value:
            pools[c.outs[1]] = c
    uses = {}
    for c in bwd.calls:
        for v in c.values_read():
            uses[v] = uses.get(v, 0) + 1
    outputs = {o for o in bwd.outputs if type(o) is Value}
    producer = {c.outs[0]: k for k, c in enumerate(bwd.calls) if len(c.outs) == 1}
    done = 0
    for k, mask in enumerate(bwd.calls):
        if mask.op.short_name != "threshold_backward" or type(mask.args[0]) is not Value:
            continue
        p = mask.args[0]
        j = producer.get(p)
        if j is None or uses.get(p) != 1 or p in outputs:
            continue
        scatter = bwd.calls[j]
        if scatter.op.short_name != "max_pool2d_with_indices_backward" or \
                len(scatter.args) != 8 or len(mask.args) != 3:
            continue
        g, x, idx = scatter.args[0], scatter.args[1], scatter.args[7]
        pool = pools.get(idx)
        if pool is None or type(g) is not Value or pool.args[0] is not x or \
                mask.args[1] is not x or list(pool.args[1:6]) != list(scatter.args[2:7]):
            continue
        values = pool.outs[0]
        if any(v in written for v in (g, x, values, idx, p)):
            continue
        masked = Value(max(fwd._count, bwd._count), f"masked{done}", g.shape, g.dtype)
        fwd._count = bwd._count = masked.index + 1
        if tensors.get(g) is not None and tensors.get(values) is not None:
            with no_grad():
                tensors[masked] = mask.op(tensors[g], tensors[values], *mask.args[2:])
        bwd.calls[j] = type(mask)(mask.op, (g, values) + tuple(mask.args[2:]), (masked,))
        bwd.calls[k] = type(scatter)(scatter.op, (masked,) + tuple(scatter.args[1:]),
                                     mask.outs)
        done += 1
    return done
