"""gradcheck / gradgradcheck: compare autograd's gradients with finite differences, as
torch.autograd.gradcheck.

The checks, in PyTorch's order: the inputs (one requires grad; no dimension of stride 0), the
outputs (none sparse); then, per differentiable output, the Jacobian from backward (one one-hot
grad_output per output element; the first element's row computed again: a difference beyond
`nondet_tol` means the backward is not reentrant, where PyTorch recomputes every row) against
central differences. A complex output is checked as its real
part and as its imaginary part; a complex input is perturbed along both parts, which gives the
conjugate Wirtinger derivative backward computes. After the Jacobians: a zero grad_output must
give zero gradients of the inputs' layout, dtype and shape, and undefined output gradients must
be accepted (`check_undefined_grad`). `check_forward_ad` compares forward-mode tangents with the
same finite differences (complex inputs split into parts instead of outputs).

`fast_mode` compares u^T J v for random unit vectors u, v instead of whole Jacobians, as
PyTorch's fast mode does (a complex output as its real and imaginary parts, as above).
`check_batched_grad` runs the backward of each output for two random grad_outputs one at a time
and as one call under vmap, and compares (PyTorch's _test_batched_grad);
`check_batched_forward_grad` does the same for forward mode: the tangents of the outputs for two
random tangents of each input, one at a time and as one call under torch._vmap_internals' vmap
(PyTorch's _test_batched_grad_forward_ad).
"""
import warnings

import numpy as np

from .._core.tensor import _wrap


class GradcheckError(RuntimeError):
    """A gradcheck or gradgradcheck failure (a RuntimeError, as PyTorch's)."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    from .._core.tensor import Tensor
    return isinstance(x, Tensor)


def _diff_input_indices(inputs):
    return [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _is_float_or_complex(t):
    return _is_tensor(t) and (t.is_floating_point() or t.is_complex())


def _values(t):
    """The NumPy array of a strided tensor's values. A wrapper subclass (made with
    `_make_wrapper_subclass`, as LoggingTensor) holds no data of its own: its values are
    copied out through its own dispatch, as PyTorch's gradcheck reads every tensor through ops."""
    import ember
    t = t.detach()
    if t._np is not None:
        return t._np
    out = ember.empty(t.shape, dtype=t.dtype)
    with ember.no_grad():
        out.copy_(t)
    return out._np


def _np64(t):
    """A tensor's values as a float64/complex128 NumPy array (dense)."""
    import ember
    if t.layout != ember.strided:
        t = t.to_dense()
    a = _values(t.detach().resolve_conj().resolve_neg())
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def _perturbable_values(x):
    """(array, write_back) for a strided input: the array to perturb in place and a function
    that makes a change to it visible to x. A plain tensor's array is its memory (nothing to
    write back); a wrapper subclass gets a copy of its values, copied back into it through its
    own dispatch after each change, by way of `.data` so that x's version counter stays as
    autograd saved it (PyTorch perturbs every input with copy_ on `.data`)."""
    import ember
    arr = x.detach()._np
    if arr is not None:
        return arr, lambda: None
    arr = _values(x).copy()

    def write_back():
        with ember.no_grad():
            x.data.copy_(_wrap(arr))
    return arr, write_back


def _raw_delta(x, delta):
    """The change to x's memory that changes its values by `delta`: a lazy conjugate view
    stores conj(v) and a lazy negative view -v, so the perturbation is mapped the same way."""
    if x.is_conj():
        delta = np.conj(delta)
    return -delta if x.is_neg() else delta


# ---------------------------------------------------------------------------------- checks

def _check_inputs(inputs):
    import ember
    any_rg = False
    for idx, inp in enumerate(inputs):
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        if inp.dtype not in (ember.float64, ember.complex128):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=3)
        content = inp._values() if inp.layout == ember.sparse_coo else inp
        if content.layout == ember.strided and any(
                st == 0 and sz > 1 for st, sz in zip(content.stride(), content.size())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
        any_rg = True
    if not any_rg:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _check_outputs(outputs):
    import ember
    if any(o.layout != ember.strided for o in outputs):
        raise ValueError("Sparse output is not supported at gradcheck yet. Please call "
                         "to_dense(masked_grad=...) on the output of fn for gradcheck.")


def _check_same_dtype_and_shape(a, b, eps, idx):
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs "
                             f"are perturbed on index {idx} by {eps}, but got: shapes {a.shape} "
                             f"and {b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs "
                             f"are perturbed on index {idx} by {eps}, but got: dtypes {a.dtype} "
                             f"and {b.dtype}.")


