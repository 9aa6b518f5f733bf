"""torch.library.opcheck: test that an operator's pieces are registered consistently.

A custom op is several registrations that must agree: its schema (which arguments it may
mutate), its backend kernel, its fake (Meta) kernel and its autograd formula. `opcheck(op,
args)` calls the op on `args` and checks each agreement, as PyTorch's does:

- test_schema: arguments the schema does not mark mutable (`Tensor(a!)`) keep their values;
- test_autograd_registration: with inputs that require grad, float outputs come out of an
  autograd node (the op is not silently cut from the graph);
- test_faketensor: the fake kernel, run on meta copies of the inputs, gives the real outputs'
  shapes and dtypes;
- test_aot_dispatch_dynamic: a second run on fresh copies of the inputs gives the same outputs
  and the same input gradients (PyTorch compares eager with an AOT-traced run; ember has no
  AOT tracer, so it checks the repeatability that such a trace relies on), and a custom op's
  outputs alias no input or other output (an error or a warning, as functorch's config says).

Each test passes as "SUCCESS" in the returned dict, or raises OpCheckError naming it.
"""
import warnings

from .._core.tensor import Tensor
from .utils import check_aliasing_constraint, flat_tensors

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                      "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    pass


def _map(fn, value):
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return value


def _fresh(value):
    """Copies of the tensors in `value` that keep requires_grad (new leaves)."""
    return _map(lambda t: t.detach().clone().requires_grad_(t.requires_grad), value)


def _opoverload(op):
    from .custom_ops import CustomOpDef
    if isinstance(op, CustomOpDef):
        return op._opoverload
    overloads = getattr(op, "_overloads", None)
    if overloads is not None:  # an OpOverloadPacket with one overload
        if len(overloads) != 1:
            raise ValueError(f"opcheck: {op} has {len(overloads)} overloads; pass one of them")
        return next(iter(overloads.values()))
    from .._dispatch.dispatcher import OpOverload
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
                         f"torch.ops.aten.sin.default, got {type(op)}")
    return op


def test_schema(op, args, kwargs, atol, rtol):
    """Arguments the schema does not mark written (`Tensor(a!)`) keep their values, and
    outputs share memory only with the inputs the schema says they alias (`Tensor(a)`)."""
    import ember
    args, kwargs = _fresh(args), _fresh(kwargs)
    names = [a.name for a in op.schema.arguments]
    bound = list(args) + [kwargs[n] for n in names[len(args):] if n in kwargs]
    before = [_map(lambda t: t.detach().clone(), v) for v in bound]
    with ember.no_grad():
        outs = flat_tensors(op(*args, **kwargs))
    for arg, old, new in zip(op.schema.arguments, before, bound):
        if arg.alias_info is None or not arg.alias_info.is_write:
            for a, b in zip(flat_tensors(old), flat_tensors(new)):
                if not ember.equal(a, b.detach()) and not (a.isnan() & b.detach().isnan()).all():
                    raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was "
                                       f"mutated")
        if arg.alias_info is None:
            for t in flat_tensors(new):
                if any(ember._C._is_alias_of(o, t) for o in outs):
                    raise RuntimeError(f"Argument {arg.name} is not defined to alias output but "
                                       f"was aliasing")


def autograd_registration_check(op, args, kwargs):
    """Gradients must come from a kernel at an autograd key (a registered backward, or a
    CompositeImplicitAutograd decomposition). Otherwise the backend kernel, run below autograd
    with grad mode on, must not give outputs that require grad: if it does, an
    autograd.Function was registered at a backend key, which PyTorch's dispatcher would skip
    under some transforms."""
    from .._dispatch.dispatcher import OpOverload
    if not isinstance(op, OpOverload):
        raise AssertionError(f"Expected op to be OpOverload, got {type(op)}")
    flat = flat_tensors((args, kwargs))
    if not any(t.requires_grad for t in flat):
        raise RuntimeError(
            "autograd_registration_check: no inputs have requires_grad=True so we are unable "
            "to actually perform this test. Please pass inputs that do require grad.")
    if op.derivative is not None or op._composite is not None:
        return
    key, _ = op._key_and_grad(op.schema.bind(args, kwargs, op.__name__))
    outs = op.redispatch(key, op.schema.bind(args, kwargs, op.__name__))
    inputs = {id(t) for t in flat}
    if not any(o.requires_grad and id(o) not in inputs for o in flat_tensors(outs)):
        return
    raise AssertionError(
        f"{op.name()}: at least one output of this operator has requires_grad=True but the "
        f"operator does not have an autograd kernel defined at an autograd key (e.g. "
        f"DispatchKey::Autograd). This could mean that you have incorrectly registered an "
        f"autograd kernel to a non-Autograd DispatchKey, which may lead to silently incorrect "
        f"results. If your operator consists of regular PyTorch operations, consider not "
        f"using an operator at all or registering your operator as "
        f"CompositeImplicitAutograd. If you have an autograd.Function registered to a backend "
        f"(CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")


def test_autograd_registration(op, args, kwargs, atol, rtol):
    args, kwargs = _fresh(args), _fresh(kwargs)
    if any(t.requires_grad for t in flat_tensors((args, kwargs))):
        autograd_registration_check(op, args, kwargs)


