"""Grad modes used as decorators: the mode holds while the decorated code runs, and only then.

A plain function runs inside one ``with``.  A generator function cannot: its
body runs in pieces, one per ``next()``/``send()``/``throw()``/``close()``,
and between two pieces the caller's code runs and must see the caller's mode.
So the generator is driven from a wrapper generator that enters a fresh mode
around each piece and leaves it before handing the yielded value out (the
behaviour of PyTorch's ``torch.utils._contextlib``).  A fresh mode object per
piece, made by ``make_mode``, because a mode remembers the state it replaced.
"""
from __future__ import annotations

import functools
import inspect
import warnings


def _drive_generator_in_mode(make_mode, gen_fn):
    """``gen_fn`` wrapped so that each step of its generators runs inside ``make_mode()``."""

    @functools.wraps(gen_fn)
    def generator_in_mode(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with make_mode():
                item = gen.send(None)
            while True:
                try:
                    sent = yield item
                except GeneratorExit:
                    with make_mode():       # the generator's own cleanup (finally blocks) runs in the mode too
                        gen.close()
                    raise
                except BaseException as exc:    # thrown in by the caller: the generator may handle it
                    with make_mode():
                        item = gen.throw(exc)
                else:
                    with make_mode():
                        item = gen.send(sent)
        except StopIteration as stop:
            return stop.value

    return generator_in_mode


def run_in_mode(make_mode, fn):
    """``fn`` wrapped to run inside ``make_mode()``; generator functions step by step."""
    if inspect.isgeneratorfunction(fn):
        return _drive_generator_in_mode(make_mode, fn)

    @functools.wraps(fn)
    def function_in_mode(*args, **kwargs):
        with make_mode():
            return fn(*args, **kwargs)

    return function_in_mode


class DecoratorContextManager:
    """A grad mode usable as ``with mode():`` and as ``@mode()``; ``clone`` makes the fresh copy each call uses."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            # as PyTorch: still allowed, but only the constructor call runs in the mode, and it warns
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should "
                          "only decorate functions or methods. To preserve the current behavior of class "
                          "decoration, you can directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)
        return run_in_mode(self.clone, fn)

    def clone(self):
        return self.__class__()


class NoParamDecoratorContextManager(DecoratorContextManager):
    """A mode that also decorates without parentheses (``@no_grad`` as well as ``@no_grad()``)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)
