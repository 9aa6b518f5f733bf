"""nn layers against PyTorch: activations, normalization, extra pooling, upsampling, padding,
distances, pixel and channel shuffles, Fold/Unfold and Bilinear. One table row per layer; each
row checks the freshly seeded parameters, the state_dict layout and the repr, then runs the same
input in training and in evaluation mode and compares outputs, buffers, and the gradients of
the inputs and of the parameters."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
from _torch_oracle import assert_same, check, check_raises, to_numpy  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

# (constructor, input shapes[, dtype]); the layer is built as `nn.<constructor>` in both.
LAYERS = [
    # activations
    ("Threshold(0.1, 20.0)", [(2, 3, 4)]), ("Threshold(0.1, 20.0, inplace=True)", [(2, 3, 4)]),
    ("ReLU(inplace=True)", [(2, 3, 4)]), ("ReLU6()", [(2, 3, 4)]),
    ("ReLU6(inplace=True)", [(2, 3, 4)]), ("LeakyReLU(0.2)", [(2, 3, 4)]),
    ("LeakyReLU(inplace=True)", [(2, 3, 4)]), ("PReLU()", [(2, 3, 4)]),
    ("PReLU(3, init=0.1)", [(2, 3, 4)]), ("ELU(alpha=0.5)", [(2, 3, 4)]),
    ("ELU(inplace=True)", [(2, 3, 4)]), ("SELU()", [(2, 3, 4)]), ("CELU(0.7)", [(2, 3, 4)]),
    ("GELU(approximate='tanh')", [(2, 3, 4)]), ("Mish()", [(2, 3, 4)]),
    ("SiLU(inplace=True)", [(2, 3, 4)]), ("Softplus(beta=2.0, threshold=1.0)", [(2, 3, 4)]),
    ("Softsign()", [(2, 3, 4)]), ("Hardtanh(-0.5, 0.5)", [(2, 3, 4)]),
    ("Hardswish()", [(2, 3, 4)]), ("Hardsigmoid(inplace=True)", [(2, 3, 4)]),
    ("GLU()", [(2, 3, 4)]), ("GLU(1)", [(2, 4, 3)]), ("LogSigmoid()", [(2, 3, 4)]),
    ("Tanhshrink()", [(2, 3, 4)]), ("Softshrink(0.3)", [(2, 3, 4)]),
    ("Hardshrink()", [(2, 3, 4)]), ("RReLU()", [(2, 3, 4)]),
    ("RReLU(0.1, 0.3, inplace=True)", [(2, 3, 4)]), ("Softmin(1)", [(2, 3, 4)]),
    ("Softmin()", [(2, 3, 4)]), ("Softmax()", [(2, 3)]), ("LogSoftmax(dim=-1)", [(2, 3, 4)]),
    ("Softmax2d()", [(2, 3, 4, 5)]), ("Softmax2d()", [(3, 4, 5)]),
    ("Mish()", [(2, 3, 4)], "float64"), ("PReLU(3)", [(2, 3, 4)], "float64"),
    # normalization
    ("LayerNorm(4)", [(2, 3, 4)]), ("LayerNorm([3, 4], elementwise_affine=False)", [(2, 3, 4)]),
    ("LayerNorm((4,), eps=1e-3, bias=False)", [(2, 3, 4)]),
    ("GroupNorm(2, 4)", [(2, 4, 3, 2)]), ("GroupNorm(1, 4, affine=False)", [(2, 4, 5)]),
    ("GroupNorm(2, 4, eps=1e-3, bias=False)", [(2, 4, 3)]), ("RMSNorm(4)", [(2, 3, 4)]),
    ("RMSNorm([3, 4], eps=1e-4, elementwise_affine=False)", [(2, 3, 4)]),
    ("LocalResponseNorm(3)", [(2, 5, 4, 3)]),
    ("LocalResponseNorm(2, alpha=0.01, beta=0.5, k=2.0)", [(2, 5, 6)]),
    ("CrossMapLRN2d(3)", [(2, 5, 3, 3)]),
    ("CrossMapLRN2d(4, alpha=0.5, beta=0.6, k=2.0)", [(2, 8, 3, 2)]),
    ("CrossMapLRN2d(5, alpha=0.5, beta=0.75, k=1.5)", [(1, 3, 2, 2)], "float64"),
    ("InstanceNorm1d(3)", [(2, 3, 5)]), ("InstanceNorm1d(3, affine=True)", [(3, 5)]),
    ("InstanceNorm2d(3, affine=True, track_running_stats=True)", [(2, 3, 4, 5)]),
    ("InstanceNorm3d(2, momentum=None, track_running_stats=True)", [(2, 2, 3, 3, 2)]),
    ("InstanceNorm2d(3, affine=True, bias=False)", [(2, 3, 4, 5)]),
    ("InstanceNorm1d(4)", [(2, 3, 5)]),
    ("LayerNorm(4)", [(2, 3, 4)], "float64"), ("GroupNorm(2, 4)", [(2, 4, 3)], "float64"),
    ("InstanceNorm2d(3, affine=True, track_running_stats=True)", [(2, 3, 4, 5)], "float64"),
    # pooling
    ("LPPool1d(2, 3)", [(2, 3, 7)]), ("LPPool2d(2, (2, 3), stride=2, ceil_mode=True)",
                                      [(2, 3, 5, 7)]),
    ("LPPool3d(1, 2)", [(1, 2, 4, 4, 4)]),
    ("FractionalMaxPool2d(3, output_ratio=0.5)", [(2, 3, 9, 8)]),
    ("FractionalMaxPool2d((2, 3), output_size=(4, 3))", [(1, 2, 7, 8)]),
    ("FractionalMaxPool3d(2, output_size=(3, 4, 2))", [(1, 2, 6, 7, 5)]),
    # upsampling, shuffles, padding
    ("Upsample(scale_factor=2)", [(1, 2, 3, 4)]),
    ("Upsample(size=(5, 7), mode='bilinear')", [(1, 2, 3, 4)]),
    ("Upsample(scale_factor=(2, 1.5), mode='bicubic', align_corners=True)", [(1, 2, 3, 4)]),
    ("Upsample(scale_factor=2, mode='trilinear')", [(1, 2, 2, 3, 2)]),
    ("Upsample(size=5, mode='linear')", [(2, 3, 4)]),
    ("Upsample(scale_factor=1.7, mode='bilinear', recompute_scale_factor=True)",
     [(1, 2, 3, 4)]),
    ("Upsample(size=(3, 2), mode='area')", [(1, 2, 6, 5)]),
    ("Upsample(scale_factor=1.5, mode='nearest-exact')", [(1, 2, 3, 4)]),
    ("UpsamplingNearest2d(scale_factor=2)", [(1, 2, 3, 4)]),
    ("UpsamplingBilinear2d(size=(4, 6))", [(1, 2, 3, 4)]),
    ("PixelShuffle(2)", [(1, 8, 3, 2)]), ("PixelUnshuffle(2)", [(1, 2, 4, 6)]),
    ("ChannelShuffle(2)", [(2, 4, 3, 3)]), ("ChannelShuffle(3)", [(1, 6, 5)]),
    ("ZeroPad1d(2)", [(2, 3, 4)]), ("ZeroPad2d((1, 0, 2, 1))", [(2, 3, 4, 5)]),
    ("ZeroPad3d(1)", [(1, 2, 3, 3, 3)]), ("ConstantPad1d((1, 2), 3.5)", [(2, 3, 4)]),
    ("ConstantPad2d(1, -1.0)", [(2, 3, 4, 5)]),
    ("ConstantPad3d((1, 0, 0, 1, 1, 0), 2.0)", [(1, 2, 3, 3, 3)]),
    ("ReflectionPad1d(2)", [(2, 3, 4)]), ("ReflectionPad2d((1, 2, 0, 1))", [(2, 3, 4, 5)]),
    ("ReflectionPad3d(1)", [(1, 2, 3, 3, 3)]), ("ReplicationPad1d((3, 1))", [(2, 3, 4)]),
    ("ReplicationPad2d(2)", [(2, 3, 4, 5)]),
    ("ReplicationPad3d((1, 0, 2, 0, 0, 1))", [(1, 2, 3, 3, 3)]),
    ("CircularPad1d(2)", [(2, 3, 4)]), ("CircularPad2d((1, 0, 2, 1))", [(2, 3, 4, 5)]),
    ("CircularPad3d(1)", [(1, 2, 3, 3, 3)]),
    # distances, fold, bilinear
    ("CosineSimilarity()", [(4, 5), (4, 5)]), ("CosineSimilarity(dim=0, eps=1e-6)", [(4, 5),
                                                                                   (4, 5)]),
    ("PairwiseDistance()", [(4, 5), (4, 5)]), ("PairwiseDistance(p=1, keepdim=True)",
                                               [(4, 5), (4, 5)]),
    ("PairwiseDistance(3.0, eps=1e-3)", [(4, 5), (5,)]),
    ("Fold(output_size=(4, 5), kernel_size=2)", [(2, 12, 12)]),
    ("Fold((4, 5), (2, 3), dilation=1, padding=1, stride=2)", [(1, 12, 9)]),
    ("Unfold(2)", [(2, 3, 4, 5)]), ("Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
                                    [(2, 3, 4, 5)]),
    ("Bilinear(3, 4, 5)", [(6, 3), (6, 4)]), ("Bilinear(2, 3, 4, bias=False)", [(2, 5, 2),
                                                                               (2, 5, 3)]),
    ("Bilinear(3, 4, 5)", [(3,), (4,)], "float64"),
]


def _build(lib, spec, dtype):
    lib.manual_seed(0)
    layer = eval(f"lib.nn.{spec}", {"lib": lib})
    return layer.double() if dtype == "float64" else layer


def _state_as_numpy(layer):
    return {k: to_numpy(v) for k, v in layer.state_dict().items()}


def _perturb(t_layer):
    """Give torch's affine parameters values other than their ones/zeros initialisation, so
    that their effect and gradients are tested too."""
    rng = np.random.default_rng(5)
    with torch.no_grad():
        for p in t_layer.parameters():
            p.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, tuple(p.shape))))


def _run(layers, lib, inputs):
    lib.manual_seed(1)
    # x * 1 keeps the leaf inputs out of the in-place layers' reach
    return layers[lib](*[x * 1 for x in inputs])


@pytest.mark.parametrize("row", LAYERS, ids=[f"{r[0]}-{r[2] if len(r) > 2 else ''}"
                                             f"{len(r[1][0])}d" for r in LAYERS])
def test_layer_against_torch(row):
    spec, shapes = row[0], row[1]
    dtype = row[2] if len(row) > 2 else "float32"
    e_layer, t_layer = _build(ember, spec, dtype), _build(torch, spec, dtype)
    # same seed, same fresh parameters; same state_dict layout; same repr
    e_state, t_state = _state_as_numpy(e_layer), _state_as_numpy(t_layer)
    assert list(e_state) == list(t_state)
    for key in t_state:
        assert e_state[key].shape == t_state[key].shape, key
        np.testing.assert_array_equal(e_state[key], t_state[key], err_msg=key)
    assert repr(e_layer) == repr(t_layer)
    _perturb(t_layer)
    e_layer.load_state_dict({k: ember.from_numpy(v.copy())
                             for k, v in _state_as_numpy(t_layer).items()})
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    layers = {ember: e_layer, torch: t_layer}
    tol = dict(atol=1e-10, rtol=1e-7) if dtype == "float64" else dict(atol=1e-5, rtol=1e-4)
    for training in (True, False):
        e_layer.train(training)
        t_layer.train(training)
        e_layer.zero_grad()
        t_layer.zero_grad()
        check(lambda lib, *xs: _run(layers, lib, xs), *arrays, **tol)
        for name, tp in t_layer.named_parameters():
            ep = e_layer.get_parameter(name)
            assert (ep.grad is None) == (tp.grad is None), name
            if tp.grad is not None:
                assert_same(ep.grad, tp.grad, path=f"{name}.grad", **tol)
        for name, tb in t_layer.named_buffers():
            assert_same(e_layer.get_buffer(name), tb, path=name, **tol)


@pytest.mark.parametrize("nd,shape,kernel", [(1, (2, 3, 8), 2), (2, (2, 3, 4, 6), (2, 3)),
                                             (3, (1, 2, 4, 4, 2), 2)])
def test_max_unpool(nd, shape, kernel):
    """MaxUnpool puts max pooling's values back at their indices, with and without an explicit
    output size; values and gradients as torch's."""
    def fn(lib, x):
        pool = getattr(lib.nn, f"MaxPool{nd}d")(kernel, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(kernel)
        assert repr(unpool) == repr(getattr(torch.nn, f"MaxUnpool{nd}d")(kernel))
        y, idx = pool(x)
        bigger = [s + 1 for s in x.shape[2:]]
        return unpool(y, idx), unpool(y, idx, output_size=bigger)
    check(fn, np.random.default_rng(0).standard_normal(shape).astype("float32"))


@pytest.mark.parametrize("spec,shapes", [
    ("Bilinear(3, 4, 2)", [(2, 3), (2, 4)]), ("PReLU(4)", [(2, 4, 3)]),
    ("LayerNorm([3, 4])", [(2, 3, 4)]), ("GroupNorm(2, 4)", [(2, 4, 3)]),
    ("InstanceNorm1d(4, affine=True)", [(2, 4, 3)]), ("RMSNorm(3)", [(2, 4, 3)])])
def test_gradcheck_float64(spec, shapes):
    """Gradients with respect to the inputs and the parameters pass gradcheck. The parameters
    go in as gradcheck inputs: it perturbs them in place, where the layer reads them."""
    layer = eval(f"ember.nn.{spec}").double()
    rng = np.random.default_rng(0)
    with ember.no_grad():
        for p in layer.parameters():
            p.copy_(ember.from_numpy(rng.uniform(0.5, 1.5, tuple(p.shape))))
    inputs = [ember.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    n = len(inputs)
    assert ember.autograd.gradcheck(lambda *args: layer(*args[:n]),
                                    tuple(inputs + list(layer.parameters())))


@pytest.mark.parametrize("bad", [
    ("GroupNorm(3, 4)", None), ("Hardtanh(1.0, 0.0)", None), ("Bilinear(0, 2, 3)", None),
    ("Softmax2d()", (2, 3)), ("InstanceNorm1d(4, affine=True)", (2, 3, 5)),
    ("InstanceNorm2d(3)", (2, 3)), ("CircularPad2d(1)", (2, 3)),
    ("ChannelShuffle(2)", (2, 3, 4)), ("ChannelShuffle(2)", (2, 4)), ("ChannelShuffle(0)",
                                                                      (2, 4, 3)),
    ("LayerNorm(5)", (2, 4)), ("PixelShuffle(2)", (1, 3, 2, 2)), ("GroupNorm(2, 4)", (2, 3, 4)),
    ("LocalResponseNorm(2)", (2, 3)), ("Upsample(scale_factor=2, mode='bilinear')", (2, 3, 4)),
    ("ReflectionPad1d(4)", (2, 3, 4)), ("Softplus()", (2, 3)), ("CrossMapLRN2d(3)", (2, 3, 4)),
    ("FractionalMaxPool2d(2)", None), ("FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)",
                                       None),
    ("FractionalMaxPool2d(2, output_ratio=1.5)", None),
    ("FractionalMaxPool3d(0, output_size=2)", None)])
def test_layer_errors(bad):
    """Bad constructor arguments and bad inputs raise the exception class torch raises."""
    spec, shape = bad

    def fn(lib):
        layer = eval(f"lib.nn.{spec}", {"lib": lib})
        if shape is not None:
            x = lib.zeros(shape)
            layer(x.long() if spec == "Softplus()" else x)
    check_raises(fn)


@pytest.mark.parametrize("args", [
    [(3, 2), (2, 4), (5, 2, 4)], [(3, 2), (3, 4), (5, 3, 4)], [(3, 2), (3, 4), (5, 2, 3)],
    [(3, 2), (3, 4, 1), (5, 2, 4)], [(3, 2), (3, 4), (5, 2, 4), (4,)]])
def test_bilinear_function_errors(args):
    arrays = [np.zeros(s, dtype="float32") for s in args]
    check_raises(lambda lib, *xs: lib.nn.functional.bilinear(*xs), *arrays)
    arrays[0] = arrays[0].astype("float64")
    check_raises(lambda lib, *xs: lib.nn.functional.bilinear(*xs), *arrays)


@pytest.mark.parametrize("where", ["nn.functional", "torch"])
def test_channel_shuffle_and_bilinear_functions(where):
    """The functional and torch.* forms; channel shuffles keep integer dtypes."""
    def ns(lib):
        return lib.nn.functional if where == "nn.functional" else lib
    x = np.arange(2 * 6 * 2).reshape(2, 6, 2).astype("int32")
    for name in ("channel_shuffle", "native_channel_shuffle"):
        check(lambda lib, t: getattr(ns(lib), name)(t, 3), x, grad=False)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(2, 3, 2), (2, 3, 4), (5, 2, 4), (5,)]]
    check(lambda lib, *ts: ns(lib).bilinear(*ts), *arrays)


