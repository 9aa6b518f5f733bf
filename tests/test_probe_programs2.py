"""Differences found by running new tutorial-style programs (custom Functions, module hooks,
saved-tensor hooks, torch.func per-sample gradients, "Learn the Basics") under ember, each
written once for both libraries and compared with torch."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(ember), fn(torch)


# ---- in-place on an output a custom Function returned as a view -----------------------------

def _inplace_after_backward_hook(lib):
    def hook(module, grad_input, grad_output):
        pass

    class InplaceRelu(lib.nn.Module):
        def forward(self, x):
            return x.relu_()
    m = InplaceRelu()
    m.register_full_backward_hook(hook)
    with pytest.raises(RuntimeError) as info:
        m(lib.randn(3, requires_grad=True).clone())
    return str(info.value)


def test_inplace_on_full_backward_hook_input_is_refused():
    # the hook's identity Function returns its input as-is: a view that may not be written
    ours, theirs = _both(_inplace_after_backward_hook)
    assert ours == theirs


def _inplace_on_returned_input(lib):
    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    y = Identity.apply(lib.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as info:
        y.mul_(3)
    return str(info.value)


def test_inplace_on_input_returned_as_is_by_custom_function():
    ours, theirs = _both(_inplace_on_returned_input)
    assert ours == theirs


def test_custom_function_node_prints_with_its_module():
    def repr_of(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        node = Double.apply(lib.ones(1, requires_grad=True)).grad_fn
        return repr(node).split(" object at ")[0], type(node).__module__
    (ours, our_module), (theirs, their_module) = _both(repr_of)
    assert our_module == "ember.autograd.function"
    assert ours.replace("ember.", "torch.", 1) == theirs


# ---- scatter / gather with a 0-dim index on a 1-dim tensor ----------------------------------

def _zero_dim_index(lib):
    out = [lib.zeros(5).scatter_(0, lib.tensor(3), value=1),
           lib.zeros(5).scatter(0, lib.tensor(2), lib.tensor(5.)),
           lib.zeros(4).scatter_(0, lib.tensor(1), lib.tensor([5., 6.])),
           lib.zeros(5).scatter_add(0, lib.tensor(3), lib.tensor(4.)),
           lib.zeros(5).scatter_reduce(0, lib.tensor(3), lib.tensor(4.), "amax"),
           lib.arange(5.).gather(0, lib.tensor(3))]
    x = lib.arange(4., requires_grad=True)
    y = x.gather(0, lib.tensor(2)) + x.scatter(0, lib.tensor(1), lib.tensor(7.)).sum()
    y.backward()
    return [(t.tolist(), tuple(t.shape)) for t in out + [y.detach(), x.grad]]


def test_scatter_and_gather_with_zero_dim_index():
    # Learn the Basics' one-hot target_transform: zeros(10).scatter_(0, tensor(y), value=1)
    ours, theirs = _both(_zero_dim_index)
    assert ours == theirs


# ---- vmap of nll_loss (per-sample gradients) ------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("one_sample", [False, True])
def test_vmap_nll_loss_has_a_batching_rule(reduction, weighted, one_sample):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4, 3, 5)).astype(np.float32)
    target = np.array([[0, 4, -100], [1, 1, 2], [3, -100, -100], [2, 0, 4]])
    weight = rng.random(5).astype(np.float32)
    if one_sample:
        logits, target = logits[:, 0], target[:, 0]

    def run(lib):
        w = lib.tensor(weight) if weighted else None

        def loss(x, t):
            return lib.nn.functional.nll_loss(x.log_softmax(-1), t, weight=w,
                                              reduction=reduction).sum()
        x, t = lib.tensor(logits), lib.tensor(target)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "performance drop" fallback
            values = lib.func.vmap(loss)(x, t)
            grads = lib.func.vmap(lib.func.grad(loss))(x, t)
        return values.numpy(), grads.numpy()
    (ours_v, ours_g), (theirs_v, theirs_g) = _both(run)
    np.testing.assert_allclose(ours_v, theirs_v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours_g, theirs_g, rtol=1e-5, atol=1e-6)


# ---- saved-tensor hooks ---------------------------------------------------------------------

def _hook_trace(lib):
    seen = []

    def pack(t):
        seen.append(("pack", repr(t)))
        return t

    def unpack(t):
        seen.append(("unpack", repr(t)))
        return t
    a = lib.ones(3, requires_grad=True)
    b = lib.ones(3, requires_grad=True) * 2
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * b
        z = a.exp()
        w = a.mul(lib.tensor(3.))
        q = a[lib.tensor([0, 1])]
    (y.sum() + z.sum() + w.sum() + q.sum()).backward()
    return seen, a.grad.tolist()


def test_saved_tensors_hooks_see_what_is_saved():
    ours, theirs = _both(_hook_trace)
    assert ours == theirs


def _hooked_graphs(lib):
    lib.manual_seed(0)
    out = []
    storage = []

    def pack(t):
        storage.append(t)
        return len(storage) - 1
    x = lib.randn(4, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, storage.__getitem__):
        y = x.sin().cos() * x
    y.sum().backward()
    out.append((len(storage), np.round(x.grad.numpy(), 5).tolist()))
    # packed as a detached copy, unpacked into the graph again: double backward works
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = (x ** 3).sum()
    g, = lib.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    out.append((g.tolist(), g.requires_grad, x.grad.tolist()))
    # no version check through hooks: the clone is what backward reads
    a = lib.ones(3, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        b = a * 1
        y = b.pow(2)
    b.add_(1)
    y.sum().backward()
    out.append(a.grad.tolist())
    # a custom Function's saved tensors and save_on_cpu
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            r = i.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            r, = ctx.saved_tensors
            return g * r
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh())
    x = lib.randn(2, 4, requires_grad=True)
    with lib.autograd.graph.save_on_cpu():
        loss = Exp.apply(model(x)).sum()
    loss.backward()
    out.append(np.round(x.grad.numpy(), 5).tolist())
    return out


def test_saved_tensors_hooks_graphs_match_torch():
    ours, theirs = _both(_hooked_graphs)
    assert ours == theirs


def _hook_errors(lib):
    errors = []
    a = lib.ones(3, requires_grad=True)

    def catch(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 (the type is compared)
            errors.append((type(e).__name__, str(e)))
    with lib.autograd.graph.saved_tensors_hooks(lambda t: 5, lambda p: p):
        y = a.pow(2)
    catch(lambda: y.sum().backward())

    def modifies(t):
        t.add_(1)
        return t
    with lib.autograd.graph.saved_tensors_hooks(modifies, lambda p: p):
        catch(lambda: (a * 1).pow(2))
    with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        catch(lambda: lib.autograd.graph.save_on_cpu().__enter__())
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
        def enter_disabled():
            with lib.autograd.graph.disable_saved_tensors_hooks("hooks are on"):
                pass
        catch(enter_disabled)
    y = a.pow(2)
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t * 10, lambda t: t / 10)
    catch(lambda: raw.register_hooks(lambda t: t, lambda t: t))
    y.sum().backward()
    catch(lambda: raw.register_hooks(lambda t: t, lambda t: t))
    catch(lambda: y.grad_fn._raw_saved_result)
    return errors, a.grad.tolist()


def test_saved_tensors_hooks_errors_match_torch():
    ours, theirs = _both(_hook_errors)
    assert ours == theirs


# ---- dtype mismatches: the exception and message of PyTorch's CPU kernels --------------------

def _dtype_mismatch_cases(lib):
    o, L, D, H = lib.ones, lib.int64, lib.float64, lib.float16
    nnf = lib.nn.functional
    return [
        lambda: lib.mm(o(2, 2, dtype=L), o(2, 2)),
        lambda: lib.mm(o(2, 2), o(2, 2, dtype=H)),
        lambda: lib.bmm(o(1, 2, 2, dtype=L), o(1, 2, 2)),
        lambda: lib.matmul(o(2, 2, dtype=D), o(2, 2)),
        lambda: lib.matmul(o(2, 2), o(2, dtype=D)),
        lambda: lib.matmul(o(2, dtype=D), o(2, 2)),
        lambda: lib.matmul(o(3, 2, 2, dtype=D), o(2)),
        lambda: lib.matmul(o(3, 2, 2), o(2, 2, dtype=D)),
        lambda: lib.matmul(o(2, 2, dtype=D), o(3, 2, 2)),
        lambda: lib.matmul(o(2, dtype=D), o(2)),
        lambda: o(2, dtype=L) @ o(2),
        lambda: lib.mv(o(2, 2, dtype=L), o(2)),
        lambda: lib.addmv(o(2, dtype=D), o(2, 2), o(2)),
        lambda: lib.addmm(o(2, 2), o(2, 2, dtype=L), o(2, 2)),
        lambda: lib.addmm(o(2, 2, dtype=D), o(2, 2), o(2, 2)),
        lambda: lib.addmm(o(2, 2), o(2, 2), o(2, 2, dtype=D)),
        lambda: lib.addbmm(o(2, 2), o(1, 2, 2, dtype=D), o(1, 2, 2)),
        lambda: lib.baddbmm(o(1, 2, 2, dtype=D), o(1, 2, 2), o(1, 2, 2)),
        lambda: lib.tensordot(o(2, 2), o(2, 2, dtype=D), 1),
        lambda: lib.inner(o(2), o(2, dtype=D)),
        lambda: nnf.linear(o(2, 2, dtype=L), o(2, 2)),
        lambda: nnf.linear(o(3, 2, 2, dtype=D), o(2, 2)),
        lambda: nnf.linear(o(2, dtype=D), o(2, 2), o(2)),
        lambda: nnf.linear(o(2, 2), o(2, 2), o(2, dtype=D)),
        lambda: lib.nn.Linear(2, 2)(o(4, 3, 2, dtype=D)),
        lambda: lib.nn.Conv2d(1, 1, 3)(o(1, 1, 4, 4, dtype=D)),
        lambda: lib.nn.Conv2d(1, 1, 3, bias=False)(o(1, 1, 4, 4, dtype=D)),
        lambda: lib.nn.Conv1d(1, 1, 3)(o(1, 1, 4, dtype=L)),
        lambda: lib.nn.ConvTranspose2d(1, 1, 3)(o(1, 1, 4, 4, dtype=D)),
        lambda: nnf.conv2d(o(1, 1, 4, 4), o(1, 1, 3, 3), o(1, dtype=D)),
        lambda: nnf.batch_norm(o(3, 2, dtype=D), o(2), o(2), training=False),
        lambda: nnf.batch_norm(o(3, 2, dtype=D), o(2, dtype=D), o(2, dtype=D), o(2), o(2)),
        lambda: lib.nn.BatchNorm2d(2).double()(o(2, 2, 2, 2)),
        lambda: o(2, dtype=lib.int32).requires_grad_(),
        lambda: setattr(o(2, dtype=lib.int32), "requires_grad", True),
        lambda: lib.nn.Parameter(o(2, dtype=lib.int32)),
        lambda: o(2, dtype=lib.int32, requires_grad=True),
        lambda: lib.tensor([1, 2], requires_grad=True),
        lambda: float(lib.arange(3.)),
        lambda: int(lib.arange(3)),
        lambda: complex(lib.ones(0)),
    ]


def _outcomes(lib):
    out = []
    for case in _dtype_mismatch_cases(lib):
        try:
            r = case()
            out.append(("ok", str(r.dtype)))
        except Exception as e:  # noqa: BLE001 (the type is compared)
            out.append((type(e).__name__, str(e)))
    return out


def test_dtype_mismatch_errors_match_torch():
    ours, theirs = _both(_outcomes)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"case {i}"


def test_mixed_dtype_norms_that_torch_accepts():
    def run(lib):
        o, D = lib.ones, lib.float64
        nnf = lib.nn.functional
        x = lib.arange(12, dtype=D).reshape(2, 2, 3)
        rm, rv = lib.zeros(2), lib.ones(2)
        y = nnf.instance_norm(x, rm, rv)  # float32 running statistics of a float64 input
        z = nnf.batch_norm(o(3, 2, dtype=lib.float16), o(2), o(2), o(2), o(2), training=True)
        return y.dtype, (y.numpy().round(4) + 0.0).tolist(), rm.tolist(), rv.tolist(), z.dtype
    ours, theirs = _both(run)
    assert str(ours) == str(theirs)


# ---- torch.library: opcheck, register_vmap, the older impl(lib, name, key), call errors -------

_ops_made = {}


def _custom_ops(lib):
    """mylib ops defined once per library (op names are global, as in PyTorch)."""
    if lib.__name__ in _ops_made:
        return _ops_made[lib.__name__]
    ns = f"probe2_{lib.__name__}"
    Tensor = lib.Tensor

    def numpy_sin(x: Tensor) -> Tensor:
        return lib.from_numpy(np.sin(x.detach().numpy()))
    sin = lib.library.custom_op(f"{ns}::sin", numpy_sin, mutates_args=())
    sin.register_fake(lambda x: lib.empty_like(x))

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos()
    sin.register_autograd(backward, setup_context=setup)

    def wrong_fake(x: Tensor) -> Tensor:
        return x.clone()
    wrong = lib.library.custom_op(f"{ns}::wrong", wrong_fake, mutates_args=())
    wrong.register_fake(lambda x: x.new_empty(x.shape[0] + 1))

    def sneaky(x: Tensor, y: Tensor) -> Tensor:
        y.add_(1)  # mutates y, which the schema does not declare
        return x.clone()
    sneaky_op = lib.library.custom_op(f"{ns}::sneaky", sneaky, mutates_args=())
    sneaky_op.register_fake(lambda x, y: lib.empty_like(x))
    calls = []

    @lib.library.register_vmap(f"{ns}::sin")
    def sin_vmap(info, in_dims, x):
        calls.append((info.batch_size, in_dims))
        return sin(x), in_dims[0]
    legacy = lib.library.Library(f"{ns}_legacy", "DEF")
    legacy.define("twice(Tensor x) -> Tensor")
    lib.library.impl(legacy, "twice", "CPU")(lambda x: x * 2)
    _ops_made[lib.__name__] = (ns, sin, wrong, sneaky_op, calls, legacy)
    return _ops_made[lib.__name__]


def _library_run(lib):
    ns, sin, wrong, sneaky, calls, _ = _custom_ops(lib)
    del calls[:]
    x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
    seen = [lib.library.opcheck(sin, (x,)),
            str(getattr(lib.ops, ns).sin.default._schema)]
    for op, args in ((wrong, (lib.ones(3),)), (sneaky, (lib.ones(2), lib.ones(2)))):
        report = lib.library.opcheck(op, args, raise_exception=False)
        seen.append({k: v if v == "SUCCESS" else "failed" for k, v in report.items()})
        with pytest.raises(Exception) as info:
            lib.library.opcheck(op, args)
        seen.append(type(info.value).__name__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = lib.vmap(sin)(lib.arange(6.).reshape(2, 3))
    seen += [np.round(y.numpy(), 6).tolist(), list(calls)]
    seen.append(getattr(lib.ops, f"{ns}_legacy").twice(lib.ones(2)).tolist())
    for args, kwargs in (((lib.ones(1), 1), {}), ((), {}), ((lib.ones(1),), {"y": 1})):
        with pytest.raises(RuntimeError) as info:
            sin(*args, **kwargs)
        seen.append(str(info.value))
    return seen


def test_library_opcheck_vmap_rule_and_call_errors_match_torch():
    ours, theirs = _both(_library_run)
    ours = [s.replace("probe2_ember", "probe2_torch") if isinstance(s, str) else s for s in ours]
    assert ours == theirs


# ---- Gamma-family and binomial samples: PyTorch's CPU samplers, draw for draw --------------

def _gamma_family(lib):
    dist = lib.distributions
    out = []
    for dtype in (lib.float32, lib.float64):
        lib.manual_seed(0)
        out.append(lib._standard_gamma(lib.tensor([1., 2., 0.5, 0., 30.], dtype=dtype)))
        lib.randn(1)  # leaves a cached Box-Muller value behind for the next draws
        out.append(lib._standard_gamma(lib.tensor([[0.2, 4.0], [1.5, 1e-3]], dtype=dtype)))
        out.append(lib._sample_dirichlet(lib.tensor([[1., 1., 1.], [0.1, 2., 5.]], dtype=dtype)))
    lib.manual_seed(1)
    out.append(dist.Beta(lib.tensor(2.), lib.tensor(3.)).sample((3,)))
    out.append(dist.Chi2(lib.tensor([3.0])).sample())
    out.append(dist.StudentT(lib.tensor([3.0])).sample())
    out.append(dist.Dirichlet(lib.ones(4)).sample((2,)))
    out.append(dist.Gamma(lib.tensor([1., 2.]), 1.).rsample())
    for dtype in (lib.float32, lib.float64):  # inversion and BTRS, p on both sides of 1/2
        out.append(dist.Binomial(10, lib.tensor([0.3, 0.6], dtype=dtype)).sample())
        out.append(lib.binomial(lib.full((12,), 200., dtype=dtype),
                                lib.linspace(0, 1, 12, dtype=dtype)))
        out.append(lib.randn(2, dtype=dtype))  # the stream goes on where torch's does
    return [(str(t.dtype), t.tolist()) for t in out]


def test_gamma_family_samples_equal_torch():
    ours, theirs = _both(_gamma_family)
    assert ours == theirs


def test_random_from_to_op_equals_torch():
    def run(lib):
        g = lib.Generator().manual_seed(5)
        return [lib.empty(6).random_(2, 9, generator=g).tolist(),
                lib.empty(4, dtype=lib.int64).random_(-3, 3, generator=g).tolist()]
    ours, theirs = _both(run)
    assert ours == theirs


def _message_cases(lib):
    o = lib.ones
    nnf = lib.nn.functional
    return [
        lambda: lib.zeros(2, -1),
        lambda: lib.ones(2, -1),
        lambda: lib.zeros(2).new_zeros(-1),
        lambda: lib.tensor([1, 2]).var(),
        lambda: lib.tensor([1, 2]).std(0),
        lambda: lib.var_mean(lib.tensor([1, 2])),
        lambda: lib.std_mean(lib.tensor([1, 2])),
        lambda: o(2).to("cuda"),
        lambda: o(2, device="cuda"),
        lambda: lib.tensor([1.], device="cuda"),
        lambda: lib.tensor(["a", "b"]),
        lambda: lib.tensor("a"),
        lambda: o(2).masked_fill(lib.tensor([1, 0], dtype=lib.int32), 0),
        lambda: lib.lerp(o(2), o(2), o(2, dtype=lib.float64)),
        lambda: lib.lerp(o(2), o(2, dtype=lib.half), 0.5),
        lambda: lib.cat([]),
        lambda: lib.stack([]),
        lambda: lib.hstack([]),
        lambda: lib.vstack([]),
        lambda: lib.column_stack([]),
        lambda: lib.nn.BatchNorm2d(3)(o(2, 4, 2, 2)),
    ]


def test_error_messages_match_torch():
    def run(lib):
        out = []
        for case in _message_cases(lib):
            try:
                case()
                out.append("ok")
            except Exception as e:  # noqa: BLE001 (the type is compared)
                out.append((type(e).__name__, str(e)))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.nn.functional.kl_div(lib.ones(2).log(), lib.ones(2))
        out.append([str(w.message) for w in seen])
        return out
    ours, theirs = _both(run)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"case {i}"
