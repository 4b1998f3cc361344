"""``onion.fx``: graphs of operator calls, at the size tracing needs (``Graph``, ``GraphModule``, ``make_fx``)."""
from .graph import Graph, Node, map_arg  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
