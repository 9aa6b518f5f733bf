"""gradcheck / gradgradcheck: compare autograd's Jacobian with finite differences.

For every differentiable input x_i and output y_j: the numerical Jacobian perturbs one element
of x_i by +-eps (central differences); the analytical one back-propagates a one-hot grad_output
through `autograd.grad`. They must agree within atol + rtol * |numerical|. Use float64.
"""
import numpy as np


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if o._rg)


def _numerical_jacobian(fn, inputs, i, outputs, eps):
    from .grad_mode import no_grad
    x = inputs[i]
    flat = x._np.reshape(-1) if x._np.flags.c_contiguous else None
    if flat is None:
        raise GradcheckError("gradcheck needs contiguous inputs")
    jac = [np.zeros((x.numel(), o.numel()), dtype=np.float64) for o in outputs]
    for k in range(x.numel()):
        orig = flat[k].copy()
        with no_grad():
            flat[k] = orig - eps
            lo = [o.detach()._np.astype(np.float64).copy().reshape(-1)
                  for o in _differentiable_outputs(fn(*inputs))]
            flat[k] = orig + eps
            hi = [o.detach()._np.astype(np.float64).copy().reshape(-1)
                  for o in _differentiable_outputs(fn(*inputs))]
            flat[k] = orig
        for j in range(len(outputs)):
            jac[j][k] = (hi[j] - lo[j]) / (2 * eps)
    return jac


def _analytical_jacobian(inputs, diff_idx, outputs):
    from . import grad
    from .._python_bindings import zeros_like
    jacs = [[np.zeros((inputs[i].numel(), o.numel()), dtype=np.float64) for o in outputs]
            for i in diff_idx]
    for j, o in enumerate(outputs):
        for k in range(o.numel()):
            g = zeros_like(o)
            g._np.reshape(-1)[k] = 1
            gi = grad(o, [inputs[i] for i in diff_idx], g, retain_graph=True, allow_unused=True)
            for n, gx in enumerate(gi):
                if gx is not None:
                    jacs[n][j][:, k] = gx.detach()._np.astype(np.float64).reshape(-1)
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if the analytical gradients of `func` at `inputs` match finite differences."""
    from .._tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype not in _double_types():
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex.")
    outputs = _differentiable_outputs(func(*inputs))
    if not outputs:
        return _fail("gradcheck: no output requires grad", raise_exception)
    analytical = _analytical_jacobian(inputs, diff_idx, outputs)
    for n, i in enumerate(diff_idx):
        numerical = _numerical_jacobian(func, inputs, i, outputs, eps)
        for j in range(len(outputs)):
            a, b = analytical[n][j], numerical[j]
            if not np.allclose(a, b, rtol=rtol, atol=atol):
                return _fail(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                             f"numerical:{b}\nanalytical:{a}\n", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the function inputs, grad_outputs -> gradients (second derivatives)."""
    from .._tensor import Tensor
    from . import grad
    from .._python_bindings import randn_like
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        from .. import _generator
        grad_outputs = tuple(randn_like(o, dtype=o.dtype).requires_grad_() for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func(*ins))
        gs = grad(outs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def _double_types():
    from .. import _dtype as D
    return (D.float64, D.complex128)


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False
