"""The lazy conjugate and negative bits (ember/_dispatch/math_bits.py) against PyTorch: the
same expression in both libraries gives the same values, the same bits, the same memory
sharing, the same gradients and the same errors."""
import io
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DATA = np.array([[1 + 2j, 3 - 4j, -0.5 + 1j], [2 - 1j, -1 - 1j, 0.25 + 3j]])


def _values(t):
    t = t.resolve_conj().resolve_neg()
    return t.detach().numpy().copy()


def _same(expr):
    """expr(lib, x) on a fresh complex tensor in each library: equal values, bits, dtypes."""
    results = [expr(lib, lib.tensor(DATA)) for lib in (torch, ember)]
    ts, es = results
    for t, e in (zip(ts, es) if isinstance(ts, tuple) else [(ts, es)]):
        if isinstance(t, torch.Tensor):
            assert (e.is_conj(), e.is_neg()) == (t.is_conj(), t.is_neg())
            assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
            np.testing.assert_allclose(_values(e), _values(t))
        else:
            assert e == t


VIEWS = {
    "conj": lambda L, x: x.conj(),
    "conj_conj": lambda L, x: x.conj().conj(),
    "neg_view": lambda L, x: L._neg_view(x),
    "neg_conj": lambda L, x: L._neg_view(x).conj(),
    "conj_t": lambda L, x: x.conj().t(),
    "conj_select": lambda L, x: x.conj()[1],
    "conj_slice": lambda L, x: x.conj()[:, 1:],
    "conj_reshape": lambda L, x: x.conj().reshape(3, 2),
    "conj_view": lambda L, x: x.conj().view(6),
    "conj_expand": lambda L, x: x.conj()[0].expand(2, 3),
    "conj_unbind": lambda L, x: x.conj().unbind(0),
    "conj_real": lambda L, x: x.conj().real,
    "conj_imag": lambda L, x: x.conj().imag,
    "neg_real": lambda L, x: L._neg_view(x).real,
    "neg_view_as_real": lambda L, x: L.view_as_real(L._neg_view(x)),
    "conj_detach": lambda L, x: x.conj().detach(),
    "conj_contiguous": lambda L, x: x.conj().contiguous(),
    "conj_clone": lambda L, x: x.conj().clone(),
    "neg_clone": lambda L, x: L._neg_view(x).clone(),
    "conj_resolve": lambda L, x: x.conj().resolve_conj(),
    "both_resolve_conj": lambda L, x: L._neg_view(x).conj().resolve_conj(),
    "both_resolve_neg": lambda L, x: L._neg_view(x).conj().resolve_neg(),
    "conj_physical": lambda L, x: L.conj_physical(x.conj()),
    "conj_to": lambda L, x: x.conj().to(L.complex128),
    "conj_add": lambda L, x: x.conj() + 1,
    "conj_mul_conj": lambda L, x: x.conj() * L._neg_view(x),
    "conj_matmul": lambda L, x: x.conj() @ x.t(),
    "conj_sum": lambda L, x: x.conj().sum(0),
    "conj_abs": lambda L, x: x.conj().abs(),
    "zeros_like": lambda L, x: L.zeros_like(x.conj()),
    "real_conj": lambda L, x: L.tensor([1.0, 2.0]).conj(),
    "item": lambda L, x: x.conj()[0, 1].item(),
    "tolist": lambda L, x: x.conj().tolist(),
    "repr": lambda L, x: repr(L._neg_view(x.conj()[0])),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_matches_torch(name):
    _same(VIEWS[name])


def test_views_share_memory_and_writes_go_through_the_bits():
    for lib in (torch, ember):
        x = lib.tensor(DATA)
        c = x.conj()
        assert c.data_ptr() == x.data_ptr() and c._is_view()
        assert c.clone().data_ptr() != x.data_ptr()
    got = []
    for lib in (torch, ember):
        x = lib.tensor(DATA)
        c = x.conj()
        c.add_(1j)                   # in place on the view: x gets the conjugate write
        assert c.is_conj()
        c[0, 0] = 5 - 5j             # through a select view of the conjugate view
        lib._neg_view(x)[1].mul_(2)  # and through a negative view
        y = lib.zeros(3, dtype=lib.complex64)
        y.conj().copy_(x[0])         # copy_ into a conjugate view stores conjugates
        z = lib.zeros(2)
        lib._neg_view(z).copy_(lib.tensor([True, False]))
        w = lib.tensor(DATA)
        w.copy_(w.conj())            # a copy from a view of the same memory
        got.append([a.numpy().copy() for a in (x, y, z, w)])
    for t, e in zip(*got):
        np.testing.assert_allclose(e, t)


def test_out_argument_with_a_bit():
    got = []
    for lib in (torch, ember):
        x = lib.tensor(DATA)
        out = lib.zeros(2, 3, dtype=lib.complex128)
        lib.add(x, 1, out=out.conj())
        got.append(out.numpy().copy())
    np.testing.assert_allclose(got[1], got[0])


def test_grads_through_views():
    grads = []
    for lib in (torch, ember):
        z = lib.tensor(DATA, requires_grad=True)
        w = lib.tensor(DATA[::-1].copy(), requires_grad=True)
        c = z.conj()
        n = lib._neg_view(w)
        loss = ((c * n).abs().sum() + c.imag.sum() + (c.t() @ n).real.sum()
                + lib._neg_view(w.conj()).resolve_neg().resolve_conj().abs().sum())
        loss.backward()
        grads.append((_values(z.grad), _values(w.grad)))
    for t, e in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-6)


