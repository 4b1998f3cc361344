"""``Library``: the one way kernels get registered, by codegen and by users alike.

Kinds follow ``torch.library``: ``DEF`` owns a namespace and defines operators,
``FRAGMENT`` adds definitions to a namespace, ``IMPL`` only registers kernels
and fallbacks.  Every registration is remembered so ``_destroy`` can undo it.
"""
from __future__ import annotations

import os
import sys
import warnings
import weakref

from ..core.dispatch_key import ALIAS_KEYS, NUM_RUNTIME_KEYS, DispatchKey, DispatchKeySet
from .dispatch_table import FALLTHROUGH, KernelRegistration
from .dispatcher import dispatcher
from .schema import parse_schema

fallthrough_kernel = FALLTHROUGH
_DEF_NAMESPACES: dict[str, object] = {}    # namespace -> the registrations of the DEF library that owns it
# operator name ("ns::op" or "ns::op.overload") -> (fake implementation, the registering library's record): what
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
    """A key kernels can be registered for: a runtime key or an alias key (PyTorch's parseDispatchKey)."""
    k = key if isinstance(key, DispatchKey) else DispatchKey.__members__.get(key)
    if k is None or not (int(k) < NUM_RUNTIME_KEYS or k in ALIAS_KEYS):
        raise RuntimeError(f"could not parse dispatch key: {key}")
    return k


_RESERVED_NAMESPACES = ("prim",)
_ALIAS_ANALYSIS = {"": "FROM_SCHEMA", "FROM_SCHEMA": "FROM_SCHEMA", "CONSERVATIVE": "CONSERVATIVE"}
_override_warned = False     # PyTorch warns once per process about a kernel overriding another


class _Registrations:
    """What one ``Library`` registered, kept apart from the Library object so that a finalizer can undo it
    when the last reference to the Library goes (the dispatcher refers to this, never to the Library)."""

    __slots__ = ("ns", "debug", "ops", "kernels", "fallbacks", "fakes", "__weakref__")

    def __init__(self, ns: str, debug: str):
        self.ns = ns
        self.debug = debug
        self.ops: list = []
        self.kernels: list = []     # (handle, KernelRegistration)
        self.fallbacks: list = []
        self.fakes: list = []       # qualified names whose fake implementation this library registered

    def undo(self) -> None:
        for name in self.fakes:
            if FAKE_IMPLS.get(name, (None, None))[1] is self:
                del FAKE_IMPLS[name]
        for handle, reg in reversed(self.kernels):
            handle.deregister(reg)
        for reg in reversed(self.fallbacks):
            dispatcher.deregister_fallback(reg)
        for handle in reversed(self.ops):
            dispatcher.undefine(handle)
        self.fakes.clear()
        self.kernels.clear()
        self.fallbacks.clear()
        self.ops.clear()
        if _DEF_NAMESPACES.get(self.ns) is self:
            del _DEF_NAMESPACES[self.ns]


