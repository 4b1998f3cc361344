"""Selective builds (torchgen's ``selective_build``): which operators and dtypes codegen writes out.

A selection is PyTorch's selected-operators YAML::

    include_all_operators: false
    operators:
      aten::add.Tensor: {is_root_operator: true, include_all_overloads: false}
      aten::mm: {}
    kernel_metadata:              # optional: operator -> the dtypes its kernels may run
      aten::add.Tensor: [Float, Double]

or just a list of operator names (what ``torch.jit.export_opnames`` prints; ``aten::`` optional; a
name without an overload that names no overload itself keeps every overload of that name).  Names in
other namespaces (``prim::``, ``quantized::``) are not codegen's and are skipped; ``kernel_metadata``
keys that name no operator (PyTorch's kernel tags, such as ``add_stub``) are ignored, since onion's
dtype limits are per operator.

The build keeps the listed (root) operators and everything they may call, found as PyTorch's static
selective build finds it, from the code: the kernels a root names in ``dispatch:`` (or its
composite body), its derivative formulas and the backward helpers they call, read with ``ast``;
every ``at.<overload>`` / method / function name there names operators to keep, transitively.  Three
conservative rules on top: an operator keeps its in-place and ``out=`` siblings (``add`` keeps
``add_``, ``add.out``) and every overload of its name; a fixed ``CORE`` set that the runtime itself
calls (factories, copies, views, what the autograd engine and printing use) is always kept.

``python -m onion.codegen --select ops.yaml`` copies the file to ``onion/_generated/selected_operators.yaml``;
its content is part of the regeneration hash, so the next ``import onion`` keeps the selective build;
``--select all`` (or ``--reset``) deletes it and writes the full build again.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

import yaml

from .context import CodegenError

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# PyTorch's ScalarType names (what kernel_metadata lists) -> onion dtype names
SCALAR_TYPES = {
    "Bool": "bool", "Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64",
    "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64", "Half": "float16", "BFloat16": "bfloat16",
    "Float": "float32", "Double": "float64", "ComplexFloat": "complex64", "ComplexDouble": "complex128",
}
DTYPE_TO_SCALAR_TYPE = {v: k for k, v in SCALAR_TYPES.items()}

# What the runtime calls on its own (tensor creation and conversion, copies, views, the autograd engine's
# seeds and accumulation, printing, indexing): kept in every build, with their families.
CORE = (
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
    "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "scalar_tensor", "fill", "fill_", "zero_",
    "copy", "copy_", "clone", "_to_copy", "to", "detach", "detach_", "alias", "lift_fresh", "lift_fresh_copy",
    "view", "_unsafe_view", "reshape", "as_strided", "expand", "expand_as", "t", "transpose", "permute",
    "squeeze", "unsqueeze", "select", "slice", "contiguous", "resize_", "resize_as_", "set_", "sum_to_size",
    "_local_scalar_dense", "item", "conj", "_conj", "resolve_conj", "resolve_neg", "_neg_view", "_conj_physical",
    "conj_physical", "conj_physical_", "neg", "view_as_real", "view_as_complex", "is_nonzero", "is_same_size",
    "_has_compatible_shallow_copy_type", "size", "stride", "numel", "dim", "_reshape_alias", "view_as",
    "index", "index_put", "index_put_", "_index_put_impl_", "masked_fill", "masked_fill_", "abs", "isnan",
    "isinf", "isfinite", "ne", "eq", "lt", "gt", "le", "ge", "logical_and", "logical_not", "max", "min", "all", "any",
    "where", "_unsafe_index", "nonzero", "_reshape_copy", "_assert_async", "arange", "linspace", "broadcast_to",
    "expand_copy", "split", "unbind", "narrow", "flatten", "stack", "cat", "pad", "constant_pad_nd", "diagonal",
)

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.MatMult: "matmul",
           ast.Mod: "remainder", ast.FloorDiv: "floor_divide", ast.BitAnd: "bitwise_and",
           ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.LShift: "bitwise_left_shift",
           ast.RShift: "bitwise_right_shift", ast.USub: "neg", ast.Invert: "bitwise_not",
           ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


_ARRAY_MODULES = frozenset({"xp", "np", "numpy", "math", "cmath", "scipy", "special", "cp", "cupy",
                            "builtins", "operator", "_np", "sp"})


@dataclass
class Selection:
    """What a selection file asks for: ``operators`` None means every operator."""

    path: str
    operators: dict | None = None                    # name as written -> include_all_overloads
    dtypes: dict = field(default_factory=dict)       # name as written -> tuple of onion dtype names

    @property
    def is_all(self) -> bool:
        return self.operators is None


def _strip(name: str) -> str:
    name = str(name).strip()
    return name[len("aten::"):] if name.startswith("aten::") else name     # other namespaces keep theirs


def load_selection(path: str) -> Selection:
    """Read a selection file (the YAML shape above, or a plain list of names)."""
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise CodegenError(f"{path}:0: cannot read the selection: {e}") from None
    sel = Selection(path)
    if isinstance(data, list):
        sel.operators = {_strip(n): False for n in data}
        return sel
    if not isinstance(data, dict):
        raise CodegenError(f"{path}:1: a selection is a list of operator names or a mapping with 'operators:'")
    known = {"include_all_operators", "include_all_non_op_selectives", "operators", "kernel_metadata",
             "build_features", "custom_classes", "et_kernel_metadata", "debug_info", "include_all_kernel_dtypes"}
    unknown = set(data) - known
    if unknown:
        raise CodegenError(f"{path}:1: unknown field(s) {', '.join(sorted(unknown))} in the selection")
    if data.get("include_all_operators"):
        return sel
    ops = data.get("operators") or {}
    if isinstance(ops, list):
        ops = {n: {} for n in ops}
    sel.operators = {_strip(n): bool((meta or {}).get("include_all_overloads", False)) for n, meta in ops.items()}
    for name, dts in (data.get("kernel_metadata") or {}).items():
        out = []
        for d in dts or ():
            d = str(d)
            if d in SCALAR_TYPES:
                out.append(SCALAR_TYPES[d])
            elif d in DTYPE_TO_SCALAR_TYPE:
                out.append(d)
            else:
                raise CodegenError(f"{path}:0: unknown dtype {d!r} for {name} in kernel_metadata "
                                   f"(use PyTorch's ScalarType names: {', '.join(SCALAR_TYPES)})")
        sel.dtypes[_strip(name)] = tuple(sorted(set(out)))
    return sel


def write_selection(path: str, operators: dict, dtypes: dict, *, root: set | None = None) -> None:
    """Write PyTorch's selected-operators YAML: ``operators`` name -> ignored, ``dtypes`` name -> dtype names."""
    doc = {
        "include_all_non_op_selectives": False,
        "include_all_operators": False,
        "operators": {f"aten::{n}": {"is_root_operator": root is None or n in root, "is_used_for_training": True,
                                     "include_all_overloads": False, "debug_info": ["onion.utils.record_operators"]}
                      for n in sorted(operators)},
        "kernel_metadata": {f"aten::{n}": sorted(DTYPE_TO_SCALAR_TYPE[d] for d in dts)
                            for n, dts in sorted(dtypes.items()) if dts},
        "build_features": [],
        "custom_classes": [],
    }
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)


