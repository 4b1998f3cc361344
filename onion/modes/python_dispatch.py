"""``TorchDispatchMode``: Python code that sees every operator call, via the Python key.

Pushing a mode adds ``Python | PythonTLSSnapshot`` to the thread's include set;
the Python key's fallback pops the innermost mode, calls its
``__torch_dispatch__`` (so operators called inside run below it) and pushes it
back, exceptions included.
"""
from __future__ import annotations

from ..core.dispatch_key import AFTER_PYTHON, K, bit
from ..core.tls import tls
from ..dispatch.library import Library

PYTHON_KEYS = bit(K.Python) | bit(K.PythonTLSSnapshot)


def _set_include(on: bool) -> None:
    tls.include = (tls.include | PYTHON_KEYS) if on else (tls.include & ~PYTHON_KEYS)


def _push_mode(mode) -> None:
    tls.mode_stack.append(mode)
    _set_include(True)


def _pop_mode():
    if not tls.mode_stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = tls.mode_stack.pop()
    _set_include(bool(tls.mode_stack))
    return mode


def _get_current_dispatch_mode():
    return tls.mode_stack[-1] if tls.mode_stack else None


def _len_torch_dispatch_stack() -> int:
    return len(tls.mode_stack)


class TorchDispatchMode:
    """Subclass and override ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        if tls.mode_stack and tls.mode_stack[-1] is self:
            _pop_mode()
        else:  # exited out of order: remove wherever it is
            tls.mode_stack.remove(self)
            _set_include(bool(tls.mode_stack))
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _python_fallback(op, ks, values):
    """The boxed kernel at the Python key: hand the call to the innermost mode."""
    if not tls.mode_stack:  # the key was set without a mode: nothing to do here
        return op._handle.redispatch(ks & AFTER_PYTHON, *values)
    mode = _pop_mode()
    try:
        args, kwargs = op._unnormalize(values)
        types = tuple({type(v) for v in values if hasattr(v, "_impl")})
        return mode.__torch_dispatch__(op, types, args, kwargs)
    finally:
        _push_mode(mode)


def register_python_fallback() -> Library:
    lib = Library("_", "IMPL")
    lib._fallback_internal(K.Python, _python_fallback, "registered at onion/modes/python_dispatch.py")
    return lib
