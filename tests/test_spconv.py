"""ember.spconv against dense convolution in torch: submanifold convolution equals conv3d/conv2d
at the active sites, regular convolution equals it on the densified input (zeros off the
output sites) for strides 1-2, padding and dilation, transposed and inverse convolution equal
conv_transpose, gradients of features, weights and bias equal the dense computation's;
gradcheck in float64; the rulebook against a brute-force loop over sites and offsets on
hypothesis-drawn inputs; SparseConvTensor, SparseSequential, indice_key reuse, the ONNX
symbolics (with a recording stand-in for the exporter's graph) and errors."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ember
import ember.spconv as spconv
from ember.spconv import functional as Fsp
from ember.spconv.rulebook import get_indice_pairs, kernel_offsets

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")


def random_sites(rng, batch, shape, density, channels, dtype=np.float32):
    """Active sites in shuffled order (the rulebook must not rely on any order), features."""
    occupied = rng.random((batch, *shape)) < density
    occupied.reshape(-1)[rng.integers(occupied.size)] = True
    idx = np.argwhere(occupied).astype(np.int32)
    idx = idx[rng.permutation(len(idx))]
    feats = rng.standard_normal((len(idx), channels)).astype(dtype)
    return idx, feats


def sparse(idx, feats, shape, batch, requires_grad=False):
    f = ember.tensor(feats, requires_grad=requires_grad)
    return spconv.SparseConvTensor(f, ember.tensor(idx), shape, batch), f


def torch_dense(feats_t, idx, batch, shape):
    """The densified input in torch, (batch, C, *shape), differentiable in the features."""
    d = torch.zeros((batch, *shape, feats_t.shape[1]), dtype=feats_t.dtype)
    d = d.index_put(tuple(torch.tensor(idx.T).long()), feats_t)
    return d.movedim(-1, 1)


def at_sites(dense_t, idx):
    return dense_t.movedim(1, -1)[tuple(torch.tensor(np.asarray(idx).T).long())]


def krsc_to_torch(w, transposed=False):
    """KRSC [out, *k, in] as torch's conv weight [out, in, *k] (conv_transpose: [in, out, *k])."""
    w = torch.tensor(w.detach().numpy())
    nd = w.dim() - 2
    return w.permute(nd + 1, 0, *range(1, nd + 1)) if transposed else w.movedim(-1, 1)


def compare_with_dense(layer, idx, feats, shape, batch, dense_fn, sites_of, indice_dict=None):
    """Run `layer` in ember and `dense_fn(dense_input, torch_weight, torch_bias)` in torch; the
    outputs at `sites_of(ember_output)` and the gradients of a random weighted sum must agree.
    `indice_dict` gives the input the rulebooks an inverse convolution reads."""
    x, f = sparse(idx, feats, shape, batch, requires_grad=True)
    x.indice_dict = indice_dict or {}
    y = layer(x)
    rng = np.random.default_rng(1)
    r = rng.standard_normal(tuple(y.features.shape)).astype(np.float32)
    (y.features * ember.tensor(r)).sum().backward()

    transposed = layer.transposed or layer.inverse
    ft = torch.tensor(feats, requires_grad=True)
    wt = krsc_to_torch(layer.weight, transposed).requires_grad_()
    bt = torch.tensor(layer.bias.detach().numpy(), requires_grad=True)
    ref = dense_fn(torch_dense(ft, idx, batch, shape), wt, bt)
    ref_sites = at_sites(ref, sites_of(y))
    (ref_sites * torch.tensor(r)).sum().backward()
    np.testing.assert_allclose(y.features.detach().numpy(), ref_sites.detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f.grad.numpy(), ft.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(krsc_to_torch(layer.weight.grad, transposed).numpy(),
                               wt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.bias.grad.numpy(), bt.grad.numpy(), rtol=1e-4, atol=1e-4)
    return y, ref


# --- submanifold ------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("nd, kernel, dilation", [(3, 3, 1), (3, (3, 1, 5), 1), (3, 3, 2),
                                                  (2, 3, 1), (2, 5, (1, 2)), (1, 3, 1)])
