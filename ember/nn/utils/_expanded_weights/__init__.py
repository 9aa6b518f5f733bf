"""Expanded weights: per-sample gradients of a module's parameters from one batched backward
(torch.nn.utils._per_sample_grad.call_for_per_sample_grads builds them). Importing the
package registers the per-sample-gradient rule of each supported functional."""
from .conv_expanded_weights import ConvPerSampleGrad
from .embedding_expanded_weights import EmbeddingPerSampleGrad
from .expanded_weights_impl import ExpandedWeight
from .group_norm_expanded_weights import GroupNormPerSampleGrad
from .instance_norm_expanded_weights import InstanceNormPerSampleGrad
from .layer_norm_expanded_weights import LayerNormPerSampleGrad
from .linear_expanded_weights import LinearPerSampleGrad

__all__ = ["ExpandedWeight", "ConvPerSampleGrad", "EmbeddingPerSampleGrad", "GroupNormPerSampleGrad",
           "InstanceNormPerSampleGrad", "LayerNormPerSampleGrad", "LinearPerSampleGrad"]
