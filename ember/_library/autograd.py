"""torch._library.autograd: autograd support for custom ops -- here `supports_tensorlist`.

An autograd.Function sees its inputs one by one: a list of tensors passed to `apply` is one
opaque argument, so its tensors get no gradient. `@supports_tensorlist` makes a Function take
(and return) lists of tensors: `apply` flattens each list into separate inputs and passes a
record of the grouping as a last argument; forward regroups them before calling the user's
forward; backward regroups `ctx.needs_input_grad` and the output gradients the same way, and
flattens the per-list gradients it gets back.
"""
from .._core.tensor import Tensor


class _Grouping:
    """Where the lists were among a call's arguments and its outputs."""

    def __init__(self, lens):
        self.lens = lens          # per argument: None, or its list's length
        self.out_is_list = False

    def regroup(self, flat):
        it = iter(flat)
        return [next(it) if n is None else [next(it) for _ in range(n)] for n in self.lens]


def supports_tensorlist(cls):
    orig_forward, orig_backward, orig_apply = cls.forward, cls.backward, cls.apply

    def forward(ctx, *args):
        grouping = args[-1] if args else None
        if not isinstance(grouping, _Grouping):
            raise NotImplementedError(
                "NYI: calling supports_tensorlist autograd.Function.forward directly. You "
                "should probably be calling .apply instead. Please file an issue if not.")
        output = orig_forward(ctx, *grouping.regroup(args[:-1]))
        ctx._pt_grouping = grouping
        if isinstance(output, list):
            grouping.out_is_list = True
            return tuple(output)
        return output

    def backward(ctx, *grads):
        grouping = getattr(ctx, "_pt_grouping", None)
        if grouping is None:
            raise NotImplementedError(
                "NYI: calling supports_tensorlist autograd.Function.backward directly. This "
                "will automatically get called by PyTorch autograd.")
        flat_needs = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(grouping.regroup(flat_needs[:-1]))
        try:
            result = orig_backward(ctx, *((list(grads),) if grouping.out_is_list else grads))
        finally:
            ctx.needs_input_grad = flat_needs
        result = result if isinstance(result, tuple) else (result,)
        flat = []
        for n, g in zip(grouping.lens, result):
            flat.extend((g,) if n is None else (g if g is not None else [None] * n))
        return (*flat, None)

    def apply(*args):
        grouping = _Grouping(tuple(len(a) if isinstance(a, (list, tuple)) and
                                   all(isinstance(t, Tensor) for t in a) else None
                                   for a in args))
        flat = [t for a, n in zip(args, grouping.lens) for t in ((a,) if n is None else a)]
        out = orig_apply(*flat, grouping)
        return list(out) if grouping.out_is_list else out

    cls.forward, cls.backward = staticmethod(forward), staticmethod(backward)
    cls.apply = staticmethod(apply)
    return cls
