"""torch.utils._pytree: nested containers ("pytrees") taken apart into a flat list of leaves and
a TreeSpec that puts them back together.

A node type is registered with a flatten function, `node -> (children, context)`, and an
unflatten function, `(children, context) -> node`; tuple, list, dict, namedtuple, OrderedDict,
defaultdict and deque come registered, anything else is a leaf. A TreeSpec holds the node type,
its context (dict keys, the namedtuple class, a deque's maxlen) and one child spec per child;
the leaf spec prints as `*`. The function transforms (vmap, grad, jacrev) and the code that
maps over a model's arguments share this one module.

The walks keep their own stack rather than recursing, so deeply nested trees do not hit
Python's recursion limit.
"""
import dataclasses
import enum
import functools
import importlib
import json
import types
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, NamedTuple

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
    "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure",
    "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps",
    "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
    "is_namedtuple_instance", "is_structseq", "is_structseq_class", "is_structseq_instance",
]

PyTree = Any
Context = Any
DumpableContext = Any
FlattenFn = ToDumpableContextFn = FromDumpableContextFn = UnflattenFn = Any

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Any
    from_dumpable_context: Any


SUPPORTED_NODES = {}
SUPPORTED_SERIALIZED_TYPES = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make `cls` a node: `flatten_fn(node) -> (children, context)`,
    `unflatten_fn(children, context) -> node`."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


_register_pytree_node = register_pytree_node


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None):
    if (to_dumpable_context is None) != (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                         "be None or registered.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context,
                                                        from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _deregister_pytree_node(cls):
    SUPPORTED_NODES.pop(cls, None)
    node_def = SUPPORTED_SERIALIZED_TYPES.pop(cls, None)
    if node_def is not None:
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node_def.serialized_type_name, None)


def _register_namedtuple(cls, *, serialized_type_name):
    """Give a namedtuple class a name, so specs holding it can be serialized."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def register_dataclass(cls, *, field_names=None, drop_field_names=None,
                       serialized_type_name=None):
    """Make a dataclass (or a class built from keyword fields) a node whose children are its
    fields. `field_names`: the fields holding data (default: a dataclass's init fields), which
    must be all init fields but `drop_field_names` (those are left to their defaults when
    rebuilt). A field that is None is kept in the context rather than as a child."""
    drop_field_names = drop_field_names or []
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init}
        init_fields.difference_update(drop_field_names)
        if init_fields != set(field_names):
            message = "field_names does not include all dataclass fields.\n"
            missing = init_fields - set(field_names)
            if missing:
                message += (f"Missing fields in `field_names`: {missing}. If you want to include "
                            "these fields in the pytree, please add them to `field_names`, "
                            "otherwise please add them to `drop_field_names`.\n")
            unexpected = set(field_names) - init_fields
            if unexpected:
                message += (f"Unexpected fields in `field_names`: {unexpected}. Please remove "
                            "these fields, or add them to `drop_field_names`.\n")
            raise ValueError(message)

    def flatten(obj):
        values, names, none_names = [], [], []
        for name in field_names:
            value = getattr(obj, name)
            if value is None:
                none_names.append(name)
            else:
                values.append(value)
                names.append(name)
        return values, [names, none_names]

    def unflatten(values, context):
        names, none_names = context
        return cls(**dict(zip(names, values)), **dict.fromkeys(none_names))

    def flatten_with_keys(obj):
        values, context = flatten(obj)
        return [(GetAttrKey(k), v) for k, v in zip(context[0], values)], context

    _private_register_pytree_node(cls, flatten, unflatten,
                                  serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode:
    """The context of a constant node: the object itself (it has no children)."""
    value: Any


CONSTANT_NODES = set()


def register_constant(cls):
    """Make `cls` a node with no leaves: its instances travel whole in the spec's context, so
    they must compare and hash by value (a non-default `__eq__` and `__hash__`)."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` "
                        "implementation.")
    if cls.__hash__ is None:      # defining __eq__ alone drops the inherited __hash__
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` "
                        "implementation.")
    _private_register_pytree_node(cls, lambda x: ([], ConstantNode(x)),
                                  lambda values, context: context.value,
                                  flatten_with_keys_fn=lambda x: ([], ConstantNode(x)))
    CONSTANT_NODES.add(cls)


def is_constant_class(cls):
    return isinstance(cls, type) and cls in CONSTANT_NODES


# ---- key paths ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path printed: `[0]['a'].b`."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at key path `kp` inside `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- namedtuples and structseqs ----------------------------------------------------------------
def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_class(cls):
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_structseq(obj):
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls):
    """A C struct sequence (os.stat_result, torch.return_types.*): a tuple subclass with
    n_sequence_fields / n_fields / n_unnamed_fields and no further subclassing allowed."""
    if not (isinstance(cls, type) and cls.__bases__ == (tuple,)):
        return False
    counts = [getattr(cls, n, None) for n in ("n_sequence_fields", "n_fields",
                                             "n_unnamed_fields")]
    if not all(isinstance(c, int) for c in counts):
        return False
    try:
        type("_probe", (cls,), {})
    except (AssertionError, TypeError):
        return True
    return False


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


