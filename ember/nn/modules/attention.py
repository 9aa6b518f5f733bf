"""nn.MultiheadAttention: the in-projections, the heads and the out-projection as parameters;
the computation is F.multi_head_attention_forward.

As in PyTorch, batch-first self-attention in inference (no grad needed, eval mode, even number
of heads, packed projections with biases, boolean masks) takes the "fast path": one call of
torch._native_multi_head_attention with the masks merged (`merge_masks`). It is looked up on
the torch module at call time, so tests that patch it see whether the path was taken;
torch.backends.mha.set_fastpath_enabled(False) turns the path off.
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
        float_masks = any(m is not None and m.is_floating_point()
                          for m in (attn_mask, key_padding_mask))
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             F._none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        why_not = "floating-point masks are not supported for fast path." if float_masks \
            else self._why_not_fast_path(query, key, value, attn_mask, key_padding_mask)
        if not why_not:
            import ember
            merged_mask, mask_type = self.merge_masks(attn_mask, key_padding_mask, query)
            return ember._native_multi_head_attention(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
                self.in_proj_bias, self.out_proj.weight, self.out_proj.bias, merged_mask,
                need_weights, average_attn_weights, mask_type)
        if query.is_nested or key.is_nested or value.is_nested:
            raise AssertionError("MultiheadAttention does not support NestedTensor outside of "
                                 f"its fast path. The fast path was not hit because {why_not}")
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

    def _why_not_fast_path(self, query, key, value, attn_mask, key_padding_mask):
        """Why PyTorch's fast path would not run this call ('' if it would), its first
        failed condition in PyTorch's order and words."""
        from ...backends import mha
        from ... import is_autocast_enabled, overrides
        from ...autograd.grad_mode import is_grad_enabled
        from ..._dispatch.recorder import is_recording
        from ..._dynamo.eval_frame import is_compiling
        from ...onnx.utils import is_in_onnx_export
        if not mha.get_fastpath_enabled():
            return "torch.backends.mha.get_fastpath_enabled() was not True"
        if query.dim() != 3:
            return f"input not batched; expected query.dim() of 3 but got {query.dim()}"
        if query is not key or key is not value:
            return ("non-self attention was used (query, key, and value are not the same "
                    "Tensor)")
        if self.in_proj_bias is not None and query.dtype != self.in_proj_bias.dtype:
            return (f"dtypes of query ({query.dtype}) and self.in_proj_bias "
                    f"({self.in_proj_bias.dtype}) don't match")
        if self.in_proj_weight is None:
            return "in_proj_weight was None"
        if query.dtype != self.in_proj_weight.dtype:
            return (f"dtypes of query ({query.dtype}) and self.in_proj_weight "
                    f"({self.in_proj_weight.dtype}) don't match")
        if self.training:
            return "training is enabled"
        if self.num_heads % 2:
            return "self.num_heads is not even"
        if not self.batch_first:
            return "batch_first was not True"
        if self.bias_k is not None:
            return "self.bias_k was not None"
        if self.bias_v is not None:
            return "self.bias_v was not None"
        if self.add_zero_attn:
            return "add_zero_attn was enabled"
        if not self._qkv_same_embed_dim:
            return "_qkv_same_embed_dim was not True"
        if query.is_nested and (key_padding_mask is not None or attn_mask is not None):
            return ("supplying both src_key_padding_mask and src_mask at the same time is not "
                    "supported with NestedTensor input")
        if is_autocast_enabled():
            return "autocast is enabled"
        tensors = (query, key, value, self.in_proj_weight, self.in_proj_bias,
                   self.out_proj.weight, self.out_proj.bias)
        if overrides.has_torch_function(tensors):
            return "some Tensor argument has_torch_function"
        if is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
            return ("grad is enabled and at least one of query or the input/output projection "
                    "weights or biases requires_grad")
        if is_recording() or is_compiling() or is_in_onnx_export():
            return "we are running make_fx tracing"
        if self.in_proj_bias is None:  # PyTorch then falls through to the composite path
            return "in_proj_bias was None"
        return ""

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