def test_subm_equals_dense_conv_at_active_sites(nd, kernel, dilation):
    rng = np.random.default_rng(nd)
    shape = [7, 6, 5][:nd]
    idx, feats = random_sites(rng, 2, shape, 0.3, 3)
    layer = getattr(spconv, f"SubMConv{nd}d")(3, 4, kernel, dilation=dilation)
    ks, dil = np.broadcast_to(kernel, nd), np.broadcast_to(dilation, nd)
    pad = [int(d * (k // 2)) for k, d in zip(ks, dil)]
    conv = getattr(TF, f"conv{nd}d")
    y, _ = compare_with_dense(layer, idx, feats, shape, 2,
                              lambda d, w, b: conv(d, w, b, padding=pad, dilation=dilation),
                              lambda y: idx)
    assert (y.indices.numpy() == idx).all() and y.spatial_shape == shape


# --- regular convolution ----------------------------------------------------------------------

REGULAR = [(3, 3, 1, 0, 1), (3, 3, 2, 1, 1), (3, 2, 2, 0, 1), (3, 3, 1, 1, 2),
           (3, (3, 2, 1), (2, 1, 2), (1, 0, 0), 1), (2, 3, 2, 1, 1), (2, 3, 1, 2, (2, 1)),
           (2, 4, 2, 1, 1), (1, 3, 2, 1, 1)]


@needs_torch
@pytest.mark.parametrize("nd, kernel, stride, padding, dilation", REGULAR)
def test_regular_conv_equals_dense_conv_on_densified_input(nd, kernel, stride, padding,
                                                           dilation):
    rng = np.random.default_rng(10 + nd)
    shape = [8, 7, 6][:nd]
    idx, feats = random_sites(rng, 2, shape, 0.15, 3)
    layer = getattr(spconv, f"SparseConv{nd}d")(3, 4, kernel, stride, padding, dilation)
    conv = getattr(TF, f"conv{nd}d")
    dense_fn = lambda d, w, b: conv(d, w, b, stride, padding, dilation)  # noqa: E731
    y, ref = compare_with_dense(layer, idx, feats, shape, 2, dense_fn, lambda y: y.indices.numpy())
    assert list(y.shape) == list(ref.shape)
    # the output sites are exactly those some active input reaches ...
    hits = conv(torch_dense(torch.ones(len(idx), 1), idx, 2, shape),
                torch.ones((1, 1, *np.broadcast_to(kernel, nd))), None, stride, padding, dilation)
    assert sorted(map(tuple, y.indices.numpy().tolist())) == \
        sorted(map(tuple, (hits[:, 0] > 0).nonzero().tolist()))
    # ... so without a bias the densified output is the dense convolution everywhere
    layer.bias = None
    out = layer(sparse(idx, feats, shape, 2)[0]).dense()
    ref = conv(torch_dense(torch.tensor(feats), idx, 2, shape), krsc_to_torch(layer.weight),
               None, stride, padding, dilation)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("nd, kernel, stride, padding", [(3, 3, 2, 1), (3, 2, 2, 0),
                                                         (2, 3, 1, 1), (2, 3, 2, 0)])
def test_transposed_conv_equals_dense_conv_transpose(nd, kernel, stride, padding):
    rng = np.random.default_rng(20 + nd)
    shape = [4, 5, 3][:nd]
    idx, feats = random_sites(rng, 2, shape, 0.3, 3)
    layer = getattr(spconv, f"SparseConvTranspose{nd}d")(3, 4, kernel, stride, padding)
    conv_t = getattr(TF, f"conv_transpose{nd}d")
    y, ref = compare_with_dense(layer, idx, feats, shape, 2,
                                lambda d, w, b: conv_t(d, w, b, stride, padding),
                                lambda y: y.indices.numpy())
    assert list(y.shape) == list(ref.shape)


@needs_torch
@pytest.mark.parametrize("nd, kernel, stride, padding", [(3, 3, 2, 1), (3, 2, 2, 0),
                                                         (3, 3, 1, 0), (2, 3, 2, 1)])
def test_inverse_conv_restores_the_sites(nd, kernel, stride, padding):
    rng = np.random.default_rng(30 + nd)
    shape = [7, 6, 5][:nd]
    idx, feats = random_sites(rng, 2, shape, 0.2, 3)
    down = getattr(spconv, f"SparseConv{nd}d")(3, 5, kernel, stride, padding, indice_key="d")
    up = getattr(spconv, f"SparseInverseConv{nd}d")(5, 2, kernel, indice_key="d")
    x, _ = sparse(idx, feats, shape, 2)
    mid = down(x)
    y = up(mid)
    assert (y.indices.numpy() == idx).all() and y.spatial_shape == shape
    assert y.indice_dict["d"].indice_pairs is mid.indice_dict["d"].indice_pairs
    # it is a transposed convolution through the same pairs, read at the input sites
    ks = np.broadcast_to(kernel, nd)
    extra = [n - ((m - 1) * stride - 2 * padding + k) for n, m, k in
             zip(shape, mid.spatial_shape, ks)]
    conv_t = getattr(TF, f"conv_transpose{nd}d")
    compare_with_dense(up, mid.indices.numpy(), mid.features.detach().numpy(),
                       mid.spatial_shape, 2,
                       lambda d, w, b: conv_t(d, w, b, stride, padding, extra),
                       lambda y: idx, indice_dict=mid.indice_dict)


# --- max-pool, 1x1 ----------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("nd, kernel, stride, padding", [(3, 2, None, 0), (3, 3, 2, 1),
                                                         (2, 3, 1, 1)])
def test_maxpool_equals_dense_maxpool_on_non_negative_features(nd, kernel, stride, padding):
    rng = np.random.default_rng(40 + nd)
    shape = [6, 5, 4][:nd]
    idx, feats = random_sites(rng, 2, shape, 0.3, 3)
    feats = np.abs(feats)
    feats[0, 0] = 0.0  # a zero input still makes its output site active
    x, f = sparse(idx, feats, shape, 2, requires_grad=True)
    y = getattr(spconv, f"SparseMaxPool{nd}d")(kernel, stride, padding)(x)
    ft = torch.tensor(feats, requires_grad=True)
    ref = getattr(TF, f"max_pool{nd}d")(torch_dense(ft, idx, 2, shape), kernel, stride, padding)
    np.testing.assert_allclose(y.dense().detach().numpy(), ref.detach().numpy())
    r = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    (y.dense() * ember.tensor(r)).sum().backward()
    (ref * torch.tensor(r)).sum().backward()
    np.testing.assert_allclose(f.grad.numpy(), ft.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_maxpool_starts_from_zero_as_spconvs():
    x, _ = sparse(np.array([[0, 0], [0, 1]], np.int32), np.array([[-1.0], [-2.0]], np.float32),
                  [2], 1)
    assert spconv.SparseMaxPool1d(2)(x).features.tolist() == [[0.0]]


def test_conv1x1_keeps_the_sites_and_is_a_matmul():
    rng = np.random.default_rng(5)
    idx, feats = random_sites(rng, 1, [4, 4, 4], 0.3, 3)
    x, _ = sparse(idx, feats, [4, 4, 4], 1)
    for layer in (spconv.SubMConv3d(3, 2, 1), spconv.SparseConv3d(3, 2, 1)):
        y = layer(x)
        w = layer.weight.detach().numpy().reshape(2, 3)
        np.testing.assert_allclose(y.features.detach().numpy(),
                                   feats @ w.T + layer.bias.detach().numpy(), rtol=1e-5)
        assert y.indices is x.indices


# --- gradcheck --------------------------------------------------------------------------------

@pytest.mark.parametrize("function, kwargs", [
    (Fsp.SubMConvFunction, dict(subm=True)), (Fsp.SparseConvFunction, dict(stride=2, padding=1)),
    (Fsp.SparseConvFunction, dict(dilation=2, padding=2)),
    (Fsp.SparseInverseConvFunction, dict(stride=2, padding=1))])
def test_gradcheck_float64(function, kwargs):
    rng = np.random.default_rng(6)
    idx, _ = random_sites(rng, 2, [4, 3], 0.5, 2)
    out_idx, pairs, num = get_indice_pairs(ember.tensor(idx), 2, [4, 3], ksize=3, **kwargs)
    n_in, n_out = len(idx), out_idx.shape[0]
    if function is Fsp.SparseInverseConvFunction:
        n_in, n_out = n_out, n_in
    f = ember.tensor(rng.standard_normal((n_in, 2)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((2, 3, 3, 2)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(2), requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda f, w, b: function.apply(f, w, pairs, num, n_out, None, None, b), (f, w, b))
    assert ember.autograd.gradcheck(lambda f, w: function.apply(f, w, pairs, num, n_out), (f, w))


def test_gradcheck_maxpool_float64():
    rng = np.random.default_rng(7)
    idx, _ = random_sites(rng, 2, [4, 3], 0.5, 2)
    out_idx, pairs, num = get_indice_pairs(ember.tensor(idx), 2, [4, 3], ksize=2, stride=2)
    # distinct values away from 0 and from each other, so the maximum has no kink nearby
    values = rng.permutation(len(idx) * 2).reshape(-1, 2) * 0.1 + 0.5
    f = ember.tensor(values, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda f: Fsp.SparseMaxPoolFunction.apply(f, pairs, num, out_idx.shape[0]), (f,))


# --- the rulebook against brute force ---------------------------------------------------------

def brute_force_pairs(idx, shape, ksize, stride, padding, dilation, kind):
    """{(k, input row, output coordinate)} by looping over every site and offset."""
    pairs = set()
    rows = {tuple(r): i for i, r in enumerate(idx.tolist())}
    for i, (b, *p) in enumerate(idx.tolist()):
        for k, off in enumerate(itertools.product(*(range(n) for n in ksize))):
            if kind == "subm":      # output q reads q + (off - centre) * dilation
                q = [pp - (o - n // 2) * d for pp, o, n, d in zip(p, off, ksize, dilation)]
                if tuple([b] + q) in rows:
                    pairs.add((k, i, tuple([b] + q)))
                continue
            if kind == "transposed":
                q = [pp * s - pad + o * d for pp, o, s, pad, d in
                     zip(p, off, stride, padding, dilation)]
                out = [(n - 1) * s - 2 * pad + d * (kk - 1) + 1 for n, s, pad, d, kk in
                       zip(shape, stride, padding, dilation, ksize)]
            else:
                num = [pp + pad - o * d for pp, o, pad, d in zip(p, off, padding, dilation)]
                if any(v % s for v, s in zip(num, stride)):
                    continue
                q = [v // s for v, s in zip(num, stride)]
                out = [(n + 2 * pad - d * (kk - 1) - 1) // s + 1 for n, s, pad, d, kk in
                       zip(shape, stride, padding, dilation, ksize)]
            if all(0 <= v < n for v, n in zip(q, out)):
                pairs.add((k, i, tuple([b] + q)))
    return pairs


@st.composite
def rulebook_cases(draw):
    nd = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["subm", "regular", "transposed"]))
    shape = [draw(st.integers(1, 5)) for _ in range(nd)]
    batch = draw(st.integers(1, 2))
    odd = kind == "subm"
    ksize = [draw(st.sampled_from([1, 3]) if odd else st.integers(1, 3)) for _ in range(nd)]
    stride = [1 if odd else draw(st.integers(1, 2)) for _ in range(nd)]
    padding = [0 if odd else draw(st.integers(0, 1)) for _ in range(nd)]
    dilation = [draw(st.integers(1, 2)) for _ in range(nd)]
    if kind == "regular" and any(n + 2 * p - d * (k - 1) < 1 for n, p, d, k in
                                 zip(shape, padding, dilation, ksize)):
        padding = [d * (k - 1) for d, k in zip(dilation, ksize)]
    if kind == "transposed" and any((n - 1) * s - 2 * p + d * (k - 1) < 0 for n, s, p, d, k in
                                    zip(shape, stride, padding, dilation, ksize)):
        padding = [0] * nd
    sites = draw(st.lists(st.tuples(st.integers(0, batch - 1),
                                    *(st.integers(0, n - 1) for n in shape)),
                          min_size=1, max_size=20, unique=True))
    return kind, shape, batch, ksize, stride, padding, dilation, np.array(sites, np.int32)


@settings(max_examples=80, deadline=None, database=None)
@given(rulebook_cases())
def test_rulebook_matches_brute_force(case):
    kind, shape, batch, ksize, stride, padding, dilation, idx = case
    expected = brute_force_pairs(idx, shape, ksize, stride, padding, dilation, kind)
    if not expected:  # every point vanished (a strided convolution skipped them all)
        with pytest.raises(ValueError, match="vanished"):
            get_indice_pairs(ember.tensor(idx), batch, shape, None, ksize, stride, padding,
                             dilation, 0, subm=kind == "subm", transpose=kind == "transposed")
        return
    out_idx, pairs, num = get_indice_pairs(
        ember.tensor(idx), batch, shape, None, ksize, stride, padding, dilation, 0,
        subm=kind == "subm", transpose=kind == "transposed")
    out_idx, pairs, num = out_idx.numpy(), pairs.numpy(), num.numpy()
    kv = int(np.prod(ksize))
    assert pairs.shape == (2, kv, len(idx)) and num.shape == (kv,)
    assert pairs.dtype == num.dtype == out_idx.dtype == np.int32
    got = set()
    for k in range(kv):
        n = num[k]
        assert (pairs[:, k, n:] == -1).all()
        assert ((0 <= pairs[0, k, :n]) & (pairs[0, k, :n] < len(idx))).all()
        assert ((0 <= pairs[1, k, :n]) & (pairs[1, k, :n] < len(out_idx))).all()
        got |= {(k, i, tuple(out_idx[o].tolist())) for i, o in pairs[:, k, :n].T}
    assert got == expected
    assert np.bincount([k for k, _, _ in expected], minlength=kv).tolist() == num.tolist()
    if kind == "subm":
        assert (out_idx == idx).all()
        centre = kv // 2
        assert (pairs[0, centre] == np.arange(len(idx))).all()
        assert (pairs[1, centre] == np.arange(len(idx))).all()
    else:  # the output sites are exactly the ones reached, each once
        assert sorted(map(tuple, out_idx.tolist())) == sorted({q for _, _, q in expected})


def test_kernel_offsets_in_zyx_order():
    assert kernel_offsets([2, 1, 3]).tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 2],
                                                  [1, 0, 0], [1, 0, 1], [1, 0, 2]]


def test_the_notes_worked_example():
    idx = ember.tensor([[0, 0, 1], [0, 1, 1], [0, 2, 3]], dtype=ember.int32)
    _, pairs, num = get_indice_pairs(idx, 1, [4, 4], ksize=3, subm=True)
    assert num.tolist() == [0, 1, 0, 0, 3, 0, 0, 1, 0]
    assert pairs[:, 1, 0].tolist() == [0, 1] and pairs[:, 7, 0].tolist() == [1, 0]
    out, _, num = get_indice_pairs(idx, 1, [4, 4], ksize=3, stride=2, padding=1)
    assert num.tolist() == [1, 0, 1, 1, 0, 2, 1, 0, 1]
    assert out.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]


# --- SparseConvTensor, modules, keys ----------------------------------------------------------

def test_sparse_conv_tensor_dense_from_dense_round_trip():
    rng = np.random.default_rng(8)
    idx, feats = random_sites(rng, 2, [3, 4, 5], 0.3, 2)
    x, _ = sparse(idx, feats, [3, 4, 5], 2)
    d = x.dense()
    assert x.shape == d.shape == (2, 2, 3, 4, 5) and x.spatial_size == 60
    last = x.dense(channels_first=False)
    assert last.shape == (2, 3, 4, 5, 2)
    y = spconv.SparseConvTensor.from_dense(last)
    assert y.indices.dtype == ember.int32 and y.spatial_shape == [3, 4, 5] and y.batch_size == 2
    order = np.lexsort(idx.T[::-1])
    assert (y.indices.numpy() == idx[order]).all()
    np.testing.assert_array_equal(y.features.numpy(), feats[order])
    np.testing.assert_array_equal(y.dense().numpy(), d.numpy())
    assert "SparseConvTensor[shape=torch.Size([" in repr(x)


def test_replace_feature_keeps_sites_and_rulebooks():
    x, _ = sparse(np.array([[0, 1, 1]], np.int32), np.ones((1, 2), np.float32), [3, 3], 1)
    y = spconv.SubMConv2d(2, 2, 3, indice_key="k")(x)
    z = y.replace_feature(y.features * 2)
    assert z.indices is y.indices and z.indice_dict is y.indice_dict and "k" in z.indice_dict
    with pytest.raises(ValueError, match="replace_feature"):
        z.features = y.features


def test_sparse_sequential_with_dense_modules_and_to_dense():
    rng = np.random.default_rng(9)
    idx, feats = random_sites(rng, 2, [8, 8, 8], 0.1, 4)
    net = spconv.SparseSequential(
        spconv.SubMConv3d(4, 8, 3, indice_key="s0"), ember.nn.BatchNorm1d(8), ember.nn.ReLU(),
        spconv.SubMConv3d(8, 8, 3, indice_key="s0"),
        spconv.SparseConv3d(8, 6, 3, stride=2, padding=1, indice_key="d0"), ember.nn.ReLU(),
        spconv.SparseInverseConv3d(6, 4, 3, indice_key="d0"), spconv.ToDense())
    x, f = sparse(idx, feats, [8, 8, 8], 2, requires_grad=True)
    out = net(x)
    assert out.shape == (2, 4, 8, 8, 8)
    out.sum().backward()
    assert f.grad.shape == f.shape and net[1].weight.grad is not None
    assert len(net) == 8 and isinstance(net[-1], spconv.ToDense)


def test_subm_layers_sharing_a_key_share_the_rulebook():
    rng = np.random.default_rng(10)
    idx, feats = random_sites(rng, 1, [5, 5, 5], 0.2, 2)
    x, _ = sparse(idx, feats, [5, 5, 5], 1)
    a = spconv.SubMConv3d(2, 3, 3, indice_key="s")(x)
    b = spconv.SubMConv3d(3, 3, 3, indice_key="s")(a)
    assert b.indice_dict["s"] is a.indice_dict["s"] and "s" not in x.indice_dict
    with pytest.raises(ValueError, match="same kernel size and dilation"):
        spconv.SubMConv3d(3, 3, 5, indice_key="s")(a)
    with pytest.raises(ValueError, match="only submanifold convolutions share one"):
        spconv.SparseConv3d(3, 3, 3, indice_key="s")(a)
    with pytest.raises(ValueError, match="submanifold convolution's"):
        spconv.SparseInverseConv3d(3, 3, 3, indice_key="s")(a)
    with pytest.raises(ValueError, match=r"indice_key 'nope'.*holds \['s'\]"):
        spconv.SparseInverseConv3d(3, 3, 3, indice_key="nope")(a)


def test_weights_are_krsc_with_spconvs_defaults():
    layer = spconv.SubMConv3d(4, 8, (3, 1, 5))
    assert layer.weight.shape == (8, 3, 1, 5, 4) and layer.bias.shape == (8,)
    assert layer.algo is spconv.ConvAlgo.Native
    assert spconv.SparseConv2d(2, 3, 3, bias=False, algo=spconv.ConvAlgo.MaskImplicitGemm).bias \
        is None
    bound = 1 / np.sqrt(4 * 15)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    assert "SubMConv3d(4, 8, kernel_size=[3, 1, 5], stride=[1, 1, 1]" in repr(layer)


def test_bad_input_errors():
    idx = np.array([[0, 1, 1], [0, 1, 1]], np.int32)
    with pytest.raises(ValueError, match="more than once"):
        get_indice_pairs(ember.tensor(idx), 1, [3, 3], ksize=3, subm=True)
    with pytest.raises(ValueError, match=r"outside the grid"):
        get_indice_pairs(ember.tensor(np.array([[0, 3, 0]], np.int32)), 1, [3, 3], ksize=3)
    with pytest.raises(ValueError, match="odd kernel_size"):
        get_indice_pairs(ember.tensor(idx[:1]), 1, [3, 3], ksize=2, subm=True)
    with pytest.raises(ValueError, match="output spatial shape"):
        get_indice_pairs(ember.tensor(idx[:1]), 1, [3, 3], ksize=5)
    with pytest.raises(TypeError, match="int32"):
        spconv.SparseConvTensor(ember.ones(1, 2), ember.tensor(idx[:1]).long(), [3, 3], 1)
    with pytest.raises(ValueError, match=r"\[num_points, 4\]"):
        spconv.SparseConvTensor(ember.ones(1, 2), ember.tensor(idx[:1]), [3, 3, 3], 1)
    x, _ = sparse(idx[:1], np.ones((1, 2), np.float32), [3, 3], 1)
    with pytest.raises(ValueError, match="expects 3 input channels"):
        spconv.SubMConv2d(3, 2, 3)(x)
    with pytest.raises(ValueError, match="groups=1"):
        spconv.SparseConv2d(2, 2, 3, groups=2)


# --- dispatcher and ONNX ----------------------------------------------------------------------

def test_compute_goes_through_the_dispatcher():
    rng = np.random.default_rng(11)
    idx, feats = random_sites(rng, 1, [5, 5, 5], 0.3, 2)
    x, f = sparse(idx, feats, [5, 5, 5], 1, requires_grad=True)
    layer = spconv.SparseConv3d(2, 3, 3, indice_key="c")
    layer_rulebook = lambda layer, x: layer(x).indice_dict["c"]  # noqa: E731
    with ember.explain() as ex:
        y = layer(x)
        y.features.sum().backward()
    ops = [r["op"] for r in ex.records]
    assert {"index_select", "mm", "index_add_"} <= set(ops)
    offsets_used = int((layer_rulebook(layer, x).indice_pair_num > 0).sum())
    assert ops.count("mm") == 3 * offsets_used  # one per offset forward, two backward
    assert type(y.features.grad_fn).__name__ == "SparseConvFunctionBackward"


class RecordingGraph:
    """What the ONNX exporter's `g` offers a symbolic: `op(name, *inputs, **attributes)`."""

    def __init__(self):
        self.nodes = []

    def op(self, name, *inputs, **attributes):
        self.nodes.append((name, inputs, attributes))
        return f"%{len(self.nodes)}"


@pytest.mark.parametrize("function, name, subm, inverse", [
    (Fsp.SubMConvFunction, "SubMConv", 1, 0), (Fsp.SparseConvFunction, "SparseConv", 0, 0),
    (Fsp.SparseInverseConvFunction, "SparseInverseConv", 0, 1)])
def test_symbolic_emits_one_custom_domain_node(function, name, subm, inverse):
    # a real export test belongs after ember.onnx lands (the onnx branch)
    g = RecordingGraph()
    out = function.symbolic(g, "feat", "w", "pairs", "num", 17, None, None, "b")
    assert out == "%1" and len(g.nodes) == 1
    op, inputs, attrs = g.nodes[0]
    domain, op_type = op.split("::")
    assert (domain, op_type) == ("spconv", name)
    assert inputs == ("feat", "w", "pairs", "num", "b")
    assert attrs == {"num_activate_out_i": 17, "subm_i": subm, "inverse_i": inverse}
    function.symbolic(g, "feat", "w", "pairs", "num", 17)
    assert g.nodes[1][1] == ("feat", "w", "pairs", "num")
    Fsp.SparseMaxPoolFunction.symbolic(g, "feat", "pairs", "num", 5)
    assert g.nodes[2] == ("spconv::SparseMaxPool", ("feat", "pairs", "num"),
                          {"num_activate_out_i": 5})


def test_the_examples_network_fits_a_batch():
    """examples/spconv_pointcloud.py's data and network: a few Adam steps on one batch of
    voxelised shapes bring the loss down."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "spconv_pointcloud.py"
    spec = importlib.util.spec_from_file_location("spconv_pointcloud", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    ember.manual_seed(0)
    x, y = example.make_batch(6, np.random.default_rng(0), points=300)
    model = example.SparseNet()
    optimizer = ember.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(3):
        loss = ember.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def test_double_backward_through_the_ember_op_backward():
    rng = np.random.default_rng(12)
    idx, _ = random_sites(rng, 2, [4, 3], 0.5, 2)
    _, pairs, num = get_indice_pairs(ember.tensor(idx), 2, [4, 3], ksize=3, subm=True)
    f = ember.tensor(rng.standard_normal((len(idx), 2)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((2, 3, 3, 2)), requires_grad=True)
    assert ember.autograd.gradgradcheck(
        lambda f, w: Fsp.SubMConvFunction.apply(f, w, pairs, num, len(idx)), (f, w))


def test_no_active_sites():
    x = spconv.SparseConvTensor(ember.zeros(0, 2), ember.zeros(0, 3, dtype=ember.int32),
                                [4, 4], 1)
    net = spconv.SparseSequential(spconv.SubMConv2d(2, 3, 3), ember.nn.BatchNorm1d(3),
                                  spconv.SparseConv2d(3, 3, 3, 2))
    y = net(x)
    assert y.features.shape == (0, 3) and y.spatial_shape == [1, 1]
    assert y.dense().tolist() == [[[[0.0]], [[0.0]], [[0.0]]]]
