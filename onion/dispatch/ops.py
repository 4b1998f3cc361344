"""``onion.ops``: operators as Python objects, named as PyTorch names them.

``onion.ops.aten.add`` is an ``OpOverloadPacket`` (resolves an overload from
the arguments); ``onion.ops.aten.add.Tensor`` is an ``OpOverload`` (one schema).
"""
from __future__ import annotations

import functools
import types

from ..core.dispatch_key import DispatchKeySet
from .arguments import ArgumentSpec
from . import selective_build as _selective
from .dispatcher import dispatcher
from ..core.dispatch_key import DispatchKey


class OpOverload:
    """One overload: callable with (args, kwargs) like PyTorch's ``OpOverload``."""

    def __init__(self, handle, packet):
        self._handle = handle
        self._overloadpacket = packet
        ns, _, base = handle.name.partition("::")
        self.namespace = ns
        self._opname = base
        self._overloadname = handle.overload_name or "default"
        self.__name__ = f"{base}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self.__module__ = f"onion.ops.{ns}"

    # the schema and its argument spec are built on first use: most operators are only ever called
    # through their generated entries, and parsing every schema would cost import time
    @functools.cached_property
    def _schema(self):
        return self._handle.schema

    @functools.cached_property
    def _spec(self):
        return ArgumentSpec(self._handle.schema)

    # --- calling ----------------------------------------------------------------
    # ``self_`` is positional-only so that ``self=`` can name the schema's argument, as in PyTorch
    def __call__(self_, /, *args, **kwargs):
        return self_._handle.call(*self_._spec.normalize(args, kwargs))

    def redispatch(self_, /, keyset, *args, **kwargs):
        ks = keyset.repr_int if isinstance(keyset, DispatchKeySet) else int(keyset)
        return self_._handle.redispatch(ks, *self_._spec.normalize(args, kwargs))

    def _call_normalized(self, values):
        return self._handle.call(*values)

    def _unnormalize(self, values):
        return self._spec.unnormalize(values)

    # --- introspection ------------------------------------------------------------
    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def tags(self):
        return self._handle.tags

    def name(self) -> str:
        return self._handle.qualified_name

    def has_kernel_for_dispatch_key(self, key) -> bool:
        k = DispatchKey[key] if isinstance(key, str) else key
        e = self._handle.table[int(k)] if int(k) < len(self._handle.table) else None
        return self._handle.has_kernel_for(k) or (e is not None and not e.is_fallthrough
                                                  and e.reason != "backend fallback")

    def __repr__(self):
        return f"<OpOverload(op='{self.namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class OpOverloadPacket:
    """All overloads of one name; calling it picks the first whose schema binds."""

    def __init__(self, ns: str, name: str):
        self._ns = ns
        self._name = name
        self._overloads: dict[str, OpOverload] = {}
        self.__name__ = name
        self.__qualname__ = name

    def _add(self, ov: OpOverload):
        self._overloads[ov._overloadname] = ov

    def _remove(self, ov: OpOverload):
        self._overloads.pop(ov._overloadname, None)

    def overloads(self) -> list:
        return list(self._overloads)

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        try:
            return self._overloads[item]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{item}'") from None

    def __call__(self_, /, *args, **kwargs):
        errors = []
        for ov in self_._overloads.values():
            try:
                values = ov._spec.normalize(args, kwargs)
            except TypeError as e:
                errors.append(str(e))
                continue
            return ov._handle.call(*values)
        sigs = "\n  ".join(str(ov._schema) for ov in self_._overloads.values())
        raise TypeError(f"{self_}() received arguments that match none of its overloads. Got "
                        f"({', '.join(type(a).__name__ for a in args)}"
                        f"{', ' if args and kwargs else ''}{', '.join(f'{k}={type(v).__name__}' for k, v in kwargs.items())})."
                        f" Accepted schemas:\n  {sigs}")

    @property
    def default(self):
        return self.__getattr__("default")

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self):
        return f"{self._ns}.{self._name}"


class _OpNamespace(types.ModuleType):
    """``onion.ops.<ns>``: packets appear as operators are defined."""

    def __init__(self, ns: str):
        super().__init__(f"onion.ops.{ns}")
        self.name = ns

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        if self.name == "aten" and item in _selective.STATE["omitted_bases"]:
            raise _selective.OperatorNotSelectedError(_selective.message(item))
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{item}'")


class _Ops(types.ModuleType):
    def __init__(self):
        super().__init__("onion.ops")

    def __getattr__(self, ns):
        if ns.startswith("__"):
            raise AttributeError(ns)
        space = _OpNamespace(ns)
        setattr(self, ns, space)
        return space


ops = _Ops()


def _on_operator(handle, removed: bool = False) -> None:
    ns, _, base = handle.name.partition("::")
    space = ops.__dict__.get(ns)          # not getattr: a namespace may look like a dunder (``__test1__``)
    if space is None:
        space = _OpNamespace(ns)
        setattr(ops, ns, space)
    packet = space.__dict__.get(base)
    if removed:
        if packet is not None and handle.opoverload is not None:
            packet._remove(handle.opoverload)
            if not packet._overloads:
                delattr(space, base)
        return
    if packet is None:
        packet = OpOverloadPacket(ns, base)
        setattr(space, base, packet)
    ov = OpOverload(handle, packet)
    handle.opoverload = ov
    packet._add(ov)


dispatcher.on_new_operator.append(_on_operator)
