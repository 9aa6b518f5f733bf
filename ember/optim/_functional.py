"""torch.optim._functional: the functional optimizers in one namespace (each lives beside its
class, `optim.adam.adam` beside `optim.adam.Adam`), and functional SparseAdam."""
import math

from .adadelta import adadelta
from .adagrad import _make_sparse, adagrad
from .adam import adam
from .adamax import adamax
from .adamw import adamw
from .asgd import asgd
from .nadam import nadam
from .radam import radam
from .rmsprop import rmsprop
from .rprop import rprop
from .sgd import sgd

__all__ = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop",
           "rprop", "sgd", "sparse_adam"]


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, eps, beta1, beta2, lr,
                maximize):
    """Functional SparseAdam: Adam on the rows each sparse gradient stores; `state_steps` are
    the step counts as Python ints, already advanced. See `SparseAdam`."""
    for param, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs,
                                                       state_steps):
        grad = -grad if maximize else grad
        grad = grad.coalesce()  # the update is not linear in g: one entry per row
        indices, values = grad._indices(), grad._values()
        if values.numel() == 0:
            continue
        # old <- b * old + (1 - b) * new, written old += (1 - b) * (new - old) on g's rows
        old_avg = exp_avg.sparse_mask(grad)._values()
        avg_update = values.sub(old_avg).mul_(1 - beta1)
        exp_avg.add_(_make_sparse(grad, indices, avg_update))
        old_avg_sq = exp_avg_sq.sparse_mask(grad)._values()
        avg_sq_update = values.pow(2).sub_(old_avg_sq).mul_(1 - beta2)
        exp_avg_sq.add_(_make_sparse(grad, indices, avg_sq_update))

        # the new moments on g's rows, without a second sparse_mask
        numer = avg_update.add_(old_avg)
        denom = avg_sq_update.add_(old_avg_sq).sqrt_().add_(eps)
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param.add_(_make_sparse(grad, indices, -step_size * numer.div_(denom)))
