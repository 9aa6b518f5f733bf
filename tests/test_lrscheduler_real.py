"""Learning-rate schedulers checked against PyTorch, as PyTorch's test/optim/test_lrscheduler.py
drives them: each test runs the same code with `T` = ember and `T` = torch and compares what
comes out -- every param group's hyper-parameters after every step (types and exact values,
float or tensor lrs, SGD's momentum or Adam's beta1), the state dict, and the warnings'
categories and messages."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def both(fn):
    """fn(T) for ember and for torch."""
    return fn(ember), fn(torch)


def plain(v):
    """A value with tensors replaced by (dtype name, values) and floats kept exact."""
    if isinstance(v, (ember.Tensor, torch.Tensor)):
        return "tensor", str(v.dtype).split(".")[-1], v.tolist()
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if callable(v):
        return "<callable>"
    return type(v).__name__, v


def _groups(opt):
    return [plain({k: v for k, v in g.items() if k != "params"}) for g in opt.param_groups]


SCHEDULERS = {
    "StepLR": lambda T, o: T.optim.lr_scheduler.StepLR(o, 3, gamma=0.5),
    "MultiStepLR": lambda T, o: T.optim.lr_scheduler.MultiStepLR(o, [2, 2, 5], gamma=0.5),
    "LinearLR": lambda T, o: T.optim.lr_scheduler.LinearLR(o, 0.25, 0.75, total_iters=4),
    "PolynomialLR": lambda T, o: T.optim.lr_scheduler.PolynomialLR(o, total_iters=4, power=2.0),
    "CosineAnnealingWarmRestarts": lambda T, o: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001),
    "CyclicLR": lambda T, o: T.optim.lr_scheduler.CyclicLR(
        o, [0.01, 0.02], [0.1, 0.2], step_size_up=2, step_size_down=3, mode="triangular2"),
    "OneCycleLR": lambda T, o: T.optim.lr_scheduler.OneCycleLR(
        o, [0.1, 0.2], epochs=3, steps_per_epoch=4, three_phase=True, anneal_strategy="linear"),
    "SequentialLR": lambda T, o: T.optim.lr_scheduler.SequentialLR(
        o, [T.optim.lr_scheduler.ConstantLR(o, 0.5, 2), T.optim.lr_scheduler.StepLR(o, 2)],
        milestones=[2]),
    "ChainedScheduler": lambda T, o: T.optim.lr_scheduler.ChainedScheduler(
        [T.optim.lr_scheduler.LinearLR(o, 0.5, total_iters=2),
         T.optim.lr_scheduler.ExponentialLR(o, 0.9)], optimizer=o),
    "SWALR": lambda T, o: T.optim.swa_utils.SWALR(o, swa_lr=[0.01, 0.02], anneal_epochs=3,
                                                  anneal_strategy="linear"),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("lr", ["float", "tensor"])
def test_every_step_matches_torch(name, optimizer, lr):
    """The whole param-group state after each of ten steps, then the state dict."""
    def run(T):
        T.manual_seed(0)
        params = [T.nn.Parameter(T.ones(2)) for _ in range(2)]
        as_lr = T.tensor if lr == "tensor" else float
        extra = {"momentum": 0.9} if optimizer == "SGD" else {}
        opt = getattr(T.optim, optimizer)(
            [{"params": [p], "lr": as_lr(0.05 * (i + 1))} for i, p in enumerate(params)],
            lr=as_lr(0.05), **extra)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scheduler = SCHEDULERS[name](T, opt)
            seen = [_groups(opt)]
            for _ in range(10):
                opt.step()
                scheduler.step()
                seen.append((_groups(opt), plain(scheduler.get_last_lr())))
        return (seen, plain(scheduler.state_dict()),
                [(w.category.__name__, str(w.message)) for w in caught])
    e, t = both(run)
    assert e == t


@pytest.mark.parametrize("epochs", [[0, 1, 2, 5, 3, 3, 8, 1], [2.5, 0.5, 7]])
@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "LinearLR", "PolynomialLR",
                                  "CosineAnnealingWarmRestarts"])
def test_step_to_an_epoch_matches_torch(name, epochs):
    """step(epoch) jumps by the closed form (fractional epochs too) and warns it is deprecated,
    except in CosineAnnealingWarmRestarts, where an epoch argument is the documented use."""
    def run(T):
        params = [T.nn.Parameter(T.ones(2)) for _ in range(2)]
        opt = T.optim.SGD([{"params": [p]} for p in params], lr=T.tensor(0.1))
        scheduler = SCHEDULERS[name](T, opt)
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in epochs:
                opt.step()
                scheduler.step(epoch)
                seen.append((scheduler.last_epoch, _groups(opt)))
        return seen, [(w.category.__name__, str(w.message)) for w in caught]
    e, t = both(run)
    assert len(e[1]) == (0 if name == "CosineAnnealingWarmRestarts" else len(epochs))
    assert e == t


def test_averaged_model_modules_keep_duplicates():
    """Module.modules(remove_duplicate=False) yields a shared submodule once per place it is
    registered (AveragedModel's copy of a model that uses one layer twice)."""
    def run(T):
        layer = T.nn.Linear(2, 2)
        model = T.optim.swa_utils.AveragedModel(T.nn.Sequential(layer, T.nn.ReLU(), layer))
        return ([type(m).__name__ for m in model.modules()],
                [type(m).__name__ for m in model.modules(remove_duplicate=False)])
    e, t = both(run)
    assert e == t
    assert e[1].count("Linear") == 2 and e[0].count("Linear") == 1