def test_instance_norm_rejects_pre_0_4_running_stats():
    """An unversioned state_dict with running statistics for a layer that tracks none is an
    error in both libraries, naming the keys."""
    errors = []
    for lib in (ember, torch):
        layer = lib.nn.InstanceNorm2d(3)
        state = {"running_mean": lib.zeros(3), "running_var": lib.ones(3)}
        with pytest.raises(RuntimeError) as info:
            layer.load_state_dict(state)
        errors.append(str(info.value))
    assert "Unexpected running stats buffer(s)" in errors[0]
    assert errors[0] == errors[1]


def test_softmax_implicit_dim_warns_like_torch():
    for spec in ("Softmax()", "Softmin()", "LogSoftmax()"):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            eval(f"ember.nn.{spec}")(ember.zeros(2, 3))


def test_every_torch_layer_of_this_issue_exists():
    names = ["LayerNorm", "GroupNorm", "InstanceNorm1d", "RMSNorm", "LocalResponseNorm",
             "CrossMapLRN2d", "PReLU", "RReLU", "Softmax2d", "LPPool3d", "MaxUnpool3d",
             "FractionalMaxPool3d",
             "UpsamplingBilinear2d", "PixelUnshuffle", "CircularPad3d", "ZeroPad1d",
             "PairwiseDistance", "ChannelShuffle", "Fold", "Unfold", "Bilinear", "LazyLinear",
             "UninitializedParameter"]
    for name in names:
        assert getattr(ember.nn, name).__name__ == name
    assert not issubclass(ember.nn.CELU, ember.nn.ELU)
    assert not issubclass(ember.nn.LogSoftmax, ember.nn.Softmax)
    assert issubclass(ember.nn.ZeroPad2d, ember.nn.ConstantPad2d)
    assert issubclass(ember.nn.ReLU6, ember.nn.Hardtanh)