# ---- the built-in node types -------------------------------------------------------------------
def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return _seq_keys(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return _seq_keys(d), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    keys = list(d)
    return [(MappingKey(k), d[k]) for k in keys], keys


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(type(d)._fields, d)], type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context):
    node_def = SUPPORTED_SERIALIZED_TYPES.get(context)
    if node_def is None or node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} "
                                  "because we didn't register a serializated_type_name. Please "
                                  "register using `_register_namedtuple`.")
    return node_def.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class "
                                  f"{dumpable_context} because we couldn't find a serializated "
                                  "name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values))


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_flatten_with_keys(d):
    keys = list(d)
    return [(MappingKey(k), d[k]) for k in keys], [d.default_factory, keys]


def _defaultdict_unflatten(values, context):
    default_factory, keys = context
    return defaultdict(default_factory, zip(keys, values))


def _defaultdict_serialize(context):
    default_factory, keys = context
    return {"default_factory_module": default_factory.__module__,
            "default_factory_name": default_factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable_context):
    module = importlib.import_module(dumpable_context["default_factory_module"])
    return [getattr(module, dumpable_context["default_factory_name"]),
            dumpable_context["dict_context"]]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


for _cls, _flat, _unflat, _keys, _name, _to, _from in (
        (tuple, _tuple_flatten, _tuple_unflatten, _tuple_flatten_with_keys, "builtins.tuple",
         None, None),
        (list, _list_flatten, _list_unflatten, _list_flatten_with_keys, "builtins.list",
         None, None),
        (dict, _dict_flatten, _dict_unflatten, _dict_flatten_with_keys, "builtins.dict",
         None, None),
        (namedtuple, _namedtuple_flatten, _namedtuple_unflatten, _namedtuple_flatten_with_keys,
         "collections.namedtuple", _namedtuple_serialize, _namedtuple_deserialize),
        (OrderedDict, _dict_flatten, _ordereddict_unflatten, _dict_flatten_with_keys,
         "collections.OrderedDict", None, None),
        (defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
         _defaultdict_flatten_with_keys, "collections.defaultdict", _defaultdict_serialize,
         _defaultdict_deserialize),
        (deque, _deque_flatten, _deque_unflatten, _deque_flatten_with_keys, "collections.deque",
         None, None)):
    _private_register_pytree_node(_cls, _flat, _unflat, serialized_type_name=_name,
                                  to_dumpable_context=_to, from_dumpable_context=_from,
                                  flatten_with_keys_fn=_keys)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


_PLAIN_NODES = frozenset({tuple, list, dict, OrderedDict, defaultdict, deque})


