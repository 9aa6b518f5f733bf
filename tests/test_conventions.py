"""Python conventions PyTorch accepts, against torch: NumPy's `axis=`/`keepdims=` names, the
Python 2 operator names, and PyTorch's exception types where NumPy's would leak through
(einsum, linspace, scatter, joining tensors, writes through overlapping memory, pickling)."""
import io
import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

X = np.arange(1.0, 25.0).reshape(2, 3, 4)


def _outcome(fn):
    """A comparable result: the values of a tensor (or tuple of them), or the exception type."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as exc:  # noqa: BLE001 -- the type is the result compared
        return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
    if isinstance(out, (tuple, list)):
        return [_outcome(lambda o=o: o) for o in out]
    if hasattr(out, "detach"):
        return (tuple(out.shape), out.detach().numpy().tolist())
    return out


def raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 -- the exception is the result compared
        return exc
    return None


def _same(call):
    e = _outcome(lambda: call(ember, ember.tensor(X)))
    t = _outcome(lambda: call(torch, torch.tensor(X)))
    assert e == t, f"ember {e} != torch {t}"


# (name, extra positional arguments) of functions whose `dim` PyTorch also takes as `axis`
AXIS_FUNCTIONS = [
    ("sum", ()), ("mean", ()), ("std", ()), ("var", ()), ("all", ()), ("any", ()),
    ("max", ()), ("min", ()), ("std_mean", ()), ("var_mean", ()), ("prod", ()), ("amax", ()),
    ("amin", ()), ("argmax", ()), ("argmin", ()), ("nansum", ()), ("nanmean", ()),
    ("logsumexp", ()), ("median", ()), ("nanmedian", ()), ("mode", ()), ("aminmax", ()),
    ("quantile", (0.5,)), ("nanquantile", (0.3,)), ("kthvalue", (1,)), ("count_nonzero", ()),
    ("cumsum", ()), ("cumprod", ()), ("cummax", ()), ("logcumsumexp", ()), ("softmax", ()),
    ("log_softmax", ()), ("sort", ()), ("argsort", ()), ("topk", (1,)), ("unbind", ()),
    ("squeeze", ()), ("unsqueeze", ()), ("diff", ()), ("chunk", (2,)), ("tensor_split", (2,)),
    ("repeat_interleave", (2,)), ("trapezoid", ()), ("cumulative_trapezoid", ()),
    ("flip", ()), ("norm", ()), ("unique", ()),
]


@pytest.mark.parametrize("name, extra", AXIS_FUNCTIONS, ids=[n for n, _ in AXIS_FUNCTIONS])
def test_axis_and_keepdims(name, extra):
    """`axis=` and `keepdims=` work (or are refused with TypeError) exactly where torch's do,
    as functions and as methods."""
    for kw in ({"axis": 1}, {"axis": -1, "keepdims": True}, {"dim": 1, "keepdims": True},
               {"axis": 1, "dim": 1}, {"axis": 1, "bogus": 1}):
        _same(lambda m, x: getattr(m, name)(x, *extra, **kw))
        if hasattr(torch.Tensor, name):
            _same(lambda m, x: getattr(x, name)(*extra, **kw))


def test_axis_on_ops_with_required_dims():
    _same(lambda m, x: m.gather(x, index=m.zeros(2, 1, 4, dtype=m.int64), axis=1))
    _same(lambda m, x: m.cumsum(x))  # dim missing: TypeError
    _same(lambda m, x: m.cat([x, x], axis=2))
    _same(lambda m, x: m.stack([x, x], axis=-1))
    _same(lambda m, x: m.select(x, axis=1, index=0))


# PyTorch's other NumPy names: `x=`, `a=`, `x1=` for `input` and `x2=` for `other`, in its
# generated bindings only (Python-level functions such as norm, split, unique refuse them); the
# parameter's own name wins and the NumPy name left over is refused
NUMPY_NAME_CALLS = [
    "m.abs(x=x)", "m.abs(a=x)", "m.abs(x1=x)", "m.abs(x, x=x)", "m.abs(input=x, a=x)",
    "m.abs(x=x, a=x)", "m.add(x1=x, x2=x)", "m.add(x, x2=x, alpha=2)", "m.add(x, x, x2=x)",
    "x.add(x2=x)", "x.abs(x=x)", "x.mul_(x2=x)", "m.sum(x=x, axis=1, keepdims=True)",
    "m.sum(a=x, dim=0)", "m.sum(input=x, axis=0, dim=1)", "m.mm(x1=x[0], x2=x[0].T)",
    "m.matmul(x1=x[0], x2=x[0].T)", "m.cat(x=[x])", "m.max(x=x)", "m.max(x1=x, x2=x)",
    "m.maximum(x1=x, x2=-x)", "m.std(x=x)", "m.sort(x=x)", "m.prod(x=x, axis=2)",
    "m.norm(x=x)", "m.unique(x=x)", "m.split(x=x, split_size_or_sections=1)",
    "m.unique_consecutive(x=x)", "m.einsum('ijk->i', x=x)", "m.clamp(x=x, min=3)",
    "m.where(x > 3, x=x, x2=-x)", "m.masked_fill(x=x, mask=x > 3, value=0.0)",
    "m.reshape(x=x, shape=(4, 6))", "m.zeros_like(a=x)", "m.remainder(x, x2=x + 1)",
    "m.nn.functional.linear(x=x, weight=x[0])", "m.nn.functional.relu(x=x)",
    "m.nn.functional.hardshrink(x=x)", "m.conv1d(x=x, weight=x[:, :, :2])",
    "m.special.ndtr(x=x) > 0.5", "m.special.xlog1py(x, x2=x) > 0", "m.linalg.norm(x=x)",
    "m.linalg.matrix_norm(x=x)", "m.linalg.cross(x[..., :3], x2=x[..., 1:])",
    "m.fft.rfft(x=x).abs()", "m.fft.fftshift(x=x)", "x.max(x2=x)", "x.view_as(x2=x)",
    "x.copy_(x2=x)", "m.cumsum(x, axis=1)", "m.dot(x1=x[0, 0], x2=x[0, 0])",
]


@pytest.mark.parametrize("code", NUMPY_NAME_CALLS)
def test_numpy_names_for_input_and_other(code):
    e = _outcome(lambda: eval(code, {"m": ember, "x": ember.tensor(X)}))
    t = _outcome(lambda: eval(code, {"m": torch, "x": torch.tensor(X)}))
    assert e == t, f"ember {e} != torch {t}"


def test_python2_operator_names():
    a, b = ember.tensor([2.0, 4.0]), torch.tensor([2.0, 4.0])
    assert a.__rdiv__(8).tolist() == b.__rdiv__(8).tolist() == [4.0, 2.0]
    assert a.__div__(2).tolist() == b.__div__(2).tolist()
    assert a.clone().__idiv__(2).tolist() == b.clone().__idiv__(2).tolist()
    assert (4.0 in a) == (4.0 in b) and (3 in a) == (3 in b)
    assert [v.item() for v in reversed(a)] == [v.item() for v in reversed(b)]
    assert ember.tensor(1).__nonzero__() is torch.tensor(1).__nonzero__() is True
    assert ember.tensor(7.5).__long__() == torch.tensor(7.5).__long__() == 7
    _same(lambda m, x: "a" in x)


ERROR_CASES = [
    "m.einsum('ij,jk->ik', m.ones(2, 3), m.ones(4, 5))",
    "m.einsum('ii->i', m.ones(2, 3))",
    "m.einsum('ij,jk->ik', m.ones(2, 3), m.ones(3))",
    "m.linspace(0, 1, 5, dtype=m.bool)",
    "m.logspace(0, 1, 5, dtype=m.bool)",
    "m.zeros(3, 4).scatter(0, m.zeros(2, 4, dtype=m.long), m.ones(2, 4, dtype=m.float64))",
    "m.zeros(3, 4).scatter_(0, m.zeros(2, 4, dtype=m.long), m.ones(2, 4, dtype=m.int64))",
    "m.zeros(3, 4).scatter_add(0, m.zeros(2, 4, dtype=m.long), m.ones(2, 4, dtype=m.float64))",
    "m.zeros(3, 4).scatter_reduce(0, m.zeros(2, 4, dtype=m.long), m.ones(2, 4, dtype=m.int32),"
    " 'sum')",
    "m.cat([m.ones(2, 3), m.ones(3)])",
    "m.stack([m.ones(2, 3), m.ones(3)])",
    "m.hstack([m.ones(2, 3), m.ones(3)])",
    "m.vstack([m.ones(2, 3), m.ones(2)])",
    # writes through overlapping memory
    "m.zeros(3).expand(2, 3).add_(1)",
    "m.zeros(1, 3).expand(2, 3).mul_(2)",
    "m.zeros(3).expand(2, 3).copy_(m.ones(2, 3))",
    "m.zeros(3).expand(2, 3).exp_()",
    "m.zeros(3).expand(2, 3).uniform_()",
    "m.zeros(3).expand(2, 3).index_add_(0, m.tensor([0]), m.ones(1, 3))",
    "m.zeros(3).expand(2, 3).zero_()",
    "m.zeros(3).expand(2, 3).fill_(1)",
    "m.zeros(3).expand(2, 3).index_fill_(0, m.tensor([0]), 1.0)",
    "m.add(m.ones(2, 3), 1, out=m.zeros(3).expand(2, 3))",
    "m.nn.functional.relu(m.zeros(3).expand(2, 3), inplace=True)",
    "(lambda x: x[1:].add_(x[:-1]))(m.arange(5.0))",
    "(lambda x: x[1:].copy_(x[:-1]))(m.arange(5.0))",
    "(lambda x: x.add_(x.t()))(m.arange(9.0).reshape(3, 3))",
    "(lambda x: x.add_(x[0]))(m.zeros(3, 3))",
    "(lambda x: x[::2].add_(x[1::2]))(m.arange(4.0))",
    "(lambda x: x.add_(x))(m.arange(4.0))",
    "(lambda x: x[:2].add_(x[2:]))(m.arange(4.0))",
    "m.ones(3, 1).expand(3, 3).clone().add_(m.ones(3, 1).expand(3, 3))",
]


@pytest.mark.parametrize("code", ERROR_CASES)
def test_exception_types(code):
    """The same result, or the same exception type, as torch."""
    e = _outcome(lambda: eval(code, {"m": ember}))
    t = _outcome(lambda: eval(code, {"m": torch}))
    assert e == t, f"ember {e} != torch {t}"


def test_overlap_messages_are_pytorchs():
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ember.zeros(3).expand(2, 3).add_(1)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory"):
        x = ember.arange(5.0)
        x[1:].add_(x[:-1])


# out= writes that overlap an input: (call on y = arange(20.), x = y[:16] as 4x4, the out=
# tensor `o`, given as full (x itself), partial (y[1:17]) or apart (a new tensor))
OUT_CALLS = {
    "add": "m.add(x, 1, out=o)", "mul": "m.mul(x, x, out=o)", "exp": "m.exp(x, out=o)",
    "clamp": "m.clamp(x, 0, 3, out=o)", "where": "m.where(x > 2, x, x.flip(0), out=o)",
    "remainder": "m.remainder(x, 3, out=o)", "round": "m.round(x, decimals=1, out=o)",
    "maximum": "m.maximum(x, x.T, out=o)", "lerp": "m.lerp(x, x, 0.5, out=o)",
    "sum": "m.sum(x, 0, keepdim=True, out=o[:1])", "cumsum": "m.cumsum(x, 0, out=o)",
    "cummax": "m.cummax(x, 0, out=(o, m.empty(4, 4, dtype=m.int64)))",
    "max.dim": "m.max(x, 0, keepdim=True, out=(o[:1], m.empty(1, 4, dtype=m.int64)))",
    "max": "m.max(x, out=o[0, 0])", "sort": "m.sort(x, out=(o, m.empty(4, 4, dtype=m.int64)))",
    "mm": "m.mm(x, x, out=o)", "matmul": "m.matmul(x, x, out=o)", "addmm": "m.addmm(x, x, x, out=o)",
    "addmm.mat": "m.addmm(m.zeros(4, 4), y[1:17].view(4, 4), x, out=o)",
    "addr": "m.addr(x, y[:4], y[4:8], out=o)", "outer": "m.outer(y[:4], y[4:8], out=o)",
    "cross": "m.cross(x[:3], x[1:], dim=0, out=o[:3])", "tril": "m.tril(x, out=o)",
    "linalg.cross": "m.linalg.cross(y[:12].view(4, 3), y[1:13].view(4, 3), out=o[:, :3])",
    "index_select": "m.index_select(x, 0, m.tensor([3, 2, 1, 0]), out=o)",
    "gather": "m.gather(x, 0, m.zeros(4, 4, dtype=m.int64), out=o)",
    "cat": "m.cat([x[:2], x[2:]], out=o)", "stack": "m.stack([x[0], x[1], x[2], x[3]], out=o)",
    "index_add.self": "m.index_add(x, 0, m.tensor([0, 1, 2, 3]), m.ones(4, 4), out=o)",
    "index_add.source": "m.index_add(m.ones(4, 4), 0, m.tensor([0, 1, 2, 3]), x, out=o)",
    "scatter_add": "m.scatter_add(x, 0, m.zeros(4, 4, dtype=m.int64), x, out=o)",
    "take": "m.take(x, m.arange(16).view(4, 4), out=o)",
}


@pytest.mark.parametrize("how", ["full", "partial", "apart"])
@pytest.mark.parametrize("op", list(OUT_CALLS))
def test_out_overlapping_an_input(op, how):
    """An out= tensor overlapping an input is refused exactly where torch refuses it (where
    torch does not, its kernels read what they have written: its values are not compared)."""
    def call(m):
        y = m.arange(20.0)
        x = y[:16].view(4, 4)
        o = {"full": x, "partial": y[1:17].view(4, 4), "apart": m.zeros(4, 4)}[how]
        eval(OUT_CALLS[op], {"m": m, "x": x, "y": y, "o": o})
    e, t = raised(lambda: call(ember)), raised(lambda: call(torch))
    assert type(e) is type(t), f"ember raises {e!r}, torch {t!r}"
    if t is not None:
        assert str(e) == str(t)


class _Module:
    def __reduce__(self):
        raise ValueError("refuses to pickle")


def _local_object():
    class Local:
        pass
    return Local()


@pytest.mark.parametrize("make", [lambda: (lambda: 1), _local_object, _Module,
                                  lambda: (x for x in range(3)), lambda: {"f": lambda: 0}],
                         ids=["lambda", "local_class", "reduce_raises", "generator", "nested"])
def test_save_pickling_failures(make):
    """torch.save of an object pickle refuses raises what torch.save raises."""
    e = _outcome(lambda: ember.save(make(), io.BytesIO()))
    t = _outcome(lambda: torch.save(make(), io.BytesIO()))
    assert e == t and isinstance(e, type) and issubclass(e, Exception)


class Vanishing:
    pass


def test_load_of_a_missing_class_without_weights_only():
    """A non-weights-only load of an object whose class is gone raises AttributeError, as
    torch.load does."""
    for m in (ember, torch):
        buf = io.BytesIO()
        m.save(Vanishing(), buf)
        buf.seek(0)
        saved = globals().pop("Vanishing")
        try:
            with pytest.raises(AttributeError, match="Vanishing"):
                m.load(buf, weights_only=False)
        finally:
            globals()["Vanishing"] = saved
        buf.seek(0)
        assert isinstance(m.load(buf, weights_only=False), Vanishing)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(b"not a checkpoint"), weights_only=False)


def test_legacy_tensor_new_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ember):
        x = lib.ones(2)
        assert x.new().shape == (0,) and x.new(2, 3).shape == (2, 3)
        assert x.new(lib.Size([2, 3])).shape == (2, 3) and x.new(2, 3).dtype == lib.float32
    cases = [lambda L: L.ones(2).new((2, 3)), lambda L: L.ones(2).new([1, 2]),
             lambda L: L.tensor([1, 2]).new([1.5]), lambda L: L.ones(2).new(np.array([1, 2]))]
    for case in cases:
        ours, theirs = case(ember), case(torch)
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    y = ember.zeros(3)
    assert ember.ones(2).new(y).data_ptr() == y.data_ptr()
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.ones(2).new(lib.zeros(2, dtype=lib.int64))
        with pytest.raises(TypeError):
            lib.ones(2).new(2, 3.0)
        with pytest.raises(TypeError):
            lib.ones(2).new(2, dtype=lib.int32)
