"""torch.library's custom operators, checked against PyTorch (the behaviours PyTorch's
test/test_custom_ops.py exercises): each test runs the same code with `T` = ember and
`T` = torch and compares what comes out -- values, gradients, schema strings, tags, and the
exception type and message of a misuse."""
import importlib
import re
import warnings
from unittest import mock

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def both(fn):
    """fn(T) for ember and for torch."""
    return fn(ember), fn(torch)


def raised(fn, T):
    """(type name, message) of what fn(T) raises, or None."""
    try:
        fn(T)
    except Exception as e:  # noqa: BLE001 (the exception is the result compared)
        return type(e).__name__, str(e)
    return None


def same_error(fn, pattern):
    """fn raises the same exception type under both, with a message matching `pattern`."""
    e, t = raised(fn, ember), raised(fn, torch)
    assert e is not None and t is not None, (e, t)
    assert e[0] == t[0], (e, t)
    assert re.search(pattern, e[1]) and re.search(pattern, t[1]), (e, t)


def test_tags_enum_and_op_tags():
    assert [(t.name, t.value) for t in ember.Tag] == [
        (t.name, t.value) for t in torch.Tag.__members__.values()]

    def tags(T):
        @T.library.custom_op("_cor_tags::f", mutates_args=(),
                             tags=[T.Tag.pt2_compliant_tag, T.Tag.pointwise])
        def f(x: T.Tensor) -> T.Tensor:
            return x.clone()
        with T.library._scoped_library("_cor_tags", "FRAGMENT") as lib:
            lib.define("g(Tensor x) -> Tensor", tags=T.Tag.needs_fixed_stride_order)
            g_tags = T.ops._cor_tags.g.default.tags
            layout = T._library.utils.get_layout_constraint_tag(T.ops._cor_tags.g.default)
        return ([t.name for t in f._opoverload.tags], [t.name for t in g_tags], layout.name,
                T.ops._cor_tags.f.default._defined_in_python, T.ops.aten.sin.default.tags[-1].name)
    e, t = both(tags)
    assert e == t


