"""Checks ported from PyTorch's test/test_autograd.py, run against torch and ember."""
import pytest

from _ported import same


def _leaf(L, *shape, dtype=None):
    return L.arange(1., 1 + (shape[0] if shape else 1) * (shape[1] if len(shape) > 1 else 1),
                    dtype=dtype).reshape(shape).requires_grad_()


def _hooks_on_tensor(L):
    x = _leaf(L, 3)
    y = x * 2
    seen = []
    h = y.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    x.register_hook(lambda g: seen.append(g.clone()))
    y.sum().backward()
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    return seen, x.grad


def _retain_grad(L):
    x = _leaf(L, 3)
    y = x * 2
    y.retain_grad()
    z = y.sum()
    z.retain_grad()
    w = y[1:]  # a view
    w.retain_grad()
    (z * 3 + w.sum()).backward()
    return y.grad, z.grad, w.grad, y.retains_grad, x.retains_grad, x.is_leaf, y.is_leaf


def _version_counter_error(L):
    a = _leaf(L, 3)
    b = a.sigmoid()
    b.mul_(2)
    b.sum().backward()


def _version_counter_values(L):
    a = L.ones(3)
    v0 = a._version
    a.add_(1)
    a[0] = 5
    b = a.view(3)
    b.mul_(2)
    return v0, a._version, b._version, a.detach()._version


def _saved_tensor_modified_via_view(L):
    a = _leaf(L, 4)
    b = a * 1
    c = b.exp()
    b[1:].zero_()
    c.sum().backward()


def _grad_allow_unused(L):
    x, y = _leaf(L, 2), _leaf(L, 2)
    out = (x * 2).sum()
    return L.autograd.grad(out, [x, y], allow_unused=True)


def _grad_unused_error(L):
    x, y = _leaf(L, 2), _leaf(L, 2)
    return L.autograd.grad((x * 2).sum(), [x, y])


def _grad_materialize(L):
    x, y = _leaf(L, 2), _leaf(L, 2)
    return L.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)


def _grad_materialize_no_allow(L):
    x, y = _leaf(L, 2), _leaf(L, 2)
    return L.autograd.grad((x * 2).sum(), [x, y], allow_unused=False, materialize_grads=True)


def _grad_nonscalar(L):
    x = _leaf(L, 2)
    return L.autograd.grad(x * 2, x)


def _grad_outputs_shape_mismatch(L):
    x = _leaf(L, 2)
    return L.autograd.grad(x * 2, x, grad_outputs=L.ones(3))


def _backward_twice(L):
    x = _leaf(L, 2)
    y = (x.exp() * 2).sum()
    y.backward()
    y.backward()


def _backward_twice_retain(L):
    x = _leaf(L, 2)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def _create_graph_double(L):
    x = _leaf(L, 3)
    (g,) = L.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (gg,) = L.autograd.grad(g.sum(), x)
    return g, gg, g.requires_grad, type(g.grad_fn).__name__


def _requires_grad_propagation(L):
    a = L.ones(2, requires_grad=True)
    b = L.ones(2)
    with L.no_grad():
        c = a * 2
    with L.enable_grad():
        d = a * b
    e = a.detach()
    f = b.requires_grad_(True)
    return (c.requires_grad, d.requires_grad, e.requires_grad, f.requires_grad, (a + 1).is_leaf,
            L.ones(2, dtype=L.int64).requires_grad, a.int().requires_grad, (a > 0).requires_grad,
            a.argmax().requires_grad, a.sum().requires_grad, a.detach_().requires_grad)


def _int_requires_grad(L):
    return L.ones(2, dtype=L.long, requires_grad=True)


def _set_requires_grad_non_leaf(L):
    a = _leaf(L, 2) * 2
    a.requires_grad_(False)


def _grad_accumulates(L):
    x = _leaf(L, 2)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    g = x.grad
    x.grad.zero_()
    (x * 4).sum().backward()
    return g, x.grad


def _grad_setter_errors(L):
    x = _leaf(L, 2)
    x.grad = L.ones(3)


def _grad_setter_dtype(L):
    x = _leaf(L, 2)
    x.grad = L.ones(2, dtype=L.float64)


def _nonleaf_grad_warning(L):
    import warnings
    x = _leaf(L, 2)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = y.grad
    return g, [("is not a leaf Tensor is being accessed" in str(i.message)) for i in w]


def _backward_nonscalar(L):
    (_leaf(L, 2) * 2).backward()


def _backward_no_grad_fn(L):
    L.ones(2).sum().backward()