def _get_node_type(tree):
    """Every namedtuple class counts as the one node type `collections.namedtuple`."""
    cls = type(tree)
    if cls in _PLAIN_NODES:
        return cls
    if is_namedtuple_class(cls):
        return namedtuple
    if cls.__module__ == "torch.return_types" and cls not in SUPPORTED_NODES:
        _register_return_type(cls)
    return cls


def _register_return_type(cls):
    # PyTorch registers every torch.return_types class as its own node, flattening to its
    # fields; ember makes those classes on first use, so each is registered when first seen
    register_pytree_node(cls, lambda t: (list(t), None), lambda values, context: cls(values),
                         flatten_with_keys_fn=lambda t: (_seq_keys(t), None))


def tree_is_leaf(tree, is_leaf=None):
    """True if `tree` is not a registered node (or `is_leaf(tree)` says so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


# ---- TreeSpec ----------------------------------------------------------------------------------
class TreeSpec:
    """The structure of a pytree: node type, context, child specs (a leaf has type None)."""
    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            counts = (1, 1, 0)
        else:
            nodes = leaves = 0
            for c in children_specs:
                nodes += c.num_nodes
                leaves += c.num_leaves
            counts = (nodes + 1, leaves, len(children_specs))
        init = object.__setattr__  # frozen: __setattr__ below refuses every later write
        init(self, "type", type)
        init(self, "_context", context)
        init(self, "_children", children_specs)
        init(self, "num_nodes", counts[0])
        init(self, "num_leaves", counts[1])
        init(self, "num_children", counts[2])

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")

    @property
    def context(self):
        return self._context

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return self._children.copy()

    def child(self, index):
        return self._children[index]

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        inner = ""
        if self.num_children:
            indent += 2
            parts = [c.__repr__(indent) for c in self._children]
            inner = parts[0] + ("," if len(parts) > 1 else "") + ",".join(
                "\n" + " " * indent + p for p in parts[1:])
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif t is not None and t not in BUILTIN_TYPES:
            ctx = None  # a custom node's context need not be hashable
        return hash((t, ctx, tuple(self._children)))

    def __reduce__(self):
        return (TreeSpec, (self.type, self._context, self._children))

    def unflatten(self, leaves):
        """The pytree of this structure holding `leaves`."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        if self.is_leaf():
            return leaves[0]
        it = iter(leaves)
        frames = [(self, [])]  # (spec, children built so far)
        while True:
            spec, built = frames[-1]
            if len(built) == spec.num_children:
                frames.pop()
                node = SUPPORTED_NODES[spec.type].unflatten_fn(built, spec._context)
                if not frames:
                    return node
                frames[-1][1].append(node)
                continue
            child = spec._children[len(built)]
            if child.is_leaf():
                built.append(next(it))
            else:
                frames.append((child, []))

    def flatten_up_to(self, tree):
        """The subtrees of `tree` sitting where this spec has its leaves (`tree` must have
        this spec as a prefix of its structure)."""
        out = []
        stack = [(self, tree)]
        while stack:
            spec, node = stack.pop()
            if spec.is_leaf():
                out.append(node)
                continue
            stack.extend(reversed(list(zip(spec._children, _children_matching(spec, node)))))
        return out


