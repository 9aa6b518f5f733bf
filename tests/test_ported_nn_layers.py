"""More checks ported from PyTorch's test/test_nn.py (normalization layers' running statistics,
pooling options and errors, fold/unfold, pixel shuffle, grid_sample/affine_grid, distances,
rnn utils (pack/pad), weight/spectral norm and parametrizations, attention and transformer
argument checks), run against torch and ember."""
import re

import numpy as np
import pytest

from _ported import same


def _rand(L, *shape, seed=0, requires_grad=False):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return L.tensor(x, requires_grad=requires_grad)


def _errs(L, makes):
    out = []
    for make in makes:
        L.manual_seed(0)
        try:
            out.append(("ok", make()))
        except Exception as e:
            out.append((type(e).__name__, re.sub(" at 0x[0-9a-f]+", "", str(e))))
    return out


def _batchnorm_running_stats(L):
    out = []
    for momentum in [0.1, None]:
        L.manual_seed(0)
        bn = L.nn.BatchNorm2d(3, momentum=momentum)
        for i in range(3):
            bn(_rand(L, 4, 3, 2, 2, seed=i))
        out.append((bn.running_mean, bn.running_var, bn.num_batches_tracked))
        bn.eval()
        out.append(bn(_rand(L, 2, 3, 2, 2, seed=9)))
    bn = L.nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    out.append((bn(_rand(L, 4, 3)), bn.running_mean, list(bn.state_dict())))
    bn.eval()
    out.append(bn(_rand(L, 4, 3)))
    out.append(_errs(L, [lambda: L.nn.BatchNorm1d(3)(L.ones(1, 3)), lambda: L.nn.BatchNorm1d(3)(L.ones(2, 4)),
                         lambda: L.nn.BatchNorm2d(3)(L.ones(2, 3, 4)),
                         lambda: L.nn.functional.batch_norm(L.ones(2, 3), None, None, training=False)]))
    return out


def _instance_group_layer_norm(L):
    x = _rand(L, 2, 4, 3, 3)
    inorm = L.nn.InstanceNorm2d(4, track_running_stats=True, affine=True)
    y1 = inorm(x)
    stats = (inorm.running_mean, inorm.running_var)
    inorm.eval()
    y2 = inorm(x)
    gn = L.nn.GroupNorm(2, 4)
    ln = L.nn.LayerNorm([3, 3], elementwise_affine=True, bias=False)
    ln2 = L.nn.LayerNorm(3, elementwise_affine=False)
    rms = L.nn.RMSNorm([3], eps=None)
    return y1, stats, y2, gn(x), ln(x), list(ln.state_dict()), ln2(x), rms(x), list(rms.state_dict()), \
        _errs(L, [lambda: L.nn.GroupNorm(3, 4), lambda: L.nn.GroupNorm(2, 4)(L.ones(2, 6, 3)),
                  lambda: L.nn.LayerNorm(4)(L.ones(2, 3)), lambda: L.nn.InstanceNorm1d(3)(L.ones(2, 3, 1)),
                  lambda: L.nn.functional.layer_norm(L.ones(2, 3), (3,), L.ones(4))])


def _pooling(L):
    F = L.nn.functional
    x = _rand(L, 1, 2, 7, 6)
    mp, idx = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    return [mp, idx, F.max_unpool2d(mp, idx, 3, stride=2, padding=1, output_size=x.shape[2:]),
            F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            F.avg_pool2d(x, 2, divisor_override=3), F.lp_pool2d(x.abs(), 2, 3, stride=2),
            F.lp_pool1d(x[0].abs(), 3.0, 2), F.max_pool1d(x[0], 2, dilation=2),
            F.adaptive_max_pool2d(x, (3, 4), return_indices=True), F.adaptive_avg_pool2d(x, (None, 4)),
            F.adaptive_avg_pool1d(x[0], 4), F.max_pool3d(x.unsqueeze(0), 2),
            F.avg_pool1d(x[0], 3, stride=1, padding=1), F.adaptive_max_pool1d(x[0], 5)]