# --- the closure ---------------------------------------------------------------------------------------


def _identifiers(node) -> set:
    """Every name, attribute and operator symbol a function (or formula) uses, as operator-name candidates."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            if not (isinstance(n.value, ast.Name) and n.value.id in _ARRAY_MODULES):   # xp.add is NumPy's
                out.add(n.attr)
        elif isinstance(n, (ast.BinOp, ast.UnaryOp, ast.AugAssign)):
            name = _BINOPS.get(type(n.op))
            if name:
                out.add(name)
        elif isinstance(n, ast.Compare):
            out.update(_BINOPS[type(o)] for o in n.ops if type(o) in _BINOPS)
        elif isinstance(n, ast.Subscript):
            out.update(("index", "select", "slice", "index_put_"))
    return out


def closure_sources() -> list:
    """The files the closure reads: every module of onion/aten, onion/aten/native and onion/autograd (a
    selective build depends on their bodies, not only on their names as the full build does)."""
    out = []
    for sub in ("aten", os.path.join("aten", "native"), "autograd"):
        d = os.path.join(PKG, sub)
        out += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".py")]
    return out


def _function_index() -> dict:
    """Function name -> identifiers its body uses, for every top-level function (and method) of onion/aten
    and onion/autograd, where kernels, composites and backward helpers live."""
    index: dict = {}
    for path in closure_sources():
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                index.setdefault(node.name, set()).update(_identifiers(node))
    return index


def _formula_identifiers(text: str) -> set:
    try:
        return _identifiers(ast.parse(str(text).replace("at::", "at.").replace("::", "."), mode="eval"))
    except SyntaxError:
        return set(str(text).replace("(", " ").replace(")", " ").replace(".", " ").split())


def _raw_derivatives(path: str) -> dict:
    """Operator name -> every formula text of its derivatives.yaml entry."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        entries = yaml.safe_load(f) or []
    out: dict = {}
    for e in entries:
        head = str(e.get("name", ""))
        name = head[:head.index("(")] if "(" in head else head
        body = e.get("dispatch", {}).get("Default", {}) if isinstance(e.get("dispatch"), dict) else e
        out.setdefault(name, []).extend(str(v) for k, v in body.items() if k not in ("name", "dispatch"))
    return out


