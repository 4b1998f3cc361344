"""Generates operator definitions, the ``at`` entry points and per-key kernels.

Output modules (in onion/_generated): ``operators.py`` (schemas + ``at``
functions) and ``register_kernels.py`` (one function per operator and key,
registered through a ``Library``, specialised by what the YAML says).
"""
from __future__ import annotations

import importlib

from ..aten.native import MODULES
from ..core.dispatch_key import BACKEND_KEYS, K
from .model import CodegenError, NativeFunction
from .header import HEADER  # noqa: F401  (gen_python reads it from here)
from .naming import keyset_expr, pyname, render_default


def native_index() -> dict:
    """name -> module for every public function in onion/aten/native."""
    index = {}
    for m in MODULES:
        try:
            mod = importlib.import_module(f"onion.aten.native.{m}")
        except ModuleNotFoundError as e:  # a family not written yet: its ops will fail to resolve
            if e.name != f"onion.aten.native.{m}":
                raise
            continue
        for name, obj in vars(mod).items():
            if callable(obj) and not name.startswith("__") and getattr(obj, "__module__", "") == mod.__name__:
                index.setdefault(name, m)
    return index


def arg_names(f: NativeFunction) -> list:
    return [pyname(a.name) for a in f.func.arguments]


def params(f: NativeFunction, with_defaults: bool = True) -> str:
    out = []
    trailing = True     # only a trailing run of defaulted arguments can keep its defaults
    for a, n in reversed(list(zip(f.func.arguments, arg_names(f)))):
        d = render_default(a) if with_defaults and trailing else None
        trailing = trailing and d is not None
        out.append(f"{n}={d}" if d is not None else n)
    return ", ".join(reversed(out))


# ------------------------------------------------------------------ operators.py
def gen_operators(fns) -> str:
    lines = [HEADER, "from onion.aten.at import at as _at",
             "from onion.core import dtype as _dt",
             "from onion.core.tls import tls as _tls",
             "from onion.dispatch.library import Library as _Library", "",
             "_lib = _Library('aten', 'DEF')", "",
             "def _ks_list(ts):",
             "    ks = 0",
             "    for t in ts:",
             "        if t is not None:",
             "            ks |= t._impl.keyset",
             "    return ks", ""]
    for f in fns:
        i = f.ident
        lines.append(f"_lib.define({str(f.func)!r}, tags={tuple(f.tags)!r}, "
                     f"_debug='registered at {f.loc}')")
        lines.append(f"H_{i} = _lib._ops[-1]")
        lines.append(f"_c_{i} = H_{i}._cache")
        lines.append(f"_l_{i} = H_{i}.lookup")
    lines.append("")
    for f in fns:
        i = f.ident
        names = arg_names(f)
        lines.append(f"def {i}({params(f)}):")
        lines.append(f"    ks = {keyset_expr(f.func, names)}")
        lines.append(f"    return (_c_{i}.get(ks) or _l_{i}(ks))(ks, {', '.join(names)})")
        lines.append(f"_at.{i} = {i}")
        lines.append("")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ register_kernels.py
