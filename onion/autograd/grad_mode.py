"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

``no_grad`` only flips a thread-local flag the autograd kernels read;
``inference_mode`` changes the keyset (every Autograd key excluded,
ADInplaceOrView dropped from include) so those layers are really skipped.
All are context managers and decorators (generators included: ``mode_decorator``),
restore on exceptions, per thread.
"""
from __future__ import annotations

from ..core.tls import INFERENCE_EXCLUDE, INFERENCE_REMOVE_INCLUDE, set_state, state
from .mode_decorator import DecoratorContextManager, NoParamDecoratorContextManager


def is_grad_enabled() -> bool:
    return state().grad_enabled


def is_inference_mode_enabled() -> bool:
    return state().inference_mode


class _FixedGradMode(NoParamDecoratorContextManager):
    """Grad mode set to ``_value`` inside; usable bare (``@no_grad``) or called (``@no_grad()``)."""

    _value = False

    def __enter__(self):
        st = state()
        self.prev = st.grad_enabled
        set_state(st.with_grad(self._value))

    def __exit__(self, *exc):
        set_state(state().with_grad(self.prev))
        return False


class no_grad(_FixedGradMode):
    _value = False


class enable_grad(_FixedGradMode):
    _value = True


class set_grad_enabled(DecoratorContextManager):
    """Sets the mode at construction (like PyTorch) and restores it on ``__exit__``."""

    def __init__(self, mode: bool):
        st = state()
        self.prev = st.grad_enabled
        self.mode = bool(mode)
        set_state(st.with_grad(self.mode))

    def __call__(self, fn):
        set_state(state().with_grad(self.prev))     # used as a decorator: the mode applies inside calls only
        return super().__call__(fn)

    def __enter__(self):
        set_state(state().with_grad(self.mode))
        return None

    def __exit__(self, *exc):
        set_state(state().with_grad(self.prev))
        return False

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(DecoratorContextManager):
    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        st = state()
        self.prev = (st.include, st.exclude, st.grad_enabled, st.inference_mode)
        if self.mode:
            set_state(st.replace(include=st.include & ~INFERENCE_REMOVE_INCLUDE,
                                 exclude=st.exclude | INFERENCE_EXCLUDE, grad_enabled=False, inference_mode=True))
        else:                                # as c10::InferenceMode(false): grad mode on
            set_state(st.replace(include=st.include | INFERENCE_REMOVE_INCLUDE,
                                 exclude=st.exclude & ~INFERENCE_EXCLUDE, grad_enabled=True, inference_mode=False))

    def __exit__(self, *exc):
        inc, exc_, grad, inf = self.prev
        set_state(state().replace(include=inc, exclude=exc_, grad_enabled=grad, inference_mode=inf))
        return False

    def clone(self):
        return self.__class__(self.mode)