def test_infer_schema_tags_and_nested_string_annotations():
    def schemas(T):
        def inplace(x: T.Tensor, y: T.Tensor) -> T.Tensor:
            return x

        def out(x: T.Tensor, *, a: T.Tensor, b: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
            return a, b

        def strings(x: T.Tensor) -> list["_AnnotatedTensor"]:
            return [x]
        global _AnnotatedTensor
        _AnnotatedTensor = T.Tensor
        infer = T.library.infer_schema
        return (infer(inplace, mutates_args={"x"}, tags=T.Tag.inplace),
                infer(out, mutates_args={"a", "b"}, tags=T.Tag.out),
                infer(strings, mutates_args=()),
                T._library.infer_schema.tuple_to_list(tuple[int, float]) == list[int | float])
    e, t = both(schemas)
    assert e == t

    def bad(tags, mutates, ret_ann=None):
        def run(T):
            def f(x: T.Tensor, *, out: T.Tensor) -> T.Tensor:
                return out
            if ret_ann == "tuple":
                f.__annotations__["return"] = tuple[T.Tensor]
            T.library.infer_schema(f, mutates_args=mutates, tags=[getattr(T.Tag, n) for n in tags])
        return run
    same_error(bad(["inplace", "out"], {"x", "out"}), "mutually exclusive")
    same_error(bad(["inplace"], {"out"}), "mutates_args")
    same_error(bad(["out"], ()), "at least one")
    same_error(bad(["out"], {"out"}, "tuple"), "return annotation")


def test_inplace_and_out_tagged_ops():
    def run(T):
        @T.library.custom_op("_cor_tag::add_", mutates_args={"x"}, tags=T.Tag.inplace)
        def add_(x: T.Tensor, y: T.Tensor) -> T.Tensor:
            x.add_(y)
            return x

        @T.library.custom_op("_cor_tag::add_out", mutates_args={"out"}, tags=T.Tag.out)
        def add_out(x: T.Tensor, y: T.Tensor, *, out: T.Tensor) -> T.Tensor:
            out.copy_(x + y)
            return out
        x, y = T.ones(3), T.arange(3.0)
        out = T.empty(3)
        schema = add_._opoverload._schema
        return (add_(x, y) is x, x.tolist(), add_out(x, y, out=out) is out, out.tolist(),
                schema.arguments[0].alias_info.is_write, schema.returns[0].alias_info.is_write,
                str(add_out._opoverload._schema).split("::")[1])
    e, t = both(run)
    assert e == t

    def wrong_return(T):
        @T.library.custom_op("_cor_tag::bad_", mutates_args={"x"}, tags=T.Tag.inplace)
        def bad_(x: T.Tensor) -> T.Tensor:
            return x.clone()
        bad_(T.ones(2))
    same_error(wrong_return, "must return its first argument")

    def out_autograd(T):
        @T.library.custom_op("_cor_tag::sin_out", mutates_args={"out"}, tags=T.Tag.out)
        def sin_out(x: T.Tensor, *, out: T.Tensor) -> T.Tensor:
            out.copy_(x.sin())
            return out
        sin_out(T.ones(2, requires_grad=True), out=T.empty(2))
    same_error(out_autograd, r"functions with out=\.\.\. arguments don't support automatic")

    def out_register_autograd(T):
        with T.library._scoped_library("_cor_tag2", "FRAGMENT") as lib:
            lib.define("o(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", tags=T.Tag.out)
            T.library.register_autograd("_cor_tag2::o", lambda ctx, g: g, lib=lib)
    same_error(out_register_autograd, "Out variants do not support autograd")

    def bad_manual(T):
        T.library.custom_op("_cor_tag::m", lambda x: x, mutates_args={"x"},
                            schema="(Tensor(a!) x) -> Tensor", tags=T.Tag.inplace)
    same_error(bad_manual, "return must alias")

    def kwarg_only_tensor(T):
        def f(x: T.Tensor, *, z: T.Tensor) -> T.Tensor:
            return x
        T.library.custom_op("_cor_tag::kw", f, mutates_args=())
    same_error(kwarg_only_tensor, "kwarg-only Tensor args")


def test_opcheck_reports_as_pytorch():
    def mutating(T):
        with T.library._scoped_library("_cor_opcheck", "FRAGMENT") as lib:
            lib.define("foo(Tensor x) -> Tensor")
            lib.impl("foo", lambda x: x.sin_().clone(), "CPU")
            T.library.opcheck(T.ops._cor_opcheck.foo.default, (T.ones(2),),
                              test_utils="test_schema")
    same_error(mutating, "Argument x is not defined as mutable but was mutated")

    def aliasing(T):
        with T.library._scoped_library("_cor_opcheck", "FRAGMENT") as lib:
            lib.define("bar(Tensor x) -> Tensor")
            lib.impl("bar", lambda x: x[:], "CompositeExplicitAutograd")
            return T.library.opcheck(T.ops._cor_opcheck.bar.default, (T.ones(2),),
                                     raise_exception=False)
    configs = [importlib.import_module(f"{T.__name__}._functorch.config") for T in (ember, torch)]
    for error in (True, False):   # functorch's switch (on by default where CI is set)
        with mock.patch.object(configs[0], "error_on_custom_op_aliasing", error), \
                mock.patch.object(configs[1], "error_on_custom_op_aliasing", error), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            e, t = both(aliasing)
        assert type(e["test_schema"]) is RuntimeError and type(t["test_schema"]) is RuntimeError
        assert str(e["test_schema"]) == str(t["test_schema"])
        aot_e, aot_t = e.pop("test_aot_dispatch_dynamic"), t.pop("test_aot_dispatch_dynamic")
        assert {k: v for k, v in e.items() if k != "test_schema"} == \
            {k: v for k, v in t.items() if k != "test_schema"} == \
            {"test_autograd_registration": "SUCCESS", "test_faketensor": "SUCCESS"}
        aliased = [str(w.message) for w in caught if "must not also be an input" in str(w.message)]
        if error:
            assert type(aot_e) is type(aot_t) is RuntimeError and str(aot_e) == str(aot_t)
            assert aliased == []
        else:
            assert aot_e == aot_t == "SUCCESS"
            assert len(aliased) == 2 and aliased[0] == aliased[1], aliased

    def fake_shape(T):
        with T.library._scoped_library("_cor_opcheck", "FRAGMENT") as lib:
            lib.define("sq(Tensor x) -> Tensor")
            lib.impl("sq", lambda x: x ** 2, "CPU")
            lib.impl("sq", lambda x: x.unsqueeze(1) ** 2, "Meta")
            T.library.opcheck(T.ops._cor_opcheck.sq.default, (T.ones(2),),
                              test_utils="test_faketensor")
    same_error(fake_shape, r"Shapes .* are not equal")

    def backend_function(T):
        class Foo(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        with T.library._scoped_library("_cor_opcheck", "FRAGMENT") as lib:
            lib.define("bk(Tensor x) -> Tensor")
            lib.impl("bk", Foo.apply, "CPU")
            T.library.opcheck(T.ops._cor_opcheck.bk.default, (T.ones(2, requires_grad=True),),
                              test_utils="test_autograd_registration")
    same_error(backend_function, "does not have an autograd kernel")
    same_error(lambda T: T.library.opcheck(T.sin, (T.ones(2),)), "OpOverload")
    same_error(lambda T: T.library.opcheck(T.ops.aten.sin.default, (T.ones(2),),
                                           test_utils="blah"), "test_utils to be subset of")


def test_register_autograd_needs_input_grad_skips_defaulted_arguments():
    def run(T):
        seen = []

        @T.library.custom_op("_cor_ag::f", mutates_args=())
        def f(x: T.Tensor, y: T.Tensor | None = None, scale: float = 2.0) -> T.Tensor:
            return x.sin() * scale

        def setup_context(ctx, inputs, output):
            seen.append(len(inputs))
            ctx.save_for_backward(inputs[0])
            ctx.scale = inputs[2]

        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            (x,) = ctx.saved_tensors
            return g * x.cos() * ctx.scale, None, None
        f.register_autograd(backward, setup_context=setup_context)
        x = T.tensor([0.5, 1.0], requires_grad=True)
        f(x).sum().backward()
        g1 = x.grad.tolist()
        x.grad = None
        f(x, None, 3.0).sum().backward()
        return seen, g1, x.grad.tolist()
    e, t = both(run)
    assert e[0] == t[0]
    np.testing.assert_allclose(e[1], t[1], rtol=1e-6)
    np.testing.assert_allclose(e[2], t[2], rtol=1e-6)


def test_keyword_only_arguments_reach_kernels_and_rules_by_name():
    def run(T):
        with T.library._scoped_library("_cor_kw", "FRAGMENT") as lib:
            lib.define("foo(Tensor w, int x = 2, *, int y = 3, int z) -> Tensor")
            lib.impl("foo", lambda w, x=2, *, y=3, z: w * x * y * z, "CPU")
            T.library.register_vmap("_cor_kw::foo",
                                    lambda info, in_dims, w, x=2, *, y=3, z: (w * x * y * z, 0),
                                    lib=lib)

            def setup_context(ctx, inputs, keyword_only_inputs, output):
                ctx.c = inputs[1] * keyword_only_inputs["y"] * keyword_only_inputs["z"]
            T.library.register_autograd("_cor_kw::foo", lambda ctx, g: g * ctx.c,
                                        setup_context=setup_context, lib=lib)
            w = T.ones(3, requires_grad=True)
            out = T.ops._cor_kw.foo(w, z=5)
            out.sum().backward()
            batched = T.vmap(T.ops._cor_kw.foo)(T.ones(2, 3), z=7)
            return out.tolist(), w.grad.tolist(), batched.tolist()
    e, t = both(run)
    assert e == t


def test_schema_defaults_are_typed():
    def run(T):
        got = []

        @T.library.custom_op("_cor_defaults::f", mutates_args=())
        def f(x: T.Tensor, f: T.dtype = T.float64, d: T.device = "cpu") -> T.Tensor:
            got.extend([f, d])
            return x.clone()
        f(T.ones(1))
        args = T.ops._cor_defaults.f.default._schema.arguments
        return str(got[0]), str(got[1]), [str(a.default_value) for a in args]
    e, t = both(run)
    assert e == t


def test_library_overrides_and_scoped_restore():
    def run(T):
        with T.library._scoped_library("_cor_over", "FRAGMENT") as lib:
            lib.define("foo(Tensor x) -> Tensor")
            op = T.ops._cor_over.foo.default
            lib.impl("foo", lambda x: x * 1, "Meta")
            shapes = [op(T.ones(3, device="meta")).shape[0]]
            try:
                lib.impl("foo", lambda x: x, "Meta", allow_override=False)
            except RuntimeError as e:
                shapes.append("already a kernel registered" in str(e))
            with T.library._scoped_library("_cor_over", "FRAGMENT") as lib2:
                lib2.impl("foo", lambda x: T.cat([x, x]), "Meta")
                shapes.append(op(T.ones(3, device="meta")).shape[0])
            shapes.append(op(T.ones(3, device="meta")).shape[0])
            return shapes
    e, t = both(run)
    assert e == t == [3, True, 6, 3]
    same_error(lambda T: T.library.impl("blah::blah", "somethingsomething"),
               "Expected one of cpu, cuda")
    same_error(lambda T: T.library.define("_cor_over::bad", "bad(Tensor x) -> Tensor"),
               "expected schema to look like")


def _legacy(T):
    """(torch._custom_ops, torch._custom_op.impl) of T."""
    import importlib
    return (importlib.import_module(f"{T.__name__}._custom_ops"),
            importlib.import_module(f"{T.__name__}._custom_op.impl"))


def test_legacy_custom_ops_api():
    def run(T):
        custom_ops, impl = _legacy(T)
        qual = "_cor_legacy::foo"

        @custom_ops.custom_op(qual)
        def foo(x: T.Tensor) -> T.Tensor:
            raise NotImplementedError
        try:
            custom_ops.impl(qual)(lambda x: x.sin())
            custom_ops.impl_save_for_backward(qual)(lambda inputs, output: inputs.x)
            custom_ops.impl_backward(qual)(lambda ctx, saved, g: {"x": g * saved.cos()})
            x = T.tensor([0.25, 0.5], requires_grad=True)
            (gx,) = T.autograd.grad(impl.get_op(qual)(x).sum(), x)
            return gx.tolist()
        finally:
            custom_ops._destroy(qual)
    e, t = both(run)
    np.testing.assert_allclose(e, t, rtol=1e-6)

    def bad_backward(T):
        custom_ops, impl = _legacy(T)
        qual = "_cor_legacy::bar"

        @custom_ops.custom_op(qual)
        def bar(x: T.Tensor, dim: int) -> T.Tensor:
            raise NotImplementedError
        try:
            custom_ops.impl(qual)(lambda x, dim: x.sin())
            custom_ops.impl_save_for_backward(qual)(lambda inputs, output: inputs.x)
            custom_ops.impl_backward(qual)(lambda ctx, saved, g: {"x": g, "dim": None})
            impl.get_op(qual)(T.ones((), requires_grad=True), 3).backward()
        finally:
            custom_ops._destroy(qual)
    same_error(bad_backward, "non-Tensor-like types")
    same_error(lambda T: _legacy(T)[0].custom_op("aten::foo", "(Tensor x) -> Tensor"),
               "is a reserved namespace")
    same_error(lambda T: _legacy(T)[1].CustomOp(None, None, None, None, None),
               "CustomOp constructor is private")


def test_auto_dispatch_below_autograd():
    def run(T):
        x = T.ones(2, requires_grad=True)
        with T._C._AutoDispatchBelowAutograd():
            y = T.ops.aten.mul.Tensor(x, x)
        return y.requires_grad, y.tolist()
    e, t = both(run)
    assert e == t


def test_c_helpers_and_load_library():
    def run(T):
        x, y = T.randn(2, 2), T.randn(2, 2)
        alias = T._C._any_output_is_alias_to_input_or_output
        needs = T._C._any_requires_grad
        r = T.zeros(1, requires_grad=True)
        return (alias((x,), {}, (x.t(),)), alias((x,), None, (2 * x,)),
                alias((), {"a": x.view(-1)}, (x,)), alias((y,), {}, (y[1:],)),
                alias((x,), {"a": x}, ()), alias((T.tensor([]),), {}, (T.tensor([]),)),
                alias(([[1, x], 2], 3), {}, ([x.t()], x + 1)),
                needs([[r]], T.ones(1)), needs(T.zeros(1), a=r), needs([r, T.ones(1)]))
    e, t = both(run)
    assert e == t
    same_error(lambda T: T.ops.load_library("libnoexist.so"),
               "Could not load this library: .*libnoexist.so")

    def non_tensor_output(T):
        custom_ops, impl = _legacy(T)
        qual = "_cor_legacy::nt"

        @custom_ops.custom_op(qual)
        def nt(x: T.Tensor) -> tuple[T.Tensor, int]:
            raise NotImplementedError
        try:
            custom_ops.impl(qual)(lambda x: (x.clone(), 3))
            custom_ops.impl_save_for_backward(qual)(lambda inputs, output: [])
            custom_ops.impl_backward(qual, output_differentiability=[True, True])(
                lambda ctx, saved, g0, g1: {"x": g0})
            impl.get_op(qual)(T.ones(3, requires_grad=True))
        finally:
            custom_ops._destroy(qual)
    same_error(non_tensor_output, "is not a Tensor")


def test_generate_opcheck_tests(tmp_path):
    import os
    import unittest

    from torch.testing._internal.optests.generate_tests import FailuresDict
    path = tmp_path / "failures_dict.json"
    # written by PyTorch, in the format it validates
    FailuresDict(str(path), {"_cor_gen::bad": {"Cases.test_schema__test_bad": {
        "comment": "", "status": "xfail"}}}).save()

    def run(T):
        import importlib
        optests = importlib.import_module(f"{T.__name__}.testing._internal.optests")

        class Cases(unittest.TestCase):
            def setUp(self):
                self.lib = T.library.Library("_cor_gen", "FRAGMENT")
                self.lib.define("bad(Tensor x) -> Tensor")
                self.lib.impl("bad", lambda x: x.sin_().clone(), "CPU")   # writes its input
                self.lib.define("good(Tensor x) -> Tensor")
                self.lib.impl("good", lambda x: x.sin(), "CPU")

            def tearDown(self):
                self.lib._destroy()

            def test_bad(self):
                T.ops._cor_gen.bad(T.ones(2))

            def test_good(self):
                T.ops._cor_gen.good(T.ones(2))

            @optests.dontGenerateOpCheckTests("testing")
            def test_skipped(self):
                pass
        optests.generate_opcheck_tests(Cases, ["_cor_gen"], str(path),
                                       test_utils=["test_schema", "test_faketensor"])
        names = sorted(n for n in dir(Cases) if n.startswith("test"))
        result = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(Cases))
        return names, sorted(t.id().rsplit(".", 1)[1] for t, _ in result.errors + result.failures)
    e, t = both(run)
    assert e == t
    assert "test_schema__test_bad" in e[0] and "test_schema__test_skipped" not in e[0]


def test_resolve_packet_set_kernel_enabled_and_aten_inplace_opcheck(caplog):
    def resolve(T):
        x = T.randn(3)
        out = []
        for args, kwargs in (((x, x), {}), ((x, 2), {}), ((x,), {"dim": 0}), ((x, x, x), {})):
            for q in ("aten::add", "aten::mean"):
                try:
                    out.append(T._C._jit_resolve_packet(q, *args, **kwargs))
                except RuntimeError:
                    out.append("RuntimeError")
        return out
    e, t = both(resolve)
    assert e == t

    def kernels(T):
        @T.library.custom_op("_cor_enable::f", mutates_args=())
        def f(x: T.Tensor) -> T.Tensor:
            return x + 1
        x = T.ones(1)
        caplog.clear()
        got = []
        with f.set_kernel_enabled("gpu", enabled=False):
            got.append(f(x).item())
        f.register_kernel("cpu")(lambda x: x + 2)
        got.append(f(x).item())
        with f.set_kernel_enabled("cpu", enabled=False):
            got.append(f(x).item())
            with f.set_kernel_enabled("cpu", enabled=False):
                got.append(f(x).item())
        got.append(f(x).item())
        return got, [r.getMessage() for r in caplog.records]
    e, t = both(kernels)
    assert e == t

    def inplace_opcheck(T):
        return T.library.opcheck(T.ops.aten.sin_.default, (T.randn(3),))
    e, t = both(inplace_opcheck)
    assert e == t


def test_schema_type_errors_point_at_the_type():
    for schema in ("foo12(Tensor a) -> asdfasdf", "foo12(asdf a) -> Tensor",
                   "foo12(int64_t a) -> Tensor", "foo12(double a) -> Tensor"):
        def define(T, schema=schema):
            with T.library._scoped_library("_cor_types", "FRAGMENT") as lib:
                lib.define(schema)
        e, t = raised(define, ember), raised(define, torch)
        assert e == t

    def opaque(T):
        name = "torch.testing.CorOpaqueForTest"
        T._C._register_opaque_type(name)
        try:
            with T.library._scoped_library("_cor_types", "FRAGMENT") as lib:
                lib.define(f"bar({name} a) -> Tensor")
                return T._C._is_opaque_type_registered(name)
        finally:
            T._C._unregister_opaque_type(name)
    e, t = both(opaque)
    assert e == t is True


def test_supports_tensorlist():
    def run(T):
        seen = []

        @T._library.autograd.supports_tensorlist
        class Stack(T.autograd.Function):
            @staticmethod
            def forward(ctx, xs):
                return T.stack(xs)

            @staticmethod
            def backward(ctx, grad):
                seen.append(ctx.needs_input_grad)
                return list(grad.unbind(0))

        @T._library.autograd.supports_tensorlist
        class Bar(T.autograd.Function):
            @staticmethod
            def forward(ctx, xs):
                return [xs[i] + i for i in range(len(xs))]

            @staticmethod
            def backward(ctx, grads):
                return Bar.apply(grads[:2]) + Bar.apply(grads[2:])
        xs = [T.tensor(float(i), requires_grad=True) for i in range(3)]
        grads = T.autograd.grad((Stack.apply(xs) * T.tensor([1.0, 2, 3])).sum(), xs)
        ys = [T.tensor(0.0, requires_grad=True) for _ in range(5)]
        sum(Bar.apply(ys)).backward()
        errors = [raised(lambda T: Stack.forward(None, xs), T),
                  raised(lambda T: Stack.backward(None, xs), T)]
        return seen, [g.item() for g in grads], [y.grad.item() for y in ys], \
            [e[0] for e in errors]
    e, t = both(run)
    assert e == t


def test_python_kernel_gets_its_own_defaults_for_arguments_left_at_the_schema_default():
    # PyTorch's boxed call into a Python kernel leaves out arguments equal to their schema
    # default (trailing positional ones, keyword-only ones), so the function's defaults apply
    def run(T):
        seen = []
        ns = "_ember_defaults_" + T.__name__

        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: T.Tensor, a: float = 2.5, j: T.device = "cpu", *, k: int = 3) -> T.Tensor:
            seen.append((a, type(j).__name__, k))
            return x.clone()
        f(T.ones(2))
        f(T.ones(2), 1.5)
        f(T.ones(2), 2.5, "cpu", k=4)
        f(T.ones(2), 1.5, T.device("cpu"))
        lib = T.library.Library(ns, "FRAGMENT")
        lib.define("g(Tensor x, int n=2, *, bool flag=False) -> Tensor")
        lib.impl("g", lambda x, n=-1, flag=None: (seen.append((n, flag)), x.clone())[1], "CPU")
        getattr(T.ops, ns).g(T.ones(1))
        getattr(T.ops, ns).g(T.ones(1), 5, flag=True)
        return seen
    e, t = both(run)
    assert e == t


def test_impl_backward_refuses_an_op_with_a_library_autograd_kernel():
    def run(T):
        ns = "_ember_autograd_key_" + T.__name__
        lib = T.library.Library(ns, "FRAGMENT")
        lib.define("foo(Tensor x) -> Tensor")
        lib.impl("foo", lambda x: x.sin(), "AutogradCPU")
        from importlib import import_module
        custom_ops = import_module(T.__name__ + "._custom_ops")

        @custom_ops.impl_save_for_backward(f"{ns}::foo")
        def save(inputs, output):
            return inputs
    same_error(run, r"already has an Autograd kernel registered to DispatchKey::AutogradCPU")
