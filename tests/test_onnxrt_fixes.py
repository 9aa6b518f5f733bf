"""ember.onnx.export against PyTorch's TorchScript exporter tests (test_pytorch_onnx_onnxruntime):
each model is exported by ember, run in ONNX Runtime, and compared with ember's eager result
and with torch's eager result on the same inputs (values and dtypes); where the graph's inputs
are the point, their count is compared with torch.onnx.export(..., dynamo=False)'s."""
import io
import math
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")
onnx = pytest.importorskip("onnx", reason="ember.onnx needs the onnx extra")
ort = pytest.importorskip("onnxruntime", reason="ember.onnx needs the onnx extra")


def _module(lib, fn):
    class Model(lib.nn.Module):
        def forward(self, *args):
            return fn(lib, *args)
    return Model()


def _as(lib, a):
    if isinstance(a, np.ndarray):
        return lib.tensor(a)
    if isinstance(a, tuple):
        return tuple(_as(lib, x) for x in a)
    return a


def _flat(out):
    """Outputs as torch.jit._flatten gives them: numbers as 0-dim arrays."""
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    if isinstance(out, dict):
        return [x for o in out.values() for x in _flat(o)]
    if isinstance(out, (bool, int, float)):
        return _feeds((out,))
    return [out.detach().numpy()]


def _feeds(args):
    """The ONNX inputs for args, as torch.jit._flatten makes them (numbers as 0-dim arrays)."""
    flat = []
    for a in args:
        if isinstance(a, tuple):
            flat += _feeds(a)
        elif isinstance(a, bool):
            flat.append(np.asarray(a))
        elif isinstance(a, int):
            flat.append(np.asarray(a, np.int64))
        elif isinstance(a, float):
            flat.append(np.asarray(a, np.float64))
        elif a is not None:
            flat.append(a)
    return flat


def _export(model, args, lib=ember, opset=17, **kwargs):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.onnx.export(model, args, f, opset_version=opset, dynamo=False, **kwargs)
    return f.getvalue()


