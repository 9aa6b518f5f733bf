"""Fixes found by running PyTorch's test/test_view_ops.py and test/test_shape_ops.py on ember,
checked against PyTorch on the same inputs."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn, L):
    """fn(L)'s result, or the (exception class, message) it raised."""
    try:
        return fn(L)
    except Exception as e:   # noqa: BLE001 -- the exception is what is compared
        return type(e), str(e)


def _same_error(fn):
    """fn raises in both libraries: the same builtin exception class and the same message."""
    e, t = _outcome(fn, ember), _outcome(fn, torch)
    assert isinstance(t, tuple), f"torch did not raise: {t}"
    assert e == t


def _same_values(fn):
    e, t = fn(ember), fn(torch)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        assert a.stride() == b.stride()
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# ---- swapaxes takes NumPy's parameter names axis0/axis1, swapdims and transpose dim0/dim1
@pytest.mark.parametrize("call", [
    lambda L, x: L.swapaxes(x, axis0=0, axis1=-1),
    lambda L, x: x.swapaxes(axis0=2, axis1=0),
    lambda L, x: L.swapdims(x, dim0=1, dim1=2),
    lambda L, x: x.swapdims(dim0=-1, dim1=0),
    lambda L, x: L.transpose(x, dim0=0, dim1=1),
])
def test_swapaxes_keywords(call):
    _same_values(lambda L: (call(L, L.arange(24.).reshape(2, 3, 4)),))


@pytest.mark.parametrize("call", [
    lambda L, x: L.swapaxes(x, dim0=0, dim1=1),
    lambda L, x: L.transpose(x, axis0=0, axis1=1),
    lambda L, x: L.swapdims(x, axis0=0, axis1=1),
])
def test_swapaxes_refuses_the_other_names(call):
    for L in (ember, torch):
        with pytest.raises(TypeError):
            call(L, L.ones(2, 3))


def test_swapaxes_is_transpose_under_autograd():
    for L in (ember, torch):
        x = L.ones(2, 3, requires_grad=True)
        y = L.swapaxes(x, axis0=0, axis1=1)
        assert type(y.grad_fn).__name__ == "TransposeBackward0"
        assert y._base is x


# ---- tensor_split's tensor_indices_or_sections is checked as PyTorch's overload checks it
@pytest.mark.parametrize("arg", [
    lambda L: L.tensor(1.1), lambda L: L.tensor([1, 2], dtype=L.int32),
    lambda L: L.tensor(True), lambda L: L.tensor(((1,),)), lambda L: 1.5, lambda L: [1.5],
])
def test_tensor_split_refuses(arg):
    _same_error(lambda L: L.tensor_split(L.arange(10.), arg(L)))


@pytest.mark.parametrize("arg", [
    lambda L: L.tensor(3), lambda L: L.tensor([2, 7]), lambda L: (L.tensor(2), 3),
    lambda L: L.tensor([], dtype=L.long), lambda L: [-3],
])
def test_tensor_split_accepts(arg):
    _same_values(lambda L: L.tensor_split(L.arange(10.), arg(L)))


# ---- tensor_split's three overloads take their split argument by its own keyword
@pytest.mark.parametrize("call", [
    lambda L, a: L.tensor_split(a, sections=3), lambda L, a: L.tensor_split(a, indices=[2, 5]),
    lambda L, a: L.tensor_split(a, tensor_indices_or_sections=L.tensor(3)),
    lambda L, a: L.tensor_split(a, sections=2, dim=-1), lambda L, a: a.tensor_split(3, 0),
    lambda L, a: a.tensor_split(indices=(1,), dim=0), lambda L, a: L.tensor_split(a, 3, axis=0),
])
def test_tensor_split_keywords(call):
    _same_values(lambda L: call(L, L.arange(10.)))


@pytest.mark.parametrize("call", [
    lambda L, a: L.tensor_split(a, indices_or_sections=3), lambda L, a: L.tensor_split(a),
    lambda L, a: L.tensor_split(a, sections=[1, 2]), lambda L, a: L.tensor_split(a, indices=3),
    lambda L, a: L.tensor_split(a, 3, 0, 1), lambda L, a: L.tensor_split(a, 3, dim=1.5),
    lambda L, a: L.tensor_split(a, tensor_indices_or_sections=[1]),
])
def test_tensor_split_refuses_overloads(call):
    for L in (ember, torch):
        with pytest.raises(TypeError, match=r"tensor_split\(\) received an invalid combination"):
            call(L, L.arange(10.))


