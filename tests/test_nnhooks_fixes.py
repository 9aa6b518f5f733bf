"""Module hooks and parametrizations against PyTorch (from PyTorch's test/nn/test_module_hooks.py
and test/nn/test_parametrization.py): Parameter of a wrapper subclass keeps its type and is
flagged a parameter; parametrize keeps a wrapper subclass's `original` by swapping contents."""
import importlib

import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = [torch, ember]
IDS = ["torch", "ember"]


def _two_tensor(lib):
    return importlib.import_module(lib.__name__ + ".testing._internal.two_tensor").TwoTensor


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_parameter_of_wrapper_subclass_keeps_type(lib):
    TwoTensor = _two_tensor(lib)
    x = lib.randn(2, 2)
    p = lib.nn.Parameter(TwoTensor(x, x.clone()))
    assert type(p) is TwoTensor
    assert isinstance(p, lib.nn.Parameter) and p._is_param
    assert p.requires_grad and p.is_leaf
    assert not isinstance(TwoTensor(x, x), lib.nn.Parameter)
    assert type(lib.nn.Parameter(x)) is lib.nn.Parameter
    q = lib.nn.Parameter(TwoTensor(x, x), requires_grad=False)
    assert isinstance(q, lib.nn.Parameter) and not q.requires_grad
    # a nested tensor is a plain tensor in PyTorch: it becomes a Parameter instance
    nt = lib.nested.nested_tensor([lib.randn(2, 3), lib.randn(1, 3)])
    assert type(lib.nn.Parameter(nt)) is lib.nn.Parameter


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_swap_apply_makes_wrapper_subclass_parameters(lib):
    TwoTensor = _two_tensor(lib)
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        m = lib.nn.Linear(2, 2)
        w = m.weight
        m._apply(lambda t: TwoTensor(t, t))
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    assert m.weight is w and type(w) is TwoTensor and isinstance(w, lib.nn.Parameter)
    assert "weight" in m._parameters and type(w.a) is lib.Tensor


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
@pytest.mark.parametrize("leave", [False, True])
def test_parametrize_right_inverse_to_wrapper_subclass(lib, leave):
    TwoTensor = _two_tensor(lib)
    parametrize = lib.nn.utils.parametrize

    class IdentityWithRightInverse(lib.nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return TwoTensor(X, X)

    m = lib.nn.Linear(2, 2)
    m.buf = lib.nn.Buffer(lib.randn(2, 2))
    wid, bid = id(m.weight), id(m.buf)
    w0 = m.weight.detach().clone()
    lib.__future__.set_swap_module_params_on_conversion(True)
    try:
        parametrize.register_parametrization(m, "weight", IdentityWithRightInverse())
        parametrize.register_parametrization(m, "buf", IdentityWithRightInverse())
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    # `original` is the same object, its contents swapped for the TwoTensor
    assert id(m.parametrizations.weight.original) == wid
    assert type(m.parametrizations.weight.original) is TwoTensor
    assert isinstance(m.parametrizations.weight.original, lib.nn.Parameter)
    assert type(m.parametrizations.buf.original) is TwoTensor
    assert not isinstance(m.parametrizations.buf.original, lib.nn.Parameter)
    assert type(m.weight) is TwoTensor
    assert lib.equal(m.weight.a, w0)
    # a wrapper-subclass `original` is swapped even without the flag (set_ could not do it)
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    parametrize.remove_parametrizations(m, "buf", leave_parametrized=leave)
    assert id(m.weight) == wid and id(m.buf) == bid
    assert type(m.weight) is TwoTensor and isinstance(m.weight, lib.nn.Parameter)
    assert type(m.buf) is TwoTensor and "buf" in m._buffers


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_full_backward_hook_view_of_base_modified_inplace(lib):
    # a module with a full backward hook returns its inputs as views made by
    # BackwardHookFunction; once their base is written in place, using them is refused
    class Keep(lib.nn.Module):
        def forward(self, inp):
            self.inp = inp
            return inp.clone()

    mod = Keep()
    mod.register_full_backward_hook(lambda m, gi, go: None)
    x = lib.rand(4, requires_grad=True).clone()
    mod(x).sum().backward()     # untouched: fine
    x = lib.rand(4, requires_grad=True).clone()
    mod(x)
    x[0] *= 1
    with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view and its "
                                           "base or another view of its base has been modified "
                                           "inplace. This view was created inside a custom"):
        mod.inp + 2


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_custom_function_view_output_after_base_write(lib):
    class Views(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x), x[1:]

        @staticmethod
        def backward(ctx, g, g2):
            return g * 2

    a = lib.rand(4, requires_grad=True)
    v, w = Views.apply(a.clone())
    (v.sum() + w.sum()).backward()   # unmodified views back-propagate through the Function
    assert a.grad.tolist() == [2.0] * 4
    b = a.clone()
    v, w = Views.apply(b)
    b.add_(1)
    for use in (lambda: v * 1, lambda: w.sum()):
        with pytest.raises(RuntimeError, match=r"Output \d of Views is a view and its base"):
            use()


# ---- ao.quantization observers, QConfig and ao.nn.qat.Linear (test_parametrization.py moves
# parametrizations onto a qat.Linear) ---------------------------------------------------------
def _qparams(obs):
    s, z = obs.calculate_qparams()
    return s.tolist(), z.tolist(), str(s.dtype), str(z.dtype)


