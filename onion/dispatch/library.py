"""``Library``: the one way kernels get registered, by codegen and by users alike.

Kinds follow ``torch.library``: ``DEF`` owns a namespace and defines operators,
``FRAGMENT`` adds definitions to a namespace, ``IMPL`` only registers kernels
and fallbacks.  Every registration is remembered so ``_destroy`` can undo it.
"""
from __future__ import annotations

import os
import sys

from ..core.dispatch_key import ALIAS_KEYS, NUM_RUNTIME_KEYS, DispatchKey, DispatchKeySet
from .dispatch_table import FALLTHROUGH, KernelRegistration
from .dispatcher import dispatcher
from .schema import parse_schema

fallthrough_kernel = FALLTHROUGH
_DEF_NAMESPACES: dict[str, object] = {}
# operator name ("ns::op" or "ns::op.overload") -> (fake implementation, owning Library or None): what
# FakeTensorMode runs instead of the operator's Meta kernel (``onion.library.register_fake``)
FAKE_IMPLS: dict = {}


_ROOT_PREFIX = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _caller_debug(depth: int = 2) -> str:
    """``registered at file:line`` of the registering code (onion's own files relative to the checkout,
    as PyTorch names ``aten/src/ATen/RegisterCPU_0.cpp``)."""
    f = sys._getframe(depth)
    path = f.f_code.co_filename
    if path.startswith(_ROOT_PREFIX):
        path = path[len(_ROOT_PREFIX):]
    return f"registered at {path}:{f.f_lineno}"


def parse_key(key) -> DispatchKey:
    if isinstance(key, DispatchKey):
        return key
    try:
        return DispatchKey[key]
    except KeyError:
        raise ValueError(f"Unknown dispatch key '{key}'. Known keys: "
                         + ", ".join(k.name for k in DispatchKey if int(k) < NUM_RUNTIME_KEYS or k in ALIAS_KEYS)) from None


