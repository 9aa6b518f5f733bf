"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: every schedule gives the same
learning rates (and momenta), step for step, for 100 steps; state dicts cross both ways; the
same warnings are raised."""
import warnings

import numpy as np
import pytest
import torch

import ember
from test_optim import both_raise, from_plain, to_plain

STEPS = 100


def sgd(lib):
    a, b = lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)


def adam(lib):
    return lib.optim.Adam([lib.ones(2, requires_grad=True)], lr=0.01)


def S(lib):
    return lib.optim.lr_scheduler


class Scale:
    """A callable object (not a function): its __dict__ goes into the state dict."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return self.factor ** x


SCHEDULES = {
    "LambdaLR": (sgd, lambda lib, o: S(lib).LambdaLR(o, [lambda e: 0.95 ** e,
                                                          lambda e: 1 / (e + 1)])),
    "LambdaLR-object": (sgd, lambda lib, o: S(lib).LambdaLR(o, Scale(0.97))),
    "MultiplicativeLR": (sgd, lambda lib, o: S(lib).MultiplicativeLR(o, lambda e: 0.97)),
    "StepLR": (sgd, lambda lib, o: S(lib).StepLR(o, step_size=7, gamma=0.5)),
    "MultiStepLR": (sgd, lambda lib, o: S(lib).MultiStepLR(o, [10, 30, 30, 70], gamma=0.3)),
    "ConstantLR": (sgd, lambda lib, o: S(lib).ConstantLR(o, factor=0.5, total_iters=20)),
    "LinearLR": (sgd, lambda lib, o: S(lib).LinearLR(o, start_factor=0.2, end_factor=0.9,
                                                     total_iters=30)),
    "ExponentialLR": (sgd, lambda lib, o: S(lib).ExponentialLR(o, gamma=0.97)),
    "PolynomialLR": (sgd, lambda lib, o: S(lib).PolynomialLR(o, total_iters=60, power=2.0)),
    "CosineAnnealingLR": (sgd, lambda lib, o: S(lib).CosineAnnealingLR(o, T_max=30,
                                                                       eta_min=0.001)),
    "CosineAnnealingWarmRestarts": (sgd, lambda lib, o: S(lib).CosineAnnealingWarmRestarts(
        o, T_0=10, T_mult=2, eta_min=1e-4)),
    "CyclicLR-triangular": (sgd, lambda lib, o: S(lib).CyclicLR(o, 0.01, [0.1, 0.2],
                                                                step_size_up=10)),
    "CyclicLR-triangular2": (sgd, lambda lib, o: S(lib).CyclicLR(
        o, 0.01, 0.1, step_size_up=7, step_size_down=4, mode="triangular2",
        base_momentum=[0.8, 0.7], max_momentum=0.95)),
    "CyclicLR-exp_range": (sgd, lambda lib, o: S(lib).CyclicLR(
        o, 0.01, 0.1, step_size_up=6, mode="exp_range", gamma=0.98, cycle_momentum=False)),
    "CyclicLR-scale_fn": (adam, lambda lib, o: S(lib).CyclicLR(
        o, 0.001, 0.01, step_size_up=5, scale_fn=Scale(0.99), scale_mode="iterations")),
    "OneCycleLR-cos": (sgd, lambda lib, o: S(lib).OneCycleLR(o, max_lr=[0.1, 0.2],
                                                             total_steps=STEPS + 1)),
    "OneCycleLR-linear-three_phase": (adam, lambda lib, o: S(lib).OneCycleLR(
        o, max_lr=0.01, epochs=10, steps_per_epoch=11, pct_start=0.25,
        anneal_strategy="linear", three_phase=True, div_factor=10.0)),
    "SequentialLR": (sgd, lambda lib, o: S(lib).SequentialLR(
        o, [S(lib).LinearLR(o, start_factor=0.1, total_iters=10),
            S(lib).ExponentialLR(o, gamma=0.9), S(lib).StepLR(o, step_size=5)],
        milestones=[20, 50])),
    "ChainedScheduler": (sgd, lambda lib, o: S(lib).ChainedScheduler(
        [S(lib).ConstantLR(o, factor=0.3, total_iters=15), S(lib).ExponentialLR(o, gamma=0.98),
         S(lib).CosineAnnealingLR(o, T_max=25)])),
}


