"""masked_tensor(data, mask) copies data; as_masked_tensor(data, mask) keeps data's autograd
history (gradients flow back into `data`)."""
from .core import MaskedTensor


def masked_tensor(data, mask, requires_grad=False):
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    return MaskedTensor._from_values(data, mask)
