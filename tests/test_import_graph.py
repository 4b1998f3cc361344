"""The import graph of the onion package follows the layer table of DESIGN.md.

Every module is parsed with ``ast`` (nothing is imported, so neither torch nor
the generated code is needed).  Imports anywhere in a module count, inside
functions too: a lazy import is still a dependency, only a later one.
``onion/_generated`` is not read as a source (it is written by codegen, which
may import from any layer below it), but imports *into* it are checked.
"""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "onion"

# Bottom up, as DESIGN.md lists them: a module may import only from its own
# layer (without cycles) or from a layer listed before it.  A module belongs to
# the layer of its longest matching prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("onion.core",)),
    ("dispatch", ("onion.dispatch",)),
    ("backends", ("onion.backends",)),
    ("aten", ("onion.aten",)),
    ("autograd", ("onion.autograd",)),
    ("bindings", ("onion.bindings",)),
    ("codegen", ("onion.codegen",)),
    ("over the dispatcher", ("onion.utils", "onion.modes", "onion._subclasses", "onion.fx", "onion.library",
                             "onion.testing", "onion._library", "onion.types",
                             "onion.amp", "onion.profiler", "onion.random")),
    ("_generated", ("onion._generated",)),
    ("device modules", ("onion.cuda", "onion.cpu", "onion.dask")),
    ("public surface", ("onion", "onion._C", "onion.__main__", "onion.nn", "onion.optim")),
]


GENERATED = "onion._generated"


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} has no layer in LAYERS"
    return best


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, pathlib.Path]:
    """Every module of the package, _generated included (it can be imported, just not scanned)."""
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str, path: pathlib.Path, known: dict[str, pathlib.Path]) -> set[str]:
    """The onion modules ``module`` imports, anywhere in its body."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def add(name: str) -> None:
        # a module that does not exist (yet: _generated before codegen ran) still has a layer
        if name != module:
            found.add(name)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "onion" or alias.name.startswith("onion."):
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            elif node.module and (node.module == "onion" or node.module.startswith("onion.")):
                base = node.module
            else:
                continue
            for alias in node.names:
                # ``from pkg import sub`` imports the submodule when there is one (generated code may not
                # be written yet)
                sub = f"{base}.{alias.name}"
                add(sub if sub in known or sub == GENERATED or sub.startswith(GENERATED + ".") else base)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            add(node.args[0].value)
    return found


def import_graph() -> dict[str, set[str]]:
    known = all_modules()
    return {m: imports_of(m, p, known) for m, p in known.items() if layer_of(m) != layer_of(GENERATED)}


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; returns only the components that hold a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        result.append(sorted(component))
    return result


def test_scanner_sees_lazy_and_relative_imports(tmp_path):
    pkg = tmp_path / "onion"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("def f():\n    from .y import g\n    from .. import b\n")
    (pkg / "a" / "y.py").write_text("import onion.b\n")
    (pkg / "b.py").write_text("")
    known = {"onion": pkg / "__init__.py", "onion.a": pkg / "a" / "__init__.py", "onion.a.x": pkg / "a" / "x.py",
             "onion.a.y": pkg / "a" / "y.py", "onion.b": pkg / "b.py"}
    assert imports_of("onion.a.x", known["onion.a.x"], known) == {"onion.a.y", "onion.b"}
    assert imports_of("onion.a.y", known["onion.a.y"], known) == {"onion.b"}
    assert strongly_connected_components({"p": {"q"}, "q": {"r"}, "r": {"p"}, "s": {"p"}}) == [["p", "q", "r"]]


def test_every_module_has_a_layer():
    for module in all_modules():
        layer_of(module)


def test_no_import_cycles():
    cycles = strongly_connected_components(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join("  " + " <-> ".join(c) for c in cycles)


def test_imports_point_down_the_layers():
    upward = []
    for module, targets in sorted(import_graph().items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                upward.append(f"  {module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                              f"({LAYERS[layer_of(target)][0]})")
    assert not upward, "imports that point up the layer table:\n" + "\n".join(upward)


def test_only_the_public_surface_imports_generated():
    """DESIGN.md: nothing but the public surface (and generated code itself) imports ``onion._generated``."""
    public = layer_of("onion")
    wrong = [f"  {module} imports {target}" for module, targets in sorted(import_graph().items())
             for target in sorted(targets)
             if layer_of(target) == layer_of(GENERATED) and layer_of(module) != public]
    assert not wrong, "imports of generated code from below the public surface:\n" + "\n".join(wrong)
