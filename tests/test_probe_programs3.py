"""Differences found by running new pytorch/examples-style programs (word_language_model
variants, fast_neural_style, forward-forward, GCN/GAT with sparse adjacency, siamese losses,
U-Net, distillation + mixup, tabular, SimCLR, beam search, a Gaussian process, normalising
flows, data splits and samplers, packed sequences, einsum attention, spatial transformers, FFT
filtering, checkpoint/resume, tensor printing) under ember, each regression checked against
torch on the same inputs."""
import re
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

from _torch_oracle import error_of as _error, same_error as _same_error  # noqa: E402


# ---- F.pad: reflect's error numbers the padding pair, the too-small error names the dim ------

@pytest.mark.parametrize("shape,pad", [
    ((1, 2, 3), (5, 0)), ((1, 1, 2, 3), (5, 0, 0, 0)), ((1, 1, 2, 3), (1, 0, 2, 1)),
    ((1, 1, 2, 3, 4), (0, 0, 3, 0, 0, 0)), ((1, 1, 2, 3, 4), (0, 0, 0, 0, 0, 2))])
def test_reflect_pad_too_large_names_its_argument(shape, pad):
    # fast_style: ReflectionPad2d((1, 0, 2, 1)) on a height-2 input said "Argument #4"
    name, _ = _same_error(lambda lib: lib.nn.functional.pad(lib.zeros(shape), pad, "reflect"))
    assert name == "RuntimeError"


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_negative_pad_that_empties_a_1d_input(mode):
    _same_error(lambda lib: lib.nn.functional.pad(lib.zeros(1, 2, 3), (-10, 0), mode))


@pytest.mark.parametrize("shape", [(1, 1, 2, 3), (1, 1, 2, 3, 4)])
def test_negative_circular_pad_that_empties_a_dim(shape):
    pad = (-10,) + (0,) * (2 * (len(shape) - 2) - 1)
    _same_error(lambda lib: lib.nn.functional.pad(lib.zeros(shape), pad, "circular"))


def test_circular_pad_with_a_negative_side_still_crops():
    x = np.arange(12.).reshape(1, 1, 3, 4)
    ours = ember.nn.functional.pad(ember.tensor(x), (-1, 2, 1, -1), "circular")
    theirs = torch.nn.functional.pad(torch.tensor(x), (-1, 2, 1, -1), "circular")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- factories take their size as the keyword `size` ------------------------------------------

@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_factory_size_keyword(name):
    # gat: nn.Parameter(torch.empty(size=(in_features, n_hidden * n_heads))) raised TypeError
    for size in ((2, 3), [4], ()):
        ours, theirs = getattr(ember, name)(size=size), getattr(torch, name)(size=size)
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    # a size given twice: TypeError (PyTorch's wording lists rand's and randn's overloads)
    assert _error(ember, lambda lib: getattr(lib, name)(2, size=(3,)))[0] == \
        _error(torch, lambda lib: getattr(lib, name)(2, size=(3,)))[0] == "TypeError"


@pytest.mark.parametrize("name", ["new_empty", "new_zeros", "new_ones"])
def test_new_factory_size_keyword(name):
    # x.new_zeros(size=(3,)) silently returned a 0-dim tensor
    for lib in (ember, torch):
        out = getattr(lib.zeros(2, dtype=lib.float64), name)(size=(3, 2))
        assert tuple(out.shape) == (3, 2) and out.dtype is lib.float64
    _same_error(lambda lib: getattr(lib.zeros(2), name)(2, size=(3,)))


# ---- torch.sparse.softmax / log_softmax --------------------------------------------------------

def _sparse_softmax_case(lib, fn, dim, hybrid=False):
    idx = lib.tensor([[0, 1, 1, 0, 2, 1], [2, 0, 2, 0, 1, 0]])  # (1, 0) stored twice
    vals = lib.tensor(np.arange(12.).reshape(6, 2) * 0.3 - 1.0) if hybrid else \
        lib.tensor([3., 4., 5., 1., -2., 0.5], dtype=lib.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = lib.sparse_coo_tensor(idx, vals, (3, 3, 2) if hybrid else (3, 3),
                                  requires_grad=True)
    out = getattr(lib.sparse, fn)(s, dim)
    weight = lib.arange(out.numel(), dtype=out.dtype).view(out.shape)
    (out.to_dense() * weight).sum().backward()
    return (out.is_coalesced(), out.indices().numpy(), out.values().detach().numpy(),
            s.grad.to_dense().numpy())


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim,hybrid", [(0, False), (1, False), (0, True), (1, True), (2, True)])
def test_sparse_softmax_matches_torch(fn, dim, hybrid):
    # gcn: torch.sparse.softmax was missing
    ours = _sparse_softmax_case(ember, fn, dim, hybrid)
    theirs = _sparse_softmax_case(torch, fn, dim, hybrid)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)


