"""functorch pieces compared with PyTorch (pytorch test/functorch/test_eager_transforms.py, the
classes after TestGradTransform): `import functorch` under the alias and its deprecated API,
make_functional and ensembles, autograd.Function under vmap and the other transforms, the
transforms refusing saved-tensor hooks, dispatch-key guards, the autograd_function helpers,
make_fx."""
import subprocess
import sys

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:   # the exception type and message are what is compared
        return ("raise", type(e).__name__, str(e))


def _np(t):
    return np.asarray(t.detach().numpy())


def _same_weights(e_mod, t_mod):
    """Copy t_mod's parameters and buffers into e_mod (same architecture)."""
    t_state = dict(t_mod.state_dict())
    e_mod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_state.items()})


# ---- import functorch under the alias ------------------------------------------------------
def test_import_functorch_under_ember_alias():
    code = (
        "import warnings, functorch, functorch.experimental\n"
        "import torch\n"
        "assert type(torch.randn(1)).__module__.startswith('ember'), type(torch.randn(1))\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    g = functorch.grad(torch.sin)\n"
        "    functorch.vmap(torch.sin)\n"
        "print([(x.category.__name__, 'Please use `torch.func.grad`' in str(x.message)) "
        "for x in w][0], [('Please use `torch.vmap`' in str(x.message)) for x in w][1])\n"
        "print(round(float(g(torch.tensor(0.5))), 6))\n"
        "print(functorch.experimental.chunk_vmap(torch.sin, chunks=3)(torch.zeros(5)).shape)\n")
    out = subprocess.run([sys.executable, "-W", "always", "-m", "ember", "-c", code],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.split("\n")
    assert lines[0] == "('FutureWarning', True) True"
    assert lines[1] == str(round(float(np.cos(0.5)), 6))
    assert lines[2] == "torch.Size([5])"


# ---- make_functional ---------------------------------------------------------------------
def _tied_module(lib):
    class Foo(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = lib.nn.Parameter(lib.zeros(3))
            self.linear = lib.nn.Linear(3, 3)
            self.linear.bias = self.bias
            self.linear_tied = self.linear
            self.buffer = lib.nn.Buffer(lib.ones(3))
            self.buffer_tied = self.buffer

        def forward(self, x):
            return self.linear_tied(self.linear(x)) + self.bias + self.buffer + self.buffer_tied
    return Foo()


def test_make_functional_with_buffers_ties_and_values_match_torch():
    from ember._functorch.make_functional import make_functional_with_buffers as e_mf
    from torch._functorch.make_functional import make_functional_with_buffers as t_mf
    t_mod, e_mod = _tied_module(torch), _tied_module(ember)
    _same_weights(e_mod, t_mod)
    t_func, t_params, t_bufs = t_mf(t_mod)
    e_func, e_params, e_bufs = e_mf(e_mod)
    assert [tuple(p.shape) for p in e_params] == [tuple(p.shape) for p in t_params]
    assert len(e_bufs) == len(t_bufs) == 1
    assert e_func.stateless_model.linear.weight.device.type == "meta"
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    np.testing.assert_allclose(_np(e_func(e_params, e_bufs, ember.tensor(x))),
                               _np(t_func(t_params, t_bufs, torch.tensor(x))), rtol=1e-5)
    # the gradient through the functional call reaches each tied parameter once
    e_g = ember.func.grad(lambda p: e_func(p, e_bufs, ember.tensor(x)).sum())(e_params)
    t_g = torch.func.grad(lambda p: t_func(p, t_bufs, torch.tensor(x)).sum())(t_params)
    for a, b in zip(e_g, t_g):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5)


def test_make_functional_disable_autograd_tracking_and_buffers_error():
    from ember._functorch.make_functional import make_functional as e_mf
    from torch._functorch.make_functional import make_functional as t_mf
    for flag in (True, False):
        _, ep = e_mf(ember.nn.Linear(3, 3), disable_autograd_tracking=flag)
        _, tp = t_mf(torch.nn.Linear(3, 3), disable_autograd_tracking=flag)
        assert [p.requires_grad for p in ep] == [p.requires_grad for p in tp]
    assert (_outcome(lambda: e_mf(ember.nn.BatchNorm1d(3)))
            == _outcome(lambda: t_mf(torch.nn.BatchNorm1d(3))))


def test_ensemble_state_errors_match_torch():
    from ember._functorch.make_functional import combine_state_for_ensemble as e_c
    from torch._functorch.make_functional import combine_state_for_ensemble as t_c

    def cases(lib, fn):
        eval_one = [lib.nn.Linear(2, 2) for _ in range(3)]
        eval_one[1].eval()
        mixed = [lib.nn.Linear(2, 2), lib.nn.Conv2d(3, 3, (3, 3))]
        no_grad = [lib.nn.Linear(2, 2) for _ in range(3)]
        no_grad[0].weight.requires_grad_(False)
        return [_outcome(lambda m=m: fn(m)) for m in ([], eval_one, mixed, no_grad)]
    assert cases(ember, e_c)[:3] == cases(torch, t_c)[:3]
    assert cases(ember, ember.func.stack_module_state) == cases(torch, torch.func.stack_module_state)


def test_combine_state_for_ensemble_vmap_matches_models():
    from ember._functorch.make_functional import combine_state_for_ensemble
    models = [ember.nn.Linear(3, 2) for _ in range(2)]
    func, params, buffers = combine_state_for_ensemble(models)
    assert [tuple(p.shape) for p in params] == [(2, 2, 3), (2, 2)]
    assert all(not p.requires_grad for p in params)
    xs = ember.randn(2, 4, 3)
    got = ember.vmap(func)(params, buffers, xs)
    want = ember.stack([m(x) for m, x in zip(models, xs)])
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5)