class KernelWriter:
    def __init__(self, fns):
        self.fns = fns
        self.by_name = {f.name: f for f in fns}
        self.index = native_index()
        self.lines = [HEADER, "import numpy as _np",
                      "from onion.aten import structured as _st, ufunc as _uf, iterator as _it",
                      "from onion.aten.native.ufunc_formulas import FORMULAS as _FORMULAS",
                      "from onion.aten.tensor_new import wrap_cpu as _wrap_cpu, scalar_to_tensor as _s2t",
                      "from onion.core import dtype as _dt",
                      "from onion.core.device import CPU as _CPU",
                      "from onion.core.tensor import Tensor as _T",
                      "from onion.core.tensor_impl import TensorImpl as _TI",
                      "from onion.core.tls import tls as _tls",
                      "from onion.aten.tensor_new import CPU_KS as _CPU_KS",
                      "_nd = _np.ndarray",
                      "_new = object.__new__",
                      "from onion.core.dispatch_key import K as _K, AFTER_AUTOGRAD as _AFTER_AUTOGRAD, "
                      "AFTER_BACKEND_SELECT as _AFTER_BS",
                      "from onion.backends import BACKENDS as _BACKENDS",
                      "from onion.dispatch.library import Library as _Library",
                      "from onion._generated import operators as _ops",
                      "from onion._generated import autograd_nodes as _N",
                      "from onion.autograd.kernel_support import (check_inplace as _check_inplace, edge as _edge, "
                      "meta as _meta, SavedVariable as _SV, clone_for_save as _clone_for_save, "
                      "rebase_history as _rebase_history, differentiable as _differentiable, "
                      "set_history as _set_history, NotImplementedBackward as _NotImpl, AUTOGRAD_MASK as _AUTOGRAD_MASK)",
                      "",
                      "_lib = _Library('aten', 'IMPL')",
                      "_reg = _lib._impl_internal", ""]
        self.imports = set()

    def native(self, name: str, f: NativeFunction, what: str) -> str:
        mod = self.index.get(name)
        if mod is None:
            raise CodegenError(f"{f.loc}: {what} '{name}' for {f.name} not found in onion/aten/native "
                               f"({', '.join(MODULES)})")
        self.imports.add(f"from onion.aten.native.{mod} import {name} as _n_{name}")
        return f"_n_{name}"

    def emit(self, *ls):
        self.lines.extend(ls)

    def register(self, f, key, fn_name, where):
        self.emit(f"_reg(_ops.H_{f.ident}, _K.{key.name}, {fn_name}, 'registered at {where}')")

    # direct kernels named in dispatch:
    def direct(self, f: NativeFunction):
        names = arg_names(f)
        for key, kname in f.dispatch.items():
            target = self.native(kname, f, "kernel")
            fn = f"k_{f.ident}__{key.name}"
            self.emit(f"def {fn}(ks, {', '.join(names)}):", f"    return {target}({', '.join(names)})",
                      "")
            self.register(f, key, fn, f"{f.loc} ({key.name}: {kname})")

    def composite_implicit(self, f: NativeFunction):
        candidates = [f.ident, f.func.name] if f.func.overload_name else [f.func.name]
        for c in candidates:
            if c in self.index:
                target = self.native(c, f, "CompositeImplicitAutograd body")
                break
        else:
            raise CodegenError(f"{f.loc}: {f.name} has no dispatch: and no CompositeImplicitAutograd body named "
                               f"{' or '.join(candidates)} in onion/aten/native")
        names = arg_names(f)
        fn = f"k_{f.ident}__CompositeImplicitAutograd"
        self.emit(f"def {fn}(ks, {', '.join(names)}):", f"    return {target}({', '.join(names)})", "")
        self.register(f, K.CompositeImplicitAutograd, fn, f"{f.loc} (CompositeImplicitAutograd)")

    # structured ops
    def structured(self, f: NativeFunction, target: NativeFunction):
        if target.ufunc_inner_loop:
            self.ufunc(f, target)
        else:
            self.structured_impl(f, target)

    def _meta_name(self, f, target):
        base = target.func.name
        for c in (f"meta_{base}_{target.func.overload_name}", f"meta_{base}"):
            if c in self.index:
                return self.native(c, target, "meta function")
        raise CodegenError(f"{target.loc}: structured op {target.name} needs a meta function named "
                           f"meta_{base}_{target.func.overload_name} or meta_{base} in onion/aten/native")

    def structured_impl(self, f, target):
        meta = self._meta_name(f, target)
        names = arg_names(f)
        out_args = [n for a, n in zip(f.func.arguments, names) if a.is_out]
        in_names = [n for a, n in zip(f.func.arguments, names) if not a.is_out]
        kind = "out" if f.is_out else ("inplace" if f.is_inplace else "functional")
        impls = {}
        for key, kname in target.dispatch.items():
            impls[key] = self.native(kname, target, "impl")
        for key in list(impls) + [K.Meta]:
            fn = f"k_{f.ident}__{key.name}"
            self.emit(f"def {fn}(ks, {', '.join(names)}):", f"    plan = {meta}({', '.join(in_names)})")
            if key is K.Meta:
                if kind == "functional":
                    self.emit("    return _st.meta_functional(plan)")
                elif kind == "out":
                    self.emit(f"    return _st.meta_out({f.func.name!r}, plan, {out_args[0]})")
                else:
                    self.emit(f"    return _st.meta_inplace({f.func.name!r}, plan, {in_names[0]})")
            else:
                self.emit(f"    r = {impls[key]}(_BACKENDS[plan.device.type].xp, plan, {', '.join(in_names)})")
                if kind == "functional":
                    self.emit("    return _st.functional(plan, r)")
                elif kind == "out":
                    self.emit(f"    return _st.out({f.func.name!r}, plan, r, {out_args[0]})")
                else:
                    self.emit(f"    return _st.inplace({f.func.name!r}, plan, r, {in_names[0]})")
            self.emit("")
            self.register(f, key, fn, f"{f.loc} (structured {key.name}, delegate {target.name})")

    def ufunc(self, f, target):
        loop = target.ufunc_inner_loop.get("Generic")
        if loop is None:
            raise CodegenError(f"{target.loc}: ufunc_inner_loop needs a Generic: entry")
        from ..aten.native.ufunc_formulas import FORMULAS
        from ..aten.ufunc import parse_dtype_spec
        try:
            fname, dtypes = parse_dtype_spec(loop)
        except ValueError as e:
            raise CodegenError(f"{target.loc}: {e}") from None
        formula = FORMULAS.get(fname)
        if formula is None:
            raise CodegenError(f"{target.loc}: no ufunc formula '{fname}' in onion/aten/native/ufunc_formulas.py")
        names = arg_names(f)
        args = f.func.arguments
        operand_idx = [i for i, a in enumerate(args) if not a.is_out and a.type.base in ("Tensor", "Scalar")
                       and not a.type.is_list][: formula.n_tensors]
        if len(operand_idx) != formula.n_tensors:
            raise CodegenError(f"{f.loc}: formula '{fname}' takes {formula.n_tensors} operands but {f.name} has "
                               f"{len(operand_idx)} Tensor/Scalar arguments")
        scalar_idx = [i for i, a in enumerate(args) if not a.is_out and i not in operand_idx]
        out_names = [names[i] for i, a in enumerate(args) if a.is_out]
        kind = "out" if f.is_out else ("inplace" if f.is_inplace else "functional")
        lp = f"_LOOPS_{fname}"
        if lp not in self.instantiated:
            dts = ", ".join(f"_dt.{d.name}" for d in dtypes)
            self.emit(f"{lp} = _uf.instantiate(_FORMULAS[{fname!r}], 'cpu', _np, ({dts},))",
                      f"_DIRECT_{fname} = _uf.instantiate_direct(_FORMULAS[{fname!r}], _np, ({dts},))",
                      f"_SCALAR_{fname} = _uf.instantiate_scalar(_FORMULAS[{fname!r}], _np, ({dts},))", "")
            self.instantiated.add(lp)
        opname = f.func.name
        scal = "(" + "".join(f"{names[i]}, " for i in scalar_idx) + ")"
        prep = []
        ops_exprs = []
        for i in operand_idx:
            a = args[i]
            n = names[i]
            if a.type.base == "Scalar":
                if a.type.optional:
                    prep.append(f"    {n}_t = _s2t({n}) if {n} is not None else None")
                else:
                    prep.append(f"    {n}_t = _s2t({n})")
                ops_exprs.append(f"{n}_t")
            else:
                ops_exprs.append(n)
        operands = "(" + ", ".join(ops_exprs) + ",)"
        all_tensor = all(args[i].type.base in ("Tensor", "Scalar") and not args[i].type.optional
                         for i in operand_idx) and args[operand_idx[0]].type.base == "Tensor"
        for key in (K.CPU, K.CUDA, K.PrivateUse1, K.Meta):
            fn = f"k_{f.ident}__{key.name}"
            self.emit(f"def {fn}(ks, {', '.join(names)}):")
            self.lines.extend(prep)
            plain = getattr(formula, "promote", None) is None and getattr(formula, "plain_layout", None) is None
            if key is K.CPU and kind == "functional" and all_tensor and plain and formula.kind in (
                    "binary", "unary", "comparison", "unary_float", "binary_float", "abs"):
                self.fast_path(formula, fname, lp, ops_exprs, [names[i] for i in scalar_idx], opname)
            if key is K.Meta:
                call = {"functional": f"_uf.meta_functional({opname!r}, _FORMULAS[{fname!r}], {operands}, {scal})",
                        "out": f"_uf.meta_out({opname!r}, _FORMULAS[{fname!r}], {operands}, {scal}, {out_names[0] if out_names else None})",
                        "inplace": f"_uf.meta_inplace({opname!r}, _FORMULAS[{fname!r}], {operands}, {scal})"}[kind]
            else:
                call = {"functional": f"_uf.functional({opname!r}, _FORMULAS[{fname!r}], {operands}, {scal})",
                        "out": f"_uf.out_variant({opname!r}, _FORMULAS[{fname!r}], {operands}, {scal}, {out_names[0] if out_names else None})",
                        "inplace": f"_uf.inplace_variant({opname!r}, _FORMULAS[{fname!r}], {operands}, {scal})"}[kind]
            self.emit(f"    return {call}", "")
            if key in (K.CUDA, K.PrivateUse1):
                self.emit(f"if {key.name.lower()!r} in _BACKENDS or {key.name!r} == 'PrivateUse1':")
                self.emit("    " + f"_reg(_ops.H_{f.ident}, _K.{key.name}, {fn}, 'registered at {f.loc} "
                          f"(ufunc {fname}, {key.name})')")
            else:
                self.register(f, key, fn, f"{f.loc} (ufunc {fname}, {key.name})")

    def fast_path(self, formula, fname, lp, tensors, scalars, opname):
        """Same dtypes and no wrapped numbers, or a tensor with a wrapped Python number that
        does not change its dtype: skip promotion entirely (the common cases)."""
        e = self.emit
        sc = "".join(f", {s}" for s in scalars)
        cond = []
        if formula.kind in ("unary_float", "binary_float"):
            cond.append("dt.category >= 2")
        if formula.kind == "abs":
            cond.append("not dt.is_complex")
        out_dt = "_dt.bool" if formula.kind == "comparison" else "dt"
        general = f"_uf.functional({opname!r}, _FORMULAS[{fname!r}], ({', '.join(tensors)},), " \
                  f"({', '.join(scalars)}{',' if scalars else ''}))"

        def body(loop_dict, arrs, contiguous, catch):
            e(f"        loop = {loop_dict}.get(dt)")
            e("        if loop is not None" + "".join(f" and {c}" for c in cond) + ":")
            if getattr(formula, "operand_check", None) is not None:
                impls = "(ai, bi)" if len(tensors) == 2 else "(ai,)"
                e(f"            _FORMULAS[{fname!r}].operand_check({impls}, dt{sc})")
            if formula.check is not None:
                if formula.fast_ok:
                    e(f"            if not ({formula.fast_ok}):", f"                _FORMULAS[{fname!r}].check(dt{sc})")
                else:
                    e(f"            _FORMULAS[{fname!r}].check(dt{sc})")
            e("            try:", f"                r = loop({arrs}{sc})", f"            except {catch} as exc:",
              f"                _uf.raise_value_error({opname!r}, {'(ai, bi)' if len(tensors) == 2 else '(ai,)'}, exc)"
              if catch == "ValueError" else f"                return {general}")
            e(f"            if type(r) is _nd and r.ndim > 1 and not ({contiguous}):", f"                return {general}")
            e("            if type(r) is _nd and not _tls.inference_mode:",
              "                t = _new(_T)", f"                t._impl = _TI(r, {out_dt}, _CPU, _CPU_KS)",
              "                return t", f"            return _wrap_cpu(r, {out_dt})")

        if len(tensors) == 2:
            a, b = tensors
            e(f"    ai = {a}._impl", f"    bi = {b}._impl", "    dt = ai.dtype",
              "    if dt is bi.dtype and not ai.is_wrapped_number:")
            body(f"_DIRECT_{fname}", "ai._array, bi._array",
                 "ai._array.flags.c_contiguous and bi._array.flags.c_contiguous", "ValueError")
            e("    elif bi.is_wrapped_number and not ai.is_wrapped_number and dt.category >= bi.dtype.category"
              " and dt.category >= 2"
              " and bi.dtype is not _dt.bool:")
            body(f"_SCALAR_{fname}", "ai._array, bi._array.astype(dt.np)", "ai._array.flags.c_contiguous",
                 "(ValueError, OverflowError, TypeError)")
        else:
            (a,) = tensors
            e(f"    ai = {a}._impl", "    dt = ai.dtype", "    if True:")
            body(f"_DIRECT_{fname}", "ai._array", "ai._array.flags.c_contiguous", "ValueError")

    def autograd(self, f: NativeFunction):
        """The Autograd kernel: records a node (derivatives.yaml) and redispatches below autograd."""
        from .derivatives import gen_autograd_kernel
        gen_autograd_kernel(self, f, self.plans, self.by_name)

    def backend_select(self, f: NativeFunction):
        names = arg_names(f)
        fn = f"k_{f.ident}__BackendSelect"
        self.emit(f"def {fn}(ks, {', '.join(names)}):",
                  "    dev = device if device is not None else _CPU",
                  "    ks = (ks & _AFTER_BS) | (1 << dev._key)",
                  f"    return _ops.H_{f.ident}.redispatch(ks, {', '.join(names)})", "")
        self.register(f, K.BackendSelect, fn, f"{f.loc} (BackendSelect, generated)")

    def run(self) -> str:
        self.instantiated = set()
        for f in self.fns:
            has_tensor = any(a.type.is_tensor_like for a in f.func.arguments)
            if f.structured_delegate or f.structured:
                target = self.by_name[f.structured_delegate] if f.structured_delegate else f
                self.structured(f, target)
                extra = {k: v for k, v in f.dispatch.items() if not f.structured}
                if extra:
                    self.direct(f)
            elif f.dispatch:
                self.direct(f)
            else:
                self.composite_implicit(f)
            implicit_only = not (f.structured_delegate or f.structured or f.dispatch)
            if not implicit_only:
                self.autograd(f)
            if not has_tensor and any(a.name == "device" for a in f.func.arguments):
                self.backend_select(f)
        at = self.lines.index("_lib = _Library('aten', 'IMPL')")
        return "\n".join(self.lines[:at] + sorted(self.imports) + [""] + self.lines[at:]) + "\n"


def gen_register_kernels(fns, plans=None) -> str:
    w = KernelWriter(fns)
    w.plans = plans or {}
    return w.run()


__all__ = ["gen_operators", "gen_register_kernels", "BACKEND_KEYS"]
