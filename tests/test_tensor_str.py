"""Compare ember._core.tensor_str.tensor_repr with PyTorch's repr on identical data.

A tiny fake tensor class stands in for ember.Tensor: it wraps a NumPy array and
exposes the duck-typed interface that tensor_repr uses.
"""

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

from ember._core import tensor_str as ts  # noqa: E402


# --------------------------------------------------------------------------
# fake tensor
# --------------------------------------------------------------------------

_ITEMSIZE = {
    "bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
    "complex64": 8, "complex128": 16,
}


class FakeDtype:
    def __init__(self, name, prefix="ember"):
        self.name = name
        self.prefix = prefix
        self.is_floating_point = name.startswith(("float", "bfloat"))
        self.is_complex = name.startswith("complex")
        self.itemsize = _ITEMSIZE[name]

    def __str__(self):
        return f"{self.prefix}.{self.name}"

    def __eq__(self, other):
        return isinstance(other, FakeDtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class FakeDevice:
    def __init__(self, type):
        self.type = type

    def __str__(self):
        return self.type


class FakeGradFn:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class FakeShape(tuple):
    pass


class FakeTensor:
    def __init__(self, np_data, dtype, device="cpu", shape=None,
                 requires_grad=False, grad_fn=None):
        self._np = np_data
        self.dtype = dtype
        self.device = FakeDevice(device)
        self.shape = FakeShape(np_data.shape if shape is None else shape)
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self.is_leaf = grad_fn is None

    def dim(self):
        return len(self.shape)

    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):
        return ts.tensor_repr(self)


def to_numpy(t):
    t = t.detach()
    if t.device.type == "meta":
        return None
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def fake_of(t, dtype_prefix="ember"):
    """A FakeTensor holding the same data / metadata as torch tensor ``t``."""
    name = str(t.dtype).rsplit(".", 1)[-1]
    grad_fn = FakeGradFn(type(t.grad_fn).__name__) if t.grad_fn is not None else None
    return FakeTensor(
        to_numpy(t),
        FakeDtype(name, dtype_prefix),
        device=t.device.type,
        shape=tuple(t.shape),
        requires_grad=t.requires_grad,
        grad_fn=grad_fn,
    )


@pytest.fixture(autouse=True)
def default_dtype(monkeypatch):
    """ember's default dtype follows torch's for every test; options are reset."""
    monkeypatch.setattr(
        ts, "_default_dtype",
        lambda: FakeDtype(str(torch.get_default_dtype()).rsplit(".", 1)[-1]),
    )
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    yield
    torch.set_default_dtype(torch.float32)
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")


@contextlib.contextmanager
def both_printoptions(**kwargs):
    with torch._tensor_str.printoptions(**kwargs), ts.printoptions(**kwargs):
        yield


def check(t, **opts):
    """repr of torch tensor ``t`` and of its fake twin must be identical."""
    with both_printoptions(**opts) if opts else contextlib.nullcontext():
        expected = repr(t)
        got = ts.tensor_repr(fake_of(t))
    assert got == expected, f"\n--- ember:\n{got}\n--- torch:\n{expected}"


def rng(seed):
    return np.random.default_rng(seed)


FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
COMPLEX_DTYPES = [torch.complex64, torch.complex128]
SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 2, 3, 2)]
SCALES = [1e-7, 1e-4, 1e-2, 1.0, 10.0, 1e3, 1e5, 1e9, 1e30]


