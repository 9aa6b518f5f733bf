"""The functional optimizers (`torch.optim.adam.adam(params, grads, exp_avgs, ...)`, the others
beside their classes, and `torch.optim._functional`) checked against PyTorch: each test runs the
same code with `T` = ember and `T` = torch and compares parameters and state after a few steps
(to float32 rounding), the lists updated in place, signatures, and the exception type and
message of a misuse. The classes' `step()` goes through the functional form, so a class and its
functional form give identical results."""
import importlib
import inspect
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
from _torch_oracle import same_error as oracle_same_error  # noqa: E402

NAMES = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop",
         "rprop", "sgd"]
CLASSES = dict(adadelta="Adadelta", adagrad="Adagrad", adam="Adam", adamax="Adamax",
               adamw="AdamW", asgd="ASGD", nadam="NAdam", radam="RAdam", rmsprop="RMSprop",
               rprop="Rprop", sgd="SGD")
SHAPES = [(3, 4), (5,)]


def module(T, name):
    """T.optim.<name> (torch.optim does not keep its submodules as attributes)."""
    return importlib.import_module(f"{T.__name__}.optim.{name}")


def functional(T, name):
    return getattr(module(T, name), name)


def same_error(fn, pattern):
    """fn(T) raises the same exception type and message under both, matching `pattern`."""
    assert re.search(pattern, oracle_same_error(fn)[1])


def arrays(seed, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def state_lists(T, name, params, kw, lr=0.01, init=0.0):
    """The state lists `name`'s functional form takes after params and grads, fresh (as the
    class would create them)."""
    def zeros():
        return [T.zeros_like(p) for p in params]

    def scalars(v):
        return [T.tensor(float(v)) for _ in params]
    if name == "sgd":
        return [[None] * len(params)]
    if name in ("adam", "adamw"):
        return [zeros(), zeros(), zeros() if kw["amsgrad"] else [], scalars(0)]
    if name == "adagrad":
        return [[T.full_like(p, init) for p in params], scalars(0)]
    if name in ("adadelta", "adamax", "radam"):
        return [zeros(), zeros(), scalars(0)]
    if name == "asgd":
        return [zeros(), scalars(1), scalars(lr), scalars(0)]
    if name == "nadam":
        return [zeros(), zeros(), scalars(1), scalars(0)]
    if name == "rmsprop":
        return [zeros(), zeros() if kw["centered"] else [], zeros() if kw["momentum"] > 0 else [],
                scalars(0)]
    if name == "rprop":
        return [zeros(), [T.full_like(p, lr) for p in params], scalars(0)]
    raise AssertionError(name)


BASE = dict(
    sgd=dict(weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
             maximize=False),
    adam=dict(amsgrad=False, beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0, eps=1e-8,
              maximize=False),
    adagrad=dict(lr=0.1, weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False),
    adadelta=dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False),
    adamax=dict(eps=1e-8, beta1=0.9, beta2=0.999, lr=0.002, weight_decay=0.0),
    asgd=dict(lambd=1e-4, lr=0.01, t0=1e6, alpha=0.75, weight_decay=0.0),
    nadam=dict(beta1=0.9, beta2=0.999, lr=0.002, weight_decay=0.0, momentum_decay=4e-3, eps=1e-8),
    radam=dict(beta1=0.9, beta2=0.999, lr=0.001, weight_decay=0.0, eps=1e-8),
    rmsprop=dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False),
    rprop=dict(step_size_min=1e-6, step_size_max=50.0, etaminus=0.5, etaplus=1.2),
)
BASE["adamw"] = dict(BASE["adam"], weight_decay=0.01)

