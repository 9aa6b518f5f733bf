"""torch.optim: optimizers, learning-rate schedulers (`lr_scheduler`) and weight averaging
(`swa_utils`)."""
from .optimizer import Optimizer
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from .stateless import swap_in_optimizer_params_and_state
from . import lr_scheduler, swa_utils

__all__ = ["Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "Muon", "NAdam", "RAdam",
           "RMSprop", "Rprop", "SGD", "SparseAdam", "Optimizer", "lr_scheduler", "swa_utils",
           "swap_in_optimizer_params_and_state"]
