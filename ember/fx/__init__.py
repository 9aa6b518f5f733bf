"""ember.fx, PyTorch's torch.fx: symbolic tracing of Python code into a Graph of Nodes, graph
transformation, and generation of Python code (a GraphModule) back from the graph.

    gm = ember.fx.symbolic_trace(model)   # Proxies run through forward, recording nodes
    gm.graph.print_tabular()              # placeholder / get_attr / call_* / output nodes
    print(gm.code)                        # the regenerated forward
"""
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from .interpreter import Interpreter, Transformer
from .subgraph_rewriter import replace_pattern
from . import immutable_collections  # noqa: F401  (registers its pytree nodes)

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "map_arg", "has_side_effect", "PH",
           "ProxyableClassMeta"]
