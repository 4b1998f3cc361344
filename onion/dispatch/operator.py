"""``OperatorHandle``: one operator overload's schema, registrations and table.

Calls index a ``KernelCache`` (keyset -> kernel) first; on a miss the table is
consulted (skipping fallthrough keys) and the answer cached.  Any registration
change marks the table stale and clears both caches; the table itself is
computed on the first lookup after that, so registering hundreds of kernels at
import costs one computation per operator actually called.
"""
from __future__ import annotations

import functools

from ..core.dispatch_key import ALIAS_COVERS, RUNTIME_KEYS, K, dump_order
from ..core.tls import state as _tls_state
from .dispatch_table import FALLTHROUGH, KernelRegistration, TableEntry, compute_entry, compute_table

_NAMES = {int(k): k.name for k in RUNTIME_KEYS}


class KernelCache(dict):
    """keyset -> kernel for one operator; a miss asks the operator's dispatch table.

    Generated operator entries index it directly (``dispatch_add_Tensor[ks]``): a hit is
    one dict lookup, a miss (``__missing__``) is the Dispatcher's table lookup."""

    __slots__ = ("handle", "redispatch")

    def __init__(self, handle, redispatch: bool):
        super().__init__()
        self.handle = handle
        self.redispatch = redispatch

    def __missing__(self, ks):
        return self.handle.lookup(ks, self.redispatch)


def keyset_of_list(tensors) -> int:
    """The union of the keysets of a ``Tensor[]`` / ``Tensor?[]`` argument."""
    ks = 0
    for t in tensors:
        if t is not None:
            ks |= t._impl.keyset
    return ks


def check_inferred_schema(schema, debug: str, reg: KernelRegistration) -> None:
    """A typed kernel's signature (``(Tensor _0) -> Tensor _0``) against the operator's schema, as PyTorch
    checks a C++ kernel's inferred schema."""
    from .schema import parse_schema
    inferred = parse_schema("_" + reg.inferred)
    reason = ""
    if len(inferred.arguments) != len(schema.arguments):
        reason = f"The number of arguments is different. {len(schema.arguments)} vs {len(inferred.arguments)}."
    elif len(inferred.returns) != len(schema.returns):
        reason = f"The number of returns is different. {len(schema.returns)} vs {len(inferred.returns)}."
    else:
        for i, (a, b) in enumerate(zip(schema.arguments, inferred.arguments)):
            if str(a.type) != str(b.type):
                reason = f"Type mismatch in argument {i + 1}: {b.type} vs. {a.type}"
                break
    if reason:
        name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        raise RuntimeError(
            f"Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n"
            f"  operator: {name}\n  expected schema: {schema}\n    {debug}\n"
            f"  inferred schema: {reg.inferred}\n    {reg.debug}\n  reason: {reason}")