def _pooling_errors(L):
    F = L.nn.functional
    x = L.ones(1, 2, 5, 5)
    return _errs(L, [lambda: F.max_pool2d(x, 2, padding=2), lambda: F.max_pool2d(x, 0),
                     lambda: F.max_pool2d(x, 7), lambda: F.avg_pool2d(x, 2, padding=3),
                     lambda: F.max_pool2d(x, 2, stride=0), lambda: F.adaptive_avg_pool2d(x, (1, 2, 3)),
                     lambda: F.max_pool2d(x, (2, 3), padding=(0, 2)), lambda: F.max_pool2d(x, 2, dilation=(1, 0)),
                     lambda: F.max_pool2d(x, 2, padding=2, dilation=3), lambda: F.max_pool1d(x[0], 2, padding=2),
                     lambda: F.max_pool1d(x[0], 0), lambda: F.max_pool3d(x[None], 2, padding=(0, 0, 2)),
                     lambda: F.adaptive_max_pool2d(x, [2]), lambda: F.adaptive_avg_pool3d(x[None], (1, 2)),
                     lambda: F.adaptive_max_pool3d(x[None], (1, 2)), lambda: F.adaptive_max_pool1d(x[0], (1, 2)),
                     lambda: F.max_unpool2d(x, L.zeros(1, 2, 5, 5, dtype=L.long), 2, output_size=(3, 3)),
                     lambda: F.max_pool1d(L.ones(1, 2, 5), 2, dilation=0),
                     lambda: F.lp_pool2d(x, 2, 7), lambda: F.avg_pool2d(L.ones(2, 5), 2)])


def _fold_unfold(L):
    F = L.nn.functional
    x = _rand(L, 2, 3, 5, 6)
    cols = F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    back = F.fold(cols, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    return cols, back, L.nn.Unfold(2)(x).shape, _errs(L, [
        lambda: F.fold(L.ones(1, 5, 4), (3, 3), 2), lambda: F.fold(L.ones(1, 5, 4), (3, 3), 2),
        lambda: F.fold(L.ones(1, 4, 5), (3, 3), 2), lambda: F.unfold(x, 7),
        lambda: F.fold(L.ones(1, 12, 4), (3, 3), 2).shape])


def _pixel_shuffle_and_friends(L):
    F = L.nn.functional
    x = _rand(L, 1, 8, 2, 3)
    return [F.pixel_shuffle(x, 2), F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), L.nn.ChannelShuffle(2)(x),
            F.pixel_shuffle(x[0], 2), _errs(L, [lambda: F.pixel_shuffle(x, 3), lambda: F.pixel_unshuffle(x, 2),
                                                lambda: F.pixel_shuffle(L.ones(2, 2), 1)])]


def _grid_sample(L):
    F = L.nn.functional
    x = _rand(L, 1, 2, 4, 5, requires_grad=True)
    theta = L.tensor([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]]])
    out = []
    for align in [False, True]:
        grid = F.affine_grid(theta, (1, 2, 3, 4), align_corners=align)
        out.append(grid)
        for mode in ["bilinear", "nearest", "bicubic"]:
            for pad in ["zeros", "border", "reflection"]:
                y = F.grid_sample(x, grid * 1.3, mode=mode, padding_mode=pad, align_corners=align)
                out.append((y, L.autograd.grad(y.sum(), x)[0]))
    out.append(_errs(L, [lambda: F.grid_sample(x, L.zeros(1, 3, 4, 3)), lambda: F.grid_sample(x, L.zeros(2, 3, 4, 2)),
                         lambda: F.grid_sample(x, L.zeros(1, 3, 4, 5, 2)), lambda: F.grid_sample(x[0], L.zeros(1, 3, 1)),

                         lambda: F.grid_sample(x, L.zeros(1, 3, 4, 2), mode="area"),
                         lambda: F.affine_grid(L.zeros(1, 3, 3), (1, 2, 3, 4)),
                         lambda: F.affine_grid(theta, (1, 2, 3))]))
    return out