# ------------------------------------------------------------------------ numerical Jacobian

def _numerical_jacobians(fn, inputs, func_out, eps, target_indices=None):
    """{input index: [Jacobian per output of func_out]}, each (input.numel(), output.numel()),
    by central differences over every element of each input requiring grad. Outputs that are
    not floating/complex tensors get None.

    The element is perturbed in place through the NumPy view of the input's memory (so
    non-contiguous inputs work; a sparse COO input through its values: a row per specified
    element). A complex element is perturbed along its real and its imaginary part: the row is
    ds/dx + 1j * ds/dy, the gradient backward returns for a real s.
    """
    func_out = _as_tuple(func_out)
    float_pos = [k for k, o in enumerate(func_out) if _is_float_or_complex(o)]
    result = {}
    for i in (target_indices if target_indices is not None else _diff_input_indices(inputs)):
        x = inputs[i]
        arr, rows, write_back = _perturbable_elements(x)
        is_complex = np.iscomplexobj(arr)
        jac_dtype = np.complex128 if is_complex or any(func_out[k].is_complex()
                                                       for k in float_pos) else np.float64
        jacs = {k: np.zeros((x.numel(), func_out[k].numel()), dtype=jac_dtype) for k in float_pos}
        for idx, row in rows:
            cols = _central_difference(fn, inputs, arr, write_back, idx, _raw_delta(x, eps),
                                       float_pos, row)
            if is_complex:
                cols_y = _central_difference(fn, inputs, arr, write_back, idx,
                                             _raw_delta(x, eps * 1j),
                                             float_pos, row)
                cols = {k: cols[k] + 1j * cols_y[k] for k in cols}
            for k in float_pos:
                jacs[k][row] = cols[k]
        result[i] = [jacs.get(k) for k in range(len(func_out))]
    return result


def _perturbable_elements(x):
    """(NumPy array to perturb in place, [(index in it, row of the Jacobian)], write_back:
    call after each change, see _perturbable_values)."""
    import ember
    if x.layout == ember.sparse_coo:
        values = x._values().detach()._np
        indices = x._indices()._np
        dense_strides = np.cumprod((list(x.shape[1:]) + [1])[::-1])[::-1]
        rows = []
        for n in range(values.shape[0]):
            for inner in np.ndindex(values.shape[1:]):
                pos = list(indices[:, n]) + list(inner)
                rows.append(((n,) + inner, int(sum(p * s for p, s in zip(pos, dense_strides)))))
        return values, rows, lambda: None
    if x.layout != ember.strided:
        raise NotImplementedError(f"gradcheck: inputs of layout {x.layout} are not supported "
                                  "by ember yet")
    arr, write_back = _perturbable_values(x)
    return arr, [(idx, row) for row, idx in enumerate(np.ndindex(arr.shape))], write_back


def _densify(inputs):
    """Sparse COO inputs with every element of their sparse dims specified (gradcheck's
    non-masked semantics: unspecified elements are perturbed too)."""
    import ember
    out = []
    for x in inputs:
        if _is_tensor(x) and x.layout == ember.sparse_coo:
            sd = x.sparse_dim()
            dense = x.detach().to_dense()
            idx = ember.ones(tuple(x.shape[:sd])).nonzero().t()
            vals = dense[tuple(idx)] if sd else dense.unsqueeze(0)
            x = ember.sparse_coo_tensor(idx, vals, x.shape).coalesce().requires_grad_(
                x.requires_grad)
        out.append(x)
    return tuple(out)


