"""torch.export's dynamic shapes: `Dim` names a size that may vary between calls.

`dynamic_shapes` mirrors the inputs (a dict by argument name, or a tuple/list by position), each
tensor's entry a {dim: Dim} dict (or a list with a Dim or None per dim). Every distinct Dim
becomes a symbol (`s0`, `s1`, ...) shown in the graph's annotations and in `range_constraints`
as its value range; `ep.module()` checks each call's sizes against them.

ember captures on the example inputs, so a graph that records a size (a `view` to [2, 400])
would be wrong for other sizes. export therefore captures a second time with every dynamic
size changed (`specialization_check`): if the two graphs differ anywhere, the program
specialized the dim, which torch.export reports as a constraint violation, and so does ember.
"""
from .._dynamo.exc import UserError, UserErrorType
from ..utils import _pytree as pytree

__all__ = ["Dim", "dims"]


class _IntInfinity:
    def __repr__(self):
        return "int_oo"


int_oo = _IntInfinity()


class Dim:
    """Dim(name, *, min=None, max=None): a dynamic size, with its inclusive range."""

    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"

    def __init__(self, name, *, min=None, max=None):
        lo = 0 if min is None else min
        if max is not None and not max > lo:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
        self.__name__ = name
        self.min = lo
        self.max = max

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min > 2:
            parts.append(f"min={self.min}")
        if self.max is not None:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"


def dims(*names, min=None, max=None):
    """One Dim per name, sharing the range."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class ValueRange:
    """A symbol's range as torch prints it: VR[2, 16], VR[0, int_oo]."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def __repr__(self):
        return f"VR[{self.lower}, {int_oo if self.upper is None else self.upper}]"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, ValueRange) and (self.lower, self.upper) == (other.lower,
                                                                              other.upper)


class Symbol(str):
    """A size symbol (`s0`); prints as its name."""


def _per_leaf(dynamic_shapes, forward_names, args, kwargs):
    """The dynamic_shapes entry of each tensor leaf of (args, kwargs), in flattening order."""
    if dynamic_shapes is None:
        return [None] * len(pytree.tree_leaves((args, kwargs)))
    if isinstance(dynamic_shapes, dict):
        combined = {**dict(zip(forward_names, args)), **kwargs}
        unknown = [k for k in dynamic_shapes if k not in combined]
        if unknown:
            raise UserError(
                UserErrorType.INVALID_INPUT,
                "When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {list(combined)} of `inputs`, but here they are "
                f"{list(dynamic_shapes)}. Alternatively, you could also ignore arg names "
                "entirely and specify `dynamic_shapes` as a list/tuple matching `inputs`.")
        per_arg = [dynamic_shapes.get(n) for n in forward_names[:len(args)]]
        per_kwarg = [dynamic_shapes.get(k) for k in kwargs]
    elif isinstance(dynamic_shapes, (tuple, list)):
        entries = list(dynamic_shapes)
        if len(entries) != len(args) + len(kwargs):
            raise UserError(UserErrorType.INVALID_INPUT,
                            f"dynamic_shapes has {len(entries)} entries but the inputs have "
                            f"{len(args) + len(kwargs)}")
        per_arg, per_kwarg = entries[:len(args)], entries[len(args):]
    else:
        raise UserError(UserErrorType.INVALID_INPUT,
                        f"dynamic_shapes must be a dict, tuple or list, got "
                        f"{type(dynamic_shapes).__name__}")
    out = []
    for value, spec in zip(list(args) + list(kwargs.values()), per_arg + per_kwarg):
        leaves = pytree.tree_leaves(value)
        if spec is None or _is_dims_spec(spec):
            out += [spec] * len(leaves) if len(leaves) == 1 else [None] * len(leaves)
            continue
        specs = pytree.tree_leaves(spec, is_leaf=_is_dims_spec)
        if len(specs) != len(leaves):
            raise UserError(UserErrorType.INVALID_INPUT,
                            f"dynamic_shapes entry {spec!r} does not match the structure of "
                            "its input")
        out += specs
    return out


def _is_dims_spec(x):
    return x is None or isinstance(x, dict) and all(isinstance(k, int) for k in x) or \
        isinstance(x, (list, tuple)) and all(v is None or isinstance(v, (Dim, str)) for v in x)