CASES = [
    ("sgd", {}), ("sgd", dict(momentum=0.9)), ("sgd", dict(momentum=0.9, nesterov=True)),
    ("sgd", dict(momentum=0.9, dampening=0.1, weight_decay=0.1, maximize=True)),
    ("adam", {}), ("adam", dict(amsgrad=True)), ("adam", dict(weight_decay=0.1, maximize=True)),
    ("adam", dict(weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
    ("adamw", {}), ("adamw", dict(amsgrad=True, maximize=True)),
    ("adagrad", {}), ("adagrad", dict(lr_decay=0.01, weight_decay=0.1, maximize=True)),
    ("adadelta", {}), ("adadelta", dict(weight_decay=0.1, maximize=True)),
    ("adamax", {}), ("adamax", dict(weight_decay=0.1, maximize=True)),
    ("asgd", {}), ("asgd", dict(t0=2.0, lambd=0.01, weight_decay=0.1, maximize=True)),
    ("nadam", {}), ("nadam", dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("radam", {}), ("radam", dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("rmsprop", {}), ("rmsprop", dict(centered=True)), ("rmsprop", dict(momentum=0.9)),
    ("rmsprop", dict(centered=True, momentum=0.9, weight_decay=0.1, maximize=True)),
    ("rprop", {}), ("rprop", dict(maximize=True)),
]


def run_functional(T, name, kw, steps=8, seed=0):
    """`steps` calls of the functional form on two parameters; every tensor it updated."""
    params = [T.tensor(a) for a in arrays(seed)]
    lists = state_lists(T, name, params, kw, lr=kw.get("lr", 0.01))
    fn = functional(T, name)
    for k in range(steps):
        grads = [T.tensor(a) for a in arrays(seed + 1 + k)]
        fn(params, grads, *lists, **kw)
    return [p.numpy() for p in params] + [t.numpy() for lst in lists for t in lst
                                          if t is not None]


@pytest.mark.parametrize("name,options", CASES,
                         ids=[f"{n}-{'-'.join(o) or 'default'}" for n, o in CASES])
def test_functional_steps_match_torch(name, options):
    kw = dict(BASE[name], **options)
    e, t = run_functional(ember, name, kw), run_functional(torch, name, kw)
    assert len(e) == len(t) >= 2
    for a, b in zip(e, t):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def test_sgd_fills_momentum_buffer_list_in_place():
    def run(T):
        params = [T.tensor(a) for a in arrays(0)]
        grads = [T.tensor(a) for a in arrays(1)]
        bufs = [None, None]
        functional(T, 'sgd')(params, grads, bufs, **dict(BASE["sgd"], momentum=0.9))
        # the buffer is a copy of the gradient, not the gradient itself
        return [b.numpy() for b in bufs], [b is g for b, g in zip(bufs, grads)]
    (eb, eid), (tb, tid) = run(ember), run(torch)
    assert eid == tid == [False, False]
    for a, b in zip(eb, tb):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(eb[0], arrays(1)[0])


def test_signatures_match_torch():
    for name in NAMES:
        e = inspect.signature(functional(ember, name)).parameters
        t = inspect.signature(functional(torch, name)).parameters
        assert [(p.name, p.kind, p.default) for p in e.values()] == \
            [(p.name, p.kind, p.default) for p in t.values()], name
    e = inspect.signature(module(ember, "_functional").sparse_adam).parameters
    t = inspect.signature(module(torch, "_functional").sparse_adam).parameters
    assert [(p.name, p.kind) for p in e.values()] == [(p.name, p.kind) for p in t.values()]


def test_functional_module_reexports():
    for name in NAMES + ["sparse_adam", "_make_sparse"]:
        assert callable(getattr(module(ember, "_functional"), name)), name
        assert callable(getattr(module(torch, "_functional"), name)), name
    for name in NAMES:
        assert getattr(module(ember, "_functional"), name) is functional(ember, name)
        assert module(ember, name).__all__ == module(torch, name).__all__ == [CLASSES[name], name]


def test_missing_keyword_only_arguments_same_type_error():
    for name in NAMES:
        n_lists = len(state_lists(torch, name, [], BASE[name] | dict(amsgrad=False,
                                                                         centered=False)))
        same_error(lambda T, name=name, n=n_lists: functional(T, name)([], [], *[[]] * n),
                   r"missing \d+ required keyword-only argument")


# ---- the class and the functional form -----------------------------------------------------

def functional_kwargs(name, group, fn):
    """The functional form's arguments for an optimizer's param group (as its step passes them)."""
    kw = dict(group)
    for pair, (a, b) in (("betas", ("beta1", "beta2")), ("etas", ("etaminus", "etaplus")),
                         ("step_sizes", ("step_size_min", "step_size_max"))):
        if pair in kw:
            kw[a], kw[b] = kw.pop(pair)
    allowed = inspect.signature(fn).parameters
    return {k: v for k, v in kw.items() if k in allowed and k not in (
        "params", "foreach", "fused", "capturable", "differentiable")}


CLASS_CASES = [
    ("sgd", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("adamw", dict(lr=0.01, amsgrad=True)), ("adagrad", dict(lr=0.1, lr_decay=0.01)),
    ("adadelta", dict(weight_decay=0.1)), ("adamax", dict(maximize=True)),
    ("asgd", dict(t0=2.0, lambd=0.01)), ("nadam", dict(decoupled_weight_decay=True,
                                                       weight_decay=0.1)),
    ("radam", dict(weight_decay=0.1)), ("rmsprop", dict(centered=True, momentum=0.9)),
    ("rprop", dict(lr=0.05, maximize=True)),
]


@pytest.mark.parametrize("name,options", CLASS_CASES, ids=[n for n, _ in CLASS_CASES])
def test_class_step_and_functional_identical(name, options):
    """Class steps and functional calls from the same start and gradients end bit-identical, in
    ember as in torch; and ember's class agrees with torch's."""
    def run(T):
        leaves = [T.nn.Parameter(T.tensor(a)) for a in arrays(0)]
        opt = getattr(T.optim, CLASSES[name])(leaves, **options)
        fn = functional(T, name)
        kw = functional_kwargs(name, opt.param_groups[0], fn)
        params = [T.tensor(a) for a in arrays(0)]
        lists = state_lists(T, name, params, kw, lr=opt.param_groups[0]["lr"])
        for k in range(6):
            grads = arrays(1 + k)
            for p, g in zip(leaves, grads):
                p.grad = T.tensor(g)
            opt.step()
            fn(params, [T.tensor(g) for g in grads], *lists, **kw)
        return [p.detach().numpy() for p in leaves], [p.numpy() for p in params]
    (e_cls, e_fn), (t_cls, t_fn) = run(ember), run(torch)
    for a, b in zip(e_cls, e_fn):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(t_cls, t_fn):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(e_cls, t_cls):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


# ---- errors -----------------------------------------------------------------------------------

STEP_CHECKED = ["adadelta", "adagrad", "adam", "adamax", "adamw", "nadam", "radam", "rmsprop",
                "rprop"]


def call(T, name, options=None, edit=None, **extra):
    """One functional call on fresh inputs, `edit(lists)` applied to the state lists first."""
    kw = dict(BASE[name], **(options or {}))
    params = [T.tensor(a) for a in arrays(0)]
    grads = [T.tensor(a) for a in arrays(1)]
    lists = state_lists(T, name, params, kw, lr=kw.get("lr", 0.01))
    if edit is not None:
        edit(lists)
    functional(T, name)(params, grads, *lists, **kw, **extra)
    return params


@pytest.mark.parametrize("name", STEP_CHECKED)
def test_state_steps_must_be_tensors(name):
    def steps_as_numbers(lists):
        lists[-1] = [0.0 for _ in lists[-1]]
    same_error(lambda T: call(T, name, edit=steps_as_numbers),
               r"^API has changed, `state_steps` argument must contain a list of singleton "
               r"tensors$")


def test_nadam_mu_products_must_be_tensors():
    def mu_as_numbers(lists):
        lists[2] = [1.0 for _ in lists[2]]
    same_error(lambda T: call(T, "nadam", edit=mu_as_numbers),
               r"`mu_products` argument must contain a list of singleton tensors")


@pytest.mark.parametrize("name", ["adadelta", "adam", "adamax", "adamw", "asgd", "nadam",
                                  "radam", "rmsprop", "rprop"])
def test_capturable_needs_an_accelerator(name):
    same_error(lambda T: call(T, name, capturable=True),
               r"^If capturable=True, params.* must be on supported devices: \[")
    # nothing moved before the error
    def untouched(T):
        params = [T.tensor(a) for a in arrays(0)]
        kw = BASE[name]
        lists = state_lists(T, name, params, kw, lr=kw.get("lr", 0.01))
        try:
            functional(T, name)(params, [T.tensor(a) for a in arrays(1)], *lists, **kw,
                                capturable=True)
        except AssertionError:
            pass
        return [float(s) for s in lists[-1]], [p.numpy() for p in params]
    (es, ep), (ts, tp) = untouched(ember), untouched(torch)
    assert es == ts == [0.0, 0.0]
    for a, b in zip(ep + tp, arrays(0) * 2):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["Adam", "NAdam", "Adadelta", "RMSprop"])
def test_class_step_capturable_raises_as_torch(name):
    def run(T):
        p = T.nn.Parameter(T.tensor(arrays(0)[1]))
        p.grad = T.tensor(arrays(1)[1])
        getattr(T.optim, name)([p], capturable=True).step()
    same_error(run, r"If capturable=True")


@pytest.mark.parametrize("name", ["adam", "sgd", "adagrad"])
def test_grad_scale_refused_without_fused(name):
    same_error(lambda T: call(T, name, grad_scale=T.tensor(2.0)),
               r"^Expected grad_scale and found_inf to be None$")
    same_error(lambda T: call(T, name, found_inf=T.tensor(0.0), foreach=True),
               r"^Expected grad_scale and found_inf to be None$")


@pytest.mark.parametrize("name", ["adadelta", "adagrad", "adam", "adamax", "asgd", "nadam",
                                  "radam", "rmsprop", "rprop"])
def test_foreach_refuses_differentiable(name):
    same_error(lambda T: call(T, name, foreach=True, differentiable=True),
               r"^_foreach ops don't support autograd$")


@pytest.mark.parametrize("name,message", [
    ("adam", "Adam with fused=True does not support differentiable=True"),
    ("adamw", "Adam with fused=True does not support differentiable=True"),
    ("adagrad", "adagrad with fused=True does not support differentiable=True")])
def test_fused_refuses_differentiable(name, message):
    same_error(lambda T: call(T, name, fused=True, differentiable=True), "^" + message + "$")


def test_fused_refuses_sparse_and_complex():
    same_error(lambda T: call(T, "sgd", fused=True, has_sparse_grad=True),
               r"^`_fused_sgd` does not support sparse gradients$")
    same_error(lambda T: call(T, "adagrad", fused=True, has_complex=True),
               r"^`fused` does not support sparse grad or complex param$")
    same_error(lambda T: call(T, "adagrad", fused=True, has_sparse_grad=True),
               r"^`fused` does not support sparse grad or complex param$")


def test_adam_foreach_tensor_hyperparameters():
    same_error(lambda T: call(T, "adam", dict(lr=T.tensor(0.01)), foreach=True),
               r"^lr as a Tensor is not supported for capturable=False and foreach=True$")
    same_error(lambda T: call(T, "adam", dict(beta2=T.tensor(0.999)), foreach=True),
               r"^beta2 as a Tensor is not supported for capturable=False and foreach=True$")


def test_no_parameters_skips_foreach_and_fused_checks():
    """foreach and fused return before checking anything when given no parameters (and an
    empty list defaults to foreach); the loop implementation still refuses grad_scale."""
    def run(T, **kw):
        functional(T, 'adam')([], [], [], [], [], [], **BASE["adam"], **kw)
        return "ok"
    for kw in (dict(foreach=True, differentiable=True), dict(fused=True, differentiable=True),
               dict(foreach=True, capturable=True)):
        assert run(ember, **kw) == run(torch, **kw) == "ok"
    assert run(ember, grad_scale=ember.tensor(1.0)) == "ok"
    same_error(lambda T: run(T, foreach=False, grad_scale=T.tensor(1.0)), "Expected grad_scale")


def test_leaf_requiring_grad_refused_under_grad_mode():
    """The functional forms are tensor code: outside no_grad a leaf that requires grad cannot
    be updated in place."""
    def run(T):
        params = [T.tensor(a, requires_grad=True) for a in arrays(0)]
        grads = [T.tensor(a) for a in arrays(1)]
        functional(T, 'sgd')(params, grads, [None, None], **BASE["sgd"])
    same_error(run, r"leaf Variable that requires grad is being used in an in-place operation")


# ---- options that change the computation -----------------------------------------------------

@pytest.mark.parametrize("name", ["adam", "adamw", "sgd", "adagrad"])
@pytest.mark.parametrize("found", [0.0, 1.0])
def test_fused_grad_scale_and_found_inf(name, found):
    """The fused implementations unscale the gradients in place, or skip the step when
    found_inf is set (step counts unchanged)."""
    options = dict(momentum=0.9) if name == "sgd" else {}

    def run(T):
        kw = dict(BASE[name], **options)
        params = [T.tensor(a) for a in arrays(0)]
        grads = [T.tensor(a) for a in arrays(1)]
        lists = state_lists(T, name, params, kw, lr=kw["lr"])
        functional(T, name)(params, grads, *lists, **kw, fused=True, grad_scale=T.tensor(4.0),
                            found_inf=T.tensor(found))
        state = [t for lst in lists for t in lst if name != "sgd" or found == 0.0]
        return [t.numpy() for t in params + grads + state]
    e, t = run(ember), run(torch)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    if found:
        for a, b in zip(e, arrays(0) + arrays(1)):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(e[2], arrays(1)[0] / 4)


def test_explicit_foreach_and_fused_same_values():
    for name, extra in (("adam", dict(foreach=True)), ("adam", dict(fused=True)),
                        ("sgd", dict(foreach=True)), ("rmsprop", dict(foreach=True)),
                        ("adagrad", dict(fused=True))):
        e = call(ember, name, dict(momentum=0.9) if name == "sgd" else None, **extra)
        t = call(torch, name, dict(momentum=0.9) if name == "sgd" else None, **extra)
        for a, b in zip(e, t):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=2e-6)


def test_differentiable_functional_adam_gradients():
    """Under grad mode, a differentiable update is recorded by autograd: gradients reach the
    leaf the parameters were cloned from."""
    def run(T):
        leaves = [T.tensor(a, requires_grad=True) for a in arrays(0)]
        params = [leaf.clone() for leaf in leaves]
        grads = [T.tensor(a) for a in arrays(1)]
        lists = state_lists(T, "adam", params, BASE["adam"])
        functional(T, 'adam')(params, grads, *lists, differentiable=True, **BASE["adam"])
        sum(((p * p).sum() for p in params), T.tensor(0.0)).backward()
        return [p.detach().numpy() for p in params] + [leaf.grad.numpy() for leaf in leaves]
    for a, b in zip(run(ember), run(torch)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def test_complex_parameters():
    def run(T):
        params = [T.tensor(a + 1j * b) for a, b in zip(arrays(0), arrays(5))]
        lists = state_lists(T, "adam", params, dict(amsgrad=True))
        for k in range(3):
            grads = [T.tensor(a - 2j * b) for a, b in zip(arrays(1 + k), arrays(7 + k))]
            functional(T, 'adam')(params, grads, *lists, **dict(BASE["adam"], amsgrad=True),
                              has_complex=True)
        return [t.numpy() for t in params + lists[0] + lists[1] + lists[2]]
    for a, b in zip(run(ember), run(torch)):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def sparse_grads(T, seed):
    rng = np.random.default_rng(seed)
    rows = T.tensor([[0, 2, 0]])  # a repeated row: the update coalesces first
    return T.sparse_coo_tensor(rows, T.tensor(rng.standard_normal((3, 4)).astype(np.float32)),
                               (3, 4))


@pytest.mark.parametrize("name", ["sgd", "adagrad", "sparse_adam"])
def test_sparse_gradients(name):
    def run(T):
        params = [T.tensor(arrays(0)[0])]
        if name == "sgd":
            lists, kw = [[None]], dict(BASE["sgd"], momentum=0.9, nesterov=True)
        elif name == "adagrad":
            lists, kw = [[T.zeros(3, 4)], [T.tensor(0.0)]], dict(BASE["adagrad"], lr_decay=0.1)
        else:
            lists, kw = [[T.zeros(3, 4)], [T.zeros(3, 4)], [0]], dict(
                eps=1e-8, beta1=0.9, beta2=0.999, lr=0.01, maximize=True)
        fn = getattr(module(T, "_functional"), name)
        for k in range(3):
            if name == "sparse_adam":
                lists[-1][0] += 1
            extra = {} if name == "sparse_adam" else dict(has_sparse_grad=True)
            fn(params, [sparse_grads(T, 1 + k)], *lists, **extra, **kw)
        return [params[0].numpy()] + [t.to_dense().numpy() for lst in lists[:-1] for t in lst]
    for a, b in zip(run(ember), run(torch)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    same_error(lambda T: functional(T, 'adagrad')(
        [T.zeros(3, 4)], [sparse_grads(T, 0)], [T.zeros(3, 4)], [T.tensor(0.0)],
        has_sparse_grad=True, **dict(BASE["adagrad"], weight_decay=0.1)),
        r"^weight_decay option is not compatible with sparse gradients$")


# ---- torch.optim.optimizer's helpers ---------------------------------------------------------

def test_optimizer_helpers():
    for T in (ember, torch):
        O = module(T, "optimizer")
        p = T.zeros(2)
        assert O._default_to_fused_or_foreach([p], False, use_fused=True) == (True, False)
        assert O._default_to_fused_or_foreach([p], False) == (False, False)
        assert O._default_to_fused_or_foreach([p], True, use_fused=True) == (False, False)
        assert O._get_scalar_dtype(is_fused=True) is T.float32
        assert O._get_scalar_dtype() is T.float32
        assert O._get_value(T.tensor(0.5)) == 0.5 and O._to_scalar(T.tensor([0.5])).dim() == 0
        assert O._stack_if_compiling([p]) == [p]
        for doc in ("_params_doc", "_foreach_doc", "_fused_doc", "_capturable_doc",
                    "_differentiable_doc", "_maximize_doc"):
            assert getattr(O, doc).startswith(doc[1:-4] + " ("), doc
        f = O._disable_dynamo_if_unsupported(single_tensor_fn=None)(lambda a, state_steps: a + 1)
        assert f(1, []) == 2
        params, grads = [T.zeros(2, dtype=T.complex64), T.zeros(3)], [T.ones(2, dtype=T.complex64),
                                                                     T.ones(3)]
        O._view_as_real(params, grads)
        assert [tuple(t.shape) for t in params + grads] == [(2, 2), (3,), (2, 2), (3,)]
    assert module(ember, "optimizer")._get_capturable_supported_devices() == \
        module(torch, "optimizer")._get_capturable_supported_devices()
    assert module(ember, "optimizer")._get_capturable_supported_devices(supports_xla=False) == \
        module(torch, "optimizer")._get_capturable_supported_devices(supports_xla=False)
    same_error(lambda T: module(T, "optimizer")._device_dtype_check_for_fused(
        T.zeros(2, dtype=T.int64), cuda_unsupported=True), r"^`fused=True` requires")


def test_use_grad_for_differentiable_in_a_custom_optimizer():
    def run(T):
        seen = []

        class Custom(T.optim.Optimizer):
            def __init__(self, params, differentiable):
                super().__init__(params, dict(lr=0.1, differentiable=differentiable))

            @module(T, "optimizer")._use_grad_for_differentiable
            def step(self, closure=None):
                """custom step"""
                seen.append(T.is_grad_enabled())

        p = T.zeros(2, requires_grad=True)
        Custom([p], False).step()
        Custom([p], True).step()
        with T.no_grad():
            Custom([p], True).step()
        return seen, T.is_grad_enabled(), Custom.step.__doc__
    assert run(ember) == run(torch) == ([False, True, True], True, "custom step")
