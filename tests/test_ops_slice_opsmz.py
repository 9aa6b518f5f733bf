"""PyTorch's test_ops.py over the op_db entries m..z, special.* and _* (slice opsmz): the
behaviours ember had to change, each compared with torch on the same inputs -- error types and
messages of narrow, narrow_copy, unbind, roll, movedim, vsplit and multinomial, the ops whose
out= resizes without a warning, the keywords out= is refused by, and tensordot's size-1
contracted dims."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(lib, fn):
    """fn(lib): ("ok", values, dtype) or (exception type name, message)."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 -- the exception is the result compared
        return type(e).__name__, str(e)
    rs = r if isinstance(r, (tuple, list)) else [r]
    return "ok", [(str(t.dtype), tuple(t.shape), np.round(t.detach().double().numpy(), 6).tolist())
                  for t in rs]


def _same(fn):
    assert _run(ember, fn) == _run(torch, fn)


def _t(lib, *shape):
    return lib.arange(float(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("args", [
    (1, 11, 0), (1, -11, 0), (1, -1, 0), (0, 0, -1), (2, 0, 11), (3, 0, 0), (-4, 0, 0),
    (1, 2, 3), (1, -3, 2)])
def test_narrow_and_narrow_copy_errors(args):
    for name in ("narrow", "narrow_copy"):
        _same(lambda lib: getattr(lib, name)(_t(lib, 4, 10, 5), *args))


@pytest.mark.parametrize("start", [
    lambda lib: lib.tensor(True), lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    lambda lib: lib.tensor(2)])
def test_narrow_tensor_start(start):
    _same(lambda lib: lib.narrow(_t(lib, 4, 10), 1, start(lib), 3))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.unbind(lib.tensor(1.0)),
    lambda lib: lib.unbind_copy(lib.tensor(1.0)),
    lambda lib: lib.roll(lib.tensor(1.0), 0, 0),
    lambda lib: lib.roll(lib.tensor(1.0), 1),
    lambda lib: lib.movedim(_t(lib, 1, 2, 3, 4, 5), (0, 4, -5), (1, 2, 3)),
    lambda lib: lib.movedim(_t(lib, 1, 2, 3, 4), (0, 1, 2), (1, 0, -4)),
    lambda lib: lib.vsplit(_t(lib, 5, 2), 0),
    lambda lib: lib.multinomial(lib.ones(2, dtype=lib.float64), 2, out=lib.empty(2)),
    lambda lib: lib.median(lib.ones(3), out=lib.empty(0)),
    lambda lib: lib.nanmedian(lib.ones(3), out=lib.empty(0)),
    lambda lib: lib.ones(3).new_empty((2,), out=lib.empty(2)),
    lambda lib: lib.ones(3).new_full((2,), 1.0, out=lib.empty(2)),
    lambda lib: lib.ones(3).new_zeros((2,), pin_memory=False, layout=lib.strided),
    lambda lib: lib.ones(3).uniform_(0, 1, out=lib.empty(3)),
    lambda lib: lib.ones(3).uniform_(**{"from": 2, "to": 2}),
])
def test_errors_as_torch(fn):
    _same(fn)


def test_multinomial_too_many_categories():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r"number of categories cannot exceed 2\^24"):
            lib.multinomial(lib.ones(1).expand(2 ** 24 + 1), 3)   # no memory


_RESIZERS = {   # op: (call with out=, whether torch warns when it resizes a non-empty out)
    "zeros": (lambda lib, o: lib.zeros((2, 3), out=o), False),
    "full": (lambda lib, o: lib.full((2, 3), 2.0, out=o), False),
    "eye": (lambda lib, o: lib.eye(2, 3, out=o), False),
    "randn": (lambda lib, o: lib.randn((2, 3), out=o), False),
    "narrow_copy": (lambda lib, o: lib.narrow_copy(_t(lib, 2, 4), 1, 0, 3, out=o), False),
    "multinomial": (lambda lib, o: lib.multinomial(lib.ones(2, 4), 3, out=o.long()), False),
    "mode": (lambda lib, o: lib.mode(_t(lib, 3, 4), 0, out=(o, o.long())), True),
    "add": (lambda lib, o: lib.add(lib.ones(2, 3), 1, out=o), True),
}


