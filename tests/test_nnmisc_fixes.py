"""Fixes found by running PyTorch's test/nn/test_load_state_dict.py, test_packed_sequence.py,
test_dropout.py, test_init.py and test_pruning.py on ember, each checked against torch on the
same inputs: the legacy constructor of a tensor is a plain alias, load_state_dict's swap path
with subclasses (a Parameter of a subclass keeps the subclass), assertEqual across
unrelated subclasses, torch.native_dropout, PackedSequence.is_pinned, and the order of
matrix_norm's checks."""
import importlib
import math

import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = [torch, ember]
IDS = ["torch", "ember"]


def _raised(fn):
    try:
        fn()
    except Exception as e:          # noqa: BLE001 -- the exception is the result compared
        return type(e).__name__, str(e)
    return None


def _subclasses(lib):
    """A tensor subclass with its own __torch_function__ (PyTorch's test's MyLoadTensor: a
    module_load that gives plain tensors for plain destinations), and a second one unrelated
    to it."""

    def handler(cls, func, args, kwargs):
        kwargs = kwargs or {}
        if func is lib.Tensor.module_load:
            dest, src = args
            assign = kwargs.get("assign", False)
            if isinstance(dest, cls):
                return src.detach() if assign or type(src) is cls else cls(src)
            return src.detach() if assign else lib.Tensor(src)
        with lib._C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func == lib.Tensor.detach and not isinstance(ret, cls):
                return cls(ret)
            return ret

    class LoadA(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return handler(cls, func, args, kwargs)

    class LoadB(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return handler(cls, func, args, kwargs)

    return LoadA, LoadB


def _legacy_constructor_of_tensor(lib):
    LoadA, _ = _subclasses(lib)
    x = lib.arange(3.).requires_grad_()
    y = lib.Tensor(x)
    s = LoadA(lib.arange(2.))
    return dict(view=(type(y).__name__, y.requires_grad, y._base is x, y.is_leaf),
                shares=y.data_ptr() == x.data_ptr(),
                subclass=[type(lib.Tensor(s)).__name__, type(lib.FloatTensor(s)).__name__])


def test_legacy_constructor_of_a_tensor_is_a_plain_alias():
    assert _legacy_constructor_of_tensor(ember) == _legacy_constructor_of_tensor(torch)


def _swap_load_types(lib, assign):
    LoadA, LoadB = _subclasses(lib)

    def model(sub):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 3, bias=False)
        m.register_buffer("buf", lib.randn(2, 3))
        if sub is not None:
            m.weight = lib.nn.Parameter(sub(m.weight))
            m.buf = sub(m.buf)
        return m

    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        out = []
        for m_sub in (None, LoadA, LoadB):
            for sd_sub in (None, LoadA, LoadB):
                m = model(m_sub)
                sd = model(sd_sub).state_dict()
                with lib.no_grad():
                    sd["weight"].mul_(2)
                m.load_state_dict(sd, assign=assign)
                out.append((type(m.weight).__name__, type(m.buf).__name__,
                            isinstance(m.weight, lib.nn.Parameter),
                            m.weight.detach().tolist()))
        return out
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)


@pytest.mark.parametrize("assign", [False, True])
def test_swap_load_state_dict_with_subclasses(assign):
    assert _swap_load_types(ember, assign) == _swap_load_types(torch, assign)


def test_assert_equal_compares_unrelated_tensor_subclasses():
    from ember.testing._internal.common_utils import TestCase as EmberCase
    from torch.testing._internal.common_utils import TestCase as TorchCase
    for lib, case in ((torch, TorchCase), (ember, EmberCase)):
        LoadA, LoadB = _subclasses(lib)
        a = lib.arange(6.).view(2, 3)
        case().assertEqual(LoadA(a), LoadB(a.clone()))
        case().assertEqual(lib.nn.Parameter(LoadA(a)), lib.nn.Parameter(a.clone()))
        with pytest.raises(AssertionError, match="Tensor-likes are not"):
            case().assertEqual(LoadA(a), LoadB(a + 1))


def _load_into_0d(lib, value):
    m = lib.nn.Module()
    m.register_buffer("b", lib.tensor(1.))
    err = _raised(lambda: m.load_state_dict({"b": lib.tensor(value)}))
    return err, m.b.tolist()


@pytest.mark.parametrize("value", [[5.], [5., 6., 7.]])
def test_load_state_dict_into_0d_takes_only_a_1_element_value(value):
    assert _load_into_0d(ember, value) == _load_into_0d(torch, value)


def _native_dropout(lib):
    out = []
    for train in (True, False, None):
        for p in (0.0, 0.4, 1.0):
            lib.manual_seed(0)
            x = lib.arange(1., 9., dtype=lib.float64).requires_grad_()
            o, mask = lib.native_dropout(x, p, train)
            o.sum().backward()
            out.append((o.tolist(), mask.dtype is lib.bool, mask.tolist(), x.grad.tolist()))
    out.append(_raised(lambda: lib.native_dropout(lib.ones(3, dtype=lib.long), 0.5, True)))
    out.append(lib.native_dropout(lib.ones(3, dtype=lib.long), 0.5, False)[0].dtype
               is lib.long)
    return out


def test_native_dropout_is_public_and_draws_torchs_stream():
    assert _native_dropout(ember) == _native_dropout(torch)


def _packed_pinned(lib):
    p = lib.nn.utils.rnn.pack_sequence([lib.ones(3), lib.ones(2)], enforce_sorted=False)
    return p.is_pinned(), _raised(p.pin_memory)[0]


def test_packed_sequence_is_pinned():
    assert _packed_pinned(ember) == _packed_pinned(torch)


def _matrix_norm_errors(lib):
    x = lib.randn(3, 3)
    cases = [("foo", (1,)), ("nuc", (1,)), (3, (1,)), (3.0, (0, 1)), (2.5, (0, 1)),
             (-math.inf, (0,)), ("fro", (0, 0))]
    out = [_raised(lambda: lib.linalg.matrix_norm(x, o, d)) for o, d in cases]
    out.append(_raised(lambda: lib.linalg.matrix_norm(lib.ones(3), 5)))
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
    m = lib.nn.Linear(2, 2)
    out.append(_raised(lambda: prune.ln_structured(m, "weight", 1, "foo", 0)))
    return out


def test_matrix_norm_checks_the_order_first():
    assert _matrix_norm_errors(ember) == _matrix_norm_errors(torch)
