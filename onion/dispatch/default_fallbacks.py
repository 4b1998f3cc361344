"""The backend fallbacks every operator starts with, as PyTorch registers them.

Keys that have nothing to do for an operator without its own kernel fall
through; the Autograd keys redispatch below autograd (an operator with no
autograd kernel, e.g. a custom op, still runs).
"""
from __future__ import annotations

from ..core.dispatch_key import AFTER_AUTOGRAD, AUTOGRAD_KEYS, K
from .dispatch_table import FALLTHROUGH
from .fallback_specialize import specialized_fallback
from .library import Library

FALLTHROUGH_KEYS = (K.BackendSelect, K.ADInplaceOrView, K.AutocastCPU, K.AutocastCUDA, K.PythonTLSSnapshot,
                    K.Functionalize, K.FuncTorchBatched, K.PreDispatch)


def _autograd_fallback(op, ks, values):
    return op._handle.redispatch(ks & AFTER_AUTOGRAD, *values)


# in an operator's table, the fallback written out for it (only the call that records goes to the boxed one)
_autograd_fallback.specialize = lambda handle: specialized_fallback(handle, _autograd_fallback, ["warn"])


def register_default_fallbacks() -> Library:
    lib = Library("_", "IMPL")
    for key in FALLTHROUGH_KEYS:
        lib._fallback_internal(key, FALLTHROUGH, "registered at onion/dispatch/default_fallbacks.py (fallthrough)")
    for key in AUTOGRAD_KEYS:
        lib._fallback_internal(key, _autograd_fallback,
                               "registered at onion/dispatch/default_fallbacks.py (autograd: redispatch)")
    return lib