@pytest.mark.parametrize("name", sorted(_RESIZERS))
def test_out_resize_warning(name):
    fn, warns = _RESIZERS[name]
    for lib in (ember, torch):
        out = lib.empty(5, 7)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib, out)
        resized = [w for w in caught if "An output with one or more elements" in str(w.message)]
        assert bool(resized) == warns, (lib.__name__, name)


def test_scatter_out():
    def fn(lib, **kw):
        out = lib.full((3, 5), 7.0)
        idx = lib.tensor([[0, 1, 2, 0, 0]])
        r = lib.scatter(lib.zeros(3, 5), 0, idx, **kw, out=out)
        assert r is out
        return out
    _same(lambda lib: fn(lib, src=lib.ones(1, 5)))
    _same(lambda lib: fn(lib, value=2.0))
    for lib in (ember, torch):   # the method has no out= (torch lists its overloads)
        with pytest.raises(TypeError):
            lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1), out=lib.empty(3))


@pytest.mark.parametrize("shapes,dims", [
    (((1, 1, 1), (2, 1, 2)), ([0, 1], [2, 0])),
    (((1, 3, 1), (2, 3, 4)), ([0, 1, 2], [2, 1, 0])),
    (((2, 1), (1, 5)), ([0], [1])),
])
def test_tensordot_size_one_contracted_dims(shapes, dims):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s) for s in shapes)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        try:
            r = lib.tensordot(x, y, dims=dims)
        except RuntimeError as e:
            results.append(str(e))
            continue
        r.sum().backward()
        results.append([np.round(t.detach().numpy(), 8).tolist() for t in (r, x.grad, y.grad)])
    assert results[0] == results[1]


@pytest.mark.parametrize("kwargs", [
    dict(output_size=[3, 3], align_corners=False, scale_factors=None),
    dict(output_size=None, align_corners=True, scale_factors=[0.6, 0.5]),
])
def test_upsample_bilinear2d_aa_vec_overload(kwargs):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 6))
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        r = lib._C._nn._upsample_bilinear2d_aa(t, **kwargs)
        r.sum().backward()
        results.append([np.round(v.detach().numpy(), 8).tolist() for v in (r, t.grad)])
    assert results[0] == results[1]


@pytest.mark.parametrize("mask", [True, False])
def test_masked_select_grad_of_0d(mask):
    results = []
    for lib in (ember, torch):
        x = lib.tensor(-8.5, requires_grad=True)
        r = lib.masked_select(x, lib.tensor(mask))
        (r * 3).sum().backward()
        results.append((r.tolist(), x.grad.item(), str(x.grad.dtype), tuple(x.grad.shape)))
    assert results[0] == results[1]


def test_inplace_mod_and_floordiv_operators():
    """x %= y is remainder_ (not a copy of x % y over x, which broke x's saved version)."""
    results = []
    for lib in (ember, torch):
        a = lib.tensor([5.0, -7.0, 3.5], requires_grad=True)
        b = lib.tensor([2.0, 3.0, -1.5], requires_grad=True)
        c = a.clone()
        c %= b
        c.sum().backward()
        d = lib.tensor([7, -3])
        d //= lib.tensor([2, 2])
        results.append((c.tolist(), a.grad.tolist(), b.grad.tolist(), d.tolist()))
    assert results[0] == results[1]
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x = lib.zeros(3)
            x %= lib.ones(2, 3)


@pytest.mark.parametrize("ord", [1, 3, 0.5, float("inf")])
def test_vector_norm_grad_of_complex(ord):
    rng = np.random.default_rng(1)
    z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    results = []
    for lib in (ember, torch):
        x = lib.tensor(z, requires_grad=True)
        lib.linalg.vector_norm(x, ord, dim=1).sum().backward()
        results.append(np.round(x.grad.numpy(), 8).tolist())
    assert results[0] == results[1]
