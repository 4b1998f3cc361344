"""The dispatcher introspection PyTorch exposes from C++ as ``torch._C._dispatch_*``, with the same names.

Users reach it as ``onion._C`` (the public module re-exports it); it lives
here, in the bindings layer, because it is Python glue over core and dispatch.
"""
from __future__ import annotations

from ..core.dispatch_key import DispatchKey, DispatchKeySet
from ..core.tls import tls, state as _tls_state
from ..dispatch.dispatcher import dispatcher
from ..dispatch.schema import FunctionSchema, parse_schema  # noqa: F401


def _dispatch_key_set(t) -> DispatchKeySet:
    return DispatchKeySet(t._impl.keyset)


_dispatch_keys = _dispatch_key_set


def _dispatch_tls_local_include_set() -> DispatchKeySet:
    return DispatchKeySet(_tls_state().include)


def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet(_tls_state().exclude)


def _dispatch_tls_set_dispatch_key_excluded(key, excluded: bool) -> None:
    b = 1 << int(key)
    tls.set_exclude(_tls_state().exclude | b if excluded else _tls_state().exclude & ~b)


def _dispatch_tls_set_dispatch_key_included(key, included: bool) -> None:
    b = 1 << int(key)
    tls.include = _tls_state().include | b if included else _tls_state().include & ~b


def _find(name: str):
    qname = name if "::" in name else f"aten::{name}"
    h = dispatcher.find(qname)
    if h is None:
        h = dispatcher.find(qname + "") or next(iter(dispatcher.overloads_of(qname)), None)
    if h is None:
        raise RuntimeError(f"operator {qname} does not exist")
    return h


def _dispatch_dump(name: str) -> str:
    """Schema, then one line per registered kernel (key, where, fallthrough or not)."""
    return _find(name).dump()


def _dispatch_dump_table(name: str) -> str:
    """What each runtime key resolves to, and why."""
    return _find(name).dump_table()


def _dispatch_has_kernel_for_dispatch_key(name: str, key) -> bool:
    k = DispatchKey[key] if isinstance(key, str) else key
    return _find(name).has_kernel_for(k)


def _set_dispatch_trace(level: int, stream=None) -> None:
    """Turn ONION_SHOW_DISPATCH_TRACE on or off at run time (1: calls; 2: with reasons)."""
    dispatcher.set_trace(level, stream)


__all__ = ["DispatchKey", "DispatchKeySet", "FunctionSchema", "parse_schema", "_dispatch_key_set",
           "_dispatch_tls_local_include_set", "_dispatch_tls_local_exclude_set", "_dispatch_dump"]
