"""test_ops.py TestCommon test_dtypes, op_db ops m..z: ember's dtype refusals as PyTorch's.

Each case runs the same call in ember and in torch and compares the outcome: the result's dtype,
values and grad_fn name, or the exception's type and message.
"""
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 -- the exception is what is compared
        return ("raises", type(e).__name__, str(e))
    if isinstance(r, lib.Tensor):
        return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape),
                type(r.grad_fn).__name__ if r.grad_fn is not None else None)
    return ("value", r)


def _same(fn):
    got, want = _outcome(ember, fn), _outcome(torch, fn)
    assert got == want


def _pool(lib, nd, grad_dtype, self_dtype):
    x = lib.arange(2 * 4 ** nd, dtype=lib.float32).reshape((1, 2) + (4,) * nd)
    pool = lib.nn.functional.max_pool2d if nd == 2 else lib.nn.functional.max_pool3d
    out, idx = pool(x, 2, return_indices=True)
    backward = getattr(lib.ops.aten, f"max_pool{nd}d_with_indices_backward")
    return backward(out.to(grad_dtype), x.to(self_dtype), [2] * nd, [2] * nd, [0] * nd,
                    [1] * nd, False, idx)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("grad_dtype, self_dtype", [
    ("int64", "int64"), ("uint8", "uint8"), ("bool", "bool"), ("complex64", "complex64"),
    ("int64", "float32"), ("float32", "float64"), ("float16", "float16"),
    ("bfloat16", "bfloat16"), ("float64", "float64")])
def test_max_pool_backward_dtypes(nd, grad_dtype, self_dtype):
    """The CPU kernel is for floating types; grad_output must have the input's dtype."""
    _same(lambda lib: _pool(lib, nd, getattr(lib, grad_dtype), getattr(lib, self_dtype)))


def test_max_pool_backward_values():
    got = _pool(ember, 2, ember.float32, ember.float32)
    want = _pool(torch, 2, torch.float32, torch.float32)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int8", "bool", "float32", "float16",
                                   "complex64"])
@pytest.mark.parametrize("form", ["function", "method", "inplace", "out", "no_decimals",
                                  "decimals_2"])
def test_round_decimals_zero_is_the_decimals_overload(dtype, form):
    """round(x, decimals=0) is round.decimals (round's kernel: integers refused, RoundBackward1);
    round(x) passes integers through."""
    def call(lib):
        x = lib.tensor([1.5, 2.5, -0.5]).to(getattr(lib, dtype))
        if form == "function":
            return lib.round(x, decimals=0)
        if form == "method":
            return x.round(decimals=0)
        if form == "inplace":
            return x.clone().round_(decimals=0)
        if form == "out":
            return lib.round(x, decimals=0, out=lib.empty(3, dtype=x.dtype))
        if form == "no_decimals":
            return lib.round(x)
        return lib.round(x, decimals=2)
    _same(call)


def test_round_decimals_zero_grad_fn():
    def call(lib):
        return lib.round(lib.tensor([1.5, 2.5], requires_grad=True), decimals=0)
    _same(call)
    assert ember.round(ember.tensor([1.5, 2.5, 0.5]), decimals=0).tolist() == [2.0, 2.0, 0.0]


@pytest.mark.parametrize("dtype", ["complex64", "float32", "float16", "int64", "bool"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("scale", [2.0, 2])
def test_native_dropout_backward(dtype, requires_grad, scale):
    """An autograd op of its own: a complex result requiring grad is refused (off PyTorch's
    complex allowlist), a real one records NativeDropoutBackwardBackward0; a float scale."""
    if requires_grad and dtype in ("int64", "bool"):
        pytest.skip("integer tensors cannot require grad")

    def call(lib):
        g = lib.ones(3, dtype=getattr(lib, dtype), requires_grad=requires_grad)
        return lib.ops.aten.native_dropout_backward(g, lib.tensor([True, False, True]), scale)
    _same(call)


def test_native_dropout_backward_values_and_grad():
    results = []
    for lib in (ember, torch):
        g = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        r = lib.ops.aten.native_dropout_backward(g, lib.tensor([True, False, True]), 2.0)
        (r * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        results.append((r.tolist(), g.grad.tolist()))
    assert results[0] == results[1] == ([2.0, 0.0, 6.0], [2.0, 0.0, 200.0])


def test_native_dropout_backward_meta():
    _same(lambda lib: lib.ops.aten.native_dropout_backward(
        lib.ones(3, dtype=lib.int64, device="meta"), lib.ones(3, dtype=lib.bool, device="meta"),
        2.0))


@pytest.mark.parametrize("case", ["mean", "std", "both", "mean_no_grad"])
def test_normal_complex(case):
    """normal with a complex tensor mean draws complex numbers, but refuses to record them for
    autograd; a complex std is refused with PyTorch's message."""
    def call(lib):
        z = lib.ones(3, dtype=lib.complex64, requires_grad=case != "mean_no_grad")
        if case == "std":
            return lib.normal(1.0, z)
        if case == "both":
            return lib.normal(z, lib.ones(3))
        return lib.normal(z, 2.7)
    _same(call)
