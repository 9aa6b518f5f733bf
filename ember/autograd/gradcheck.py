"""gradcheck / gradgradcheck: compare autograd's Jacobian with finite differences.

For every differentiable input x_i and output y_j: the numerical Jacobian perturbs one element
of x_i by +-eps (central differences); the analytical one back-propagates a one-hot grad_output
through `autograd.grad`. They must agree within atol + rtol * |numerical|. Use float64.
"""
import numpy as np

from .._core.tensor import _wrap


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    from .._core.tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable_positions(out):
    """Positions of the outputs that require grad; perturbed runs (under no_grad) read the same."""
    from .._core.tensor import Tensor
    return [k for k, o in enumerate(_as_tuple(out)) if isinstance(o, Tensor) and o._rg]


def _numerical_jacobian(fn, inputs, i, positions, eps):
    """d outputs / d inputs[i] by central differences, one row per element of inputs[i].

    The element is perturbed in place through the NumPy view of the input's memory, so
    non-contiguous inputs work too. Grad mode stays on: gradgradcheck's function computes
    gradients itself.
    """
    arr = inputs[i]._np
    rows = []
    for idx in np.ndindex(arr.shape):
        orig = arr[idx].copy()
        arr[idx] = orig - eps
        lo = _flat_outputs(fn(*inputs), positions)
        arr[idx] = orig + eps
        hi = _flat_outputs(fn(*inputs), positions)
        arr[idx] = orig
        rows.append([(h - l) / (2 * eps) for h, l in zip(hi, lo)])
    if not rows:
        return _empty_jacobians(fn, inputs, positions)
    return [np.array([r[j] for r in rows]).reshape(arr.size, -1) for j in range(len(positions))]


def _empty_jacobians(fn, inputs, positions):
    """An input without elements: Jacobians with no rows, as wide as the outputs."""
    return [np.zeros((0, o.size)) for o in _flat_outputs(fn(*inputs), positions)]


def _flat_outputs(out, positions):
    out = _as_tuple(out)
    return [out[k].detach()._np.astype(np.float64).reshape(-1) for k in positions]


def _analytical_jacobian(inputs, diff_idx, outputs):
    """The same Jacobians from autograd: one backward per output element (a one-hot grad)."""
    from . import grad
    jacs = [[np.zeros((inputs[i].numel(), o.numel()), dtype=np.float64) for o in outputs]
            for i in diff_idx]
    for j, o in enumerate(outputs):
        for k in range(o.numel()):
            g = o.detach().clone().zero_()  # may be non-contiguous like `o`: index, don't reshape
            g._np[np.unravel_index(k, g._np.shape)] = 1
            gi = grad(o, [inputs[i] for i in diff_idx], g, retain_graph=True, allow_unused=True)
            for n, gx in enumerate(gi):
                if gx is not None:
                    if gx.shape != inputs[diff_idx[n]].shape:
                        raise GradcheckError(f"Gradient for input {diff_idx[n]} has shape "
                                             f"{list(gx.shape)}, expected "
                                             f"{list(inputs[diff_idx[n]].shape)}")
                    jacs[n][j][:, k] = gx.detach()._np.astype(np.float64).reshape(-1)
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if the analytical gradients of `func` at `inputs` match finite differences."""
    from .._core.tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype not in _double_types():
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ")
    out = func(*inputs)
    positions = _differentiable_positions(out)
    if not positions:  # nothing to differentiate: the numerical Jacobian must be zero
        floats = [k for k, o in enumerate(_as_tuple(out)) if isinstance(o, Tensor) and
                  (o.dtype.is_floating_point or o.dtype.is_complex)]
        for i in diff_idx:
            if any(np.any(jac) for jac in _numerical_jacobian(func, inputs, i, floats, eps)):
                return _fail("Numerical gradient for function expected to be zero",
                             raise_exception)
        return True
    outputs = [_as_tuple(out)[k] for k in positions]
    if check_forward_ad:
        forward = _forward_jacobian(func, inputs, diff_idx, positions)
        for n, i in enumerate(diff_idx):
            numerical = _numerical_jacobian(func, inputs, i, positions, eps)
            for j in range(len(outputs)):
                if not np.allclose(forward[n][j], numerical[j], rtol=rtol, atol=atol):
                    return _fail(f"Jacobian computed with forward mode mismatch for output {j} "
                                 f"with respect to input {i},\nnumerical:{_wrap(numerical[j])}"
                                 f"\nanalytical:{_wrap(forward[n][j])}\n", raise_exception)
        if not check_backward_ad:
            return True
    analytical = _analytical_jacobian(inputs, diff_idx, outputs)
    for n, i in enumerate(diff_idx):
        numerical = _numerical_jacobian(func, inputs, i, positions, eps)
        for j in range(len(outputs)):
            a, b = analytical[n][j], numerical[j]
            if not np.allclose(a, b, rtol=rtol, atol=atol):
                return _fail(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                             f"numerical:{_wrap(b)}\nanalytical:{_wrap(a)}\n",
                             raise_exception)
    return True


def _forward_jacobian(fn, inputs, diff_idx, positions):
    """d outputs / d inputs[i] by forward-mode AD: one dual-level run per input element, its
    tangent a one-hot tensor."""
    from . import forward_ad as fwAD
    jacs = []
    for i in diff_idx:
        x = inputs[i]
        cols = []
        for k in range(x.numel()):
            t = x.detach().clone().zero_()
            t._np[np.unravel_index(k, t._np.shape)] = 1
            with fwAD.dual_level():
                args = list(inputs)
                args[i] = fwAD.make_dual(x.detach(), t)
                out = _as_tuple(fn(*args))
                cols.append([_flat_tangent(out[p], fwAD) for p in positions])
        if not cols:
            jacs.append(_empty_jacobians(fn, inputs, positions))
            continue
        jacs.append([np.array([c[j] for c in cols]).reshape(x.numel(), -1)
                     for j in range(len(positions))])
    return jacs


def _flat_tangent(o, fwAD):
    t = fwAD.unpack_dual(o).tangent
    if t is None:
        return np.zeros(o.numel())
    return t.detach()._np.astype(np.float64).reshape(-1)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the function inputs, grad_outputs -> gradients (second derivatives)."""
    from .._core.tensor import Tensor
    from . import grad
    inputs = _as_tuple(inputs)
    out = func(*inputs)
    positions = _differentiable_positions(out)
    if not positions:
        return gradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol,
                         raise_exception=raise_exception)
    if grad_outputs is None:
        grad_outputs = tuple(_as_tuple(out)[k].detach().clone().normal_().requires_grad_()
                             for k in positions)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _as_tuple(func(*ins))
        gs = grad([outs[k] for k in positions], [ins[i] for i in diff_idx], gos,
                  create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def _double_types():
    from .._core import dtype as D
    return (D.float64, D.complex128)


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False
