"""Checks ported from PyTorch's test/optim/test_lrscheduler.py and test/test_optim.py (each
scheduler's learning-rate sequence, chaining, ReduceLROnPlateau modes, state_dict round trips,
argument errors, optimizer param groups and zero_grad), run against torch and ember."""
import math
import warnings

import pytest

from _ported import same

EPOCHS = 20


def _opt(L, lr=0.05, momentum=0.0, groups=2, cls="SGD"):
    L.manual_seed(0)
    ps = [L.nn.Parameter(L.ones(2)) for _ in range(groups)]
    params = [{"params": [ps[0]]}] + [{"params": [p], "lr": lr * (i + 2)} for i, p in enumerate(ps[1:])]
    if cls == "SGD":
        return L.optim.SGD(params, lr=lr, momentum=momentum)
    return getattr(L.optim, cls)(params, lr=lr)


def _sequence(sched, opt, epochs=EPOCHS, metrics=None):
    """lrs seen by the optimizer and the scheduler's get_last_lr, epoch by epoch."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in range(epochs):
            out.append(([g["lr"] for g in opt.param_groups], list(sched.get_last_lr())))
            opt.step()
            if metrics is None:
                sched.step()
            else:
                sched.step(metrics[epoch])
    return out


def _scheduler(make, cls="SGD", momentum=0.0):
    def check(L):
        opt = _opt(L, momentum=momentum, cls=cls)
        return _sequence(make(L, opt), opt)
    return check


SCHEDULERS = {
    "step": lambda L, o: L.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.1),
    "multi_step": lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5, 9], gamma=0.1),
    "multi_step_repeated": lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.1),
    "constant": lambda L, o: L.optim.lr_scheduler.ConstantLR(o, factor=1.0 / 2, total_iters=5),
    "linear": lambda L, o: L.optim.lr_scheduler.LinearLR(o, start_factor=1.0 / 3, end_factor=0.9,
                                                         total_iters=7),
    "exponential": lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "polynomial": lambda L, o: L.optim.lr_scheduler.PolynomialLR(o, total_iters=8, power=2.0),
    "cosine": lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "cosine_warm_restarts": lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.0001),
    "cosine_warm_restarts_t1": lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=4),
    "lambda": lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lr_lambda=[lambda e: 0.95 ** e,
                                                                      lambda e: 1 / (e + 1)]),
    "multiplicative": lambda L, o: L.optim.lr_scheduler.MultiplicativeLR(o, lr_lambda=lambda e: 0.9),
    "one_cycle_cos": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=EPOCHS),
    "one_cycle_linear_three_phase": lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.1, total_steps=EPOCHS, anneal_strategy="linear", three_phase=True, pct_start=0.3),
    "one_cycle_epochs": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, epochs=4,
                                                                     steps_per_epoch=5),
    "cyclic_triangular": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                                    step_size_up=4),
    "cyclic_triangular2": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1,
                                                                     step_size_up=2, step_size_down=3,
                                                                     mode="triangular2"),
    "cyclic_exp_range": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                                   step_size_up=3, mode="exp_range",
                                                                   gamma=0.9),
    "cyclic_scale_fn": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                                  scale_fn=lambda x: 0.5 ** x,
                                                                  scale_mode="iterations"),
    "chained": lambda L, o: L.optim.lr_scheduler.ChainedScheduler([
        L.optim.lr_scheduler.ConstantLR(o, factor=0.1, total_iters=2),
        L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
        L.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5)]),
    "sequential": lambda L, o: L.optim.lr_scheduler.SequentialLR(o, schedulers=[
        L.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=4),
        L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
        L.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)], milestones=[5, 12]),
    "sequential_constant_then_cosine": lambda L, o: L.optim.lr_scheduler.SequentialLR(o, schedulers=[
        L.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3),
        L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=8)], milestones=[3]),
    "two_schedulers_stacked": lambda L, o: (L.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
                                            L.optim.lr_scheduler.MultiStepLR(o, milestones=[4, 7]))[1],
}


def _cyclic_momentum(L):
    opt = _opt(L, momentum=0.9)
    sched = L.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                         base_momentum=0.8, max_momentum=0.9)
    out = []
    for _ in range(10):
        out.append([(g["lr"], g["momentum"]) for g in opt.param_groups])
        opt.step()
        sched.step()
    return out


def _one_cycle_adam_betas(L):
    opt = _opt(L, cls="Adam")
    sched = L.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    out = []
    for _ in range(10):
        out.append([(g["lr"], g["betas"]) for g in opt.param_groups])
        opt.step()
        sched.step()
    return out


def _plateau(mode, threshold_mode, metrics, **kw):
    def check(L):
        opt = _opt(L)
        sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, mode=mode, threshold_mode=threshold_mode, **kw)
        return _sequence(sched, opt, epochs=len(metrics), metrics=metrics), sched.num_bad_epochs, sched.best
    return check


_FALLING = [10 - 0.1 * i for i in range(EPOCHS)]
_FLAT = [10.0] * EPOCHS
_RISING = [1 + 0.01 * i for i in range(EPOCHS)]

PLATEAU = {
    "min_rel": _plateau("min", "rel", _FLAT, patience=2, factor=0.5),
    "min_abs_cooldown": _plateau("min", "abs", _FLAT, patience=1, cooldown=2, factor=0.5, threshold=0.1),
    "min_falling": _plateau("min", "rel", _FALLING, patience=1, threshold=0.05, factor=0.1),
    "max_rel": _plateau("max", "rel", _RISING, patience=2, threshold=0.05, factor=0.5),
    "max_abs": _plateau("max", "abs", _RISING, patience=0, threshold=0.02, factor=0.5),
    "min_lr_list": _plateau("min", "rel", _FLAT, patience=0, factor=0.5, min_lr=[0.02, 0.05]),
    "eps": _plateau("min", "rel", _FLAT, patience=0, factor=0.99, eps=0.01),
}


def _state_dict_round_trip(make):
    def check(L):
        opt = _opt(L)
        sched = make(L, opt)
        _sequence(sched, opt, epochs=7)
        sd = sched.state_dict()
        opt2 = _opt(L)
        for g, g2 in zip(opt.param_groups, opt2.param_groups):
            g2["lr"] = g["lr"]
            g2["initial_lr"] = g.get("initial_lr", g["lr"])
        sched2 = make(L, opt2)
        sched2.load_state_dict(sd)
        plain_keys = sorted(k for k, v in sd.items() if not callable(v))
        return plain_keys, _sequence(sched, opt, epochs=6), _sequence(sched2, opt2, epochs=6)
    return check


def _plateau_state_dict(L):
    opt = _opt(L)
    sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1)
    for m in _FLAT[:5]:
        sched.step(m)
    sd = sched.state_dict()
    sched2 = L.optim.lr_scheduler.ReduceLROnPlateau(_opt(L), patience=7, mode="max")
    sched2.load_state_dict(sd)
    return sorted(k for k in sd if k != "optimizer"), sched2.patience, sched2.mode, sched2.best, \
        sched2.cooldown_counter, sched2.num_bad_epochs, sd["_last_lr"]


def _last_epoch_without_initial_lr(L):
    L.optim.lr_scheduler.StepLR(_opt(L), step_size=2, last_epoch=3)


def _resume_with_initial_lr(L):
    opt = _opt(L)
    for g in opt.param_groups:
        g["initial_lr"] = 0.5
    sched = L.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5, last_epoch=3)
    return _sequence(sched, opt, epochs=6)


def _errors(L):
    S = L.optim.lr_scheduler
    out = []
    for make in [lambda o: S.ConstantLR(o, factor=1.5), lambda o: S.LinearLR(o, start_factor=0),
                 lambda o: S.LinearLR(o, end_factor=2.0), lambda o: S.ExponentialLR(o, gamma=0.5, last_epoch=2),
                 lambda o: S.ReduceLROnPlateau(o, factor=1.0), lambda o: S.ReduceLROnPlateau(o, mode="avg"),
                 lambda o: S.ReduceLROnPlateau(o, threshold_mode="x"),
                 lambda o: S.ReduceLROnPlateau(o, min_lr=[0.1, 0.2, 0.3]),
                 lambda o: S.OneCycleLR(o, max_lr=0.1), lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=0),
                 lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
                 lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
                 lambda o: S.OneCycleLR(o, max_lr=[0.1], total_steps=10),
                 lambda o: S.OneCycleLR(o, max_lr=0.1, epochs=-1, steps_per_epoch=3),
                 lambda o: S.CyclicLR(o, base_lr=0.1, max_lr=0.2, mode="sawtooth"),
                 lambda o: S.CosineAnnealingWarmRestarts(o, T_0=0),
                 lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
                 lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="a"),
                 lambda o: S.LambdaLR(o, lr_lambda=[lambda e: 1.0]),
                 lambda o: S.SequentialLR(o, [S.ConstantLR(o), S.StepLR(o, 2)], milestones=[1, 2]),
                 lambda o: S.SequentialLR(o, [S.ConstantLR(o), S.StepLR(_opt(L), 2)], milestones=[1]),
                 lambda o: S.SequentialLR(o, [], milestones=[]),
                 lambda o: S.ChainedScheduler([S.ConstantLR(o), S.StepLR(_opt(L), 2)]),
                 lambda o: S.StepLR(object(), 2)]:
        try:
            make(_opt(L))
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _cyclic_momentum_without_momentum(L):
    L.optim.lr_scheduler.CyclicLR(_opt(L, cls="Adagrad"), base_lr=0.01, max_lr=0.1)


def _step_with_epoch_warns(L):
    opt = _opt(L)
    sched = L.optim.lr_scheduler.StepLR(opt, step_size=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.step(5)
    return [str(x.category.__name__) for x in w], sched.get_last_lr(), sched.last_epoch


def _step_before_optimizer_warns(L):
    opt = _opt(L)
    sched = L.optim.lr_scheduler.StepLR(opt, step_size=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.step()
    return [x.category.__name__ for x in w], ["optimizer.step()" in str(x.message) for x in w]


def _get_lr_outside_step_warns(L):
    opt = _opt(L)
    sched = L.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lr = sched.get_lr()
    return [x.category.__name__ for x in w], lr


def _lambda_state_dict_callable_objects(L):
    class Mult:
        def __init__(self, k):
            self.k = k

        def __call__(self, e):
            return self.k ** e
    opt = _opt(L)
    sched = L.optim.lr_scheduler.LambdaLR(opt, [Mult(0.5), Mult(0.9)])
    sd = sched.state_dict()
    return sd["lr_lambdas"], sorted(sd)


def _add_param_group(L):
    a, b, c = (L.nn.Parameter(L.ones(2)) for _ in range(3))
    opt = L.optim.Adam([a], lr=0.1, betas=(0.8, 0.9))
    opt.add_param_group({"params": [b], "lr": 0.01})
    opt.add_param_group({"params": (c,), "weight_decay": 0.5})
    out = [sorted(g.items(), key=lambda kv: kv[0]) for g in opt.state_dict()["param_groups"]]
    for make in [lambda: opt.add_param_group({"params": [a]}), lambda: opt.add_param_group([b]),
                 lambda: opt.add_param_group({"params": {a}}), lambda: opt.add_param_group({"lr": 1.0}),
                 lambda: opt.add_param_group({"params": [L.ones(1)]})]:
        try:
            make()
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _zero_grad(L):
    p = L.nn.Parameter(L.ones(3))
    opt = L.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    first = p.grad
    (p * 2).sum().backward()
    opt.zero_grad()
    return first, p.grad


def _zero_grad_detaches_grad_of_grad(L):
    p = L.nn.Parameter(L.ones(3))
    opt = L.optim.SGD([p], lr=0.1)
    (p * p).sum().backward(create_graph=True)
    had = p.grad.requires_grad
    opt.zero_grad(set_to_none=False)
    return had, p.grad.requires_grad, p.grad.grad_fn is None, p.grad


def _optimizer_step_lrs(L):
    """One step of every optimizer on two param groups (test_optim's smoke check)."""
    out = {}
    for name, kw in [("SGD", dict(momentum=0.9, nesterov=True)), ("Adam", dict(amsgrad=True)),
                     ("AdamW", {}), ("Adagrad", dict(lr_decay=0.01)), ("RMSprop", dict(centered=True)),
                     ("Adadelta", {}), ("Adamax", {}), ("NAdam", dict(decoupled_weight_decay=True)),
                     ("RAdam", {}), ("ASGD", {}), ("Rprop", {})]:
        L.manual_seed(0)
        w = L.nn.Parameter(L.randn(3, 2))
        b = L.nn.Parameter(L.randn(2))
        opt = getattr(L.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.01}], lr=0.02,
                                     weight_decay=0.1, **kw)
        for _ in range(3):
            opt.zero_grad()
            (L.ones(1, 3) @ w + b).pow(2).sum().backward()
            opt.step()
        out[name] = (w, b)
    return out


