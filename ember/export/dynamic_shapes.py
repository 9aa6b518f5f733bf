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
from ..fx.experimental.symbolic_shapes import ConstraintViolationError
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
    for leaf, name, entry in zip(leaves, names, entries):
        found = {}
        items = entry.items() if isinstance(entry, dict) else enumerate(entry or ())
        for i, d in items:
            if d is None or d == Dim.STATIC:
                continue
            if not hasattr(leaf, "shape") or not -leaf.dim() <= i < leaf.dim():
                raise IndexError(f"dynamic_shapes names dim {i} of '{name}', which has shape "
                                 f"{tuple(getattr(leaf, 'shape', ()))}")
            i = i % leaf.dim()
            if isinstance(d, str):
                d = Dim(f"_{name}_{i}", min=2)     # Dim.AUTO / Dim.DYNAMIC
            size = leaf.shape[i]
            if size in (0, 1):
                raise UserError(
                    UserErrorType.CONSTRAINT_VIOLATION,
                    f"Constraints violated ({d.__name__})! You marked {d.__name__} as dynamic "
                    f"but your code specialized it to be a constant ({size}). Example inputs "
                    "of size 0 or 1 specialize a dim; give an example size of at least 2.")
            if size < d.min or d.max is not None and size > d.max:
                raise ConstraintViolationError(
                    f"{size} not in range [{d.min}, {'int_oo' if d.max is None else d.max}] "
                    f"({name}.size()[{i}], Dim {d.__name__})")
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


def _example_sizes(leaves, sym_dims):
    """{Symbol: (example size, Dim, (leaf index, dim))}."""
    example = {}
    for k, (x, found) in enumerate(zip(leaves, sym_dims)):
        for i, (symbol, d) in found.items():
            example.setdefault(symbol, (x.shape[i], d, (k, i)))
    return example


def _other_size(n, d, avoid):
    """A size in d's range (and at least 2) not in `avoid`, or None."""
    for cand in (n + 1, n - 1, n + 2, n - 2, n + 3):
        if cand >= max(2, d.min) and (d.max is None or cand <= d.max) and cand not in avoid:
            return cand
    return None


class SymExpr:
    """An integer argument computed from sizes: const + sum(coeff * symbol)."""
    __slots__ = ("const", "coeffs")

    def __init__(self, const, coeffs):
        self.const, self.coeffs = const, coeffs

    def __str__(self):
        terms = [str(s) if c == 1 else f"{c}*{s}" for s, c in self.coeffs.items()]
        text = " + ".join(terms)
        if self.const:
            text += f" + {self.const}" if self.const > 0 else f" - {-self.const}"
        return text


