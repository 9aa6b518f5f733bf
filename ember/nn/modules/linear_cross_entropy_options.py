"""nn.LinearCrossEntropyOptions: the settings of linear_cross_entropy's chunked computation.

PyTorch can compute linear_cross_entropy a batch chunk at a time so the full (N, num_classes)
logits never exist at once (an LLM vocabulary head's logits are the largest tensor of a step);
these options choose the chunk size, the accumulation dtype and whether backward may run twice.
ember computes the loss in one piece whatever the options say -- the loss and its gradients are
the same, only the peak memory differs -- but keeps the options object, its fields, defaults and
validation, so code that builds one runs unchanged."""
import dataclasses

from ..._core import dtype as D

__all__ = ["LinearCrossEntropyOptions"]

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """allow_retain_graph: backward may run more than once (PyTorch's chunked scalar reductions
    otherwise consume their saved gradients). batch_chunk_size: batch rows per chunk (None: one
    chunk). chunking_method: "auto", "aspect_ratio" or "aspect_ratio:N" picks the chunk size from
    the shapes; None uses batch_chunk_size. acc_policy: "auto", "accurate", "balanced" or "compact",
    which intermediates are kept in acc_dtype. acc_dtype: the accumulation dtype (None: chosen per
    call)."""
    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (D.float16, D.bfloat16,
                                                                 D.float32, D.float64):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")
