"""optim.lr_scheduler: learning-rate schedules that rewrite `group["lr"]` once per step().

An LRScheduler remembers each group's starting lr (`initial_lr` in the group, `base_lrs` here)
and a counter `last_epoch`; `step()` advances the counter and writes `get_lr()` into every group.
Most schedules are written "chainably", as a factor on the group's *current* lr, so several
schedulers can act on one optimizer; `_get_closed_form_lr` gives the lr straight from `base_lrs`
and is used when `step(epoch)` jumps to an epoch.

The constructor already takes one step (`_initial_step`, with `_is_initial` set) so that the
optimizer starts at the schedule's first value. It also wraps the optimizer's `step` to notice
whether it ran, to warn, as PyTorch does, when `scheduler.step()` comes first.

State dicts hold every attribute except the optimizer (and the functions, which don't pickle),
with PyTorch's attribute names, so they load across the two libraries.
"""
import math
import types
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from bisect import bisect_right
from collections import Counter
from functools import partial, wraps
from weakref import ref

from .._core.tensor import Tensor
from .optimizer import Optimizer, _to_scalar

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")


def _format_param(name, optimizer, param):
    """One value per param group: a list/tuple of the right length, or one value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def _param_groups_val_list(optimizer, key):
    return [group[key].clone() if isinstance(group[key], Tensor) else group[key]
            for group in optimizer.param_groups]


def _update_param_group_val(param_group, key, val):
    """Set group[key]; a tensor lr is filled in place so that it keeps its identity."""
    if isinstance(param_group[key], Tensor):
        param_group[key].fill_(_to_scalar(val))
    else:
        param_group[key] = val


class _enable_get_lr_call:
    """Marks get_lr() calls made by step(), so a user's direct call can be warned about."""

    def __init__(self, o):
        self.o = o

    def __enter__(self):
        self.o._get_lr_called_within_step = True
        return self

    def __exit__(self, *exc):
        self.o._get_lr_called_within_step = False


class _initial_mode:
    """Marks the constructor's step, where chainable schedules keep the current lr."""

    def __init__(self, o):
        self.o = o

    def __enter__(self):
        self.o._is_initial = True

    def __exit__(self, *exc):
        self.o._is_initial = False


def _warn_get_lr_called_within_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=_user_stacklevel())


class LRScheduler:
    """Base class: adjusts each param group's lr once per `step()`."""
    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. You're "
                        "trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n2. You're using last_epoch >= 0 for a fresh "
                        "training run (not recommended)")
        self.base_lrs = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_optimizer_step()
        self._initial_step()

    def _patch_optimizer_step(self):
        """Wrap the optimizer's bound `step` to record `_opt_called` (see the order warning)."""
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = ref(opt)
        func = opt.step.__func__

        @wraps(func)
        def wrapper(*args, **kwargs):
            o = opt_ref()
            o._opt_called = True
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper

    def _initial_step(self):
        self._step_count = 0
        with _initial_mode(self):
            self.step()

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The lr of every param group, as last set by this scheduler."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def step(self, epoch=None):
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=_user_stacklevel())
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                    "1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=_user_stacklevel())
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=_user_stacklevel())
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        with _enable_get_lr_call(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        for param_group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of LRScheduler."""


def _functions_state(functions):
    """For a state dict: only callable objects' __dict__s are kept (plain functions and lambdas
    do not pickle), None for the rest."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in functions]


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: driven by one function of the epoch per param group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        self._check_lambdas()
        super().__init__(optimizer, last_epoch)

    def _check_lambdas(self):
        pass

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = _functions_state(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict):
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr * lr_lambda(epoch)."""

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [base_lr * lmbda(self.last_epoch)
                for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr = lr * lr_lambda(epoch), every step after the first."""

    def _check_lambdas(self):
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * lmbda(self.last_epoch)
                for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """lr = lr * gamma every `step_size` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = lr * gamma at each milestone (gamma**k for a milestone listed k times)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor until epoch `total_iters`, then initial_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes linearly from initial_lr * start_factor to initial_lr * end_factor over
    `total_iters` epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        factor = 1.0 + delta / (self.total_iters * self.start_factor
                                + (self.last_epoch - 1) * delta)
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = lr * gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


def _check_schedulers(cls_name, optimizer, schedulers):
    for idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{cls_name} at index {idx} should have `optimizer` as its "
                            "attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{cls_name} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {idx} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{cls_name} expects all schedulers to belong to the same "
                             f"optimizer, but got scheduler {scheduler.__class__.__name__} at "
                             f"index {idx} has {scheduler.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


def _nested_state_dict(scheduler):
    state = {k: v for k, v in scheduler.__dict__.items() if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state


def _nested_load_state_dict(scheduler, state_dict):
    schedulers = state_dict.pop("_schedulers")
    scheduler.__dict__.update(state_dict)
    state_dict["_schedulers"] = schedulers
    for idx, s in enumerate(schedulers):
        scheduler._schedulers[idx].load_state_dict(s)


class SequentialLR(LRScheduler):
    """Runs `schedulers[i]` between milestones[i - 1] and milestones[i]; at a milestone the next
    scheduler starts from its epoch 0."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but "
                             "got no scheduler.")
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The schedulers' constructors each took a step; undo them and start the first one.
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None):
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict):
        _nested_load_state_dict(self, state_dict)


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, then constant."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from initial_lr down to eta_min over T_max epochs (and back up,
    periodically, if stepped further), in PyTorch's recursive form."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in the list, one after the other, on each step()."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def state_dict(self):
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict):
        _nested_load_state_dict(self, state_dict)


