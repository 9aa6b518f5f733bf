"""TensorIterator's output layout rule against torch: an elementwise result takes the memory
layout of its operands (first operand winning conflicts, broadcast dims ignored), on CPU and
Meta; preserve_format copies; AccumulateGrad's gradient layout contract."""
import itertools
import random

import numpy as np
import pytest

import ember
from ember._aten.tensor_iterator import output_strides

torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")


def _view(L, shape, perm, step, cl):
    """A view of `shape`: made in the dim order `perm`, strided by `step` along dims of size > 1,
    channels_last first when `cl` (4-d)."""
    base = [shape[p] for p in perm]
    big = [s * step if s > 1 else s for s in base]
    t = L.from_numpy(np.arange(int(np.prod(big)), dtype=np.float32).reshape(big) / 7 - 3)
    if cl and len(shape) == 4:
        t = t.contiguous(memory_format=L.channels_last)
    if step > 1:
        t = t[tuple(slice(None, None, step) if s > 1 else slice(None) for s in base)]
    return t.permute(*[perm.index(i) for i in range(len(shape))])


def _cases(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        nd = rng.randint(2, 4)
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(nd)]
        other = [1 if rng.random() < 0.3 else s for s in shape]
        if rng.random() < 0.2:
            other = other[1:]
        yield (shape, rng.sample(range(nd), nd), rng.choice([1, 1, 2]), rng.random() < 0.4), \
            (other, rng.sample(range(len(other)), len(other)), rng.choice([1, 1, 2]),
             rng.random() < 0.4)


def test_output_strides_rule_matches_torch():
    """The rule itself, on torch's own operands' sizes and strides."""
    checked = 0
    for a, b in _cases(300, 0):
        ta, tb = _view(torch, *a), _view(torch, *b)
        for ops, r in (((ta,), ta.exp()), ((ta, tb), ta + tb), ((tb, ta), tb * ta),
                       ((ta, 1.5), ta - 1.5), ((ta, tb, ta), torch.addcmul(ta, tb, ta))):
            layout = [(tuple(o.shape), o.stride()) if isinstance(o, torch.Tensor) else ((), ())
                      for o in ops]
            st = output_strides(tuple(r.shape), layout)
            assert (st or torch.empty(r.shape).stride()) == r.stride(), (layout, r.stride())
            checked += 1
    assert checked == 1500


def test_transposed_plus_contiguous_follows_first_operand():
    for L in (ember, torch):
        a, b = L.ones(2, 3).t(), L.ones(3, 2)
        assert (a + b).stride() == (1, 3)
        assert (b + a).stride() == (2, 1)
        assert a.exp().stride() == (1, 3)


def test_mixed_channels_last_and_contiguous():
    for L in (ember, torch):
        x = L.ones(2, 3, 4, 5).contiguous(memory_format=L.channels_last)
        y = L.ones(2, 3, 4, 5)
        assert (x + y).stride() == (60, 1, 15, 3)
        assert (y + x).stride() == (60, 20, 5, 1)
        assert (x + L.ones(3, 1, 1)).stride() == (60, 1, 15, 3)
        assert L.where(x > 0, y, x).stride() == (60, 1, 15, 3)


