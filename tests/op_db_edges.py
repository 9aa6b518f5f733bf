"""Edge samples generated for every op-db row (PyTorch's OpInfos generate the same kind):
zero-size and 0-d versions of each row's own ordinary samples.

A row's samples say how the op is called; the edge versions keep the call and change the shapes:

* zero-size: one size of the first tensor argument (say 4) becomes 0 in every tensor argument
  that has a dimension of that size, so that operands which agree on a dimension still agree
  (`(3, 4) @ (4, 5)` gives `(3, 0) @ (0, 5)`, `(0, 4) @ (4, 5)` and `(3, 4) @ (4, 0)`); a
  version whose integer (index) tensors would point into an emptied input is left out;
* 0-d: every tensor argument becomes the 0-d tensor of its first element, and then each tensor
  argument after the first alone (a 0-d `value`, `weight` or `index` beside an n-d input).

Where torch raises on an edge sample, ember must raise the same exception type; otherwise the
values, dtype, shape and gradients are compared as for the ordinary samples. The edge samples
run in at most three dtypes per row (a floating, an integral and bool, where the row has them):
the shape logic does not depend on the dtype beyond its category.
"""
import numpy as np

from op_db import FLOATS, INTS, Sample, T

EDGE_SAMPLES = 12     # edge samples per row in its floating dtype (half as many in the others)
SIZES_PER_BASE = 3    # sizes of the first tensor shrunk to 0, per ordinary sample


def edge_dtypes(op):
    """A floating dtype (float32 if the row has it), an integral one (int64 first) and bool."""
    picks = []
    for group in (("float32", "float64") + FLOATS, ("int64",) + INTS, ("bool",)):
        found = next((d for d in group if d in op.dtypes), None)
        if found is not None:
            picks.append(found)
    return picks


def _tensor_slots(sample):
    return [("a", i, a) for i, a in enumerate(sample.args) if isinstance(a, T)] + \
        [("k", k, v) for k, v in sample.kwargs.items() if isinstance(v, T)]


def _replace(sample, changed):
    """The sample with the tensors in `changed` {(where, key): T} swapped in."""
    args = [changed.get(("a", i), a) for i, a in enumerate(sample.args)]
    kwargs = {k: changed.get(("k", k), v) for k, v in sample.kwargs.items()}
    return Sample(*args, **kwargs)


def _shrunk(t, size):
    """`t` with every dimension of length `size` cut to length 0."""
    index = tuple(slice(0, 0) if n == size else slice(None) for n in t.data.shape)
    return T(t.data[index], t.dtype, t.layout, t.grad)


def _zero_d(t):
    return T(t.data.reshape(-1)[:1].reshape(()), t.dtype, "contiguous", t.grad)


def _zero_size_versions(sample):
    slots = _tensor_slots(sample)
    first = next((t for _, _, t in slots if t.data.ndim), None)
    if first is None or slots[0][2] is not first:
        return []
    sizes = sorted({n for n in first.data.shape if n > 1}, reverse=True)[:SIZES_PER_BASE]
    out = []
    for size in sizes:
        changed = {(w, k): _shrunk(t, size) for w, k, t in slots}
        if _dangling_indices(slots, changed):
            continue
        out.append(_replace(sample, changed))
    return out


def _dangling_indices(slots, changed):
    """Whether an integer tensor after the first keeps its elements while the first tensor
    becomes empty: its values would index into a dimension cut to 0, which torch reports
    through internal errors of no fixed type (setStorage, index kernels)."""
    (w0, k0, first), rest = slots[0], slots[1:]
    if changed[(w0, k0)].data.size or not first.data.size:
        return False
    return any(t.dtype in INTS and changed[(w, k)].data.size for w, k, t in rest)


def _zero_d_versions(sample):
    slots = [s for s in _tensor_slots(sample) if s[2].data.size]
    if not slots or all(t.data.ndim == 0 for _, _, t in slots):
        return []
    out = [_replace(sample, {(w, k): _zero_d(t) for w, k, t in slots})]
    for w, k, t in slots[1:3]:
        if t.data.ndim:
            out.append(_replace(sample, {(w, k): _zero_d(t)}))
    return out


def _key(sample):
    return repr(sample)


def _spread(items, n):
    """n items evenly spaced through the list (all of them if there are no more)."""
    if len(items) <= n:
        return items
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)] if n > 1 else items[:1]


