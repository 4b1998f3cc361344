"""Thread-local dispatch state: include/exclude keysets, grad mode, inference mode, mode stack.

The state is one immutable ``DispatchState`` held in a ``contextvars.ContextVar``.  Why not a
``threading.local``: every operator call reads this state two to four times, and an attribute read on
a ``threading.local`` costs about 50 ns more than one on a slotted object, while ``ContextVar.get`` is
about as cheap as a global read.  A new thread starts from an empty context, so from ``DEFAULT``: the
state is per thread, as PyTorch's is.  (It is also per asyncio task, which copies its creator's context:
a ``no_grad`` inside one task does not leak into the others sharing the thread.)

Changing the state means installing a new ``DispatchState``; transitions used on hot paths (the
autograd keys excluded while a recording kernel runs, grad mode on/off) are built once per state and
cached on it.  Hot paths read with ``st = state()``; other code may use the attribute view ``tls``
(``tls.grad_enabled = False``), which installs a changed copy.  Guards are context managers that
restore the previous value on exit, exceptions included.
"""
from __future__ import annotations

import contextvars

from .dispatch_key import AUTOCAST_MASK, AUTOGRAD_MASK, K, bit

DEFAULT_INCLUDE = bit(K.BackendSelect) | bit(K.ADInplaceOrView)
DEFAULT_EXCLUDE = AUTOCAST_MASK


class DispatchState:
    """One immutable snapshot of the per-thread dispatch state; ``mask`` caches ``~exclude``."""

    __slots__ = ("include", "exclude", "mask", "grad_enabled", "inference_mode", "mode_stack", "_memo",
                 "below_autograd")

    def __init__(self, include: int, exclude: int, grad_enabled: bool, inference_mode: bool,
                 mode_stack: tuple = ()):
        self.include = include
        self.exclude = exclude
        self.mask = ~exclude
        self.grad_enabled = bool(grad_enabled)
        self.inference_mode = bool(inference_mode)
        self.mode_stack = mode_stack
        self._memo = {}
        # this state with every Autograd key excluded: what a recording kernel runs the op under (made
        # with the state, so the kernel reads a slot; that state's own is itself)
        below = exclude | AUTOGRAD_MASK
        self.below_autograd = self if below == exclude else \
            make_state(include, below, grad_enabled, inference_mode, mode_stack)

    def replace(self, **changes) -> "DispatchState":
        fields = dict(include=self.include, exclude=self.exclude, grad_enabled=self.grad_enabled,
                      inference_mode=self.inference_mode, mode_stack=self.mode_stack)
        fields.update(changes)
        return make_state(**fields)

    def _cached(self, key, make):
        """A transition of this state, built once: states without modes are interned (``make_state``),
        so their number, and so this cache, stays small."""
        if self.mode_stack:
            return make()
        st = self._memo.get(key)
        if st is None:
            st = self._memo[key] = make()
        return st

    def with_grad(self, enabled: bool) -> "DispatchState":
        enabled = bool(enabled)
        if enabled is self.grad_enabled:
            return self
        return self._cached(("grad", enabled), lambda: self.replace(grad_enabled=enabled))

    def with_exclude(self, exclude: int) -> "DispatchState":
        if exclude == self.exclude:
            return self
        return self._cached(("exclude", exclude), lambda: self.replace(exclude=exclude))

    def excluding(self, keys: int) -> "DispatchState":
        """This state with ``keys`` (a bit set) excluded too: what an Autocast kernel runs its operator under,
        on every call, so it is kept in the memo under the int itself (the other transitions use tuples)."""
        st = self._memo.get(keys)
        if st is None:
            st = self.with_exclude(self.exclude | keys)
            if not self.mode_stack:         # (states under a Python mode are not interned: nothing to keep)
                self._memo[keys] = st
        return st

    def with_include(self, include: int) -> "DispatchState":
        if include == self.include:
            return self
        return self._cached(("include", include), lambda: self.replace(include=include))


_interned: dict = {}


def make_state(include: int, exclude: int, grad_enabled: bool, inference_mode: bool,
               mode_stack: tuple = ()) -> DispatchState:
    """The state with these fields; one object per value while no Python mode is pushed."""
    if mode_stack:
        return DispatchState(include, exclude, grad_enabled, inference_mode, mode_stack)
    key = (include, exclude, bool(grad_enabled), bool(inference_mode))
    st = _interned.get(key)
    if st is None:
        st = _interned[key] = DispatchState(*key)
    return st


DEFAULT = make_state(DEFAULT_INCLUDE, DEFAULT_EXCLUDE, True, False)

_current: contextvars.ContextVar[DispatchState] = contextvars.ContextVar("onion_dispatch_state", default=DEFAULT)
state = _current.get            # the hot-path read: ``st = state()``
set_state = _current.set        # install a new snapshot (returns a token for ``reset_state``)
reset_state = _current.reset


class _StateView:
    """Attribute access to the current state, for code off the hot path: reads the current snapshot,
    and an assignment installs a copy with that field changed."""

    __slots__ = ()

    include = property(lambda self: state().include, lambda self, v: set_state(state().with_include(v)))
    exclude = property(lambda self: state().exclude, lambda self, v: set_state(state().with_exclude(v)))
    mask = property(lambda self: state().mask)
    grad_enabled = property(lambda self: state().grad_enabled, lambda self, v: set_state(state().with_grad(v)))
    inference_mode = property(lambda self: state().inference_mode,
                              lambda self, v: set_state(state().replace(inference_mode=bool(v))))
    mode_stack = property(lambda self: state().mode_stack,
                          lambda self, v: set_state(state().replace(mode_stack=tuple(v))))

    def set_include(self, ks: int) -> None:
        self.include = ks

    def set_exclude(self, ks: int) -> None:
        self.exclude = ks


tls = _StateView()


class IncludeExcludeGuard:
    """Adds keys to include and/or exclude for the duration of a ``with``."""

    __slots__ = ("add_include", "remove_include", "add_exclude", "remove_exclude", "_saved")

    def __init__(self, add_include=0, remove_include=0, add_exclude=0, remove_exclude=0):
        self.add_include = add_include
        self.remove_include = remove_include
        self.add_exclude = add_exclude
        self.remove_exclude = remove_exclude

    def __enter__(self):
        st = state()
        self._saved = (st.include, st.exclude)
        st = st.with_include((st.include | self.add_include) & ~self.remove_include)
        set_state(st.with_exclude((st.exclude | self.add_exclude) & ~self.remove_exclude))
        return self

    def __exit__(self, *exc):
        inc, exc_ = self._saved
        set_state(state().with_include(inc).with_exclude(exc_))
        return False


def ExcludeDispatchKeyGuard(keyset: int) -> IncludeExcludeGuard:
    return IncludeExcludeGuard(add_exclude=int(keyset))


def IncludeDispatchKeyGuard(keyset: int) -> IncludeExcludeGuard:
    return IncludeExcludeGuard(add_include=int(keyset))


INFERENCE_EXCLUDE = AUTOGRAD_MASK
INFERENCE_REMOVE_INCLUDE = bit(K.ADInplaceOrView)