def _check(fn, *args, opset=17, rtol=1e-5, atol=1e-6, state=None):
    """Export fn's ember model on args (NumPy arrays, numbers, tuples of them); ONNX Runtime's
    outputs must match ember's and torch's eager outputs in value and dtype."""
    em, tm = _module(ember, fn), _module(torch, fn)
    if state is not None:
        state(em, tm)
    em.eval(), tm.eval()
    e_args, t_args = _as(ember, args), _as(torch, args)
    session = ort.InferenceSession(_export(em, e_args, opset=opset),
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    feeds = _feeds(args)
    assert len(names) == len(feeds), (names, len(feeds))
    got = session.run(None, dict(zip(names, feeds)))
    with ember.no_grad():
        expected_ember = _flat(em(*_as(ember, args)))
    with torch.no_grad():
        expected_torch = _flat(tm(*t_args))
    assert len(got) == len(expected_ember) == len(expected_torch)
    for g, e, t in zip(got, expected_ember, expected_torch):
        assert g.dtype == e.dtype == t.dtype, (g.dtype, e.dtype, t.dtype)
        assert g.shape == e.shape == t.shape, (g.shape, e.shape, t.shape)
        tol = dict(rtol=1e-3, atol=1e-3) if g.dtype == np.float16 else dict(rtol=rtol, atol=atol)
        np.testing.assert_allclose(g, e, equal_nan=True, **tol)
        np.testing.assert_allclose(g, t, equal_nan=True, **tol)


rng = np.random.default_rng(0)
X = rng.standard_normal((4, 2, 3)).astype(np.float32)
INTS = rng.integers(0, 10, (4, 4))
SPECIAL = np.array([[1, 2, np.inf], [2, np.nan, -np.inf]], np.float32)


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("name,fn,args", [
    ("fmod", lambda t, x, y: t.fmod(x, y), (X, rng.standard_normal((1, 2, 1)).astype(np.float32))),
    ("fmod_int_scalar", lambda t, x: t.fmod(x, 2.55), (INTS,)),
    ("addcmul", lambda t, x, a, b: (t.addcmul(x, a, b), t.addcmul(x, a, b, value=2.2)),
     (X[0, :1], X[:3, 0, :1], X[0, :1])),
    ("logit_eps", lambda t, x: x.logit(1e-6), (np.clip(X, 0.01, 0.99),)),
    ("glu", lambda t, x: t.nn.functional.glu(x, 1), (rng.standard_normal((2, 4, 3)).astype(np.float32),)),
    ("triu_tril", lambda t, x: (t.triu(x), t.tril(x, 1), t.triu(x, -1)), (X,)),
    ("one_hot", lambda t, x: t.nn.functional.one_hot(x, 15), (np.arange(10),)),
    ("bucketize", lambda t, x, b: (t.bucketize(x, b), t.bucketize(x, b, right=True),
                                   t.bucketize(x, b, out_int32=True)),
     (np.array([[2, 5, 10], [6, 8, 3]]), np.array([1, 5, 7, 8, 10]))),
    ("unfold", lambda t, x: x.unfold(2, 2, 1), (X,)),
    ("unfold_dim0", lambda t, x: x.unfold(0, 3, 2), (X,)),
    ("unique", lambda t, x: t.unique(x, sorted=True, return_inverse=True, return_counts=True),
     (np.array([[1, 3], [2, 3]]),)),
    ("unique_dim", lambda t, x: t.unique(x, dim=0, return_inverse=True, return_counts=True),
     (np.array([[1, 3], [2, 3], [1, 3]]),)),
    ("mv_dot", lambda t, m, v: (t.mv(m, v), t.dot(v, v)), (X[:, 0], X[0, 0])),
    ("prod_int", lambda t, x: (x.prod(-1), x.prod()), (INTS.astype(np.int32),)),
    ("sum_uint8", lambda t, x: x.sum(-1), (INTS.astype(np.uint8),)),
    ("sum_dtype", lambda t, x: (x.sum(dtype=t.float32), x.sum(-1, dtype=t.float32)),
     (X.astype(np.float16),)),
    ("mean_dtype", lambda t, x: x.mean(-1, dtype=t.float64), (X,)),
    ("min_max", lambda t, x: (t.min(x, dim=-1)[0], t.max(x, dim=0)[1], x.max(), x.min(),
                              t.min(x, x * 2), x.amin(1)), (X,)),
    ("vector_norm", lambda t, x: (t.norm(x, p=1, dim=-1), t.norm(x, p=2, dim=-2),
                                  t.norm(x, p="fro", dim=(0, 1), keepdim=True),
                                  t.linalg.vector_norm(x, 3, dim=0),
                                  t.linalg.vector_norm(x, math.inf),
                                  t.linalg.vector_norm(x, 0, dim=1)), (X,)),
    ("mask_uint8", lambda t, x: x[t.tensor([0, 1, 0, 1], dtype=t.uint8)], (X,)),
    ("mask_bool_nd", lambda t, x: x[x > 0], (X,)),
    ("mask_after_dim", lambda t, x: x[:, t.tensor([True, False])], (X,)),
    ("where_two_numbers", lambda t, c: t.where(c, 0, 1.0), (np.array([True, False]),)),
    ("remainder_promotes", lambda t, x, y: (t.remainder(x, y), t.remainder(y, x)),
     (X[0, 0], np.array([2, 3, 5]))),
    ("float16_times_size", lambda t, x: x * x.size()[-1] ** -0.5, (X.astype(np.float16),)),
    ("celu_selu_elu64", lambda t, x: (t.nn.functional.celu(x, 2.0), t.nn.functional.selu(x),
                                      t.nn.functional.elu(x.double())), (X,)),
    ("isnan_isinf_isfinite", lambda t, x, h, i: (x.isnan(), x.isinf(), x.isfinite(), h.isinf(),
                                                 h.isfinite(), i.isnan(), i.isfinite()),
     (SPECIAL, SPECIAL.astype(np.float16), INTS)),
    ("nan_to_num", lambda t, x, h, i: (x.nan_to_num(), h.nan_to_num(), i.nan_to_num(),
                                       x.nan_to_num(nan=2.3, posinf=4.5, neginf=6.7)),
     (SPECIAL, SPECIAL.astype(np.float16), INTS)),
    ("nonzero_and_where", lambda t, x: (t.nonzero(x > 0), t.stack(t.where(x > 0.5), dim=1),
                                        t.nonzero(x[0, 0] > 0, as_tuple=True)), (X,)),
    ("compare_bools", lambda t, a, b: (a > b, a <= b, a > 0.5), (X > 0, X < 0.5)),
    ("where_uint8", lambda t, c, x: t.where(c, x, 1.0), ((X > 0).astype(np.uint8), X)),
    ("unbind", lambda t, x: (x.unbind(1), x.unbind(-1)[2], x[:1].unbind()), (X,)),
    ("logs", lambda t, x: (t.log2(x), t.log10(x), t.log1p(x)), (np.abs(X) + 0.1,)),
    ("round", lambda t, x, i: (t.round(x), t.round(x * 100, decimals=-2), t.round(x, decimals=3),
                               t.round(i)),
     (np.array([0.992, -1234.0362, -1.5896, 3.5, 2.5], np.float32), INTS.astype(np.int32))),
    ("mul_bool", lambda t, a, b, x: (a * b, a * x, x * b), (X > 0, X < 0.5, X)),
    ("shifts", lambda t, i, u: (i >> 1, i << 3, i >> t.tensor([1, 2, 3, 0]), u >> 2, u << 1),
     (np.arange(-8, 8).reshape(4, 4), np.arange(16, dtype=np.uint8).reshape(4, 4))),
    ("index_copy_fill", lambda t, x, s: (x.index_copy(1, t.tensor([1, 0]), s),
                                         x.index_fill(2, t.tensor([2, 0]), -1.5),
                                         t.index_select(x, 1, t.tensor(1))),
     (X, rng.standard_normal((4, 2, 3)).astype(np.float32))),
    ("var_std_mean", lambda t, x: (t.var_mean(x, dim=(0, 2)), t.std_mean(x, correction=0),
                                   t.var_mean(x, dim=1, keepdim=True)), (X,)),
])
def test_symbolics(name, fn, args, opset):
    _check(fn, *args, opset=opset)


def test_lstm_cell_and_gru_cell():
    def cells(lib):
        lib.manual_seed(0)
        return lib.nn.LSTMCell(5, 3), lib.nn.GRUCell(5, 3)

    def fn(t, x, h, c):
        lstm, gru = (cells.made[t.__name__])
        return lstm(x, (h, c)), gru(x, h), lstm(x)

    t_cells = cells(torch)
    e_cells = cells(ember)
    for e_cell, t_cell in zip(e_cells, t_cells):
        e_cell.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_cell.state_dict().items()})
    cells.made = {"torch": t_cells, "ember": e_cells}
    x, h, c = (rng.standard_normal(s).astype(np.float32) for s in ((2, 5), (2, 3), (2, 3)))
    _check(fn, x, h, c, atol=1e-5)


