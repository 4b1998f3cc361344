"""The data model of native_functions.yaml: one ``NativeFunction`` per entry.

Each entry keeps its file and line so that every codegen error can point at
the YAML that caused it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from ..core.dispatch_key import ALIAS_KEYS, NUM_RUNTIME_KEYS, DispatchKey
from ..dispatch.schema import FunctionSchema, parse_schema
from .context import CodegenError, Loc, context  # noqa: F401  (CodegenError, Loc: re-exported)

KNOWN_FIELDS = {"func", "variants", "dispatch", "structured", "structured_delegate", "structured_inherits",
                "ufunc_inner_loop", "tags", "python_module", "autogen", "device_check", "device_guard",
                "manual_cpp_binding", "cpp_no_default_args", "category_override", "manual_kernel_registration"}


@dataclass(frozen=True)
class NativeFunction:
    """One entry of native_functions.yaml (torchgen's ``NativeFunction``)."""

    func: FunctionSchema
    loc: Loc
    variants: tuple = ("function",)
    dispatch: dict = field(default_factory=dict, hash=False)   # DispatchKey -> kernel name
    structured: bool = False
    structured_delegate: str | None = None
    structured_inherits: str | None = None
    ufunc_inner_loop: dict = field(default_factory=dict, hash=False)   # "Generic"/"ScalarOnly"/key -> spec
    tags: tuple = ()
    python_module: str | None = None
    autogen: tuple = ()
    device_check: str = "ExactSame"
    has_explicit_dispatch: bool = False

    @property
    def name(self) -> str:
        """``add.Tensor`` (``add`` for the default overload)."""
        s = self.func
        return s.name + ("." + s.overload_name if s.overload_name else "")

    @property
    def ident(self) -> str:
        """A Python identifier for this overload: ``add_Tensor``, ``add__Tensor``, ``mm``."""
        s = self.func
        return s.name + ("_" + s.overload_name if s.overload_name else "")

    @property
    def is_out(self) -> bool:
        return self.func.is_out_fn

    @property
    def is_inplace(self) -> bool:
        n = self.func.name.split("::")[-1]
        return n.endswith("_") and not n.endswith("__")

    @property
    def base_name(self) -> str:
        n = self.func.name
        return n[:-1] if self.is_inplace else n


@dataclass(frozen=True)
class NativeFunctionsGroup:
    """The functional, in-place and ``out=`` variants of one structured operator
    (torchgen's ``NativeFunctionsGroup``): they share one meta function and one impl per backend."""

    functional: NativeFunction | None
    inplace: NativeFunction | None
    out: NativeFunction

    def functions(self) -> tuple:
        return tuple(f for f in (self.functional, self.inplace, self.out) if f is not None)


@dataclass(frozen=True)
class BackendIndex:
    """For one dispatch key, the kernel name of every operator that has one (torchgen's ``BackendIndex``)."""

    key: DispatchKey
    kernels: dict = field(hash=False)      # operator name (add.out) -> kernel name

    def has_kernel(self, f: NativeFunction) -> bool:
        return f.name in self.kernels


def group_structured(fns) -> list:
    """One ``NativeFunctionsGroup`` per ``structured: True`` out= operator, with its delegates."""
    by_out = {f.name: [] for f in fns if f.structured}
    for f in fns:
        if f.structured_delegate:
            by_out[f.structured_delegate].append(f)
    groups = []
    for f in fns:
        if f.structured:
            members = by_out[f.name]
            groups.append(NativeFunctionsGroup(
                functional=next((g for g in members if not g.is_inplace), None),
                inplace=next((g for g in members if g.is_inplace), None), out=f))
    return groups


def backend_indices(fns) -> dict:
    """DispatchKey -> BackendIndex from every entry's ``dispatch:`` (structured delegates inherit)."""
    out: dict = {}
    for f in fns:
        for key, kernel in f.dispatch.items():
            out.setdefault(key, BackendIndex(key, {})).kernels[f.name] = kernel
    return out


class _LineLoader(yaml.SafeLoader):
    """Records each mapping's line (``__line__``) while loading."""


def _construct_mapping(loader, node, deep=False):
    mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _keys(text: str, loc: Loc) -> list:
    out = []
    for part in str(text).split(","):
        name = part.strip()
        try:
            key = DispatchKey[name]
        except KeyError:
            raise CodegenError(f"{loc}: unknown dispatch key '{name}'") from None
        if int(key) >= NUM_RUNTIME_KEYS and key not in ALIAS_KEYS:
            raise CodegenError(f"{loc}: '{name}' cannot be used in dispatch:")
        out.append(key)
    return out


def _as_tuple(v) -> tuple:
    if v is None:
        return ()
    if isinstance(v, str):
        return tuple(x.strip() for x in v.split(",") if x.strip())
    return tuple(v)


def parse_entry(entry, path: str) -> NativeFunction:
    line = entry.get("__line__", 0) if isinstance(entry, dict) else 0
    loc = Loc(path, line)
    with context(loc):
        return _parse_entry(entry, loc)


def _parse_entry(entry, loc: Loc) -> NativeFunction:
    if not isinstance(entry, dict):
        raise CodegenError(f"{loc}: each entry must be a mapping with a 'func:' field")
    unknown = set(entry) - KNOWN_FIELDS - {"__line__"}
    if unknown:
        raise CodegenError(f"{loc}: unknown field(s) {', '.join(sorted(unknown))}")
    if "func" not in entry:
        raise CodegenError(f"{loc}: entry has no 'func:' field")
    try:
        schema = parse_schema(str(entry["func"]))
    except RuntimeError as e:
        raise CodegenError(f"{loc}: bad schema: {e}") from None
    dispatch = {}
    raw = entry.get("dispatch")
    if raw is not None:
        if not isinstance(raw, dict):
            raise CodegenError(f"{loc}: 'dispatch:' must map keys to kernel names")
        for k, v in raw.items():
            if k == "__line__":
                continue
            for key in _keys(k, loc):
                if not isinstance(v, str) or not v.isidentifier():
                    raise CodegenError(f"{loc}: kernel name for {key.name} must be an identifier, got {v!r}")
                dispatch[key] = v
    variants = _as_tuple(entry.get("variants", "function"))
    for v in variants:
        if v not in ("function", "method"):
            raise CodegenError(f"{loc}: unknown variant '{v}' (expected function and/or method)")
    ufunc = {k: v for k, v in (entry.get("ufunc_inner_loop") or {}).items() if k != "__line__"}
    structured = entry.get("structured", False)
    if structured not in (True, False):
        raise CodegenError(f"{loc}: 'structured:' must be True or False")
    if structured and not schema.is_out_fn:
        raise CodegenError(f"{loc}: structured: True is only for out= variants; use structured_delegate on {schema.name}")
    if ufunc and not structured:
        raise CodegenError(f"{loc}: ufunc_inner_loop requires structured: True")
    nf = NativeFunction(
        func=schema, loc=loc, variants=variants, dispatch=dispatch, structured=bool(structured),
        structured_delegate=entry.get("structured_delegate"), structured_inherits=entry.get("structured_inherits"),
        ufunc_inner_loop=ufunc, tags=_as_tuple(entry.get("tags")), python_module=entry.get("python_module"),
        autogen=_as_tuple(entry.get("autogen")), device_check=entry.get("device_check", "ExactSame"),
        has_explicit_dispatch=raw is not None)
    return nf


def load_native_functions(path: str) -> list:
    with open(path) as f:
        text = f.read()
    try:
        entries = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass, no code runs
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        raise CodegenError(f"{path}:{line}: YAML error: {e}") from None
    if not isinstance(entries, list):
        raise CodegenError(f"{path}:1: the file must be a list of entries")
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shown = os.path.relpath(path, root) if os.path.abspath(path).startswith(root + os.sep) else path
    fns = [parse_entry(e, shown) for e in entries]
    by_name = {}
    for f in fns:
        if f.name in by_name:
            raise CodegenError(f"{f.loc}: duplicate operator {f.name} (first declared at {by_name[f.name].loc})")
        by_name[f.name] = f
    for f in fns:
        if f.structured_delegate:
            target = by_name.get(f.structured_delegate)
            if target is None:
                raise CodegenError(f"{f.loc}: structured_delegate '{f.structured_delegate}' is not declared")
            if not target.structured:
                raise CodegenError(f"{f.loc}: structured_delegate '{f.structured_delegate}' is not structured: True")
    return fns