# --------------------------------------------------------------------------
# floating point
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scale", SCALES)
def test_random_normal(dtype, shape, scale):
    data = rng(hash((shape, scale)) % 2**32).standard_normal(shape) * scale
    check(torch.tensor(data, dtype=dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("values", [
    [1.0, 2.0, 3.0],
    [0.0, -0.0, 1.0],
    [-0.0],
    [0.0, 0.0],
    [1e-5, 1.0, 1e5],
    [1.0, 2000.0],
    [1.0, 999.0],
    [1.0, 1001.0],
    [0.5, 1e-4],
    [0.5, 9.9e-5],
    [1e8, 1.0],
    [3e8, 2e8],
    [1e10, 2e10, 3e10],
    [123456789.0, 1.0],
    [float("nan"), 1.0],
    [float("nan")],
    [float("inf"), -float("inf"), float("nan")],
    [float("inf"), 1.5, -2.25],
    [float("-inf"), 0.0, 100.0],
    [float("nan"), -0.0, 0.0],
    [9.99996, 1.0],
    [0.99999, 0.1],
    [-1.5, 2.5, -3.5],
    [1e-30, 1e30],
    [-123.456, 0.001],
    [65504.0, -65504.0],
    [6e-8, 1.0],
    [0.1, 0.2, 0.3],
])
def test_float_values(dtype, values):
    check(torch.tensor(values, dtype=dtype))
    check(torch.tensor(values[0], dtype=dtype))


def test_float64_extremes():
    check(torch.tensor([1e-300, 1e300], dtype=torch.float64))
    check(torch.tensor([5e-324, 1.0], dtype=torch.float64))
    check(torch.tensor([1.7976931348623157e308, -1.0], dtype=torch.float64))
    check(torch.tensor([1e200, 1e-200, -1e150], dtype=torch.float64))


# --------------------------------------------------------------------------
# integers, bools
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_integers(dtype, shape):
    info = torch.iinfo(dtype)
    r = rng(len(shape) * 7 + info.bits)
    data = r.integers(max(info.min, -1000), min(info.max, 1000), size=shape)
    check(torch.tensor(data, dtype=dtype))
    extremes = r.choice([info.min, info.max, 0, 1], size=shape)
    check(torch.tensor(extremes, dtype=dtype))


@pytest.mark.parametrize("shape", SHAPES)
def test_bools(shape):
    data = rng(len(shape)).random(shape) > 0.5
    check(torch.tensor(data))
    check(torch.ones(shape, dtype=torch.bool))
    check(torch.zeros(shape, dtype=torch.bool))


# --------------------------------------------------------------------------
# complex
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e3, 1e9])
def test_complex_random(dtype, shape, scale):
    r = rng(len(shape) + int(np.log10(scale)) + 20)
    data = (r.standard_normal(shape) + 1j * r.standard_normal(shape)) * scale
    check(torch.tensor(data, dtype=dtype))


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@pytest.mark.parametrize("values", [
    [1 + 2j, 3 - 4j],
    [complex(0.0, -0.0), complex(-0.0, 0.0)],
    [complex(float("nan"), 1.0), complex(1.0, float("inf"))],
    [1e-5 + 1e5j, 1 + 1j],
    [0.5 + 0.25j, -1.5 - 2.5j],
    [1j],
    [complex(1.0, float("-inf"))],
    [0j],
])
def test_complex_values(dtype, values):
    check(torch.tensor(values, dtype=dtype))
    check(torch.tensor(values[0], dtype=dtype))


# --------------------------------------------------------------------------
# summarization, wrapping, strides
# --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1001,), (2000,), (100, 100), (10, 20, 30),
                                   (7, 7, 7, 7), (1, 2000), (2000, 1), (3, 400)])
@pytest.mark.parametrize("kind", ["float", "int", "bool", "complex", "mixed"])
def test_summarize(shape, kind):
    r = rng(sum(shape))
    if kind == "float":
        t = torch.tensor(r.standard_normal(shape), dtype=torch.float32)
    elif kind == "int":
        t = torch.tensor(r.integers(-10**6, 10**6, size=shape))
    elif kind == "bool":
        t = torch.tensor(r.random(shape) > 0.5)
    elif kind == "complex":
        t = torch.tensor(r.standard_normal(shape) + 1j * r.standard_normal(shape),
                         dtype=torch.complex64)
    else:
        # large values only in the hidden middle: must not affect the formatter
        a = r.standard_normal(shape)
        a.reshape(-1)[a.size // 2] = 1e12
        t = torch.tensor(a, dtype=torch.float64)
    check(t)


def test_arange_summarized():
    check(torch.arange(10000))
    check(torch.arange(10000.0))
    check(torch.arange(10000.0).reshape(100, 100))


@pytest.mark.parametrize("n", [10, 17, 50, 120])
@pytest.mark.parametrize("linewidth", [20, 40, 80, 120, 200])
def test_linewidth(n, linewidth):
    r = rng(n + linewidth)
    check(torch.tensor(r.standard_normal(n), dtype=torch.float32), linewidth=linewidth)
    check(torch.tensor(r.standard_normal((3, n)) * 1e5), linewidth=linewidth)
    check(torch.tensor(r.integers(0, 10**5, size=(2, n))), linewidth=linewidth)
    check(torch.tensor(r.standard_normal(n) + 1j * r.standard_normal(n)),
          linewidth=linewidth)


def test_non_contiguous():
    a = torch.tensor(rng(0).standard_normal((4, 5, 6)))
    check(a.transpose(0, 2))
    check(a[:, ::2, 1::3])
    check(a.permute(1, 2, 0))
    check(torch.arange(24).reshape(4, 6).t())


# --------------------------------------------------------------------------
# print options
# --------------------------------------------------------------------------

OPTION_SETS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=8),
    dict(threshold=5),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=0),
    dict(threshold=10, edgeitems=5),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="default"),
    dict(profile="short", precision=6),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(sci_mode=True, precision=2),
    dict(linewidth=30),
    dict(linewidth=150, precision=3),
]