class Library:
    """A block of registrations for one namespace, as ``torch.library.Library``: everything it registered is
    undone by ``_destroy()`` or when the object is garbage collected."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "", *, _stacklevel: int = 1, _debug: str = ""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if not isinstance(ns, str) or not ns.isidentifier():
            raise ValueError(f"Invalid namespace {ns!r}: a namespace is a Python identifier (letters, digits, '_')")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        debug = _debug or _caller_debug(1 + _stacklevel)
        if kind == "DEF" and ns in _DEF_NAMESPACES:
            raise RuntimeError(
                f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all "
                f"of your definitions in a single TORCH_LIBRARY block. If you were trying to specify "
                f"implementations, consider using TORCH_LIBRARY_IMPL (Library(ns, 'IMPL')). "
                f"Previous registration of TORCH_LIBRARY was {_DEF_NAMESPACES[ns].debug}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._debug = debug
        self._state = _Registrations(ns, debug)
        if kind == "DEF":
            _DEF_NAMESPACES[ns] = self._state
        self._finalizer = weakref.finalize(self, self._state.undo)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    # the registration lists (read by tests and by the ops listing)
    @property
    def _ops(self) -> list:
        return self._state.ops

    @property
    def _kernels(self) -> list:
        return self._state.kernels

    @property
    def _fallbacks(self) -> list:
        return self._state.fallbacks

    def _check_alive(self) -> None:
        if not self._finalizer.alive:
            raise AssertionError("Library object has been destroyed")

    # --- define -------------------------------------------------------------------
    def define(self, schema, alias_analysis: str = "", *, tags=(), _debug: str | None = None,
               _c_api: bool = False) -> str:
        """Define an operator from its schema; returns its name (with the overload, without the namespace).
        ``PURE_FUNCTION`` is refused here as by ``torch.library`` (the C++-level API, ``_c_api``, takes it)."""
        self._check_alive()
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{schema}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  '
                               f"All def()s should be placed in the (unique) TORCH_LIBRARY block for their "
                               f"namespace.  (Error occurred while processing TORCH_LIBRARY_IMPL block at "
                               f"{self._debug[len('registered at '):]})")
        if alias_analysis not in _ALIAS_ANALYSIS and not (_c_api and alias_analysis == "PURE_FUNCTION"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        s = parse_schema(schema) if isinstance(schema, str) else schema
        if "::" in s.name:
            if s.name.split("::")[0] != self.ns:
                raise RuntimeError(f"Explicitly provided namespace ({s.name.split('::')[0]}) in schema string "
                                   f"does not match namespace of enclosing library ({self.ns})")
        else:
            s = s.with_namespace(self.ns)
        tags = (tags,) if not isinstance(tags, (tuple, list)) else tuple(tags)
        handle = dispatcher.define(s, _debug or self._debug, tags=tags)
        handle.alias_analysis = _ALIAS_ANALYSIS.get(alias_analysis, alias_analysis)
        self._state.ops.append(handle)
        return s.name.split("::")[-1] + ("." + s.overload_name if s.overload_name else "")

    def _declare(self, schema_text: str, tags: tuple, source: str):
        """Define an operator of native_functions.yaml from generated code: codegen has parsed and checked
        its schema, so the text is kept and parsed on first use (parsing ~1,000 schemas at every import
        would cost about a third of it); ``source`` is its YAML file:line.  Returns the handle."""
        handle = dispatcher.define(f"{self.ns}::{schema_text}", _caller_debug(), tags=tags)
        handle.source = source
        self._state.ops.append(handle)
        return handle

    # --- impl ---------------------------------------------------------------------
    def _resolve(self, op_name, what: str = "impl"):
        """The dispatcher entry for ``op_name``: a defined operator, or one waiting for its definition."""
        if type(op_name) is str:            # what generated registrations pass ("add.Tensor")
            name = op_name
        elif hasattr(op_name, "_handle"):
            return op_name._handle
        else:
            name = str(op_name)
        if "::" in name:
            ns = name.split("::")[0]
            if ns != self.ns:
                raise RuntimeError(
                    f'{what}("{name}", ...): Explicitly provided namespace ({ns}) in operator name does not match '
                    f"namespace of enclosing TORCH_LIBRARY block ({self.ns}).  Move this definition to the "
                    f"TORCH_LIBRARY block corresponding to this namespace (and consider deleting the namespace "
                    f"from your schema string.)  (Error occurred while processing TORCH_LIBRARY block at "
                    f"{self._debug[len('registered at '):]})")
        else:
            name = f"{self.ns}::{name}"
        return dispatcher.find_or_register_name(name)

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = False) -> None:
        """Register a Python kernel ``fn(*args, **kwargs)`` for ``op_name`` under a key (the operator may be
        defined later); a kernel already there for that key is overridden, with a warning (the first time in
        the process, as PyTorch's); ``allow_override`` is accepted as in torch.library."""
        self._check_alive()
        key = parse_key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        if fn is not FALLTHROUGH and not callable(fn):
            raise TypeError(f"Library.impl: the kernel for {op_name} must be callable, got {type(fn).__name__}")
        handle = self._resolve(op_name)
        if key is DispatchKey.Meta and handle.has_kernel_for(DispatchKey.CompositeImplicitAutograd):
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator "
                f"'{op_name if isinstance(op_name, str) else handle.qualified_name}', because "
                f"it has a CompositeImplicitAutograd kernel in core. Instead we should let the operator decompose, "
                f"and ensure that we have meta kernels for the base ops that it decomposes into.")
        debug = self._debug
        if fn is FALLTHROUGH:
            reg = KernelRegistration(key, FALLTHROUGH, debug, True, owner=self._state)
        else:
            def adapt(h, _fn=fn):
                return _adapt_user_kernel(h, _fn, with_keyset)
            reg = KernelRegistration(key, adapt(handle) if handle.has_schema else _not_defined_yet, debug, True,
                                     owner=self._state, adapt=adapt)
        if handle.kernels.get(key):     # PyTorch 2.13 warns once per process, allow_override or not
            _warn_override(handle, key, handle.kernels[key][-1].debug, debug)
        self._add(handle, reg)

    def impl_kernel(self, op_name, kernel, dispatch_key: str = "") -> None:
        """Register a kernel in the generated calling convention, ``kernel(keyset, *arguments)``
        with every schema argument positional (what codegen emits, as ``m.impl`` in RegisterCPU.cpp)."""
        key = parse_key(dispatch_key or self.dispatch_key)
        self._add(self._resolve(op_name), KernelRegistration(key, kernel, _caller_debug(), owner=self._state))

    def _impl_internal(self, handle, key: DispatchKey, kernel, debug: str) -> None:
        """Like ``impl_kernel`` for a handle in hand, with the debug text given."""
        self._add(handle, KernelRegistration(key, kernel, debug, owner=self._state))

    def _add(self, handle, reg) -> None:
        handle.register(reg)
        self._state.kernels.append((handle, reg))

    # --- fallback -----------------------------------------------------------------
    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """A boxed kernel for every operator at ``dispatch_key``: ``fn(op, [keyset,] *args, **kwargs)``."""
        self._check_alive()
        if self.ns != "_":
            raise RuntimeError(f'Fallback can only be registered using library fragment on the global namespace "_" '
                               f"but it is {self.ns}")
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
        self._fallback_internal(key, kernel, self._debug)

    def _fallback_internal(self, key: DispatchKey, kernel, debug: str) -> None:
        """Internal boxed fallbacks take ``(op, ks, values)`` with ``values`` normalized."""
        reg = KernelRegistration(key, kernel, debug, boxed=True, owner=self._state)
        dispatcher.register_fallback(reg)
        self._state.fallbacks.append(reg)

    def _register_fake(self, op_name, fn, _stacklevel: int = 1, *, allow_override: bool = True) -> None:
        """Register ``fn(*args, **kwargs)`` as the operator's fake implementation (FakeTensorMode runs it,
        under the mode, instead of the Meta kernel); removed again when this library is destroyed."""
        self._check_alive()
        handle = self._resolve(op_name, "register_fake")
        if not callable(fn):
            raise TypeError(f"register_fake: the fake implementation of {handle.qualified_name} must be callable, "
                            f"got {type(fn).__name__}")
        name = handle.qualified_name
        if name in FAKE_IMPLS and not allow_override:
            raise RuntimeError(f"register_fake(...): the operator {name} already has a fake impl registered")
        FAKE_IMPLS[name] = (fn, self._state)
        self._state.fakes.append(name)

    # --- teardown -----------------------------------------------------------------
    def _destroy(self) -> None:
        """Undo every registration of this library now (the finalizer would, at garbage collection)."""
        self._finalizer()


def _not_defined_yet(ks, *args):    # pragma: no cover - an operator without a schema is never called
    raise RuntimeError("this operator has not been defined yet")


def _warn_override(handle, key, previous: str, new: str) -> None:
    global _override_warned
    if _override_warned:
        return
    _override_warned = True
    schema = handle.schema if handle.has_schema else handle.qualified_name
    warnings.warn(
        f"Warning only once for all operators,  other operators may also be overridden.\n"
        f"  Overriding a previously registered kernel for the same operator and the same dispatch key\n"
        f"  operator: {schema}\n    {handle.debug}\n  dispatch key: {key.name}\n"
        f"  previous kernel: {previous}\n       new kernel: {new}", UserWarning, stacklevel=4)


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