def _backward_inputs(L):
    x, y = _leaf(L, 2), _leaf(L, 2)
    (x * y).sum().backward(inputs=[x])
    return x.grad, y.grad


def _function_ctx(L):
    class Square(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 2 * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g * ctx.k, None
    x = _leaf(L, 3)
    y = Square.apply(x, 3.)
    y.sum().backward()
    return y, x.grad, type(y.grad_fn).__name__


def _function_wrong_grad_count(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g
    Bad.apply(_leaf(L, 2)).sum().backward()


def _function_wrong_grad_shape(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]
    Bad.apply(_leaf(L, 2)).sum().backward()


def _function_mark_non_differentiable(L):
    class Sort(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return L.zeros_like(gv).scatter(0, i, gv)
    x = L.tensor([3., 1, 2], requires_grad=True)
    v, i = Sort.apply(x)
    (v * L.tensor([1., 2, 3])).sum().backward()
    return v, i, i.requires_grad, x.grad


def _anomaly_nan(L):
    x = L.tensor([0.], requires_grad=True)
    with L.autograd.detect_anomaly():
        (x.sqrt() * 0).sum().backward()
    return x.grad


def _grad_mode_decorators(L):
    @L.no_grad()
    def f(x):
        return x * 2

    @L.inference_mode()
    def g(x):
        return x * 2
    x = _leaf(L, 2)
    a, b = f(x), g(x)
    return (a.requires_grad, b.requires_grad, b.is_inference(), L.is_grad_enabled(),
            L.is_inference_mode_enabled())


def _inference_tensor_in_autograd(L):
    with L.inference_mode():
        t = L.ones(2)
    x = _leaf(L, 2)
    return (x * t).sum()


def _inference_inplace_outside(L):
    with L.inference_mode():
        t = L.ones(2)
    t.add_(1)


def _set_grad_enabled(L):
    x = _leaf(L, 2)
    with L.set_grad_enabled(False):
        a = x * 2
    L.set_grad_enabled(False)
    b = x * 2
    L.set_grad_enabled(True)
    return a.requires_grad, b.requires_grad, L.is_grad_enabled()


def _hook_on_leaf_modifies_grad(L):
    x = _leaf(L, 2)
    x.register_hook(lambda g: g * 0 + 7)
    (x * 3).sum().backward()
    return x.grad


def _post_accumulate_hook(L):
    x = _leaf(L, 2)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    return seen


def _hook_on_no_grad_tensor(L):
    L.ones(2).register_hook(lambda g: g)


def _grad_fn_names(L):
    x = _leaf(L, 2, 2)
    outs = [x + 1, x * 2, x.sum(), x.mean(), x.t(), x[0], x.view(4), x.exp(), x @ x, x.relu(),
            x.clone(), x.expand(2, 2, 2), x.transpose(0, 1), x.unsqueeze(0), x.reshape(4),
            L.cat([x, x]), x.pow(2), x.max(), x.sigmoid(), x.to(L.float64), x.abs(), -x]
    return [type(o.grad_fn).__name__ for o in outs]


def _next_functions(L):
    x = _leaf(L, 2)
    y = (x * 2 + 1).sum()
    fn = y.grad_fn
    return [(type(n).__name__ if n is not None else None, i) for n, i in fn.next_functions], \
        type(fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]).__name__


def _no_grad_inplace_on_leaf(L):
    x = _leaf(L, 2)
    with L.no_grad():
        x.mul_(2)
    (x * 1).sum().backward()
    return x, x.grad, x._version


def _detach_shares_version(L):
    x = _leaf(L, 2)
    y = x.exp()
    y.detach().zero_()
    y.sum().backward()


def _functional_jacobian(L):
    x = L.tensor([1., 2.])
    return (L.autograd.functional.jacobian(lambda t: t ** 2, x),
            L.autograd.functional.hessian(lambda t: (t ** 3).sum(), x),
            L.autograd.functional.vjp(lambda t: t * 2, x, L.ones(2)),
            L.autograd.functional.jvp(lambda t: t * 3, x, L.ones(2)))


def _gradcheck(L):
    x = L.tensor([1., 2.], dtype=L.float64, requires_grad=True)
    return L.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,)), \
        L.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))


def _complex_grad(L):
    z = L.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    return z.grad


def _backward_on_complex_output(L):
    z = L.tensor([1 + 2j], requires_grad=True)
    (z * 2).sum().backward()


def _forward_ad(L):
    import importlib
    fwAD = importlib.import_module(L.__name__ + ".autograd.forward_ad")
    with fwAD.dual_level():
        d = fwAD.make_dual(L.tensor([1., 2.]), L.tensor([1., 0.]))
        out = fwAD.unpack_dual(d.sin() * d)
    return out.primal, out.tangent


