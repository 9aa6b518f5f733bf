"""Conjugate and negative views read outside the dispatcher, against PyTorch: functions that
read a tensor's array themselves (`numpy()`, `t._np`) see the values a view stands for, and
NumPy conversion, `.data`, Parameters, deepcopy and optimizers treat the views as PyTorch does."""
import copy
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
Z = X + 1j * X[::-1]
SQ = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def neg(L, a, dtype=None):
    """A tensor with the negative bit standing for the values `a`."""
    return L._neg_view(-L.tensor(np.asarray(a), dtype=dtype))


def conj(L, a):
    """A tensor with the conjugate bit standing for the values `a`."""
    return L.tensor(np.asarray(a)).conj_physical().conj()


def _values(r):
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        r = r.detach().resolve_conj().resolve_neg()
        return str(r.dtype), tuple(r.shape), r.numpy().copy()
    if isinstance(r, (tuple, list)):
        return [_values(v) for v in r]
    return r


def _same(expr):
    t, e = _values(expr(torch)), _values(expr(ember))
    assert len(t) == len(e)
    for a, b in zip(t, e) if isinstance(t, list) else [(t, e)]:
        assert a[:2] == b[:2]
        np.testing.assert_allclose(b[2], a[2], rtol=1e-6, atol=1e-12)


def _seeded(L, fn):
    L.manual_seed(0)
    return fn()


# each row reached a `.numpy()` or `._np` read of an input outside the dispatcher
READERS = {
    "multilabel_margin_loss": lambda L: L.nn.functional.multilabel_margin_loss(
        neg(L, X), neg(L, [[2, -1, 0], [0, 1, -1]])),
    "ctc_loss": lambda L: L.nn.functional.ctc_loss(
        L.tensor(np.linspace(-1, 1, 40).reshape(5, 2, 4)).log_softmax(2),
        L.tensor([[1, 2], [1, 1]]), neg(L, [5, 4], L.int32), neg(L, [2, 1], L.int32)),
    "pack_padded_sequence": lambda L: L.nn.utils.rnn.pack_padded_sequence(
        L.tensor(X), neg(L, [2, 1, 2], L.int32), batch_first=False, enforce_sorted=False).data,
    "lu_unpack_pivots": lambda L: L.lu_unpack(L.linalg.lu_factor(L.tensor(SQ))[0],
                                              neg(L, [1, 2, 3], L.int32)),
    "lu_factor": lambda L: L.linalg.lu_factor(neg(L, SQ)),
    "binomial": lambda L: _seeded(L, lambda: L.binomial(neg(L, [[5.0, 7.0]]),
                                                          neg(L, [[0.5, 0.25]]))),
    "standard_gamma": lambda L: _seeded(L, lambda: L._standard_gamma(neg(L, [1.5, 2.0]))),
    "sample_dirichlet": lambda L: _seeded(L, lambda: L._sample_dirichlet(neg(L, [1.5, 2.0]))),
    "histogram": lambda L: L.histogram(neg(L, X.ravel()), 4,
                                       weight=neg(L, np.abs(X.ravel()))),
    "histogramdd": lambda L: L.histogramdd(neg(L, X.T.copy()), [2, 2])[0],
    "isin": lambda L: L.isin(neg(L, [1.0, 2.0, 3.0]), L.tensor([2.0, 5.0])),
    "rrelu_training": lambda L: _seeded(L, lambda: L.nn.functional.rrelu(neg(L, X),
                                                                           training=True)),
    # (PyTorch reads the memory of an index with the negative bit: -0 is 0 either way)
    "index_put_indices": lambda L: L.zeros(3, dtype=L.complex128).index_put_(
        (neg(L, [0, 0]),), conj(L, [1j, 2 + 1j]), accumulate=True),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_readers_see_the_values(name):
    _same(READERS[name])


def test_numpy_force_resolves_and_asarray_refuses_like_torch():
    _same(lambda L: L.tensor(np.stack([conj(L, Z).numpy(force=True).real,
                                       L._neg_view(conj(L, -Z)).numpy(force=True).imag])))
    _same(lambda L: L.tensor(L.tensor(Z, requires_grad=True).conj().numpy(force=True)))
    for make in (lambda L: conj(L, Z), lambda L: neg(L, X),
                 lambda L: L.tensor(Z, requires_grad=True).conj()):
        with pytest.raises(RuntimeError) as expected:
            np.asarray(make(torch))
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
            np.asarray(make(ember))
        with torch.no_grad(), pytest.raises(RuntimeError) as expected:
            make(torch).numpy()
        with ember.no_grad(), pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
            make(ember).numpy()


def test_view_dtype_refuses_bits_even_for_the_same_dtype():
    for make in (lambda L: conj(L, Z).view(L.complex128),
                 lambda L: neg(L, X).view(L.float64)):
        with pytest.raises(RuntimeError) as expected:
            make(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(expected.value))):
            make(ember)


def _bits(t):
    return t.is_conj(), t.is_neg()


def test_aliases_keep_the_bits_and_deepcopy_resolves():
    for expr in (lambda L: L.tensor(Z, requires_grad=True).conj().data,
                 lambda L: L.nn.Parameter(conj(L, Z)),
                 lambda L: L.nn.Buffer(L._neg_view(conj(L, -Z))),
                 lambda L: copy.deepcopy(L._neg_view(conj(L, -Z))),
                 lambda L: copy.deepcopy(L.nn.Parameter(conj(L, Z)))):
        t, e = expr(torch), expr(ember)
        assert _bits(e) == _bits(t) and type(e).__name__ == type(t).__name__
        np.testing.assert_allclose(_values(e)[2], _values(t)[2])


def _two_steps(L, p, opt, kw):
    o = getattr(L.optim, opt)([p], **kw)
    for _ in range(2):
        o.zero_grad()
        (p.abs() ** 3).sum().backward()
        o.step()
    return p