class ReduceLROnPlateau(LRScheduler):
    """lr = max(lr * factor, min_lr) after `patience` epochs without improvement of the metric
    passed to step(metrics)."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=_user_stacklevel())
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # ignore any bad epochs in cooldown
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to "
                    "a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, param_group in enumerate(self.optimizer.param_groups):
            old_lr = float(param_group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(param_group, "lr", new_lr)

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


def _set_momentum(use_beta1, group, momentum):
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _init_momentum_cycle(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """For CyclicLR and OneCycleLR: cycle `momentum` (or Adam's beta1) inversely to the lr."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for m_momentum, b_momentum, group in zip(max_momentums, base_momentums,
                                                 optimizer.param_groups):
            _set_momentum(scheduler.use_beta1, group, m_momentum)
            group["max_momentum"] = m_momentum
            group["base_momentum"] = b_momentum
    return base_momentums, max_momentums


class CyclicLR(LRScheduler):
    """lr cycles between base_lr and max_lr (triangular, triangular2, exp_range, or a custom
    scale_fn); momentum cycles the other way. Stepped per batch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _update_param_group_val(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _init_momentum_cycle(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x):
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x):
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma, x):
        return gamma ** x

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums,
                                            self.max_momentums):
                _set_momentum(self.use_beta1, group,
                              max_m - (max_m - base_m) * scale_factor * scale)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = _functions_state([fn])[0] if fn is not None else None
        return state

    def load_state_dict(self, state_dict):
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from initial_lr to eta_min over T_i epochs, restarting with
    T_i = T_0 * T_mult**k. step() accepts fractional epochs."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _enable_get_lr_call(self):
            for param_group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr rises from max_lr / div_factor to max_lr over pct_start of the
    steps, then anneals to initial_lr / final_div_factor (three_phase: back to the initial lr
    first); momentum moves the other way. Stepped per batch, `total_steps` times."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")

        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_momentum, "end_momentum": end_momentum}

        if three_phase:
            self._schedule_phases = [
                phase(float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr",
                      "max_momentum", "base_momentum"),
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                      "base_momentum", "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                      "max_momentum")]
        else:
            self._schedule_phases = [
                phase(float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr",
                      "max_momentum", "base_momentum"),
                phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                      "max_momentum")]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, *args, **kwargs):
        kind = getattr(self, "_anneal_func_type", None)
        if kind is None:  # a state dict from before PyTorch 2.2 holds the function itself
            return self.anneal_func(*args, **kwargs)
        if kind == "cos":
            return self._annealing_cos(*args, **kwargs)
        if kind == "linear":
            return self._annealing_linear(*args, **kwargs)
        raise ValueError(f"Unknown _anneal_func_type: {kind}")

    @staticmethod
    def _annealing_cos(start, end, pct):
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    computed_lr = self._anneal_func(group[phase["start_lr"]],
                                                    group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        computed_momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(computed_lr)
            if self.cycle_momentum:
                _set_momentum(self.use_beta1, group, computed_momentum)
        return lrs
