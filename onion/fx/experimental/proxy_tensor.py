"""``make_fx``: trace a function into an ``onion.fx`` graph of the operators it runs.

A dispatch mode sees every operator call below the Python bindings (and, inside ``autograd.grad`` or
``backward``, every operator the derivative formulas call), so tracing is only this: run the function
under a mode that records each call as a node, after mapping the tensors among its arguments to the
nodes that made them.  Tensors are keyed by their ``TensorImpl``: two Python handles over one impl
(a base and the handle autograd makes for it) are one value.
"""
from __future__ import annotations

import inspect
import operator
import weakref

from ...core.tensor import Tensor
from ...utils._python_dispatch import TorchDispatchMode
from ..graph import Graph
from ..graph_module import GraphModule

__all__ = ["make_fx"]


class _ProxyMode(TorchDispatchMode):
    """Records each operator call in ``graph``; ``decomposition_table`` entries run instead, traced."""

    def __init__(self, graph: Graph, decomposition_table: dict):
        self.graph = graph
        self.decompositions = decomposition_table
        self.node_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # TensorImpl -> Node
        self.constants: dict = {}

    def node_for(self, t: Tensor):
        """The node that made ``t``; a tensor the trace did not make (captured from outside) becomes a
        constant of the module, read with ``get_attr``."""
        node = self.node_of.get(t._impl)
        if node is None:
            name = f"_tensor_constant{len(self.constants)}"
            self.constants[name] = t
            node = self.node_of[t._impl] = self.graph.get_attr(name)
        return node

    def to_nodes(self, value):
        if isinstance(value, Tensor):
            return self.node_for(value)
        if isinstance(value, (tuple, list)):
            return type(value)(self.to_nodes(v) for v in value)
        if isinstance(value, dict):
            return {k: self.to_nodes(v) for k, v in value.items()}
        return value

    def track(self, out, node) -> None:
        """``out`` was made by ``node``: a tensor is the node's value, each tensor of a tuple or list one
        ``getitem`` of it (as torch.fx records multi-output operators); ``meta["val"]`` keeps the value
        (a fake tensor when tracing fake), as make_fx's nodes do."""
        node.meta["val"] = out
        if isinstance(out, Tensor):
            self.node_of[out._impl] = node
        elif isinstance(out, (tuple, list)):
            for i, item in enumerate(out):
                if isinstance(item, Tensor):
                    getitem = self.graph.call_function(operator.getitem, (node, i))
                    getitem.meta["val"] = item
                    self.node_of[item._impl] = getitem

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func)
        if decomposition is not None:
            with self:              # the decomposition's own operators are traced
                result = decomposition(*args, **kwargs)
            if result is not NotImplemented:
                return result
        out = func(*args, **kwargs)
        node = self.graph.call_function(func, self.to_nodes(args), self.to_nodes(kwargs))
        self.track(out, node)
        return out


def _flatten(value, leaves: list):
    """The leaves of nested tuples/lists/dicts, and a function that rebuilds the structure from new leaves."""
    if isinstance(value, (tuple, list)):
        parts = [_flatten(v, leaves) for v in value]
        kind = type(value)
        return lambda it: kind(p(it) for p in parts)
    if isinstance(value, dict):
        parts = {k: _flatten(v, leaves) for k, v in value.items()}
        return lambda it: {k: p(it) for k, p in parts.items()}
    leaves.append(value)
    return lambda it: next(it)


def _placeholder_names(fn, count: int) -> list:
    """``x_1, w_1`` after the function's parameters, as make_fx names its inputs; ``arg0_1, ...`` otherwise."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) == count:
        return [f"{p.name}_1" for p in params]
    return [f"arg{i}_1" for i in range(count)]


def make_fx(f, decomposition_table=None, tracing_mode: str = "real", *, pre_dispatch: bool = False,
            _allow_non_fake_inputs: bool = False):
    """``make_fx(f)(*args)``: a ``GraphModule`` of the operators ``f(*args)`` runs.

    ``tracing_mode="real"`` runs ``f`` on the given tensors; ``"fake"`` on fake copies of them (shapes
    only, no data: onion._subclasses.fake_tensor).  ``decomposition_table`` maps an operator overload to
    a function that replaces it while tracing; the operators that function calls are recorded instead.
    """
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise ValueError(f"make_fx: unknown tracing_mode {tracing_mode!r}; expected 'real' or 'fake'")
    if tracing_mode == "symbolic":
        raise NotImplementedError("make_fx: tracing_mode='symbolic' needs symbolic shapes, which onion does not "
                                  "have; use 'real' or 'fake'")
    if pre_dispatch:
        raise NotImplementedError("make_fx: pre_dispatch tracing (above autograd) is not supported by onion")
    table = dict(decomposition_table or {})

    def traced(*args):
        leaves: list = []
        rebuild = _flatten(args, leaves)
        graph = Graph()
        mode = _ProxyMode(graph, table)
        names = _placeholder_names(f, len(args)) if len(leaves) == len(args) else \
            [f"arg{i}_1" for i in range(len(leaves))]
        fake_mode = None
        if tracing_mode == "fake":
            from ..._subclasses.fake_tensor import FakeTensorMode
            fake_mode = FakeTensorMode(allow_non_fake_inputs=_allow_non_fake_inputs)
            leaves = [fake_mode.from_tensor(v) if isinstance(v, Tensor) else v for v in leaves]
        for name, value in zip(names, leaves):
            node = graph.placeholder(name)
            node.meta["val"] = value
            if isinstance(value, Tensor):
                mode.node_of[value._impl] = node
        inputs = rebuild(iter(leaves))
        if fake_mode is not None:
            with fake_mode, mode:
                out = f(*inputs)
        else:
            with mode:
                out = f(*inputs)
        graph.output(mode.to_nodes(out))
        return GraphModule(mode.constants, graph)
    return traced
