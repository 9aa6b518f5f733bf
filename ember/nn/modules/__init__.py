from .module import Module
from .linear import Identity, Linear
from .activation import ReLU, Sigmoid, Tanh, GELU, SiLU, Softmax, LogSoftmax
from .container import (Container, Sequential, ModuleList, ModuleDict, ParameterList,
                        ParameterDict)
from .loss import (L1Loss, MSELoss, CrossEntropyLoss, NLLLoss, NLLLoss2d, PoissonNLLLoss,
                   GaussianNLLLoss, KLDivLoss, BCELoss, BCEWithLogitsLoss, HingeEmbeddingLoss,
                   MultiLabelMarginLoss, SmoothL1Loss, HuberLoss, SoftMarginLoss,
                   MultiLabelSoftMarginLoss, CosineEmbeddingLoss, MarginRankingLoss,
                   MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss,
                   LinearCrossEntropyLoss)
from .linear_cross_entropy_options import LinearCrossEntropyOptions
# ---- convolution, normalization, pooling, dropout, embedding layers (issue 3d)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .sync_batchnorm import SyncBatchNorm
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .sparse import Embedding, EmbeddingBag
# ---- attention and transformer layers (issue 4)
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerEncoder, TransformerDecoder,
                          TransformerEncoderLayer, TransformerDecoderLayer)
# ---- the remaining layers (issue 4, part 2)
from .linear import Bilinear
from .activation import (Threshold, RReLU, Hardtanh, ReLU6, Hardsigmoid, Mish, Hardswish, ELU,
                         CELU, SELU, GLU, Hardshrink, Softshrink, LeakyReLU, LogSigmoid, Softplus,
                         PReLU, Softsign, Tanhshrink, Softmin, Softmax2d)
from .normalization import LocalResponseNorm, CrossMapLRN2d, LayerNorm, GroupNorm, RMSNorm
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .pooling import (MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d,
                      FractionalMaxPool2d, FractionalMaxPool3d)
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .padding import (ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                      CircularPad2d, CircularPad3d)
from .distance import PairwiseDistance, CosineSimilarity
from .channelshuffle import ChannelShuffle
from .fold import Fold, Unfold
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .lazy import (LazyModuleMixin, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d,
                   LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d,
                   LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
                   LazyInstanceNorm3d)
from . import utils  # noqa: E402  (torch.nn.modules.utils)

# the module classes and LinearCrossEntropyOptions, as PyTorch's torch.nn.modules lists them
# (its test database walks this)
__all__ = sorted([name for name, value in list(globals().items())
                  if isinstance(value, type) and issubclass(value, Module) and name[0] != "_"]
                 + ["LinearCrossEntropyOptions"])