CHECKS = {f"sched_{k}": _scheduler(v) for k, v in SCHEDULERS.items()}
CHECKS.update({f"plateau_{k}": v for k, v in PLATEAU.items()})
CHECKS.update({f"state_dict_{k}": _state_dict_round_trip(SCHEDULERS[k])
               for k in ["step", "multi_step", "cosine", "cosine_warm_restarts", "one_cycle_cos",
                         "cyclic_triangular2", "linear", "polynomial", "chained", "sequential"]})
CHECKS.update({
    "cyclic_momentum": _cyclic_momentum,
    "one_cycle_adam_betas": _one_cycle_adam_betas,
    "plateau_state_dict": _plateau_state_dict,
    "last_epoch_without_initial_lr": (_last_epoch_without_initial_lr,
                                      "param 'initial_lr' is not specified in param_groups\\[0\\] when resuming"),
    "resume_with_initial_lr": _resume_with_initial_lr,
    "argument_errors": _errors,
    "cyclic_momentum_without_momentum": (_cyclic_momentum_without_momentum,
                                         "optimizer must support momentum or beta1 with `cycle_momentum` option"),
    "step_with_epoch_warns": _step_with_epoch_warns,
    "step_before_optimizer_warns": _step_before_optimizer_warns,
    "get_lr_outside_step_warns": _get_lr_outside_step_warns,
    "lambda_state_dict_callable_objects": _lambda_state_dict_callable_objects,
    "add_param_group": _add_param_group,
    "zero_grad": _zero_grad,
    "zero_grad_detaches": _zero_grad_detaches_grad_of_grad,
    "optimizer_steps": _optimizer_step_lrs,
})