def closure(fns, selection: Selection, derivatives_path: str) -> set:
    """The operator names (``add.Tensor``) a selective build keeps: the roots and what they call."""
    by_name = {f.name: f for f in fns}
    by_ident = {f.ident: f for f in fns}
    family: dict = {}
    for f in fns:
        family.setdefault(f.base_name.split("::")[-1], []).append(f)
    unknown = []
    roots = set()
    for name, all_overloads in selection.operators.items():
        if "::" in name:
            continue                    # another namespace (prim::, quantized::...): not codegen's operators
        if name in by_name and not all_overloads:
            roots.add(name)
            continue
        base = name.split(".")[0]
        fam = family.get(base.rstrip("_") if base.endswith("_") and not base.endswith("__") else base)
        if not fam:
            unknown.append(name)
            continue
        roots.update(f.name for f in fam)
    if unknown:
        raise CodegenError(f"{selection.path}:0: the selection names operator(s) that onion does not declare: "
                           f"{', '.join('aten::' + n for n in sorted(unknown))}")
    functions = _function_index()
    formulas = _raw_derivatives(derivatives_path)
    kept: set = set()
    seen_idents: set = set()
    work = list(roots) + [f.name for b in CORE for f in family.get(b, ())]

    def names_for(ident: str) -> list:
        f = by_ident.get(ident)
        out = [f] if f is not None else []
        out += family.get(ident, []) + family.get(ident.rstrip("_"), [])
        return out

    while work:
        name = work.pop()
        if name in kept:
            continue
        kept.add(name)
        f = by_name[name]
        idents = set()
        for sib in family.get(f.base_name.split("::")[-1], ()):      # in-place / out= siblings, all overloads
            work.append(sib.name)
        idents.update(f.dispatch.values())
        idents.add(f.ident)
        idents.add(f.func.name.split("::")[-1])
        if f.structured_delegate:
            work.append(f.structured_delegate)
        for text in formulas.get(name, ()):
            idents |= _formula_identifiers(text)
        stack = list(idents)
        while stack:
            ident = stack.pop()
            if ident in seen_idents:
                continue
            seen_idents.add(ident)
            for g in names_for(ident):
                work.append(g.name)
            for sub in functions.get(ident, ()):
                if sub not in seen_idents:
                    stack.append(sub)
    return kept


def selection_file(out_dir: str) -> str:
    return os.path.join(out_dir, "selected_operators.yaml")


COPIED_FROM = "# onion selective build, copied from "


@dataclass
class Selective:
    """A selection resolved against the YAML: the operator names kept, their dtype limits, the file."""

    kept: set
    dtypes: dict          # operator name -> tuple of onion dtype names
    shown: str            # the selection file as errors name it


def selected_functions(fns, sel: Selection, derivatives_path: str):
    """(the kept ``NativeFunction``s in YAML order, the ``Selective`` they came from)."""
    kept = closure(fns, sel, derivatives_path)
    dtypes = {}
    for name, dts in sel.dtypes.items():
        if name in kept:
            dtypes[name] = dts
        else:
            for f in fns:
                if f.name in kept and f.name.split(".")[0] == name:
                    dtypes[f.name] = dts
    shown = sel.path
    with open(sel.path) as f:
        first = f.readline()
    if first.startswith(COPIED_FROM):
        shown = f"{sel.path}, copied from {first[len(COPIED_FROM):].strip()}"
    return [f for f in fns if f.name in kept], Selective(kept, dtypes, shown)


