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


def _empty_cases(L):
    cl = L.zeros(0, 3, 4, 5).to(memory_format=L.channels_last)
    perm = L.zeros(0, 3, 4, 5).permute(0, 2, 3, 1)
    odd = L.empty_strided((2, 0, 3), (1, 6, 2))
    return {
        "cl+cl": lambda: cl + cl, "cl*2": lambda: cl * 2, "cl.exp": lambda: cl.exp(),
        "perm+1": lambda: perm + 1, "perm+perm": lambda: perm + perm,
        "odd+1": lambda: odd + 1, "odd+odd": lambda: odd + odd,
        "odd+zeros": lambda: odd + L.zeros(2, 0, 3), "where": lambda: L.where(cl > 0, cl, 1.0),
        "clamp": lambda: cl.clamp(min=0), "relu": lambda: L.nn.functional.relu(cl),
        "bn_train": lambda: L.nn.BatchNorm2d(3)(cl),
        "bn_plain": lambda: L.nn.BatchNorm2d(3, affine=False)(cl),
        "bn_eval": lambda: L.nn.BatchNorm2d(3).eval()(cl),
    }


def test_empty_results_keep_pytorchs_layout():
    """An empty result's strides: all-same-shape operands give contiguous ones (TensorIterator's
    fast setup: an empty tensor is contiguous), otherwise the operands' order (an empty
    channels-last batch through BatchNorm or times a number stays channels-last)."""
    theirs, ours = _empty_cases(torch), _empty_cases(ember)
    for name in theirs:
        t, e = theirs[name](), ours[name]()
        assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride(), name


@pytest.mark.parametrize("size, stride", [((2, 0, 4, 5), (0, 1, 0, 0)),
                                          ((2, 3, 0, 5), (0, 1, 0, 3)),
                                          ((0, 3, 4, 5), (60, 1, 15, 3))])
def test_empty_operand_layout_rule(size, stride):
    a = torch.empty_strided(size, stride)
    want = (a * 2).stride()
    rule = output_strides(size, [(size, stride), ((), ())])
    assert (rule or torch.empty(size).stride()) == want
    assert ember.empty_strided(size, stride).mul(2).stride() == want
