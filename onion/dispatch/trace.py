"""The dispatch trace (``ONION_SHOW_DISPATCH_TRACE``).

Level 1 prints what PyTorch prints; level 2 adds the tensor arguments' keysets,
the thread-local sets and why the kernel was chosen.  Tracing swaps the cached
kernels for wrappers, so the untraced call path pays nothing.
"""
from __future__ import annotations

import sys
import threading

from ..core.dispatch_key import RUNTIME_KEYS, DispatchKeySet, keys_of
from ..core.tls import state as _tls_state

_depth = threading.local()


def _indent() -> str:
    return " " * getattr(_depth, "n", 0)


def traced_kernel(op, fn, key: int, entry, ks: int, redispatch: bool, level: int):
    kind = "redispatch" if redispatch else "call"

    def wrapper(ks_, *args):
        out = sys.stderr if op.dispatcher.trace_stream is None else op.dispatcher.trace_stream
        pad = _indent()
        out.write(f"{pad}[{kind}] op=[{op.qualified_name}], key=[{RUNTIME_KEYS[key].name}]\n")
        if level >= 2:
            for i in op.tensor_positions:
                a = args[i] if i < len(args) else None
                name = op.schema.arguments[i].name
                tensors = a if isinstance(a, (list, tuple)) else [a]
                for t in tensors:
                    if t is not None and hasattr(t, "_impl"):
                        out.write(f"{pad}  arg {name}: {DispatchKeySet(t._impl.keyset)}\n")
            out.write(f"{pad}  tls include: {DispatchKeySet(_tls_state().include)}\n")
            out.write(f"{pad}  tls exclude: {DispatchKeySet(_tls_state().exclude)}\n")
            out.write(f"{pad}  dispatch keyset: {DispatchKeySet(ks_)}\n")
            skipped = [k.name for k in keys_of(ks_ & op.skip_mask) if int(k) > key]
            if skipped:
                out.write(f"{pad}  skipped as fallthrough: {', '.join(skipped)}\n")
            reg = entry.registration
            where = f" ({reg.key.name}, {reg.debug})" if reg is not None else ""
            declared = f", declared at {op.source}" if op.source else ""
            out.write(f"{pad}  chosen: {entry.reason}{where}{declared}\n")
        _depth.n = getattr(_depth, "n", 0) + 1
        try:
            return fn(ks_, *args)
        finally:
            _depth.n -= 1
    return wrapper