ERRORS = {
    "numpy_conj": lambda L: L.tensor([1 + 2j]).conj().numpy(),
    "numpy_neg": lambda L: L.tensor([1 + 2j]).conj().imag.numpy(),
    "view_as_real_conj": lambda L: L.view_as_real(L.tensor([1 + 2j]).conj()),
    "view_dtype_conj": lambda L: L.tensor([1 + 2j]).conj().view(L.float64),
    "view_dtype_neg": lambda L: L.tensor([1 + 2j]).conj().imag.view(L.int32),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        ERRORS[name](ember)


def test_save_keeps_the_bits():
    for make in (lambda L: L.tensor(DATA).conj(), lambda L: L._neg_view(L.tensor(DATA))):
        buf = io.BytesIO()
        ember.save(make(ember), buf)
        buf.seek(0)
        from_ember = torch.load(buf)     # ember's file, read by torch
        buf = io.BytesIO()
        torch.save(make(torch), buf)
        buf.seek(0)
        from_torch = ember.load(buf)     # torch's file, read by ember
        for t in (from_ember, from_torch):
            assert (t.is_conj(), t.is_neg()) == (make(torch).is_conj(), make(torch).is_neg())
            np.testing.assert_allclose(_values(t), _values(make(torch)))


@pytest.mark.parametrize("shape", [(3,), (3, 0), ()])
def test_resolve_neg_of_a_bool_neg_view(shape):
    """resolve_neg runs the neg kernel itself: NotImplementedError for bool values (not neg's
    RuntimeError about the `-` operator), and an empty tensor resolves to an empty copy."""
    def run(lib):
        try:
            return ("ok", lib._neg_view(lib.ones(shape, dtype=lib.bool)).resolve_neg().shape)
        except Exception as e:
            return (type(e).__name__, str(e))
    ours, theirs = run(ember), run(torch)
    assert ours[0] == theirs[0] and str(ours[1]) == str(theirs[1])


def test_view_as_complex_backward_with_a_conjugated_gradient():
    """hfft conjugates its input lazily, so the gradient reaching view_as_complex is a conj
    view: its backward resolves it before view_as_real (found by the fft op-table rows)."""
    def grads(lib):
        x = lib.tensor(np.linspace(-1, 1, 10).reshape(5, 2), requires_grad=True)
        lib.fft.hfft(lib.view_as_complex(x)).pow(2).sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(grads(ember), grads(torch), rtol=1e-6)
