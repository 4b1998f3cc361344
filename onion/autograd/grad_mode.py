"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

``no_grad`` only flips a thread-local flag the autograd kernels read;
``inference_mode`` changes the keyset (every Autograd key excluded,
ADInplaceOrView dropped from include) so those layers are really skipped.
All are context managers and decorators (generators included: ``mode_decorator``),
restore on exceptions, per thread.
"""
from __future__ import annotations

from ..core.tls import INFERENCE_EXCLUDE, INFERENCE_REMOVE_INCLUDE, tls
from .mode_decorator import DecoratorContextManager, NoParamDecoratorContextManager


def is_grad_enabled() -> bool:
    return tls.grad_enabled


def is_inference_mode_enabled() -> bool:
    return tls.inference_mode


class _FixedGradMode(NoParamDecoratorContextManager):
    """Grad mode set to ``_value`` inside; usable bare (``@no_grad``) or called (``@no_grad()``)."""

    _value = False

    def __enter__(self):
        self.prev = tls.grad_enabled
        tls.grad_enabled = self._value

    def __exit__(self, *exc):
        tls.grad_enabled = self.prev
        return False


class no_grad(_FixedGradMode):
    _value = False


class enable_grad(_FixedGradMode):
    _value = True


class set_grad_enabled(DecoratorContextManager):
    """Sets the mode at construction (like PyTorch) and restores it on ``__exit__``."""

    def __init__(self, mode: bool):
        self.prev = tls.grad_enabled
        self.mode = bool(mode)
        tls.grad_enabled = self.mode

    def __call__(self, fn):
        tls.grad_enabled = self.prev     # used as a decorator: the mode applies inside calls only
        return super().__call__(fn)

    def __enter__(self):
        tls.grad_enabled = self.mode
        return None

    def __exit__(self, *exc):
        tls.grad_enabled = self.prev
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
        self.prev = (tls.include, tls.exclude, tls.grad_enabled, tls.inference_mode)
        if self.mode:
            tls.include = tls.include & ~INFERENCE_REMOVE_INCLUDE
            tls.set_exclude(tls.exclude | INFERENCE_EXCLUDE)
            tls.grad_enabled = False
            tls.inference_mode = True
        else:
            tls.include = tls.include | INFERENCE_REMOVE_INCLUDE
            tls.set_exclude(tls.exclude & ~INFERENCE_EXCLUDE)
            tls.grad_enabled = True          # as c10::InferenceMode(false): grad mode on
            tls.inference_mode = False

    def __exit__(self, *exc):
        inc, exc_, grad, inf = self.prev
        tls.include = inc
        tls.set_exclude(exc_)
        tls.grad_enabled = grad
        tls.inference_mode = inf
        return False

    def clone(self):
        return self.__class__(self.mode)
