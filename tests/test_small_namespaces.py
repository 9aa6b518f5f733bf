"""torch.version / torch_version, torch.return_types, torch.types, torch.nn.grad,
torch.nn.modules.utils and torch.nn.common_types against torch."""
import operator

import numpy as np
import pytest

import ember



def test_version_compares_as_a_version():
    v = ember.__version__
    assert isinstance(v, str) and v == ember.version.__version__
    # the PyTorch API level ember implements, its own release in the local label
    assert v >= (2, 0) and v >= "2.13" and v < "2.14" and v > "1.13.1" and v != "2.13"
    assert v.split("+")[1].startswith("ember")
    assert ember.version.cuda is None and ember.version.hip is None
    assert (v > "parrot") == ("2.13.0+ember0.1.0" > "parrot")  # not a version: compared as text


@pytest.mark.parametrize("text", ["1.10.0a", "1.10.0", "2.13.0+cpu", "2.0", "parrot", "1.9.1",
                                  "2.0.0rc1", "2.0.0.dev20230101"])
def test_torch_version_order_equals_torchs(text):
    torch = pytest.importorskip("torch")
    from torch.torch_version import TorchVersion
    from ember.torch_version import TorchVersion as EmberVersion
    for other in ["1.2", "1.10", "2.0", "2.13", "0.1", "parrot", "2.13.0+cpu",
                  (1, 2), (2, 0), (0, 1, 0), (2, 13, 0)]:
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
            try:
                want = op(TorchVersion(text), other)
            except TypeError:  # a non-version against a tuple
                with pytest.raises(TypeError):
                    op(EmberVersion(text), other)
                continue
            assert op(EmberVersion(text), other) == want, (text, op, other)


def test_return_types_are_the_classes_ops_return():
    x = ember.randn(3, 4)
    assert type(ember.max(x, 1)) is ember.return_types.max
    assert isinstance(ember.sort(x), ember.return_types.sort)
    assert ember.return_types.topk.__match_args__ == ("values", "indices")
    assert type(ember.linalg.eigh(ember.eye(2))) is ember.return_types.linalg_eigh
    assert type(ember.svd(ember.eye(2))) is ember.return_types.svd
    assert type(ember.histogram(ember.ones(3))) is ember.return_types.histogram
    with pytest.raises(AttributeError):
        ember.return_types.not_an_op


def test_return_types_fields_equal_torchs():
    torch = pytest.importorskip("torch")
    names = [n for n in dir(torch.return_types) if not n.startswith("_") and not n.endswith("_out")
             and isinstance(getattr(torch.return_types, n), type) and n != "SequenceKey"]
    assert len(names) > 30
    for name in names:
        assert getattr(ember.return_types, name).__match_args__ == getattr(torch.return_types, name).__match_args__


def test_nn_modules_utils_and_common_types():
    from ember.nn.modules.utils import _pair, _single, _triple, _quadruple, _reverse_repeat_tuple
    assert _pair(3) == (3, 3) and _pair([1, 2]) == (1, 2) and _single(1) == (1,)
    assert _triple(0) == (0, 0, 0) and _quadruple(2) == (2,) * 4
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert ember.nn.utils.parameters_to_vector and ember.nn.modules.utils._pair  # both reachable
    from ember.nn.common_types import _size_2_t  # noqa: F401
    from ember.types import Number, Device  # noqa: F401


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_equals_torch(nd):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 4) + (7,) * nd).astype(np.float32)
    w = rng.standard_normal((6, 2) + (3,) * nd).astype(np.float32)
    tx, tw = torch.tensor(x), torch.tensor(w)
    out = getattr(torch.nn.functional, f"conv{nd}d")(tx, tw, stride=2, padding=1, groups=2)
    go = torch.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32))
    kw = dict(stride=2, padding=1, groups=2)
    want_i = getattr(torch.nn.grad, f"conv{nd}d_input")(tx.shape, tw, go, **kw)
    want_w = getattr(torch.nn.grad, f"conv{nd}d_weight")(tx, tw.shape, go, **kw)
    e = lambda t: ember.tensor(t.numpy())  # noqa: E731
    got_i = getattr(ember.nn.grad, f"conv{nd}d_input")(tuple(tx.shape), e(tw), e(go), **kw)
    got_w = getattr(ember.nn.grad, f"conv{nd}d_weight")(e(tx), tuple(tw.shape), e(go), **kw)
    np.testing.assert_allclose(got_i.numpy(), want_i.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-4, atol=1e-4)


LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types_equal_torchs(name):
    torch = pytest.importorskip("torch")
    E, T = getattr(ember, name), getattr(torch, name)
    assert repr(E) == repr(T) and str(E.dtype) == str(T.dtype) and E.is_cuda == T.is_cuda
    assert not issubclass(E, ember.Tensor)
    for args in [(), (2, 3), (ember.Size([4]),), ([1, 0, 1],)]:
        targs = tuple(torch.Size(a) if isinstance(a, ember.Size) else a for a in args)
        e, t = E(*args), T(*targs)
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
        if args and isinstance(args[0], list):
            assert e.tolist() == t.tolist()
    for dtype in ("float32", "int64", "bool"):
        x, tx = ember.ones(2, dtype=getattr(ember, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
        assert isinstance(x, E) == isinstance(tx, T)
        assert x.type(E).dtype.name == str(tx.type(T).dtype).split(".")[1]
        assert x.type(f"torch.{name}").type() == tx.type(f"torch.{name}").type()
    same = E(2)
    assert E(same).data_ptr() == same.data_ptr()  # a tensor of the same dtype: its storage
    other = ember.ones(2, dtype=ember.complex64)
    with pytest.raises(TypeError):
        E(other)
    with pytest.raises(TypeError):
        T(torch.ones(2, dtype=torch.complex64))


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__
    if hasattr(out, "tolist"):
        return ("tensor", out.tolist())
    if isinstance(out, tuple):
        return tuple(_outcome(lambda o=o: o) for o in out)
    return out


def test_top_level_predicates_and_switches_equal_torchs():
    torch = pytest.importorskip("torch")
    import warnings
    programs = [
        lambda T: T.is_nonzero(T.tensor([1.])), lambda T: T.is_nonzero(T.ones(2)),
        lambda T: T.is_nonzero(T.ones(0)), lambda T: T.is_nonzero(T.tensor(0)),
        lambda T: T.is_same_size(T.ones(2), T.ones(2)), lambda T: T.is_same_size(T.ones(2), T.ones(3)),
        lambda T: T.is_signed(T.ones(1, dtype=T.uint8)), lambda T: T.is_signed(T.ones(1)),
        lambda T: T.is_conj(T.ones(2)), lambda T: T.is_neg(T.ones(2)),
        lambda T: T.is_inference(T.ones(1)), lambda T: T.get_device(T.ones(1)),
        lambda T: T.is_storage(T.ones(2).untyped_storage()), lambda T: T.is_storage(T.ones(2)),
        lambda T: T.ones(2).is_pinned(), lambda T: T.ones(2).pin_memory(), lambda T: T.ones(2).cuda(),
        lambda T: T.ones(2, 3).t().dim_order(), lambda T: T.ones(2, 3, 4).dim_order(),
        lambda T: T.ones(2).storage_type().__name__, lambda T: T.ones(2).is_mps,
        lambda T: T.ones(2).reinforce(1),
        lambda T: T.sym_max(2, 3), lambda T: T.sym_max(2, 3.0), lambda T: T.sym_min(2.5, 1),
        lambda T: T.sym_int(-2.7), lambda T: T.sym_float(3), lambda T: T.sym_not(True),
        lambda T: T.sym_ite(True, 1, 2), lambda T: T.sym_ite(1, 1, 2), lambda T: T.sym_sum([1, 2]),
        lambda T: T.cond(T.tensor(True), lambda x: x + 1, lambda x: x - 1, (T.ones(2),)),
        lambda T: T.cond(False, lambda x: x + 1, lambda x: x - 1, (T.ones(2),)),
        lambda T: T.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                               (T.tensor(0), T.ones(2))),
        lambda T: T.set_num_interop_threads(0), lambda T: T.set_default_tensor_type(T.LongTensor),
        lambda T: len(T.FloatStorage(3)), lambda T: T.DoubleStorage([1, 2]).dtype.itemsize,
        lambda T: type(T.FloatStorage(2)).__name__,
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, program in enumerate(programs):
            assert _outcome(lambda: program(ember)) == _outcome(lambda: program(torch)), i


def test_set_default_tensor_type_sets_the_default_dtype():
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.set_default_tensor_type("torch.DoubleTensor")
    try:
        assert ember.get_default_dtype() is ember.float64 and ember.tensor([1.5]).dtype is ember.float64
        assert any("deprecated" in str(w.message) for w in caught)
        with pytest.raises(TypeError), pytest.warns(UserWarning, match="deprecated"):
            ember.set_default_tensor_type("torch.cuda.FloatTensor")
    finally:
        ember.set_default_dtype(ember.float32)
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()
    ember.set_warn_always(False)
    assert ember.get_device_module() is ember.cpu and ember.get_device_module("cuda") is ember.cuda


def test_default_device_context_equals_torchs():
    torch = pytest.importorskip("torch")
    import numpy as np

    def where(T):
        out = [str(T.get_default_device())]
        with T.device("meta"):
            out += [str(T.get_default_device()), T.ones(2).device.type, T.tensor([1.]).device.type,
                    T.ones_like(T.empty(2, device="cpu")).device.type,
                    T.nn.Linear(2, 2).weight.device.type, T.arange(3).device.type,
                    T.from_numpy(np.ones(2)).device.type, T.randn(2).device.type]
            with T.device("cpu"):
                out.append(T.zeros(1).device.type)
            out.append(T.zeros(1).device.type)
        T.set_default_device("meta")
        try:
            out += [T.zeros(1).device.type, str(T.get_default_device())]
        finally:
            T.set_default_device(None)
        out.append(T.zeros(1).device.type)
        return out
    assert where(ember) == where(torch)


def test_variable_equals_torchs():
    torch = pytest.importorskip("torch")
    import warnings

    def run(T):
        from importlib import import_module
        Variable = import_module(T.__name__ + ".autograd").Variable
        t = T.ones(2)
        v = Variable(t, requires_grad=True)
        w = T.ones(2, requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Variable(t, volatile=True)
        return [v.requires_grad, v is t, v.data_ptr() == t.data_ptr(), t.requires_grad,
                isinstance(t, Variable), v.grad_fn is None, Variable(T.ones(1)).requires_grad,
                Variable(w).grad_fn is None, Variable(w).requires_grad, len(caught),
                tuple(Variable().shape)]
    assert run(ember) == run(torch)
