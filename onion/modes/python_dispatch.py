"""``TorchDispatchMode``: Python code that sees every operator call, via the Python key.

Pushing a mode adds ``Python | PythonTLSSnapshot`` to the thread's include set;
the Python key's fallback pops the innermost mode, calls its
``__torch_dispatch__`` (so operators called inside run below it) and pushes it
back, exceptions included.
"""
from __future__ import annotations

from ..core.dispatch_key import K, bit
from ..core.tls import set_state, state, state as _tls_state
from ..dispatch.library import Library

PYTHON_KEYS = bit(K.Python) | bit(K.PythonTLSSnapshot)


def _set_stack(stack: tuple) -> None:
    """Install the thread's mode stack; the Python keys are included exactly while it is non-empty."""
    st = state()
    include = (st.include | PYTHON_KEYS) if stack else (st.include & ~PYTHON_KEYS)
    set_state(st.replace(mode_stack=stack, include=include))


def _push_mode(mode) -> None:
    _set_stack(state().mode_stack + (mode,))


def _pop_mode():
    stack = state().mode_stack
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    _set_stack(stack[:-1])
    return stack[-1]


def _get_current_dispatch_mode():
    return _tls_state().mode_stack[-1] if _tls_state().mode_stack else None


def _len_torch_dispatch_stack() -> int:
    return len(_tls_state().mode_stack)


class TorchDispatchMode:
    """Subclass and override ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        stack = state().mode_stack
        if stack and stack[-1] is self:
            _pop_mode()
        else:  # exited out of order: remove wherever it is
            stack = list(stack)
            stack.remove(self)
            _set_stack(tuple(stack))
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _python_fallback(op, ks, values):
    """The boxed kernel at the Python key: hand the call to the innermost mode."""
    if not _tls_state().mode_stack:  # no mode: the key comes from a subclass tensor
        from .subclasses import dispatch_to_subclasses
        return dispatch_to_subclasses(op, ks, values)
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