_OPS = {
    "add": lambda L, a, b: a + b,
    "sub_scalar": lambda L, a, b: a - 1.5,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "gt": lambda L, a, b: a > b,
    "maximum": lambda L, a, b: L.maximum(a, b),
    "pow_scalar": lambda L, a, b: a ** 2,
    "rpow": lambda L, a, b: 2 ** a,
    "where": lambda L, a, b: L.where(a > 0, a, b),
    "clamp": lambda L, a, b: a.clamp(-1, 1),
    "clamp_tensor": lambda L, a, b: a.clamp(min=b),
    "addcmul": lambda L, a, b: L.addcmul(a, b, a),
    "lerp": lambda L, a, b: L.lerp(a, b, 0.3),
    "exp": lambda L, a, b: a.exp(),
    "neg": lambda L, a, b: -a,
    "isnan": lambda L, a, b: a.isnan(),
    "relu": lambda L, a, b: L.relu(a),
    "sigmoid": lambda L, a, b: a.sigmoid(),
    "gelu": lambda L, a, b: L.nn.functional.gelu(a),
    "hardtanh": lambda L, a, b: L.nn.functional.hardtanh(a),
    "logsigmoid": lambda L, a, b: L.nn.functional.logsigmoid(a),
    "nan_to_num": lambda L, a, b: a.nan_to_num(),
    "to_double": lambda L, a, b: a.double(),
    "clone": lambda L, a, b: a.clone(),
    "zeros_like": lambda L, a, b: L.zeros_like(a),
    "flip": lambda L, a, b: a.flip(0),
}


@pytest.mark.parametrize("name", list(_OPS))
def test_eager_strides_match_torch(name):
    fn = _OPS[name]
    for a, b in itertools.islice(_cases(60, 1), 60):
        outs = [fn(L, _view(L, *a), _view(L, *b)) for L in (ember, torch)]
        assert outs[0].stride() == outs[1].stride(), (a, b, outs[0].stride(), outs[1].stride())
        np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["add", "mul", "gt", "where", "addcmul", "exp", "neg",
                                  "sigmoid", "clone", "to_double"])
def test_meta_strides_match_torch(name):
    """Meta kernels, on operands without size-1 dims (where PyTorch's Meta references and
    its TensorIterator agree)."""
    fn = _OPS[name]
    for a, b in _cases(60, 2):
        if 1 in a[0] or 1 in b[0]:
            continue
        outs = [fn(L, _view(L, *a).to("meta"), _view(L, *b).to("meta")) for L in (ember, torch)]
        assert outs[0].is_meta and outs[0].stride() == outs[1].stride(), (a, b)


def test_preserve_format_copies():
    for L in (ember, torch):
        x = L.ones(6, 8, 4)[::2, ::2].permute(1, 2, 0)    # not dense: made dense in its order
        assert x.clone().stride() == (4, 1, 16)
        assert L.empty_like(x).stride() == (4, 1, 16)
        assert x.to(L.float64).stride() == (4, 1, 16)
        y = L.ones(4, 1, 3).permute(2, 1, 0)               # dense: its strides, size-1 dims too
        assert y.clone().stride() == y.stride() == (1, 3, 3)


def _grad_strides(L, make, fn):
    p = make(L).requires_grad_()
    fn(L, p).sum().backward()
    return p.grad.stride()


@pytest.mark.parametrize("make, fn", [
    # a channels_last parameter gets a channels_last grad, whatever the backward produced
    (lambda L: L.randn(4, 3, 3, 3).contiguous(memory_format=L.channels_last),
     lambda L, w: L.nn.functional.conv2d(L.randn(2, 3, 6, 6), w)),
    (lambda L: L.randn(4, 3, 3, 3).contiguous(memory_format=L.channels_last),
     lambda L, w: w.contiguous() * 2),
    # a dense transposed leaf: its strides
    (lambda L: L.randn(3, 4).t(), lambda L, p: p.contiguous() * 2),
    # a leaf that is not dense: a contiguous grad
    (lambda L: L.randn(4, 6)[:, ::2].detach(), lambda L, p: p * 2),
    (lambda L: L.randn(2, 3), lambda L, p: p.t() * 2),
])
def test_accumulate_grad_layout_contract(make, fn):
    assert _grad_strides(ember, make, fn) == _grad_strides(torch, make, fn)


def test_accumulated_grad_keeps_its_layout():
    for L in (ember, torch):
        p = L.randn(3, 4).t().requires_grad_()
        (p * 2).sum().backward()
        (p.contiguous() * 3).sum().backward()
        assert p.grad.stride() == (1, 4)
