"""ember.optim.swa_utils against torch.optim.swa_utils: the SWA and EMA averages, SWALR's learning
rates and update_bn give PyTorch's results."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember
from test_optim import both_raise


def make_model(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin1 = lib.nn.Linear(4, 6)
            self.lin2 = lib.nn.Linear(6, 3)
            self.register_buffer("shift", lib.zeros(3))

        def forward(self, x):
            return self.lin2(self.lin1(x).tanh()) + self.shift

    lib.manual_seed(0)
    return Net()


def set_weights(lib, model, rng):
    """Give the model's parameters and buffers fresh random values (the same in both libs)."""
    with lib.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            t.copy_(lib.tensor(rng.standard_normal(tuple(t.shape)).astype(np.float32)))


def average(lib, updates=6, **kw):
    rng = np.random.default_rng(0)
    model = make_model(lib)
    averaged = lib.optim.swa_utils.AveragedModel(model, **kw)
    for _ in range(updates):
        set_weights(lib, model, rng)
        averaged.update_parameters(model)
    return averaged


def S(lib):
    return lib.optim.swa_utils


AVERAGES = {
    "swa": lambda lib: {},
    "swa-buffers": lambda lib: dict(use_buffers=True),
    "ema-multi": lambda lib: dict(multi_avg_fn=S(lib).get_ema_multi_avg_fn(0.9)),
    "ema-multi-buffers": lambda lib: dict(multi_avg_fn=S(lib).get_ema_multi_avg_fn(0.75),
                                          use_buffers=True),
    "swa-multi": lambda lib: dict(multi_avg_fn=S(lib).get_swa_multi_avg_fn()),
    "ema-avg_fn": lambda lib: dict(avg_fn=S(lib).get_ema_avg_fn(0.8)),
    "swa-avg_fn": lambda lib: dict(avg_fn=S(lib).get_swa_avg_fn()),
}


@pytest.mark.parametrize("name", AVERAGES)
def test_averages_equal_torch(name):
    avg_e = average(ember, **AVERAGES[name](ember))
    avg_t = average(torch, **AVERAGES[name](torch))
    state_e, state_t = avg_e.state_dict(), avg_t.state_dict()
    assert list(state_e) == list(state_t)
    for key in state_t:
        e, t = state_e[key].numpy(), state_t[key].numpy()
        assert e.dtype == t.dtype, key
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7, err_msg=key)
    assert int(avg_e.n_averaged) == int(avg_t.n_averaged) == 6
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    with torch.no_grad(), ember.no_grad():
        np.testing.assert_allclose(avg_e(ember.tensor(x)).numpy(), avg_t(torch.tensor(x)).numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_averaged_model_state_dict_loads_across():
    avg_t = average(torch)
    state = pickle.loads(pickle.dumps({k: v.numpy() for k, v in avg_t.state_dict().items()}))
    avg_e = ember.optim.swa_utils.AveragedModel(make_model(ember))
    avg_e.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
    assert int(avg_e.n_averaged) == 6
    models = {lib: make_model(lib) for lib in (ember, torch)}
    for lib, avg in ((ember, avg_e), (torch, avg_t)):
        set_weights(lib, models[lib], np.random.default_rng(5))
        avg.update_parameters(models[lib])
    for pe, pt in zip(avg_e.parameters(), avg_t.parameters()):
        np.testing.assert_allclose(pe.detach().numpy(), pt.detach().numpy(), rtol=1e-6)


def swalr_lrs(lib, steps=30, **kw):
    a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=0.1)
    sched = lib.optim.swa_utils.SWALR(opt, **kw)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.01, 0.5], anneal_epochs=5,
                                                           anneal_strategy="linear"),
                                dict(swa_lr=0.02, anneal_epochs=0)])
def test_swalr_equals_torch(kw):
    lrs_e, sched_e = swalr_lrs(ember, **kw)
    lrs_t, sched_t = swalr_lrs(torch, **kw)
    assert lrs_e == lrs_t
    assert sorted(sched_e.state_dict()) == sorted(sched_t.state_dict())


