"""torch.nn.utils: gradient clipping, parameter/vector conversion, rnn packing, reparametrizations."""
from . import rnn
from . import parametrizations, parametrize, stateless
from .clip_grad import (_clip_grads_with_norm_ as clip_grads_with_norm_,
                        _get_total_norm as get_total_norm, clip_grad_norm, clip_grad_norm_,
                        clip_grad_value_)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
    "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
    "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init", "spectral_norm",
    "stateless", "vector_to_parameters", "weight_norm",
]
