"""PyTorch's test_ops.py test_out / test_out_warning over the whole op_db (slice opsout): the
out= behaviours ember had to change, each compared with torch on the same inputs -- an out
resized in place (its data_ptr kept) to the result's strides, a lazily conjugated result written
into a resized out, the out= overloads of native_batch_norm, _native_batch_norm_legit,
_chunk_cat and nonzero_static, random factories drawing into out where it lies, normal's
broadcast against out, torch.lu's resize_as_ out, mode's silent resize of a 0-d input's outputs,
and the out dtype checks with their messages."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _values(t):
    t = t.detach().resolve_conj()
    if t.is_complex():
        t = t.real.double() + 1j * t.imag.double()
        return np.round(t.numpy(), 5).tolist()
    return np.round(t.double().numpy(), 5).tolist()


def _outcome(lib, fn, strides=True):
    """fn(lib) -> ("ok", [(dtype, shape, stride, values)], resize warnings, out is returned)
    or (exception type name, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, r = fn(lib)
        except Exception as e:  # noqa: BLE001 -- the exception is the result compared
            return type(e).__name__, str(e).split("\n")[0]
    outs = out if isinstance(out, (tuple, list)) else [out]
    rs = r if isinstance(r, (tuple, list)) else [r]
    warned = sum("An output with one or more elements" in str(w.message) for w in caught)
    return ("ok", [(str(t.dtype), tuple(t.shape), t.stride() if strides else None, _values(t))
                   for t in outs],
            warned, all(a is b for a, b in zip(outs, rs)))


def _same(fn, strides=True):
    assert _outcome(ember, fn, strides) == _outcome(torch, fn, strides)


def _x(lib, *shape, dtype="float32"):
    n = int(np.prod(shape))
    return lib.tensor(((np.arange(n) * 7 % 11) - 5.0).reshape(shape), dtype=getattr(lib, dtype))


def _call(name, *args, out, **kwargs):
    def fn(lib):
        o = out(lib)
        return o, _resolve(lib, name)(*[a(lib) if callable(a) else a for a in args], **kwargs,
                                      out=o)
    return fn


def _resolve(lib, name):
    f = lib
    for part in name.split("."):
        f = getattr(f, part)
    return f


def test_resized_out_keeps_its_storage_when_large_enough():
    def fn(lib):
        o = lib.zeros(10)
        ptr = o.data_ptr()
        r = lib.add(_x(lib, 2, 3), 1, out=o)
        return (o, lib.tensor(float(o.data_ptr() == ptr))), (r, None)
    # (the second "output" reports whether the data_ptr stayed)
    e, t = _outcome(ember, fn), _outcome(torch, fn)
    assert e[:2] == t[:2] and e[2] == t[2] == 1


@pytest.mark.parametrize("fname", ["ifft", "ihfft", "fft", "hfft"])
def test_resized_out_of_a_conjugated_result(fname):
    # ifft of a real input is a lazily conjugated view: a resized out must hold its values
    # (its strides are not compared: PyTorch's c2c result is not contiguous, ember's is)
    _same(_call(f"fft.{fname}", lambda lib: _x(lib, 5, 6, 7), n=10, dim=1, norm="ortho",
                out=lambda lib: lib.empty(0, dtype=lib.complex64 if fname[-3:] != "hfft"
                                          else lib.float32)), strides=False)


@pytest.mark.parametrize("out_shape,dtype", [((0,), "float32"), ((2,), "float32"),
                                             ((3, 4, 5), "int64"), ((3, 4, 5), "float64")])
@pytest.mark.parametrize("name,stats", [("native_batch_norm", True),
                                        ("_native_batch_norm_legit", True),
                                        ("_native_batch_norm_legit", False)])
def test_batch_norm_out_overloads(name, stats, out_shape, dtype):
    def fn(lib):
        x, w, b = _x(lib, 3, 4, 5), _x(lib, 4), _x(lib, 4).abs()
        running = (lib.zeros(4), lib.ones(4)) if stats else ()
        out = tuple(lib.zeros(out_shape, dtype=getattr(lib, dtype)) for _ in range(3))
        return out, getattr(lib, name)(x, w, b, *running, True, 0.1, 1e-5, out=out)
    _same(fn)


@pytest.mark.parametrize("out", [lambda lib: lib.zeros(1, 30), lambda lib: lib.zeros(0),
                                 lambda lib: lib.zeros(1, 2, 5, 2, dtype=lib.int64)])
def test_chunk_cat_out(out):
    _same(_call("_chunk_cat", lambda lib: [_x(lib, 1, 2, 3), _x(lib, 1, 2, 3)], -1, 5, out=out))


@pytest.mark.parametrize("out", [lambda lib: lib.zeros(3, 2, dtype=lib.float32),
                                 lambda lib: lib.zeros(5, 5, dtype=lib.int64)[:, :2],
                                 lambda lib: lib.zeros(3, dtype=lib.int64),
                                 lambda lib: lib.zeros(3, 2, dtype=lib.int64)])
def test_nonzero_static_out(out):
    _same(_call("nonzero_static", lambda lib: _x(lib, 2, 2), size=3, out=out))


@pytest.mark.parametrize("name", ["randn", "rand"])
@pytest.mark.parametrize("out", [lambda lib: lib.zeros(5, 10)[:, ::2], lambda lib: lib.zeros(7),
                                 lambda lib: lib.zeros(5, 5, dtype=lib.int64)])
def test_random_factories_draw_into_out(name, out):
    def fn(lib):
        lib.manual_seed(42)
        o = out(lib)
        return o, getattr(lib, name)(5, 5, out=o)
    _same(fn)


@pytest.mark.parametrize("out_shape", [(2, 3), (0,), (1, 1), (5,)])
@pytest.mark.parametrize("which", ["mean", "std", "both"])
def test_normal_tensor_out(which, out_shape):
    def fn(lib):
        mean = _x(lib, 3) if which != "std" else 0.5
        std = _x(lib, 3).abs() if which != "mean" else 2.0
        o = lib.zeros(out_shape)
        lib.manual_seed(0)
        return o, lib.normal(mean, std, out=o)
    _same(fn)


def test_normal_noncontiguous_out_draws_in_place():
    def fn(lib):
        o = lib.zeros(4, 12)[:, ::2]
        lib.manual_seed(1)
        return o, lib.normal(_x(lib, 4, 6), 1.5, out=o)
    _same(fn)


@pytest.mark.parametrize("get_infos", [False, True])
@pytest.mark.parametrize("dtype,shape", [("float32", (6, 1)), ("int64", (5, 5)),
                                         ("float32", (0,))])
def test_lu_out_is_resize_as_and_copy(get_infos, dtype, shape):
    def fn(lib):
        out = (lib.zeros(shape, dtype=getattr(lib, dtype)), lib.zeros(2, dtype=lib.int32),
               lib.zeros(2, dtype=lib.int32))[:2 + get_infos]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # torch.lu's deprecation (worded differently)
            r = lib.lu(_x(lib, 5, 5), get_infos=get_infos, out=out)
        return out, r
    _same(fn)


@pytest.mark.parametrize("shape", [(), (1,), (3,), (4, 5)])
def test_mode_out_resize_warning(shape):
    _same(_call("mode", lambda lib: _x(lib, *shape), out=lambda lib: (lib.zeros(2),
                                                                       lib.zeros(2, dtype=lib.int64))))


# one sample per op whose out= dtype check PyTorch makes in its own way; each op is called with
# an out of the result's shape in float64 and in int64 (and, for some, float32)
_DTYPE_CASES = {
    "diff": lambda lib: (lib.diff, (_x(lib, 4, 3),), {}),
    "diff n=0": lambda lib: (lib.diff, (_x(lib, 4, 3), 0), {}),
    "expand_copy": lambda lib: (lib.expand_copy, (_x(lib, 1, 3), (2, 3)), {}),
    "diag": lambda lib: (lib.diag, (_x(lib, 3, 3),), {}),
    "diag of a vector": lambda lib: (lib.diag, (_x(lib, 3),), {}),
    "isin": lambda lib: (lib.isin, (_x(lib, 4), _x(lib, 2)), {}),
    "ldexp": lambda lib: (lib.ldexp, (_x(lib, 3), lib.tensor([1, 2, 3])), {}),
    "masked_select": lambda lib: (lib.masked_select, (_x(lib, 4), _x(lib, 4) > 0), {}),
    "index_select": lambda lib: (lib.index_select, (_x(lib, 4, 2), 0, lib.tensor([0, 2])), {}),
    "max": lambda lib: (lib.max, (_x(lib, 4),), {}),
    "quantile": lambda lib: (lib.quantile, (_x(lib, 5), 0.3), {}),
    "avg_pool2d": lambda lib: (lib._C._nn.avg_pool2d, (_x(lib, 1, 2, 4, 4), 2), {}),
    "log_sigmoid": lambda lib: (lib._C._nn.log_sigmoid, (_x(lib, 4),), {}),
    "gelu": lambda lib: (lib._C._nn.gelu, (_x(lib, 4),), {}),
    "mvlgamma": lambda lib: (lib.mvlgamma, (_x(lib, 4).abs() + 3, 2), {}),
    "narrow_copy": lambda lib: (lib.narrow_copy, (_x(lib, 4, 3), 0, 1, 2), {}),
    "permute_copy": lambda lib: (lib.permute_copy, (_x(lib, 4, 3), (1, 0)), {}),
    "index_add": lambda lib: (lib.index_add, (_x(lib, 4, 2), 0, lib.tensor([0, 2]),
                                              _x(lib, 2, 2)), {}),
    "take": lambda lib: (lib.take, (_x(lib, 4, 2), lib.tensor([0, 5])), {}),
    "scatter_add": lambda lib: (lib.scatter_add, (_x(lib, 3), 0, lib.tensor([0, 2]),
                                                  _x(lib, 2)), {}),
    "stack": lambda lib: (lib.stack, ([_x(lib, 2), _x(lib, 2)],), {}),
    "histogram": lambda lib: (lib.histogram, (_x(lib, 10), 3), {}),
    "tril": lambda lib: (lib.tril, (_x(lib, 3, 3),), {}),
    "logsumexp": lambda lib: (lib.logsumexp, (_x(lib, 3, 3), 0), {}),
    "nanmean": lambda lib: (lib.nanmean, (_x(lib, 3, 3), 0), {}),
    "take_along_dim": lambda lib: (lib.take_along_dim, (_x(lib, 3, 3), lib.tensor([[0], [1],
                                                                                 [2]]), 1), {}),
    "vecdot": lambda lib: (lib.linalg.vecdot, (_x(lib, 3, 3), _x(lib, 3, 3)), {}),
    "lstsq": lambda lib: (lib.linalg.lstsq, (_x(lib, 4, 3) + lib.eye(4, 3) * 9, _x(lib, 4, 2)),
                          {}),
    "linalg.norm": lambda lib: (lib.linalg.norm, (_x(lib, 3, 3),), {}),
    "matrix_power 1": lambda lib: (lib.linalg.matrix_power, (_x(lib, 3, 3), 1), {}),
    "matrix_power 2": lambda lib: (lib.linalg.matrix_power, (_x(lib, 3, 3), 2), {}),
    "lu_unpack": lambda lib: (lib.lu_unpack, lib.linalg.lu_factor(_x(lib, 3, 3) + lib.eye(3) * 9),
                              {}),
    "matmul vv": lambda lib: (lib.matmul, (_x(lib, 3), _x(lib, 3)), {}),
    "matmul mv": lambda lib: (lib.matmul, (_x(lib, 2, 3), _x(lib, 3)), {}),
    "matmul mm": lambda lib: (lib.matmul, (_x(lib, 2, 3), _x(lib, 3, 2)), {}),
}


@pytest.mark.parametrize("dtype", ["float64", "int64"])
@pytest.mark.parametrize("case", sorted(_DTYPE_CASES))
def test_out_dtype_checks(case, dtype):
    if case == "ldexp" and dtype == "float64":
        pytest.skip("PyTorch fails an internal assert (ldexp of an int exponent into float64)")
    def fn(lib):
        f, args, kwargs = _DTYPE_CASES[case](lib)
        expected = f(*args, **kwargs)
        like = [expected] if isinstance(expected, lib.Tensor) else expected
        out = [lib.zeros(t.shape, dtype=getattr(lib, dtype)) for t in like]
        out = out[0] if isinstance(expected, lib.Tensor) else tuple(out)
        return out, f(*args, **kwargs, out=out)
    _same(fn)


@pytest.mark.parametrize("out", [lambda lib: lib.zeros(4), lambda lib: lib.zeros(8)[::2],
                                 lambda lib: lib.zeros(0), lambda lib: lib.zeros(3)])
@pytest.mark.parametrize("name", ["matmul", "linear"])
def test_vector_by_matrix_out_goes_through_mm(name, out):
    # PyTorch resizes out to one row (warning even when it had the right shape) and squeezes it
    def fn(lib):
        o = out(lib)
        if name == "matmul":
            return o, lib.matmul(_x(lib, 3), _x(lib, 3, 4), out=o)
        return o, lib._C._nn.linear(_x(lib, 3), _x(lib, 4, 3), _x(lib, 4), out=o)
    _same(fn)


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                   "float8_e5m2fnuz"])
def test_make_tensor_of_8bit_floats(dtype):
    def draw(lib):
        lib.manual_seed(0)
        t = lib.testing.make_tensor((2, 3), dtype=getattr(lib, dtype), device="cpu",
                                    noncontiguous=True)
        return str(t.dtype), t.stride(), t.float().tolist()
    assert draw(ember) == draw(torch)


