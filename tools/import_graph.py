"""ember's import graph, read from the source (no import): which module imports which, at module
level or inside a function (a call-time import), and the cycles among them.

    python tools/import_graph.py [--call-time]

prints the import cycles (strongly connected components) and the call-time imports that reach
from a lower layer up to a higher one. A submodule importing a name from its own package's
__init__ (`from . import helper`) is the ordinary package pattern and is not counted.
"""
import argparse
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "ember"

# The layers, lowest first: a module may import its own layer and the ones below it. The
# derivative formulas are written with the functions of the layers below them, and explain
# watches the dispatcher and the backward engine, so both sit above their packages.
LAYERS = ["ember._core", "ember._dispatch", "ember._aten", "ember.autograd", "ember._bindings",
          "ember._refs", "ember.linalg", "ember.autograd.derivatives", "ember._dispatch.explain"]


def modules(root=ROOT):
    """{module name: (path, is_package)}"""
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        is_pkg = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return found


def edges(mods):
    """{(importer, imported): {"top", "call"}} for imports between ember's modules."""
    out = {}
    for name, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text())
        top = {id(n) for n in tree.body}
        for node in _statements(tree):
            if isinstance(node, ast.ImportFrom):
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                if node.level:
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module
                found = [f"{target}.{a.name}" if f"{target}.{a.name}" in mods else target
                         for a in node.names]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            else:
                continue
            kind = "top" if id(node) in top else "call"
            for t in found:
                if t in mods and t != name and not name.startswith(t + "."):
                    out.setdefault((name, t), set()).add(kind)
    return out


def _statements(tree):
    """Every statement of a module, nested ones too (imports are statements: the expressions,
    most of a tree's nodes, need no visit)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(getattr(node, field, ()))


def cycles(graph_edges, kinds):
    """Strongly connected components (of more than one module), iteratively (Tarjan)."""
    succ = {}
    for (a, b), k in graph_edges.items():
        if k & kinds:
            succ.setdefault(a, []).append(b)
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in list(succ):
        if start in index:
            continue
        work = [(start, iter(succ.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer(module):
    """The rank of the longest layer prefix of `module` (the rest of ember is above them all)."""
    best, rank = "", len(LAYERS)
    for r, prefix in enumerate(LAYERS):
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best, rank = prefix, r
    return rank


def upward(graph_edges):
    """Imports from a lower layer to a higher one: [(importer, imported, kinds)]."""
    return [(a, b, k) for (a, b), k in sorted(graph_edges.items()) if layer(a) < layer(b)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--call-time", action="store_true",
                        help="count call-time imports in the cycles too")
    args = parser.parse_args()
    e = edges(modules())
    kinds = {"top", "call"} if args.call_time else {"top"}
    found = cycles(e, kinds)
    print(f"{len(found)} import cycles" + (" (with call-time imports)" if args.call_time else ""))
    for c in found:
        print("  ", " <-> ".join(c))
    up = upward(e)
    print(f"{len(up)} imports from a lower layer to a higher one:")
    for a, b, k in up:
        print(f"   {a} -> {b} ({', '.join(sorted(k))})")


if __name__ == "__main__":
    main()
