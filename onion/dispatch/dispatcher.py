"""The Dispatcher: the registry of operators and of per-key backend fallbacks."""
from __future__ import annotations

import os

from ..core.dispatch_key import K
from .dispatch_table import KernelRegistration
from .operator import OperatorHandle
from .schema import FunctionSchema


def _trace_level_from_env() -> int:
    text = os.environ.get("ONION_SHOW_DISPATCH_TRACE", "0").strip()
    try:
        return int(text)
    except ValueError:
        return 1 if text.lower() in ("true", "yes", "on") else 0


class Dispatcher:
    """Singleton registry: ``ops`` by qualified name, ``fallbacks`` by key."""

    def __init__(self):
        self.ops: dict[str, OperatorHandle] = {}              # defined operators
        self.undefined_ops: dict[str, OperatorHandle] = {}    # kernels registered, no definition (yet)
        self.fallbacks: dict[K, KernelRegistration] = {}
        self._fallback_stack: dict[K, list] = {}
        self.trace_level = _trace_level_from_env()
        self.trace_stream = None
        self.profiler = None           # the recording onion.profiler Recorder: lookups cache wrapped kernels
        self.recorder = None           # onion.utils.record_operators while it records: lookups cache wrapped kernels
        self.on_new_operator = []      # callbacks(handle): the ops namespace listens

    # --- operators --------------------------------------------------------------
    def define(self, schema: FunctionSchema | str, debug: str, tags=()) -> OperatorHandle:
        """``schema`` as text: one codegen already parsed (see ``OperatorHandle``)."""
        if isinstance(schema, str):
            qname = schema[:schema.index("(")]
        else:
            qname = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        if qname in self.ops:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name and overload name multiple "
                f"times. Each overload's schema should only be registered with a single call to def(). "
                f"Duplicate registration: {debug}. Original registration: {self.ops[qname].debug}")
        handle = self.undefined_ops.get(qname)
        if handle is None:
            handle = OperatorHandle(self, schema, debug)
        else:
            handle.set_schema(schema, debug)      # raises, changing nothing, if a kernel's signature disagrees
            del self.undefined_ops[qname]
            handle.recompute()
        handle.tags = tuple(tags)
        self.ops[qname] = handle
        for cb in self.on_new_operator:
            cb(handle)
        return handle

    def undefine(self, handle: OperatorHandle) -> None:
        """Remove the definition; an operator that still has kernels keeps its entry, without a schema."""
        if self.ops.get(handle.qualified_name) is not handle:
            return
        del self.ops[handle.qualified_name]
        for cb in self.on_new_operator:
            cb(handle, removed=True)
        handle.clear_schema()
        if handle.kernels:
            self.undefined_ops[handle.qualified_name] = handle

    def find_or_register_name(self, qualified_name: str) -> OperatorHandle:
        """The entry kernels are registered into: the defined operator, or one waiting for its ``define``."""
        h = self.ops.get(qualified_name)
        if h is None:
            h = self.undefined_ops.get(qualified_name)
            if h is None:
                h = self.undefined_ops[qualified_name] = OperatorHandle(self, None, "", qualified_name)
        return h

    def forget_if_unused(self, handle: OperatorHandle) -> None:
        """An entry without a schema whose last kernel went away disappears (PyTorch's cleanup)."""
        if not handle.has_schema and not handle.kernels:
            self.undefined_ops.pop(handle.qualified_name, None)

    def find(self, qualified_name: str) -> OperatorHandle | None:
        return self.ops.get(qualified_name)

    def find_any(self, qualified_name: str) -> OperatorHandle | None:
        """A defined operator or an entry that has only kernels so far (for dumps)."""
        return self.ops.get(qualified_name) or self.undefined_ops.get(qualified_name)

    def find_or_raise(self, qualified_name: str) -> OperatorHandle:
        h = self.ops.get(qualified_name)
        if h is None:
            raise RuntimeError(f"Could not find schema for {qualified_name}")
        return h

    def overloads_of(self, name: str) -> list:
        """Handles named ``ns::name`` with any overload name."""
        return [h for h in self.ops.values() if h.name == name]

    # --- fallbacks ----------------------------------------------------------------
    def register_fallback(self, reg: KernelRegistration) -> None:
        stack = self._fallback_stack.setdefault(reg.key, [])
        if stack and stack[-1].owner is not None and reg.owner is not None and stack[-1].owner is reg.owner:
            raise RuntimeError(f"Tried to register multiple backend fallbacks for the same dispatch key "
                               f"{reg.key.name}; previous registration {stack[-1].debug}, new registration {reg.debug}")
        stack.append(reg)
        self._refresh_fallback(reg.key)

    def deregister_fallback(self, reg: KernelRegistration) -> None:
        stack = self._fallback_stack.get(reg.key, [])
        if reg in stack:
            stack.remove(reg)
        self._refresh_fallback(reg.key)

    def _refresh_fallback(self, key: K) -> None:
        stack = self._fallback_stack.get(key)
        if stack:
            self.fallbacks[key] = stack[-1]
        else:
            self.fallbacks.pop(key, None)
        for h in self.ops.values():
            h.recompute()
        for h in self.undefined_ops.values():
            h.recompute()

    # --- tracing ------------------------------------------------------------------
    def set_trace(self, level: int, stream=None) -> None:
        self.trace_level = int(level)
        self.trace_stream = stream
        for h in self.ops.values():
            h.dispatch_cache.clear()
            h.redispatch_cache.clear()


dispatcher = Dispatcher()
