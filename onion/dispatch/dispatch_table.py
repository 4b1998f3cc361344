"""Computing an operator's dispatch table from its registrations.

Precedence for a runtime key, as PyTorch's OperatorEntry: a direct kernel;
CompositeExplicitAutogradNonFunctional then CompositeExplicitAutograd for
backend keys; CompositeImplicitAutograd for backend keys and for autograd keys
whose backend has no kernel of its own (ambiguous at AutogradOther when a
backend sharing it has one); the ``Autograd`` alias; the key's boxed backend
fallback; else nothing (a clear error at call time).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.dispatch_key import (ALIAS_COVERS, AUTOGRADOTHER_BACKENDS, NUM_RUNTIME_KEYS, RUNTIME_KEYS, K,
                                 backend_mask_of_autograd)


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
    adapt: object = None      # handle -> fn: a user's kernel, adapted again when the operator's schema arrives
    inferred: str = ""        # the schema a typed kernel implies ("(Tensor _0) -> Tensor _0"), checked at define

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is FALLTHROUGH


@dataclass
class TableEntry:
    """The kernel a runtime key resolves to, and why (PyTorch's words: ``kernel``, ``default backend kernel``,
    ``math kernel``, ``autograd kernel``, ``backend fallback``...), for traces and dumps."""

    fn: object
    reason: str
    registration: KernelRegistration | None = None

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is FALLTHROUGH


def _ambiguous_autogradother(ks, *args):
    raise RuntimeError(
        "This operator has a CompositeImplicitAutograd kernel and a kernel for a backend that shares the "
        "AutogradOther key (quantized, sparse, mkldnn, ...). At AutogradOther the dispatcher cannot tell which "
        "one should run, so it runs neither: register a kernel for AutogradOther (or the Autograd alias) that "
        "says how to differentiate it, or run it without autograd (onion.inference_mode()).")


AMBIGUOUS_AUTOGRADOTHER = KernelRegistration(K.AutogradOther, _ambiguous_autogradother, "ambiguous_autogradother")


def _covers(alias: K, key: K) -> bool:
    return key is K.Undefined or bool(ALIAS_COVERS[alias] >> int(key) & 1)


def compute_entry(key: K, kernels: dict, fallbacks: dict, adapt_fallback) -> TableEntry | None:
    """The entry for one runtime key (or ``Undefined``: no tensor to dispatch on), with PyTorch's
    precedence and its names for why (``kernel``, ``math kernel``, ``backend fallback``...); ``kernels``
    maps a key to its newest registration."""
    reg = kernels.get(key)
    if reg is not None:
        return TableEntry(reg.fn, "kernel", reg)
    for alias in (K.CompositeExplicitAutogradNonFunctional, K.CompositeExplicitAutograd):
        reg = kernels.get(alias)
        if reg is not None and _covers(alias, key):
            return TableEntry(reg.fn, "default backend kernel", reg)
    if key is K.Undefined:
        has_backend_kernel = False
    else:
        own = backend_mask_of_autograd(key)
        has_backend_kernel = (K.CompositeExplicitAutograd in kernels
                              or (own and any(int(k) < NUM_RUNTIME_KEYS and own >> int(k) & 1 for k in kernels)))
    reg = kernels.get(K.CompositeImplicitAutogradNestedTensor)
    if reg is not None and _covers(K.CompositeImplicitAutogradNestedTensor, key):
        return TableEntry(reg.fn, "nested kernel", reg)
    reg = kernels.get(K.CompositeImplicitAutograd)
    if reg is not None and _covers(K.CompositeImplicitAutograd, key):
        if key is K.AutogradOther and any(int(k) < NUM_RUNTIME_KEYS and AUTOGRADOTHER_BACKENDS >> int(k) & 1
                                          for k in kernels):
            return TableEntry(AMBIGUOUS_AUTOGRADOTHER.fn, "ambiguous autogradother", AMBIGUOUS_AUTOGRADOTHER)
        if not has_backend_kernel:
            return TableEntry(reg.fn, "math kernel", reg)
    if key is K.Undefined:
        return None
    reg = kernels.get(K.Autograd)
    if reg is not None and _covers(K.Autograd, key):
        return TableEntry(reg.fn, "autograd kernel", reg)
    reg = kernels.get(K.FuncTorchBatchedDecomposition)
    if reg is not None and _covers(K.FuncTorchBatchedDecomposition, key):
        return TableEntry(reg.fn, "batched kernel", reg)
    fb = fallbacks.get(key)
    if fb is not None:
        fn = fb.fn if fb.fn is FALLTHROUGH else adapt_fallback(fb)
        return TableEntry(fn, "backend fallback", fb)
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
