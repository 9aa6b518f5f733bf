"""grad, vjp, jvp, jacrev, jacfwd, hessian, linearize (torch/_functorch/eager_transforms.py).

Each transform is built on ember's two AD mechanisms: reverse mode is `autograd.grad` on fresh
inputs that require grad (`_enter`: an alias of the argument, so an outer transform's graph or
tangent still reaches through it), forward mode is `forward_ad`'s dual tensors. Jacobians are
a vjp or jvp vmapped over the rows of an identity matrix, as functorch computes them.

Results are detached when no argument was being differentiated by an outer transform (so
`grad(f)(x)` returns a plain tensor, as in PyTorch); nested uses (`grad(grad(f))`,
`vmap(grad(f))`, `jacfwd(jacrev(f))`) keep the graph and the tangents they need.

Unlike functorch, reverse mode has no levels of its own: it is autograd's one graph. So a tensor
that `f` closes over and that requires grad outside the transform is not differentiated
through at the top level (the result is detached), and only one forward-AD level exists at a
time (`jvp` inside `jvp` raises).
"""
from functools import wraps

from .._core.tensor import Tensor
from .._core.grad_mode import _grad_state
from .._dispatch.dispatcher import lookup as _lookup
from .._dispatch.vmap_state import transform as _transform
from ..autograd import forward_ad as fwAD
from ..autograd.saved_tensor_hooks import disable_saved_tensors_hooks
from ..utils._pytree import tree_flatten, tree_unflatten, tree_map, treespec_pprint
from .vmap import vmap_impl, BatchedTensor, _wrap as _wrap_batched
from . import batching_rules  # noqa: F401  (the FuncTorchBatched kernels vmap dispatches to)
from . import autograd_function  # noqa: F401  (autograd.Function under the transforms)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "functionalize"]


def _alias(t):
    return _lookup("alias")(t)


def _enter(t):
    """The tensor a transform differentiates with respect to: connected to `t`'s own history
    (outer transforms), a leaf that requires grad otherwise."""
    a = _alias(t)
    if not a._rg:
        a._inference = False     # see _non_inference
        a.requires_grad = True   # (requires_grad_ is refused inside a transform's function)
    return a


def _non_inference(t):
    """`t`, or for an inference tensor (made under inference_mode) an alias of it that is a
    normal tensor: a transform differentiates through it, as functorch's wrapper of an inference
    tensor is a normal tensor."""
    if not t._inference:
        return t
    a = _alias(t)
    a._inference = False
    return a


def _outer(t):
    """Whether an outer transform tracks `t` (reverse graph or tangent)."""
    return t._rg or fwAD._tangent(t) is not None


def _detach(t):
    """Cut `t` from this transform's graph, keeping a tangent it carries."""
    if not isinstance(t, Tensor):
        return t
    d = _detach_batched(t) if type(t) is BatchedTensor else t.detach()
    tangent = fwAD._tangent(t)
    if tangent is not None and fwAD._current_level >= 0:
        fwAD._set_tangent(d, tangent)
    return d


def _detach_batched(t):
    """A BatchedTensor cut from the graph at every level: its physical tensor detached too (no
    outer transform tracks it, so the physical graph holds only this transform's leaves)."""
    chain = []
    while type(t) is BatchedTensor:
        chain.append(t)
        t = t._value
    value = t.detach()
    for b in reversed(chain):
        value = _wrap_batched(value, b._bdim, b._level)
    return value


def _check_aux(aux):
    """An `aux` output (has_aux=True) is a pytree of tensors, as functorch unwraps it."""
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


class _Enabled:
    """enable_grad, and inference mode off, for the duration of a transform (the transform's
    own level records whatever the modes outside it are; `was_enabled` is the grad mode outside,
    which decides whether the results stay connected to an outer graph)."""

    def __enter__(self):
        self.prev = (_grad_state.enabled, _grad_state.inference)
        _grad_state.enabled = True
        _grad_state.inference = False
        return self

    @property
    def was_enabled(self):
        return self.prev[0]

    def __exit__(self, *exc):
        _grad_state.enabled, _grad_state.inference = self.prev


class _NoInference:
    """Inference mode off for the duration of a transform, grad mode left as it is (the
    transform's own computation is differentiated, whatever the caller's mode)."""

    def __enter__(self):
        self.prev = _grad_state.inference
        _grad_state.inference = False

    def __exit__(self, *exc):
        _grad_state.inference = self.prev


