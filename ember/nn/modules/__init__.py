from .module import Module
from .linear import Identity, Linear
from .activation import ReLU, Sigmoid, Tanh, GELU, SiLU, Softmax, LogSoftmax
from .container import Sequential, ModuleList
from .loss import CrossEntropyLoss, NLLLoss, MSELoss