def _children_matching(spec, node):
    """`node`'s children in `spec`'s order, after checking node type, arity and context."""
    node_type = _get_node_type(node)
    if spec.type not in BUILTIN_TYPES:
        if node_type != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                             f"{len(children)}.")
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
        return children
    both_dicts = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
    if not both_dicts and node_type != spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got "
                         f"{node_type!r}.")
    if len(node) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                         f"{len(node)}.")
    if both_dicts:  # dict kinds are interchangeable; the keys must agree
        keys = spec._context[1] if spec.type is defaultdict else spec._context
        if set(node) != set(keys):
            missing, extra = set(keys) - set(node), set(node) - set(keys)
            message = (f"; missing key(s): {missing}" if missing else "") + \
                (f"; extra key(s): {extra}" if extra else "")
            raise ValueError(f"Node keys mismatch{message}.")
        return [node[k] for k in keys]
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    if node_type is not deque and context != spec._context:  # a deque's maxlen may differ
        raise ValueError(f"Node context mismatch for node type {spec.type!r}; expected "
                         f"{spec._context!r}, but got {context!r}.")
    return children


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (PyTorch deprecates testing for it: use `spec.is_leaf()`)."""
    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])

    def __reduce__(self):
        return (LeafSpec, ())


_LEAF_SPEC = LeafSpec()


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping=(), /, **kwargs):
    d = dict(mapping, **kwargs)
    return TreeSpec(dict, list(d), list(d.values()))


# ---- flattening and mapping --------------------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves of `tree` left to right, and its structure."""
    leaves = []
    if tree_is_leaf(tree, is_leaf):
        return [tree], _LEAF_SPEC
    frames = [_open(tree)]  # [node type, context, children, child specs so far]
    while True:
        node_type, context, children, specs = frames[-1]
        if len(specs) == len(children):
            frames.pop()
            spec = TreeSpec(node_type, context, specs)
            if not frames:
                return leaves, spec
            frames[-1][3].append(spec)
            continue
        child = children[len(specs)]
        if tree_is_leaf(child, is_leaf):
            leaves.append(child)
            specs.append(_LEAF_SPEC)
        else:
            frames.append(_open(child))


