"""SparseConvTensor: spconv's sparse tensor -- the features of the active sites, their
coordinates (batch index first), the grid they live in, and the rulebooks built so far, kept
by `indice_key` so later layers (and the inverse convolution) can reuse them."""
import enum

import ember


class ConvAlgo(enum.Enum):
    """spconv's algorithm choice. Every algorithm runs the rulebook's gather-matmul-scatter
    here (spconv's Native); the value is kept so layers sharing a key can be checked."""
    Native = 0
    MaskImplicitGemm = 1
    MaskSplitImplicitGemm = 2


class IndiceData:
    """One convolution's rulebook and the geometry it was built for (an `indice_dict` entry)."""

    def __init__(self, out_indices, indices, indice_pairs, indice_pair_num, spatial_shape,
                 out_spatial_shape, is_subm, algo, ksize, stride, dilation, padding):
        self.out_indices = out_indices
        self.indices = indices
        self.indice_pairs = indice_pairs
        self.indice_pair_num = indice_pair_num
        self.spatial_shape = spatial_shape
        self.out_spatial_shape = out_spatial_shape
        self.is_subm = is_subm
        self.algo = algo
        self.ksize = ksize
        self.stride = stride
        self.dilation = dilation
        self.padding = padding


class SparseConvTensor:
    """`features` (N, C) of the active sites at `indices` (N, 1 + ndim) int32, rows of
    (batch, z, y, x), in a grid of `spatial_shape` for `batch_size` samples."""

    def __init__(self, features, indices, spatial_shape, batch_size, grid=None,
                 voxel_num=None, indice_dict=None, benchmark=False):
        ndim = len(spatial_shape)
        if features.dim() != 2:
            raise ValueError(f"features must be 2-D [num_points, channels], got shape "
                             f"{list(features.shape)}")
        if indices.dim() != 2 or indices.shape[1] != ndim + 1:
            raise ValueError(f"indices must have shape [num_points, {ndim + 1}] (batch index "
                             f"first) for spatial_shape {list(spatial_shape)}, got "
                             f"{list(indices.shape)}")
        if indices.dtype is not ember.int32:
            raise TypeError(f"indices must be int32, got {indices.dtype}")
        if features.shape[0] != indices.shape[0]:
            raise ValueError(f"features has {features.shape[0]} rows but indices has "
                             f"{indices.shape[0]}")
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self._features = features
        self.indices = indices
        self.spatial_shape = [int(v) for v in spatial_shape]
        self.batch_size = batch_size
        self.indice_dict = {} if indice_dict is None else indice_dict
        self.grid = grid
        self.voxel_num = voxel_num
        self.benchmark = benchmark

    def __repr__(self):
        return f"SparseConvTensor[shape={self._features.shape}]"

    @property
    def features(self):
        return self._features

    @features.setter
    def features(self, value):
        raise ValueError("you can't set features directly, use "
                         "'x = x.replace_feature(your_new_features)' to make a new "
                         "SparseConvTensor instead")

    @property
    def shape(self):
        """The shape `dense()` returns: (batch_size, channels, *spatial_shape)."""
        return ember.Size([self.batch_size, self._features.shape[1], *self.spatial_shape])

    @property
    def spatial_size(self):
        size = 1
        for s in self.spatial_shape:
            size *= s
        return size

    def replace_feature(self, feature):
        """The same sites (and rulebooks) with new features, e.g. after a BatchNorm."""
        return SparseConvTensor(feature, self.indices, self.spatial_shape, self.batch_size,
                                self.grid, self.voxel_num, self.indice_dict, self.benchmark)

    def shadow_copy(self):
        return self.replace_feature(self._features)

    def find_indice_pair(self, key):
        return None if key is None else self.indice_dict.get(key)

    @classmethod
    def from_dense(cls, x):
        """From a channels-last dense tensor (batch, *spatial, C): the sites where any channel
        is non-zero, in row-major order (as `x.to_sparse(x.dim() - 1)` lists them)."""
        active = (x != 0).any(-1)
        indices = active.nonzero().int()
        return cls(x[active], indices, list(x.shape[1:-1]), x.shape[0])

    def dense(self, channels_first=True):
        """The dense tensor, zeros at the inactive sites; (batch, C, *spatial) by default,
        (batch, *spatial, C) with channels_first=False. Differentiable in the features."""
        channels = self._features.shape[1]
        out = self._features.new_zeros((self.batch_size, *self.spatial_shape, channels))
        sites = self.indices.long().unbind(1)
        out = out.index_put(sites, self._features)
        if not channels_first:
            return out
        ndim = len(self.spatial_shape)
        return out.permute(0, ndim + 1, *range(1, ndim + 1)).contiguous()

    def __add__(self, other):
        return self.replace_feature(self._features + _features_of(other))

    __radd__ = __add__


def _features_of(x):
    return x.features if isinstance(x, SparseConvTensor) else x