class Library:
    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind!r}; expected 'DEF', 'IMPL' or 'FRAGMENT'")
        if not ns or not ns.replace("_", "a").isalnum():
            raise ValueError(f"Invalid namespace {ns!r}")
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all "
                    f"of your definitions in a single TORCH_LIBRARY block. If you were trying to specify "
                    f"implementations, consider using TORCH_LIBRARY_IMPL (Library(ns, 'IMPL')). "
                    f"Previous registration of TORCH_LIBRARY was {_DEF_NAMESPACES[ns]._debug}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._debug = _caller_debug()
        self._ops: list = []
        self._kernels: list = []     # (handle, KernelRegistration)
        self._fallbacks: list = []
        self._impl_keys: set = set()
        if kind == "DEF":
            _DEF_NAMESPACES[ns] = self

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    # --- define -------------------------------------------------------------------
    def define(self, schema, alias_analysis: str = "", *, tags=(), _debug: str | None = None) -> str:
        if self.kind == "IMPL":
            raise RuntimeError(f"define() is not allowed on an IMPL library (namespace {self.ns}); "
                               f"use Library('{self.ns}', 'DEF') or 'FRAGMENT'")
        s = parse_schema(schema) if isinstance(schema, str) else schema
        if "::" in s.name:
            if s.name.split("::")[0] != self.ns:
                raise RuntimeError(f"Explicitly provided namespace ({s.name.split('::')[0]}) in schema string "
                                   f"does not match namespace of enclosing library ({self.ns})")
        else:
            s = s.with_namespace(self.ns)
        handle = dispatcher.define(s, _debug or _caller_debug(), tags=tags)
        self._ops.append(handle)
        return s.name.split("::")[-1] + ("." + s.overload_name if s.overload_name else "")

    def _declare(self, schema_text: str, tags: tuple, source: str):
        """Define an operator of native_functions.yaml from generated code: codegen has parsed and checked
        its schema, so the text is kept and parsed on first use (parsing ~1,000 schemas at every import
        would cost about a third of it); ``source`` is its YAML file:line.  Returns the handle."""
        handle = dispatcher.define(f"{self.ns}::{schema_text}", _caller_debug(), tags=tags)
        handle.source = source
        self._ops.append(handle)
        return handle

    # --- impl ---------------------------------------------------------------------
    def _resolve(self, op_name):
        if type(op_name) is str:            # what generated registrations pass ("add.Tensor")
            name = op_name
        elif hasattr(op_name, "_handle"):
            return op_name._handle
        else:
            name = str(op_name)
        if "::" not in name:
            name = f"{self.ns}::{name}"
        handle = dispatcher.find(name)
        if handle is None:
            raise RuntimeError(f"Tried to register a kernel for operator '{name}', but that operator has not "
                               f"been defined. Call Library.define first (or check the name and overload).")
        return handle

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """Register a Python kernel ``fn(*args, **kwargs)`` for ``op_name`` under a key."""
        key = parse_key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        handle = self._resolve(op_name)
        if fn is FALLTHROUGH:
            kernel = FALLTHROUGH
        else:
            if not callable(fn):
                raise TypeError(f"Library.impl: kernel for {handle.qualified_name} must be callable, "
                                f"got {type(fn).__name__}")
            kernel = _adapt_user_kernel(handle, fn, with_keyset)
        self._register(handle, key, kernel, _caller_debug(), boxed=False)

    def impl_kernel(self, op_name, kernel, dispatch_key: str = "") -> None:
        """Register a kernel in the generated calling convention, ``kernel(keyset, *arguments)``
        with every schema argument positional (what codegen emits, as ``m.impl`` in RegisterCPU.cpp)."""
        key = parse_key(dispatch_key or self.dispatch_key)
        self._register(self._resolve(op_name), key, kernel, _caller_debug(), boxed=False)

    def _impl_internal(self, handle, key: DispatchKey, kernel, debug: str) -> None:
        """Like ``impl_kernel`` for a handle in hand, with the debug text given."""
        self._register(handle, key, kernel, debug, boxed=False)

    def _register(self, handle, key, kernel, debug, boxed):
        if (handle.qualified_name, key) in self._impl_keys:
            raise RuntimeError(f"This is not allowed since there's already a kernel registered from this "
                               f"library overriding {handle.qualified_name}'s behavior for {key.name} dispatch key "
                               f"and {self.ns} namespace.")
        reg = KernelRegistration(key, kernel, debug, boxed, owner=self)
        handle.register(reg)
        self._kernels.append((handle, reg))
        self._impl_keys.add((handle.qualified_name, key))

    # --- fallback -----------------------------------------------------------------
    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """A boxed kernel for every operator at ``dispatch_key``: ``fn(op, [keyset,] *args, **kwargs)``."""
        key = parse_key(dispatch_key or self.dispatch_key)
        if int(key) >= NUM_RUNTIME_KEYS:
            raise ValueError(f"fallback: {key.name} is an alias key; a fallback needs a runtime key")
        if fn is FALLTHROUGH:
            kernel = FALLTHROUGH
        else:
            def kernel(op, ks, values, _fn=fn):
                args, kwargs = op._unnormalize(values)
                if with_keyset:
                    return _fn(op, DispatchKeySet(ks & ~op._handle.skip_mask), *args, **kwargs)
                return _fn(op, *args, **kwargs)
        self._fallback_internal(key, kernel, _caller_debug())

    def _fallback_internal(self, key: DispatchKey, kernel, debug: str) -> None:
        """Internal boxed fallbacks take ``(op, ks, values)`` with ``values`` normalized."""
        reg = KernelRegistration(key, kernel, debug, boxed=True, owner=self)
        dispatcher.register_fallback(reg)
        self._fallbacks.append(reg)

    def _register_fake(self, op_name, fn, _stacklevel: int = 1, *, allow_override: bool = True) -> None:
        """Register ``fn(*args, **kwargs)`` as the operator's fake implementation (FakeTensorMode runs it,
        under the mode, instead of the Meta kernel); removed again when this library is destroyed."""
        handle = self._resolve(op_name)
        if not callable(fn):
            raise TypeError(f"register_fake: the fake implementation of {handle.qualified_name} must be callable, "
                            f"got {type(fn).__name__}")
        name = handle.qualified_name
        if name in FAKE_IMPLS and not allow_override:
            raise RuntimeError(f"register_fake(...): the operator {name} already has a fake impl registered")
        FAKE_IMPLS[name] = (fn, self)

    # --- teardown -----------------------------------------------------------------
    def _destroy(self) -> None:
        for name in [n for n, (_, owner) in FAKE_IMPLS.items() if owner is self]:
            del FAKE_IMPLS[name]
        for handle, reg in reversed(self._kernels):
            handle.deregister(reg)
        for reg in reversed(self._fallbacks):
            dispatcher.deregister_fallback(reg)
        for handle in reversed(self._ops):
            dispatcher.undefine(handle)
        self._kernels.clear()
        self._fallbacks.clear()
        self._ops.clear()
        self._impl_keys.clear()
        if _DEF_NAMESPACES.get(self.ns) is self:
            del _DEF_NAMESPACES[self.ns]


def _adapt_user_kernel(handle, fn, with_keyset: bool):
    """Users' kernels take kwarg-only arguments by keyword; ours take everything positionally."""
    schema = handle.schema
    npos = sum(1 for a in schema.arguments if not a.kwarg_only)
    kw_names = tuple(a.name for a in schema.arguments if a.kwarg_only)
    if with_keyset:
        # the keyset as PyTorch hands it to a kernel: without the operator's fallthrough keys
        if not kw_names:
            return lambda ks, *args: fn(DispatchKeySet(ks & ~handle.skip_mask), *args)
        return lambda ks, *args: fn(DispatchKeySet(ks & ~handle.skip_mask), *args[:npos],
                                    **dict(zip(kw_names, args[npos:])))
    if not kw_names:
        return lambda ks, *args: fn(*args)
    return lambda ks, *args: fn(*args[:npos], **dict(zip(kw_names, args[npos:])))