@pytest.mark.parametrize("name", ["native_batch_norm", "_native_batch_norm_legit"])
def test_batch_norm_eval_out_leaves_the_statistics_outputs(name):
    def fn(lib):
        x, w, b = _x(lib, 3, 4, 5), _x(lib, 4), _x(lib, 4).abs()
        out = (lib.full((3, 4, 6), 7.0), lib.full((1,), 7.0), lib.full((7,), 7.0))
        return out, getattr(lib, name)(x, w, b, lib.zeros(4), lib.ones(4), False, 0.1, 1e-5,
                                       out=out)
    _same(fn)


@pytest.mark.parametrize("op", ["vdot", "mul", "mm"])
def test_view_made_under_no_grad_then_requiring_grad_is_a_leaf(op):
    # OpInfo's conjugated samples: x.conj() made under no_grad, then .requires_grad_()
    def grads(lib):
        x = lib.tensor([1 + 2j, 3 - 1j, -2 + 0.5j], requires_grad=True)
        with lib.no_grad():
            b = x.conj()
        b.requires_grad_(True)
        a = lib.tensor([0.5 - 1j, 2 + 1j, 1 + 1j], requires_grad=True)
        out = {"vdot": lambda: lib.vdot(a, b), "mul": lambda: (a * b).sum(),
               "mm": lambda: lib.mm(a[None], b[:, None])}[op]()
        out.abs().sum().backward()
        return b.is_leaf, x.grad, _values(b.grad), _values(a.grad)
    assert grads(ember) == grads(torch)


@pytest.mark.parametrize("out_shape", [(4, 3), (4, 4), (0,)])
def test_scaled_mm_out(out_shape):
    def fn(lib):
        a = _x(lib, 4, 16).div(8).to(lib.float8_e4m3fn)
        b = _x(lib, 3, 16).div(8).to(lib.float8_e4m3fn).t()
        one = lib.tensor(1.0)
        o = lib.zeros(out_shape, dtype=lib.float32)
        return o, lib._scaled_mm(a, b, one, one, out_dtype=lib.float32, out=o)
    _same(fn)