def _central_difference(fn, inputs, arr, write_back, idx, delta, positions, row):
    orig = arr[idx].copy()
    arr[idx] = orig - delta
    write_back()
    lo = _as_tuple(fn(*inputs))
    lo = {k: (lo[k], _np64(lo[k])) for k in positions}   # copies: an output may alias the input
    arr[idx] = orig + delta
    write_back()
    hi = _as_tuple(fn(*inputs))
    hi = {k: (hi[k], _np64(hi[k])) for k in positions}
    arr[idx] = orig
    write_back()
    cols = {}
    for k in positions:
        _check_same_dtype_and_shape(lo[k][0], hi[k][0], abs(delta), row)
        cols[k] = ((hi[k][1] - lo[k][1]) / (2 * abs(delta))).reshape(-1)
    return cols


# ----------------------------------------------------------------------- analytical Jacobian

def _vjp_rows(output, diff_inputs, count=None):
    """Backward once per element of `output` (the first `count` ones) with a one-hot
    grad_output: the gradients."""
    import ember
    from . import grad
    rows = []
    for k in range(output.numel() if count is None else min(count, output.numel())):
        g = ember.zeros(output.shape, dtype=output.dtype, device=output.device)
        g._np.reshape(-1)[k] = 1
        rows.append(grad(output, diff_inputs, g, retain_graph=True, allow_unused=True))
    return rows


def _stack_rows(rows, diff_inputs, numel_out):
    """Jacobians (input.numel(), numel_out) from the per-output-element gradients; whether every
    gradient had its input's size and dtype."""
    sizes_ok = types_ok = True
    jacs = []
    for n, inp in enumerate(diff_inputs):
        dt = np.complex128 if inp.is_complex() else np.float64
        jac = np.zeros((inp.numel(), numel_out), dtype=dt)
        for k, gs in enumerate(rows):
            g = gs[n]
            if g is None:
                continue
            if g.size() != inp.size():
                sizes_ok = False
            elif g.dtype != inp.dtype:
                types_ok = False
            vals = _np64(g).reshape(-1)
            if vals.size != jac.shape[0]:
                raise GradcheckError("Analytical gradient has incorrect size")
            jac[:, k] = vals
        jacs.append(jac)
    return jacs, sizes_ok, types_ok


def _jacobians_equal(j1, j2, atol):
    return all(a.size == 0 or np.abs(a - b).max() <= atol for a, b in zip(j1, j2))


_NONDET_NOTE = ("\n\nNOTE: If your op relies on non-deterministic operations i.e., it is listed "
                "here:\nhttps://pytorch.org/docs/stable/generated/torch.use_deterministic_"
                "algorithms.html\nthis failure might be expected.\n")


def _checked_analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes):
    """The backward Jacobians of `output`, computed twice to find a non-reentrant backward."""
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]
    jacs, sizes_ok, types_ok = _stack_rows(_vjp_rows(output, diff_inputs), diff_inputs,
                                           output.numel())
    # PyTorch recomputes every column; ember the first one (half the backward passes)
    again, _, _ = _stack_rows(_vjp_rows(output, diff_inputs, 1), diff_inputs, 1)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not _jacobians_equal([j[:, :1] for j in jacs], again, nondet_tol):
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + _NONDET_NOTE)
    return jacs


def _forward_jacobians(fn, inputs, func_out, check_grad_dtypes):
    """{input index: [Jacobian per output]} from forward-mode AD: every differentiable input a
    dual tensor, one element's tangent 1 and every other tangent 0, a level per column."""
    import ember
    from . import forward_ad as fwAD
    func_out = _as_tuple(func_out)
    diff_idx = _diff_input_indices(inputs)
    result = {}
    for i in diff_idx:
        x = inputs[i]
        jacs = [None if not _is_float_or_complex(o) else np.zeros(
            (x.numel(), o.numel()), dtype=np.complex128 if (o.is_complex() or x.is_complex())
            else np.float64) for o in func_out]
        for k in range(x.numel()):
            with fwAD.dual_level():
                args = list(inputs)
                for m in diff_idx:
                    t = ember.zeros_like(inputs[m].detach())
                    if m == i:
                        t._np[np.unravel_index(k, tuple(x.shape))] = 1
                    args[m] = fwAD.make_dual(inputs[m].detach(), t)
                outs = _as_tuple(fn(*args))
                for j, o in enumerate(outs):
                    if jacs[j] is None:
                        continue
                    t = fwAD.unpack_dual(o).tangent
                    if t is None:
                        continue
                    if check_grad_dtypes and t.dtype != o.dtype:
                        raise GradcheckError("Forward AD gradient has dtype mismatch.")
                    jacs[j][k] = _np64(t).reshape(-1)
        result[i] = jacs
    return result