def _graph_inputs(lib, model, args, **kwargs):
    proto = onnx.load_from_string(_export(model, args, lib=lib, **kwargs))
    return [(i.name, i.type.tensor_type.elem_type) for i in proto.graph.input]


class _Optional:
    @staticmethod
    def make(lib):
        class Model(lib.nn.Module):
            def forward(self, x, y=None, z=None):
                if y is not None:
                    return x + y
                if z is not None:
                    return x * z
                return x
        return Model()


@pytest.mark.parametrize("call", ["positional_none", "kwargs_y", "kwargs_z", "kwargs_none"])
def test_trailing_dict_fills_parameters_by_name(call):
    """A trailing dict is forward's keyword inputs (tensors too); inputs the trace does not read
    are dropped; the graph's inputs are torch's."""
    x, y = X[0], X[1]
    cases = {"positional_none": lambda a, b: (a, None, b),
             "kwargs_y": lambda a, b: (a, {"y": b}),
             "kwargs_z": lambda a, b: (a, {"z": b, "y": None}),
             "kwargs_none": lambda a, b: (a, {})}
    e_args = cases[call](ember.tensor(x), ember.tensor(y))
    t_args = cases[call](torch.tensor(x), torch.tensor(y))
    em, tm = _Optional.make(ember), _Optional.make(torch)
    e_in, t_in = _graph_inputs(ember, em, e_args), _graph_inputs(torch, tm, t_args)
    assert [t for _, t in e_in] == [t for _, t in t_in]
    session = ort.InferenceSession(_export(em, e_args), providers=["CPUExecutionProvider"])
    feeds = [x] + ([y] if len(e_in) == 2 else [])
    got = session.run(None, {i.name: a for i, a in zip(session.get_inputs(), feeds)})[0]
    t_kwargs = t_args[-1] if isinstance(t_args[-1], dict) else {}
    t_pos = t_args[:-1] if isinstance(t_args[-1], dict) else t_args
    np.testing.assert_allclose(got, tm(*t_pos, **t_kwargs).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,make,args", [
    ("int_input", lambda t: (lambda t_, n, y: n + y), (3, INTS)),
    ("float_input", lambda t: (lambda t_, a, y: a + y), (3.0, X)),
    ("tuple_with_int", lambda t: (lambda t_, a, y: (a[0], a[1] + y)), ((3, X[0]), X[1])),
    ("unused_input", lambda t: (lambda t_, x, y: x * 2), (X, X)),
    ("read_input", lambda t: (lambda t_, x, n: t_.full_like(x, n + 2)), (INTS, np.array(2))),
    ("read_size", lambda t: (lambda t_, x, n: t_.tril(x, int(n))), (X, np.array(1))),
])
def test_graph_inputs_follow_torch(name, make, args):
    """Python numbers are 0-dim graph inputs (int64, float64) the model runs on; an input no op
    reads is dropped; one whose value the model read into Python stays (torch records the read);
    the results match ember's and torch's."""
    fn = make(None)
    em, tm = _module(ember, fn), _module(torch, fn)
    e_args, t_args = _as(ember, args), _as(torch, args)
    assert _graph_inputs(ember, em, e_args) and \
        [t for _, t in _graph_inputs(ember, em, e_args)] == \
        [t for _, t in _graph_inputs(torch, tm, t_args)]
    session = ort.InferenceSession(_export(em, e_args), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    feeds = _feeds(args)
    if name == "unused_input":
        feeds = feeds[:1]
    got = session.run(None, dict(zip(names, feeds)))
    expected = _flat(tm(*t_args))
    assert [g.dtype for g in got] == [e.dtype for e in expected]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_dict_input_tensor_key_is_an_input():
    def fn(t, d):
        key = list(d.keys())[0]
        return {"out": t.add(d[key], key)}
    key_e, key_t = ember.tensor(1.5), torch.tensor(1.5)
    val = X[0]
    em, tm = _module(ember, fn), _module(torch, fn)
    e_in = _graph_inputs(ember, em, ({key_e: ember.tensor(val)}, {}))
    t_in = _graph_inputs(torch, tm, ({key_t: torch.tensor(val)}, {}))
    assert len(e_in) == len(t_in) == 2


def test_verification_verify_as_torch():
    """torch.onnx's TorchScript verification: a model whose unused input was dropped refuses the
    extra input with ValueError; a mismatch raises AssertionError; a match passes."""
    from ember.onnx._internal.torchscript_exporter import verification as ev
    from torch.onnx._internal.torchscript_exporter import verification as tv

    for lib, v in ((ember, ev), (torch, tv)):
        x, y = lib.tensor(X), lib.tensor(X)
        v.verify(_module(lib, lambda t, a: a.sin()), (x,), opset_version=17)
        with pytest.raises(ValueError, match="got too many positional inputs"):
            v.verify(_module(lib, lambda t, a, b: a * 2), (x, y), opset_version=17)

        class Drifts(lib.nn.Module):
            def forward(self, a):
                return a + 1 if lib.onnx.is_in_onnx_export() else a
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(AssertionError):
                v.verify(Drifts(), (x,), opset_version=17)


def test_jit_scalar_type_as_torch():
    from ember.onnx._internal.torchscript_exporter._type_utils import JitScalarType as E
    from torch.onnx._internal.torchscript_exporter._type_utils import JitScalarType as T
    assert [(e.name, int(e)) for e in E] == [(t.name, int(t)) for t in T]
    for e, t in zip(E, T):
        assert e.scalar_name() == t.scalar_name()
        assert int(e.onnx_type()) == int(t.onnx_type())
        if t != T.UNDEFINED:
            assert e.torch_name() == t.torch_name()
            assert str(e.dtype()).rpartition(".")[2] == str(t.dtype()).rpartition(".")[2]
    assert E.from_dtype(ember.bfloat16) == E.BFLOAT16 and E.from_onnx_type(7) == E.INT64


@pytest.mark.parametrize("opset", [17, 18])
def test_chunk_follows_a_dynamic_axis(opset):
    """chunk's piece size is computed in the graph: other lengths of a dynamic axis give
    torch's pieces (the number of pieces is the example's)."""
    fn = _module(ember, lambda t, x: t.chunk(x, 3, dim=-1))
    session = ort.InferenceSession(
        _export(fn, (ember.randn(2, 18),), opset=opset, input_names=["x"],
                dynamic_axes={"x": {0: "batch", 1: "n"}}),
        providers=["CPUExecutionProvider"])
    for n in (13, 14, 15, 18):
        x = rng.standard_normal((3, n)).astype(np.float32)
        got = session.run(None, {"x": x})
        expected = [c.numpy() for c in torch.chunk(torch.tensor(x), 3, dim=-1)]
        assert [g.shape for g in got] == [e.shape for e in expected]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)