def test_sparse_softmax_dtype_and_errors():
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.tensor([1., 2.]), (3,))
        assert lib.sparse.softmax(s, 0, dtype=lib.float64).dtype is lib.float64
    name, _ = _error(ember, lambda lib: lib.sparse.softmax(lib.ones(2, 2), 0))
    assert name == _error(torch, lambda lib: lib.sparse.softmax(lib.ones(2, 2), 0))[0]

    def out_of_range(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.tensor([1., 2.]), (3,))
        lib.sparse.log_softmax(s, 1)
    _same_error(out_of_range)


# ---- linalg.cholesky's error and the deprecated forms' warnings --------------------------------

@pytest.mark.parametrize("batched", [False, True])
def test_cholesky_error_names_the_failing_minor(batched):
    # gp: the message lacked "(the leading minor of order 2 ...)"; the class is _LinAlgError
    a = [[[1., 0.], [0., 1.]], [[1., 2.], [2., 1.]]] if batched else [[1., 2.], [2., 1.]]
    name, _ = _same_error(lambda lib: lib.linalg.cholesky(lib.tensor(a)))
    assert name == "_LinAlgError"
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def _first_warning(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    texts = [re.sub(r" \(Triggered internally.*", "", str(w.message), flags=re.S) for w in seen]
    return texts, [w.filename for w in seen]


def test_deprecated_cholesky_warns_once_with_torchs_text_and_its_own_error_name():
    ember._core.flags._warned_once.clear()
    ours, files = _first_warning(lambda: (ember.cholesky(ember.eye(2)), ember.cholesky(ember.eye(2))))
    assert len(ours) == 1 and files == [__file__]
    theirs, _ = _first_warning(lambda: torch.cholesky(torch.eye(2)))
    if theirs:  # PyTorch warns once per process: only the first call in this process shows it
        assert ours == theirs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(lambda lib: lib.cholesky(lib.tensor([[1., 2.], [2., 1.]])))


def test_triangular_solve_warns_once_with_torchs_text():
    ember._core.flags._warned_once.clear()
    a = np.array([[2., 0.], [1., 1.]], dtype=np.float32)
    ours, files = _first_warning(lambda: [ember.triangular_solve(ember.eye(2), ember.tensor(a),
                                                                 upper=False) for _ in range(2)])
    assert len(ours) == 1 and files == [__file__]
    theirs, _ = _first_warning(lambda: torch.triangular_solve(torch.eye(2), torch.tensor(a),
                                                              upper=False))
    if theirs:
        assert ours == theirs


# ---- cross_entropy with class probabilities ---------------------------------------------------

@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
def test_probability_target_sum_ends_in_neg(label_smoothing):
    # distill: reduction="sum" ended in SumBackward0 where PyTorch negates the sum last
    names = []
    for lib in (ember, torch):
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
        p = lib.tensor(np.full((3, 4), 0.25))
        loss = lib.nn.functional.cross_entropy(x, p, reduction="sum",
                                               label_smoothing=label_smoothing)
        names.append((type(loss.grad_fn).__name__, round(loss.item(), 10)))
    assert names[0] == names[1]


# ---- mixed-dtype linear algebra: PyTorch's wording per function --------------------------------

_MIXED = {
    "triangular_solve": lambda lib, f, d: lib.triangular_solve(f, d),
    "triangular_solve_b_double": lambda lib, f, d: lib.triangular_solve(d, f),
    "linalg.solve": lambda lib, f, d: lib.linalg.solve(f, d),
    "linalg.solve_ex": lambda lib, f, d: lib.linalg.solve_ex(d, f),
    "tensorsolve": lambda lib, f, d: lib.linalg.tensorsolve(f, d[0]),
    "cholesky_solve": lambda lib, f, d: lib.cholesky_solve(f, d),
    "lstsq": lambda lib, f, d: lib.linalg.lstsq(f, d),
    "linalg.cross": lambda lib, f, d: lib.linalg.cross(d, f),
    "lu_solve": lambda lib, f, d: lib.linalg.lu_solve(*lib.linalg.lu_factor(f), d),
    "ldl_solve": lambda lib, f, d: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(f), d),
    "multi_dot": lambda lib, f, d: lib.linalg.multi_dot([f, f, d]),
    "chain_matmul": lambda lib, f, d: lib.chain_matmul(f, d),
    "householder_product": lambda lib, f, d: lib.linalg.householder_product(f, d[0]),
    "vecdot": lambda lib, f, d: lib.linalg.vecdot(d, f),
    "baddbmm_batch2": lambda lib, f, d: lib.baddbmm(f[None], f[None], d[None]),
    "baddbmm_input": lambda lib, f, d: lib.baddbmm(d[None], f[None], f[None]),
}


