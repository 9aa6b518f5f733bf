"""Keeping a convolution's columns from forward to backward (a compile-time pass).

A convolution's weight gradient multiplies grad_output by the im2col columns of its input, the
very matrix the forward built (ember/_aten/conv.py, Note [Keeping the forward's columns for
the weight gradient]). Eager ember builds them twice, so as not to hold every convolution's
columns (k*k times its input) until backward. In a compiled graph the sizes are known ahead,
so this pass keeps them where they are small: a `convolution` whose input's weight gradient
the backward graph computes becomes `_convolution_with_columns`, whose second output -- a new
Value, saved for backward like any other -- is handed to `_convolution_backward_weight`.

The rewrite is made only when, on the capture run's tensors, the new forward call gives the
convolution's output and the new backward call gives the weight gradient bit for bit, with
the same strides (so the
compiled step stays equal to eager whatever algorithm the kernels use), for columns of at most
COLUMN_BYTES each and TOTAL_BYTES per graph.
"""
import numpy as np

from .._dispatch.recorder import Value
from ..autograd.grad_mode import no_grad

COLUMN_BYTES = 8 << 20
TOTAL_BYTES = 32 << 20


def keep_conv_columns(fwd, bwd, tensors):
    """Rewrite fwd and bwd in place; returns the number of convolutions rewritten."""
    from .. import ops
    with_columns = ops.aten._convolution_with_columns.default
    by_input = {}
    for d in bwd.calls:
        if d.op.short_name == "_convolution_backward_weight" and d.args[6] is False \
                and d.args[9] is None and type(d.args[1]) is Value:
            by_input.setdefault(d.args[1], []).append(d)
    total, done = 0, 0
    for c in fwd.calls:
        if c.op.short_name != "convolution" or c.args[6] is not False or c.outs[0] is None:
            continue
        x, w, b, stride, padding, dilation, _, _, groups = c.args
        y = c.outs[0]
        if type(w) is not Value or (b is not None and type(b) is not Value):
            continue
        users = [d for d in by_input.get(x, ()) if tuple(d.args[2]) == tuple(w.shape) and
                 list(d.args[3:6]) == [stride, padding, dilation] and d.args[8] == groups]
        if len(users) != 1:
            continue
        d = users[0]
        nbytes = (np.prod(w.shape[1:]) * groups * x.shape[0] * np.prod(y.shape[2:]) *
                  np.dtype(x.dtype._np).itemsize)
        if nbytes > COLUMN_BYTES or total + nbytes > TOTAL_BYTES:
            continue
        cols = _check(with_columns, c, d, tensors)
        if cols is None:
            continue
        v = Value(max(fwd._count, bwd._count), f"columns{done}", tuple(cols._size), cols.dtype)
        fwd._count = bwd._count = v.index + 1
        tensors[v] = cols
        c.op, c.args, c.outs = with_columns, (x, w, b, stride, padding, dilation, groups), (y, v)
        d.args = d.args[:9] + (v,)
        total += nbytes
        done += 1
    return done


def _check(with_columns, conv, grad_call, tensors):
    """The columns, when both rewritten calls reproduce the recorded results on the capture
    run's tensors; else None."""
    def load(a):
        return tensors.get(a) if type(a) is Value else a
    args = [load(a) for a in conv.args]
    gargs = [load(a) for a in grad_call.args]
    y, gw = tensors.get(conv.outs[0]), tensors.get(grad_call.outs[0])
    if any(a is None for a in args[:2] + gargs[:2]) or y is None or gw is None or \
            (conv.args[2] is not None and args[2] is None):
        return None
    x, w, b, stride, padding, dilation, _, _, groups = args
    with no_grad():
        y2, cols = with_columns(x, w, b, stride, padding, dilation, groups)
        gw2 = grad_call.op(*gargs[:9], cols)
    if not (np.array_equal(y2._np, y._np) and np.array_equal(gw2._np, gw._np)) or \
            y2.stride() != y.stride() or gw2.stride() != gw.stride():
        return None  # the strides too: a channels_last input gives a channels_last output
    return cols