def _distances(L):
    F = L.nn.functional
    a, b = _rand(L, 4, 3, requires_grad=True), _rand(L, 4, 3, seed=1)
    return [F.pdist(a), F.pdist(a, p=1), F.pdist(a, p=float("inf")), F.pairwise_distance(a, b, p=3, keepdim=True),
            F.cosine_similarity(a, b, dim=0), F.cosine_similarity(a, L.zeros(4, 3)), L.cdist(a, b, p=1),
            L.nn.PairwiseDistance(eps=0.1)(a, b), F.normalize(a, p=1, dim=0), F.normalize(L.zeros(2, 2)),
            L.broadcast_shapes((2, 1, 3), (4, 1), 1),
            _errs(L, [lambda: F.pdist(L.ones(2, 2, 2)), lambda: F.pdist(a, p=-1), lambda: F.pdist(L.ones(3, 2).long()),
                      lambda: L.broadcast_shapes((2, 3), (3, 2)), lambda: L.broadcast_shapes((2, -1), (2, 1)),
                      lambda: L.ones(2, 3) + L.ones(3, 2), lambda: L.broadcast_tensors(L.ones(2, 3), L.ones(3, 2)),
                      lambda: F.cosine_similarity(L.ones(2, 3), L.ones(3, 2))])]


def _rnn_utils(L):
    U = L.nn.utils.rnn
    seqs = [_rand(L, 4, 2), _rand(L, 2, 2, seed=1), _rand(L, 3, 2, seed=2)]
    padded = U.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    left = U.pad_sequence(seqs, padding_side="left")
    packed = U.pack_sequence(seqs, enforce_sorted=False)
    unpacked, lens = U.pad_packed_sequence(packed, total_length=6)
    pp = U.pack_padded_sequence(padded, L.tensor([4, 2, 3]), batch_first=True, enforce_sorted=False)
    return [padded, left, packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices,
            unpacked, lens, pp.batch_sizes, U.unpad_sequence(padded, L.tensor([4, 2, 3]), batch_first=True),
            U.unpack_sequence(packed), _errs(L, [
                lambda: U.pack_sequence(seqs), lambda: U.pack_padded_sequence(padded, [4, 0, 3], batch_first=True,
                                                                              enforce_sorted=False),
                lambda: U.pad_packed_sequence(packed, total_length=2),
                lambda: U.pack_padded_sequence(padded, L.tensor([[4, 2, 3]]), batch_first=True),
                lambda: U.pad_sequence(seqs, padding_side="middle")])]


def _weight_and_spectral_norm(L):
    L.manual_seed(0)
    lin = L.nn.Linear(3, 4)
    with L.no_grad():
        lin.weight.copy_(_rand(L, 4, 3))
    wn = L.nn.utils.parametrizations.weight_norm(lin, dim=1)
    g = wn.parametrizations.weight.original0
    out = [g, wn.weight, sorted(wn.state_dict()), L.nn.utils.parametrize.is_parametrized(wn, "weight")]
    L.nn.utils.parametrize.remove_parametrizations(wn, "weight")
    out.append(sorted(wn.state_dict()))
    lin2 = L.nn.Linear(3, 4)
    with L.no_grad():
        lin2.weight.copy_(_rand(L, 4, 3))
    old = L.nn.utils.weight_norm(lin2, name="weight", dim=None)
    out.extend([old.weight_g, old.weight_v.shape, sorted(old.state_dict())])
    L.nn.utils.remove_weight_norm(old)
    out.append(sorted(old.state_dict()))

    class Sym(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT
    m = L.nn.Linear(3, 3)
    L.nn.utils.parametrize.register_parametrization(m, "weight", Sym())
    out.extend([m.weight, type(m).__name__, repr(m.parametrizations), list(m.state_dict())])
    out.append(_errs(L, [lambda: L.nn.utils.parametrize.remove_parametrizations(L.nn.Linear(2, 2), "weight"),
                         lambda: L.nn.utils.parametrize.register_parametrization(L.nn.Linear(2, 2), "nothere", Sym())]))
    return out


def _attention_checks(L):
    nn = L.nn
    L.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True, kdim=3, vdim=5)
    return [sorted(mha.state_dict()), repr(nn.MultiheadAttention(4, 2)), _errs(L, [
        lambda: nn.MultiheadAttention(5, 2), lambda: nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4),
                                                                                L.ones(2, 2, 4)),
        lambda: nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4), L.ones(3, 2, 4),
                                            attn_mask=L.ones(2, 3)),
        lambda: nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4), L.ones(3, 2, 4),
                                            key_padding_mask=L.ones(2, 4, dtype=L.bool)),
        lambda: nn.TransformerEncoderLayer(4, 3), lambda: nn.TransformerEncoderLayer(4, 2, activation="swish"),
        lambda: nn.Transformer(4, 2, 1, 1, 8)(L.ones(3, 2, 4), L.ones(3, 3, 4)),
        lambda: nn.Transformer(4, 2, 1, 1, 8)(L.ones(3, 2, 5), L.ones(3, 2, 4)),
        lambda: nn.Transformer.generate_square_subsequent_mask(3)])]


