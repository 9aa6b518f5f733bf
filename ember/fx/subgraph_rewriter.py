"""torch.fx's subgraph_rewriter.replace_pattern: find every non-overlapping occurrence of a
pattern (a function, traced) in a GraphModule's graph and put a copy of a replacement in its
place.

A match is grown backwards from the node the pattern returns (its anchor): a pattern node
matches a graph node with the same op kind, target and literal arguments, and its Node arguments
must match the graph node's in the same positions; the pattern's placeholders match any node (distinct placeholders, distinct nodes).
A match is used only if the nodes it would remove are not read from outside it.
"""
import collections

from .graph_module import GraphModule, _copy_attr
from .node import Node

__all__ = ["Match", "replace_pattern"]


# anchor: the pattern's node the match grew from (the one it returns);
# nodes_map: pattern Node -> graph Node
Match = collections.namedtuple("Match", ["anchor", "nodes_map"])


def _pair_arguments(pattern_arg, graph_arg, pairs):
    """Walk two argument structures side by side: equal literals and shapes, Nodes collected
    into pairs. False on any difference."""
    stack = [(pattern_arg, graph_arg)]
    while stack:
        p, g = stack.pop()
        if isinstance(p, Node):
            if not isinstance(g, Node):
                return False
            pairs.append((p, g))
        elif isinstance(p, (tuple, list)):
            if not isinstance(g, (tuple, list)) or len(p) != len(g):
                return False
            stack.extend(zip(p, g))
        elif isinstance(p, dict):
            if not isinstance(g, dict) or p.keys() != g.keys():
                return False
            stack.extend((p[k], g[k]) for k in p)
        elif isinstance(g, Node) or type(p) is not type(g) or p != g:
            return False
    return True


def _match_at(pattern_anchor, graph_node):
    nodes_map = {}
    stack = [(pattern_anchor, graph_node)]
    while stack:
        pn, gn = stack.pop()
        if pn in nodes_map:
            if nodes_map[pn] is not gn:
                return None
            continue
        if pn.op == "placeholder":
            nodes_map[pn] = gn
            continue
        if gn.op != pn.op or gn.target != pn.target:
            return None
        pairs = []
        if not (_pair_arguments(pn.args, gn.args, pairs)
                and _pair_arguments(pn.kwargs, gn.kwargs, pairs)):
            return None
        nodes_map[pn] = gn
        stack.extend(pairs)
    # distinct pattern nodes, placeholders included, stand for distinct graph nodes
    if len(set(nodes_map.values())) != len(nodes_map):
        return None
    return nodes_map


def _self_contained(nodes_map, pattern_anchor):
    """Nodes that will be erased must have no users outside the match."""
    inside = {g for p, g in nodes_map.items() if p.op != "placeholder"}
    for p, g in nodes_map.items():
        if p.op == "placeholder" or p is pattern_anchor:
            continue
        if any(user not in inside for user in g.users):
            return False
    return True


def _as_graph_module(fn):
    if isinstance(fn, GraphModule):
        return fn
    from ._symbolic_trace import symbolic_trace
    return symbolic_trace(fn)


def replace_pattern(gm, pattern, replacement):
    """Replace every match of `pattern` in gm by `replacement` (functions or GraphModules
    taking the same inputs); returns the Matches, in graph order. Recompiles gm."""
    pattern_gm = _as_graph_module(pattern)
    replacement_gm = _as_graph_module(replacement)
    pattern_graph, replacement_graph = pattern_gm.graph, replacement_gm.graph
    output = next(n for n in pattern_graph.nodes if n.op == "output")
    if not isinstance(output.args[0], Node):
        raise NotImplementedError("replace_pattern: the pattern must return a single value")
    pattern_anchor = output.args[0]
    pattern_placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(pattern_placeholders) != len(replacement_placeholders):
        raise ValueError(f"pattern takes {len(pattern_placeholders)} inputs but replacement "
                         f"takes {len(replacement_placeholders)}")

    graph = gm.graph
    matches, claimed = [], set()
    for node in graph.nodes:
        if node.op != pattern_anchor.op or node.target != pattern_anchor.target:
            continue
        nodes_map = _match_at(pattern_anchor, node)
        if nodes_map is None or not _self_contained(nodes_map, pattern_anchor):
            continue
        internal = {g for p, g in nodes_map.items() if p.op != "placeholder"}
        if internal & claimed:
            continue
        claimed |= internal
        matches.append(Match(anchor=pattern_anchor, nodes_map=nodes_map))

    for node in replacement_graph.nodes:
        if node.op in ("get_attr", "call_module") and not _has_path(gm, node.target):
            _copy_attr(replacement_gm, gm, node.target)

    for match in matches:
        val_map = {r: match.nodes_map[p]
                   for r, p in zip(replacement_placeholders, pattern_placeholders)}
        anchor = match.nodes_map[match.anchor]
        with graph.inserting_before(anchor):
            new_value = graph.graph_copy(replacement_graph, val_map)
        anchor.replace_all_uses_with(new_value)
        doomed = [g for p, g in match.nodes_map.items() if p.op != "placeholder"]
        order = {n: i for i, n in enumerate(graph.nodes)}
        for g in sorted(doomed, key=order.__getitem__, reverse=True):
            graph.erase_node(g)
    gm.recompile()
    return matches


def _has_path(module, target):
    obj = module
    for atom in target.split("."):
        if not hasattr(obj, atom):
            return False
        obj = getattr(obj, atom)
    return True
