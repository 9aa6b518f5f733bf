"""The dtypes beyond the twelve common ones, against torch.

uint16, uint32 and uint64 are PyTorch's "barebones" unsigned dtypes.
They promote only with themselves and with floating types (anything else is PyTorch's
RuntimeError); they are made, converted, printed, viewed, indexed, sorted, saved and loaded like any
dtype. Where torch 2.13 computes an op for them, ember gives the same result; where torch has
no kernel yet, ember computes NumPy's unsigned arithmetic instead of refusing (listed below).
The quantized, bits, sub-byte, float4 and complex32 dtypes exist with torch's attributes and
promotion answers, so code that names them imports; a tensor of one raises NotImplementedError
(complex32 has tensors: tests/test_complex32.py)."""
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")
import ember  # noqa: E402
from _torch_oracle import assert_same  # noqa: E402

UNSIGNED = ("uint16", "uint32", "uint64")
OTHERS = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128") + UNSIGNED


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # the test compares what each library raised
        return "raised", type(exc), str(exc)


@pytest.mark.parametrize("u", UNSIGNED)
def test_promotion_as_torch(u):
    for other in OTHERS:
        for pair in ((u, other), (other, u)):
            t = _outcome(lambda: str(torch.promote_types(*(getattr(torch, n) for n in pair))))
            e = _outcome(lambda: str(ember.promote_types(*(getattr(ember, n) for n in pair))))
            assert e == t, pair


@pytest.mark.parametrize("u", UNSIGNED)
def test_result_type_by_priority_as_torch(u):
    # a dimensioned tensor's category wins over a 0-dim tensor's and a Python scalar's
    cases = [lambda L, U: L.result_type(L.tensor([1], dtype=U), 1),
             lambda L, U: L.result_type(L.tensor([1], dtype=U), 1.5),
             lambda L, U: L.result_type(L.tensor([1], dtype=U), L.tensor(1)),
             lambda L, U: L.result_type(L.tensor(1, dtype=U), L.tensor([1])),
             lambda L, U: L.result_type(L.tensor([1], dtype=U), L.tensor(1., dtype=L.float64)),
             lambda L, U: L.result_type(L.tensor([1], dtype=U), L.tensor([1], dtype=L.int32))]
    for case in cases:
        t = _outcome(lambda: str(case(torch, getattr(torch, u))))
        e = _outcome(lambda: str(case(ember, getattr(ember, u))))
        assert e == t


# expressions torch 2.13 computes for these dtypes (a = [3, 1, 2, 3, 0, 5], b = [1, 1, 4, 2, 5, 1])
SUPPORTED = [
    "a * b", "a / b", "a == b", "a != b", "a & b", "a | b", "a ^ b", "a * 2", "a * 2.5", "a.eq(1)",
    "a.sum()", "a.sum(0)", "a.prod()", "a.cumsum(0)", "a.cumprod(0)", "a.sum(dtype=L.float32)",
    "a.sort()", "a.sort(descending=True)", "L.argsort(a)", "L.sort(a, stable=True)", "a.unique()",
    "L.unique_consecutive(a)", "a.float()", "a.double()", "a.long()", "a.to(L.int8)", "a.bool()",
    "a.clone()", "a.view(2, 3)", "a.reshape(3, 2).t()", "a[1:]", "a[L.tensor([0, 2])]",
    "a[a == 3]", "L.cat([a, b])", "L.stack([a, b])", "a.roll(1)", "L.where(a == 1, a, b)",
    "a.fill_(7)", "a.zero_()", "L.zeros_like(a)", "L.ones_like(a)", "L.full_like(a, 3)",
    "a.new_zeros(2)", "a.new_tensor([1, 2])", "a.tolist()", "L.equal(a, b)", "a.expand(2, 6)",
    "a.unsqueeze(0).repeat(2, 1)", "a.chunk(2)", "a.split(2)", "a.narrow(0, 1, 2)",
    "a.unfold(0, 2, 1)", "L.flatten(a)", "a.any()", "a.all()", "a.float().mean()",
    "L.tensor([1, 2], dtype=a.dtype) + L.tensor([1., 2.])", "a.type()", "a.element_size()",
    "a.is_signed()", "a.is_floating_point()", "str(a)", "repr(a[:0])", "a.isnan()",
    "a.isfinite()", "L.isclose(a, b)", "L.nan_to_num(a)", "L.tensor([-1]).to(a.dtype)",
    "L.zeros(3, dtype=a.dtype).copy_(L.tensor([1., 2., 3.]))", "L.tensor([], dtype=a.dtype)",
    "L.full((2,), 5, dtype=a.dtype)", "L.iinfo(a.dtype).max", "repr(L.iinfo(a.dtype))",
    "L.from_numpy(a.numpy())", "L.tensor(a.numpy())", "a.numpy().dtype.name",
    "(lambda c: (c.__setitem__(0, 5), c)[1])(a.clone())",
]