def test_swalr_state_dict_crosses():
    _, sched_t = swalr_lrs(torch, steps=4, swa_lr=0.05, anneal_epochs=8)
    lrs_t, _ = swalr_lrs(torch, steps=12, swa_lr=0.05, anneal_epochs=8)
    _, sched_e = swalr_lrs(ember, steps=0, swa_lr=0.05, anneal_epochs=8)
    sched_e.load_state_dict(pickle.loads(pickle.dumps(sched_t.state_dict())))
    for group, lr in zip(sched_e.optimizer.param_groups, sched_t.get_last_lr()):
        group["lr"] = lr
    lrs_e = []
    for _ in range(8):
        sched_e.optimizer.step()
        sched_e.step()
        lrs_e.append(sched_e.get_last_lr())
    assert lrs_e == lrs_t[5:]


def test_errors_match_torch():
    for fn in (lambda lib: S(lib).get_ema_multi_avg_fn(1.5),
               lambda lib: S(lib).get_ema_avg_fn(-0.1),
               lambda lib: S(lib).AveragedModel(make_model(lib), avg_fn=S(lib).get_swa_avg_fn(),
                                                multi_avg_fn=S(lib).get_swa_multi_avg_fn()),
               lambda lib: swalr_lrs(lib, swa_lr=0.1, anneal_strategy="exp"),
               lambda lib: swalr_lrs(lib, swa_lr=0.1, anneal_epochs=-1)):
        both_raise(fn)


def test_swalr_get_lr_warns_like_torch():
    for lib in (ember, torch):
        _, sched = swalr_lrs(lib, steps=1, swa_lr=0.1)
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()


def test_update_bn_without_batchnorm_is_a_no_op():
    model = make_model(ember)
    before = [p.detach().numpy().copy() for p in model.parameters()]
    ember.optim.swa_utils.update_bn([ember.randn(2, 4)], model)
    for b, p in zip(before, model.parameters()):
        np.testing.assert_array_equal(b, p.detach().numpy())


def test_update_bn_recomputes_running_stats():
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((8, 4)).astype(np.float32) * 3 + 1 for _ in range(5)]
    stats = {}
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.BatchNorm1d(4))
        model.eval()
        loader = [(lib.tensor(b), lib.zeros(8)) for b in batches]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        assert not model.training and bn.momentum == 0.1
        stats[lib] = [bn.running_mean.numpy(), bn.running_var.numpy(),
                      int(bn.num_batches_tracked)]
    np.testing.assert_allclose(stats[ember][0], stats[torch][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats[ember][1], stats[torch][1], rtol=1e-5, atol=1e-6)
    assert stats[ember][2] == stats[torch][2]


def test_update_bn_conv_net_plain_batches_and_averaged_model():
    """BatchNorm2d layers (one with momentum=None) inside a conv net wrapped in an
    AveragedModel, a loader of bare tensors, the model left in training mode."""
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((4, 2, 5, 5)).astype(np.float32) * 2 - 1 for _ in range(3)]
    stats = {}
    for lib in (ember, torch):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.BatchNorm2d(3), lib.nn.ReLU(),
                                lib.nn.Conv2d(3, 2, 1), lib.nn.BatchNorm2d(2, momentum=None))
        swa = lib.optim.swa_utils.AveragedModel(net)
        with lib.no_grad():
            for p in net.parameters():
                p.mul_(1.5)
        swa.update_parameters(net)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.optim.swa_utils.update_bn([lib.tensor(b) for b in batches], swa)
        bns = [swa.module[1], swa.module[4]]
        assert swa.training and [bn.momentum for bn in bns] == [0.1, None]
        stats[lib] = [(bn.running_mean.numpy(), bn.running_var.numpy(),
                       int(bn.num_batches_tracked)) for bn in bns]
    for (em, ev, en), (tm, tv, tn) in zip(stats[ember], stats[torch]):
        np.testing.assert_allclose(em, tm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ev, tv, rtol=1e-5, atol=1e-6)
        assert en == tn