@pytest.mark.parametrize("case", sorted(_MIXED))
def test_mixed_dtype_linalg_errors(case):
    # gp: triangular_solve(float b, double A) ran (promoting) where PyTorch refuses; the other
    # functions' messages were worded differently from PyTorch's
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _MIXED[case](lib, lib.eye(3) * 2, lib.eye(3, dtype=lib.float64) * 2)
    name, _ = _same_error(run)
    assert name == "RuntimeError"


def test_solve_triangular_computes_in_the_dtype_of_a():
    a = np.array([[2., 0.], [1., 1.]])
    b = np.array([[1., 2.], [3., 4.]])
    for a_dt, b_dt in (("float32", "float64"), ("float64", "float32")):
        ours = ember.linalg.solve_triangular(ember.tensor(a, dtype=getattr(ember, a_dt)),
                                             ember.tensor(b, dtype=getattr(ember, b_dt)),
                                             upper=False)
        theirs = torch.linalg.solve_triangular(torch.tensor(a, dtype=getattr(torch, a_dt)),
                                               torch.tensor(b, dtype=getattr(torch, b_dt)),
                                               upper=False)
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_deprecated_lu_solve_warns_once_with_torchs_text():
    ember._core.flags._warned_once.clear()

    def call(lib):
        LU, piv = lib.linalg.lu_factor(lib.eye(2) * 2)
        return lambda: [lib.lu_solve(lib.eye(2), LU, piv) for _ in range(2)]
    ours, files = _first_warning(call(ember))
    assert len(ours) == 1 and files == [__file__]
    theirs, _ = _first_warning(call(torch))
    if theirs:
        assert ours == theirs[:1]


# ---- messages of common mistakes -----------------------------------------------------------------

_MISTAKES = {
    "mm_vector_self": lambda lib: lib.mm(lib.ones(3), lib.ones(3, 2)),
    "mm_vector_mat2": lambda lib: lib.mm(lib.ones(3, 2), lib.ones(2)),
    "pad_odd": lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,)),
    "pad_odd_reflect": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (1,), "reflect"),
    "pad_too_long": lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,) * 6, "replicate"),
    "constant_pad_nd_odd": lambda lib: lib.constant_pad_nd(lib.ones(2, 3), (1,)),
    "constant_pad_nd_too_long": lambda lib: lib.constant_pad_nd(lib.ones(2, 3), (1,) * 6),
    "unflatten_product": lambda lib: lib.ones(2, 6).unflatten(1, (4, 2)),
    "unflatten_inferred": lambda lib: lib.ones(2, 6).unflatten(-1, (-1, 4)),
    "unflatten_empty": lambda lib: lib.ones(2, 6).unflatten(1, ()),
    "detach_view_inplace": lambda lib: lib.ones(3, requires_grad=True)[:2].detach_(),
}


@pytest.mark.parametrize("case", sorted(_MISTAKES))
def test_common_mistake_messages(case):
    _same_error(_MISTAKES[case])


def test_unflatten_still_infers():
    for sizes in ((-1, 3), (2, 3), (3, -1)):
        ours = ember.ones(2, 6).unflatten(1, sizes)
        assert tuple(ours.shape) == tuple(torch.ones(2, 6).unflatten(1, sizes).shape)
    assert tuple(ember.ones(2, 0).unflatten(1, (-1, 3)).shape) == (2, 0, 3)