def option_id(opts):
    return ",".join(f"{k}={v}" for k, v in opts.items())


@pytest.mark.parametrize("opts", OPTION_SETS, ids=option_id)
def test_printoption_variants(opts):
    r = rng(3)
    cases = [
        torch.tensor(r.standard_normal(20), dtype=torch.float32),
        torch.tensor(r.standard_normal((4, 5)) * 1e6),
        torch.tensor(r.standard_normal((3, 4, 5)) * 1e-6, dtype=torch.float64),
        torch.tensor([1.0, 2.0, 100.0]),
        torch.tensor([0.0, -0.0]),
        torch.tensor([float("nan"), 1e10]),
        torch.tensor(3.14159265),
        torch.arange(30),
        torch.arange(1500).reshape(30, 50),
        torch.arange(1500.0).reshape(3, 10, 50),
        torch.tensor(r.random((8, 8)) > 0.5),
        torch.tensor(r.standard_normal(12) + 1j * r.standard_normal(12)),
        torch.tensor(r.integers(-100, 100, size=(5, 6)), dtype=torch.int8),
        torch.tensor(r.standard_normal((2000,)), dtype=torch.float16),
    ]
    for t in cases:
        check(t, **opts)


def test_set_get_printoptions_match_torch():
    for opts in OPTION_SETS:
        torch.set_printoptions(profile="default")
        ts.set_printoptions(profile="default")
        torch.set_printoptions(**opts)
        ts.set_printoptions(**opts)
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    assert set(ts.get_printoptions()) == {
        "precision", "threshold", "edgeitems", "linewidth", "sci_mode"}


def test_set_printoptions_resets_sci_mode_and_ignores_unknown_profile():
    ts.set_printoptions(sci_mode=True)
    ts.set_printoptions(precision=3)
    assert ts.PRINT_OPTS.sci_mode is None
    ts.set_printoptions(profile="bogus")
    assert ts.get_printoptions()["precision"] == 3


def test_printoptions_context_restores():
    before = ts.get_printoptions()
    with ts.printoptions(precision=1, sci_mode=True, threshold=3):
        assert ts.PRINT_OPTS.precision == 1
        assert ts.PRINT_OPTS.sci_mode is True
    assert ts.get_printoptions() == before
    with pytest.raises(ValueError):
        with ts.printoptions(precision=7):
            raise ValueError
    assert ts.get_printoptions() == before


def test_persistent_set_printoptions():
    t = torch.tensor([1.123456789, 2.0])
    torch.set_printoptions(precision=6)
    ts.set_printoptions(precision=6)
    assert ts.tensor_repr(fake_of(t)) == repr(t)


# --------------------------------------------------------------------------
# empty, meta, dtype suffix, default dtype
# --------------------------------------------------------------------------

ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + COMPLEX_DTYPES + [torch.bool]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (2, 0, 4), (1, 1, 0)])
def test_empty(dtype, shape):
    check(torch.empty(shape, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 3, 4)])
def test_meta(dtype, shape):
    check(torch.empty(shape, dtype=dtype, device="meta"))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_suffix_each_dtype(dtype):
    check(torch.ones((2, 2), dtype=dtype))
    check(torch.zeros((), dtype=dtype))


