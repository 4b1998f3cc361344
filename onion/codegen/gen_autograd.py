"""``register_autograd.py``: one kernel per operator on the ``Autograd`` alias key.

A kernel checks whether anything requires grad; if not, it masks the autograd keys
off and redispatches.  If so, its ``<op>_record`` twin makes the operator's node from
derivatives.yaml (edges, saved inputs), runs the operator below autograd (autograd
keys excluded for the duration, as PyTorch's ``AutoDispatchBelowADInplaceOrView``),
and sets the result's history.  PyTorch's analogue is ``VariableType_*.cpp``.
"""
from __future__ import annotations

from ..core.dispatch_key import K
from .context import context
from .derivatives import META_ATTRS
from .gen_registrations import KeyFile
from .naming import arg_names

OUT_ERROR = ": functions with out=... arguments don't support automatic differentiation, but one of the " \
            "arguments requires grad."


def _signature(args) -> tuple:
    return tuple((a.name, str(a.type), a.kwarg_only) for a in args if not a.is_out)


# PyTorch's gen_variable_type.DONT_REQUIRE_DERIVATIVE (the operators onion has): no autograd checks at all
DONT_REQUIRE_DERIVATIVE = frozenset({
    "__and__", "__iand__", "__ilshift__", "__ior__", "__irshift__", "__ixor__", "__lshift__", "__or__", "__rshift__",
    "__xor__", "argmax", "argmin", "argsort", "searchsorted", "bucketize", "isnan", "isposinf", "isneginf", "isinf",
    "signbit", "isin", "logical_and", "logical_xor", "logical_not", "logical_or"})


def functional_plan(f, plans, derivs=None):
    """The plan of the functional operator an in-place or ``out=`` one mirrors: same base name and
    arguments, ``out`` aside (as torchgen).  With ``derivs`` (name -> Derivative), a functional
    operator declared non-differentiable gives None.

    Overload names do not line up: pow_.Scalar mirrors pow.Tensor_Scalar, not pow.Scalar."""
    base = f.func.name.rstrip("_")
    want = _signature(f.func.arguments)
    for name, p in plans.items():
        if name.split(".")[0] != base:
            continue
        if p is not None and _signature(p.d.schema.arguments) == want:
            return p
        if p is None and derivs is not None and _signature(derivs[name].schema.arguments) == want:
            return None
    return "missing"


def _requires_grad(arg, name) -> str:
    if arg.type.is_list:        # a Tensor(a!)[] out= (split_with_sizes_copy.out)
        return f"any(t._impl.requires_grad for t in {name})"
    if arg.type.optional:
        return f"({name} is not None and {name}._impl.requires_grad)"
    return f"{name}._impl.requires_grad"


def _if_any(terms, also: str, indent: str) -> list:
    """``if (t1 or t2 ...) and also:``, with the terms gathered over several lines when they are many."""
    line = f"{indent}if ({' or '.join(terms)}) and {also}:"
    if len(line) <= 120:
        return [line]
    out = [f"{indent}requires_grad = {terms[0]}"]
    out += [f"{indent}requires_grad = requires_grad or {t}" for t in terms[1:]]
    return out + [f"{indent}if requires_grad and {also}:"]


