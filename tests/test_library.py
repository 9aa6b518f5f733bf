"""ember.library against torch.library: the canonical `my_add(x, y) = 2*x + y` defined with a
CPU kernel, a fake (Meta) kernel and an autograd formula, run in both libraries."""
import itertools

import pytest
import torch

import ember
from test_autograd import leaf, same

_count = itertools.count()


def define_my_add(L, ns, *, fake=True, autograd=True):
    """The canonical example, in library L under namespace `ns`; returns the Library."""
    lib = L.library.Library(ns, "DEF")
    lib.define("my_add(Tensor x, Tensor y) -> Tensor")

    @L.library.impl(f"{ns}::my_add", "cpu")
    def my_add_cpu(x, y):
        return 2 * x + y

    if fake:
        @L.library.register_fake(f"{ns}::my_add")
        def my_add_fake(x, y):
            return L.empty_like(x)

    if autograd:
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            assert x.shape == y.shape
            return (2 * grad if ctx.needs_input_grad[0] else None,
                    grad if ctx.needs_input_grad[1] else None)
        L.library.register_autograd(f"{ns}::my_add", backward, setup_context=setup_context)
    return lib


_libs = {}  # namespace -> Library objects (and op names) to tear down after the test


@pytest.fixture
def ns():
    """A fresh namespace per test; whatever the test defines in it is removed after."""
    name = f"embertest{next(_count)}"
    yield name
    for lib in _libs.pop(name, []):
        lib._destroy()


def my_add(L, ns):
    """ops.<ns>.my_add of library L, defined on first use."""
    namespace = getattr(L.ops, ns)
    if not any(getattr(lib, "_lib_module", None) is L for lib in _libs.get(ns, [])):
        lib = define_my_add(L, ns)
        lib._lib_module = L
        _libs.setdefault(ns, []).append(lib)
    return namespace.my_add


def test_forward_and_backward(ns):
    def f(L):
        op = my_add(L, ns)
        x, y = leaf(L, [1., 2.]), leaf(L, [3., 4.])
        z = op(x, y)
        z.sum().backward()
        return z, x.grad, y.grad, z.grad_fn.name(), len(z.grad_fn.next_functions)
    z, gx, gy, _, _ = same(f)
    assert gx.tolist() == [2., 2.] and gy.tolist() == [1., 1.]  # the analytic 2 and 1


def test_only_inputs_that_need_grad(ns):
    def f(L):
        op = my_add(L, ns)
        x = leaf(L, [1., 2.])
        z = op(x, L.tensor([3., 4.]))
        z.sum().backward()
        return x.grad, [n is None for n, _ in z.grad_fn.next_functions]
    same(f)


def test_overload_packet_and_default(ns):
    def f(L):
        op = my_add(L, ns)
        x, y = L.tensor([1.]), L.tensor([2.])
        return op(x, y), op.default(x, y), op.default(x, y).requires_grad
    same(f)
    assert isinstance(ember.ops.__getattr__(ns).my_add.default, ember._dispatch.dispatcher.OpOverload)


def test_meta_tensors_give_shapes_only(ns):
    def f(L):
        op = my_add(L, ns)
        m = op(L.empty(3, 2, device="meta"), L.empty(3, 2, device="meta"))
        return m.shape, m.device.type, m.dtype
    same(f)


def test_missing_kernel_names_op_and_key(ns):
    lib = ember.library.Library(ns, "DEF")
    lib.define("no_meta(Tensor x) -> Tensor")
    ember.library.impl(f"{ns}::no_meta", "cpu", lambda x: x * 1)
    _libs.setdefault(ns, []).append(lib)
    op = getattr(ember.ops, ns).no_meta
    assert op(ember.ones(2)).tolist() == [1., 1.]
    with pytest.raises(NotImplementedError, match=rf"'{ns}::no_meta'.*'Meta' backend"):
        op(ember.empty(2, device="meta"))