# ---- lazy modules ------------------------------------------------------------------------------
LAZY = [("LazyLinear(3)", (2, 4)), ("LazyLinear(3, bias=False)", (2, 5, 4)),
        ("LazyConv1d(4, 3)", (2, 3, 7)), ("LazyConv2d(4, 3, groups=2, padding=1)", (2, 2, 5, 5)),
        ("LazyConv2d(4, 3)", (2, 5, 5)), ("LazyConv3d(2, 2, bias=False)", (1, 3, 4, 4, 4)),
        ("LazyConvTranspose1d(3, 2)", (2, 4, 3)),
        ("LazyConvTranspose2d(3, 2, stride=2)", (1, 2, 3, 3)),
        ("LazyConvTranspose3d(2, 2)", (1, 2, 2, 2, 2)), ("LazyBatchNorm1d()", (4, 3)),
        ("LazyBatchNorm2d(affine=False)", (2, 3, 4, 4)),
        ("LazyBatchNorm3d(momentum=None, bias=False)", (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d(track_running_stats=False)", (2, 3, 4)),
        ("LazyInstanceNorm2d()", (2, 3, 4, 4)), ("LazyInstanceNorm3d(affine=False)",
                                                  (2, 3, 2, 2, 2))]


def _reprs(state):
    return [(k, repr(v) if k != "num_batches_tracked" else int(v)) for k, v in state.items()]


@pytest.mark.parametrize("spec,shape", LAZY)
def test_lazy_layer(spec, shape):
    """Before the first call: same repr and placeholder state_dict. The first call infers the
    size, draws the same parameters as torch from the same seed and turns the module into its
    eager class; outputs and all gradients then match."""
    layers = {lib: eval(f"lib.nn.{spec}", {"lib": lib}) for lib in (ember, torch)}
    assert repr(layers[ember]) == repr(layers[torch])
    assert _reprs(layers[ember].state_dict()) == _reprs(layers[torch].state_dict())
    assert layers[ember].has_uninitialized_params()

    def fn(lib, x):
        lib.manual_seed(0)
        return layers[lib](x)
    check(fn, np.random.default_rng(0).standard_normal(shape).astype("float32"),
          atol=1e-5, rtol=1e-4)
    e_layer, t_layer = layers[ember], layers[torch]
    assert type(e_layer).__name__ == type(t_layer).__name__ and repr(e_layer) == repr(t_layer)
    assert not hasattr(e_layer, "_initialize_hook")
    for name, tp in t_layer.named_parameters():
        ep = e_layer.get_parameter(name)
        assert type(ep) is ember.nn.Parameter
        assert_same(ep, tp, path=name)
        assert_same(ep.grad, tp.grad, path=f"{name}.grad", atol=1e-5, rtol=1e-4)
    for name, tb in t_layer.named_buffers():
        assert_same(e_layer.get_buffer(name), tb, path=name, atol=1e-6, rtol=1e-5)


def test_lazy_layer_loads_a_checkpoint_without_a_forward():
    """load_state_dict materializes the placeholders from the checkpoint's shapes; the first
    call then only learns in_features."""
    for lib in (ember, torch):
        lib.manual_seed(0)
        source = lib.nn.Linear(5, 3)
        lazy = lib.nn.LazyLinear(3)
        lazy.load_state_dict(source.state_dict())
        assert type(lazy).__name__ == "LazyLinear" and tuple(lazy.weight.shape) == (3, 5)
        out = lazy(lib.ones(2, 5))
        assert repr(lazy) == "Linear(in_features=5, out_features=3, bias=True)"
        np.testing.assert_allclose(to_numpy(out), to_numpy(source(lib.ones(2, 5))), atol=1e-6)


def test_uninitialized_parameter_and_buffer_like_torch():
    for name in ("UninitializedParameter", "UninitializedBuffer"):
        e, t = getattr(ember.nn, name)(), getattr(torch.nn, name)()
        assert repr(e) == repr(t) and e.requires_grad == t.requires_grad
        assert tuple(e.size()) == tuple(t.size()) and str(e.dtype) == str(t.dtype)
        assert type(e.double()).__name__ == type(t.double()).__name__
        assert e.float() is e and str(e.double().dtype) == str(t.double().dtype)
        for use in (lambda x: x.detach(), lambda x: x.numel(), lambda x: x.sum()):
            with pytest.raises(ValueError, match="uninitialized parameter"):
                use(e)
            with pytest.raises(ValueError):
                use(t)
        with pytest.raises(RuntimeError, match="Can't access the shape"):
            e.shape
        e.materialize((2, 3), dtype=ember.float64)
        assert type(e) is (ember.nn.Parameter if "Parameter" in name else ember.Tensor)
        assert e.shape == (2, 3) and e.dtype is ember.float64
    assert isinstance(ember.nn.UninitializedBuffer(), ember.nn.Buffer)
    import copy
    p = ember.nn.UninitializedParameter(requires_grad=False, dtype=ember.float64)
    q = copy.deepcopy(p)
    assert type(q) is type(p) and q is not p and q.dtype is ember.float64 and not q.requires_grad


def test_lazy_module_conversion_keeps_placeholders():
    """Module.double() on a lazy module converts the placeholders, which stay lazy."""
    for lib in (ember, torch):
        m = lib.nn.LazyLinear(3).double()
        assert type(m.weight).__name__ == "UninitializedParameter"
        assert str(m.weight.dtype).endswith("float64")
        m(lib.ones(2, 4, dtype=lib.float64))
        assert str(m.weight.dtype).endswith("float64") and tuple(m.weight.shape) == (3, 4)


# ---- adaptive softmax --------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(cutoffs=[4, 10, 15], div_value=2.0, head_bias=True),
                                    dict(cutoffs=[8])])