# ---------------------------------------------------------------------------- the comparison

def _notclose_msg(analytical, numerical, out_idx, in_idx, complex_indices, test_imag,
                  forward_ad=False):
    is_complex = bool(complex_indices) and (in_idx if forward_ad else out_idx) in complex_indices
    part = "imaginary" if test_imag else "real"
    element = "inputs" if forward_ad else "outputs"
    prefix = f"While considering the {part} part of complex {element} only, " if is_complex else ""
    mode = "computed with forward mode " if forward_ad else ""
    return (prefix + f"Jacobian {mode}mismatch for output {out_idx:d} with respect to input "
            f"{in_idx:d},\nnumerical:{_wrap(numerical)}\nanalytical:{_wrap(analytical)}\n")


def _slow_check(fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol,
                *, use_forward_ad=False, complex_indices=None, test_imag=False, masked=None):
    func_out = _as_tuple(func_out)
    numerical_inputs = inputs if masked else _densify(inputs)
    if not outputs:
        for jacs in _numerical_jacobians(fn, numerical_inputs, func_out, eps).values():
            if any(j is not None and np.any(j != 0) for j in jacs):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical = _numerical_jacobians(fn, numerical_inputs, func_out, eps)
    out_pos = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad]
    diff_idx = _diff_input_indices(inputs)
    if use_forward_ad:
        forward = _forward_jacobians(fn, inputs, func_out, check_grad_dtypes)
        for j, k in enumerate(out_pos):
            for n, i in enumerate(diff_idx):
                a, b = forward[i][k], numerical[i][k]
                if not np.allclose(a, b, rtol=rtol, atol=atol):
                    raise GradcheckError(_notclose_msg(a, b, j, n, complex_indices, test_imag,
                                                       forward_ad=True))
        return True
    for j, k in enumerate(out_pos):
        analytical = _checked_analytical_jacobians(inputs, func_out[k], nondet_tol,
                                                   check_grad_dtypes)
        for n, i in enumerate(diff_idx):
            a, b = analytical[n], numerical[i][k]
            if not np.allclose(a, b, rtol=rtol, atol=atol):
                raise GradcheckError(_notclose_msg(a, b, j, n, complex_indices, test_imag))
    return True


def _on_parts_of_complex_outputs(fn, part):
    def wrapped(*inputs):
        return tuple(part(o) if _is_tensor(o) and o.is_complex() else o
                     for o in _as_tuple(fn(*inputs)))
    return wrapped


def _on_parts_of_complex_inputs(fn, complex_idx, inputs, imag):
    """fn of real tensors standing for one part of each complex input (the other part fixed)."""
    def wrapped(*parts):
        args = list(parts)
        for i in complex_idx:
            args[i] = inputs[i].real + parts[i] * 1j if imag else parts[i] + inputs[i].imag * 1j
        return _as_tuple(fn(*args))
    return wrapped


def _check_real_imag(fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                     check_forward_ad, check_backward_ad, nondet_tol, check_undefined_grad,
                     masked):
    import ember
    common = dict(eps=eps, rtol=rtol, atol=atol, check_grad_dtypes=check_grad_dtypes,
                  nondet_tol=nondet_tol, masked=masked)
    if check_backward_ad:
        complex_out = [k for k, o in enumerate(outputs) if o.is_complex()]
        if any(_is_tensor(o) and o.is_complex() for o in _as_tuple(func_out)):
            for part, imag in ((ember.imag, True), (ember.real, False)):
                part_fn = _on_parts_of_complex_outputs(fn, part)
                out = part_fn(*inputs)
                _slow_check(part_fn, out, inputs, _differentiable_outputs(out),
                            complex_indices=complex_out, test_imag=imag, **common)
        else:
            _slow_check(fn, func_out, inputs, outputs, **common)
    if check_forward_ad:
        complex_in = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.is_complex()]
        if complex_in:
            for imag in (True, False):
                part_fn = _on_parts_of_complex_inputs(fn, complex_in, inputs, imag)
                part_inputs = tuple(
                    (x.imag if imag else x.real).detach().clone().requires_grad_(x.requires_grad)
                    if _is_tensor(x) and x.is_complex() else x for x in inputs)
                out = part_fn(*part_inputs)
                _slow_check(part_fn, out, part_inputs, _differentiable_outputs(out),
                            use_forward_ad=True, complex_indices=complex_in, test_imag=imag,
                            **common)
                if check_undefined_grad:
                    _test_undefined_forward_mode(part_fn, part_inputs)
        else:
            _slow_check(fn, func_out, inputs, outputs, use_forward_ad=True, **common)
            if check_undefined_grad:
                _test_undefined_forward_mode(fn, inputs)