def symbolic_dims(leaves, names, entries):
    """Per leaf: {dim index: (Symbol, Dim)}; and {Symbol: ValueRange}. Checks each example
    size against its Dim (UserError on a violation)."""
    by_name, ranges, per_leaf = {}, {}, []
    auto = 0
    for leaf, name, entry in zip(leaves, names, entries):
        found = {}
        items = entry.items() if isinstance(entry, dict) else enumerate(entry or ())
        for i, d in items:
            if d is None or d == Dim.STATIC:
                continue
            if not hasattr(leaf, "shape") or not -leaf.dim() <= i < leaf.dim():
                raise UserError(UserErrorType.INVALID_INPUT,
                                f"dynamic_shapes names dim {i} of '{name}', which has shape "
                                f"{tuple(getattr(leaf, 'shape', ()))}")
            i = i % leaf.dim()
            if isinstance(d, str):
                d, auto = Dim(f"_{name}_{i}", min=2 if d == Dim.AUTO else 0), auto + 1
            size = leaf.shape[i]
            if size in (0, 1):
                raise UserError(
                    UserErrorType.CONSTRAINT_VIOLATION,
                    f"Constraints violated ({d.__name__})! You marked {d.__name__} as dynamic "
                    f"but your code specialized it to be a constant ({size}). Example inputs "
                    "of size 0 or 1 specialize a dim; give an example size of at least 2.")
            if size < d.min or d.max is not None and size > d.max:
                raise UserError(
                    UserErrorType.CONSTRAINT_VIOLATION,
                    f"Constraints violated ({d.__name__})! The example size {name}.size()[{i}]"
                    f" = {size} is outside {d.__name__}'s range [{d.min}, "
                    f"{'int_oo' if d.max is None else d.max}].")
            if d.__name__ not in by_name:
                by_name[d.__name__] = (Symbol(f"s{len(by_name)}"), d, size)
            symbol, first, first_size = by_name[d.__name__]
            if size != first_size:
                raise UserError(UserErrorType.CONSTRAINT_VIOLATION,
                                f"Constraints violated ({d.__name__})! {name}.size()[{i}] = "
                                f"{size} but another input's size of {d.__name__} is "
                                f"{first_size}.")
            ranges[symbol] = ValueRange(first.min, first.max)
            found[i] = (symbol, first)
        per_leaf.append(found)
    return per_leaf, ranges


def changed_sizes(ranges, per_leaf, leaves):
    """{Symbol: a size other than the example's, inside the symbol's range}."""
    sizes = {}
    for found, leaf in zip(per_leaf, leaves):
        for i, (symbol, d) in found.items():
            n = leaf.shape[i]
            sizes[symbol] = n - 1 if d.max is not None and n + 1 > d.max else n + 1
    return sizes


def perturbed(leaf, found, sizes):
    """A tensor like `leaf` with each dynamic dim resized to `sizes[symbol]`, its values
    repeated from the original."""
    import numpy as np
    import ember
    a = leaf.detach().numpy()
    for i, (symbol, _) in sorted(found.items()):
        a = np.take(a, np.arange(sizes[symbol]) % a.shape[i], axis=i)
    t = ember.from_numpy(np.ascontiguousarray(a))
    return t.requires_grad_(leaf.requires_grad) if leaf.requires_grad else t


def specialization_check(graph, graph2, leaves, sym_dims, sizes):
    """{Value: shape with symbols}: the two captures (example sizes, changed sizes) must be
    the same program; a size that changed with a symbol is that symbol (or a multiple of it
    plus a constant). Raises UserError where the program specialized a dynamic size."""
    example = {}
    for x, found in zip(leaves, sym_dims):
        for i, (symbol, d) in found.items():
            example[symbol] = (x.shape[i], d)
    if len(graph.calls) != len(graph2.calls) or any(
            a.op is not b.op for a, b in zip(graph.calls, graph2.calls)):
        raise UserError(UserErrorType.CONSTRAINT_VIOLATION,
                        f"Constraints violated ({_dim_names(example)})! The program runs "
                        "different ops when the dynamic sizes change, so it specializes them.")
    for a, b in zip(graph.calls, graph2.calls):
        if _literals(a.args) != _literals(b.args):
            raise UserError(
                UserErrorType.CONSTRAINT_VIOLATION,
                f"Constraints violated ({_dim_names(example)})! aten.{a.op.__name__} records "
                f"the arguments {_literals(a.args)} computed from the example sizes (and "
                f"{_literals(b.args)} for other sizes); ember's graphs hold no symbolic "
                "sizes, so this program cannot be exported with these dims dynamic.")
    shapes = {}
    pairs = list(zip(graph.inputs, graph2.inputs))
    for a, b in zip(graph.calls, graph2.calls):
        pairs += [(x, y) for x, y in zip(a.outs, b.outs) if x is not None]
    for v, w in pairs:
        if v.shape != w.shape:
            shapes[v] = [n if n == m else _expression(n, m, example, sizes)
                         for n, m in zip(v.shape, w.shape)]
    return shapes


def _literals(args):
    out = []
    for a in args:
        if isinstance(a, list):
            out.append([x for x in a if type(x).__name__ != "Value"])
        elif type(a).__name__ != "Value":
            out.append(a)
    return out


def _dim_names(example):
    return ", ".join(d.__name__ for _, d in example.values())


def _expression(n, m, example, sizes):
    """The symbol expression a size n (m with the changed sizes) stands for: a*s + b."""
    for symbol, (size, _) in example.items():
        delta = sizes[symbol] - size
        if (m - n) % delta:
            continue
        a = (m - n) // delta
        b = n - a * size
        text = symbol if a == 1 else f"{a}*{symbol}"
        return text if b == 0 else f"{text} + {b}" if b > 0 else f"{text} - {-b}"
    return "?"