@pytest.mark.parametrize("call", [
    lambda L, a: L.hsplit(a, sections=3), lambda L, a: L.hsplit(a, indices=[1]),
    lambda L, a: L.vsplit(a, sections=2), lambda L, a: L.dsplit(a, indices=(1, 3)),
    lambda L, a: a.hsplit(sections=3), lambda L, a: L.hsplit(a, L.tensor(3)),
])
def test_split_along_keywords(call):
    _same_values(lambda L: call(L, L.arange(24.).reshape(2, 3, 4)))


@pytest.mark.parametrize("call", [
    lambda L, a: L.hsplit(a, indices_or_sections=3), lambda L, a: L.hsplit(a, indices=1),
    lambda L, a: L.hsplit(a, sections=[1]), lambda L, a: L.hsplit(a, 3, 1),
    lambda L, a: L.hsplit(a), lambda L, a: L.hsplit(a, 2.0),
])
def test_split_along_refuses_overloads(call):
    for L in (ember, torch):
        with pytest.raises(TypeError, match=r"hsplit\(\) received an invalid combination"):
            call(L, L.arange(24.).reshape(2, 3, 4))


# ---- resize_ checks the storage size as c10 does (numel, then bytes, against int64)
@pytest.mark.parametrize("size", [[2, 4, 2 ** 29, 2 ** 29], [8, 8, 2 ** 29, 2 ** 29],
                                  [2 ** 40, 2 ** 20], [2 ** 62]])
def test_resize_overflow(size):
    _same_error(lambda L: L.empty((), dtype=L.float64).resize_(size))


def test_resize_overflow_counts_the_offset():
    _same_error(lambda L: L.empty(3, dtype=L.float64)[1:].resize_(2 ** 60 - 1))


def test_empty_overflow_bound_is_int64():
    _same_error(lambda L: L.empty(2 ** 60, dtype=L.float64))


# ---- a sparse COO tensor's t() needs <= 2 sparse and no dense dims
@pytest.mark.parametrize("make", [lambda L: L.ones(2, 2, 2).to_sparse(),
                                  lambda L: L.ones(2, 2, 2).to_sparse(2),
                                  lambda L: L.ones(2, 2).to_sparse(1)])
def test_sparse_t_dims(make):
    _same_error(lambda L: make(L).t())


def test_sparse_t_values():
    for shape in [(), (3,), (2, 3)]:
        e = ember.arange(6.)[:int(np.prod(shape))].reshape(shape).to_sparse().t()
        t = torch.arange(6.)[:int(np.prod(shape))].reshape(shape).to_sparse().t()
        np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())


# ---- PyTorch's C++ warnings name the user's line, and say all of their text
@pytest.mark.parametrize("call", [
    lambda L: L.tensor(2.).adjoint(),
    lambda L: L.nonzero(L.ones(2), out=L.empty(3, dtype=L.long)),
    lambda L: L.frobenius_norm(L.ones(2, 2), (0, 1)),
    lambda L: L.nuclear_norm(L.ones(2, 2)),
])
def test_warnings_point_at_the_caller(call):
    import warnings
    seen = {}
    for L in (ember, torch):
        always = L.is_warn_always_enabled()
        L.set_warn_always(True)   # (some of these warn once per process)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                call(L)
        finally:
            L.set_warn_always(always)
        seen[L] = [(x.filename, str(x.message).split(" (Triggered internally")[0]) for x in w]
    assert seen[ember] == seen[torch]
    assert seen[ember] and seen[ember][0][0] == __file__


@pytest.mark.parametrize("call", [
    lambda L: L.tensor(2.).adjoint(),
    lambda L: L.frobenius_norm(L.ones(2, 2), (0, 1)),
    lambda L: L.nuclear_norm(L.ones(2, 2)),
])
def test_deprecation_warnings_are_once_per_process(call):
    """TORCH_WARN_ONCE: whether or not an earlier test warned, a second call is silent."""
    import warnings
    for L in (ember, torch):
        call(L)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(L)
        assert not w, (L.__name__, [str(x.message) for x in w])


def test_testcase_checks_sparse_invariants():
    """PyTorch's TestCase turns the sparse invariant checks on for each test (and back after)."""
    from ember.testing._internal.common_utils import TestCase
    checks = ember.sparse.check_sparse_tensor_invariants
    during = []

    class Case(TestCase):
        def test_it(self):
            during.append(checks.is_enabled())

    assert not checks.is_enabled()
    result = Case("test_it").run()
    assert result.wasSuccessful() and during == [True]
    assert not checks.is_enabled()


