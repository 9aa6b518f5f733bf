"""nn.MultiheadAttention: the in-projections, the heads and the out-projection as parameters;
the computation is F.multi_head_attention_forward.

PyTorch also has a fused "fast path" for inference (torch._native_multi_head_attention); it
gives the same numbers as the composite computation, which ember always runs.
"""
from .linear import Linear
from .module import Module
from ..parameter import Parameter
from .. import init, functional as F
from ... import _refs as E


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: PyTorch's quantization tools skip the out-projection of
    attention by this class, and it shows in the repr."""


class MultiheadAttention(Module):
    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:  # q, k and v projections packed in one (3E, E) weight
            self.in_proj_weight = Parameter(E.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(E.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(E.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(E.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(E.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(E.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(E.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        # the draws in PyTorch's order, so that a seeded init gives PyTorch's parameters
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """Attention of `query` over `key`/`value`; returns (output, weights or None).
        Inputs are (L, N, E), (N, L, E) with batch_first, or (L, E) unbatched."""
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             F._none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        batch_first = self.batch_first and query.dim() == 3
        if batch_first:  # sequence-first for the functional form, keeping which inputs are
            # the same tensor: self-attention projects them with one matmul
            key_t = query.transpose(1, 0) if key is query else key.transpose(1, 0)
            value = key_t if value is key else value.transpose(1, 0)
            query = key_t if key is query else query.transpose(1, 0)
            key = key_t
        separate = not self._qkv_same_embed_dim
        attn_output, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if batch_first:
            attn_output = attn_output.transpose(1, 0)
        return attn_output, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """One (N, num_heads, L, L) mask from the attention and key-padding masks of a
        batch-first self-attention call, and its type (None: no mask, 1: padding only,
        2: merged)."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len) \
                    .expand(batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len) \
                    .expand(-1, self.num_heads, -1, -1)
        return merged, mask_type