def test_faketensor(op, args, kwargs, atol, rtol):
    """The fake (Meta) kernel gives the real outputs' shapes, dtypes and strides (those of the
    dimensions longer than one), as PyTorch's compare_tensor_meta checks them."""
    import ember
    if op.namespace != "aten" and "Meta" not in op._table and op._composite is None:
        # a fake tensor needs the op's fake kernel: the backend kernel cannot run on one
        raise RuntimeError(f"{op}: the operator has no fake impl or Meta kernel registered "
                           f"(use torch.library.register_fake)")
    with ember.no_grad():
        real = flat_tensors(op(*_fresh(args), **_fresh(kwargs)))
        fake = flat_tensors(op(*_map(lambda t: t.detach().to("meta"), args),
                           **_map(lambda t: t.detach().to("meta"), kwargs)))
    if len(real) != len(fake):
        raise RuntimeError(f"{op.name}: the fake kernel returned {len(fake)} tensors, the "
                           f"kernel {len(real)}")
    for r, f in zip(real, fake):
        if r.shape != f.shape:
            raise AssertionError(f"Shapes {r.shape} and {f.shape} are not equal!")
        if r.dtype is not f.dtype:
            raise AssertionError(f"Dtypes {r.dtype} and {f.dtype} are not equal!")
        for idx, (size, a, b) in enumerate(zip(r.shape, r.stride(), f.stride())):
            if size > 1 and a != b:
                raise AssertionError(f"Stride mismatch! Strides are {r.stride()} and "
                                     f"{f.stride()} (mismatched at {idx})!")


def _run_with_grads(op, args, kwargs):
    import ember
    args, kwargs = _fresh(args), _fresh(kwargs)
    outs = flat_tensors(op(*args, **kwargs))
    leaves = [t for t in flat_tensors((args, kwargs)) if t.requires_grad]
    grads = []
    diff = [o for o in outs if o.grad_fn is not None]
    if leaves and diff:
        total = sum(o.sum() for o in diff)
        grads = ember.autograd.grad(total, leaves, allow_unused=True)
    return [o.detach() for o in outs], grads


_OUTPUTS_DIFFER = (
    "Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher tracing. "
    "This means the operator will have incorrect output underneath torch.compile. This could "
    "be because the operator's implementation not traceable.")
_GRADS_DIFFER = (
    "Gradients of the operator are different in eager-mode PyTorch vs AOTDispatcher. This "
    "means the operator will have incorrect gradients underneath torch.compile. This could be "
    "because the operator's backward is incorrectly registered or not traceable.")


def _check_custom_op_aliasing(op, args, kwargs):
    """AOTAutograd's first-run check that a custom op's outputs alias no input and no other
    output: an error when functorch's config says so (the default under CI), else a warning."""
    from .._functorch import config
    if not config.check_custom_op_aliasing or op.namespace in _BUILTIN_NAMESPACES:
        return
    args, kwargs = _fresh(args), _fresh(kwargs)
    try:
        check_aliasing_constraint(op.name(), args, kwargs, op(*args, **kwargs))
    except RuntimeError as e:
        if config.error_on_custom_op_aliasing:
            raise
        warnings.warn(f"{e} This is deprecated and will become an error in a future version of "
                      "PyTorch.", UserWarning, stacklevel=3)


_BUILTIN_NAMESPACES = ("aten", "prim", "prims", "_c10d_functional", "c10d", "onednn")


def test_aot_dispatch_dynamic(op, args, kwargs, atol, rtol):
    """What tracing the op needs: outputs without alias annotations (functionalization), and
    a rerun on fresh copies of the inputs that gives the same outputs and gradients."""
    import ember
    # (functionalization has the functional variant of every aten op, not of a custom one)
    if op.namespace != "aten" and any(r.alias_info is not None for r in op.schema.returns):
        raise RuntimeError(
            "We only support functionalizing operators whose outputs do not have alias "
            "annotations (e.g. 'Tensor(a)' is a Tensor with an alias annotation whereas "
            "'Tensor' is a Tensor without. The '(a)' is the alias annotation). The alias "
            "annotation specifies that the output Tensor shares storage with an input that has "
            "the same annotation. Please check if (1) the output needs to be an output (if "
            "not, don't return it), (2) if the output doesn't share storage with any inputs, "
            "then delete the alias annotation. (3) if the output indeed shares storage with an "
            "input, then add a .clone() before returning it to prevent storage sharing and then "
            f"delete the alias annotation. Otherwise, please file an issue on GitHub. Got {op}")
    _check_custom_op_aliasing(op, args, kwargs)
    first, second = _run_with_grads(op, args, kwargs), _run_with_grads(op, args, kwargs)
    for message, a, b in ((_OUTPUTS_DIFFER, first[0], second[0]),
                          (_GRADS_DIFFER, first[1], second[1])):
        for x, y in zip(a, b):
            if x is None or y is None:
                continue
            try:
                ember.testing.assert_close(y, x, atol=atol, rtol=rtol, equal_nan=True)
            except AssertionError as e:
                raise AssertionError(message) from e


_TESTS = {name: globals()[name] for name in DEFAULT_TEST_UTILS}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True,
            atol=None, rtol=None):
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    for name in test_utils:
        if name not in _TESTS:
            raise ValueError(f"Expected test_utils to be subset of {DEFAULT_TEST_UTILS} but "
                             f"got {test_utils}")
    if (atol is None) != (rtol is None):
        raise ValueError("opcheck(op, ...): if atol or rtol is specified, both must be")
    op = _opoverload(op)
    kwargs = {} if kwargs is None else kwargs
    results = {}
    for name in test_utils:
        try:
            _TESTS[name](op, args, kwargs, atol, rtol)
            results[name] = "SUCCESS"
        except Exception as e:  # noqa: BLE001 (reported, as PyTorch's opcheck does)
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for "
                                   "stack trace)") from e
            results[name] = e
    return results