def _activations_modules(L):
    nn = L.nn
    x = _rand(L, 3, 4)
    mods = [nn.Hardtanh(-0.5, 0.7), nn.ReLU6(), nn.ELU(0.5), nn.CELU(2.0), nn.SELU(), nn.GELU("tanh"),
            nn.Softplus(2, 1.5), nn.Softshrink(0.3), nn.Hardshrink(0.3), nn.Threshold(0.1, -2.0),
            nn.LeakyReLU(0.2), nn.PReLU(4, init=0.3), nn.RReLU(0.1, 0.3).eval(), nn.Softmin(1),
            nn.Softmax2d(), nn.LogSigmoid(), nn.Tanhshrink(), nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(),
            nn.SiLU(), nn.GLU(), nn.Softsign()]
    out = []
    for m in mods:
        out.append((repr(m), m(x if not isinstance(m, nn.Softmax2d) else x.view(1, 3, 2, 2))))
    out.append(_errs(L, [lambda: nn.Hardtanh(1.0, 0.5), lambda: nn.GLU()(L.ones(3, 3)),
                         lambda: nn.PReLU(3)(L.ones(2, 4)), lambda: nn.Softmax2d()(L.ones(3)),
                         lambda: repr(nn.RReLU(0.5, 0.1)), lambda: nn.Threshold(0.1, 2.0, inplace=True)(L.ones(2))]))
    return out


def _embedding_bag(L):
    L.manual_seed(0)
    w = _rand(L, 6, 3)
    F = L.nn.functional
    idx = L.tensor([0, 2, 4, 5, 4, 1])
    off, last = L.tensor([0, 2, 2, 5]), L.tensor([0, 2, 2, 6])  # with the last offset, it ends the input
    return [F.embedding_bag(idx, w, off if not ilo else last, mode=m, include_last_offset=ilo)
            for m in ["sum", "mean", "max"] for ilo in [False, True]] + \
        [F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=L.arange(6.)),
         F.embedding_bag(idx.view(2, 3), w, mode="mean", padding_idx=4),
         F.one_hot(L.tensor([0, 2, 1]), 4), F.one_hot(L.tensor([[1], [0]]))]


LAYER_CHECKS = {
    "batchnorm_running_stats": _batchnorm_running_stats,
    "instance_group_layer_norm": _instance_group_layer_norm,
    "pooling": _pooling,
    "pooling_errors": _pooling_errors,
    "fold_unfold": _fold_unfold,
    "pixel_shuffle": _pixel_shuffle_and_friends,
    "grid_sample": _grid_sample,
    "distances": _distances,
    "rnn_utils": _rnn_utils,
    "weight_and_spectral_norm": _weight_and_spectral_norm,
    "attention_checks": _attention_checks,
    "activations_modules": _activations_modules,
    "embedding_bag": _embedding_bag,
}


@pytest.mark.parametrize("name", list(LAYER_CHECKS))
def test_nn_layers(name):
    same(LAYER_CHECKS[name])
