"""Compared with torch: which zero relu, clamp, hardtanh, relu6, threshold, fmax and fmin return
where 0.0 meets -0.0 (every float dtype, in-place and out= forms too); the functional
aten.fill.Scalar / fill.Tensor (values, layout, grad_fn names, gradients, errors); and the
index a custom Function's "invalid gradient" error names."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

NAN, INF = float("nan"), float("inf")
VALUES = [-0.0, 0.0, NAN, INF, -INF, -1.0, 1.0, 0.5, -2.5, 7.0]
PAIRS = list(itertools.product(VALUES, VALUES))   # 100: both loops of PyTorch's kernels
X = [a for a, _ in PAIRS]
Y = [b for _, b in PAIRS]
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def _F(lib):
    return lib.nn.functional


def _same(case, dtype, size=len(X)):
    """case(lib, x, y) in both libraries on the same inputs: the same dtype and values, NaN
    where torch has NaN, and elsewhere the same sign bit (so -0.0 where torch gives -0.0)."""
    got = []
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        r = case(lib, lib.tensor(X[:size], dtype=dt), lib.tensor(Y[:size], dtype=dt))
        got.append((str(r.dtype).split(".")[-1], r.detach().to(lib.float64).numpy()))
    (tdt, t), (edt, e) = got
    assert edt == tdt
    nan = np.isnan(t)
    np.testing.assert_array_equal(np.isnan(e), nan)
    np.testing.assert_array_equal(e[~nan], t[~nan])
    bad = np.nonzero((np.signbit(e) != np.signbit(t)) & ~nan)[0]
    assert not bad.size, [(X[i], Y[i], t[i], e[i]) for i in bad]
    return t


BOUNDED = {
    "relu": lambda lib, x, y: lib.relu(x),
    "relu_": lambda lib, x, y: lib.relu_(x),
    "Tensor.relu_": lambda lib, x, y: x.relu_(),
    "F.relu inplace": lambda lib, x, y: _F(lib).relu(x, inplace=True),
    "nn.ReLU": lambda lib, x, y: lib.nn.ReLU()(x),
    "clamp_min 0": lambda lib, x, y: lib.clamp_min(x, 0),
    "clamp_min -0.0": lambda lib, x, y: lib.clamp_min(x, -0.0),
    "clamp_min_": lambda lib, x, y: x.clamp_min_(0.0),
    "clamp_max 0": lambda lib, x, y: lib.clamp_max(x, 0),
    "clamp_max -0.0": lambda lib, x, y: lib.clamp_max(x, -0.0),
    "clamp min=0": lambda lib, x, y: lib.clamp(x, min=0),
    "clamp 0, 0": lambda lib, x, y: lib.clamp(x, 0.0, 0.0),
    "clamp -0.0, 0": lambda lib, x, y: lib.clamp(x, -0.0, 0.0),
    "clamp 0, -0.0": lambda lib, x, y: lib.clamp(x, 0.0, -0.0),
    "clamp 1, 0 (min > max)": lambda lib, x, y: lib.clamp(x, 1.0, 0.0),
    "clamp nan bound": lambda lib, x, y: lib.clamp(x, min=NAN),
    "clamp_ min=0": lambda lib, x, y: x.clamp_(min=0),
    "clamp_ max=-0.0": lambda lib, x, y: x.clamp_(max=-0.0),
    "clamp_ -0.0, 0": lambda lib, x, y: x.clamp_(-0.0, 0.0),
    "clamp out=": lambda lib, x, y: lib.clamp(x, min=0, out=lib.empty_like(x)),
    "clamp tensor bound, no ties": lambda lib, x, y: lib.clamp(x, min=y.abs() + 1),
    "hardtanh": lambda lib, x, y: _F(lib).hardtanh(x),
    "hardtanh 0, 1": lambda lib, x, y: _F(lib).hardtanh(x, 0.0, 1.0),
    "hardtanh -0.0, 0": lambda lib, x, y: _F(lib).hardtanh(x, -0.0, 0.0),
    "hardtanh_ 0, 6": lambda lib, x, y: _F(lib).hardtanh(x, 0.0, 6.0, inplace=True),
    "relu6": lambda lib, x, y: _F(lib).relu6(x),
    "relu6 inplace": lambda lib, x, y: _F(lib).relu6(x, inplace=True),
    "nn.ReLU6": lambda lib, x, y: lib.nn.ReLU6()(x),
    "threshold 0, 0": lambda lib, x, y: _F(lib).threshold(x, 0.0, 0.0),
    "threshold 0, -0.0": lambda lib, x, y: _F(lib).threshold(x, 0.0, -0.0),
    "threshold -0.0, 5": lambda lib, x, y: _F(lib).threshold(x, -0.0, 5.0),
    "threshold_": lambda lib, x, y: _F(lib).threshold(x, 0.0, 0.0, inplace=True),
    "threshold out=": lambda lib, x, y: lib.threshold(x, 0.0, 0.0, out=lib.empty_like(x)),
    "fmax": lambda lib, x, y: lib.fmax(x, y),
    "fmin": lambda lib, x, y: lib.fmin(x, y),
    "fmax out=": lambda lib, x, y: lib.fmax(x, y, out=lib.empty_like(x)),
    "fmin out=": lambda lib, x, y: lib.fmin(x, y, out=lib.empty_like(x)),
    "Tensor.fmax": lambda lib, x, y: x.fmax(y),
    "_add_relu": lambda lib, x, y: lib._VF._add_relu(x, y),
}


@pytest.mark.parametrize("name, dtype", [
    (n, d) for n in sorted(BOUNDED) for d in DTYPES
    if not (n == "_add_relu" and d in ("float16", "bfloat16"))])   # (PyTorch has no such kernel)
def test_signed_zeros_like_torch(name, dtype):
    _same(BOUNDED[name], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["relu", "clamp_min 0", "clamp 0, -0.0", "hardtanh 0, 1",
                                  "fmax", "fmin", "threshold 0, -0.0"])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_signed_zeros_small_tensors(name, dtype, size):
    """One to three elements: only PyTorch's scalar loop runs."""
    _same(BOUNDED[name], dtype, size)