def generalize(graph, capture_with, leaves, sym_dims):
    """Find which recorded sizes stand for the dynamic dims. `capture_with(leaves)` captures
    the program again on other inputs: once per symbol with that symbol's size changed, and
    once with all changed to yet other sizes to check the fit. Every integer (an argument, a
    value's size) that changes with the symbols must be affine in them -- const + sum(c * s),
    the fit found from the one-symbol captures and confirmed by the last one; anything else
    the program specialized, a UserError naming the op. Returns ({Value: symbolic shape},
    {(call index, arg position, list position or None): SymExpr}, {Symbol: (leaf, dim)})."""
    example = _example_sizes(leaves, sym_dims)
    names = ", ".join(d.__name__ for _, d, _ in example.values())

    def capture_resized(sizes):
        try:
            return capture_with(_resized(leaves, sym_dims, sizes))
        except UserError:
            raise
        except Exception as e:
            raise UserError(UserErrorType.CONSTRAINT_VIOLATION,
                            f"Constraints violated ({names})! The program fails for other "
                            f"values of the dynamic sizes ({sizes}): {type(e).__name__}: "
                            f"{e}") from e
    runs = []
    for symbol, (n, d, _) in example.items():
        new = _other_size(n, d, {n})
        if new is None:
            raise UserError(UserErrorType.CONSTRAINT_VIOLATION,
                            f"Constraints violated ({d.__name__})! its range allows only "
                            f"the example size {n}")
        sizes = {s: e[0] for s, e in example.items()}
        sizes[symbol] = new
        runs.append((sizes, capture_resized(sizes)))
    check_sizes = {s: _other_size(n, d, {n, runs[k][0][s]}) or n
                   for k, (s, (n, d, _)) in enumerate(example.items())}
    runs.append((check_sizes, capture_resized(check_sizes)))
    graphs = [g for _, g in runs]
    if any(len(g.calls) != len(graph.calls) or any(a.op is not b.op for a, b in
                                                   zip(graph.calls, g.calls)) for g in graphs):
        raise UserError(UserErrorType.CONSTRAINT_VIOLATION,
                        f"Constraints violated ({names})! The program runs different ops "
                        "when the dynamic sizes change, so it specializes them.")

    def fit(values, where):
        """The SymExpr through the example value and the one-symbol values, or None."""
        v0 = values[0]
        coeffs = {}
        for r, ((symbol, (n, _, _)), v) in enumerate(zip(example.items(), values[1:-1])):
            delta = runs[r][0][symbol] - n
            if (v - v0) % delta:
                raise _specialized(names, where, values)
            coeffs[symbol] = (v - v0) // delta
        const = v0 - sum(c * example[s][0] for s, c in coeffs.items())
        predicted = const + sum(c * check_sizes[s] for s, c in coeffs.items())
        if predicted != values[-1]:
            raise _specialized(names, where, values)
        coeffs = {s: c for s, c in coeffs.items() if c}
        return SymExpr(const, coeffs) if coeffs else None

    sym_args = {}
    for k, c in enumerate(graph.calls):
        others = [g.calls[k] for g in graphs]
        for j, a in enumerate(c.args):
            column = [a] + [o.args[j] for o in others]
            if all(_same_literal(a, b) for b in column[1:]):
                continue
            where = f"aten.{c.op.short_name}"
            if type(a) is int:
                sym_args[(k, j, None)] = fit(column, where)
            elif type(a) in (list, tuple) and all(type(b) is type(a) and len(b) == len(a)
                                                  for b in column):
                for m, x in enumerate(a):
                    items = [col[m] for col in column]
                    if type(x) is int and any(y != x for y in items):
                        sym_args[(k, j, m)] = fit(items, where)
                    elif not all(_same_literal(x, y) for y in items):
                        raise _specialized(names, where, column)
            else:
                raise _specialized(names, where, column)
    shapes = {}
    value_columns = [[v] + [g.inputs[i] for g in graphs] for i, v in enumerate(graph.inputs)]
    for k, c in enumerate(graph.calls):
        for i, v in enumerate(c.outs):
            if v is not None:
                value_columns.append([v] + [g.calls[k].outs[i] for g in graphs])
    for column in value_columns:
        v = column[0]
        if any(w.shape != v.shape for w in column[1:]):
            shapes[v] = [str(fit([w.shape[i] for w in column], "a value's size") or n)
                         for i, n in enumerate(v.shape)]
    sources = {s: e[2] for s, e in example.items()}
    return shapes, {key: e for key, e in sym_args.items() if e is not None}, sources


def _same_literal(a, b):
    if type(a).__name__ == "Value":
        return type(b).__name__ == "Value"
    if type(a) in (list, tuple):
        return type(b) in (list, tuple) and len(a) == len(b) and all(
            _same_literal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _specialized(names, where, values):
    return UserError(
        UserErrorType.CONSTRAINT_VIOLATION,
        f"Constraints violated ({names})! {where} records {values[0]!r} computed from the "
        f"example sizes (and {values[1:]!r} for other sizes), which is no affine function of "
        "the dynamic sizes: the program specializes them.")


def _resized(leaves, sym_dims, sizes):
    return [perturbed(x, found, sizes) if found else x for x, found in zip(leaves, sym_dims)]


def perturbed(leaf, found, sizes):
    """A tensor like `leaf` with each dynamic dim resized to `sizes[symbol]`, its values
    repeated from the original."""
    import numpy as np
    import ember
    a = leaf.numpy(force=True)
    for i, (symbol, _) in sorted(found.items()):
        a = np.take(a, np.arange(sizes[symbol]) % a.shape[i], axis=i)
    t = ember.from_numpy(np.ascontiguousarray(a))
    return t.requires_grad_(leaf.requires_grad) if leaf.requires_grad else t
