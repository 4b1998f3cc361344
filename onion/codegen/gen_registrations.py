"""``register_<key>.py``: the kernels of one dispatch key and their registrations.

Each file opens a ``Library('aten', 'IMPL', <key>)`` and, per operator, defines a short
kernel over hand-written helpers and registers it by name, as PyTorch's
``RegisterCPU_0.cpp`` does (``m.impl("add.Tensor", ...)``), so that
``grep -n '"add.Tensor"' onion/_generated/register_cpu.py`` finds add's CPU kernel and
``_dispatch_dump`` names that line.  Kernels take ``(ks, *arguments)``:

- a ``dispatch:`` entry: a wrapper that drops the keyset and calls the named function;
- a structured operator: meta function -> impl -> ``functional``/``out``/``inplace`` wrapper;
- a ufunc (``ufunc_inner_loop``): the ``Ufunc`` helper's kernel for the variant, with its
  per-dtype loops instantiated once for the backend;
- an operator with no ``dispatch:``: its CompositeImplicitAutograd body;
- a factory with a ``device`` argument and no tensor: a BackendSelect kernel.
"""
from __future__ import annotations

import re

from ..core.dispatch_key import K
from ..core.dtype_groups import parse_loop_spec
from .context import CodegenError, context
from .model import NativeFunction
from .naming import arg_names
from .pyfmt import fit_all

from .header import HEADER
UFUNC_BACKENDS = (K.CPU, K.CUDA, K.PrivateUse1, K.PrivateUse2)
# keys that get another key's kernels: PrivateUse2 (the Dask backend, onion/backends/dask.py) runs the
# xp-generic kernels CUDA runs, since dask.array follows NumPy's API as CuPy does
MIRRORS = {K.PrivateUse2: K.CUDA}


def with_mirrors(dispatch: dict) -> dict:
    """A ``dispatch:`` mapping plus the mirrored keys' entries (the kernel of the key they mirror)."""
    extra = {m: dispatch[src] for m, src in MIRRORS.items() if src in dispatch and m not in dispatch}
    return {**dispatch, **extra} if extra else dispatch


# keys whose file registers nothing on import: a backend asks (onion/backends/base.py register_backend)
ON_REQUEST_KEYS = (K.PrivateUse1,)


def _suffix(key: K) -> str:
    """``cpu``, ``privateuse1``, ``backend_select``, ``composite_implicit_autograd`` (PyTorch's file names)."""
    if key.name.startswith("PrivateUse"):
        return key.name.lower()
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", key.name).lower()


def file_of(key: K) -> str:
    """``register_cpu.py``, ``register_composite_implicit_autograd.py``..."""
    return f"register_{_suffix(key)}.py"


class KeyFile:
    """The lines of one ``register_<key>.py``."""

    def __init__(self, key: K):
        self.key = key
        self.imports: set = set()
        self.preamble: list = []
        self.body: list = []

    def native(self, module: str) -> str:
        self.imports.add(f"from onion.aten.native import {module} as _{module}")
        return f"_{module}"

    def render(self) -> str:
        if self.key in ON_REQUEST_KEYS:
            return self.render_on_request()
        head = [HEADER, f'"""Kernels for the {self.key.name} dispatch key, registered by operator name."""']
        head += sorted(self.imports)
        head += ["", f"m = _Library('aten', 'IMPL', '{self.key.name}')", ""]
        return "\n".join(fit_all(head + self.preamble + [""] + self.body)) + "\n"

    def render_on_request(self) -> str:
        """The xp-generic kernels of an out-of-tree key: defined on import, registered by ``register(key)``
        when a backend asks for them (``Backend.xp_generic_kernels``), on its own key."""
        head = [HEADER, f'"""Kernels written against ``xp`` for an out-of-tree backend key ({self.key.name} by '
                        f'default), registered by ``register(key)``."""']
        head += sorted(self.imports) + [""]
        regs = [line for line in self.body if line.startswith("m.impl_kernel(")]
        body = [line for line in self.body if not line.startswith("m.impl_kernel(")]
        tail = [f"def register(key='{self.key.name}'):",
                '    """Register every kernel above for ``key``; the returned Library undoes it when destroyed."""',
                "    m = _Library('aten', 'IMPL', key)"] + ["    " + line for line in regs] + ["    return m"]
        return "\n".join(fit_all(head + self.preamble + [""] + body + tail)) + "\n"