def _autograd_grad(outputs, inputs, grad_outputs, create_graph=True):
    from ..autograd import grad as _grad
    from ..autograd.graph import zeros
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o._rg]
    if not pairs:
        return [zeros(i._size, i.dtype, i._device) for i in inputs]
    got = _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=create_graph,
                retain_graph=True, allow_unused=True)
    return [g if g is not None else zeros(i._size, i.dtype, i._device)
            for g, i in zip(got, inputs)]


def _no_saved_tensors_hooks(f):
    """The reverse-mode transforms refuse saved-tensor hooks (active around them or entered
    inside), as PyTorch's do."""
    message = ("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. "
               "Please open an issue with your use case.")

    @wraps(f)
    def wrapper(*args, **kwargs):
        with disable_saved_tensors_hooks(message):
            return f(*args, **kwargs)
    return wrapper


# ---- grad -------------------------------------------------------------------------------------
def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _normalize_argnums(argnums, num_args):
    """`argnums` checked (an int or a non-empty tuple of distinct ints, each naming one of the
    `num_args` positional inputs) and made non-negative."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    argnums = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def _slice_argnums(args, argnums, as_tuple=True):
    """The positional `args` named by `argnums` (a tuple; the bare argument for an int argnums
    when `as_tuple` is False)."""
    argnums = _normalize_argnums(argnums, len(args))
    if isinstance(argnums, int):
        return (args[argnums],) if as_tuple else args[argnums]
    return tuple(args[a] for a in argnums)


def _replace_argnums(args, argnums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for a, v in zip(argnums, new):
            args[a] = v
    return tuple(args)


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of `func` w.r.t. the `argnums` arguments, func's value)."""
    @wraps(func)
    @_no_saved_tensors_hooks
    def wrapper(*args, **kwargs):
        with _Enabled() as modes:
            diff = _slice_argnums(args, argnums, as_tuple=False)
            leaves, spec = tree_flatten(diff)
            for x in leaves:
                if not isinstance(x, Tensor):
                    raise RuntimeError(f"grad_and_value(f)(*args): Expected argnums={argnums} to "
                                       f"point to Tensors, got {type(x)}")
            # an outer no_grad/inference_mode keeps the outer graph from recording this one
            outer = modes.was_enabled and any(_outer(x) for x in leaves)
            entered = [_enter(x) for x in leaves]
            with _transform():
                out = func(*_replace_argnums(args, argnums, tree_unflatten(entered, spec)),
                           **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                out, aux = out
                _check_aux(aux)
            if not isinstance(out, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.dim()} dims. Maybe you "
                                   "wanted to use the vjp or jacrev APIs instead?")
            from ..autograd.graph import full
            grads = _autograd_grad([out], entered, [full((), 1, out.dtype, out._device)],
                                   create_graph=True)
        if not outer:
            grads = [_detach(g) for g in grads]
            out = _detach(out)
            aux = tree_map(_detach, aux)
        grads = tree_unflatten(grads, spec)
        return (grads, (out, aux)) if has_aux else (grads, out)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of the scalar `func` w.r.t. its `argnums` arguments."""
    gv = grad_and_value(func, argnums, has_aux)

    @wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


# ---- vjp and jvp ------------------------------------------------------------------------------
@_no_saved_tensors_hooks
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian products."""
    with _Enabled() as modes:
        leaves, spec = tree_flatten(primals)
        outer = any(isinstance(x, Tensor) and _outer(x) for x in leaves)
        out_outer = outer and modes.was_enabled
        entered = [_enter(x) if isinstance(x, Tensor) else x for x in leaves]
        with _transform():
            out = func(*tree_unflatten(entered, spec))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
        out_leaves, out_spec = tree_flatten(out)
        _check_tensor_output(out_leaves, "vjp(f, *primals)")
        if has_aux:
            _check_aux(aux)
    diff_inputs = [x for x in entered if isinstance(x, Tensor)]

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{treespec_pprint(ct_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        for ct, o in zip(ct_leaves, out_leaves):
            if ct._size != o._size:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{ct.shape} and output[0] has a shape of {o.shape}.")
        with _Enabled() as modes:
            # the backward's own graph is needed only by an outer reverse or forward transform
            create_graph = modes.was_enabled or fwAD._current_level >= 0
            grads = iter(_autograd_grad(out_leaves, diff_inputs, ct_leaves,
                                        create_graph=create_graph))
        res = [next(grads) if isinstance(x, Tensor) else None for x in entered]
        # connected to the primals' outer graph (through what the backward saved) or to the
        # cotangents', unless vjp_fn itself runs under no_grad/inference_mode
        if not modes.was_enabled or (
                not outer and not any(isinstance(c, Tensor) and _outer(c) for c in ct_leaves)):
            res = [_detach(r) for r in res]
        return tree_unflatten(res, spec)

    result_out = out if out_outer else tree_map(_detach, out)
    if has_aux:
        return result_out, vjp_fn, (aux if out_outer else tree_map(_detach, aux))
    return result_out, vjp_fn


_JVP = "jvp(f, primals, tangents)"


def _check_tensor_list(leaves, argname):
    if not leaves:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got "
                               f"{type(x)}")


def _check_tensor_output(leaves, api):
    """A transform's function returns a non-empty pytree of tensors only."""
    if not leaves or (len(leaves) == 1 and leaves[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got "
                           f"output = {leaves})")
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


def _check_jvp_args(primals, tangents):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {p_spec} and "
                           f"tangents with structure {t_spec}")
    _check_tensor_list(p_leaves, "primals")
    _check_tensor_list(t_leaves, "tangents")
    return p_leaves, t_leaves, p_spec


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with `tangents`), by forward-mode AD."""
    p_leaves, t_leaves, spec = _check_jvp_args(primals, tangents)
    if fwAD._current_level >= 0:
        raise RuntimeError("jvp: a jvp inside another jvp (nested forward-mode AD) is not "
                           "supported by ember (PyTorch's forward_ad has one level too)")
    fwAD.enter_dual_level()
    try:
        with fwAD._set_fwd_grad_enabled(True):
            duals = [fwAD._make_dual(_non_inference(p), _non_inference(t))
                     for p, t in zip(p_leaves, t_leaves)]
            with _NoInference(), _transform():
                out = func(*tree_unflatten(duals, spec))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{_JVP}: output of function f should be a tuple: (output, "
                                   "aux) if has_aux is True")
            out, aux = out
            _check_aux(aux)
        out_leaves, out_spec = tree_flatten(out)
        _check_tensor_output(out_leaves, _JVP)
        prim, tang = [], []
        for o in out_leaves:
            p, t = fwAD.unpack_dual(o)
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f "
                                       "is independent of the inputs. This is not allowed with "
                                       "strict=True.")
                t = _zeros_like(o)
            prim.append(p)
            tang.append(t)
        result = (tree_unflatten(prim, out_spec), tree_unflatten(tang, out_spec))
        if has_aux:
            result = result + (tree_map(lambda a: fwAD.unpack_dual(a).primal, aux),)
    finally:
        fwAD.exit_dual_level()
    return result


def _zeros_like(t):
    from ..autograd.graph import zeros
    return zeros(t._size, t.dtype, t._device)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the jvp at `primals`. ember evaluates
    jvp_fn by forward AD at the saved primals on each call (PyTorch traces it once)."""
    out = func(*primals)
    out_leaves, out_spec = tree_flatten(out)

    def jvp_fn(*tangents):
        _, t = jvp(func, primals, tangents)
        return t
    return tree_map(_detach, out), jvp_fn