def test_dynamic_axes_whose_grown_trace_fails_keep_the_example_sizes():
    """Split sizes taken from two inputs with dynamic axes: ember's second trace (dims grown by
    one) does not fit together; the export keeps the example's sizes instead of failing."""
    def fn(t, x, y, z):
        return t.split(z, (x.size(1), y.size(1)), dim=1)
    x, y, z = X[0], rng.standard_normal((2, 4)).astype(np.float32), \
        rng.standard_normal((2, 7)).astype(np.float32)
    em = _module(ember, fn)
    data = _export(em, (ember.tensor(x), ember.tensor(y), ember.tensor(z)),
                   input_names=["x", "y", "z"], dynamic_axes={"z": [0, 1]})
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["z"]
    got = session.run(None, {"z": z})
    expected = fn(torch, torch.tensor(x), torch.tensor(y), torch.tensor(z))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e.numpy())


def _writes(t, x, y):
    x[:, 2:] = 0
    z = t.zeros(3, 4)
    z[1] = y[0]
    z[:, 0] += 5
    s = x.t()
    s[1:, :1] = 7.0
    x[0].fill_(y[1, 2])
    return x * 1, z, x[0, 1:3]


def test_in_place_writes_into_views():
    """Slice/select/transposed views written in place (fill, copy, add): the base takes the
    written values, as in eager ember and torch."""
    _check(_writes, rng.random((4, 3)).astype(np.float32),
           rng.random((2, 4)).astype(np.float32))


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("mode,include_last,two_d,weighted", [
    ("sum", False, False, False), ("sum", True, False, False), ("mean", False, False, False),
    ("sum", False, False, True), ("max", False, True, False), ("max", False, False, False),
])
def test_embedding_bag_offsets_from_inputs(mode, include_last, two_d, weighted, opset):
    """Offsets passed as an input (not constant): each row's bag is counted in the graph;
    include_last_offset drops the indices after the last offset; max bags (empty ones 0)."""
    table = rng.standard_normal((10, 5)).astype(np.float32)
    if two_d:
        args = (rng.integers(0, 10, (7, 3)),)
    else:
        args = (rng.integers(0, 10, (8,)), np.array([0, 2, 2, 6]))
    if weighted:
        args += (rng.standard_normal(8).astype(np.float32),)
    if mode == "max" and not two_d and opset < 18:
        pytest.skip("max bags of input offsets need ScatterND's max reduction (opset 18)")

    def fn(t, *a):
        w = t.tensor(table)
        if two_d:
            return t.nn.functional.embedding_bag(a[0], w, mode=mode)
        return t.nn.functional.embedding_bag(a[0], w, a[1], mode=mode,
                                             include_last_offset=include_last,
                                             per_sample_weights=a[2] if weighted else None)
    _check(fn, *args, opset=opset, atol=1e-5)