CHECKS = {
    "tensor_hooks": _hooks_on_tensor,
    "retain_grad": _retain_grad,
    "version_counter_error": (_version_counter_error,
                              "one of the variables needed for gradient computation has been modified by an "
                              "inplace operation: \\[torch.FloatTensor \\[3\\]\\], which is output 0 of "
                              "Sigmoid, is at version 1; expected version 0 instead"),
    "version_counter_values": _version_counter_values,
    "saved_modified_via_view": (_saved_tensor_modified_via_view,
                                "one of the variables needed for gradient computation has been modified"),
    "grad_allow_unused": _grad_allow_unused,
    "grad_unused_error": (_grad_unused_error, "The differentiated Tensor at index 1 appears to not have been used in the graph"),
    "grad_materialize": _grad_materialize,
    "grad_materialize_no_allow": (_grad_materialize_no_allow, "Expected allow_unused to be True or not passed"),
    "grad_nonscalar": (_grad_nonscalar, "grad can be implicitly created only for scalar outputs"),
    "grad_outputs_shape": (_grad_outputs_shape_mismatch, "Mismatch in shape: grad_output\\[0\\] has a shape of"),
    "backward_twice": (_backward_twice, "Trying to backward through the graph a second time"),
    "backward_twice_retain": _backward_twice_retain,
    "create_graph_double": _create_graph_double,
    "requires_grad_propagation": _requires_grad_propagation,
    "int_requires_grad": (_int_requires_grad, "Only Tensors of floating point and complex dtype can require gradients"),
    "set_requires_grad_non_leaf": (_set_requires_grad_non_leaf, "you can only change requires_grad flags of leaf"),
    "grad_accumulates": _grad_accumulates,
    "grad_setter_shape": (_grad_setter_errors, "attempting to assign a gradient of size '\\[3\\]' to a tensor of size '\\[2\\]'"),
    "grad_empty_inputs": (lambda L: L.autograd.grad(_leaf(L, 2).sum(), []), "`inputs` argument to `grad\\(\\)` cannot be empty"),
    "factory_int_requires_grad": (lambda L: L.zeros(2, dtype=L.int32, requires_grad=True), "Only Tensors of floating point and complex"),
    "grad_setter_dtype": (_grad_setter_dtype, "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'"),
    "nonleaf_grad_warning": _nonleaf_grad_warning,
    "backward_nonscalar": (_backward_nonscalar, "grad can be implicitly created only for scalar outputs"),
    "backward_no_grad_fn": (_backward_no_grad_fn, "element 0 of tensors does not require grad and does not have a grad_fn"),
    "backward_inputs": _backward_inputs,
    "function_ctx": _function_ctx,
    "function_wrong_grad_count": (_function_wrong_grad_count, "function BadBackward returned an incorrect number of "
                                                              "gradients \\(expected 1, got 2\\)"),
    "function_wrong_grad_shape": (_function_wrong_grad_shape, "Function BadBackward returned an invalid gradient at "
                                                              "index 0 - got \\[1\\] but expected shape compatible with \\[2\\]"),
    "function_mark_non_differentiable": _function_mark_non_differentiable,
    "anomaly_nan": (_anomaly_nan, "Function 'SqrtBackward0' returned nan values in its 0th output"),
    "grad_mode_decorators": _grad_mode_decorators,
    "inference_tensor_in_autograd": (_inference_tensor_in_autograd,
                                     "Inference tensors cannot be saved for backward"),
    "inference_inplace_outside": (_inference_inplace_outside, "Inplace update to inference tensor outside InferenceMode"),
    "set_grad_enabled": _set_grad_enabled,
    "hook_on_leaf": _hook_on_leaf_modifies_grad,
    "post_accumulate_hook": _post_accumulate_hook,
    "hook_on_no_grad_tensor": (_hook_on_no_grad_tensor, "cannot register a hook on a tensor that doesn't require gradient"),
    "grad_fn_names": _grad_fn_names,
    "next_functions": _next_functions,
    "no_grad_inplace_on_leaf": _no_grad_inplace_on_leaf,
    "detach_shares_version": (_detach_shares_version, "modified by an inplace operation"),
    "functional_jacobian": _functional_jacobian,
    "gradcheck": _gradcheck,
    "complex_grad": _complex_grad,
    "backward_complex_output": (_backward_on_complex_output, "grad can be implicitly created only for real scalar outputs"),
    "forward_ad": _forward_ad,
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_autograd(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)