def test_relu_keeps_negative_zero():
    for lib in (torch, ember):
        r = lib.relu(lib.tensor([-0.0, 0.0, -1.0]))
        assert np.signbit(r.numpy()).tolist() == [True, False, False]


@pytest.mark.parametrize("inplace", [False, True])
def test_relu_big_tensor_shared_over_threads(inplace):
    """Big enough for ember's intra-op threads: zeros scattered over the whole tensor."""
    a = np.random.default_rng(0).standard_normal((64, 3, 20, 20)).astype(np.float32)
    a.flat[::7] = -0.0
    a.flat[3::11] = 0.0
    got = []
    for lib in (torch, ember):
        x = lib.tensor(a)
        r = x.relu_() if inplace else lib.relu(x)
        got.append(r.numpy().view(np.uint32))
    np.testing.assert_array_equal(got[1], got[0])
    assert (got[0] == 0x80000000).sum() > 1000   # -0.0 survived, many times


def test_relu_gradient_at_negative_zero():
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([-0.0, 0.0, 1.0, -1.0], requires_grad=True)
        lib.relu(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ---- aten.fill ---------------------------------------------------------------------------------
def _fill_cases(lib):
    a = lib.ops.aten
    x = lib.tensor(np.arange(12.0).reshape(3, 4)).t().requires_grad_()
    v = lib.tensor(2.5, requires_grad=True)
    return x, v, {
        "fill.Scalar": lambda: a.fill.Scalar(x, 1.5),
        "fill.Tensor": lambda: a.fill.Tensor(x, v),
        "fill.Scalar int": lambda: a.fill.Scalar(x, 3),
        "torch.fill tensor": lambda: lib.fill(x, v),
        "torch.fill number": lambda: lib.fill(x, -0.0),
        "fill_ tensor": lambda: (x * 1).fill_(v),
        "torch.fill_ tensor": lambda: lib.fill_(x * 1, v),
        "fill_ number": lambda: (x * 1).fill_(2),
        "fill_ value=": lambda: (x * 1).fill_(value=2),
        "fill_.Tensor": lambda: a.fill_.Tensor(x * 1, v),
        "fill_ float64 value": lambda: lib.zeros(2).fill_(lib.tensor(1.1, dtype=lib.float64)),
        "uint8 overflow": lambda: a.fill.Scalar(lib.zeros(2, dtype=lib.uint8), 300),
        "int32 from 1.7": lambda: a.fill.Scalar(lib.zeros(2, dtype=lib.int32), 1.7),
        "bool from 0.5": lambda: a.fill.Scalar(lib.zeros(2, dtype=lib.bool), 0.5),
        "int32 from a big tensor": lambda: a.fill.Tensor(lib.zeros(2, dtype=lib.int32),
                                                         lib.tensor(1e10)),
        "1-d value": lambda: a.fill.Tensor(lib.zeros(2), lib.tensor([1.0, 2.0])),
        "torch.fill 1-d value": lambda: lib.fill(lib.zeros(2), lib.tensor([1.0, 2.0])),
        "fill_ 1-d value": lambda: lib.zeros(2).fill_(lib.tensor([1.0, 2.0])),
        "empty transposed": lambda: a.fill.Scalar(lib.zeros(0, 3).t(), 1),
        "meta": lambda: a.fill.Scalar(lib.zeros(2, 3, device="meta").t(), 2),
        "meta 1-d value": lambda: a.fill.Tensor(lib.zeros(2, device="meta"),
                                                lib.tensor([1.0, 2.0], device="meta")),
    }


def _fill_outcome(lib, name):
    x, v, cases = _fill_cases(lib)
    try:
        r = cases[name]()
    except Exception as e:   # noqa: BLE001 -- the exception is what is compared
        return type(e).__name__, str(e)
    out = [str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.device.type,
           None if r.grad_fn is None else r.grad_fn.name()]
    if r.device.type != "meta":
        out.append(r.detach().numpy().tolist())
        out.append(np.signbit(r.detach().to(lib.float64).numpy()).tolist())
    if r.requires_grad:
        gx, gv = lib.autograd.grad((r * 3).sum(), [x, v], allow_unused=True)
        out.append([None if g is None else g.numpy().tolist() for g in (gx, gv)])
    return out


@pytest.mark.parametrize("name", sorted(_fill_cases(torch)[2]))
def test_fill_like_torch(name):
    assert _fill_outcome(ember, name) == _fill_outcome(torch, name)


def test_fill_ops_declared():
    for lib in (torch, ember):
        assert {"Scalar", "Tensor"} <= set(lib.ops.aten.fill.overloads())
        assert {"Scalar", "Tensor"} <= set(lib.ops.aten.fill_.overloads())


# ---- a custom Function's invalid gradient -------------------------------------------------------
def _functions(lib):
    class Between(lib.autograd.Function):   # numbers before and between the tensors
        @staticmethod
        def forward(ctx, k, x, flag, y):
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            return None, lib.ones(5), None, g

    class Last(lib.autograd.Function):
        @staticmethod
        def forward(ctx, k, x, flag, y):
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            return None, g, None, lib.ones(7)

    class Middle(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            return g, None, lib.ones(2, 2)

    class Broadcast(lib.autograd.Function):   # summed back to the input's shape
        @staticmethod
        def forward(ctx, k, x):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return None, g.expand(2, 3)

    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
    plain = lib.tensor([7.0, 8.0, 9.0])
    return x, y, {
        "first tensor": lambda: Between.apply(2.0, x, True, y),
        "second tensor": lambda: Last.apply(2.0, x, True, y),
        "between numbers": lambda: Middle.apply(x, 3, y),
        "bad gradient of an input without grad": lambda: Last.apply(2.0, x, True, plain),
        "first input without grad": lambda: Between.apply(2.0, plain, True, y),
        "second tensor after one without grad": lambda: Last.apply(2.0, plain, True, y),
        "broadcast": lambda: Broadcast.apply(2.0, x),
    }


def _function_outcome(lib, name):
    x, y, cases = _functions(lib)
    try:
        out = cases[name]()
        grads = lib.autograd.grad(out.sum(), [x, y], allow_unused=True)
    except Exception as e:   # noqa: BLE001 -- the exception is what is compared
        return type(e).__name__, str(e)
    return [None if g is None else g.numpy().tolist() for g in grads]


@pytest.mark.parametrize("name", sorted(_functions(torch)[2]))
def test_invalid_gradient_index_like_torch(name):
    assert _function_outcome(ember, name) == _function_outcome(torch, name)


def test_invalid_gradient_index_counts_tensor_inputs():
    kind, message = _function_outcome(ember, "between numbers")
    assert kind == "RuntimeError"
    assert message == ("Function MiddleBackward returned an invalid gradient at index 1 - got "
                       "[2, 2] but expected shape compatible with [3]")
