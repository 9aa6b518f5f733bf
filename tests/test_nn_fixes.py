"""nn behaviour found missing or wrong by running PyTorch's own test/nn files (module hooks,
load_state_dict, parametrizations, dropout, packed sequences) on ember, each checked against
torch on the same inputs: the legacy (non-full) backward hooks, load_state_dict's unexpected
keys and reference cycles, torch.utils.swap_tensors and the torch.__future__ swap path,
torch.empty(memory_format=), pack_padded_sequence on empty input, orthogonal()'s householder
map without trivialization, complex parameters of any strides in the optimizers, and the
torch.testing._internal pieces those files import (common_nn, common_cuda, @swap)."""
import gc
import pickle
import warnings
import weakref

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])


def both(fn):
    """fn(lib) for torch and ember; the two results must be equal (NumPy arrays compared)."""
    t, e = fn(torch), fn(ember)
    assert type(t) is type(e) or isinstance(t, np.ndarray)
    if isinstance(t, np.ndarray):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
    else:
        assert e == t
    return e


def _np(x):
    return x.detach().numpy()


# ---- legacy backward hooks (Module.register_backward_hook) ---------------------------------
def _legacy_hooks(lib):
    m = lib.nn.Sigmoid()
    x = lib.linspace(-1, 1, 6, requires_grad=True)
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append((mod is m, len(grad_input), len(grad_output)))
        return tuple(g * 2 for g in grad_input)

    h = m.register_backward_hook(hook)
    m(x).backward(lib.ones(6))
    h.remove()
    m(x).sum().backward()
    try:
        m.register_backward_hook(hook)
        m.register_full_backward_hook(hook)
    except RuntimeError as e:
        seen.append(str(e))
    return seen, _np(x.grad)


def test_legacy_backward_hook_doubles_grad_and_excludes_full_hooks():
    (te, tg), (ee, eg) = _legacy_hooks(torch), _legacy_hooks(ember)
    assert ee == te
    np.testing.assert_allclose(eg, tg, rtol=1e-6)


@LIBS
def test_legacy_backward_hook_wrong_count_and_global_hook(lib):
    m = lib.nn.Sigmoid()
    x = lib.randn(3, requires_grad=True)
    with m.register_backward_hook(lambda mod, gi, go: gi + (lib.ones(1),)):
        with pytest.raises(RuntimeError, match="got 2, but expected 1"):
            m(x).sum().backward()
    calls = []
    mod = lib.nn.modules.module
    handle = mod.register_module_backward_hook(lambda *a: calls.append(len(a)))
    try:
        m(x).sum().backward()
    finally:
        handle.remove()
        mod._global_is_full_backward_hook = None
    assert calls == [3]


