"""What codegen needs to know of the hand-written kernels, read from their source with ``ast``.

Codegen never imports a kernel module: it finds the names a ``dispatch:`` entry may
use (top-level functions of ``onion/aten/native/*.py``), the ufunc formulas with their
declared metadata (the literal arguments of ``@formula(kind, n_operands, ...)``), and
the names a derivative formula may call (``onion/autograd/formulas.py`` and the ``backward_<family>.py``
modules it star-imports).  Only these
names feed the regeneration hash, so editing a kernel's body never regenerates.
"""
from __future__ import annotations

import ast
import builtins
import os
from dataclasses import dataclass

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE_DIR = os.path.join(PKG, "aten", "native")
BACKWARD_HELPERS_FILE = os.path.join(PKG, "autograd", "formulas.py")


@dataclass(frozen=True)
class FormulaInfo:
    """A ufunc formula as ``@formula(kind, n_operands)`` declares it."""

    name: str
    kind: str
    n_operands: int


def _parse(path: str) -> ast.Module:
    with open(path) as f:
        return ast.parse(f.read(), filename=path)


def native_modules() -> tuple:
    """The kernel families in onion/aten/native, as module names, sorted."""
    return tuple(sorted(f[:-3] for f in os.listdir(NATIVE_DIR) if f.endswith(".py") and not f.startswith("_")))


def _kernel_defs() -> dict:
    """Top-level function (or class) name -> (module name, whether its first parameter is ``ks``), for every
    module of onion/aten/native (first wins): one parse serves ``kernel_names`` and ``keyset_kernels``."""
    index: dict = {}
    for mod in native_modules():
        for node in _parse(os.path.join(NATIVE_DIR, mod + ".py")).body:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            if not (node.name.startswith("__") and node.name.endswith("__")):     # __and___Scalar is a kernel
                params = node.args.posonlyargs + node.args.args if isinstance(node, ast.FunctionDef) else ()
                index.setdefault(node.name, (mod, bool(params) and params[0].arg == "ks"))
    return index


def kernel_names() -> dict:
    """Top-level function name -> module name, for every module of onion/aten/native (first wins)."""
    return {name: mod for name, (mod, _ks) in _kernel_defs().items()}


def keyset_kernels() -> frozenset:
    """The kernels of ``kernel_names`` whose first parameter is ``ks``: they take the dispatch keyset the
    Dispatcher passes, as a C++ kernel whose first parameter is a ``DispatchKeySet`` does, so they are
    registered as they are, with no generated wrapper (a Python frame less on every call)."""
    return frozenset(name for name, (_mod, ks) in _kernel_defs().items() if ks)


def ufunc_formulas() -> dict:
    """Formula name -> FormulaInfo for every ``@formula(...)``-decorated function of onion/aten/native
    (ufunc_formulas.py, and any family module that declares its own, such as ufunc_special.py)."""
    out = {}
    for mod in native_modules():
        for node in _parse(os.path.join(NATIVE_DIR, mod + ".py")).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "formula" and len(deco.args) >= 2:
                    kind, n = (ast.literal_eval(a) for a in deco.args[:2])
                    out[node.name] = FormulaInfo(node.name, kind, n)
    return out


def backward_helper_names() -> frozenset:
    """Names a derivatives.yaml formula may use besides its own: what ``from formulas import *``
    brings into the generated nodes (public top-level names), plus Python's builtins."""
    return frozenset(n for n in _module_names(BACKWARD_HELPERS_FILE) | set(dir(builtins))
                     if not n.startswith("_") or n in dir(builtins))


def _module_names(path: str) -> set:
    """Top-level names of a module; ``from .family import *`` (backward_<family>.py) brings that module's
    public names, or its ``__all__``."""
    names: set = set()
    for node in _parse(path).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and [a.name for a in node.names] == ["*"]:
            sub = os.path.join(os.path.dirname(path), *node.module.split(".")) + ".py"
            names |= _star_names(sub)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _star_names(path: str) -> set:
    tree = _parse(path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return {n for n in _module_names(path) if not n.startswith("_")}


def fingerprint() -> str:
    """What of the kernels codegen depends on: their names and the formulas' declarations."""
    kernels = sorted(f"{m}.{n}{'(ks)' if ks else ''}" for n, (m, ks) in _kernel_defs().items())
    formulas = sorted(f"{f.name}:{f.kind}:{f.n_operands}" for f in ufunc_formulas().values())
    return "\n".join(kernels + formulas + sorted(backward_helper_names()))