def momenta(opt):
    return [(g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def run(lib, name, steps=STEPS, before=None):
    make_opt, make_sched = SCHEDULES[name]
    opt = make_opt(lib)
    sched = make_sched(lib, opt)
    history = [(sched.get_last_lr(), momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        history.append((sched.get_last_lr(), momenta(opt)))
    return opt, sched, history


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_equals_torch(name):
    *_, history_e = run(ember, name)
    *_, history_t = run(torch, name)
    assert history_e == history_t


@pytest.mark.parametrize("name", SCHEDULES)
@pytest.mark.parametrize("direction", ["torch_to_ember", "ember_to_torch"])
def test_state_dict_crosses_libraries(name, direction):
    src, dst = (torch, ember) if direction == "torch_to_ember" else (ember, torch)
    opt_src, sched_src, _ = run(src, name, steps=40)
    sched_state = to_plain(sched_src.state_dict())
    opt_dst, sched_dst, _ = run(dst, name, steps=0)
    assert sorted(to_plain(sched_dst.state_dict())) == sorted(sched_state)
    sched_dst.load_state_dict(from_plain(dst, sched_state))
    opt_dst.load_state_dict(from_plain(dst, to_plain(opt_src.state_dict())))
    assert to_plain(sched_dst.state_dict()) == sched_state
    for _ in range(STEPS - 40):
        for opt, sched in ((opt_src, sched_src), (opt_dst, sched_dst)):
            opt.step()
            sched.step()
        assert sched_dst.get_last_lr() == sched_src.get_last_lr()
        assert momenta(opt_dst) == momenta(opt_src)


PLATEAU = [dict(), dict(mode="max", factor=0.5, patience=3, threshold=0.1,
                        threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.002]),
           dict(patience=0, threshold=0.0, min_lr=0.02, eps=1e-3)]


@pytest.mark.parametrize("kw", PLATEAU)
def test_reduce_lr_on_plateau(kw):
    metrics = np.concatenate([np.linspace(1, 0.5, 20), np.full(30, 0.5),
                              np.linspace(0.5, 0.7, 20), np.full(30, 0.7)])
    results = []
    for lib in (ember, torch):
        opt = sgd(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        lrs = []
        for m in metrics:
            opt.step()
            sched.step(float(m))
            lrs.append(sched.get_last_lr())
        results.append((lrs, to_plain(sched.state_dict())))
    assert results[0] == results[1]


def test_reduce_lr_on_plateau_state_dict_crosses():
    opts = {lib: sgd(lib) for lib in (torch, ember)}
    scheds = {lib: lib.optim.lr_scheduler.ReduceLROnPlateau(opts[lib], patience=2)
              for lib in opts}
    for m in [1.0, 0.9, 0.9, 0.9]:
        scheds[torch].step(m)
    scheds[ember].load_state_dict(to_plain(scheds[torch].state_dict()))
    opts[ember].load_state_dict(from_plain(ember, to_plain(opts[torch].state_dict())))
    for m in [0.9, 0.9, 0.9, 0.95, 0.8]:
        for lib in scheds:
            scheds[lib].step(m)
        assert scheds[ember].get_last_lr() == scheds[torch].get_last_lr()


def test_closed_form_when_stepping_to_an_epoch():
    for name in ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
                 "PolynomialLR", "CosineAnnealingLR"]:
        lrs = []
        for lib in (ember, torch):
            make_opt, make_sched = SCHEDULES[name]
            opt = make_opt(lib)
            sched = make_sched(lib, opt)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for epoch in [3, 17, 42, 8]:
                    opt.step()
                    sched.step(epoch)
                    lrs.append(sched.get_last_lr())
            assert any("epoch parameter" in str(w.message) for w in caught)
        assert lrs[:4] == lrs[4:]


def test_warm_restarts_with_fractional_epochs():
    lrs = {}
    for lib in (ember, torch):
        opt = sgd(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2)
        lrs[lib] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(60):
                opt.step()
                sched.step(i / 4)
                lrs[lib].append(sched.get_last_lr())
    assert lrs[ember] == lrs[torch]


def caught_messages(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_warnings_match_torch():
    def scheduler_first(lib):
        opt = sgd(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 3)
        sched.step()

    def get_lr_directly(lib):
        sched = lib.optim.lr_scheduler.ExponentialLR(sgd(lib), 0.9)
        sched.get_lr()

    def step_overridden(lib):
        opt = sgd(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 3)
        opt.step = lambda: None
        sched.step()

    def right_order(lib):
        opt = sgd(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 3)
        opt.step()
        sched.step()

    for fn in (scheduler_first, get_lr_directly, step_overridden, right_order):
        messages = caught_messages(lambda: fn(torch))
        assert caught_messages(lambda: fn(ember)) == messages
        assert bool(messages) == (fn is not right_order)


def test_errors_match_torch():
    S_ = S
    both_raise(lambda lib: S_(lib).StepLR("not an optimizer", 3))
    both_raise(lambda lib: S_(lib).StepLR(sgd(lib), 3, last_epoch=5))
    both_raise(lambda lib: S_(lib).LambdaLR(sgd(lib), [lambda e: 1.0]))
    both_raise(lambda lib: S_(lib).ConstantLR(sgd(lib), factor=2.0))
    both_raise(lambda lib: S_(lib).LinearLR(sgd(lib), start_factor=0))
    both_raise(lambda lib: S_(lib).CyclicLR(sgd(lib), 0.1, 1.0, mode="nope"))
    both_raise(lambda lib: S_(lib).CyclicLR(lib.optim.Adagrad([lib.ones(1)]), 0.1, 1.0))
    both_raise(lambda lib: S_(lib).OneCycleLR(sgd(lib), 0.1))
    both_raise(lambda lib: S_(lib).OneCycleLR(sgd(lib), 0.1, total_steps=10, pct_start=1))
    both_raise(lambda lib: S_(lib).CosineAnnealingWarmRestarts(sgd(lib), T_0=0))
    both_raise(lambda lib: S_(lib).ReduceLROnPlateau(sgd(lib), factor=1.0))
    both_raise(lambda lib: S_(lib).ReduceLROnPlateau(sgd(lib), mode="middle"))

    def too_many_steps(lib):
        opt = sgd(lib)
        sched = S_(lib).OneCycleLR(opt, 0.1, total_steps=3)
        for _ in range(4):
            opt.step()
            sched.step()
    both_raise(too_many_steps)

    def mixed_optimizers(lib):
        opt = sgd(lib)
        S_(lib).SequentialLR(opt, [S_(lib).StepLR(opt, 2), S_(lib).StepLR(sgd(lib), 2)], [3])
    both_raise(mixed_optimizers)

    def plateau_in_chain(lib):
        opt = sgd(lib)
        S_(lib).ChainedScheduler([S_(lib).ReduceLROnPlateau(opt)])
    both_raise(plateau_in_chain)


def test_tensor_lr_is_filled_in_place():
    lrs = {}
    for lib in (ember, torch):
        lr = lib.tensor(0.1)
        opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=lr)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        for _ in range(3):
            opt.step()
            sched.step()
        assert opt.param_groups[0]["lr"] is lr
        lrs[lib] = [float(v) for v in sched.get_last_lr()]
    assert lrs[ember] == lrs[torch]


def test_onecycle_state_dict_from_before_anneal_func_type():
    """A OneCycleLR state dict from before PyTorch 2.2 holds `anneal_func` (the function) and no
    `_anneal_func_type`; loading one keeps annealing with that function, as in torch."""
    lrs = {}
    for lib in (ember, torch):
        opt = sgd(lib)
        sch = S(lib).OneCycleLR(opt, max_lr=25, final_div_factor=2, total_steps=10)
        del sch._anneal_func_type
        state = sch.state_dict()
        state["anneal_func"] = S(lib).OneCycleLR._annealing_linear
        sch.load_state_dict(state)
        out = []
        for _ in range(9):
            opt.step()
            sch.step()
            out.append(opt.param_groups[0]["lr"])
        lrs[lib] = out
    np.testing.assert_allclose(lrs[ember], lrs[torch], rtol=1e-12)