def test_double_backward_through_registered_formula(ns):
    def f(L):
        lib = L.library.Library(ns, "DEF")
        _libs.setdefault(ns, []).append(lib)
        lib.define("cube(Tensor x) -> Tensor")
        L.library.impl(f"{ns}::cube", "cpu", lambda x: x ** 3)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * grad
        L.library.register_autograd(f"{ns}::cube", backward, setup_context=setup_context)
        x = leaf(L, [1., 2.], L.float64)
        g, = L.autograd.grad(getattr(L.ops, ns).cube(x).sum(), x, create_graph=True)
        return g, L.autograd.grad(g.sum(), x)
    same(f)


def test_kernel_written_in_ops_records_nothing_below_autograd(ns):
    op = my_add(ember, ns)
    x = ember.tensor([1., 2.], requires_grad=True)
    z = op(x, ember.ones(2))
    assert z.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    with ember.no_grad():
        assert op(x, ember.ones(2)).grad_fn is None


def test_library_object_define_and_impl(ns):
    lib = ember.library.Library(ns, "DEF")
    _libs.setdefault(ns, []).append(lib)
    assert lib.define("scale(Tensor x, float k=2.0) -> Tensor") == "scale"
    lib.impl("scale", lambda x, k=2.0: x * k, "CPU")
    lib.impl("scale", lambda x, k=2.0: ember.empty_like(x), "Meta")
    op = getattr(ember.ops, ns).scale
    assert op(ember.ones(2)).tolist() == [2., 2.]
    assert op(ember.ones(2), k=3.0).tolist() == [3., 3.]
    assert op(ember.empty(4, device="meta")).shape == (4,)
    with pytest.raises(RuntimeError, match="already defined"):
        lib.define("scale(Tensor x, float k=2.0) -> Tensor")

    impl_lib = ember.library.Library(ns, "IMPL")
    with pytest.raises(RuntimeError):
        impl_lib.define("other(Tensor x) -> Tensor")


def test_functional_define_and_composite(ns):
    ember.library.define(f"{ns}::twice", "(Tensor x) -> Tensor")
    _libs.setdefault(ns, []).append(_ForgetOnDestroy(f"{ns}::twice"))
    # a composite kernel serves every device and autograd sees the ops it calls
    ember.library.impl(f"{ns}::twice", "default", lambda x: x + x)
    op = getattr(ember.ops, ns).twice
    x = ember.tensor([1., 2.], requires_grad=True)
    y = op(x)
    y.sum().backward()
    assert y.grad_fn.name() == "AddBackward0" and x.grad.tolist() == [2., 2.]
    assert op(ember.empty(3, device="meta")).shape == (3,)


def test_autograd_key_kernel(ns):
    lib = ember.library.Library(ns, "DEF")
    _libs.setdefault(ns, []).append(lib)
    lib.define("clip_grad_id(Tensor x) -> Tensor")

    class ClipGrad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.clamp(-1, 1)

    lib.impl("clip_grad_id", lambda x: x * 1, "CPU")
    lib.impl("clip_grad_id", ClipGrad.apply, "Autograd")
    x = ember.tensor([1., 2.], requires_grad=True)
    (getattr(ember.ops, ns).clip_grad_id(x) * 5).sum().backward()
    assert x.grad.tolist() == [1., 1.]


def test_shows_up_in_explain(ns):
    op = my_add(ember, ns)
    x = ember.tensor([1., 2.], requires_grad=True)
    with ember.explain() as ex:
        op(x, x).sum().backward()
    rows = {}
    for r in ex.records:
        rows.setdefault(r["op"], r)   # the first call of each op
    assert rows["my_add"]["keys"] == ["Autograd", "CPU"]
    assert rows["my_add"]["kernel"].endswith("my_add_cpu")
    assert rows["my_add"]["node"] == f"GeneratedBackwardFor_{ns}_my_add_defaultBackward"
    # the Function's forward calls the op again below autograd (dispatch modes see it, as in
    # PyTorch), and the kernel's own ops run nested under that
    inner = ex.records[ex.records.index(rows["my_add"]) + 1]
    assert inner["op"] == "my_add" and inner["depth"] == 1 and inner["keys"] == ["CPU"]
    assert f"GeneratedBackwardFor_{ns}_my_add_defaultBackward" in str(ex)


class _ForgetOnDestroy:
    def __init__(self, qualname):
        self.qualname = qualname

    def _destroy(self):
        from ember.library import _forget
        _forget(self.qualname)