@pytest.mark.parametrize("u", UNSIGNED)
def test_ops_torch_computes_give_its_results(u):
    for expr in SUPPORTED:
        results = []
        for L in (ember, torch):
            a = L.tensor([3, 1, 2, 3, 0, 5], dtype=getattr(L, u))
            b = L.tensor([1, 1, 4, 2, 5, 1], dtype=getattr(L, u))
            results.append(eval(expr, {"L": L, "a": a, "b": b}))
        e, t = results
        if isinstance(t, str):
            assert e.replace("ember.", "torch.") == t, expr
        else:
            assert_same(e, t, path=expr)


CONVERSIONS = {"uint16": [[70000], [-1], [-70000], [-1.5], [1e10], [65535.9]],
               "uint32": [[2 ** 32], [-1], [2 ** 40], [-2.0]],
               "uint64": [[2 ** 64], [-1], [2 ** 63], [-1.0], [1e30], [2 ** 64 - 1, -1],
                          [2 ** 64 - 1, 3], [[1, 2], [3, 4]], [True, 2]]}
FILLS = [70000, -1, -70000, 1.5, -1.5, -0.5, 2 ** 40]


@pytest.mark.parametrize("u", UNSIGNED + ("uint8",))
def test_numbers_convert_or_overflow_as_torch(u):
    # torch.tensor reads each Python number with c10's checked conversion (negative ints wrap,
    # a negative float overflows; uint64 reads unsigned 64-bit ints); full() checks its scalar
    for data in CONVERSIONS.get(u, ()):
        t = _outcome(lambda: torch.tensor(data, dtype=getattr(torch, u)).tolist())
        e = _outcome(lambda: ember.tensor(data, dtype=getattr(ember, u)).tolist())
        assert e == t, data
    for value in FILLS:
        t = _outcome(lambda: torch.full((1,), value, dtype=getattr(torch, u)).tolist())
        e = _outcome(lambda: ember.full((1,), value, dtype=getattr(ember, u)).tolist())
        assert e == t, value


def test_mixed_promotion_and_numpy_errors_as_torch():
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not "
                                           "supported, attempted to promote UInt32 and Long"):
        ember.tensor([1], dtype=ember.uint32) + ember.tensor([1])
    with pytest.raises(TypeError, match="uint64, uint32, uint16, uint8, and bool"):
        ember.from_numpy(np.array(["x"], dtype=object))


@pytest.mark.parametrize("u", UNSIGNED)
def test_checkpoints_cross_both_ways(u):
    # torch writes these with _rebuild_tensor_v3 (an untyped storage and the dtype): so does ember
    values = [1, 2 ** 15, 7]
    buf = io.BytesIO()
    ember.save({"x": ember.tensor(values, dtype=getattr(ember, u))[1:]}, buf)
    assert torch.load(io.BytesIO(buf.getvalue()))["x"].tolist() == values[1:]
    assert str(torch.load(io.BytesIO(buf.getvalue()))["x"].dtype) == f"torch.{u}"
    tbuf = io.BytesIO()
    torch.save({"x": torch.tensor(values, dtype=getattr(torch, u))[1:]}, tbuf)
    loaded = ember.load(io.BytesIO(tbuf.getvalue()))["x"]
    assert loaded.dtype is getattr(ember, u) and loaded.tolist() == values[1:]
    import zipfile
    def pickle_of(raw):
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    assert pickle_of(buf.getvalue()) == pickle_of(tbuf.getvalue())


TENSORLESS = ("qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2",
              "bits8", "bits16", "uint1", "uint4", "uint7", "int1", "int4", "int7", "float8_e4m3fn",
              "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
              "float4_e2m1fn_x2", "complex32", "chalf", "bit")


@pytest.mark.parametrize("name", TENSORLESS)
def test_tensorless_dtypes_exist_as_torchs(name):
    import pickle
    e, t = getattr(ember, name), getattr(torch, name)
    for attr in ("itemsize", "is_floating_point", "is_complex", "is_signed"):
        te, ee = _outcome(lambda: getattr(t, attr)), _outcome(lambda: getattr(e, attr))
        assert ee == te, attr
    assert repr(e) == repr(t) and pickle.loads(pickle.dumps(e)) is e
    for other in OTHERS + ("quint8", "float8_e5m2", "complex32", "uint4", "int3", "bits8"):
        for pair in ((name, other), (other, name)):
            t_out = _outcome(lambda: str(torch.promote_types(*(getattr(torch, n) for n in pair))))
            if "INTERNAL ASSERT" in str(t_out):  # torch's own bug report: a RuntimeError
                t_out = ("raised", RuntimeError)
            e_out = _outcome(lambda: str(ember.promote_types(*(getattr(ember, n) for n in pair))))
            assert e_out[:len(t_out)] == t_out, pair
    if name.startswith("float8") or name in ("complex32", "chalf"):  # these have tensors
        return                                          # (tests/test_float8.py, test_complex32.py)
    for make in (lambda: ember.zeros(2, dtype=e), lambda: ember.ones(3).to(e),
                 lambda: ember.arange(3, dtype=e), lambda: ember.ones(4).view(e)):
        with pytest.raises(NotImplementedError) as info:
            make()
        assert repr(e) in str(info.value) or ember._core.dtype.scalar_type_name(e) in str(info.value)