# ---- optimizer configurations (test_optim's optim_db inputs) ----------------------------------
OPTIM_CONFIGS = [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True, foreach=True)),
    ("SGD", dict(lr=0.1, fused=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, foreach=True, betas=(0.8, 0.9))),
    ("Adam", dict(lr=0.01, fused=True, amsgrad=True)),
    ("Adam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.3, maximize=True)),
    ("AdamW", dict(lr=0.01, fused=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, maximize=True, foreach=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, maximize=True, foreach=True)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True, foreach=True)),
    ("NAdam", dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, decoupled_weight_decay=True, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.05, decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, maximize=True, foreach=True)),
    ("ASGD", dict(lr=0.05, t0=1, lambd=0.1, alpha=0.5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, maximize=True, foreach=True)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("Rprop", dict(lr=0.05, foreach=True)),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.05, maximize=True, foreach=False)),
]


def _optim_config(name, kw):
    def check(L):
        L.manual_seed(0)
        w = L.nn.Parameter(L.randn(3, 2))
        b = L.nn.Parameter(L.randn(2))
        opt = getattr(L.optim, name)([w, b], **kw)
        for step in range(4):
            opt.zero_grad()
            (L.sin(L.ones(1, 3) * (step + 1)) @ w + b).pow(2).sum().backward()
            opt.step()
        state = opt.state_dict()["state"][0]
        return w, b, sorted(state), {k: v for k, v in state.items() if k != "step"}, \
            float(state["step"]) if "step" in state else None
    return check


