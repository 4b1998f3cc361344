"""The backend fallbacks every operator starts with, as PyTorch registers them.

Keys that have nothing to do for an operator without its own kernel fall
through; Meta has a fallback that says the operator has no Meta kernel; the
Autograd keys' fallback lives with autograd (onion/autograd/autograd_fallback.py).
"""
from __future__ import annotations

from ..core.dispatch_key import K
from .dispatch_table import FALLTHROUGH
from .library import Library

FALLTHROUGH_KEYS = (K.BackendSelect, K.ADInplaceOrView, K.AutocastCPU, K.AutocastMTIA, K.AutocastMAIA,
                    K.AutocastXPU, K.AutocastMPS, K.AutocastCUDA, K.Functionalize,
                    K.FuncTorchBatched, K.FuncTorchVmapMode, K.VmapMode, K.PreDispatch)
_HERE = "registered at onion/dispatch/default_fallbacks.py"


def _meta_fallback(op, ks, values):
    raise NotImplementedError(
        f"{op._handle.qualified_name.partition('.')[0]}: attempted to run this operator with Meta tensors, but there "
        f"was no fake impl or Meta kernel registered. Register a Meta kernel (Library.impl(..., 'Meta')) or a fake "
        f"implementation (onion.library.register_fake) for it.")


def register_default_fallbacks() -> Library:
    lib = Library("_", "IMPL")
    for key in FALLTHROUGH_KEYS:
        lib._fallback_internal(key, FALLTHROUGH, _HERE)
    lib._fallback_internal(K.Meta, _meta_fallback, _HERE)
    return lib
