"""ember.utils._pytree against torch.utils._pytree: flatten/unflatten of every built-in node
type, TreeSpec's repr, equality, hash and counts, tree_map (with several trees), tree_map_only,
key paths, registration of a custom node, JSON serialization, the error messages; and that the
function transforms use this same module."""
import collections
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import ember.utils._pytree as ep

torch = pytest.importorskip("torch")
import torch.utils._pytree as tp  # noqa: E402

Point = namedtuple("Point", "x y")


def _tree():
    return {"a": [1, (2, 3.5)], "b": Point(4, [5]), "c": OrderedDict(z=6, y=7),
            "d": defaultdict(list, {1: 8}), "e": deque([9, 10], maxlen=3), "f": None,
            "g": (), "h": {"nested": [[["deep"]]]}}


@pytest.mark.parametrize("m", [tp, ep], ids=["torch", "ember"])
def test_round_trip(m):
    leaves, spec = m.tree_flatten(_tree())
    assert m.tree_unflatten(leaves, spec) == _tree()
    assert type(m.tree_unflatten(leaves, spec)["e"]) is deque


def test_flatten_and_spec_as_torch():
    out = []
    for m in (tp, ep):
        leaves, spec = m.tree_flatten(_tree())
        out.append((leaves, repr(spec), spec.num_nodes, spec.num_leaves, spec.num_children,
                    spec.is_leaf(), spec.child(0).num_leaves, len(spec.children()),
                    spec.context, m.tree_structure(5).is_leaf(), repr(m.tree_structure(5)),
                    m.tree_leaves([1, [2, {"k": 3}]]), m.treespec_pprint(spec),
                    m.tree_is_leaf((1,)), m.tree_is_leaf((1,), is_leaf=lambda x: True),
                    m.tree_flatten([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))[0]))
    assert out[0] == out[1]


def test_spec_equality_and_hash():
    for m in (tp, ep):
        a, b = m.tree_structure(_tree()), m.tree_structure(_tree())
        assert a == b and hash(a) == hash(b) and a is not b
        assert m.tree_structure([1, 2]) != m.tree_structure((1, 2))
        assert m.tree_structure({"a": 1}) != m.tree_structure({"b": 1})


def test_maps_as_torch():
    out = []
    for m in (tp, ep):
        out.append((m.tree_map(lambda a, b: a + b, (1, [2, {"k": 3}]), (10, [20, {"k": 30}])),
                    m.tree_map_only(int, lambda x: x * 2, (1, "s", [2.0, 3])),
                    m.tree_map_only((int, float), lambda x: -x, [1, 2.5, "t"]),
                    m.tree_map_only(lambda x: x == 2, lambda x: 0, [1, 2, 3]),
                    m.tree_all(lambda x: x > 0, [1, (2,)]), m.tree_any(lambda x: x > 1, [1, (2,)]),
                    m.tree_all_only(int, lambda x: x > 0, [1, "a"]),
                    m.tree_any_only(str, lambda x: x == "a", [1, "a"]),
                    # dict kinds interchange when the keys agree
                    m.tree_map(lambda a, b: (a, b), {"a": 1, "b": 2}, OrderedDict(b=4, a=3)),
                    m._broadcast_to_and_flatten((0, None), m.tree_structure(([1, 2], 3))),
                    m._broadcast_to_and_flatten([0], m.tree_structure((1,)))))
        seen = []
        assert m.tree_map_(seen.append, [1, (2, 3)]) == [1, (2, 3)] and seen == [1, 2, 3]
    assert out[0] == out[1]


def test_key_paths_as_torch():
    out = []
    for m in (tp, ep):
        paths, spec = m.tree_flatten_with_path(_tree())
        out.append(([m.keystr(p) for p, _ in paths], [v for _, v in paths],
                    m.key_get(_tree(), paths[4][0]),
                    m.tree_map_with_path(lambda p, x: m.keystr(p), {"a": [1, 2]})))
    assert out[0] == out[1]


def test_errors_as_torch():
    cases = [lambda m: m.tree_map(lambda a, b: a, (1, 2), [1, 2]),
             lambda m: m.tree_map(lambda a, b: a, (1, 2), (1, 2, 3)),
             lambda m: m.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}),
             lambda m: m.tree_unflatten([1], m.tree_structure((1, 2))),
             lambda m: m.tree_map(lambda a, b: a, Point(1, 2), (1, 2)),
             lambda m: m.treespec_loads('[9, {}]'),
             lambda m: m.map_only(3)]
    for case in cases:
        got = []
        for m in (tp, ep):
            with pytest.raises(Exception) as info:
                case(m)
            got.append((type(info.value), str(info.value)))
        assert got[0] == got[1]


def test_register_custom_node_as_torch():
    out = []
    for m in (tp, ep):
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

        m.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"),
                               lambda values, ctx: Pair(*values), serialized_type_name="Pair",
                               flatten_with_keys_fn=lambda p: ([(m.GetAttrKey("a"), p.a),
                                                                (m.GetAttrKey("b"), p.b)], "ctx"))
        with pytest.raises(ValueError, match="already registered"):
            m.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: None)
        leaves, spec = m.tree_flatten([Pair(1, (2, 3))])
        back = m.tree_unflatten([x * 10 for x in leaves], spec)
        out.append((leaves, repr(spec).replace("Pair", "P"), back[0].a, back[0].b,
                    [m.keystr(p) for p, _ in m.tree_leaves_with_path(Pair(1, 2))],
                    m.treespec_dumps(spec)))
        with pytest.raises(ValueError, match="Type mismatch"):
            spec.flatten_up_to([(1, 2)])
        m._deregister_pytree_node(Pair)
    assert out[0] == out[1]


def test_serialization_is_torchs_text():
    tree = [1, (2, {"k": 3}), OrderedDict(a=1), deque([1], maxlen=2), defaultdict(list, {1: 2})]
    text = tp.treespec_dumps(tp.tree_structure(tree))
    assert ep.treespec_dumps(ep.tree_structure(tree)) == text
    assert ep.treespec_loads(text) == ep.tree_structure(tree)
    with pytest.raises(NotImplementedError):
        ep.treespec_dumps(ep.tree_structure(Point(1, 2)))


def test_deep_tree_needs_no_recursion():
    deep = 0
    for _ in range(5000):
        deep = [deep]
    leaves, spec = ep.tree_flatten(deep)
    assert leaves == [0] and spec.num_nodes == 5001
    assert ep.tree_leaves(ep.tree_unflatten([7], spec)) == [7]


def test_function_transforms_share_it():
    import ember._functorch.vmap as vmap_mod
    import ember._functorch.eager_transforms as et
    assert vmap_mod.tree_flatten is ep.tree_flatten and et.tree_map is ep.tree_map
    import ember
    x = ember.ones(3, 2)
    with pytest.raises(ValueError, match=r"in_dims has structure TreeSpec\(tuple, None, "
                                         r"\[\*,\n  \*\]\) but inputs has structure"):
        ember.vmap(lambda a: a, in_dims=(0, 0))(x)
    out = ember.vmap(lambda d: d["a"] * 2)({"a": x})
    assert out.shape == (3, 2)
