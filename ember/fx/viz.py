"""Drawing an fx graph (the role of torch.fx.passes.graph_drawer): one box per node, coloured
by op kind, labelled with its name, target and (after ShapeProp) its shape and dtype, with an
arrow from each value to the nodes that read it.

`to_dot(gm)` writes Graphviz DOT text; `draw(gm, "model.svg")` renders SVG or PNG with
Graphviz's `dot` program when it is installed (Debian: `apt-get install graphviz`), else with
matplotlib (`pip install ember[viz]`), laying the nodes out in layers itself.

    python -m ember.fx.viz examples/mnist.py:Net --input-shape 1,1,28,28 -o docs/images/mnist_net_fx.svg
"""
import argparse
import importlib
import importlib.util
import os
import shutil
import subprocess

from .node import _pretty_print_target

__all__ = ["to_dot", "draw"]

_COLORS = {"placeholder": "#a8d5ba", "get_attr": "#f6d186", "call_function": "#aec6e8",
           "call_method": "#c5b0d5", "call_module": "#ffbb78", "output": "#d3d3d3"}


def _graph_of(gm_or_graph):
    return getattr(gm_or_graph, "graph", gm_or_graph)


def _label_lines(node):
    lines = [node.name]
    if node.op not in ("placeholder", "output"):
        target = _pretty_print_target(node.target)
        if node.op == "call_module":
            owner = _graph_of(node.graph).owning_module
            if owner is not None:
                target = f"{target}: {type(owner.get_submodule(node.target)).__name__}"
        lines.append(f"{node.op}  {target}")
    meta = node.meta.get("tensor_meta")
    if meta is not None and hasattr(meta, "shape"):
        dtype = str(meta.dtype).replace("torch.", "")
        lines.append(f"{dtype}{list(meta.shape)}")
    return lines


def to_dot(gm_or_graph, name="graph"):
    """Graphviz DOT source for the graph (top to bottom, in program order)."""
    graph = _graph_of(gm_or_graph)
    out = [f'digraph "{name}" {{', "  rankdir=TB;",
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];']
    for node in graph.nodes:
        label = "\\n".join(line.replace('"', '\\"') for line in _label_lines(node))
        out.append(f'  "{node.name}" [label="{label}", fillcolor="{_COLORS[node.op]}"];')
    for node in graph.nodes:
        for user in node.users:
            out.append(f'  "{node.name}" -> "{user.name}";')
    out.append("}")
    return "\n".join(out) + "\n"


def _layers(graph):
    """Each node's depth: one more than its deepest input (nodes come in topological order)."""
    depth = {}
    for node in graph.nodes:
        depth[node] = 1 + max((depth[i] for i in node.all_input_nodes), default=-1)
    return depth


def _draw_matplotlib(graph, path, fmt):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("drawing an fx graph needs Graphviz's `dot` (apt-get install graphviz) "
                          "or matplotlib (pip install ember[viz])") from e
    depth = _layers(graph)
    rows = {}
    for node, d in depth.items():
        rows.setdefault(d, []).append(node)
    width = max(len(r) for r in rows.values())
    pos = {}
    for d, nodes in rows.items():
        for i, node in enumerate(nodes):
            pos[node] = ((i - (len(nodes) - 1) / 2) * 3.2, -d * 1.1)
    fig, ax = plt.subplots(figsize=(max(4, 2.6 * width), max(3, 0.9 * len(rows))))
    for node in graph.nodes:
        x, y = pos[node]
        for user in node.users:
            ux, uy = pos[user]
            ax.annotate("", xy=(ux, uy + 0.3), xytext=(x, y - 0.3),
                        arrowprops=dict(arrowstyle="->", color="#555555", lw=0.8))
        ax.text(x, y, "\n".join(_label_lines(node)), ha="center", va="center", fontsize=7,
                bbox=dict(boxstyle="round,pad=0.3", fc=_COLORS[node.op], ec="#333333", lw=0.6))
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 2, max(xs) + 2)
    ax.set_ylim(min(ys) - 1, max(ys) + 1)
    ax.axis("off")
    fig.savefig(path, format=fmt, bbox_inches="tight")
    plt.close(fig)


def draw(gm_or_graph, path, engine=None):
    """Render the graph to `path` (.svg or .png). engine: "dot", "matplotlib", or None for
    dot when installed, else matplotlib. Returns the engine used."""
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if fmt not in ("svg", "png"):
        raise ValueError(f"draw: cannot write {path!r}; give a .svg or .png file name")
    if engine is None:
        engine = "dot" if shutil.which("dot") else "matplotlib"
    if engine == "dot":
        if not shutil.which("dot"):
            raise RuntimeError("draw(engine='dot'): Graphviz's `dot` is not installed "
                               "(apt-get install graphviz)")
        subprocess.run(["dot", f"-T{fmt}", "-o", path], input=to_dot(gm_or_graph).encode(),
                       check=True)
    elif engine == "matplotlib":
        _draw_matplotlib(_graph_of(gm_or_graph), path, fmt)
    else:
        raise ValueError(f"draw: unknown engine {engine!r} (expected 'dot' or 'matplotlib')")
    return engine


def _load(spec):
    """`package.module:factory` or `path/file.py:factory` -> the Module the factory (a class or
    function) returns."""
    module_name, _, attr = spec.rpartition(":")
    if not module_name:
        raise ValueError(f"expected MODULE:FACTORY or FILE.py:FACTORY, got {spec!r}")
    if module_name.endswith(".py"):
        loader_spec = importlib.util.spec_from_file_location("_ember_viz_model", module_name)
        module = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attr)()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ember.fx.viz",
                                     description="Trace a model with ember.fx and draw its graph.")
    parser.add_argument("model", help="MODULE:FACTORY or FILE.py:FACTORY returning an "
                                      "nn.Module, e.g. ember.vision.models:resnet18")
    parser.add_argument("-o", "--output", required=True, help="output .svg or .png file")
    parser.add_argument("--input-shape", help="comma-separated input shape: annotate each node "
                                              "with its shape (ShapeProp on the meta device)")
    parser.add_argument("--engine", choices=("dot", "matplotlib"), default=None)
    args = parser.parse_args(argv)
    from ._symbolic_trace import symbolic_trace
    gm = symbolic_trace(_load(args.model))
    if args.input_shape:
        import ember
        from .passes.shape_prop import ShapeProp
        shape = [int(s) for s in args.input_shape.split(",")]
        ShapeProp(gm).propagate(ember.empty(shape, device="meta"))
    engine = draw(gm, args.output, args.engine)
    print(f"wrote {args.output} ({len(gm.graph.nodes)} nodes, {engine})")


if __name__ == "__main__":
    main()
