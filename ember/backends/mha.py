"""torch.backends.mha: the switch for the inference fast paths of nn.MultiheadAttention
(torch._native_multi_head_attention) and nn.TransformerEncoder/EncoderLayer. With it off the
modules always run their composite computation."""

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fast paths may be taken (they still run only when the inputs qualify)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
