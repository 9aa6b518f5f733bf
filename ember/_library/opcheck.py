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
  AOT tracer, so it checks the repeatability that such a trace relies on).

Each test passes as "SUCCESS" in the returned dict, or raises OpCheckError naming it.
"""
from .._core.tensor import Tensor

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


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


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
    return op


def test_schema(op, args, kwargs, atol, rtol):
    import ember
    args, kwargs = _fresh(args), _fresh(kwargs)
    names = [a.name for a in op.schema.arguments]
    mutable = {a.name for a in op.schema.arguments if a.mutable}
    bound = list(args) + [kwargs[n] for n in names[len(args):] if n in kwargs]
    before = [_map(lambda t: t.detach().clone(), v) for v in bound]
    with ember.no_grad():
        op(*args, **kwargs)
    for name, old, new in zip(names, before, bound):
        if name in mutable:
            continue
        for a, b in zip(_tensors(old), _tensors(new)):
            if not ember.equal(a, b.detach()) and not (a.isnan() & b.detach().isnan()).all():
                raise OpCheckError(f"{op.name}: argument '{name}' is not defined as mutable "
                                   "in the schema but was mutated by the operator")


def test_autograd_registration(op, args, kwargs, atol, rtol):
    args, kwargs = _fresh(args), _fresh(kwargs)
    if not any(t.requires_grad for t in _tensors((args, kwargs))):
        return
    for out in _tensors(op(*args, **kwargs)):
        if (out.dtype.is_floating_point or out.dtype.is_complex) and out.grad_fn is None:
            raise OpCheckError(f"{op.name}: an input requires grad but an output has no "
                               "grad_fn: the operator has no autograd registration (use "
                               "register_autograd)")


def test_faketensor(op, args, kwargs, atol, rtol):
    import ember
    with ember.no_grad():
        real = _tensors(op(*_fresh(args), **_fresh(kwargs)))
        fake = _tensors(op(*_map(lambda t: t.detach().to("meta"), args),
                           **_map(lambda t: t.detach().to("meta"), kwargs)))
    if len(real) != len(fake):
        raise OpCheckError(f"{op.name}: the fake kernel returned {len(fake)} tensors, the "
                           f"kernel {len(real)}")
    for i, (r, f) in enumerate(zip(real, fake)):
        if tuple(r.shape) != tuple(f.shape) or r.dtype is not f.dtype:
            raise OpCheckError(f"{op.name}: output {i} of the fake kernel is {f.dtype} "
                               f"{list(f.shape)}, the kernel's is {r.dtype} {list(r.shape)}")


def _run_with_grads(op, args, kwargs):
    import ember
    args, kwargs = _fresh(args), _fresh(kwargs)
    outs = _tensors(op(*args, **kwargs))
    leaves = [t for t in _tensors((args, kwargs)) if t.requires_grad]
    grads = []
    diff = [o for o in outs if o.grad_fn is not None]
    if leaves and diff:
        total = sum(o.sum() for o in diff)
        grads = ember.autograd.grad(total, leaves, allow_unused=True)
    return [o.detach() for o in outs], grads


def test_aot_dispatch_dynamic(op, args, kwargs, atol, rtol):
    import ember
    first, second = _run_with_grads(op, args, kwargs), _run_with_grads(op, args, kwargs)
    for what, a, b in (("output", first[0], second[0]), ("gradient", first[1], second[1])):
        for i, (x, y) in enumerate(zip(a, b)):
            if x is None or y is None:
                continue
            try:
                ember.testing.assert_close(x, y, atol=atol, rtol=rtol, equal_nan=True)
            except AssertionError as e:
                raise OpCheckError(f"{op.name}: {what} {i} differs between two runs on the "
                                   f"same inputs: {e}") from None


_TESTS = {name: globals()[name] for name in DEFAULT_TEST_UTILS}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True,
            atol=None, rtol=None):
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    for name in test_utils:
        if name not in _TESTS:
            raise ValueError(f"test_utils got an unsupported value {name!r}; expected a subset "
                             f"of {DEFAULT_TEST_UTILS}")
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
