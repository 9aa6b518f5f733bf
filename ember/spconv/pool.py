"""spconv's SparseMaxPool1d/2d/3d: a regular sparse convolution's rulebook with a maximum in
place of the weighted sum (stride defaults to the kernel size, as in nn.MaxPool3d)."""
from . import functional as Fsp
from .core import ConvAlgo, IndiceData, SparseConvTensor
from .modules import SparseModule
from .rulebook import _expand, get_conv_output_size, get_indice_pairs


class SparseMaxPool(SparseModule):
    def __init__(self, ndim, kernel_size=3, stride=1, padding=0, dilation=1, indice_key=None,
                 subm=False, algo=None, name=None):
        super().__init__(name=name)
        if subm:
            raise ValueError("a submanifold max-pool is not supported (spconv's needs the "
                             "implicit-GEMM algorithm)")
        self.ndim = ndim
        self.kernel_size = _expand(ndim, kernel_size)
        self.stride = list(self.kernel_size) if stride is None else _expand(ndim, stride)
        self.padding = _expand(ndim, padding)
        self.dilation = _expand(ndim, dilation)
        self.indice_key, self.subm = indice_key, subm
        self.algo = ConvAlgo.Native if algo is None else algo

    def extra_repr(self):
        s = f"kernel_size={self.kernel_size}, stride={self.stride}"
        if any(self.padding):
            s += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            s += f", dilation={self.dilation}"
        return s + f", algo={self.algo}"

    def forward(self, input):
        out_spatial_shape = get_conv_output_size(input.spatial_shape, self.kernel_size,
                                                 self.stride, self.padding, self.dilation)
        out_indices, pairs, pair_num = get_indice_pairs(
            input.indices, input.batch_size, input.spatial_shape, self.algo, self.kernel_size,
            self.stride, self.padding, self.dilation)
        indice_dict = dict(input.indice_dict)
        if self.indice_key is not None:
            if self.indice_key in indice_dict:
                raise ValueError(f"indice_key {self.indice_key!r} exists")
            indice_dict[self.indice_key] = IndiceData(
                out_indices, input.indices, pairs, pair_num, input.spatial_shape,
                out_spatial_shape, False, self.algo, self.kernel_size, self.stride,
                self.dilation, self.padding)
        features = Fsp.SparseMaxPoolFunction.apply(input.features, pairs, pair_num,
                                                   out_indices.shape[0])
        return SparseConvTensor(features, out_indices, out_spatial_shape, input.batch_size,
                                indice_dict=indice_dict, benchmark=input.benchmark)


class _MaxPool(SparseMaxPool):
    _ndim = 3

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, indice_key=None,
                 algo=None, name=None):
        super().__init__(self._ndim, kernel_size, stride, padding, dilation, indice_key,
                         algo=algo, name=name)


class SparseMaxPool1d(_MaxPool):
    _ndim = 1


class SparseMaxPool2d(_MaxPool):
    _ndim = 2


class SparseMaxPool3d(_MaxPool):
    _ndim = 3
