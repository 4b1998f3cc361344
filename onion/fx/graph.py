"""``onion.fx.Graph``: a straight-line program of operator calls, as torch.fx records one.

What tracing needs and no more: nodes that are placeholders (the inputs), calls of a function (an
operator overload such as ``aten.mm.default``, or ``operator.getitem`` to take one output of several),
reads of a constant the module holds (``get_attr``) and the output.  A graph prints as the Python
code that would run it (``python_code``), as torch.fx's does, but it is never executed from that
text: ``GraphModule`` replays the nodes directly.
"""
from __future__ import annotations

import builtins
import keyword
import operator
import re
from dataclasses import dataclass, field
from typing import Any

OPS = ("placeholder", "call_function", "get_attr", "output")


@dataclass(eq=False)
class Node:
    """One step: ``op`` says what kind, ``target`` what it calls or reads, ``args``/``kwargs`` its
    inputs (other nodes, or constants: numbers, lists, dtypes, ...)."""
    graph: "Graph" = field(repr=False)
    name: str
    op: str
    target: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict, repr=False)
    users: dict = field(default_factory=dict, repr=False)   # node -> None, in first-use order

    def __repr__(self):
        return self.name

    @property
    def all_input_nodes(self) -> list:
        found: dict = {}
        _walk((self.args, self.kwargs), lambda n: found.setdefault(n, None))
        return list(found)


def _walk(value, fn) -> None:
    """Call ``fn`` on every node inside ``value`` (nested tuples, lists, dicts)."""
    if isinstance(value, Node):
        fn(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _walk(v, fn)
    elif isinstance(value, dict):
        for v in value.values():
            _walk(v, fn)


def map_arg(value, fn):
    """``value`` with every node in it replaced by ``fn(node)`` (torch.fx.node.map_arg)."""
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_arg(v, fn) for v in value)
    if isinstance(value, list):
        return [map_arg(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_arg(v, fn) for k, v in value.items()}
    return value


_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]+")
_SUFFIX = re.compile(r"(.*)_(\d+)$")


class _Namespace:
    """Unique Python identifiers for node names, as torch.fx picks them: ``mm``, ``mm_1``, ...; a name that
    is a Python builtin or keyword (``pow``, ``sum``) starts at ``_1``."""

    def __init__(self):
        self._used: set = set()
        self._next: dict = {}

    def create(self, candidate: str) -> str:
        candidate = _ILLEGAL.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        m = _SUFFIX.match(candidate)
        base, num = (m.group(1), int(m.group(2))) if m else (candidate, None)
        if num is None and candidate not in self._used and not _reserved(candidate):
            self._used.add(candidate)
            return candidate
        n = self._next.get(base, 1) if num is None else num
        while f"{base}_{n}" in self._used:
            n += 1
        name = f"{base}_{n}"
        self._next[base] = n + 1
        self._used.add(name)
        return name


def _reserved(name: str) -> bool:
    return keyword.iskeyword(name) or hasattr(builtins, name) or name in ("onion", "torch", "self", "inf", "nan")


def _target_name(target) -> str:
    """The name a call's node gets from what it calls: ``mm`` for ``aten.mm.default``."""
    opname = getattr(target, "_opname", None)
    if opname is not None:
        return opname.split(".")[0]
    return getattr(target, "__name__", "call")


def _target_source(target) -> str:
    """How the printed code spells a target."""
    if getattr(target, "_opname", None) is not None:
        return f"onion.ops.{target}"
    if getattr(target, "__module__", None) == "_operator":
        return f"operator.{target.__name__}"
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', repr(target))}".lstrip(".")


def _constant_source(value) -> str:
    """A constant argument as the printed code shows it (dtypes, devices, memory formats by their public name)."""
    from ..core.device import device
    from ..core.dtype import dtype
    from ..core.memory_format import memory_format
    if isinstance(value, (dtype, memory_format)):
        return f"onion.{value}".replace("onion.onion.", "onion.")
    if isinstance(value, device):
        return repr(value)
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _arg_source(value) -> str:
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(_arg_source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_arg_source(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_arg_source(v)}" for k, v in value.items()) + "}"
    return _constant_source(value)


