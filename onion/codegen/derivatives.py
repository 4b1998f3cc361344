"""The model of derivatives.yaml and the generator of autograd nodes and kernels.

Each entry becomes an ``XxxBackward<N>`` node class whose ``apply`` evaluates
the entry's formulas (Python expressions, rewritten at codegen time to read
saved values), and every differentiable operator gets an autograd kernel
registered on the ``Autograd`` alias key.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

import yaml

from ..dispatch.schema import parse_schema
from .model import CodegenError, Loc, _LineLoader

META_ATTRS = {"shape": "{}._impl._array.shape", "dtype": "{}._impl.dtype", "device": "{}._impl.device",
              "stride": "{}._impl.strides", "storage_offset": "{}._impl.storage_offset()"}
# nodes PyTorch writes by hand (copy_), or whose index counts PyTorch entries onion does not declare
# (fill.Scalar, fill.Tensor come before fill_ there): operator -> (class name, name() or None)
NODE_NAME_OVERRIDES = {"copy_": ("CopyBackwards", "torch::autograd::CopyBackwards"),
                       "fill_.Scalar": ("FillBackward2", None), "fill_.Tensor": ("FillBackward3", None)}
FIELDS = {"name", "result", "output_differentiability", "dispatch", "auto_element_wise", "auto_linear"}


@dataclass
class Derivative:
    name: str                       # add.Tensor
    schema: object
    loc: Loc
    formulas: list = field(default_factory=list)   # [(tuple of input names, expression text)]
    non_differentiable: tuple = ()
    output_differentiability: tuple | None = None
    not_implemented: str | None = None
    node_name: str = ""             # the generated class
    display_name: str | None = None  # what name() returns, when not the class name


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_") if p)


def load_derivatives(path: str, native_by_name: dict) -> dict:
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shown = os.path.relpath(path, root) if os.path.abspath(path).startswith(root + os.sep) else path
    with open(path) as f:
        try:
            entries = yaml.load(f.read(), Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise CodegenError(f"{shown}:{mark.line + 1 if mark else 0}: YAML error: {e}") from None
    out = {}
    counts: dict = {}
    for e in entries or []:
        loc = Loc(shown, e.get("__line__", 0))
        if "name" not in e:
            raise CodegenError(f"{loc}: entry has no 'name:'")
        if "dispatch" in e:   # PyTorch's per-key form: onion uses the Default formulas
            default = e["dispatch"].get("Default") if isinstance(e["dispatch"], dict) else None
            if default is None:
                raise CodegenError(f"{loc}: 'dispatch:' needs a 'Default:' entry")
            e = {**{k: v for k, v in default.items() if k != "__line__"}, "name": e["name"], "__line__": loc.line}
        try:
            schema = parse_schema(e["name"])
        except RuntimeError as err:
            raise CodegenError(f"{loc}: bad schema in name: {err}") from None
        name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        nf = native_by_name.get(name)
        if nf is None:
            raise CodegenError(f"{loc}: derivative for {name}, which native_functions.yaml does not declare")
        if str(nf.func) != str(schema):
            raise CodegenError(f"{loc}: schema does not match native_functions.yaml ({nf.loc}):\n  {schema}\n  "
                               f"{nf.func}")
        d = Derivative(name, schema, loc)
        args = {a.name: a for a in schema.arguments}
        for key, value in e.items():
            if key == "__line__" or key == "name":
                continue
            if key == "result":
                continue                       # forward-mode AD formula: kept for the forward-AD work
            if key == "output_differentiability":
                d.output_differentiability = tuple(bool(x) for x in value)
                continue
            inputs = tuple(x.strip() for x in key.split(","))
            for i in inputs:
                if i not in args:
                    raise CodegenError(f"{loc}: '{i}' is not an argument of {name}")
            text = str(value).strip()
            if text == "non_differentiable":
                d.non_differentiable += inputs
                continue
            if text.startswith("not_implemented("):
                d.not_implemented = text[len("not_implemented("):].rstrip(")").strip("\"'")
                d.formulas.append((inputs, None))
                continue
            try:
                ast.parse(text, mode="eval")
            except SyntaxError as err:
                raise CodegenError(f"{loc}: formula for {key} is not a Python expression: {err.msg}") from None
            d.formulas.append((inputs, text))
        base = schema.name.rstrip("_") if not schema.name.startswith("__") else schema.name
        idx = counts.get(base, 0)
        if d.output_differentiability is None or any(d.output_differentiability):
            counts[base] = idx + 1      # an entry that makes no node takes no index (eq_.Scalar is EqBackward0)
        d.node_name = f"{_camel(base)}Backward{idx}"
        if name in NODE_NAME_OVERRIDES:
            d.node_name, d.display_name = NODE_NAME_OVERRIDES[name]
        if name in out:
            raise CodegenError(f"{loc}: duplicate derivative for {name}")
        out[name] = d
    return out


class _Rewrite(ast.NodeTransformer):
    """Formula names -> generated locals: args ``v_x``, metadata ``m_x_shape``."""

    def __init__(self, tensor_args, other_args):
        self.tensor_args = tensor_args
        self.other_args = other_args
        self.used_tensors = set()
        self.used_meta = set()
        self.used_other = set()
        self.uses_result = False
        self.uses_mask = False

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.tensor_args and node.attr in META_ATTRS:
            self.used_meta.add((node.value.id, node.attr))
            return ast.copy_location(ast.Name(id=f"m_{node.value.id}_{node.attr}", ctx=ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.tensor_args:
            self.used_tensors.add(node.id)
            return ast.copy_location(ast.Name(id=f"v_{node.id}", ctx=node.ctx), node)
        if node.id in self.other_args:
            self.used_other.add(node.id)
            return ast.copy_location(ast.Name(id=f"v_{node.id}", ctx=node.ctx), node)
        if node.id == "result":
            self.uses_result = True
            return ast.copy_location(ast.Name(id="v_result", ctx=node.ctx), node)
        if node.id == "grad_input_mask":
            self.uses_mask = True
        return node


@dataclass
class NodePlan:
    d: Derivative
    edges: list            # names of tensor args that get an edge
    formulas: list         # [(edge indices, rewritten expr, rewrite info)]
    saved_tensors: set
    saved_meta: set
    saved_other: set
    saved_result: bool


def plan_node(d: Derivative) -> NodePlan:
    args = d.schema.arguments
    tensor_args = [a.name for a in args if a.type.is_tensor_like and not a.is_out]
    other_args = [a.name for a in args if not a.type.is_tensor_like]
    edges = [n for n in tensor_args if n not in d.non_differentiable]
    formulas = []
    st, sm, so, sr = set(), set(), set(), False
    for inputs, text in d.formulas:
        idx = []
        for i in inputs:
            if i not in edges:
                raise CodegenError(f"{d.loc}: '{i}' has a formula but is not a differentiable tensor argument")
            idx.append(edges.index(i))
        if text is None:
            formulas.append((idx, None, None))
            continue
        rw = _Rewrite(set(tensor_args), set(other_args))
        tree = rw.visit(ast.parse(text, mode="eval"))
        formulas.append((idx, ast.unparse(tree), rw))
        st |= rw.used_tensors
        sm |= rw.used_meta
        so |= rw.used_other
        sr = sr or rw.uses_result
    return NodePlan(d, edges, formulas, st, sm, so, sr)


def gen_node_class(p: NodePlan) -> list:
    n = len(p.edges)
    L = [f"class {p.d.node_name}(_Node):", f"    _opname = {('aten::' + p.d.name)!r}",
         f"    _name = {p.d.display_name!r}",
         f"    _saved_names = {tuple(sorted(['s_' + t for t in p.saved_tensors] + (['s_result'] if p.saved_result else [])))!r}",
         "    def apply(self, grads):", "        grad = grads[0]", f"        _r = [None] * {n}",
         "        if all(g is None for g in grads):", "            return tuple(_r)",
         "        _nf = self.next_functions"]
    for idx, expr, rw in p.formulas:
        cond = " or ".join(f"_nf[{i}][0] is not None" for i in idx)
        L.append(f"        if {cond}:")
        if expr is None:
            L.append(f"            raise RuntimeError('derivative for aten::{p.d.name} is not implemented: "
                     f"{p.d.not_implemented}')")
            continue
        for t in sorted(rw.used_tensors):
            L.append(f"            v_{t} = self.s_{t}.unpack() if self.s_{t} is not None else None")
        for t in sorted(rw.used_other):
            L.append(f"            v_{t} = self.a_{t}")
        for t, attr in sorted(rw.used_meta):
            L.append(f"            m_{t}_{attr} = self.m_{t}_{attr}")
        if rw.uses_result:
            L.append("            v_result = self.s_result.unpack(self)")
        if rw.uses_mask:
            L.append("            grad_input_mask = tuple(e[0] is not None for e in _nf)")
        if len(idx) == 1:
            L.append(f"            _r[{idx[0]}] = {expr}")
        else:
            L.append(f"            _t = {expr}")
            for k, i in enumerate(idx):
                L.append(f"            _r[{i}] = _t[{k}]")
    L.append("        return tuple(_r)")
    L.append("")
    return L


def gen_nodes(derivs: dict) -> tuple:
    """Source of onion/_generated/autograd_nodes.py and the plans by operator name."""
    from .header import HEADER
    L = [HEADER, "from onion.autograd.graph import Node as _Node", "from onion.autograd.formulas import *  # noqa",
         "from onion.autograd.formulas import numel_of", ""]
    plans = {}
    for name, d in derivs.items():
        if d.output_differentiability is not None and not any(d.output_differentiability):
            plans[name] = None
            continue
        p = plan_node(d)
        plans[name] = p
        L.extend(gen_node_class(p))
    return "\n".join(L) + "\n", plans


def _signature(args) -> tuple:
    return tuple((a.name, str(a.type), a.kwarg_only) for a in args if not a.is_out)


def _functional_plan(f, plans):
    """The plan of the functional operator an in-place one mirrors: same base name and arguments (as torchgen).

    Overload names do not line up: pow_.Scalar mirrors pow.Tensor_Scalar, not pow.Scalar.
    """
    base = f.func.name.rstrip("_")
    want = _signature(f.func.arguments)
    for name, p in plans.items():
        if p is None or name.split(".")[0] != base:
            continue
        if _signature(p.d.schema.arguments) == want:
            return p
    return "missing"


def _req(arg, name) -> str:
    if arg.type.optional:
        return f"({name} is not None and {name}._impl.requires_grad)"
    return f"{name}._impl.requires_grad"


def gen_autograd_kernel(w, f, plans, by_name) -> None:
    """Emit the Autograd kernel of one operator into the KernelWriter ``w``."""
    from ..core.dispatch_key import K
    names = [a.name if a.name not in ("lambda",) else a.name + "_" for a in f.func.arguments]
    args = f.func.arguments
    tensors = [(a, n) for a, n in zip(args, names) if a.type.is_tensor_like and not a.is_out
               and not a.type.is_list]
    fn = f"k_{f.ident}__Autograd"
    call = ", ".join(names)
    w.emit(f"_rc_{f.ident} = _ops.H_{f.ident}._rcache", f"_rl_{f.ident} = _ops.H_{f.ident}.lookup")
    plain = f"(_rc_{f.ident}.get(ks) or _rl_{f.ident}(ks, True))(ks, {call})"
    if f.is_out:
        req = " or ".join(_req(a, n) for a, n in tensors) or "False"
        w.emit(f"def {fn}(ks, {call}):", "    ks = ks & _AFTER_AUTOGRAD",
               f"    if ({req}) and _tls.grad_enabled:",
               f"        raise RuntimeError({f.func.name + '(): functions with out=... arguments dont support automatic differentiation, but one of the arguments requires grad.'!r}.replace('dont', \"don't\"))",
               f"    return {plain}", "")
        w.register(f, K.Autograd, fn, f"{f.loc} (autograd, generated)")
        return
    key = f.name
    p = plans.get(key, "missing")
    if p == "missing" and f.is_inplace:
        p = _functional_plan(f, plans)
    if p is None or not tensors:
        w.emit(f"def {fn}(ks, {call}):", "    ks = ks & _AFTER_AUTOGRAD", f"    return {plain}", "")
        w.register(f, K.Autograd, fn, f"{f.loc} (autograd, not differentiable)")
        return
    req = " or ".join(_req(a, n) for a, n in tensors)
    if f.is_inplace:
        # a view made under no_grad of a base with history: check_inplace must see it (PyTorch forbids it)
        req += f" or ({names[0]}._impl._base is not None and {names[0]}._impl._base.requires_grad)"
    w.emit(f"def {fn}(ks, {call}):", "    ks = ks & _AFTER_AUTOGRAD",
           f"    if ({req}) and _tls.grad_enabled:", f"        return _rec_{f.ident}(ks, {call})",
           f"    return {plain}", "")
    rec = [f"def _rec_{f.ident}(ks, {call}):"]
    if f.is_inplace:
        rec.append(f"    _check_inplace({names[0]})")
    if p == "missing":
        edges = [n for a, n in tensors]
        rec += [f"    _node = _NotImpl('aten::{f.name}')"]
        saved = []
    else:
        edges = p.edges
        rec += [f"    _node = _N.{p.d.node_name}()"]
        saved = sorted(p.saved_tensors)
    rec.append("    _node.next_functions = (" + "".join(f"_edge({e}), " for e in edges) + ")")
    opt = {n for a, n in tensors if a.type.optional}
    rec.append("    _node._in_meta = (" + "".join(
        f"_meta({e}), " if e in opt else f"({e}._impl._array.shape, {e}._impl.dtype, {e}._impl.device), "
        for e in edges) + ")")
    if p != "missing":
        for t in saved:
            if f.is_inplace and t == names[0]:
                rec.append(f"    _node.s_{t} = _SV(_clone_for_save({t}), False)")
            else:
                rec.append(f"    _node.s_{t} = _SV({t}, False) if {t} is not None else None")
        for t, attr in sorted(p.saved_meta):
            rec.append(f"    _node.m_{t}_{attr} = {META_ATTRS[attr].format(t)}")
        for t in sorted(p.saved_other):
            rec.append(f"    _node.a_{t} = {t}")
    rec += ["    _tls_ = _tls", "    _prev = _tls_.exclude", "    _tls_.exclude = _ex = _prev | _AUTOGRAD_MASK",
            "    _tls_.mask = ~_ex", "    try:", f"        _r = {plain}", "    finally:",
            "        _tls_.exclude = _prev", "        _tls_.mask = ~_prev"]
    if f.is_inplace:
        rec.append(f"    _rebase_history({names[0]}, _node)")
    else:
        rec += ["    if _r._impl.dtype.category >= 2:", "        _set_history(_r, _node)"]
    if p != "missing" and p.saved_result:
        rec.append("    _node.s_result = _SV(_r, True)")
    rec += ["    return _r", ""]
    w.emit(*rec)
    w.register(f, K.Autograd, fn, f"{f.loc} (autograd, generated)")