@pytest.mark.parametrize("default", [torch.float64, torch.float16, torch.bfloat16],
                         ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_other_default_dtype(dtype, default):
    torch.set_default_dtype(default)
    check(torch.ones(3, dtype=dtype))
    check(torch.empty(0, dtype=dtype))
    check(torch.empty(2, dtype=dtype, device="meta"))


def test_real_default_dtype_lookup(monkeypatch):
    monkeypatch.undo()  # use ember's own get_default_dtype
    check(torch.tensor([1.5, 2.0]))
    check(torch.tensor([1.5, 2.0], dtype=torch.float64))


def test_dtype_str_prefix_does_not_matter():
    t = torch.tensor([1, 2], dtype=torch.int32)
    for prefix in ("ember", "torch"):
        assert ts.tensor_repr(fake_of(t, prefix)) == repr(t)
    fake = fake_of(t)
    fake.dtype = FakeDtype("int32")
    fake.dtype.__class__ = type("D", (FakeDtype,), {"__str__": lambda s: "int"})
    assert ts.tensor_repr(fake) == repr(t)


# --------------------------------------------------------------------------
# autograd suffixes
# --------------------------------------------------------------------------


def test_requires_grad():
    check(torch.tensor([1.0, 2.0], requires_grad=True))
    check(torch.tensor(1.5, requires_grad=True))
    check(torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True))
    check(torch.empty((0, 2), requires_grad=True))
    check(torch.empty((2, 2), device="meta", requires_grad=True))


def test_grad_fn():
    x = torch.tensor(rng(1).standard_normal((3, 4)), requires_grad=True)
    check(x * 2)
    check(x.sum())
    check((x + 1).to(torch.float32))
    check(x.reshape(-1)[:5])
    check(torch.tensor([1, 2, 3.0], requires_grad=True).exp())


def test_suffix_wrapping():
    # long last lines push suffixes onto their own lines
    for n in (8, 9, 10, 11, 12, 13, 20):
        x = torch.tensor(rng(n).standard_normal(n) * 1e3, dtype=torch.float64,
                         requires_grad=True)
        check(x)
        check(x * 3)
        check(x.reshape(1, -1) * 3, linewidth=60)
    check(torch.arange(12, dtype=torch.int16))
    check(torch.arange(40, dtype=torch.int16).reshape(2, 20), linewidth=50)
    check(torch.empty((5, 0, 7), dtype=torch.complex128, device="meta",
                      requires_grad=True), linewidth=30)


def test_tensor_contents():
    t = torch.tensor([1, 2, 3], dtype=torch.int32)
    assert (ts.tensor_repr(fake_of(t), tensor_contents="[stuff]")
            == torch._tensor_str._str(t, tensor_contents="[stuff]"))
    m = torch.empty(2, 3, device="meta")
    assert (ts.tensor_repr(fake_of(m), tensor_contents="X")
            == torch._tensor_str._str(m, tensor_contents="X"))


def test_no_torch_import_in_module():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(ts))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert "torch" not in imported


# --------------------------------------------------------------------------
# seeded fuzz: random dtype, shape, magnitudes, specials and options
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(60))
def test_fuzz(seed):
    r = rng(1000 + seed)
    dtype = ALL_DTYPES[r.integers(len(ALL_DTYPES))]
    shape = tuple(int(n) for n in r.integers(0, 6, size=r.integers(0, 5)))
    if dtype == torch.bool:
        data = r.random(shape) > 0.5
    elif not (dtype.is_floating_point or dtype.is_complex):
        info = torch.iinfo(dtype)
        data = r.integers(info.min, info.max, size=shape, endpoint=True)
    else:
        mag = 10.0 ** r.integers(-8, 9, size=shape)
        data = r.standard_normal(shape) * mag
        if r.random() < 0.3:
            data = np.round(data)
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
        mask = r.random(shape) < 0.15
        data = np.where(mask, specials[r.integers(0, 5, size=shape)], data)
        if dtype.is_complex:
            imag = np.where(r.random(shape) < 0.5, -0.0, np.flip(data))
            data = data.astype(np.complex128)
            data.imag = imag
    opts = {}
    if r.random() < 0.5:
        opts = dict(
            precision=int(r.integers(0, 7)),
            threshold=int(r.integers(1, 60)),
            edgeitems=int(r.integers(0, 4)),
            linewidth=int(r.integers(20, 120)),
            sci_mode=[None, True, False][r.integers(3)],
        )
    t = torch.tensor(data, dtype=dtype)
    if (dtype.is_floating_point or dtype.is_complex) and r.random() < 0.3:
        t.requires_grad_(True)
        if r.random() < 0.5:
            t = t * 1
    check(t, **opts)


def test_storage_reprs_as_torch():
    """Storages print their bytes or values and torch's class path, as torch's do."""
    import warnings

    import ember
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation
        got = [repr(ember.tensor([1.0, 2.0]).untyped_storage()),
               repr(ember.tensor([1, 2]).storage())]
        want = [repr(torch.tensor([1.0, 2.0]).untyped_storage()),
                repr(torch.tensor([1, 2]).storage())]
    assert got == want