class AutogradWriter:
    def __init__(self, plans: dict, derivs: dict):
        self.plans = plans
        self.derivs = derivs
        self.kf = KeyFile(K.Autograd)
        self.kf.imports |= {
            "from onion.dispatch.library import Library as _Library",
            "from onion.core.dispatch_key import AFTER_AUTOGRAD as _AFTER_AUTOGRAD",
            "from onion.core.tls import reset_state as _reset_state, set_state as _set_state, state as _state",
            "from onion._generated import operators as _ops",
            "from onion._generated import autograd_nodes as _nodes",
            "from onion.autograd.kernel_support import (NotImplementedBackward as "
            "_NotImplementedBackward, SavedVariable as _SavedVariable, check_inplace as _check_inplace, "
            "clone_for_save as _clone_for_save, edge as _edge, meta as _meta, next_sequence_nr as _next_sequence_nr, "
            "rebase_history as _rebase_history, "
            "set_history as _set_history)",
        }

        self.kf.preamble += [f"_OUT_ERROR = ({OUT_ERROR!r})"]

    def emit(self, f, lines: list) -> None:
        self.kf.body += [f"# {f.name}  ({f.loc})"] + lines + [f'm.impl_kernel("{f.name}", {f.ident}_autograd)', ""]

    def kernel(self, f) -> None:
        names = arg_names(f)
        args = f.func.arguments
        tensors = [(a, n) for a, n in zip(args, names) if a.type.is_tensor_like and not a.is_out
                   and not a.type.is_list]
        lists = [(a, n) for a, n in zip(args, names) if a.type.is_tensor_like and not a.is_out and a.type.is_list]
        call = ", ".join(names)
        head = f"def {f.ident}_autograd(ks, {call}):"
        redispatch = ["    ks &= _AFTER_AUTOGRAD", f"    return _ops.redispatch_{f.ident}[ks](ks, {call})", ""]
        if f.is_out:
            self.out_kernel(f, head, names, tensors, redispatch)
            return
        p = self.plans.get(f.name, "missing")
        if p == "missing" and f.is_inplace:
            p = functional_plan(f, self.plans)
        if p != "missing" and p is not None:
            lists = [(a, n) for a, n in lists if n in p.list_edges]
        if p is None or not (tensors or lists) or not any(r.type.is_tensor_like for r in f.func.returns):
            # (no tensor returned, as equal's bool: nothing a gradient could flow through)
            self.emit(f, [head, "    # not differentiable: nothing to record"] + redispatch)
            return
        terms = [_requires_grad(a, n) for a, n in tensors]
        terms += [f"any(t is not None and t._impl.requires_grad for t in {n})" for _a, n in lists]
        pre = []
        if f.is_inplace and not args[0].type.is_list:   # (a mutated Tensor[] first: each element is checked below)
            # a view made under no_grad of a base with history: check_inplace must see it (PyTorch forbids it)
            pre = [f"    base = {names[0]}._impl._base"]
            terms.append("(base is not None and base.requires_grad)")
        self.emit(f, [head] + pre + _if_any(terms, "_state().grad_enabled", "    ")
                  + [f"        return {f.ident}_record(ks, {call})"] + redispatch)
        self.record(f, p, names, tensors, lists)

    def out_kernel(self, f, head, names, tensors, redispatch) -> None:
        """An ``out=`` overload records nothing, so it refuses any tensor that requires grad (the written
        ``out`` included), as PyTorch's VariableType kernels do; not when its functional twin is
        non-differentiable (eq, argmax: PyTorch accepts those).  With no tensor input (zeros.out), PyTorch's
        boxed autograd fallback decides: only ``out`` is checked, and the operator is named ``aten::zeros()``."""
        twin = functional_plan(f, self.plans, self.derivs)
        if twin is None or f.func.name in DONT_REQUIRE_DERIVATIVE:
            self.emit(f, [head, "    # the functional operator is not differentiable: inputs may require grad"]
                      + redispatch)
            return
        outs = [(a, n) for a, n in zip(f.func.arguments, names) if a.is_out and a.type.is_tensor_like]
        # no derivative entry for a backend kernel: PyTorch's AutogradNotImplemented kernel checks out only
        boxed = not tensors or (twin == "missing" and (f.structured or K.CPU in f.dispatch))
        name = f"aten::{f.func.name}()" if boxed else f"{f.func.name}()"
        checked = outs if boxed else tensors + outs
        lines = [head] + _if_any([_requires_grad(a, n) for a, n in checked], "_state().grad_enabled", "    ")
        self.emit(f, lines + [f"        raise RuntimeError({name!r} + _OUT_ERROR)"] + redispatch)

    def record(self, f, p, names, tensors, lists=()) -> None:
        call = ", ".join(names)
        node_class = "missing" if p == "missing" else p.d.node_name
        rec = [f"def {f.ident}_record(ks, {call}):",
               f'    """Records {node_class if p != "missing" else "a node that cannot differentiate"}, then runs '
               f'{f.name} below autograd."""']
        if f.is_inplace and not f.func.arguments[0].type.is_list:
            rec.append(f"    _check_inplace({names[0]})")
        elif f.is_inplace:
            rec.append(f"    for _t in {names[0]}:\n        _check_inplace(_t)")
        list_names = {n for _a, n in lists}
        if p == "missing":
            by_name = {n: a for a, n in tensors + list(lists)}
            edges = [n for n in names if n in by_name]
            saved = []
            rec.append(f"    node = _NotImplementedBackward('aten::{f.name}')")
        else:
            edges, saved = p.edges, sorted(p.saved_tensors)
            rec.append(f"    node = _nodes.{p.d.node_name}()")
            rec.append("    node._sequence_nr = _next_sequence_nr()")
        if list_names & set(edges):
            rec += self.dynamic_edges(edges, list_names)
        else:
            rec.append("    node.next_functions = (" + "".join(f"_edge({e}), " for e in edges) + ")")
            optional = {n for a, n in tensors if a.type.optional}
            rec.append("    node._in_meta = (" + "".join(
                f"_meta({e}), " if e in optional else f"({e}._impl._array.shape, {e}._impl.dtype, {e}._impl.device), "
                for e in edges) + ")")
        if p != "missing":
            for t in saved:
                if t in list_names or t in p.d.list_args:
                    rec.append(f"    node.s_{t} = [None if t is None else _SavedVariable(t, False) for t in {t}]")
                    continue
                if f.is_inplace and t == names[0]:
                    save = f"node.s_{t} = _SavedVariable(_clone_for_save({t}), False)"
                else:
                    save = f"node.s_{t} = _SavedVariable({t}, False) if {t} is not None else None"
                needed_by = sorted({i for idx, _expr, rw in p.formulas if rw is not None and t in rw.used_tensors
                                    for i in idx})
                if len(needed_by) == len(edges):
                    rec.append(f"    {save}")
                else:       # only when an edge whose formula reads it is live (should_compute_output)
                    live = " or ".join(f"node.next_functions[{i}][0] is not None" for i in needed_by)
                    cond = f"    if {live}:"
                    if len(cond) > 120:     # the same test, short enough for one line
                        cond = f"    if any(node.next_functions[i][0] is not None for i in {tuple(needed_by)}):"
                    rec += [cond, f"        {save}"]
            for t, attr in sorted(p.saved_meta):
                rec.append(f"    node.m_{t}_{attr} = {META_ATTRS[attr].format(t)}")
            for t in sorted(p.saved_other):
                rec.append(f"    node.a_{t} = {t}")
        rec += ["    ks &= _AFTER_AUTOGRAD",
                "    token = _set_state(_state().below_autograd)     # exclude the autograd keys while the op runs",
                "    try:",
                f"        result = _ops.redispatch_{f.ident}[ks](ks, {call})",
                "    finally:",
                "        _reset_state(token)"]
        rets = f.func.returns
        if f.is_inplace and "inplace_view" in f.tags:
            # t_, squeeze_, ...: the tensor's own history grows by the node; a view's base is untouched
            rec.append(f"    _set_history({names[0]}, node)")
        elif f.is_inplace:
            rec.append(f"    _rebase_history({names[0]}, node)")
        elif len(rets) == 1 and rets[0].type.is_list:
            rec += ["    node._num_outputs = len(result)", "    for _i, _t in enumerate(result):",
                    "        if _t._impl.dtype.category >= 2:", "            _set_history(_t, node, _i)"]
        elif len(rets) > 1:
            diff = p.diff_outputs if p != "missing" else tuple(i for i, r in enumerate(rets) if r.type.is_tensor_like)
            if p == "missing":
                rec.append(f"    node._num_outputs = {len(diff)}")
            for j, i in enumerate(diff):
                rec += [f"    if result[{i}]._impl.dtype.category >= 2:", f"        _set_history(result[{i}], node, {j})"]
            if p != "missing":
                for i in sorted(p.saved_outputs):
                    rec.append(f"    node.s_out{i} = _SavedVariable(result[{i}], {i in diff})")
        else:
            rec += ["    if result._impl.dtype.category >= 2:", "        _set_history(result, node)"]
        if p != "missing" and p.saved_result:
            rec.append("    node.s_result = _SavedVariable(result, True)")
        rec += ["    return result", ""]
        self.kf.body += rec

    @staticmethod
    def dynamic_edges(edges, list_names) -> list:
        """Edges when a Tensor[] argument has one edge per element: the node records where each
        argument's edges start (``o_<name>``) and, for a list, how many it has (``n_<name>``)."""
        rec = ["    _e = []"]
        for e in edges:
            rec.append(f"    node.o_{e} = len(_e)")
            if e in list_names:
                rec += [f"    node.n_{e} = len({e})", f"    _e += [_edge(t) for t in {e}]"]
            else:
                rec.append(f"    _e.append(_edge({e}))")
        rec.append("    node.next_functions = tuple(_e)")
        parts = "".join(f"*{e}, " if e in list_names else f"{e}, " for e in edges)
        rec.append(f"    node._in_meta = tuple(_meta(t) for t in ({parts}))")
        return rec

    def run(self, fns) -> str:
        for f in fns:
            implicit_only = not (f.structured_delegate or f.structured or f.dispatch)
            if not implicit_only:
                with context(f.loc, f"the autograd kernel of {f.name}"):
                    self.kernel(f)
        return self.kf.render()


def gen_register_autograd(fns, plans: dict, derivs: dict) -> str:
    return AutogradWriter(plans, derivs).run(fns)