class Graph:
    """The nodes of one traced program, in execution order."""

    def __init__(self):
        self.nodes: list = []
        self._names = _Namespace()

    def _make(self, op, target, args=(), kwargs=None, name=None) -> Node:
        if op not in OPS:
            raise ValueError(f"Graph: unknown node op {op!r} (one of {', '.join(OPS)})")
        node = Node(self, self._names.create(name or _target_name(target)), op, target,
                    tuple(args), dict(kwargs or {}))
        _walk((node.args, node.kwargs), lambda n: n.users.setdefault(node, None))
        self.nodes.append(node)
        return node

    def placeholder(self, name: str) -> Node:
        return self._make("placeholder", name, name=name)

    def get_attr(self, qualified_name: str) -> Node:
        return self._make("get_attr", qualified_name, name=qualified_name)

    def call_function(self, target, args=(), kwargs=None, name=None) -> Node:
        return self._make("call_function", target, args, kwargs, name)

    def output(self, result) -> Node:
        return self._make("output", "output", (result,), name="output")

    def erase_node(self, node: Node) -> None:
        if node.users:
            raise RuntimeError(f"Graph.erase_node: {node.name} still has users {list(node.users)}")
        _walk((node.args, node.kwargs), lambda n: n.users.pop(node, None))
        self.nodes.remove(node)

    # --- printing ------------------------------------------------------------------------
    def python_code(self) -> str:
        """The graph as the source of a ``forward`` method (for reading: it is not executed)."""
        params = [n.name for n in self.nodes if n.op == "placeholder"]
        last_use: dict = {}
        for node in self.nodes:
            _walk((node.args, node.kwargs), lambda n, node=node: last_use.__setitem__(n, node))
        frees: dict = {}
        for used, user in last_use.items():
            frees.setdefault(user, []).append(used)
        lines = [f"def forward(self, {', '.join(params)}):" if params else "def forward(self):"]
        for node in self.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                lines.append(f"    return {_arg_source(node.args[0])}")
                continue
            if node.op == "get_attr":
                stmt = f"{node.name} = self.{node.target}"
            else:
                parts = [_arg_source(a) for a in node.args]
                parts += [f"{k} = {_arg_source(v)}" for k, v in node.kwargs.items()]
                if node.target is operator.getitem:
                    stmt = f"{node.name} = {_arg_source(node.args[0])}[{_arg_source(node.args[1])}]"
                else:
                    stmt = f"{node.name} = {_target_source(node.target)}({', '.join(parts)})"
            dead = [n.name for n in frees.get(node, ())]
            if not node.users:
                dead.append(node.name)
            if dead:
                stmt += f";  {' = '.join(dead)} = None"
            lines.append("    " + stmt)
        return "\n".join(lines) + "\n"

    def __str__(self):
        lines = ["graph():"]
        for node in self.nodes:
            if node.op == "output":
                lines.append(f"    return {_arg_source(node.args[0]).replace('%', '')}")
                continue
            args = map_arg(node.args, lambda n: _Ref(n.name))
            kwargs = map_arg(node.kwargs, lambda n: _Ref(n.name))
            target = _target_source(node.target) if node.op == "call_function" else node.target
            lines.append(f"    %{node.name} : [num_users={len(node.users)}] = {node.op}[target={target}]"
                         + (f"(args = {args!r}, kwargs = {kwargs!r})" if node.op == "call_function" else ""))
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """One row per node: opcode, name, target, args, kwargs (torch.fx's table, without needing tabulate)."""
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for node in self.nodes:
            target = _target_source(node.target) if node.op == "call_function" else str(node.target)
            rows.append((node.op, node.name, target, repr(map_arg(node.args, lambda n: _Ref(n.name))),
                         repr(map_arg(node.kwargs, lambda n: _Ref(n.name)))))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for i, row in enumerate(rows):
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            if i == 0:
                print("  ".join("-" * w for w in widths))


class _Ref:
    """A node reference as fx prints it inside args: ``%name``."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"%{self.name}"