def selective_outputs(all_fns, s: Selective, outputs: dict) -> dict:
    """The generated files a selective build changes or adds: stand-ins for every left-out name, so that
    a call names the build (``onion.dispatch.selective_build``), and the dtype checks."""
    from .gen_python import DUNDERS, UNARY_DUNDERS, _groups
    omitted = [f for f in all_fns if f.name not in s.kept]
    kept_bases = {f.func.name for f in all_fns if f.name in s.kept}
    omitted_bases = sorted({f.func.name.split("::")[-1] for f in omitted if f.func.name not in kept_bases})
    ops = [outputs["operators.py"],
           "# ---- selective build: what the selection left out raises OperatorNotSelectedError",
           "from onion.dispatch import selective_build as _sb", "",
           "_sb.STATE['selection'] = ("] + [f"    {s.shown[i:i + 100]!r}" for i in range(0, len(s.shown), 100)] + [
           ")",
           "_sb.STATE['omitted'] = {"] + [f"    {f.ident!r}: {f.name!r}," for f in omitted] + [
           "}", "_sb.STATE['omitted_bases'] = frozenset(("] + [f"    {b!r}," for b in omitted_bases] + [
           "))", "__getattr__ = _sb.omitted_attribute", ""]
    out = {"operators.py": "\n".join(ops)}

    def stubs(method: bool, kept_names: set) -> list:
        lines = ["", "# ---- selective build: bindings whose every overload was left out",
                 "from onion.dispatch.selective_build import not_selected as _not_selected", ""]
        tables = {"nn": "NN_FUNCTIONS", "special": "SPECIAL_FUNCTIONS", "linalg": "LINALG_FUNCTIONS"}
        names = set()
        for (module, name), fs in sorted(_groups(all_fns, method).items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
            if (module, name) in kept_names:
                continue
            table = "METHODS" if method else tables.get(module, "FUNCTIONS")
            lines.append(f"{table}[{name!r}] = _not_selected({fs[0].name!r})")
            names.add(name)
        if method:
            kept_methods = {n for (_m, n) in kept_names}
            for dunder, name in list(DUNDERS.items()) + list(UNARY_DUNDERS.items()):
                if name in names and name not in kept_methods:
                    lines.append(f"METHODS[{dunder!r}] = _not_selected({name!r})")
        return lines + [""]

    kept_fns = [f for f in all_fns if f.name in s.kept]
    out["python_functions.py"] = outputs["python_functions.py"] + "\n".join(stubs(False, set(_groups(kept_fns, False))))
    out["tensor_methods.py"] = outputs["tensor_methods.py"] + "\n".join(stubs(True, set(_groups(kept_fns, True))))
    out["register_selected_dtypes.py"] = _gen_dtype_checks(kept_fns, s, outputs.get("register_backend_select.py", ""))
    return out


def _gen_dtype_checks(kept_fns, s: Selective, backend_select_src: str) -> str:
    """BackendSelect kernels that check the dtypes of the tensor arguments, then pass the call on, for
    every operator ``kernel_metadata`` limits (one with a BackendSelect kernel of its own, a factory, is
    not checked: it has no tensor argument to check)."""
    lines = ["# @generated by `python -m onion.codegen --select`. Do not edit.", "",
             '"""BackendSelect kernels of a selective build: the dtypes kernel_metadata keeps, checked."""',
             "from onion._generated import operators as _ops",
             "from onion.core import dtype as _dt",
             "from onion.core.dispatch_key import AFTER_BACKEND_SELECT as _AFTER_BACKEND_SELECT",
             "from onion.dispatch.library import Library as _Library",
             "from onion.dispatch.selective_build import check_dtypes as _check", "",
             "m = _Library('aten', 'IMPL', 'BackendSelect')", ""]
    for f in kept_fns:
        dts = s.dtypes.get(f.name)
        if not dts or not any(a.type.is_tensor_like for a in f.func.arguments):
            continue
        if f"m.impl_kernel({f.name!r}" in backend_select_src or f'm.impl_kernel("{f.name}"' in backend_select_src:
            continue
        lines += [f"_ALLOWED_{f.ident} = frozenset(("] + [f"    _dt.{d}," for d in dts] + ["))", "",
                  f"def {f.ident}_selected_dtypes(ks, *args):",
                  f"    _check({f.name!r}, _ALLOWED_{f.ident}, args)",
                  "    ks &= _AFTER_BACKEND_SELECT",
                  f"    return _ops.redispatch_{f.ident}[ks](ks, *args)", "",
                  f"m.impl_kernel({f.name!r}, {f.ident}_selected_dtypes)", ""]
    return "\n".join(lines) + "\n"