# ---- the contiguous strides of empty/resize_ must fit in int64 (a 0 in the size does not help)
@pytest.mark.parametrize("size", [[0, 4, 2 ** 61], [0, 2 ** 62, 4], [2, 4, 2 ** 29, 2 ** 29],
                                  [8, 8, 2 ** 29, 2 ** 29]])
@pytest.mark.parametrize("make", [lambda L, s: L.empty(s), lambda L, s: L.empty(s, device="meta"),
                                  lambda L, s: L.empty((), dtype=L.float64).resize_(s)])
def test_stride_overflow(make, size):
    _same_error(lambda L: make(L, size))


# ---- the views' copies are aten ops (aten.slice_copy.Tensor, ...) with the views' derivatives
_COPY_CALLS = {
    "view_copy": ([4, 3],), "permute_copy": ([1, 0],), "t_copy": (), "transpose_copy": (0, 1),
    "squeeze_copy": (), "unsqueeze_copy": (1,), "select_copy": (1, 2),
    "slice_copy": (1, 1, None, 2), "diagonal_copy": (1,), "expand_copy": ([2, 3, 4],),
    "unbind_copy": (1,), "split_copy": (2, 1), "split_with_sizes_copy": ([1, 2],),
    "alias_copy": (), "unfold_copy": (1, 2, 1), "as_strided_copy": ((2, 2), (1, 2), 1),
}


@pytest.mark.parametrize("name", sorted(_COPY_CALLS))
def test_view_copy_ops(name):
    def run(L):
        x = L.arange(12., dtype=L.float64).reshape(3, 4).requires_grad_()
        out = getattr(L.ops.aten, name)(x, *_COPY_CALLS[name])
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        L.autograd.backward(outs, [L.ones_like(o) * (i + 1) for i, o in enumerate(outs)])
        return outs, x.grad
    (e, eg), (t, tg) = run(ember), run(torch)
    for a, b in zip(e, t):
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        assert a.is_contiguous() and a._base is None and b._base is None
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_array_equal(eg.numpy(), tg.numpy())


def test_slice_copy_of_channels_last_is_contiguous():
    for L in (ember, torch):
        a = L.randn(4, 4, 4, 4).to(memory_format=L.channels_last)
        assert L.ops.aten.slice_copy(a, 0, 0, 2).is_contiguous()


def test_detach_copy_requires_grad_but_has_no_derivative():
    _same_error(lambda L: L.detach_copy(L.ones(2, requires_grad=True)).sum().backward())


@pytest.mark.parametrize("name, args", [("split_copy", (2,)), ("split_with_sizes_copy", ([1, 2],)),
                                        ("slice_copy", (0, 0, 2)), ("select_copy", (0, 1))])
def test_view_copy_complex_outputs(name, args):
    """A list of complex outputs records; slice_copy and select_copy refuse, as PyTorch's."""
    def run(L):
        x = L.ones(3, 4, dtype=L.complex128, requires_grad=True)
        out = getattr(L, name)(x, *args)
        return (out[0] if isinstance(out, tuple) else out).grad_fn is not None
    assert _outcome(run, ember) == _outcome(run, torch)


# ---- a method taking its int list as varargs also takes it by keyword, as a tuple or list
@pytest.mark.parametrize("call", [
    lambda a: a.permute(dims=(1, 0)), lambda a: a.permute(dims=[1, 0]),
    lambda a: a[:1].expand(size=(2, 2, 3), implicit=False), lambda a: a.reshape(shape=(6,)),
    lambda a: a.repeat(repeats=[1, 2]), lambda a: a.tile(dims=(2,)),
    lambda a: a.sum_to_size(size=(1, 3)), lambda a: a.clone().resize_(size=(6,)),
])
def test_varargs_methods_by_keyword(call):
    _same_values(lambda L: (call(L.arange(6.).reshape(2, 3)),))


@pytest.mark.parametrize("call", [
    lambda a: a.permute(1, dims=(1, 0)), lambda a: a.permute(dim=(1, 0)),
    lambda a: a.permute(dims=1), lambda a: a.reshape(shape=6), lambda a: a.reshape(size=(6,)),
])
def test_varargs_methods_by_keyword_refused(call):
    _same_error(lambda L: call(L.arange(6.).reshape(2, 3)))
