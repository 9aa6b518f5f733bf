"""torch.nn.attention: which kernels F.scaled_dot_product_attention may use (`SDPBackend`,
the `sdpa_kernel` context manager).

PyTorch keeps one on/off flag per backend (flash, memory-efficient, math, cuDNN, overrideable;
all on by default) and a priority order. On the CPU only two kernels exist, tried in a fixed
order: flash attention, when its input constraints hold, then the math kernel. ember runs the
math formula for both (the flash kernel computes the same function), but honours the flags as
PyTorch's CPU dispatch does: with math switched off, inputs that flash cannot take get its
refusal as warnings and "No available kernel" as the error; with neither switched on, "No
viable backend".
"""
import contextlib
import enum
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled-dot-product-attention backends, numbered as PyTorch's."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"

    def __int__(self):
        return self.value

    __index__ = __int__


_enabled = {b: True for b in SDPBackend if b is not SDPBackend.ERROR}
_priority = [1, 2, 0, 3, 4]  # PyTorch's default order (the CPU ignores it: flash, then math)


def _cur_sdpa_kernel_backends(with_priority=False):
    backends = [b for b, on in _enabled.items() if on]
    if with_priority:
        backends.sort(key=lambda b: _priority.index(b.value))
    return backends


def _sdpa_kernel(backends, set_priority=False):
    global _priority
    for b in _enabled:
        _enabled[b] = b in backends
    if set_priority:
        order = [b.value for b in backends]
        _priority = order + [p for p in _priority if p not in order]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends` (one SDPBackend
    or a list; with set_priority, the list's order is their priority)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


def _math_sdp_enabled():
    return _enabled[SDPBackend.MATH]


def _select_cpu_backend(query, key, value, attn_mask, dropout_p, enable_gqa):
    """The kernel PyTorch's CPU dispatch picks: flash if enabled and the inputs suit it, else
    math if enabled; else its refusal is warned and the call fails."""
    flash_on = _enabled[SDPBackend.FLASH_ATTENTION]
    if not flash_on and not _enabled[SDPBackend.MATH]:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    refusal = _flash_cpu_refusal(query, key, value, attn_mask, dropout_p, enable_gqa) \
        if flash_on else "Flash attention has been runtime disabled."
    if refusal is None:
        return SDPBackend.FLASH_ATTENTION
    if _enabled[SDPBackend.MATH]:
        return SDPBackend.MATH
    warnings.warn("Flash attention kernel not used because:", stacklevel=_user_stacklevel())
    warnings.warn(refusal, stacklevel=_user_stacklevel())
    raise RuntimeError("No available kernel.  Aborting execution.")


def _flash_cpu_refusal(q, k, v, attn_mask, dropout_p, enable_gqa):
    """Why the CPU flash kernel cannot take these inputs (its first failed constraint, in
    PyTorch's order and words), or None."""
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not q.dim() == k.dim() == v.dim() == 4:
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {q.dim()}, Key dim: {k.dim()}, Value dim: {v.dim()} instead.")
    qs, ks, vs = list(q.shape), list(k.shape), list(v.shape)
    if not qs[0] == ks[0] == vs[0]:
        return ("For dense inputs, both fused kernels require query, key and value to have the "
                f"same batch_size. Query.sizes(): {qs}, Key.sizes(): {ks}, Value.sizes(): {vs} "
                "instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
                "passing them into the kernel.")
    if enable_gqa:
        if qs[1] % ks[1] or ks[1] != vs[1]:
            return ("The number of heads in key/value must divide number of heads in query."
                    f"Got input Key sizes(): {ks[1]}, Value sizes(): {vs[1]}, Query sizes(): "
                    f"{qs[1]} instead.")
    elif not qs[1] == ks[1] == vs[1]:
        return ("For dense input, both fused kernels require query, key and value to have the "
                f"same num_heads. Query.sizes(): {qs}, Key sizes(): {ks}, Value sizes(): {vs} "
                "instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
                "passing them into the kernel.")
    if attn_mask is not None and not _mask_shape_ok(list(attn_mask.shape), qs, ks):
        return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x "
                "{KV_seq_len, 1}); 4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x "
                "{KV_seq_len, 1})")
    if not qs[3] == ks[3] == vs[3]:
        return ("Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {qs[3]}, Key.size(-1): {ks[3]}, Value.size(-1): {vs[3]} "
                "instead.")
    strides = [t.stride(-1) for t in (q, k, v)]
    if strides != [1, 1, 1]:
        return ("All fused kernels require the last dimension of the input to have stride 1. "
                f"Got Query.stride(-1): {strides[0]}, Key.stride(-1): {strides[1]}, "
                f"Value.stride(-1): {strides[2]}")
    if not all(t.dtype.name in ("float32", "float64", "bfloat16", "float16")
               for t in (q, k, v)):
        from ...autograd.profiler import _TYPE_NAMES
        names = [_TYPE_NAMES.get(t.dtype.name, t.dtype.name) for t in (q, k, v)]
        return ("Expected query, key and value to all be of dtype: {Float, Double, BFloat16, "
                f"Half}}. Got Query dtype: {names[0]}, Key dtype: {names[1]}, and Value dtype: "
                f"{names[2]} instead.")
    return None


def _mask_shape_ok(mask, qs, ks):
    """A 2-d mask (L or 1, S or 1) or a 4-d one (B or 1, H or 1, L or 1, S or 1)."""
    if len(mask) == 2:
        want = [qs[2], ks[2]]
    elif len(mask) == 4:
        want = [qs[0], qs[1], qs[2], ks[2]]
    else:
        return False
    return all(m in (w, 1) for m, w in zip(mask, want))


# Code that must know where PyTorch would have run its fused flash kernel (FlopCounterMode:
# PyTorch counts nothing there) adds itself to _flash_watchers; F.scaled_dot_product_attention
# then runs such calls inside _flash_region, whose depth is _flash_depth[0].
_flash_watchers = [0]
_flash_depth = [0]


def _cpu_runs_flash(query, key, value, attn_mask, dropout_p, enable_gqa):
    return _enabled[SDPBackend.FLASH_ATTENTION] and \
        _flash_cpu_refusal(query, key, value, attn_mask, dropout_p, enable_gqa) is None


@contextlib.contextmanager
def _flash_region():
    _flash_depth[0] += 1
    try:
        yield
    finally:
        _flash_depth[0] -= 1
