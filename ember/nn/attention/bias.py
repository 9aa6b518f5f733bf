"""torch.nn.attention.bias: causal masks that scaled_dot_product_attention understands without
materialising them. A CausalBias passed as `attn_mask` takes over the call (through
`__torch_function__`): the upper-left variant, or any square one, becomes `is_causal=True`;
the lower-right one (the diagonal aligned to the last key: queries are the newest positions,
as when decoding with a cache) is materialised as a boolean mask on the CPU, which is what
PyTorch's CPU path does too.

    upper left (3, 4)      lower right (3, 4)
    1 0 0 0                1 1 0 0
    1 1 0 0                1 1 1 0
    1 1 1 0                1 1 1 1
"""
from enum import IntEnum, auto
from warnings import warn

from ..._core.tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """UPPER_LEFT: tril of ones(L, S); LOWER_RIGHT: tril with diagonal S - L."""
    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal attention bias of one variant for queries of length seq_len_q over keys of
    length seq_len_kv (made by causal_upper_left / causal_lower_right)."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        super().__init__()
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn("Lower right causal bias will produce NaNs in the output when seq_len_q > "
                 "seq_len_kv!", stacklevel=2)

    def _materialize(self, device=None):
        """The boolean mask (True where a query may attend)."""
        import ember
        ones = ember.ones(self.seq_len_q, self.seq_len_kv, dtype=ember.bool,
                          device=device or "cpu")
        if self.variant == CausalVariant.UPPER_LEFT:
            return ember.tril(ones)
        return ember.tril(ones, diagonal=self.seq_len_kv - self.seq_len_q)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        from .. import functional as F
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or \
                attn_mask.variant == CausalVariant.UPPER_LEFT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=None,
                                                  dropout_p=dropout_p, is_causal=True,
                                                  scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return F.scaled_dot_product_attention(query, key, value,
                                                  attn_mask=attn_mask._materialize(query.device),
                                                  dropout_p=dropout_p, is_causal=False,
                                                  scale=scale, enable_gqa=enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from .. import functional as F
        if kwargs is None:
            kwargs = {}
        if func is F.scaled_dot_product_attention:
            return cls._dispatch(*args, **kwargs)
        return super().__torch_function__(func, types, args, kwargs)

    def __repr__(self):
        return self._materialize().__repr__()


def causal_upper_left(*size):
    """CausalBias(UPPER_LEFT) for size (seq_len_q, seq_len_kv)."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size):
    """CausalBias(LOWER_RIGHT) for size (seq_len_q, seq_len_kv)."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