def _warning_messages(lib, forward):
    class M(lib.nn.Module):
        pass
    M.forward = forward
    m = M()
    m.register_backward_hook(lambda *a: None)
    a = lib.rand(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(a)
    return [(x.category.__name__, str(x.message)[:60]) for x in w]


@pytest.mark.parametrize("forward", [
    lambda self, a: [a.clone()],                  # not a Tensor or tuple
    lambda self, a: (a.clone(), a.clone()),       # outputs from different nodes
    lambda self, a: a.clone().clone(),            # several nodes in forward
    lambda self, a: a.clone(),                    # fine: no warning
], ids=["list", "two_nodes", "chain", "single"])
def test_legacy_backward_hook_warnings(forward):
    both(lambda lib: _warning_messages(lib, forward))


@LIBS
def test_full_backward_hook_keeps_detached_input_non_differentiable(lib):
    seen = []

    class M(lib.nn.Module):
        def forward(self, a, b):
            seen.append((a.requires_grad, b.requires_grad))
            return a.sum() + b.sum()

    m = M()
    m.register_full_backward_hook(lambda *args: None)
    inp = lib.rand(2, requires_grad=True)
    m(inp, inp.detach())
    assert seen == [(True, False)]


# ---- load_state_dict ----------------------------------------------------------------------
@LIBS
def test_unexpected_key_under_a_parameter_name(lib):
    m = lib.nn.Sequential(lib.nn.Linear(2, 2))
    sd = m.state_dict()
    sd["0.weight.bad_suffix"] = lib.zeros(1)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        m.load_state_dict(sd)
    assert m.load_state_dict(sd, strict=False).unexpected_keys == ["0.weight.bad_suffix"]


@LIBS
def test_load_state_dict_makes_no_cycle_and_pre_hook_holds_module_weakly(lib):
    m = lib.nn.Linear(3, 3)
    gc.collect()
    m.load_state_dict(m.state_dict())
    assert gc.collect() == 0
    m._register_load_state_dict_pre_hook(_noop_hook, True)
    pickle.loads(pickle.dumps(m))
    gc.disable()
    try:
        ref = weakref.ref(m)
        del m
        assert ref() is None
    finally:
        gc.enable()


def _noop_hook(*args, **kwargs):
    pass


# ---- swap_tensors and the torch.__future__ swap path --------------------------------------
@LIBS
def test_swap_tensors(lib):
    a = lib.nn.Parameter(lib.ones(2))
    b = lib.zeros(3, dtype=lib.float64)
    a.tag = "a"
    lib.utils.swap_tensors(a, b)
    assert type(a) is lib.Tensor and type(b) is lib.nn.Parameter
    assert a.dtype == lib.float64 and a.tolist() == [0.0] * 3 and b.tolist() == [1.0, 1.0]
    assert b.tag == "a" and not hasattr(a, "tag") and b.requires_grad
    x = lib.ones(2, requires_grad=True)
    y = (x * 2).sum()
    lib.utils.swap_tensors(x, lib.zeros(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="poisoned by swap_tensors"):
        y.backward()
    t = lib.ones(1)
    keep = weakref.ref(t)  # noqa: F841
    with pytest.raises(RuntimeError, match="weakref"):
        lib.utils.swap_tensors(t, lib.ones(1))


def _swap_path(lib):
    future = lib.__future__
    future.set_swap_module_params_on_conversion(True)
    try:
        m = lib.nn.Linear(2, 3)
        ids = id(m.weight), id(m.bias)
        with lib.no_grad():
            m.weight.fill_(1.0)
        m.weight.grad = lib.ones(3, 2)
        m.double()
        src = lib.nn.Linear(2, 3).double()
        with lib.no_grad():
            src.weight.fill_(2.0)
        with lib.device("meta"):
            meta = lib.nn.Linear(2, 3)
        meta_ids = id(meta.weight), id(meta.bias)
        meta.load_state_dict(src.state_dict(), assign=True)
        return ((id(m.weight), id(m.bias)) == ids, str(m.weight.dtype), str(m.weight.grad.dtype),
                type(m.weight).__name__, (id(meta.weight), id(meta.bias)) == meta_ids,
                meta.weight.device.type, meta.weight.sum().item(), meta.weight.requires_grad)
    finally:
        future.set_swap_module_params_on_conversion(False)


def test_swap_module_params_on_conversion():
    assert both(_swap_path)[0]


# ---- factories, packed sequences, parametrizations, optimizers ----------------------------
@pytest.mark.parametrize("shape,fmt", [((2, 3, 4, 5), "channels_last"),
                                       ((2, 3, 4, 5, 6), "channels_last_3d"),
                                       ((2, 3, 4, 5), "contiguous_format")])
def test_empty_memory_format_strides(shape, fmt):
    both(lambda lib: lib.empty(shape, memory_format=getattr(lib, fmt)).stride())


@LIBS
@pytest.mark.parametrize("case", ["preserve", "rank", "out"])
def test_empty_memory_format_errors(lib, case):
    kwargs = {"preserve": dict(memory_format=lib.preserve_format),
              "rank": dict(memory_format=lib.channels_last_3d),
              "out": dict(memory_format=lib.channels_last, out=lib.empty(0))}[case]
    with pytest.raises(RuntimeError):
        lib.empty(2, 3, 4, 5, **kwargs)


@LIBS
def test_pack_padded_sequence_refuses_empty_input(lib):
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors"):
        lib.nn.utils.rnn.pack_padded_sequence(lib.randn(0, 0), [])


def _householder(lib, weight):
    m = lib.nn.Linear(*weight.shape[::-1])
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(weight))
    lib.nn.utils.parametrizations.orthogonal(m, "weight", "householder",
                                              use_trivialization=False)
    return np.concatenate([_np(m.weight).ravel(),
                           _np(m.parametrizations.weight.original).ravel()])


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_householder_without_trivialization(shape):
    weight = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    both(lambda lib: _householder(lib, weight))


def _complex_steps(lib, opt_name):
    w = lib.from_numpy(np.random.default_rng(1).standard_normal((3, 5, 2)).astype(np.float32))
    p = lib.nn.Parameter(lib.view_as_complex(w).mT.contiguous().mT)   # strides (1, 3)
    opt = getattr(lib.optim, opt_name)([p], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (p.abs() ** 2).sum().backward()
        opt.step()
    return _np(lib.view_as_real(p.detach()))


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_optimizer_step_on_transposed_complex_parameter(opt_name):
    both(lambda lib: _complex_steps(lib, opt_name))


# ---- torch.testing._internal pieces ---------------------------------------------------------
def test_testing_internal_nn_pieces():
    from ember.testing._internal import common_cuda, common_nn, common_utils
    assert not common_cuda.TEST_CUDA and not common_cuda.TEST_MULTIGPU
    layer, net, seq = common_nn._create_basic_net()
    assert [n for n, _ in seq.named_buffers()] == ["0.dummy_buf", "0.l1.layer_dummy_buf"]
    assert issubclass(common_nn.NNTestCase, common_utils.TestCase)
    seen = []

    class T(common_utils.TestCase):
        @common_utils.swap([True, False])
        def test_x(self):
            seen.append(ember.__future__.get_swap_module_params_on_conversion())

    common_utils.instantiate_parametrized_tests(T)
    assert {"test_x_swap_True", "test_x_swap_False"} <= set(dir(T))
    T("test_x_swap_True").test_x_swap_True()
    T("test_x_swap_False").test_x_swap_False()
    assert seen == [True, False] and not ember.__future__.get_swap_module_params_on_conversion()
