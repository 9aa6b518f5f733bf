"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d, with PyTorch's parameters
(weight (out, in / groups, *kernel), or (in, out / groups, *kernel) when transposed), its
initialisation (kaiming_uniform_ with a = sqrt(5)) and its padding modes."""
import math

from .module import Module
from ..parameter import Parameter
from .. import init, functional as F
from ... import _refs as E


def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class _ConvNd(Module):
    _nd = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = (_tuple(kernel_size, nd), _tuple(stride, nd),
                                         _tuple(dilation, nd))
        # sets, as PyTorch's messages print them (their order is the hash order)
        valid_padding_strings = {"same", "valid"}
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, nd)
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.transposed = dilation, transposed
        self.output_padding, self.groups = _tuple(output_padding, nd), groups
        self.padding_mode = padding_mode
        # F.pad's order (last dim first, before/after) for padding modes other than zeros
        if isinstance(padding, str):
            pads = [0, 0] * nd
            if padding == "same":
                for i, (d, k) in enumerate(zip(dilation, kernel_size)):
                    total = d * (k - 1)
                    j = nd - 1 - i
                    pads[2 * j], pads[2 * j + 1] = total // 2, total - total // 2
        else:
            pads = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = pads
        shape = (in_channels, out_channels // groups) if transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(E.empty(shape + kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(E.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False,
                         0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            return conv(F.pad(input, self._reversed_padding_repeated_twice,
                              mode=self.padding_mode), weight, bias, self.stride, 0,
                        self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _nd = 1


class Conv2d(_Conv):
    _nd = 2


class Conv3d(_Conv):
    _nd = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output `output_size` (PyTorch's rule: it must lie
        within one stride of the smallest size the other arguments give)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        non_spatial = 2 if input.dim() == nd + 2 else 1
        if len(output_size) == non_spatial + nd:
            output_size = output_size[non_spatial:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {non_spatial + nd} elements (got {len(output_size)})")
        smallest = [(input.shape[non_spatial + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        largest = [low + s - 1 for low, s in zip(smallest, self.stride)]
        for size, low, high in zip(output_size, smallest, largest):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to {largest} (for an input of "
                                 f"{input.shape[2:]})")
        return tuple(size - low for size, low in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    _nd = 3