def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    import ember
    from . import grad
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]
    grads = grad(outputs, diff_inputs, [ember.zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if gi.layout != ember.strided:
            if gi.layout != di.layout:
                raise GradcheckError(f"grad is incorrect layout ({gi.layout} is not "
                                     f"{di.layout})")
            kind = str(gi.layout).replace("torch.", "").replace("_coo", "")
            if gi.sparse_dim() != di.sparse_dim():
                raise GradcheckError(f"grad is {kind} tensor, but has incorrect sparse_dim "
                                     f"{gi.sparse_dim()}, expected {di.sparse_dim()}")
            if gi.dense_dim() != di.dense_dim():
                raise GradcheckError(f"grad is {kind} tensor, but has incorrect dense_dim "
                                     f"{gi.dense_dim()}, expected {di.dense_dim()}")
            gi, di = gi.to_dense(), di.to_dense()
        vals = _np64(gi)
        if (not np.allclose(vals, 0)) if masked else np.any(vals != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(fn, outputs, inputs):
    import ember
    from . import grad
    from .delayed_error import UndefinedGrad
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature "
                      "is enabled by default, but it may break existing callers of this "
                      "function. If this is true for you, you can call this function with "
                      '"check_undefined_grad=False" to disable the feature', stacklevel=4)

    def check(outs):
        try:
            grads = grad(outs, diff_inputs, [ember.zeros_like(o) for o in outs],
                         allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        for gi in grads:
            if gi is not None and np.any(_np64(gi) != 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    'undefined or zero. Please look at "Notes about undefined output gradients" '
                    'in "tools/autograd/derivatives.yaml"')
        return True

    # every output's gradient undefined; then, with several outputs, one at a time
    to_check = [[UndefinedGrad()(o) for o in _differentiable_outputs(fn(*inputs))]]
    if len(to_check[0]) > 1:
        for undef in range(len(outputs)):
            outs = _differentiable_outputs(fn(*inputs))
            to_check.append([UndefinedGrad()(o) if k == undef else o for k, o in enumerate(outs)])
    return all(check(outs) for outs in to_check)


def _test_undefined_forward_mode(fn, inputs):
    """A tangent left undefined (a plain tensor) must give what a zero tangent gives."""
    import ember
    from . import forward_ad as fwAD
    diff_idx = _diff_input_indices(inputs)
    with fwAD.dual_level():
        duals = list(inputs)
        for i in diff_idx:
            duals[i] = fwAD.make_dual(inputs[i].detach(), ember.rand_like(inputs[i].detach()))
        for i in diff_idx:
            keep = duals[i]
            duals[i] = fwAD.make_dual(inputs[i].detach(), ember.zeros_like(inputs[i].detach()))
            outs1 = [o for o in _as_tuple(fn(*duals)) if _is_float_or_complex(o)]
            duals[i] = inputs[i].detach()
            outs2 = [o for o in _as_tuple(fn(*duals)) if _is_float_or_complex(o)]
            duals[i] = keep
            for k, (o1, o2) in enumerate(zip(outs1, outs2)):
                t1, t2 = fwAD.unpack_dual(o1).tangent, fwAD.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None and not np.allclose(_np64(t1), _np64(t2)):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {k} when input: "
                        f"{inputs[i]} has an undefined tangent value. Got: {t1} but expected: "
                        f"{t2}")
    return True


# --------------------------------------------------------------------------- the public API

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if the gradients of `func` at `inputs` match finite differences (see the module
    docstring for the checks); a failure raises GradcheckError, or returns False when
    `raise_exception` is False."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to "
                             "be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad "
                             "to be True")
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_forward_ad, check_backward_ad, masked,
                          fast_mode, check_batched_grad, check_batched_forward_grad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_forward_ad, check_backward_ad, masked, fast_mode=False,
               check_batched_grad=False, check_batched_forward_grad=False):
    import ember
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    diff = [inputs[i] for i in _diff_input_indices(inputs)]
    if fast_mode and check_backward_ad and not check_forward_ad and outputs and all(
            t.layout == outputs[0].layout for t in diff + list(outputs)):
        if any(o.is_complex() for o in outputs):
            for part, imag in ((ember.imag, True), (ember.real, False)):
                part_fn = _on_parts_of_complex_outputs(func, part)
                out = part_fn(*inputs)
                _fast_check(part_fn, out, inputs, _differentiable_outputs(out), eps, atol, rtol,
                            nondet_tol, [k for k, o in enumerate(outputs) if o.is_complex()],
                            test_imag=imag)
        else:
            _fast_check(func, func_out, inputs, outputs, eps, atol, rtol, nondet_tol)
    else:
        _check_real_imag(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                         check_forward_ad, check_backward_ad, nondet_tol, check_undefined_grad,
                         masked)
    if check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for k, o in enumerate(outputs):
            _test_batched_grad(inputs, o, k)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, inputs, masked)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, outputs, inputs)
    return True


