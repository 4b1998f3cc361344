"""``onion.fx.GraphModule``: a graph with the constants it reads, callable like the function it traced."""
from __future__ import annotations


from .graph import Graph, map_arg


class GraphModule:
    """Runs ``graph`` on its inputs by walking the nodes in order (the code ``code`` shows, without
    compiling it); ``get_attr`` nodes read attributes of this module, copied from ``root`` (an object or a
    dict) when it is made."""

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        self.graph = graph
        self._class_name = class_name
        items = root.items() if isinstance(root, dict) else ((n.target, getattr(root, n.target)) for n in
                                                               graph.nodes if n.op == "get_attr")
        for name, value in items:
            setattr(self, name, value)

    @property
    def code(self) -> str:
        return "\n\n\n" + self.graph.python_code() + "    "

    def print_readable(self, print_output: bool = True) -> str:
        text = f"class {self._class_name}(onion.nn.Module):\n" + "".join(
            "    " + line + "\n" if line else "\n" for line in self.graph.python_code().splitlines())
        if print_output:
            print(text)
        return text

    def recompile(self):
        """Nothing to compile: the nodes are interpreted; kept for code written against torch.fx."""
        return self.code

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, *args):
        nodes = self.graph.nodes
        placeholders = [n for n in nodes if n.op == "placeholder"]
        if len(args) != len(placeholders):
            raise TypeError(f"forward() takes {len(placeholders)} positional arguments but {len(args)} were given")
        last_use: dict = {}         # node -> the last node that reads it: its value is dropped after that one
        for node in nodes:
            for used in node.all_input_nodes:
                last_use[used] = node
        frees: dict = {}
        for used, user in last_use.items():
            frees.setdefault(user, []).append(used)
        env: dict = {}
        inputs = iter(args)
        lookup = env.__getitem__
        for node in nodes:
            op = node.op
            if op == "placeholder":
                env[node] = next(inputs)
            elif op == "get_attr":
                obj = self
                for part in node.target.split("."):
                    obj = getattr(obj, part)
                env[node] = obj
            elif op == "call_function":
                a = map_arg(node.args, lookup)
                k = map_arg(node.kwargs, lookup)
                env[node] = node.target(*a, **k)
            else:
                return map_arg(node.args[0], lookup)
            for used in frees.get(node, ()):
                del env[used]
        return None

    def __repr__(self):
        return self.print_readable(print_output=False)
