"""What codegen needs to know of the hand-written kernels, read from their source with ``ast``.

Codegen never imports a kernel module: it finds the names a ``dispatch:`` entry may
use (top-level functions of ``onion/aten/native/*.py``), the ufunc formulas with their
declared metadata (the literal arguments of ``@formula(kind, n_operands, ...)``), and
the names a derivative formula may call (``onion/autograd/formulas.py``).  Only these
names feed the regeneration hash, so editing a kernel's body never regenerates.
"""
from __future__ import annotations

import ast
import builtins
import os
from dataclasses import dataclass

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE_DIR = os.path.join(PKG, "aten", "native")
FORMULAS_FILE = os.path.join(NATIVE_DIR, "ufunc_formulas.py")
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


def kernel_names() -> dict:
    """Top-level function name -> module name, for every module of onion/aten/native (first wins)."""
    index: dict = {}
    for mod in native_modules():
        for node in _parse(os.path.join(NATIVE_DIR, mod + ".py")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("__"):
                index.setdefault(node.name, mod)
    return index


def ufunc_formulas() -> dict:
    """Formula name -> FormulaInfo for every ``@formula(...)``-decorated function."""
    out = {}
    for node in _parse(FORMULAS_FILE).body:
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
    names = set(dir(builtins))
    for node in _parse(BACKWARD_HELPERS_FILE).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and [a.name for a in node.names] == ["*"]:
            names.update(_star_names(os.path.join(os.path.dirname(BACKWARD_HELPERS_FILE), node.module + ".py")))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(n for n in names if not n.startswith("_") or n in dir(builtins))


def _star_names(path: str) -> set:
    """What ``from .backward_<area> import *`` brings: the module's public top-level functions and classes."""
    return {n.name for n in _parse(path).body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}


def fingerprint() -> str:
    """What of the kernels codegen depends on: their names and the formulas' declarations."""
    kernels = sorted(f"{m}.{n}" for n, m in kernel_names().items())
    formulas = sorted(f"{f.name}:{f.kind}:{f.n_operands}" for f in ufunc_formulas().values())
    return "\n".join(kernels + formulas + sorted(backward_helper_names()))
