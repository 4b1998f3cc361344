"""Thread-local dispatch state: include/exclude keysets, grad mode, mode stack.

Every thread starts from the defaults (``threading.local`` runs ``__init__``
once per thread).  Guards are context managers that restore the previous
value on exit, exceptions included.
"""
from __future__ import annotations

import threading

from .dispatch_key import (AUTOCAST_MASK, AUTOGRAD_MASK, K, bit)

DEFAULT_INCLUDE = bit(K.BackendSelect) | bit(K.ADInplaceOrView)
DEFAULT_EXCLUDE = AUTOCAST_MASK


class DispatchTLS(threading.local):
    """Per-thread state read on every call; ``mask`` caches ``~exclude``."""

    def __init__(self):
        self.include = DEFAULT_INCLUDE
        self.exclude = DEFAULT_EXCLUDE
        self.mask = ~DEFAULT_EXCLUDE
        self.grad_enabled = True
        self.inference_mode = False
        self.mode_stack = []

    def set_include(self, ks: int) -> None:
        self.include = ks

    def set_exclude(self, ks: int) -> None:
        self.exclude = ks
        self.mask = ~ks


tls = DispatchTLS()


class IncludeExcludeGuard:
    """Adds keys to include and/or exclude for the duration of a ``with``."""

    __slots__ = ("add_include", "remove_include", "add_exclude", "remove_exclude", "_saved")

    def __init__(self, add_include=0, remove_include=0, add_exclude=0, remove_exclude=0):
        self.add_include = add_include
        self.remove_include = remove_include
        self.add_exclude = add_exclude
        self.remove_exclude = remove_exclude

    def __enter__(self):
        self._saved = (tls.include, tls.exclude)
        tls.include = (tls.include | self.add_include) & ~self.remove_include
        tls.set_exclude((tls.exclude | self.add_exclude) & ~self.remove_exclude)
        return self

    def __exit__(self, *exc):
        inc, exc_ = self._saved
        tls.include = inc
        tls.set_exclude(exc_)
        return False


def ExcludeDispatchKeyGuard(keyset: int) -> IncludeExcludeGuard:
    return IncludeExcludeGuard(add_exclude=int(keyset))


def IncludeDispatchKeyGuard(keyset: int) -> IncludeExcludeGuard:
    return IncludeExcludeGuard(add_include=int(keyset))


INFERENCE_EXCLUDE = AUTOGRAD_MASK
INFERENCE_REMOVE_INCLUDE = bit(K.ADInplaceOrView)