def _optim_lr_tensor(L):
    p = L.nn.Parameter(L.ones(2))
    opt = L.optim.Adam([p], lr=L.tensor(0.01))
    p.sum().backward()
    opt.step()
    return p, type(opt.param_groups[0]["lr"]).__name__


def _optim_errors(L):
    p = L.nn.Parameter(L.ones(1))
    O = L.optim
    out = []
    for make in [lambda: O.SGD([p], lr=0.1, momentum=-1), lambda: O.SGD([p], lr=0.1, nesterov=True),
                 lambda: O.SGD([p], lr=0.1, weight_decay=-1), lambda: O.Adam([p], eps=-1),
                 lambda: O.Adam([p], betas=(0.9, 1.0)), lambda: O.Adam([p], weight_decay=-0.1),
                 lambda: O.Adam([p], lr=L.tensor([0.1, 0.2])), lambda: O.Adam([p], foreach=True, fused=True),
                 lambda: O.AdamW([p], lr=-0.1), lambda: O.Adagrad([p], lr_decay=-1),
                 lambda: O.Adagrad([p], initial_accumulator_value=-1), lambda: O.RMSprop([p], alpha=-1),
                 lambda: O.RMSprop([p], momentum=-1), lambda: O.Adadelta([p], rho=1.5),
                 lambda: O.Rprop([p], etas=(1.5, 1.2)), lambda: O.NAdam([p], momentum_decay=-0.1),
                 lambda: O.ASGD([p], weight_decay=-1), lambda: O.Adamax([p], betas=(1.0, 0.9)),
                 lambda: O.SparseAdam([p], betas=(0.9, 1.5)), lambda: O.LBFGS([p, p]),
                 lambda: O.LBFGS([{"params": [p]}, {"params": [L.nn.Parameter(L.ones(1))]}])]:
        try:
            make()
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _optim_state_dict_cross_load(L):
    """An optimizer's state_dict loads into a fresh one, which then steps identically."""
    out = []
    for name, kw in [("Adam", dict(amsgrad=True)), ("RMSprop", dict(momentum=0.5, centered=True)),
                     ("Rprop", {}), ("ASGD", {}), ("Adagrad", {}), ("NAdam", {}), ("RAdam", {})]:
        L.manual_seed(0)
        w = L.nn.Parameter(L.randn(3))
        opt = getattr(L.optim, name)([w], lr=0.01, **kw)
        w2 = L.nn.Parameter(w.detach().clone())
        opt2 = getattr(L.optim, name)([w2], lr=0.5, **kw)
        for o, p in [(opt, w)]:
            for _ in range(2):
                o.zero_grad()
                (p * p).sum().backward()
                o.step()
        with L.no_grad():
            w2.copy_(w)
        opt2.load_state_dict(opt.state_dict())
        for o, p in [(opt, w), (opt2, w2)]:
            o.zero_grad()
            (p * p).sum().backward()
            o.step()
        out.append((w, w2, opt2.param_groups[0]["lr"]))
    return out