def _open(node):
    node_type = _get_node_type(node)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    return node_type, context, list(children), []


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of `tree`, lazily."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if tree_is_leaf(node, is_leaf):
            yield node
            continue
        children, _ = SUPPORTED_NODES[_get_node_type(node)].flatten_fn(node)
        stack.extend(reversed(list(children)))


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """`tree` with every leaf x replaced by func(x, *the matching leaves of rests)."""
    leaves, treespec = tree_flatten(tree, is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(list(map(func, *flat_args)))


def tree_map_(func, tree, *rests, is_leaf=None):
    """tree_map for func's side effects: `tree` itself is returned."""
    leaves, treespec = tree_flatten(tree, is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    for args in zip(*flat_args):
        func(*args)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator making `func` apply only to leaves of the given type(s) (or passing the
    predicate); other leaves pass through."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """`tree`, a prefix of `treespec`'s structure, with each of its leaves repeated over the
    leaves of the subtree it stands for (vmap's in_dims=(0, None) over its arguments); None if
    `tree` is not a prefix."""
    full_tree = treespec.unflatten([0] * treespec.num_leaves)
    result = []
    try:
        prefix_leaves, prefix_spec = tree_flatten(tree, is_leaf)
        subtrees = prefix_spec.flatten_up_to(full_tree)
    except ValueError:
        return None
    for x, sub in zip(prefix_leaves, subtrees):
        result.extend([x] * tree_structure(sub, is_leaf).num_leaves)
    return result


# ---- key paths over trees ----------------------------------------------------------------------
def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)], spec)."""
    _, treespec = tree_flatten(tree, is_leaf)
    return tree_leaves_with_path(tree, is_leaf), treespec


def tree_leaves_with_path(tree, is_leaf=None):
    out = []
    stack = [((), tree)]
    while stack:
        path, node = stack.pop()
        if tree_is_leaf(node, is_leaf):
            out.append((path, node))
            continue
        node_type = _get_node_type(node)
        with_keys = SUPPORTED_NODES[node_type].flatten_with_keys_fn
        if with_keys is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                             "Please pass a flatten_with_keys_fn argument to "
                             "register_pytree_node.")
        key_children, _ = with_keys(node)
        stack.extend(reversed([((*path, k), c) for k, c in key_children]))
    return out


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """tree_map whose func also gets each leaf's key path first."""
    path_leaves, treespec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in path_leaves], [x for _, x in path_leaves]]
    columns += [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten([func(*xs) for xs in zip(*columns)])


# ---- serialization (protocol 1: PyTorch's JSON layout) ----------------------------------------
class EnumEncoder(json.JSONEncoder):
    """JSON for contexts that hold Enum members (dict keys, for instance): each is written as
    {"__enum__": true, "fqn": "module:Class", "name": member}, and `enum_object_hook` reads
    it back."""

    def default(self, obj):
        if isinstance(obj, enum.Enum):
            return {"__enum__": True,
                    "fqn": f"{type(obj).__module__}:{type(obj).__qualname__}", "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    if "__enum__" not in obj:
        return obj
    module_name, _, class_name = obj["fqn"].partition(":")
    enum_cls = importlib.import_module(module_name)
    for attr in class_name.split("."):
        enum_cls = getattr(enum_cls, attr)
    return enum_cls[obj["name"]]


def _treespec_to_json(root):
    memo = {}
    order = []
    stack = [root]
    while stack:  # post-order: children before parents
        spec = stack.pop()
        order.append(spec)
        stack.extend(spec._children)
    for spec in reversed(order):
        if spec.is_leaf():
            memo[id(spec)] = {"type": None, "context": None, "children_spec": []}
            continue
        node_def = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
        if node_def is None:
            raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
        if node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
            raise NotImplementedError(f"No registered serialization name for {spec.type} "
                                      "found. Please update your _register_pytree_node call "
                                      "with a `serialized_type_name` kwarg.")
        if node_def.to_dumpable_context is None:
            try:
                context = json.dumps(spec._context, cls=EnumEncoder)
            except TypeError as e:
                raise TypeError("Unable to serialize context. Please make the context json "
                                "dump-able, or register a custom serializer using "
                                "_register_pytree_node.") from e
        else:
            context = node_def.to_dumpable_context(spec._context)
        memo[id(spec)] = {"type": node_def.serialized_type_name, "context": context,
                          "children_spec": [memo[id(c)] for c in spec._children]}
    return memo[id(root)]


def _json_to_treespec(root):
    order = []
    stack = [root]
    while stack:
        schema = stack.pop()
        order.append(schema)
        stack.extend(schema["children_spec"])
    memo = {}
    for schema in reversed(order):
        if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
            memo[id(schema)] = _LEAF_SPEC
            continue
        typ = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(schema["type"])
        if typ is None:
            raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not "
                                      "registered.")
        node_def = SUPPORTED_SERIALIZED_TYPES[typ]
        if node_def.from_dumpable_context is not None:
            context = node_def.from_dumpable_context(schema["context"])
        else:
            try:
                context = json.loads(schema["context"], object_hook=enum_object_hook)
            except TypeError as e:
                raise TypeError("Unable to deserialize context. Please make the context json "
                                "load-able, or register a custom serializer using "
                                "_register_pytree_node.") from e
        memo[id(schema)] = TreeSpec(typ, context,
                                    [memo[id(c)] for c in schema["children_spec"]])
    return memo[id(root)]


def treespec_dumps(treespec, protocol=None):
    """The spec as a JSON string (the same text PyTorch writes)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of "
                        f"type {type(treespec)}.")
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return json.dumps((protocol, _treespec_to_json(treespec)), cls=EnumEncoder)


def treespec_loads(serialized):
    protocol, schema = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return _json_to_treespec(schema)


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The structure drawn as the container it describes, `*` at each leaf: `(*, [*, *])`."""
    return repr(treespec.unflatten([_Asterisk()] * treespec.num_leaves))


def arg_tree_leaves(*args, **kwargs):
    """The leaves of all positional and keyword arguments, in order."""
    leaves = []
    for a in args:
        leaves.extend(tree_iter(a))
    for a in kwargs.values():
        leaves.extend(tree_iter(a))
    return leaves