def _observe(lib, obs):
    lib.manual_seed(0)
    for x in (lib.randn(4, 6) * 3, lib.randn(4, 6) + 5, lib.rand(4, 6) - 2):
        obs(x)
    return obs


@pytest.mark.parametrize("case", [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"qscheme": "per_tensor_symmetric", "quant_min": 0, "quant_max": 15}),
    ("MinMaxObserver", {"dtype": "qint32"}),
    ("PerChannelMinMaxObserver", {"ch_axis": 1}),
    ("PerChannelMinMaxObserver", {"dtype": "qint8", "qscheme": "per_channel_symmetric"}),
    ("PerChannelMinMaxObserver", {"qscheme": "per_channel_affine_float_qparams"}),
    ("HistogramObserver", {}),
    ("HistogramObserver", {"bins": 16}),
    ("HistogramObserver", {"bins": 64, "dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
])
def test_observer_qparams_match_torch(case):
    name, kw = case

    def make(lib):
        args = {k: getattr(lib, v) if isinstance(v, str) else v for k, v in kw.items()}
        return _observe(lib, getattr(lib.ao.quantization.observer, name)(**args))
    t, e = make(torch), make(ember)
    ts, tz, tsd, tzd = _qparams(t)
    es, ez, esd, ezd = _qparams(e)
    assert (esd, ezd) == (tsd, tzd)
    assert ez == tz
    assert es == pytest.approx(ts, rel=1e-6)
    assert e.min_val.tolist() == t.min_val.tolist()
    if name == "HistogramObserver":
        assert e.histogram.tolist() == pytest.approx(t.histogram.tolist(), abs=1e-5)
    assert list(e.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_observer_errors_and_defaults(lib):
    O = lib.ao.quantization.observer
    with pytest.warns(UserWarning, match="must run observer before calling calculate_qparams"):
        s, z = O.PerChannelMinMaxObserver().calculate_qparams()
    assert (s.tolist(), z.tolist()) == ([1.0], [0])
    with pytest.raises(NotImplementedError, match="MinMaxObserver's qscheme only support"):
        O.MinMaxObserver(qscheme=lib.per_channel_affine)
    with pytest.raises(AssertionError, match="range must include 0"):
        O.MinMaxObserver(quant_min=1, quant_max=15)
    with pytest.raises(ValueError, match="QConfig received observer instance"):
        lib.ao.quantization.QConfig(O.MinMaxObserver(), O.MinMaxObserver)
    with pytest.raises(AssertionError, match="backend: arm not supported"):
        lib.ao.quantization.get_default_qconfig("arm")
    b = O.MinMaxObserver.with_args(quant_min=0).with_args(quant_max=31)
    assert (b().quant_min, b().quant_max) == (0, 31) and b() is not b()
    info = lib.iinfo(lib.quint8)
    assert (info.bits, info.min, info.max) == (8, 0, 255)
    assert (lib.iinfo(lib.qint8).min, lib.iinfo(lib.qint32).max) == (-128, 2 ** 31 - 1)
    with pytest.raises(NotImplementedError, match="\"dtype\" not implemented for 'QUInt8'"):
        info.dtype
    assert lib.nn.factory_kwargs({"factory_kwargs": {"dtype": lib.float64}, "device": "cpu"}) \
        == {"dtype": lib.float64, "device": "cpu"}
    with pytest.raises(TypeError, match="dtype specified twice"):
        lib.nn.factory_kwargs({"factory_kwargs": {"dtype": lib.float64}, "dtype": lib.float32})


def _qat_linear(lib):
    import warnings
    qat = lib.ao.nn.qat
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # reduce_range's deprecation, in get_default_qconfig's
        qconfig = lib.ao.quantization.get_default_qconfig()
    lib.manual_seed(1)
    m = qat.Linear(3, 2, qconfig=qconfig)
    x = lib.randn(4, 3)
    y = m(x)
    y.sum().backward()
    assert type(m.weight_fake_quant).__name__ == "PerChannelMinMaxObserver"
    assert list(m.state_dict()) == ["weight", "bias", "weight_fake_quant.eps",
                                    "weight_fake_quant.min_val", "weight_fake_quant.max_val"]
    s, z = m.weight_fake_quant.calculate_qparams()
    with lib.no_grad():
        assert lib.equal(y, lib.nn.functional.linear(x, m.weight, m.bias))
    assert m.weight.grad is not None
    with pytest.raises(AssertionError, match="qconfig must be provided for QAT module"):
        qat.Linear(3, 2)
    f = lib.nn.Linear(3, 2)
    f.qconfig = lib.ao.quantization.default_qconfig
    lib.nn.utils.parametrize.register_parametrization(f, "weight", lib.nn.Identity())
    q = qat.Linear.from_float(f)
    assert lib.nn.utils.parametrize.is_parametrized(q, "weight") and q.bias is f.bias
    return y.detach().reshape(-1).tolist(), s.tolist(), z.tolist()


def test_qat_linear_matches_torch():
    t, e = _qat_linear(torch), _qat_linear(ember)
    assert e[0] == pytest.approx(t[0], rel=1e-5, abs=1e-6) and e[2] == t[2]
    assert e[1] == pytest.approx(t[1], rel=1e-6)