class OperatorHandle:
    """The dispatcher's record of one overload (``aten::add.Tensor``)."""

    def __init__(self, dispatcher, schema, debug: str, qualified_name: str = ""):
        """``schema``: a ``FunctionSchema``, or the text of one already checked (codegen parsed every
        schema of native_functions.yaml), parsed here on first use; or None with ``qualified_name`` for an
        operator that has kernels but no definition yet (PyTorch accepts ``impl`` before ``def``)."""
        self.dispatcher = dispatcher
        self.kernels: dict = {}                      # key -> [KernelRegistration, ...] newest last
        self._table: list | None = None              # None: stale, computed on the next lookup
        self._undefined: TableEntry | None = None    # the entry for a call without tensors
        self._skip_mask = 0
        self.dispatch_cache = KernelCache(self, False)    # keyset -> kernel, for calls
        self.redispatch_cache = KernelCache(self, True)   # keyset -> kernel, for redispatches
        self.source = ""                             # where the operator is declared (YAML file:line)
        self.tags: tuple = ()
        self.alias_analysis = "FROM_SCHEMA"
        self.opoverload = None                       # set by onion.dispatch.ops
        self.has_schema = False
        if schema is None:
            self.name, _, self.overload_name = qualified_name.partition(".")
            self.qualified_name = qualified_name
            self.debug = ""
        else:
            self.set_schema(schema, debug)
        self.recompute()

    def set_schema(self, schema, debug: str) -> None:
        """Give the operator its definition (``Library.define``); kernels registered before it stay (a typed
        one whose signature doesn't match the schema is refused, and the definition with it)."""
        for regs in self.kernels.values():
            for reg in regs:
                if reg.inferred:
                    from .schema import parse_schema
                    check_inferred_schema(parse_schema(schema) if isinstance(schema, str) else schema, debug, reg)
        if isinstance(schema, str):
            self._schema_text = schema
            self.name, _, self.overload_name = schema[:schema.index("(")].partition(".")
        else:
            self.__dict__["schema"] = schema
            self.name = schema.name                      # "aten::add"
            self.overload_name = schema.overload_name    # "Tensor"
        self.qualified_name = self.name + ("." + self.overload_name if self.overload_name else "")
        self.debug = debug
        self.has_schema = True
        for regs in self.kernels.values():
            for reg in regs:
                if reg.adapt is not None:
                    reg.fn = reg.adapt(self)

    def clear_schema(self) -> None:
        """The defining library went away; kernels registered by others remain (PyTorch's deregisterSchema)."""
        for attr in ("schema", "tensor_positions", "num_args", "_schema_text"):
            self.__dict__.pop(attr, None)
        self.has_schema = False
        self.debug = ""
        self.tags = ()
        self.alias_analysis = "FROM_SCHEMA"
        self.recompute()

    @functools.cached_property
    def schema(self):
        from .schema import parse_schema
        return parse_schema(self._schema_text)

    @functools.cached_property
    def tensor_positions(self) -> tuple:
        return tuple(i for i, a in enumerate(self.schema.arguments) if a.type.is_tensor_like)

    @functools.cached_property
    def num_args(self) -> int:
        return len(self.schema.arguments)

    # --- registration ---------------------------------------------------------
    def register(self, reg: KernelRegistration) -> None:
        if reg.inferred and self.has_schema:
            check_inferred_schema(self.schema, self.debug, reg)
        self.kernels.setdefault(reg.key, []).append(reg)
        self.recompute()

    def deregister(self, reg: KernelRegistration) -> None:
        regs = self.kernels.get(reg.key, [])
        if reg in regs:
            regs.remove(reg)
            if not regs:
                del self.kernels[reg.key]
        self.recompute()
        if not self.has_schema:
            self.dispatcher.forget_if_unused(self)

    def has_kernel_for(self, key: K) -> bool:
        return key in self.kernels

    def recompute(self) -> None:
        """Registrations changed: drop the table and the caches (the table is rebuilt lazily)."""
        self._table = None
        if self.dispatch_cache:         # most registrations (at import) find both caches empty
            self.dispatch_cache.clear()
        if self.redispatch_cache:
            self.redispatch_cache.clear()

    def _compute(self) -> list:
        newest = {k: regs[-1] for k, regs in self.kernels.items()}
        self._table, self._skip_mask = compute_table(newest, self.dispatcher.fallbacks, self._adapt_fallback)
        self._undefined = compute_entry(K.Undefined, newest, self.dispatcher.fallbacks, self._adapt_fallback)
        return self._table

    @property
    def table(self) -> list:
        return self._table if self._table is not None else self._compute()

    @property
    def skip_mask(self) -> int:
        if self._table is None:
            self._compute()
        return self._skip_mask

    # the older names of the two caches
    @property
    def _cache(self):
        return self.dispatch_cache

    @property
    def _rcache(self):
        return self.redispatch_cache

    def _adapt_fallback(self, reg: KernelRegistration):
        fb = reg.fn
        if "schema" in self.__dict__ and hasattr(fb, "specialize"):   # a fallback written out per operator
            return fb.specialize(self)
        op = self

        def boxed_fallback(ks, *args):
            return fb(op.opoverload, ks, args)
        return boxed_fallback

    # --- lookup -----------------------------------------------------------------
    def lookup(self, ks: int, redispatch: bool = False):
        """Kernel for a keyset (the cache-miss path); raises if there is none."""
        table = self.table
        eff = ks & ~self._skip_mask
        key = eff.bit_length() - 1
        entry = table[key] if key >= 0 else self._undefined
        if entry is None:
            raise NotImplementedError(self._missing_message(key))
        fn = entry.fn
        if self.dispatcher.profiler is not None:
            from .profiling import profiled_kernel  # late: only while profiling
            fn = profiled_kernel(self, fn, key, redispatch, entry)
        if self.dispatcher.recorder is not None and not redispatch:    # only while record_operators runs
            fn = self.dispatcher.recorder(self, fn)
        level = self.dispatcher.trace_level
        if level:
            from .trace import traced_kernel  # late: only when tracing
            fn = traced_kernel(self, fn, key, entry, ks, redispatch, level)
        else:
            (self.redispatch_cache if redispatch else self.dispatch_cache)[ks] = fn
        return fn

    def _missing_message(self, key: int) -> str:
        name = self.qualified_name
        available = [k.name for k in RUNTIME_KEYS if self.table[int(k)] is not None
                     and not self.table[int(k)].is_fallthrough]
        if key < 0:
            return (f"There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), "
                    f"but no fallback function is registered for schema {name}.  This usually means that this "
                    f"function requires a non-empty list of Tensors, or that you (the operator writer) forgot to "
                    f"register a fallback function.  Available functions are [{', '.join(available)}].\n\n"
                    + self.dump_table())
        return (f"Could not run '{name}' with arguments from the '{_NAMES[key]}' backend. "
                f"This could be because the operator doesn't exist for this backend, or was omitted "
                f"during the selective/custom build process (if using custom build). "
                f"'{name}' is only available for these backends: [{', '.join(available)}].\n\n"
                + self.dump_table())

    # --- calling ----------------------------------------------------------------
    def keyset_of(self, args) -> int:
        """Union of the tensor arguments' keysets with the thread-local sets."""
        ks = 0
        for i in self.tensor_positions:
            a = args[i]
            if a is None:
                continue
            if isinstance(a, (list, tuple)):
                for x in a:
                    if x is not None:
                        ks |= x._impl.keyset
            else:
                ks |= a._impl.keyset
        st = _tls_state()
        return (ks | st.include) & st.mask

    def call(self, *args):
        """Dispatch normalized positional arguments (all of the schema's)."""
        ks = self.keyset_of(args)
        return self.dispatch_cache[ks](ks, *args)

    def redispatch(self, ks: int, *args):
        return self.redispatch_cache[ks](ks, *args)

    # --- introspection ----------------------------------------------------------
    def dump(self) -> str:
        """PyTorch's ``_dispatch_dump``: the definition, then every registration (newest first per key)."""
        if self.has_schema:
            lines = [f"name: {self.qualified_name}", f"schema: {self.schema}", f"debug: {self.debug}",
                     f"alias analysis kind: {self.alias_analysis}"]
        else:
            lines = [f"name: {self.qualified_name}", "schema: (none)"]
        for key in sorted(self.kernels, key=dump_order):
            alias = "[alias]" if key in ALIAS_COVERS else ""
            for i, reg in enumerate(reversed(self.kernels[key])):
                inactive = " (inactive)" if i else ""
                kind = "fallthrough boxed" if reg.is_fallthrough else ("boxed" if reg.boxed else "boxed unboxed")
                lines.append(f"{key.name}{alias}{inactive}: {reg.debug} :: {reg.inferred or '(none)'} [ {kind} ]")
        return "\n".join(lines) + "\n"

    def dump_table(self) -> str:
        """PyTorch's ``_dispatch_dump_table``: for each key that resolves to something (``Undefined`` first),
        the registration it runs and why."""
        table = self.table
        lines = []
        for key, entry in zip((K.Undefined,) + RUNTIME_KEYS, [self._undefined] + table):
            if entry is not None:
                debug = entry.registration.debug if entry.registration is not None else ""
                lines.append(f"{key.name}: {'fallthrough ' if entry.is_fallthrough else ''}{debug} [{entry.reason}]")
        return "\n".join(lines) + ("\n" if lines else "")

    def __repr__(self):
        return f"OperatorHandle({self.qualified_name})"


__all__ = ["OperatorHandle", "KernelCache", "FALLTHROUGH"]