def test_adaptive_log_softmax(kwargs):
    """Same parameters from the same seed; the per-row target log-probabilities, the loss,
    log_prob and predict, and all gradients, batched and unbatched."""
    layers = {}
    for lib in (ember, torch):
        lib.manual_seed(0)
        layers[lib] = lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, **kwargs)
    assert repr(layers[ember]) == repr(layers[torch])
    target = np.array([0, 3, 9, 15, 19, 2, 12, 8])

    def fn(lib, x):
        layer = layers[lib]
        out, loss = layer(x, lib.tensor(target))
        single = layer(x[0], lib.tensor(target[0]))
        return out, loss, single.output, layer.log_prob(x), layer.predict(x)
    check(fn, np.random.default_rng(0).standard_normal((8, 16)).astype("float32"), atol=1e-5,
          rtol=1e-4)
    for name, tp in layers[torch].named_parameters():
        assert_same(layers[ember].get_parameter(name), tp, path=name)
        assert_same(layers[ember].get_parameter(name).grad, tp.grad, atol=1e-5, rtol=1e-4,
                    path=f"{name}.grad")


@pytest.mark.parametrize("ctor,x_shape,target", [
    ("[]", None, None), ("[4, 2]", None, None), ("[4, 20]", None, None),
    ("[4, 10]", (3, 16), [0, 5, 20]), ("[4, 10]", (3, 16), [[0], [1], [2]]),
    ("[4, 10]", (3, 16), [0, 1]), ("[4, 10]", (16,), [1, 2, 3])])
def test_adaptive_log_softmax_errors(ctor, x_shape, target):
    def fn(lib):
        layer = eval(f"lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, {ctor})", {"lib": lib})
        if x_shape is not None:
            layer(lib.zeros(x_shape), lib.tensor(target))
    check_raises(fn)