_FAILED_BATCHED_GRAD = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this.""".strip()


def _test_batched_grad(inputs, output, output_idx):
    """check_batched_grad: the backward of `output` for two random grad_outputs, run one at a
    time and then as one call under vmap, must agree -- what jacrev, hessian and
    autograd.functional's vectorize=True rely on."""
    import ember
    from . import grad
    diff = list(_iter_tensors(inputs, True))

    def vjp(v):
        results = grad(output, diff, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else
                     ember.zeros([], dtype=t.dtype, device=t.device).expand(t.shape)
                     for g, t in zip(results, diff))

    _compare_batched(vjp, output, ember.func.vmap, _FAILED_BATCHED_GRAD,
                     lambda k: (output_idx, k))


_FAILED_BATCHED_GRAD_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_forward_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""


def _compare_batched(fn, like, vmap, failure, where):
    """fn of two random seeds shaped as `like`, one at a time and as one call under `vmap`:
    the results must agree (`where(k)`: the output and input indices of result k)."""
    import ember
    seeds = [ember.randn_like(like) for _ in range(2)]
    expected = [ember.stack(shards) for shards in zip(*[fn(s) for s in seeds])]
    try:
        result = vmap(fn)(ember.stack(seeds))
    except RuntimeError as e:
        raise GradcheckError(f"While computing batched gradients, got: {e}\n\n{failure}") from e
    for k, (res, exp) in enumerate(zip(result, expected)):
        if not ember.allclose(res, exp):
            out_idx, in_idx = where(k)
            raise GradcheckError(f"For output {out_idx} and input {in_idx}:\n\n{failure}\n\n"
                                 f"Got:\n{res}\n\nExpected:\n{exp}")


def _test_batched_grad_forward_ad(func, inputs):
    """check_batched_forward_grad: for each input that requires grad, the output tangents for
    two random tangents, one dual level at a time and then as one call under the prototype vmap
    (torch._vmap_internals, where make_dual takes a batched tangent), must agree."""
    import ember
    from . import forward_ad as fwAD
    _vmap = ember._vmap_internals._vmap
    for idx, current in enumerate(inputs):
        if not (_is_tensor(current) and current.requires_grad):
            continue

        def jvp(tangent, idx=idx, current=current):
            with fwAD.dual_level():
                dual = fwAD.make_dual(current.detach(), tangent)
                args = tuple(dual if k == idx else (a.detach() if _is_tensor(a) else a)
                             for k, a in enumerate(inputs))
                ret = []
                for out in _as_tuple(func(*args)):
                    if out is None:
                        continue
                    primal, t = fwAD.unpack_dual(out)
                    ret.append(t if t is not None else ember.zeros(
                        [], dtype=primal.dtype, device=primal.device).expand(primal.shape))
                return tuple(ret)

        if not _is_float_or_complex(current):
            continue
        # (PyTorch's message gives the output's index for the input's too)
        _compare_batched(jvp, current, _vmap, _FAILED_BATCHED_GRAD_FWD_AD, lambda k: (k, k))