class RegistrationWriter:
    """Walks native_functions.yaml and fills one ``KeyFile`` per dispatch key."""

    def __init__(self, fns, kernel_index: dict, formulas: dict, takes_keyset: frozenset = frozenset()):
        self.fns = fns
        self.takes_keyset = takes_keyset
        self.by_name = {f.name: f for f in fns}
        self.kernel_index = kernel_index
        self.formulas = formulas
        self.files: dict = {}
        self.ufuncs: set = set()

    def file(self, key: K) -> KeyFile:
        kf = self.files.get(key)
        if kf is None:
            kf = self.files[key] = KeyFile(key)
            kf.imports.add("from onion.dispatch.library import Library as _Library")
        return kf

    def module_of(self, name: str, f: NativeFunction, what: str) -> str:
        mod = self.kernel_index.get(name)
        if mod is None:
            raise CodegenError(f"{f.loc}: {what} '{name}' for {f.name} is not a function of onion/aten/native")
        return mod

    def emit_kernel(self, key: K, f: NativeFunction, lines: list, kernel: str) -> None:
        kf = self.file(key)
        kf.body += [f"# {f.name}  ({f.loc})"] + lines + [f'm.impl_kernel("{f.name}", {kernel})', ""]

    # --- dispatch: entries ---------------------------------------------------------
    def direct(self, f: NativeFunction, key: K, kname: str) -> None:
        kf = self.file(key)
        mod = kf.native(self.module_of(kname, f, "kernel"))
        if kname in self.takes_keyset:      # its first parameter is the keyset: registered as it is
            self.emit_kernel(key, f, [], f"{mod}.{kname}")
            return
        names = arg_names(f)
        fn = f"{f.ident}_{_suffix(key)}"
        self.emit_kernel(key, f, [f"def {fn}(ks, {', '.join(names)}):",
                                  f"    return {mod}.{kname}({', '.join(names)})", ""], fn)

    def composite_implicit(self, f: NativeFunction) -> None:
        candidates = [f.ident, f.func.name] if f.func.overload_name else [f.func.name]
        body = next((c for c in candidates if c in self.kernel_index), None)
        if body is None:
            raise CodegenError(f"{f.loc}: {f.name} has no dispatch: and no CompositeImplicitAutograd body named "
                               f"{' or '.join(candidates)} in onion/aten/native")
        self.direct(f, K.CompositeImplicitAutograd, body)

    # --- structured ------------------------------------------------------------------
    def structured(self, f: NativeFunction, target: NativeFunction) -> None:
        if target.ufunc_inner_loop:
            self.ufunc(f, target)
        else:
            self.structured_impl(f, target)

    def _meta_name(self, target: NativeFunction) -> str:
        base = target.func.name
        for c in (f"meta_{base}_{target.func.overload_name}", f"meta_{base}"):
            if c in self.kernel_index:
                return c
        raise CodegenError(f"{target.loc}: structured op {target.name} needs a meta function named "
                           f"meta_{base}_{target.func.overload_name} or meta_{base} in onion/aten/native")

    def structured_impl(self, f: NativeFunction, target: NativeFunction) -> None:
        meta = self._meta_name(target)
        names = arg_names(f)
        out_args = [n for a, n in zip(f.func.arguments, names) if a.is_out]
        ins = [n for a, n in zip(f.func.arguments, names) if not a.is_out]
        kind = "out" if f.is_out else ("inplace" if f.is_inplace else "functional")
        impls = dict(with_mirrors(target.dispatch))
        for key in list(impls) + [K.Meta]:
            kf = self.file(key)
            kf.imports.add("from onion.aten import structured as _st")
            meta_mod = kf.native(self.module_of(meta, target, "meta function"))
            fn = f"{f.ident}_{_suffix(key)}"
            lines = [f"def {fn}(ks, {', '.join(names)}):"]
            fast = f"fast_{target.func.name}"
            if kind == "functional" and key is K.CPU and fast in self.kernel_index:
                # the op's common case made straight from its inputs (a hand-written ``fast_<op>``; None when
                # the call is not that case): the per-call plan and checks cost more than a small result
                fast_mod = kf.native(self.module_of(fast, target, "fast path"))
                lines += [f"    result = {fast_mod}.{fast}({', '.join(ins)})",
                          "    if result is not None:",
                          "        return result"]
            lines.append(f"    plan = {meta_mod}.{meta}({', '.join(ins)})")
            if key is K.Meta:
                lines.append({"functional": "    return _st.meta_functional(plan)",
                              "out": f"    return _st.meta_out({f.func.name!r}, plan, {out_args[0] if out_args else ''})",
                              "inplace": f"    return _st.meta_inplace({f.func.name!r}, plan, {ins[0]})"}[kind])
            else:
                impl_mod = kf.native(self.module_of(impls[key], target, "impl"))
                xp = self._xp(kf, key)
                lines.append(f"    result = {impl_mod}.{impls[key]}({xp}, plan, {', '.join(ins)})")
                lines.append({"functional": "    return _st.functional(plan, result)",
                              "out": f"    return _st.out({f.func.name!r}, plan, result, {out_args[0] if out_args else ''})",
                              "inplace": f"    return _st.inplace({f.func.name!r}, plan, result, {ins[0]})"}[kind])
            self.emit_kernel(key, f, lines + [""], fn)

    def _xp(self, kf: KeyFile, key: K) -> str:
        if key is K.CPU:
            kf.imports.add("import numpy as _np")
            return "_np"
        kf.imports.add("from onion.backends import backend_for as _backend_for")
        return "_backend_for(plan.device).xp"

    def ufunc(self, f: NativeFunction, target: NativeFunction) -> None:
        loops = target.ufunc_inner_loop
        unknown = set(loops) - {"Generic", "ScalarOnly"} - {k.name for k in UFUNC_BACKENDS}
        if unknown:
            raise CodegenError(f"{target.loc}: ufunc_inner_loop: unknown entr{'ies' if len(unknown) > 1 else 'y'} "
                               f"{', '.join(sorted(unknown))} (expected Generic, ScalarOnly, or a backend key)")
        if "Generic" not in loops:
            raise CodegenError(f"{target.loc}: ufunc_inner_loop needs a Generic: entry")
        specs = {}
        for entry, spec in loops.items():
            try:
                specs[entry] = parse_loop_spec(str(spec))
            except ValueError as e:
                raise CodegenError(f"{target.loc}: ufunc_inner_loop {entry}: {e}") from None
            if specs[entry][0] not in self.formulas:
                raise CodegenError(f"{target.loc}: no ufunc formula '{specs[entry][0]}' in "
                                   f"onion/aten/native/ufunc_formulas.py")
        generic = self.formulas[specs["Generic"][0]]
        args = f.func.arguments
        operands = [i for i, a in enumerate(args) if not a.is_out and a.type.base in ("Tensor", "Scalar")
                    and not a.type.is_list][: generic.n_operands]
        if operands != list(range(generic.n_operands)):
            raise CodegenError(f"{f.loc}: formula '{generic.name}' takes {generic.n_operands} operands, which must be "
                               f"the first Tensor/Scalar arguments of {f.name}")
        kinds = tuple(args[i].type.base + ("?" if args[i].type.optional else "") for i in operands)
        kind = "out" if f.is_out else ("inplace" if f.is_inplace else "functional")
        for key in UFUNC_BACKENDS + (K.Meta,):
            fname, groups = specs.get(key.name, specs["Generic"])     # (a mirror: Generic, not cupyx loops)
            kf = self.file(key)
            kf.imports.add("from onion.aten import ufunc as _ufunc")
            kf.imports.add("from onion.aten.native.ufunc_formulas import FORMULAS as _FORMULAS")
            kf.imports.add("import onion.aten.native.ufunc_special  # noqa: F401 - registers its formulas")
            var = f"ufunc_{fname}"
            if (key, var) not in self.ufuncs:
                self.ufuncs.add((key, var))
                if key is K.Meta:
                    kf.body += [f"{var} = _ufunc.MetaUfunc(_FORMULAS[{fname!r}])"]
                else:
                    # CPU loops are made now; other backends' on first use, from their namespace
                    xp = self._xp(kf, key) if key is K.CPU else "None"
                    scalar_only = specs.get("ScalarOnly")
                    extra = f", scalar_only=_FORMULAS[{scalar_only[0]!r}]" if scalar_only else ""
                    kf.body += [f"# ufunc {fname}: per-dtype loops of the formula ({target.loc})",
                                f"{var} = _ufunc.Ufunc(_FORMULAS[{fname!r}], {key.name.lower()!r}, {xp}, "
                                f"{groups!r}{extra})", ""]
            self.emit_kernel(key, f, [], f"{var}.{kind}({f.func.name!r}, {kinds!r})")

    # --- BackendSelect ---------------------------------------------------------------------
    def backend_select(self, f: NativeFunction) -> None:
        kf = self.file(K.BackendSelect)
        kf.imports.add("from onion.core.device import CPU as _CPU")
        kf.imports.add("from onion.core.dispatch_key import AFTER_BACKEND_SELECT as _AFTER_BACKEND_SELECT")
        kf.imports.add("from onion._generated import operators as _ops")
        names = arg_names(f)
        fn = f"{f.ident}_backend_select"
        self.emit_kernel(K.BackendSelect, f, [
            f"def {fn}(ks, {', '.join(names)}):",
            "    # the device argument picks the backend key, since no tensor argument carries one",
            "    ks = (ks & _AFTER_BACKEND_SELECT) | (1 << (device if device is not None else _CPU)._key)",
            f"    return _ops.redispatch_{f.ident}[ks]({', '.join(['ks'] + names)})", ""], fn)

    def run(self) -> dict:
        for f in self.fns:
            with context(f.loc, f.name):
                if f.structured_delegate or f.structured:
                    target = self.by_name[f.structured_delegate] if f.structured_delegate else f
                    self.structured(f, target)
                    if not f.structured:
                        for key, kname in with_mirrors(f.dispatch).items():
                            self.direct(f, key, kname)
                elif f.dispatch:
                    for key, kname in with_mirrors(f.dispatch).items():
                        self.direct(f, key, kname)
                else:
                    self.composite_implicit(f)
                has_tensor = any(a.type.is_tensor_like for a in f.func.arguments)
                if not has_tensor and any(a.name == "device" for a in f.func.arguments):
                    self.backend_select(f)
        return {file_of(key): kf.render() for key, kf in self.files.items()}


def gen_registrations(fns, kernel_index: dict, formulas: dict, takes_keyset: frozenset = frozenset()) -> dict:
    """{file name: source} for every dispatch key some operator has a kernel for; the kernels named in
    ``takes_keyset`` take the keyset first and are registered without a wrapper."""
    return RegistrationWriter(fns, kernel_index, formulas, takes_keyset).run()
