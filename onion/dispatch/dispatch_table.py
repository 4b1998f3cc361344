"""Computing an operator's dispatch table from its registrations.

Precedence for a runtime key, as PyTorch's OperatorEntry: a direct kernel;
CompositeExplicitAutogradNonFunctional then CompositeExplicitAutograd for
backend keys; CompositeImplicitAutograd for backend keys and for autograd keys
whose backend has no kernel of its own; the ``Autograd`` alias; the key's
boxed backend fallback; else nothing (a clear error at call time).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.dispatch_key import (AUTOGRAD_KEYS, BACKEND_KEYS, BACKEND_OF_AUTOGRAD,
                                 RUNTIME_KEYS, K)


class _Fallthrough:
    """Marker kernel: skip this key and go on to the next one."""

    def __repr__(self):
        return "fallthrough_kernel"

    def __call__(self, *args, **kwargs):  # pragma: no cover - never run
        raise RuntimeError("fallthrough kernel called directly")


FALLTHROUGH = _Fallthrough()


@dataclass
class KernelRegistration:
    """One registered kernel: ``fn(ks, *args)`` (or FALLTHROUGH) plus where it came from."""

    key: K
    fn: object
    debug: str
    boxed: bool = False
    owner: object = None

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is FALLTHROUGH


@dataclass
class TableEntry:
    """The kernel a runtime key resolves to, and why (for traces and dumps)."""

    fn: object
    reason: str
    registration: KernelRegistration | None = None

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is FALLTHROUGH


_BACKEND_SET = frozenset(BACKEND_KEYS)
_AUTOGRAD_SET = frozenset(AUTOGRAD_KEYS)


def compute_entry(key: K, kernels: dict, fallbacks: dict, adapt_fallback) -> TableEntry | None:
    """The entry for one runtime key; ``kernels`` maps a key to its newest registration."""
    reg = kernels.get(key)
    if reg is not None:
        return TableEntry(reg.fn, f"kernel registered for {key.name}", reg)
    if key in _BACKEND_SET:
        for alias in (K.CompositeExplicitAutogradNonFunctional, K.CompositeExplicitAutograd):
            reg = kernels.get(alias)
            if reg is not None:
                return TableEntry(reg.fn, f"{alias.name} kernel (alias covering {key.name})", reg)
    if key in _BACKEND_SET or key in _AUTOGRAD_SET:
        reg = kernels.get(K.CompositeImplicitAutograd)
        if reg is not None:
            use = True
            if key in _AUTOGRAD_SET:
                backend = BACKEND_OF_AUTOGRAD.get(key)
                has_own = (backend is not None and backend in kernels) or K.CompositeExplicitAutograd in kernels
                use = not has_own
            if use:
                return TableEntry(reg.fn, f"CompositeImplicitAutograd kernel (alias covering {key.name})", reg)
    if key in _AUTOGRAD_SET:
        reg = kernels.get(K.Autograd)
        if reg is not None:
            return TableEntry(reg.fn, f"Autograd kernel (alias covering {key.name})", reg)
    fb = fallbacks.get(key)
    if fb is not None:
        fn = fb.fn if fb.fn is FALLTHROUGH else adapt_fallback(fb)
        return TableEntry(fn, f"backend fallback for {key.name}", fb)
    return None


def compute_table(kernels: dict, fallbacks: dict, adapt_fallback) -> tuple[list, int]:
    """The whole table (one entry per runtime key) and the mask of fallthrough keys."""
    table = []
    skip = 0
    for key in RUNTIME_KEYS:
        entry = compute_entry(key, kernels, fallbacks, adapt_fallback)
        table.append(entry)
        if entry is not None and entry.is_fallthrough:
            skip |= 1 << int(key)
    return table, skip