def _fast_check(func, func_out, inputs, outputs, eps, atol, rtol, nondet_tol=0.0,
                complex_outputs=(), test_imag=False):
    """gradcheck's fast mode: instead of whole Jacobians, compare u^T J v for random unit
    vectors u (per output) and v (per input) -- the analytical side from one backward per
    output (grad u, run twice: a backward that is not reentrant fails as in slow mode), the
    numerical side from one central difference per input (along v; the perturbed outputs must
    keep their shapes and dtypes). As in PyTorch the vectors are uniform [0, 1) draws,
    normalized.

    The outputs are real (a complex output is checked as its real and its imaginary part, as
    the full check does). A complex input x = a + ib gets a complex v: moving x along v changes
    the scalar s = <output, u> by Re(sum(conj(g) * v)), where g = ds/da + i ds/db is the
    gradient backward returns.
    """
    from . import grad
    diff_idx = _diff_input_indices(inputs)
    positions = [k for k, o in enumerate(_as_tuple(func_out)) if _is_tensor(o) and o.requires_grad]
    rng = np.random.default_rng(0)
    unit = [rng.random(o.numel()) for o in outputs]
    unit = [u / max(np.linalg.norm(u), 1e-30) for u in unit]
    vjps = []  # [output][input]: the gradient of <output_j, u_j> with respect to input i
    for o, u in zip(outputs, unit):
        g = _wrap(u.reshape(tuple(o.shape)).astype(o.dtype._np))
        runs = [[np.zeros(inputs[i].numel()) if x is None else _np64(x).reshape(-1)
                 for i, x in zip(diff_idx, grad(o, [inputs[i] for i in diff_idx], g,
                                                 retain_graph=True, allow_unused=True))]
                for _ in range(2)]
        if not _jacobians_equal(*runs, nondet_tol):
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}." + _NONDET_NOTE)
        vjps.append(runs[0])
    for n, i in enumerate(diff_idx):
        arr, write_back = _perturbable_values(inputs[i])
        v = rng.random(arr.size)
        if inputs[i].is_complex():
            v = v + 1j * rng.random(arr.size)
        v /= max(np.linalg.norm(v), 1e-30)
        step = _raw_delta(inputs[i], eps * v.reshape(arr.shape))
        orig = arr.copy()
        arr[...] = orig - step
        write_back()
        lo = _as_tuple(func(*inputs))
        lo = [(lo[k], _np64(lo[k]).reshape(-1)) for k in positions]
        arr[...] = orig + step
        write_back()
        hi = _as_tuple(func(*inputs))
        hi = [(hi[k], _np64(hi[k]).reshape(-1)) for k in positions]
        arr[...] = orig
        write_back()
        for (lo_t, _), (hi_t, _) in zip(lo, hi):
            _check_same_dtype_and_shape(lo_t, hi_t, eps, 0)
        lo = [a for _, a in lo]
        hi = [a for _, a in hi]
        for j, u in enumerate(unit):
            numerical = float(np.dot((hi[j] - lo[j]) / (2 * eps), u))
            analytical = float(np.vdot(vjps[j][n], v).real)
            # atol bounds each Jacobian entry; u^T J v sums entries weighted by u_a * v_b, so
            # PyTorch scales it by sum(u) * sum(v) (real and imaginary parts of v both count)
            scaled_atol = atol * float(v.real.sum() + v.imag.sum()) * float(u.sum())
            if not np.isclose(analytical, numerical, rtol=rtol, atol=scaled_atol):
                part = "imaginary" if test_imag else "real"
                prefix = (f"While considering the {part} part of complex outputs only, "
                          if j in complex_outputs else "")
                raise GradcheckError(
                    f"{prefix}Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{numerical}\nanalytical:{analytical}\n"
                    "(fast mode: u^T J v for random unit u, v)")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of (inputs, grad_outputs) -> the gradients of `func`'s outputs: second
    derivatives. Random grad_outputs in [-1, 1) when not given."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = set(_diff_input_indices(inputs))
    diff_go = {i for i, g in enumerate(grad_outputs) if g.requires_grad}

    def first_grads(*args):
        from . import grad
        ins = tuple(x.requires_grad_() if i in diff_in else x
                    for i, x in enumerate(args[:len(args) - n_out]))
        outs = _differentiable_outputs(func(*ins))
        gos = tuple(g.requires_grad_() if i in diff_go else g
                    for i, g in enumerate(args[len(args) - n_out:]))
        gs = grad(outs, tuple(x for i, x in enumerate(ins) if i in diff_in), gos,
                  create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_grad_output(o, noncontiguous):
    """Uniform in [-1, 1) with `o`'s shape (and dtype, when floating/complex); requires grad."""
    import ember
    dt = o.dtype if o.is_floating_point() or o.is_complex() else ember.double
    g = ember.rand(o.shape, dtype=dt, device=o.device) * 2 - 1
    if noncontiguous and g.numel() > 1:
        wide = ember.empty(tuple(o.shape) + (2,), dtype=dt, device=o.device)[..., 0]
        g = wide.copy_(g)
    return g.requires_grad_()


# ------------------------------------------------------------- PyTorch's deprecated helpers

_DEPRECATED = ("`{}` was part of PyTorch's private API and not meant to be exposed. We are "
               "deprecating it and it will be removed in a future version of PyTorch. If you "
               "have a specific use for this or feature request for this to be a stable API, "
               "please file us an issue at https://github.com/pytorch/pytorch/issues/new")


def _iter_tensors(x, only_requiring_grad=False):
    """The tensors in a nest of tuples/lists (depth first, in order); with
    `only_requiring_grad`, those that require grad."""
    from .._core.tensor import Tensor
    stack = [x]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.requires_grad or not only_requiring_grad:
                yield item
        elif not isinstance(item, str) and hasattr(item, "__iter__"):
            stack.extend(reversed(list(item)))


def _get_numerical_jacobian(fn, inputs, outputs=None, target=None, eps=1e-3,
                            is_forward_ad=False):
    """Central-difference Jacobians of `fn(*inputs)`: one tuple per tensor of `target` (default
    `inputs`) that requires grad, holding one (target.numel(), output.numel()) tensor per
    floating output, in the output's dtype. `target` may be a tensor `fn` reads by side effect
    (a module's parameter); it is perturbed in place and restored."""
    inputs = _as_tuple(inputs)
    if outputs is None:
        outputs = _as_tuple(fn(*inputs))
    if not is_forward_ad and any(o.is_complex() for o in outputs):
        raise ValueError("Expected output to be non-complex. get_numerical_jacobian no longer "
                         "supports functions that return complex outputs.")
    kept = [k for k, o in enumerate(outputs) if _is_float_or_complex(o)]
    jacobians = []
    for t in _iter_tensors(inputs if target is None else target, True):
        # perturb `t` itself, whatever fn reads it through
        jac = _numerical_jacobians(lambda *_: fn(*inputs), (t,), outputs, eps, [0])[0]
        jacobians.append(tuple(_wrap(jac[k].astype(outputs[k].dtype._np))
                               for k in kept))
    return jacobians


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated: the numerical Jacobians of `fn(inputs)`'s first output with respect to the
    tensors of `target` (default: `inputs`) that require grad."""
    warnings.warn(_DEPRECATED.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    jacobians = _get_numerical_jacobian(lambda *args: fn(args), inputs, None, target, eps)
    return tuple(j[0] for j in jacobians)  # (the first output's, as PyTorch's)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated: (Jacobians of `output` for each input requiring grad, reentrant, sizes ok,
    types ok)."""
    warnings.warn(_DEPRECATED.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    if output.is_complex():
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer "
                         "supports functions that return complex outputs.")
    inputs = _as_tuple(inputs)
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]
    jacs, sizes_ok, types_ok = _stack_rows(_vjp_rows(output, diff_inputs), diff_inputs,
                                           output.numel())
    again, _, _ = _stack_rows(_vjp_rows(output, diff_inputs), diff_inputs, output.numel())
    reentrant = _jacobians_equal(jacs, again, nondet_tol)
    return tuple(_wrap(j) for j in jacs), reentrant, sizes_ok, types_ok