def test_input_named_in_dynamic_axes_stays():
    """An input whose sizes alone are read (x.new_zeros(x.size())) stays a graph input when
    dynamic_axes names it, as torch's graph has it; without dynamic axes both drop it."""
    def fn(t, x, y):
        return y + x.new_zeros(x.size())
    x, y = X[0], X[1]
    for kwargs, names in (({"input_names": ["x", "y"], "dynamic_axes": {"x": [0]}}, ["x", "y"]),
                          ({}, ["y"])):
        em, tm = _module(ember, fn), _module(torch, fn)
        e_in = [n for n, _ in _graph_inputs(ember, em, (ember.tensor(x), ember.tensor(y)),
                                            **kwargs)]
        t_in = [n for n, _ in _graph_inputs(torch, tm, (torch.tensor(x), torch.tensor(y)),
                                            **kwargs)]
        assert len(e_in) == len(t_in) == len(names)



def test_new_factories_and_zero_export():
    """x.new_zeros / new_ones / new_full / new_empty (ops a dispatch mode sees) and zero_
    export as constants of the traced size and dtype."""
    x, y = X[0], X[1]
    _check(lambda t, a, b: a * b + a.new_zeros(a.size()) + a.new_ones((2, 3), dtype=t.float64) +
           a.new_full(a.shape, 2.5) + a.new_empty(a.shape).zero_(), x, y)


