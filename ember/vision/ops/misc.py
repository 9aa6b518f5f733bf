"""Conv2dNormActivation (torchvision.ops.misc): the convolution -> norm -> activation block as a
Sequential, so its parameters are named `0.weight` (conv), `1.weight`/`1.running_mean` (norm),
as in torchvision's MobileNet checkpoints.
"""
from ... import nn


def _ntuple(x, n):
    return (x,) * n if isinstance(x, int) else tuple(x)


class Conv2dNormActivation(nn.Sequential):
    """padding=None gives 'same' padding for odd kernels: (kernel_size - 1) // 2 * dilation.
    bias=None means a bias only when there is no norm layer (the norm's shift replaces it)."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                dims = len(kernel_size) if not isinstance(kernel_size, int) else len(dilation)
                kernel_size = _ntuple(kernel_size, dims)
                dilation = _ntuple(dilation, dims)
                padding = tuple((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels
