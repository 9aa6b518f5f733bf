"""ember.spconv: spconv's role -- sparse convolution on SparseConvTensor, with the API of
`spconv.pytorch` (`import ember.spconv as spconv`): submanifold, regular, transposed and inverse
convolutions and max-pool, computed from a rulebook (rulebook.py) by gather, matmul and
scatter-add per kernel offset (ops.py) inside autograd Functions (functional.py)."""
from .core import ConvAlgo, IndiceData, SparseConvTensor
from . import functional, ops  # noqa: F401
from .conv import (SparseConv1d, SparseConv2d, SparseConv3d, SparseConvolution,
                   SparseConvTranspose1d, SparseConvTranspose2d, SparseConvTranspose3d,
                   SparseInverseConv1d, SparseInverseConv2d, SparseInverseConv3d, SubMConv1d,
                   SubMConv2d, SubMConv3d)
from .modules import SparseModule, SparseSequential, ToDense
from .pool import SparseMaxPool, SparseMaxPool1d, SparseMaxPool2d, SparseMaxPool3d

__all__ = ["ConvAlgo", "IndiceData", "SparseConvTensor", "SparseConvolution", "SparseConv1d",
           "SparseConv2d", "SparseConv3d", "SparseConvTranspose1d", "SparseConvTranspose2d",
           "SparseConvTranspose3d", "SparseInverseConv1d", "SparseInverseConv2d",
           "SparseInverseConv3d", "SubMConv1d", "SubMConv2d", "SubMConv3d", "SparseModule",
           "SparseSequential", "ToDense", "SparseMaxPool", "SparseMaxPool1d", "SparseMaxPool2d",
           "SparseMaxPool3d", "functional", "ops"]