@pytest.mark.parametrize("opset", [17, 18])
def test_stft_real_output_and_complex_refusals(opset):
    """stft (through ONNX DFT) with real output matches; a complex output, or an op other than
    a permutation on a complex tensor, is refused with SymbolicValueError, naming it."""
    x = rng.standard_normal((1, 32)).astype(np.float32)
    _check(lambda t, a: t.view_as_real(t.stft(a, n_fft=16, hop_length=4, center=False,
                                              window=t.hann_window(16), return_complex=True)),
           x, opset=opset, atol=1e-5)
    _check(lambda t, a: t.stft(a, n_fft=16, center=False, normalized=True,
                               return_complex=False), x, opset=opset, atol=1e-5)
    for fn in (lambda t, a: t.stft(a, n_fft=16, center=False, return_complex=True),
               lambda t, a: t.stft(a, n_fft=16, center=False, return_complex=True).abs()):
        with pytest.raises(ember.onnx.errors.SymbolicValueError, match="complex"):
            _export(_module(ember, fn), (ember.tensor(x),), opset=opset)



def test_multinomial_samples_in_the_graph():
    """multinomial is drawn by ONNX Multinomial (weights with one nonzero entry per row make
    the draw certain, so ember, torch and ONNX Runtime agree); without replacement, more than
    one sample is refused with SymbolicValueError."""
    w = np.array([[0, 10, 0, 0], [0, 0, 100, 0]], np.float32)
    _check(lambda t, a: (t.multinomial(a, 3, replacement=True), t.multinomial(a, 1),
                         t.multinomial(a[0], 2, replacement=True)), w)
    with pytest.raises(ember.onnx.errors.SymbolicValueError, match="without replacement"):
        _export(_module(ember, lambda t, a: t.multinomial(a, 2)), (ember.tensor(w),))


def _declared_output_dims(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3, padding=1), lib.nn.ReLU(), lib.nn.Flatten(),
                            lib.nn.Linear(2 * 4 * 4, 3)).eval()
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.onnx.export(net, (lib.randn(2, 1, 4, 4),), f, input_names=["x"], output_names=["y"],
                        dynamic_axes={"x": {0: "b"}}, dynamo=False)
    proto = onnx.load_from_string(f.getvalue())
    dims = proto.graph.output[0].type.tensor_type.shape.dim
    return [("sym" if d.dim_param else d.dim_value) for d in dims], f.getvalue()


def test_output_dims_follow_dynamic_input_axes():
    """An output dim that follows a dynamic input axis is declared symbolic (not the example's
    size), as PyTorch's export declares it, so a batch of another size runs cleanly."""
    ours, data = _declared_output_dims(ember)
    theirs, _ = _declared_output_dims(torch)
    assert ours == theirs == ["sym", 3]
    sess = ort.InferenceSession(data)
    assert sess.run(None, {"x": np.zeros((5, 1, 4, 4), np.float32)})[0].shape == (5, 3)