@pytest.mark.parametrize("opt,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1)),
                                    ("RMSprop", dict(lr=0.1))])
def test_optimizer_steps_a_parameter_with_the_negative_bit(opt, kw):
    def run(L):
        p = _two_steps(L, L.nn.Parameter(neg(L, X)), opt, kw)
        assert p.is_neg()
        return p
    _same(run)


def test_sgd_steps_a_conjugate_parameter():
    def run(L):
        p = _two_steps(L, L.nn.Parameter(conj(L, Z)), "SGD", dict(lr=0.1, momentum=0.9))
        assert p.is_conj()
        return p
    _same(run)


def test_math_ops_on_neg_conj_inputs():
    def nc(L, a):
        return L._neg_view(conj(L, -np.asarray(a)))
    W = np.stack([Z[:, :2], Z[:, 1:]])
    _same(lambda L: [L.nn.functional.conv1d(nc(L, Z[None]), nc(L, W), nc(L, [1j, 2])),
                     L.nn.functional.linear(nc(L, Z), nc(L, Z), nc(L, [1j, 2])),
                     L.matmul(nc(L, Z), conj(L, Z.T.copy())),
                     L.nn.functional.conv_transpose1d(nc(L, Z[None]), conj(L, W))])


def test_vision_kernels_read_the_values():
    """torchvision is not installed next to torch here: the view's result against ember's own
    result on the plain values."""
    from ember.vision import ops
    boxes = ember.tensor([[0., 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]])
    scores = ember.tensor([0.9, 0.8, 0.7])
    assert ops.nms(neg(ember, boxes.numpy()), neg(ember, scores.numpy()), 0.5).tolist() == \
        ops.nms(boxes, scores, 0.5).tolist()
    x = ember.tensor(np.linspace(-1, 1, 72).reshape(1, 2, 6, 6))
    rois = ember.tensor([[0, 0.5, 0.5, 4.0, 4.5]])
    np.testing.assert_allclose(
        ops.roi_align(neg(ember, x.numpy()), neg(ember, rois.numpy()), (2, 2), 1.0, 2).numpy(),
        ops.roi_align(x, rois, (2, 2), 1.0, 2).numpy())


def test_istft_of_a_neg_conj_view():
    """istft read its input's real dtype through view_as_real, which refuses a conjugate view
    (found by TestMathBits.test_neg_conj_view_istft)."""
    def run(L):
        spec = L.stft(L.tensor(np.linspace(-1, 1, 16)), 4, return_complex=True,
                      window=L.hann_window(4, dtype=L.float64))
        view = L._neg_view(spec.neg().conj_physical()).conj()
        assert view.is_conj() and view.is_neg()
        return L.istft(view, 4, window=L.hann_window(4, dtype=L.float64))
    _same(run)


# PyTorch's kernels for these read the memory of an int64 index/length tensor with the
# negative bit, not its values (`-lengths` for ctc_loss, "repeats can not be negative"):
# ember reads the values, the result torch gives for the plain tensor
AS_VALUES = {
    "repeat_interleave": lambda L, v: L.repeat_interleave(L.tensor([1., 2., 3.]), v([1, 0, 2])),
    "repeat_interleave_counts": lambda L, v: L.repeat_interleave(v([1, 0, 2])),
    "ctc_loss_int64_lengths": lambda L, v: L.nn.functional.ctc_loss(
        L.tensor(np.linspace(-1, 1, 40).reshape(5, 2, 4)).log_softmax(2),
        L.tensor([[1, 2], [1, 1]]), v([5, 4]), v([2, 1])),
    "index_put_neg_index": lambda L, v: L.zeros(3).index_put_((v([2, 0]),), L.tensor([1., 2.])),
    "pack_padded_int64_lengths": lambda L, v: L.nn.utils.rnn.pack_padded_sequence(
        L.tensor(X), v([2, 1, 2]), enforce_sorted=False).data,
}


@pytest.mark.parametrize("name", sorted(AS_VALUES))
def test_int_neg_views_read_as_values(name):
    expected = _values(AS_VALUES[name](torch, lambda a: torch.tensor(a)))
    got = _values(AS_VALUES[name](ember, lambda a: neg(ember, a)))
    assert got[:2] == expected[:2]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)


def test_printing_pickling_and_bits_of_views():
    import io
    import pickle

    def neg_conj(L):
        return L._neg_view(conj(L, -Z))
    for expr in (lambda L: repr(neg_conj(L)), lambda L: repr(neg(L, [1, 2])),
                 lambda L: repr(L.tensor(Z, requires_grad=True).conj()),
                 lambda L: str(neg(L, 2.5, L.float64))):
        assert expr(ember) == expr(torch)
    views = (lambda t: t.t(), lambda t: t[1], lambda t: t[:, 1:], lambda t: t.real,
             lambda t: t.imag, lambda t: t.unflatten(1, (3, 1)), lambda t: t.diagonal(),
             lambda t: t.movedim(0, 1), lambda t: t.flatten(), lambda t: t.t().reshape(6),
             lambda t: t.t().contiguous(), lambda t: pickle.loads(pickle.dumps(t)))
    for view in views:
        t, e = view(neg_conj(torch)), view(neg_conj(ember))
        assert _bits(e) == _bits(t)
        np.testing.assert_allclose(_values(e)[2], _values(t)[2])
    buf = io.BytesIO()
    ember.save(neg_conj(ember), buf)
    buf.seek(0)
    loaded = torch.load(buf)
    assert _bits(loaded) == (True, True)
    np.testing.assert_allclose(_values(loaded)[2], Z)
    for L in (torch, ember):
        with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved"):
            L.view_as_real(conj(L, Z).t())
