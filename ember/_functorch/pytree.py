"""A small pytree (torch.utils._pytree's role for the function transforms): flatten nested
tuples, lists, dicts and namedtuples into leaves and a spec that rebuilds them."""


def tree_flatten(tree):
    """(leaves, spec): the leaves of `tree` in order, and what `tree_unflatten` needs."""
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves):
    # an explicit stack would obscure a walk this shallow (transform arguments nest a few deep)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return ("namedtuple", type(tree), [_flatten(x, leaves) for x in tree])
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, None, [_flatten(x, leaves) for x in tree])
    if isinstance(tree, dict):
        return ("dict", list(tree), [_flatten(tree[k], leaves) for k in tree])
    leaves.append(tree)
    return None


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec is None:
        return next(it)
    kind, extra, children = spec
    items = [_build(c, it) for c in children]
    if kind == "namedtuple":
        return extra(*items)
    if kind == "tuple":
        return tuple(items)
    if kind == "list":
        return items
    return dict(zip(extra, items))


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def spec_repr(spec):
    """The structure of a spec as text, for error messages."""
    if spec is None:
        return "*"
    kind, extra, children = spec
    inner = ", ".join(spec_repr(c) for c in children)
    if kind == "list":
        return f"[{inner}]"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {spec_repr(c)}" for k, c in zip(extra, children)) + "}"
    return f"({inner}{',' if len(children) == 1 else ''})"


def broadcast_prefix(prefix, tree, spec):
    """The leaves of `prefix` repeated over `tree`'s structure (in_dims=0 applies to every
    input; in_dims=(0, None) to each argument's whole subtree). None if they do not match."""
    out = []
    if not _broadcast(prefix, tree, out):
        return None
    return out


def _broadcast(prefix, tree, out):
    if isinstance(prefix, (tuple, list)) and not hasattr(prefix, "_fields"):
        if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
            return False
        return all(_broadcast(p, t, out) for p, t in zip(prefix, tree))
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            return False
        return all(_broadcast(prefix[k], tree[k], out) for k in tree)
    n = len(tree_flatten(tree)[0])
    out.extend([prefix] * n)
    return True