# ---- smooth_l1_loss / huber_loss are nodes of their own ---------------------------------------

@pytest.mark.parametrize("name,kw", [("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {}),
                                     ("huber_loss", {"delta": 0.7}), ("huber_loss", {})])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_robust_losses_print_their_own_node(name, kw, reduction):
    # print(loss) of a detection-style program showed grad_fn=<MeanBackward0>
    rs = np.random.RandomState(0)
    xs, ts = rs.randn(3, 4) * 2, rs.randn(4) * 2
    got = []
    for lib in (ember, torch):
        x = lib.tensor(xs, requires_grad=True)
        t = lib.tensor(ts, requires_grad=True)
        loss = getattr(lib.nn.functional, name)(x, t, reduction=reduction, **kw)
        gx, gt = lib.autograd.grad(loss.sum(), (x, t), create_graph=True)
        ggx = lib.autograd.grad(gx.pow(2).sum(), x)[0]
        got.append((type(loss.grad_fn).__name__, loss.detach().numpy(), gx.detach().numpy(),
                    gt.detach().numpy(), ggx.numpy()))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1:], got[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(2, 4), (2, 4, 3), (2, 4, 3, 2), (2, 4, 3, 2, 2)])
def test_nll_loss_node_of_images_is_nll_loss2d(shape):
    # U-Net: print(criterion(pred, masks)) showed NllLossBackward0 for (N, C, H, W) logits
    names = []
    for lib in (ember, torch):
        x = lib.zeros(shape, requires_grad=True)
        t = lib.zeros((shape[0],) + shape[2:], dtype=lib.int64)
        names.append([type(lib.nn.functional.cross_entropy(x, t).grad_fn).__name__,
                      type(lib.nn.functional.nll_loss(x, t, reduction="sum").grad_fn).__name__])
    assert names[0] == names[1]


def test_float_of_a_tensor_requiring_grad_warns_once():
    # optim_zoo: `round(float(loss), 6)` warned under PyTorch only
    once = ember._core.flags._warned_once
    once.clear()
    x = ember.ones((), requires_grad=True) * 2
    ours, files = _first_warning(lambda: (float(x), complex(x), float(x), int(x)))
    assert len(ours) == 1 and files == [__file__]
    y = torch.ones((), requires_grad=True) * 2
    theirs, _ = _first_warning(lambda: (float(y), float(y)))
    if theirs:  # once per process in PyTorch too
        assert ours == theirs
    once.clear()
    quiet, _ = _first_warning(lambda: (float(x.detach()), int(x), x.item()))
    assert quiet == [] and not once


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_soft_margin_loss_is_its_own_node(reduction):
    rs = np.random.RandomState(1)
    xs, ts = rs.randn(3, 4), np.sign(rs.randn(4))
    got = []
    for lib in (ember, torch):
        x = lib.tensor(xs, requires_grad=True)
        loss = lib.nn.functional.soft_margin_loss(x, lib.tensor(ts), reduction=reduction)
        g, = lib.autograd.grad(loss.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.pow(2).sum(), x)
        got.append((type(loss.grad_fn).__name__, loss.detach().numpy(), g.detach().numpy(),
                    gg.numpy()))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1:], got[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape,repeats", [((3, 4), (2, 1)), ((3,), (2, 3)), ((), (3,)),
                                           ((2, 0), (2, 2)), ((2, 3), (0, 2))])
def test_repeat_is_its_own_node(shape, repeats):
    # gradfn_names: x.repeat(2, 1) printed grad_fn=<UnsafeViewBackward0>
    rs = np.random.RandomState(2)
    xs = rs.randn(*shape)
    got = []
    for lib in (ember, torch):
        x = lib.tensor(xs, requires_grad=True)
        y = x.repeat(*repeats)
        w = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        got.append((type(y.grad_fn).__name__, y.detach().numpy(), x.grad.numpy(),
                    y.is_contiguous()))
    assert got[0][0] == got[1][0] and got[0][3] == got[1][3]
    np.testing.assert_array_equal(got[0][1], got[1][1])
    np.testing.assert_array_equal(got[0][2], got[1][2])


def test_repeat_errors():
    _same_error(lambda lib: lib.ones(2, 3).repeat(2))
    _same_error(lambda lib: lib.ones(2).repeat(-1))
