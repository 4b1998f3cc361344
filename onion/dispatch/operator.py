"""``OperatorHandle``: one operator overload's schema, registrations and table.

Calls index a ``KernelCache`` (keyset -> kernel) first; on a miss the table is
consulted (skipping fallthrough keys) and the answer cached.  Any registration
change marks the table stale and clears both caches; the table itself is
computed on the first lookup after that, so registering hundreds of kernels at
import costs one computation per operator actually called.
"""
from __future__ import annotations

import functools

from ..core.dispatch_key import RUNTIME_KEYS, K
from ..core.tls import state as _tls_state
from .dispatch_table import FALLTHROUGH, KernelRegistration, TableEntry, compute_table

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


class OperatorHandle:
    """The dispatcher's record of one overload (``aten::add.Tensor``)."""

    def __init__(self, dispatcher, schema, debug: str):
        """``schema``: a ``FunctionSchema``, or the text of one already checked (codegen parsed every
        schema of native_functions.yaml), parsed here on first use."""
        self.dispatcher = dispatcher
        if isinstance(schema, str):
            self._schema_text = schema
            self.name, _, self.overload_name = schema[:schema.index("(")].partition(".")
        else:
            self.schema = schema
            self.name = schema.name                      # "aten::add"
            self.overload_name = schema.overload_name    # "Tensor"
        self.qualified_name = self.name + ("." + self.overload_name if self.overload_name else "")
        self.debug = debug
        self.kernels: dict = {}                      # key -> [KernelRegistration, ...] newest last
        self._table: list | None = None              # None: stale, computed on the next lookup
        self._skip_mask = 0
        self.dispatch_cache = KernelCache(self, False)    # keyset -> kernel, for calls
        self.redispatch_cache = KernelCache(self, True)   # keyset -> kernel, for redispatches
        self.source = ""                             # where the operator is declared (YAML file:line)
        self.tags: tuple = ()
        self.opoverload = None                       # set by onion.dispatch.ops
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
        self.kernels.setdefault(reg.key, []).append(reg)
        self.recompute()

    def deregister(self, reg: KernelRegistration) -> None:
        regs = self.kernels.get(reg.key, [])
        if reg in regs:
            regs.remove(reg)
            if not regs:
                del self.kernels[reg.key]
        self.recompute()

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
        entry = table[key] if key >= 0 else self._undefined_entry()
        if entry is None:
            raise NotImplementedError(self._missing_message(key))
        fn = entry.fn
        if self.dispatcher.profiler is not None:
            from .profiling import profiled_kernel  # late: only while profiling
            fn = profiled_kernel(self, fn, key, redispatch, entry)
        level = self.dispatcher.trace_level
        if level:
            from .trace import traced_kernel  # late: only when tracing
            fn = traced_kernel(self, fn, key, entry, ks, redispatch, level)
        else:
            (self.redispatch_cache if redispatch else self.dispatch_cache)[ks] = fn
        return fn

    def _undefined_entry(self):
        """No tensor to dispatch on (``cat([])``): PyTorch's Undefined key runs the operator's composite
        kernel, if it has one, so the kernel can raise the operator's own error."""
        for alias in (K.CompositeExplicitAutogradNonFunctional, K.CompositeExplicitAutograd,
                      K.CompositeImplicitAutograd):
            regs = self.kernels.get(alias)
            if regs and not regs[-1].is_fallthrough:
                return TableEntry(regs[-1].fn, f"Undefined: {alias.name}", regs[-1])
        return None

    def _missing_message(self, key: int) -> str:
        backend = _NAMES.get(key, "Undefined")
        available = [k.name for k in RUNTIME_KEYS if self.table[int(k)] is not None
                     and not self.table[int(k)].is_fallthrough]
        regs = sorted({k.name for k in self.kernels}, key=lambda n: n)
        return (f"Could not run '{self.qualified_name}' with arguments from the '{backend}' backend. "
                f"This could be because the operator doesn't exist for this backend, or was omitted "
                f"during the selective/custom build process (if using custom build). "
                f"'{self.qualified_name}' is only available for these backends: [{', '.join(available)}]."
                + (f" Kernels are registered for: [{', '.join(regs)}]." if regs else ""))

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
        lines = [f"name: {self.qualified_name}", f"schema: {self.schema}", f"debug: {self.debug}",
                 "alias analysis kind: FROM_SCHEMA"]
        order = list(RUNTIME_KEYS) + [K.Autograd, K.CompositeImplicitAutograd, K.CompositeExplicitAutograd,
                                      K.CompositeExplicitAutogradNonFunctional]
        for key in order:
            for i, reg in enumerate(reversed(self.kernels.get(key, []))):
                alias = "[alias]" if int(key) >= 100 else ""
                inactive = " (inactive)" if i else ""
                kind = "fallthrough" if reg.is_fallthrough else ("boxed" if reg.boxed else "unboxed")
                lines.append(f"{key.name}{alias}{inactive}: {reg.debug} [ {kind} ]")
        return "\n".join(lines) + "\n"

    def dump_table(self) -> str:
        lines = []
        for key in RUNTIME_KEYS:
            e = self.table[int(key)]
            if e is None:
                lines.append(f"{key.name}: [missing]")
            else:
                lines.append(f"{key.name}: {'fallthrough' if e.is_fallthrough else 'kernel'} [{e.reason}]")
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return f"OperatorHandle({self.qualified_name})"


__all__ = ["OperatorHandle", "KernelCache", "FALLTHROUGH"]