def edge_samples(op, dtype, rng):
    """Zero-size and 0-d versions of the row's ordinary samples, without repeats and without
    the ordinary samples themselves: EDGE_SAMPLES of them at most (fewer for integral dtypes),
    spread over the ordinary samples so that every way the row calls the op is represented."""
    ordinary = op.samples(dtype, rng)
    seen = {_key(s) for s in ordinary}
    zero_size, zero_d = [], []
    for base in ordinary:
        for kind, made in ((zero_size, _zero_size_versions(base)),
                           (zero_d, _zero_d_versions(base))):
            for s in made:
                if _key(s) not in seen:
                    seen.add(_key(s))
                    kind.append(s)
    skip = EDGE_SKIP.get(op.name)
    if skip is not None:
        zero_size = [s for s in zero_size if not skip[0](s)]
        zero_d = [s for s in zero_d if not skip[0](s)]
    budget = EDGE_SAMPLES if dtype in FLOATS else EDGE_SAMPLES // 2
    return _spread(zero_size, budget - budget // 3) + _spread(zero_d, budget // 3)


# row -> (which generated samples are not run, why): torch itself cannot run them.
EDGE_SKIP = {
    "_masked_softmax": (lambda s: True, "torch 2.13 stops the process (Floating point "
                                        "exception) on an empty or 0-d input"),
    "F.pdist": (lambda s: s.args[0].data.ndim == 2 and
                s.args[0].data.shape[0] == 0 < s.args[0].data.shape[1],
                "torch 2.13's pdist backward crashes the process (segfault) on an input with "
                "no rows and some columns"),
    "F.multi_margin_loss": (lambda s: s.args[0].data.size == 0,
                            "torch 2.13 returns uninitialised memory for an empty batch"),
    "F.multilabel_margin_loss": (lambda s: s.args[0].data.size == 0,
                                 "torch 2.13 returns uninitialised memory for an empty batch"),
    "resize_": (lambda s: True, "the edge versions grow an empty or 0-d tensor, and torch's "
                                "new elements are uninitialised memory"),
    "resize_as_": (lambda s: True, "the edge versions grow an empty or 0-d tensor, and torch's "
                                   "new elements are uninitialised memory"),
    "aten._native_batch_norm_legit_no_training": (
        lambda s: True, "torch 2.13 stops the process (Floating point exception) on one of the "
                        "generated versions"),
    "torch._weight_norm_interface": (lambda s: any(a.data.size < 2 for a in s.args
                                                   if isinstance(a, T)),
                                     "torch 2.13 stops the process (Floating point exception) "
                                     "on an empty v or g, and reads g past its end when it is 0-d"),
    "torch._weight_norm": (lambda s: any(a.data.size < 2 for a in s.args
                                         if isinstance(a, T)),
                           "torch 2.13 stops the process (Floating point exception) "
                           "on an empty v or g, and reads g past its end when it is 0-d"),
    "aten._weight_norm_interface_backward": (lambda s: any(a.data.size < 2 for a in s.args
                                                           if isinstance(a, T)),
                                             "torch 2.13 stops the process (Floating point "
                                             "exception) on empty tensors, and reads past a 0-d g"),
    "aten._native_batch_norm_legit": (
        lambda s: True, "torch 2.13 stops the process (segfault / floating point exception) on "
                        "some generated versions, as for _native_batch_norm_legit_no_training"),
    "_native_batch_norm_legit.no_stats": (
        lambda s: True, "torch 2.13 stops the process on some generated versions"),
    "aten._batch_norm_with_update": (
        lambda s: True, "torch 2.13 stops the process on some generated versions"),
    "_chunk_cat": (lambda s: True, "torch 2.13 crashes the process (segfault) on a 0-d or "
                                   "empty tensor, which its checks let through"),
    "aten._unsafe_masked_index": (lambda s: True, "unsafe: torch does not check the indices, and "
                                                  "the generated versions point past an emptied "
                                                  "input"),
    "aten._unsafe_masked_index_put_accumulate": (lambda s: True, "as _unsafe_masked_index"),
    "aten._convolution_double_backward": (
        lambda s: True, "torch 2.13 crashes the process (segfault) on the generated versions: its "
                        "composite trusts the shapes a convolution's backward hands it"),
    "unfold_backward": (lambda s: True,
                        "the generated versions shrink grad_in but not input_sizes (a list), "
                        "and torch reads past grad_in's storage (or fails in setStorage)"),
}


# torch's error message (regex) -> why ember returns a result there instead of raising: errors
# of PyTorch's CPU build rather than of its semantics.
TORCH_BUILD_ERRORS = {
    r"MKL FFT error": "PyTorch's MKL transforms refuse an empty batch (its pocketfft builds "
                      "return the empty result, as ember does: tests/test_fft.py)",
}


# Rows whose generated edge samples ember does not all match yet, by what goes wrong:
#   result          another value, dtype or shape than torch's
#   backward        gradients or requires_grad differ, or torch's backward refuses
#   accepts         ember returns a result where torch refuses the input
#   exception type  both raise, with other exception types (the checks run in another order
#                   on 0-d or empty inputs: IndexError "dimension out of range" against
#                   RuntimeError "expected a 2-D tensor", ...)
# test_op_edges reports a listed row as an expected failure while one of its edge samples fails,
# and fails once all pass (then the row comes off the list).
EDGE_XFAIL = {
    # torch returns the empty input itself as the result, so its backward raises "leaf
    # variable has been moved into the graph interior"; ember returns a copy
    "native_dropout of an empty input returns a copy, not the input": {"aten.native_dropout",
                                                                      "torch.native_dropout"},
    # torch takes a 0-d bias as one value for every channel, and raises ValueError (not
    # RuntimeError) for a 0-d input
    "0-d batch norm parameters and inputs": {"aten._native_batch_norm_legit_functional"},
    # torch's slow convolutions index a 0-d input, weight or bias before checking it (IndexError)
    "0-d slow convolution arguments": {"_C._nn.thnn_conv2d", "_C._nn.slow_conv3d"},
    # the generated versions no longer fit together (grad_output emptied but not the input);
    # torch's kernel checks the shapes and raises, ember's composite computes what it can
    "convolution_backward of mismatched shapes": {"aten.convolution_backward"},
}


def edge_xfail_reason(name):
    return next((reason for reason, rows in EDGE_XFAIL.items() if name in rows), None)
