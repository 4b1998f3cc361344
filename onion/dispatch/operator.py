"""``OperatorHandle``: one operator overload's schema, registrations and table.

Calls look up a keyset in a dict cache first; on a miss the table is consulted
(skipping fallthrough keys) and the answer cached.  Any registration change
recomputes the table and clears both caches.
"""
from __future__ import annotations

from ..core.dispatch_key import RUNTIME_KEYS, K
from ..core.tls import tls
from .dispatch_table import FALLTHROUGH, KernelRegistration, compute_table

_NAMES = {int(k): k.name for k in RUNTIME_KEYS}


class OperatorHandle:
    """The dispatcher's record of one overload (``aten::add.Tensor``)."""

    def __init__(self, dispatcher, schema, debug: str):
        self.dispatcher = dispatcher
        self.schema = schema
        self.name = schema.name                      # "aten::add"
        self.overload_name = schema.overload_name    # "Tensor"
        self.qualified_name = self.name + ("." + self.overload_name if self.overload_name else "")
        self.debug = debug
        self.kernels: dict = {}                      # key -> [KernelRegistration, ...] newest last
        self.table: list = [None] * len(RUNTIME_KEYS)
        self.skip_mask = 0
        self._cache: dict = {}                       # keyset -> kernel, for calls
        self._rcache: dict = {}                      # keyset -> kernel, for redispatches
        self.tags: tuple = ()
        self.opoverload = None                       # set by onion.dispatch.ops
        args = schema.arguments
        self.tensor_positions = tuple(i for i, a in enumerate(args) if a.type.is_tensor_like)
        self.num_args = len(args)
        self.recompute()

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
        newest = {k: regs[-1] for k, regs in self.kernels.items()}
        self.table, self.skip_mask = compute_table(newest, self.dispatcher.fallbacks, self._adapt_fallback)
        self._cache.clear()
        self._rcache.clear()

    def _adapt_fallback(self, reg: KernelRegistration):
        fb = reg.fn
        op = self

        def boxed_fallback(ks, *args):
            return fb(op.opoverload, ks, args)
        return boxed_fallback

    # --- lookup -----------------------------------------------------------------
    def lookup(self, ks: int, redispatch: bool = False):
        """Kernel for a keyset (the cache-miss path); raises if there is none."""
        eff = ks & ~self.skip_mask
        key = eff.bit_length() - 1
        entry = self.table[key] if key >= 0 else None
        if entry is None:
            raise NotImplementedError(self._missing_message(key))
        fn = entry.fn
        level = self.dispatcher.trace_level
        if level:
            from .trace import traced_kernel  # late: only when tracing
            fn = traced_kernel(self, fn, key, entry, ks, redispatch, level)
        else:
            (self._rcache if redispatch else self._cache)[ks] = fn
        return fn

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
        return (ks | tls.include) & tls.mask

    def call(self, *args):
        """Dispatch normalized positional arguments (all of the schema's)."""
        ks = self.keyset_of(args)
        fn = self._cache.get(ks) or self.lookup(ks)
        return fn(ks, *args)

    def redispatch(self, ks: int, *args):
        fn = self._rcache.get(ks) or self.lookup(ks, True)
        return fn(ks, *args)

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


__all__ = ["OperatorHandle", "FALLTHROUGH"]
