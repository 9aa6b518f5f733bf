"""spconv's convolution layers: SparseConvolution and its named forms (SubMConv, SparseConv,
SparseConvTranspose, SparseInverseConv in 1-3 dimensions). Weights are KRSC,
`[out_channels, *kernel_size, in_channels]`, with kernel offsets in (z, y, x) order; the
layer finds (or reuses, by `indice_key`) its rulebook and runs one of functional.py's
Functions on it."""
import math

import ember
from ..nn import Parameter
from . import functional as Fsp
from .core import ConvAlgo, IndiceData, SparseConvTensor
from .modules import SparseModule
from .rulebook import _expand, get_conv_output_size, get_deconv_output_size, get_indice_pairs


class SparseConvolution(SparseModule):
    def __init__(self, ndim, in_channels, out_channels, kernel_size=3, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, subm=False, output_padding=0,
                 transposed=False, inverse=False, indice_key=None, algo=None, fp32_accum=None,
                 large_kernel_fast_algo=False, name=None, device=None, dtype=None):
        super().__init__(name=name)
        if groups != 1:
            raise ValueError(f"sparse convolution supports groups=1 only, got groups={groups}")
        self.ndim = ndim
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _expand(ndim, kernel_size)
        self.stride = _expand(ndim, stride)
        self.padding = _expand(ndim, padding)
        self.dilation = _expand(ndim, dilation)
        self.output_padding = _expand(ndim, output_padding)
        self.groups, self.subm = groups, subm
        self.transposed, self.inverse = transposed, inverse
        self.indice_key = indice_key
        self.algo = ConvAlgo.Native if algo is None else algo
        self.fp32_accum = fp32_accum
        kernel_volume = math.prod(self.kernel_size)
        # a 1x1 convolution that keeps the sites is one matmul on the features, as in spconv
        self.conv1x1 = kernel_volume == 1 and (subm or math.prod(self.stride) == 1)
        if self.conv1x1 and not subm and any(self.padding):
            raise ValueError(f"padding must be zero for a 1x1 sparse convolution with "
                             f"stride 1, got {self.padding}")
        factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(ember.empty(out_channels, *self.kernel_size, in_channels,
                                            **factory))
        self.bias = Parameter(ember.empty(out_channels, **factory)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """kaiming_uniform_(a=sqrt(5)) over the fan-in in_channels * kernel volume, as spconv's
        (and nn.Conv3d's): both bounds come to 1 / sqrt(fan_in)."""
        bound = 1 / math.sqrt(self.in_channels * math.prod(self.kernel_size))
        with ember.no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if any(self.padding):
            s += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            s += f", dilation={self.dilation}"
        if any(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.bias is None:
            s += ", bias=False"
        return s + f", algo={self.algo}"

    def _out_spatial_shape(self, spatial_shape):
        if self.subm:
            return list(spatial_shape)
        if self.transposed:
            return get_deconv_output_size(spatial_shape, self.kernel_size, self.stride,
                                          self.padding, self.dilation, self.output_padding)
        return get_conv_output_size(spatial_shape, self.kernel_size, self.stride,
                                    self.padding, self.dilation)

    def forward(self, input):
        if input.features.shape[1] != self.in_channels:
            raise ValueError(f"{type(self).__name__} expects {self.in_channels} input channels, "
                             f"got features of shape {list(input.features.shape)}")
        out_spatial_shape = self._out_spatial_shape(input.spatial_shape)
        if self.conv1x1:
            features = input.features.mm(
                self.weight.reshape(self.out_channels, self.in_channels).t())
            out = input.replace_feature(features if self.bias is None else features + self.bias)
            out.spatial_shape = out_spatial_shape
            return out
        indice_dict = dict(input.indice_dict)
        data = input.find_indice_pair(self.indice_key)
        if self.inverse:
            data = self._inverse_data(input, data)
            out_indices, out_spatial_shape = data.indices, data.spatial_shape
        elif data is not None:
            self._check_subm_reuse(input, data)
            out_indices = data.out_indices
        else:
            out_indices, pairs, pair_num = get_indice_pairs(
                input.indices, input.batch_size, input.spatial_shape, self.algo,
                self.kernel_size, self.stride, self.padding, self.dilation,
                self.output_padding, self.subm, self.transposed)
            data = IndiceData(out_indices, input.indices, pairs, pair_num, input.spatial_shape,
                              out_spatial_shape, self.subm, self.algo, self.kernel_size,
                              self.stride, self.dilation, self.padding)
            if self.indice_key is not None:
                indice_dict[self.indice_key] = data
        function = (Fsp.SubMConvFunction if self.subm else
                    Fsp.SparseInverseConvFunction if self.inverse else Fsp.SparseConvFunction)
        features = function.apply(input.features, self.weight, data.indice_pairs,
                                  data.indice_pair_num, out_indices.shape[0], self.algo, None,
                                  self.bias)
        return SparseConvTensor(features, out_indices, out_spatial_shape, input.batch_size,
                                indice_dict=indice_dict, benchmark=input.benchmark)

    def _inverse_data(self, input, data):
        """The forward convolution's rulebook, checked to fit this input the other way round."""
        if data is None:
            raise ValueError(f"{type(self).__name__} needs the rulebook of indice_key "
                             f"{self.indice_key!r}, made by the convolution it inverts; this "
                             f"tensor holds {sorted(input.indice_dict)}")
        if data.is_subm:
            raise ValueError("inverse convolution can only invert a regular sparse convolution "
                             f"or pool, but indice_key {self.indice_key!r} is a submanifold "
                             "convolution's")
        if self.kernel_size != data.ksize:
            raise ValueError(f"inverse convolution with indice_key {self.indice_key!r} must "
                             f"have the kernel size {data.ksize} of the convolution it "
                             f"inverts, this layer has {self.kernel_size}")
        if input.spatial_shape != data.out_spatial_shape or \
                input.indices.shape[0] != data.out_indices.shape[0]:
            raise ValueError(f"inverse convolution with indice_key {self.indice_key!r} expects "
                             f"the {data.out_indices.shape[0]} sites in spatial shape "
                             f"{data.out_spatial_shape} that convolution made, got "
                             f"{input.indices.shape[0]} sites in {input.spatial_shape}")
        return data

    def _check_subm_reuse(self, input, data):
        key = self.indice_key
        if not (self.subm and data.is_subm):
            raise ValueError(f"indice_key {key!r} already holds a rulebook; only submanifold "
                             f"convolutions share one (an inverse convolution reads it)")
        if self.kernel_size != data.ksize or self.dilation != data.dilation:
            raise ValueError(f"submanifold convolutions sharing indice_key {key!r} must have "
                             f"the same kernel size and dilation: {data.ksize}, "
                             f"{data.dilation} before, {self.kernel_size}, {self.dilation} here")
        if input.spatial_shape != data.spatial_shape or \
                input.indices.shape[0] != data.indices.shape[0]:
            raise ValueError(f"submanifold convolutions sharing indice_key {key!r} must see "
                             f"the same sites: {data.indices.shape[0]} in "
                             f"{data.spatial_shape} before, {input.indices.shape[0]} in "
                             f"{input.spatial_shape} here")


class _Conv(SparseConvolution):
    """The named layers: spconv's signature, the dimension and kind fixed by the class."""
    _ndim, _subm, _transposed = 3, False, False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, indice_key=None, algo=None, fp32_accum=None,
                 large_kernel_fast_algo=False, name=None, device=None, dtype=None):
        super().__init__(self._ndim, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, subm=self._subm, transposed=self._transposed,
                         indice_key=indice_key, algo=algo, fp32_accum=fp32_accum,
                         large_kernel_fast_algo=large_kernel_fast_algo, name=name,
                         device=device, dtype=dtype)


class _InverseConv(SparseConvolution):
    _ndim = 3

    def __init__(self, in_channels, out_channels, kernel_size, indice_key, bias=True,
                 algo=None, fp32_accum=None, large_kernel_fast_algo=False, name=None,
                 device=None, dtype=None):
        super().__init__(self._ndim, in_channels, out_channels, kernel_size, bias=bias,
                         inverse=True, indice_key=indice_key, algo=algo, fp32_accum=fp32_accum,
                         large_kernel_fast_algo=large_kernel_fast_algo, name=name,
                         device=device, dtype=dtype)


class SparseConv1d(_Conv):
    _ndim = 1


class SparseConv2d(_Conv):
    _ndim = 2


class SparseConv3d(_Conv):
    _ndim = 3


class SubMConv1d(_Conv):
    _ndim, _subm = 1, True


class SubMConv2d(_Conv):
    _ndim, _subm = 2, True


class SubMConv3d(_Conv):
    _ndim, _subm = 3, True


class SparseConvTranspose1d(_Conv):
    _ndim, _transposed = 1, True


class SparseConvTranspose2d(_Conv):
    _ndim, _transposed = 2, True


class SparseConvTranspose3d(_Conv):
    _ndim, _transposed = 3, True


class SparseInverseConv1d(_InverseConv):
    _ndim = 1


class SparseInverseConv2d(_InverseConv):
    _ndim = 2


class SparseInverseConv3d(_InverseConv):
    _ndim = 3
