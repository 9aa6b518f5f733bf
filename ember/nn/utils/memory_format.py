"""Give every (transposed) convolution weight in a module tree a memory format, typically
channels_last, so that the convolution reads its weight in the layout it computes in."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert_weights(module, kinds, memory_format):
    for m in module.modules():
        if isinstance(m, kinds):
            m.weight.data = m.weight.detach().clone(memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Restride the weights of every Conv2d / ConvTranspose2d in `module` to `memory_format`."""
    return _convert_weights(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """Restride the weights of every Conv3d / ConvTranspose3d in `module` to `memory_format`."""
    return _convert_weights(module, (Conv3d, ConvTranspose3d), memory_format)
