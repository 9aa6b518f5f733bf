from .module import Module
from .linear import Identity, Linear
from .activation import ReLU, Sigmoid, Tanh, GELU, SiLU, Softmax, LogSoftmax
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .loss import CrossEntropyLoss, NLLLoss, MSELoss
# ---- convolution, normalization, pooling, dropout, embedding layers (issue 3d)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .sparse import Embedding, EmbeddingBag