# ---- Jacobians --------------------------------------------------------------------------------
def _basis(n, dtype, device):
    return _lookup("eye.m")(n, n, dtype=dtype, device=device)


def _chunked_vmap(fn, basis, chunk_size):
    """fn over the rows of `basis`, stacked: vmapped, `chunk_size` rows at a time; with
    chunk_size=1 a plain loop (so fn need not be batchable), as PyTorch's jacrev does."""
    if chunk_size == 1:
        rows = [fn(basis[i]) for i in range(basis.shape[0])]
        return tuple(_lookup("stack")(list(parts), 0) for parts in zip(*rows))
    return vmap_impl(fn, 0, 0, "error", chunk_size, (basis,), {})


def _error_if_complex(api, args, is_input):
    for i, a in enumerate(tree_flatten(args)[0]):
        if isinstance(a, Tensor) and a.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {kind} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` w.r.t. the `argnums` arguments, by reverse mode: a vjp vmapped
    over the rows of the identity."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @wraps(func)
    def wrapper(*args, **kwargs):
        _error_if_complex("jacrev", args, is_input=True)
        diff = _slice_argnums(args, argnums, as_tuple=False)

        def f(*d):
            d = d[0] if isinstance(argnums, int) else d
            return func(*_replace_argnums(args, argnums, d), **kwargs)
        diff_t = (diff,) if isinstance(argnums, int) else diff
        res = vjp(f, *diff_t, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        out_leaves, out_spec = tree_flatten(out)
        _error_if_complex("jacrev", out_leaves, is_input=False)
        in_leaves, in_spec = tree_flatten(diff)
        jac_per_out = []
        for o in out_leaves:
            n = o.numel()
            basis = _basis(n, o.dtype, o._device)

            def row(v, o=o):
                cts = [(_reshape(v, o._size) if x is o else _zeros_like(x)) for x in out_leaves]
                g = vjp_fn(tree_unflatten(cts, out_spec))
                return tuple(tree_flatten(g)[0])
            if n == 0:
                rows = tuple(_lookup("empty.memory_format")((0,) + tuple(x._size),
                                                            dtype=x.dtype) for x in in_leaves)
            else:
                rows = _chunked_vmap(row, basis, chunk_size)
            jac_per_out.append(tuple(_reshape(r, tuple(o._size) + tuple(x._size))
                                     for r, x in zip(rows, in_leaves)))
        if not any(_outer(x) for x in in_leaves):
            jac_per_out = [tuple(_detach(b) for b in blocks) for blocks in jac_per_out]
        result = _assemble(jac_per_out, out_spec, in_spec, argnums)
        if has_aux:
            return result, res[2]
        return result
    return wrapper


def _reshape(t, shape):
    from .._refs.shape import reshape
    return reshape(t, tuple(shape))


def _assemble(jac_per_out, out_spec, in_spec, argnums):
    """Nest the blocks: outputs outermost, then the argnums structure."""
    per_out = [tree_unflatten(list(blocks), in_spec) for blocks in jac_per_out]
    return tree_unflatten(per_out, out_spec)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` w.r.t. the `argnums` arguments, by forward mode: a jvp vmapped
    over the columns of the identity."""
    @wraps(func)
    def wrapper(*args, **kwargs):
        _error_if_complex("jacfwd", args, is_input=True)
        diff = _slice_argnums(args, argnums, as_tuple=False)
        in_leaves, in_spec = tree_flatten(diff)
        sizes = [x.numel() for x in in_leaves]
        total = sum(sizes)
        dtype = in_leaves[0].dtype
        basis = _basis(total, dtype, in_leaves[0]._device)

        def f(*d):
            d = tree_unflatten(list(d), in_spec)
            return func(*_replace_argnums(args, argnums, d), **kwargs)

        def column(v):
            ts, start = [], 0
            for x, n in zip(in_leaves, sizes):
                ts.append(_reshape(_lookup("narrow")(v, 0, start, n), x._size))
                start += n
            res = jvp(f, tuple(in_leaves), tuple(ts), has_aux=has_aux)
            _error_if_complex("jacfwd", res[0], is_input=False)
            return (res[1], res[2]) if has_aux else res[1]
        out_cols = vmap_impl(column, 0, -1, randomness, None, (basis,), {}) if total else None
        if has_aux:
            out_cols, aux = out_cols
            aux = tree_map(lambda a: _lookup("select.int")(a, -1, 0)
                           if isinstance(a, Tensor) else a, aux)
        primal_out = f(*in_leaves) if out_cols is None else None
        cols, out_spec = tree_flatten(out_cols if out_cols is not None else primal_out)
        jac_per_out = []
        for c in cols:
            out_shape = tuple(c._size[:-1]) if out_cols is not None else tuple(c._size)
            blocks, start = [], 0
            for x, n in zip(in_leaves, sizes):
                part = _lookup("narrow")(c, -1, start, n) if out_cols is not None else \
                    _lookup("empty.memory_format")((0,), dtype=c.dtype)
                blocks.append(_reshape(part, out_shape + tuple(x._size)))
                start += n
            jac_per_out.append(tuple(blocks))
        if not any(_outer(x) for x in in_leaves):
            jac_per_out = [tuple(_detach(b) for b in blocks) for blocks in jac_per_out]
        result = _assemble(jac_per_out, out_spec, in_spec, argnums)
        return (result, aux) if has_aux else result
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of the scalar `func`: jacfwd(jacrev(func)), as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)


def functionalize(func, *, remove="mutations"):
    """torch.func.functionalize. ember records no mutation graph to rewrite: running `func`
    eagerly already gives its functional result, so this returns `func` unchanged in effect
    (inputs mutated by `func` are mutated, as functionalize's copy-back does)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are:\n     remove='mutations': "
                           "all inplace and out= operators will be removed from the program, "
                           "and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all "
                           "aliasing operators {view} will be replaced with their "
                           "non-aliasing counterparts, {view}_copy.\n")

    @wraps(func)
    def wrapper(*args, **kwargs):
        with _transform():
            return func(*args, **kwargs)
    return wrapper


def debug_unwrap(tensor, *, recurse=True):
    """The physical tensor under a BatchedTensor (all levels with `recurse`), for debugging;
    other tensors are returned as they are."""
    while type(tensor) is BatchedTensor:
        tensor = tensor._value
        if not recurse:
            break
    return tensor