# ---- autograd.Function under vmap and the other transforms -------------------------------
def _functions(lib):
    class Id(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 1, in_dims[0]

    class Info(Id):
        @staticmethod
        def forward(x, y):
            return x

        @staticmethod
        def vmap(info, in_dims, x, y):
            return x * 0 + info.batch_size, (in_dims, info.randomness)

    class Info2(Info):
        @staticmethod
        def vmap(info, in_dims, x, y):
            return x * 0 + info.batch_size + 10 * in_dims[0] + 100 * in_dims[1][1], 0

    class OneReturn(Id):
        @staticmethod
        def vmap(info, in_dims, x):
            return x

    class BadOutDims(Id):
        @staticmethod
        def vmap(info, in_dims, x):
            return x, (None,)

    class NoRule(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

    class Both(Id):
        generate_vmap_rule = True

    class NoSetup(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            return g

    class Kw(Id):
        @staticmethod
        def forward(x, *, y):
            return x + y

    class Raises(Id):
        @staticmethod
        def vmap(info, in_dims, x):
            raise RuntimeError("expected to not be called")

    return dict(Id=Id, Info=Info, Info2=Info2, OneReturn=OneReturn, BadOutDims=BadOutDims,
                NoRule=NoRule, Both=Both, NoSetup=NoSetup, Kw=Kw, Raises=Raises)


def _function_cases(lib):
    F = _functions(lib)
    x = lib.arange(6.0).reshape(2, 3)
    y = lib.arange(3.0)
    run = {
        "id_in_dims_1": lambda: lib.vmap(F["Id"].apply, in_dims=1)(x),
        "info_in_dims": lambda: lib.vmap(F["Info2"].apply, in_dims=(1, (None, 0)))(
            x, [y, x.t()]),
        "one_return": lambda: lib.vmap(F["OneReturn"].apply)(x),
        "bad_out_dims": lambda: lib.vmap(F["BadOutDims"].apply)(x),
        "no_rule": lambda: lib.vmap(F["NoRule"].apply)(x),
        "both": lambda: lib.vmap(F["Both"].apply)(x),
        "no_setup_vmap": lambda: lib.vmap(F["NoSetup"].apply)(x),
        "no_setup_grad": lambda: lib.func.grad(lambda t: F["NoSetup"].apply(t).sum())(y),
        "no_setup_jvp": lambda: lib.func.jvp(F["NoSetup"].apply, (y,), (y,)),
        "no_setup_plain": lambda: F["NoSetup"].apply(y),
        "kwarg_tensor": lambda: lib.vmap(lambda a: F["Kw"].apply(a, y=y))(x),
        "skips_unbatched": lambda: lib.vmap(lambda a: F["Raises"].apply(lib.tensor(1.0)) * a)(x),
    }
    results = {}
    for name, fn in run.items():
        r = _outcome(fn)
        if r[0] == "ok":
            r = ("ok", np.round(_np(r[1]), 5).tolist())
        else:   # a type named in the message: ember.Tensor stands for torch.Tensor
            r = r[:2] + (r[2].replace("ember.", "torch."),)
        results[name] = r
    return results


def test_function_under_vmap_and_transforms_matches_torch():
    got, want = _function_cases(ember), _function_cases(torch)
    assert got == want


def test_function_vmap_info_object():
    seen = []
    for lib in (ember, torch):
        class Id(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def vmap(info, in_dims, x):
                seen.append((lib.__name__, info.batch_size, info.randomness, in_dims))
                return x, in_dims[0]
        for randomness in ("error", "same"):
            lib.vmap(Id.apply, randomness=randomness)(lib.zeros(4, 2))
    assert [s[1:] for s in seen[:2]] == [s[1:] for s in seen[2:]] == [
        (4, "error", (0,)), (4, "same", (0,))]


# ---- saved tensor hooks, dispatch keys ---------------------------------------------------
def test_reverse_transforms_refuse_saved_tensor_hooks():
    def cases(lib):
        def f(x):
            return lib.sin(x).sum()

        def g(x):
            with lib.autograd.graph.save_on_cpu():
                return f(x)
        x = lib.ones(3)
        out = []
        for make in (lambda h: lib.func.grad(h)(x), lambda h: lib.func.vjp(h, x),
                     lambda h: lib.func.jacrev(h)(x)):
            def outside(make=make):
                with lib.autograd.graph.save_on_cpu():
                    return make(f)
            out.append(_outcome(outside)[:2])
            out.append(_outcome(lambda make=make: make(g))[:3])
        out.append(_outcome(lambda: float(lib.func.jvp(g, (x,), (x,))[1]))[0])
        return out
    assert cases(ember) == cases(torch)


def test_exclude_dispatch_key_guard_and_local_sets():
    def cases(lib):
        C = lib._C
        out = [C._dispatch_tls_local_exclude_set().has(C.DispatchKey.Functionalize)]
        with C._ExcludeDispatchKeyGuard(C.DispatchKeySet(C.DispatchKey.FuncTorchBatched)):
            s = C._dispatch_tls_local_exclude_set()
            out += [s.has(C.DispatchKey.FuncTorchBatched), s.has(C.DispatchKey.Functionalize),
                    float(lib.vmap(lambda t: t.sum(0))(lib.ones(3, 2)).sum())]
        out.append(C._dispatch_tls_local_exclude_set().has(C.DispatchKey.FuncTorchBatched))
        out.append(repr(C.DispatchKeySet(C.DispatchKey.FuncTorchBatched)))
        return out
    assert cases(ember) == cases(torch)


# ---- torch._functorch.autograd_function helpers ------------------------------------------
def test_reductify_leaf_matches_torch():
    from ember._functorch.autograd_function import reductify_leaf as e_r
    from torch._functorch.autograd_function import reductify_leaf as t_r
    rng = np.random.RandomState(0)
    cases = [((2, 3, 4), 0, None, ()), ((3, 2, 4), 1, None, ((3,),)), ((3, 4), None, 1, ()),
             ((3, 4), None, 1, ((4,),)), ((2, 3, 4), 0, 1, ()), ((3, 4, 5, 2), 3, 0, ((5,),))]
    for shape, gb, ib, extra in cases:
        g = rng.randn(*shape).astype(np.float32)
        np.testing.assert_allclose(_np(e_r(ember.tensor(g), gb, ib, 2, *extra)),
                                   _np(t_r(torch.tensor(g), gb, ib, 2, *extra)), rtol=1e-6)
    assert e_r(None, None, 0, 2) is None


def test_ctx_with_saved_tensors_matches_torch():
    def run(lib, reserved):
        from importlib import import_module
        Ctx = import_module(f"{lib.__name__}._functorch.autograd_function").CtxWithSavedTensors
        x = lib.tensor(2.0, requires_grad=True)
        z = lib.tensor(5.0)
        seen = []

        class A(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if reserved:
                    setattr(ctx, reserved, 1)
                ctx.save_for_backward(x)
                return x * 1

            @staticmethod
            def backward(ctx, gy):
                w = Ctx(ctx, (z,))
                w.foo = "bar"
                seen.append((len(w.saved_tensors), float(w.saved_tensors[0]), ctx.foo,
                             w.needs_input_grad))
                return gy * w.saved_tensors[0]
        r = _outcome(lambda: A.apply(x).backward())
        return r[:2] if r[0] == "ok" else r, seen, x.grad is not None and float(x.grad)
    for reserved in (None, "_pt_inner_ctx", "_pt_new_saved_tensors"):
        assert run(ember, reserved) == run(torch, reserved)


# ---- make_fx ---------------------------------------------------------------------------------
def test_make_fx_of_transforms_replays_on_new_inputs():
    from ember.fx.experimental.proxy_tensor import make_fx
    rng = np.random.RandomState(0)
    a, b = rng.randn(5, 3).astype(np.float32), rng.randn(5, 3).astype(np.float32)
    vf = ember.vmap(ember.sin)
    gm = make_fx(vf)(ember.tensor(a))
    np.testing.assert_allclose(_np(gm(ember.tensor(b))), np.sin(b), rtol=1e-6)
    jf = ember.func.jacrev(ember.func.jacrev(lambda x: x.sin().sum()))
    gm = make_fx(jf)(ember.tensor(a[0]))
    want = torch.func.jacrev(torch.func.jacrev(lambda x: x.sin().sum()))(torch.tensor(b[0]))
    np.testing.assert_allclose(_np(gm(ember.tensor(b[0]))), want.numpy(), rtol=1e-5, atol=1e-6)
    assert "placeholder" in str(gm.graph) or "x_1" in gm.code


# ---- autograd.Function returning its input as is ------------------------------------------
def _returns_input_cases(lib):
    fwAD = lib.autograd.forward_ad
    out = []
    for save in ("input", "output", "neither"):
        for mark_dirty in (True, False):
            class A(lib.autograd.Function):
                @staticmethod
                def forward(x):
                    return x

                @staticmethod
                def setup_context(ctx, inputs, output, save=save, mark_dirty=mark_dirty):
                    if mark_dirty:
                        ctx.mark_dirty(inputs[0])
                    if save != "neither":
                        ctx.save_for_backward(inputs[0] if save == "input" else output)

                @staticmethod
                def backward(ctx, g):
                    return g

                @staticmethod
                def jvp(ctx, x_t, mark_dirty=mark_dirty):
                    return x_t.add_(0) if mark_dirty else x_t.view_as(x_t)

            def fn(x, A=A):
                return A.apply(x.clone())
            a, a_t = lib.tensor(2.0), lib.tensor(3.0)

            def dual(A=A):
                with fwAD.dual_level():
                    d = fwAD.make_dual(a.clone(), a_t.clone())
                    r = A.apply(d)
                    return r is d, float(fwAD.unpack_dual(r).tangent)
            for run in (lambda: float(lib.func.grad(fn)(a)),
                        lambda fn=fn: tuple(float(t) for t in lib.func.jvp(fn, (a,), (a_t,))),
                        lambda A=A: float(A.apply(a.clone())), dual):
                out.append(_outcome(run))
    return out


def test_function_returning_input_as_is_matches_torch():
    assert _returns_input_cases(ember) == _returns_input_cases(torch)


def test_function_under_grad_runs_as_generated_function():
    names = {}
    for lib in (ember, torch):
        class FooBar(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x.clone()

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2

        def f(x, lib=lib, FooBar=FooBar):
            y = FooBar.apply(x)
            names.setdefault(lib.__name__, []).append(type(y.grad_fn).__name__)
            return y
        assert float(lib.func.grad(f)(lib.tensor(1.0))) == 2.0
        FooBar.apply(lib.tensor(1.0, requires_grad=True)).sum()
    assert names["ember"] == names["torch"] == ["FooBarGeneratedBackward"]


# ---- jvp's argument and output checks, forward AD switches --------------------------------
def _jvp_cases(lib):
    one = lib.tensor(1.0)
    x = lib.ones(2, 3)
    jvp = lib.func.jvp
    runs = [
        lambda: jvp(lambda t: t, one, one),
        lambda: jvp(lambda t: t, ((one, one), one), (one, one)),
        lambda: jvp(lambda t: t, ((one, one), 1), ((one, one), one)),
        lambda: jvp(lambda t: t, ((one, one), 1), ((1, one), one)),
        lambda: jvp(lambda t: t, ((),), ((),)),
        lambda: jvp(lib.sin, (), ()),
        lambda: jvp(lib.sin, (x,), [x]),
        lambda: jvp(lib.sin, (1.0,), (x,)),
        lambda: jvp(lambda _: None, (x,), (x,)),
        lambda: jvp(lambda _: (), (x,), (x,)),
        lambda: jvp(lambda _: 1, (x,), (x,)),
        lambda: jvp(lambda t: (t, 1.0), (x,), (x,), has_aux=True),
        lambda: jvp(lambda t: (t, [t, "abc"]), (x,), (x,), has_aux=True),
        lambda: jvp(lambda t: (t, one), (x,), (x,), strict=True),
        lambda: lib.func.jacfwd(lambda _: None)(x),
        lambda: lib.func.vjp(lambda _: None, x),
        lambda: lib.func.vjp(lambda _: "abc", x),
    ]
    out = []
    for fn in runs:
        r = _outcome(fn)
        out.append(r[:2] if r[0] == "ok" else
                   r[:2] + (r[2].split(" Got primals with structure")[0],))
    return out


def test_jvp_checks_match_torch():
    assert _jvp_cases(ember) == _jvp_cases(torch)


def test_forward_grad_switches_match_torch():
    def cases(lib):
        fwAD = lib.autograd.forward_ad
        seen = []

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(fwAD._is_fwd_grad_enabled())
                return x * x

            @staticmethod
            def backward(ctx, g):
                return g
        Square.apply(lib.ones(2, requires_grad=True))
        x = lib.tensor(0.5)
        with fwAD._set_fwd_grad_enabled(False):
            _, t = lib.func.jvp(lib.sin, (x,), (lib.ones_like(x),))
        return seen, round(float(t), 6), fwAD._is_fwd_grad_enabled()
    assert cases(ember) == cases(torch)


# ---- new_* factories and view gradients under vmap ---------------------------------------
def _new_factory_cases(lib):
    vmap, grad = lib.vmap, lib.func.grad
    x = lib.arange(6.0).reshape(3, 2)
    out = []
    for make in (lambda t: t.new_zeros((4,)), lambda t: t.new_ones(4),
                 lambda t: t.new_empty((4,)).fill_(1.0), lambda t: t.new_full((4,), 2.5)):
        r = vmap(make)(x)
        out.append((tuple(r.shape), str(r.dtype).split(".")[-1], _np(r).tolist()))
    out.append(tuple(vmap(vmap(lambda t: t.new_zeros(5)))(lib.ones(2, 3, 4)).shape))
    out.append(tuple(vmap(lambda t: t.new_zeros(5), out_dims=1)(lib.ones(2, 3)).shape))

    def copy_into(y, x):
        r = x.new_zeros((5,))
        r.copy_(y)
        return r.sum()
    out.append(_np(vmap(grad(copy_into))(lib.ones(3, 5), lib.ones(3))).tolist())
    jac = lib.func.jacrev(lambda t: t[0, 1:].unsqueeze(-1))(lib.ones(2, 4))
    out.append((tuple(jac.shape), _np(jac).tolist()))
    return out


def test_new_factories_and_view_grads_under_vmap_match_torch():
    assert _new_factory_cases(ember) == _new_factory_cases(torch)


# ---- Jacobian checks, dynamic-shape ops under vmap, vjp_fn's arguments ---------------------
def _jac_cases(lib):
    func = lib.func
    out = []
    for api in (func.jacrev, func.jacfwd):
        out.append(_outcome(lambda api=api: api(lambda t: t.conj())(lib.ones(1,
                                                                            dtype=lib.cfloat))))
        out.append(_outcome(lambda api=api: api(lambda t: lib.conj(t * 0.5j))(lib.ones(1))))
    out.append(_outcome(lambda: lib.vmap(lambda t: t.nonzero())(lib.ones(2, 3)))[:2])
    out.append(_outcome(lambda: lib.vmap(lambda t: lib.unique(t))(lib.ones(2, 3)))[:2])

    class DynamicBackward(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            g.nonzero()
            return g
    x = lib.arange(9.0).reshape(3, 3)
    jac = func.jacrev(DynamicBackward.apply, chunk_size=1)(x)
    out.append((tuple(jac.shape), float(jac.sum())))
    out.append(_outcome(lambda: func.jacrev(DynamicBackward.apply, chunk_size=2)(x))[:2])
    _, vjp_fn = func.vjp(lambda t: lib.sin(t).sum(), lib.zeros(3))
    out.append(_np(vjp_fn(lib.tensor(2.0), True, True)[0]).tolist())
    return out


def test_jacobian_checks_and_dynamic_shape_ops_match_torch():
    assert _jac_cases(ember) == _jac_cases(torch)


# ---- HigherOrderOperator ----------------------------------------------------------------------
def _sum_op(lib):
    from importlib import import_module
    ft = lib._C._functorch
    HOP = import_module(f"{lib.__name__}._ops").HigherOrderOperator

    class MySum(HOP):
        def __init__(self):
            super().__init__("mysum_test")

        def __call__(self, *args, **kwargs):
            return super().__call__(*args, **kwargs)
    mysum = MySum()

    @mysum.py_impl(ft.TransformType.Vmap)
    def batch_rule(interpreter, x, dim):
        if not ft.is_batchedtensor(x):
            with interpreter.lower():
                return mysum(x, dim)
        bdim = ft.maybe_get_bdim(x)
        value = ft.get_unwrapped(x)
        with interpreter.lower():
            result = mysum(value.movedim(bdim, 0), dim + 1)
        return ft._add_batch_dim(result, 0, interpreter.level())

    @mysum.py_impl(lib._C.DispatchKey.AutogradCPU)
    def autograd_cpu(x, dim):
        return lib.sum(x, dim)
    return mysum


def _hop_cases(lib):
    mysum = _sum_op(lib)
    x = lib.arange(24.0).reshape(2, 3, 4)
    vmap, grad = lib.vmap, lib.func.grad
    out = [_np(mysum(x, 1)).tolist(), _np(vmap(mysum, (0, None))(x, 0)).tolist(),
           _np(vmap(vmap(mysum, (0, None)), (0, None))(x, 0)).tolist()]
    out.append(_outcome(lambda: HOP_of(lib)("direct"))[:2])
    return out


def HOP_of(lib):
    from importlib import import_module
    return import_module(f"{lib.__name__}._ops").HigherOrderOperator


def test_higher_order_operator_under_grad_is_differentiated():
    # PyTorch needs a Grad rule for these; ember's grad differentiates the autograd kernel
    mysum = _sum_op(ember)
    y = ember.tensor([0.5, 1.0, 2.0])
    grad = ember.func.grad
    assert _np(grad(mysum)(y, 0)).tolist() == [1.0, 1.0, 1.0]
    gg = grad(lambda t: grad(lambda u: mysum(u.sin(), 0))(t).sum())(y)
    np.testing.assert_allclose(_np(gg), -np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
    xs = ember.arange(6.0).reshape(2, 3)
    assert _np(ember.vmap(grad(mysum), (0, None))(xs, 0)).tolist() == [[1.0] * 3] * 2
    with ember.no_grad():
        g = grad(mysum)(y.requires_grad_(), 0)
    assert not g.requires_grad


def test_higher_order_operator_under_transforms_matches_torch():
    assert _hop_cases(ember) == _hop_cases(torch)


# ---- requires_grad_ / retain_grad inside a transform's function ---------------------------
def _inside_transform_cases(lib):
    vmap, grad = lib.vmap, lib.func.grad

    def req(x):
        x.requires_grad_()
        return x.sin().sum()

    def req_false(x):
        return lib.zeros(3).requires_grad_(False).sum() + x.sum()

    def retain(x):
        y = x.sin()
        y.retain_grad()
        return y.sum()

    def allowed(x):   # factories with requires_grad=True and Parameter() are fine
        t = lib.ones(3, requires_grad=True)
        p = lib.nn.Parameter(lib.ones(3))
        return (x * 2).sum() + 0 * (t.detach().sum() + p.detach().sum())

    def functional_jac(x):
        return lib.autograd.functional.jacobian(lambda u: u.sin().sum(), x)

    x = lib.ones(3)
    runs = [lambda: vmap(req)(x), lambda: grad(req)(x), lambda: vmap(grad(req))(x),
            lambda: grad(grad(req))(lib.tensor(1.0)), lambda: grad(req_false)(x),
            lambda: grad(retain)(x), lambda: vmap(functional_jac)(lib.ones(2, 3)),
            lambda: grad(functional_jac)(lib.tensor(1.0)),
            lambda: _np(grad(allowed)(x)).tolist(),
            lambda: _np(grad(lambda t: lib.func.grad(lambda u: (u ** 3).sum())(t).sum())(x))
            .tolist(),
            lambda: _np(lib.func.jacfwd(lambda t: t.sin())(lib.zeros(2))).tolist(),
            lambda: _np(vmap(lambda t: lib.nonzero_static(t, size=3))(
                lib.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))).tolist()]
    return [_outcome(r) for r in runs]


def test_requires_grad_and_retain_grad_inside_transforms_match_torch():
    assert _inside_transform_cases(ember) == _inside_transform_cases(torch)


def test_make_dual_under_vmap_refused_as_torch():
    def cases(lib):
        fwAD = lib.autograd.forward_ad

        def jac(x):
            return lib.autograd.functional.jacobian(lambda u: u.sin().sum(), x,
                                                    strategy="forward-mode", vectorize=True)
        out = [_outcome(lambda: lib.vmap(jac)(lib.ones(2, 3)))]
        with fwAD.dual_level():
            out.append(_outcome(lambda: lib.vmap(lambda t: fwAD.make_dual(t, t))(lib.ones(2, 3))))
        # jvp under vmap makes its duals itself and works
        out.append(_np(lib.vmap(lambda t: lib.func.jvp(lib.sin, (t,), (t,))[1])(
            lib.zeros(2, 3))).tolist())
        return out
    assert cases(ember) == cases(torch)


def test_dynamic_layer_stack_by_hand_matches_torch():
    def cases(lib):
        ft = lib._C._functorch
        out = [ft.get_dynamic_layer_stack_depth()]
        ft._vmap_increment_nesting(3, "error")
        ft._grad_increment_nesting()
        ft._jvp_increment_nesting()
        out.append(ft.get_dynamic_layer_stack_depth())
        out.append(_outcome(lambda: lib.ones(2).requires_grad_())[:2])
        ft.pop_dynamic_layer_stack_and_undo_to_depth(2)
        out.append(ft.get_dynamic_layer_stack_depth())
        ft.pop_dynamic_layer_stack_and_undo_to_depth(0)
        out.append(ft.get_dynamic_layer_stack_depth())
        out.append(_outcome(lambda: bool(lib.ones(2).requires_grad_().requires_grad)))
        return out
    assert cases(ember) == cases(torch)
