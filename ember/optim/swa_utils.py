"""optim.swa_utils: weight averaging (SWA, EMA), the SWA learning-rate schedule, and update_bn.

AveragedModel keeps a deep copy of a model whose parameters (and, with `use_buffers`, buffers)
are a running average of the model's: by default the equal-weight SWA average
`avg + (p - avg) / (n + 1)`, or an exponential moving average through `get_ema_multi_avg_fn`.
Batch-norm statistics of an averaged model are stale; `update_bn` recomputes them with one pass
over the data.
"""
import itertools
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from copy import deepcopy

import numpy as np

from .._core import dtype as _dtype
from .._bindings.factories import tensor
from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from . import _foreach as F
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _lerp_all_(averaged, current, weight):
    """`torch._foreach_lerp_(averaged, current, weight)` on the tensors' arrays."""
    for a, c in zip(averaged, current):
        x = F.real_view(a)
        F.lerp_(x, F.real_view(c), weight, np.empty_like(x))
        a._bump_version()


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         "range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An update for a list of averages: ema = lerp(ema, p, 1 - decay)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            _lerp_all_(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An update for a list of averages: avg = lerp(avg, p, 1 / (n_averaged + 1))."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            weight = 1 / (num_averaged + 1)
            _lerp_all_(averaged_param_list, current_param_list, float(weight))
        else:
            for a, c in zip(averaged_param_list, current_param_list):
                diff = c - a
                if isinstance(num_averaged, Tensor):
                    a.addcdiv_(diff, num_averaged + 1)
                else:
                    a.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An update for one average: decay * ema + (1 - decay) * p."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """An update for one average: avg + (p - avg) / (n_averaged + 1)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` holding the running average of its parameters.

    `update_parameters(model)` folds the model's current parameters into the average; the first
    call copies them. `avg_fn(avg, p, n)` returns one new average, `multi_avg_fn(avgs, ps, n)`
    updates a list in place; with neither, the SWA average is used. With `use_buffers=True` the
    buffers are averaged too, otherwise they are copied from the model.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        with no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                averaged.append(p_averaged.detach())
                current.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None:
                    for avgs, curs in _group_by_dtype(averaged, current):
                        self.multi_avg_fn(avgs, curs, self.n_averaged)
                else:
                    avg_fn = self.avg_fn or get_swa_avg_fn()
                    for p_averaged, p_model in zip(averaged, current):
                        p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            if not self.use_buffers:
                # buffers (e.g. batch-norm statistics) follow the model, unaveraged
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def _group_by_dtype(averaged, current):
    """PyTorch hands multi_avg_fn one list per (device, dtype), in order of first appearance."""
    groups = {}
    for a, c in zip(averaged, current):
        avgs, curs = groups.setdefault(a.dtype, ([], []))
        avgs.append(a)
        curs.append(c)
    return groups.values()


def _batchnorm_modules(model):
    try:
        from ..nn.modules.batchnorm import _BatchNorm
    except ImportError:  # no batch norm in this build of ember, so none in the model
        return []
    return [m for m in model.modules() if isinstance(m, _BatchNorm)]


def update_bn(loader, model, device=None):
    """Recompute the batch-norm running statistics of `model` with one pass over `loader`:
    reset them, then average over all batches (momentum=None), in train mode."""
    with no_grad():
        momenta = {}
        for module in _batchnorm_modules(model):
            module.reset_running_stats()
            momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to `swa_lr` over `anneal_epochs` epochs (cos or linear), then
    keeps it there; used together with AveragedModel."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=_user_stacklevel())
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # recover the lr the schedule started from, then move `alpha` of the way to swa_lr
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