def _sparse_adam(L):
    emb = L.nn.Embedding(5, 2, sparse=True)
    with L.no_grad():
        emb.weight.copy_(L.arange(10.).view(5, 2))
    opt = L.optim.SparseAdam(emb.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        emb(L.tensor([1, 3, 3])).pow(2).sum().backward()
        opt.step()
    return emb.weight


CHECKS.update({f"optim_{name}_{i}": _optim_config(name, kw) for i, (name, kw) in enumerate(OPTIM_CONFIGS)})
CHECKS.update({"optim_lr_tensor": _optim_lr_tensor, "optim_errors": _optim_errors,
               "optim_state_dict_cross_load": _optim_state_dict_cross_load, "optim_sparse_adam": _sparse_adam})


def _swa_utils(L):
    """SWALR's annealing sequence, AveragedModel's running average (SWA and EMA) and
    update_bn (test_optim's TestSWAUtils)."""
    from importlib import import_module
    swa = import_module(L.__name__ + ".optim.swa_utils")
    out = []
    for strategy in ["cos", "linear"]:
        opt = _opt(L)
        sched = swa.SWALR(opt, swa_lr=0.01, anneal_epochs=4, anneal_strategy=strategy)
        out.append(_sequence(sched, opt, epochs=7))
    L.manual_seed(0)
    net = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
    avg = swa.AveragedModel(net)
    ema = swa.AveragedModel(net, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9))
    for i in range(3):
        with L.no_grad():
            for p in net.parameters():
                p.add_(0.5 * (i + 1))
        avg.update_parameters(net)
        ema.update_parameters(net)
    loader = [L.ones(4, 3) * k for k in range(3)]
    swa.update_bn(loader, avg)
    out.append((list(avg.parameters()), list(ema.parameters()), avg.n_averaged, avg.module[1].running_mean,
                avg.module[1].running_var, sorted(avg.state_dict())))
    out.append(_errs_lr(L, [lambda: swa.SWALR(_opt(L), swa_lr=0.1, anneal_strategy="exp"),
                            lambda: swa.SWALR(_opt(L), swa_lr=0.1, anneal_epochs=-1),
                            lambda: swa.SWALR(_opt(L), swa_lr=[0.1, 0.2, 0.3])]))
    return out


def _errs_lr(L, makes):
    out = []
    for make in makes:
        try:
            make()
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


CHECKS["swa_utils"] = _swa_utils


@pytest.mark.parametrize("name", list(CHECKS))
def test_lr_scheduler(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)
