"""The dispatcher introspection PyTorch exposes from C++ as ``torch._C._dispatch_*``, with the same names.

Users reach it as ``onion._C`` (the public module re-exports it); it lives
here, in the bindings layer, because it is Python glue over core and dispatch.
"""
from __future__ import annotations

from ..autograd.autograd_fallback import _get_autograd_fallback_mode, _set_autograd_fallback_mode  # noqa: F401
from ..core.dispatch_key import (ALIAS_COVERS, AUTOGRADOTHER_BACKENDS, FULL, DispatchKey, DispatchKeySet,
                                 backend_mask_of_autograd, mask_below)
from ..core.tls import tls, state as _tls_state
from ..dispatch.dispatcher import dispatcher
from ..dispatch.schema import FunctionSchema, parse_schema  # noqa: F401
from .dispatch_library import _DispatchModule, _dispatch_library  # noqa: F401


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


def _parse_name(name: str) -> str:
    """``ns::op.overload`` as the dispatcher keys it (PyTorch's parseName: no namespace means ``aten``)."""
    return name if "::" in name else f"aten::{name}"


def _find(name: str):
    """The dispatcher's entry for ``name``: a defined operator, or kernels waiting for a definition."""
    return dispatcher.find_any(_parse_name(name))


def _find_or_raise(name: str):
    h = _find(name)
    if h is None:
        raise RuntimeError(f"operator {name} does not exist")
    return h


def _dispatch_dump(name: str) -> str:
    """PyTorch's dump of one operator: its schema, then every registration; ``''`` for an unknown name."""
    h = _find(name)
    return h.dump() if h is not None else ""


def _dispatch_dump_table(name: str) -> str:
    """What each dispatch key resolves to, and why; ``''`` for an unknown name."""
    h = _find(name)
    return h.dump_table() if h is not None else ""


def _dispatch_has_kernel(name: str) -> bool:
    """Whether the dispatcher knows ``name`` (defined, or with kernels registered)."""
    return _find(name) is not None


def _dispatch_has_kernel_for_dispatch_key(name: str, key) -> bool:
    """A kernel registered for exactly this key (not one an alias key or a fallback gives it)."""
    return _find_or_raise(name).has_kernel_for(_key(key))


def _dispatch_has_kernel_for_any_dispatch_key(name: str, keyset) -> bool:
    h = _find_or_raise(name)
    ks = keyset.repr_int if isinstance(keyset, DispatchKeySet) else int(keyset)
    return any(e is not None and not e.is_fallthrough and e.reason != "backend fallback"
               for k, e in enumerate(h.table) if ks >> k & 1)


def _dispatch_has_computed_kernel_for_dispatch_key(name: str, key) -> bool:
    h = _find_or_raise(name)
    k = _key(key)
    e = h._undefined if k is DispatchKey.Undefined else (h.table[int(k)] if int(k) < len(h.table) else None)
    return e is not None


def _dispatch_kernel_for_dispatch_key_is_fallthrough(name: str, key) -> bool:
    h = _find_or_raise(name)
    e = h.table[int(_key(key))]
    return e is not None and e.is_fallthrough


def _dispatch_has_backend_fallback(key) -> bool:
    return _key(key) in dispatcher.fallbacks


def _dispatch_find_dangling_impls() -> list:
    """Dumps of the operators that have kernels but no definition."""
    return [h.dump() for h in dispatcher.undefined_ops.values()]


def _dispatch_get_all_op_names() -> list:
    return sorted(dispatcher.ops)


def _dispatch_get_registrations_for_dispatch_key(key="") -> list:
    """Names of the operators with a kernel registered for ``key`` (every operator for ``""``)."""
    if not key:
        return sorted(dispatcher.ops)
    k = _key(key)
    return sorted(name for name, h in dispatcher.ops.items() if k in h.kernels)


def _dispatch_print_registrations_for_dispatch_key(key="") -> None:
    for name in _dispatch_get_registrations_for_dispatch_key(key):
        print(name)


class _DispatchOperatorHandle:
    """What ``_dispatch_find_schema_or_throw`` returns (PyTorch's ``_DispatchOperatorHandle``)."""

    def __init__(self, handle):
        self._handle = handle

    def schema(self):
        return self._handle.schema

    def debug(self) -> str:
        return self._handle.debug

    def __repr__(self):
        return f"_DispatchOperatorHandle({self._handle.qualified_name})"


def _dispatch_find_schema_or_throw(name: str, overload: str = "") -> _DispatchOperatorHandle:
    qname = _parse_name(name) + (f".{overload}" if overload else "")
    h = dispatcher.find(qname)
    if h is None:
        raise RuntimeError(f"Could not find schema for {qname}")
    return _DispatchOperatorHandle(h)


def _dispatch_call_boxed(handle, *args, **kwargs):
    """Call an operator through its handle, with PyTorch's argument conventions."""
    h = handle._handle if isinstance(handle, _DispatchOperatorHandle) else handle
    return h.opoverload(*args, **kwargs)


def _dispatch_check_invariants(name: str) -> None:
    """The cached kernels agree with a table computed afresh (PyTorch's checkInvariants)."""
    h = _find(name)
    if h is None:
        return
    cached = h.table
    h.recompute()
    fresh = h.table
    for key, (a, b) in enumerate(zip(cached, fresh)):
        if (a is None) != (b is None) or (a is not None and a.registration is not b.registration):
            raise RuntimeError(f"{h.qualified_name}: the cached dispatch table disagrees with its registrations "
                               f"at key {key}")


def _dispatch_check_all_invariants() -> None:
    for name in list(dispatcher.ops):
        _dispatch_check_invariants(name)


def _dispatch_key_name(key) -> str:
    return _key(key).name


def _dispatch_key_parse(name) -> DispatchKey:
    return _key(name)


def _dispatch_is_alias_key(key) -> bool:
    return _key(key) in ALIAS_COVERS


def _dispatch_is_included_in_alias(key, alias) -> bool:
    return bool(ALIAS_COVERS.get(_key(alias), 0) >> int(_key(key)) & 1)


def _dispatch_keyset_full() -> DispatchKeySet:
    return DispatchKeySet(FULL)


def _dispatch_keyset_full_after(key) -> DispatchKeySet:
    return DispatchKeySet(mask_below(_key(key)))


def _dispatch_get_backend_keyset_from_autograd(key) -> DispatchKeySet:
    return DispatchKeySet(backend_mask_of_autograd(_key(key)))


# a keyset value, as PyTorch's
_dispatch_autogradother_backends = DispatchKeySet(AUTOGRADOTHER_BACKENDS)


def _key(key) -> DispatchKey:
    if isinstance(key, DispatchKey):
        return key
    if isinstance(key, str):
        k = DispatchKey.__members__.get(key)
        if k is None:
            raise RuntimeError(f"could not parse dispatch key: {key}")
        return k
    return DispatchKey(int(key))


def _set_dispatch_trace(level: int, stream=None) -> None:
    """Turn ONION_SHOW_DISPATCH_TRACE on or off at run time (1: calls; 2: with reasons)."""
    dispatcher.set_trace(level, stream)


__all__ = ["DispatchKey", "DispatchKeySet", "FunctionSchema", "parse_schema", "_dispatch_key_set",
           "_dispatch_tls_local_include_set", "_dispatch_tls_local_exclude_set", "_dispatch_dump"]
