"""Grad modes as decorators, compared with PyTorch: functions, generator functions, classes, exceptions.

Each scenario is written once against a module ``m`` and run on onion and on
torch; it records ``(grad enabled, inference mode)`` at the points that
matter, so the two records must be equal.  A generator decorated with a mode
must see the mode inside each of its steps and its caller must see its own
mode between the steps (PyTorch's ``torch.utils._contextlib``), also through
``send``, ``throw`` and ``close``.
"""
from __future__ import annotations

import warnings

import pytest

from conftest import onion, torch

pytestmark = pytest.mark.oracle


def state(m):
    return (m.is_grad_enabled(), m.is_inference_mode_enabled())


# the decorators under test, written for a module m: (name, m -> decorator)
DECORATORS = {
    "no_grad()": lambda m: m.no_grad(),
    "no_grad": lambda m: m.no_grad,
    "enable_grad()": lambda m: m.enable_grad(),
    "enable_grad": lambda m: m.enable_grad,
    "inference_mode()": lambda m: m.inference_mode(),
    "inference_mode": lambda m: m.inference_mode,
    "inference_mode(False)": lambda m: m.inference_mode(False),
    "set_grad_enabled(False)": lambda m: m.set_grad_enabled(False),
    "set_grad_enabled(True)": lambda m: m.set_grad_enabled(True),
}

# the caller's surroundings: (name, m -> context manager the decorated code is called from)
OUTSIDE = {
    "grad": lambda m: m.enable_grad(),
    "no_grad": lambda m: m.no_grad(),
    "inference": lambda m: m.inference_mode(),
}


def both(scenario, *args):
    return scenario(onion, *args), scenario(torch, *args)


def _function(m, deco, outside):
    seen = []
    decorate = DECORATORS[deco](m)

    @decorate
    def f(x):
        seen.append(("inside", state(m)))
        y = x * 2
        seen.append(("result", y.requires_grad))
        return y

    with OUTSIDE[outside](m):
        x = m.ones(2, requires_grad=True)
        f(x)
        seen.append(("after", state(m)))
        f(x)
    seen.append(("end", state(m)))
    return seen


@pytest.mark.parametrize("outside", OUTSIDE)
@pytest.mark.parametrize("deco", DECORATORS)
def test_decorated_function(deco, outside):
    o, t = both(_function, deco, outside)
    assert o == t


def _generator(m, deco, outside):
    """The mode inside each step of the generator, and the caller's between the steps."""
    seen = []
    decorate = DECORATORS[deco](m)

    @decorate
    def gen(x, n):
        for i in range(n):
            seen.append(("step", i, state(m), (x * 2).requires_grad))
            yield i
        seen.append(("last", state(m)))
        return "done"

    with OUTSIDE[outside](m):
        x = m.ones(2, requires_grad=True)
        g = gen(x, 3)
        seen.append(("made", state(m)))        # making the generator runs none of its body
        for i in g:
            seen.append(("caller", i, state(m), (x * 3).requires_grad))
        seen.append(("return", list(gen(x, 0)), state(m)))
    seen.append(("end", state(m)))
    return seen


@pytest.mark.parametrize("outside", OUTSIDE)
@pytest.mark.parametrize("deco", DECORATORS)
def test_decorated_generator_has_the_mode_inside_each_step_only(deco, outside):
    o, t = both(_generator, deco, outside)
    assert o == t


def _generator_protocol(m, deco):
    """send, throw (handled and not), close (with a finally) and the generator's return value."""
    seen = []
    decorate = DECORATORS[deco](m)

    @decorate
    def echo():
        got = None
        try:
            while True:
                try:
                    got = yield ("echo", got, state(m))
                except KeyError as e:
                    seen.append(("handled", str(e), state(m)))
                    got = "after-throw"
        finally:
            seen.append(("finally", state(m)))

    @decorate
    def returns():
        yield 1
        return "value"

    with m.enable_grad():
        g = echo()
        seen.append(next(g))
        seen.append(g.send("a"))
        seen.append(("caller", state(m)))
        seen.append(g.throw(KeyError("k")))
        seen.append(g.send("b"))
        g.close()
        seen.append(("closed", state(m)))

        g = echo()
        next(g)
        with pytest.raises(ValueError):
            g.throw(ValueError("not handled"))     # the generator does not catch it: it comes out
        seen.append(("raised", state(m)))

        r = returns()
        next(r)
        with pytest.raises(StopIteration) as stop:
            next(r)
        seen.append(("returned", stop.value.value, state(m)))
    return seen


@pytest.mark.parametrize("deco", ["no_grad()", "inference_mode()", "set_grad_enabled(False)", "enable_grad"])
def test_decorated_generator_send_throw_close(deco):
    o, t = both(_generator_protocol, deco)
    assert o == t


def _exception_restores(m, deco, where):
    decorate = DECORATORS[deco](m)

    @decorate
    def fails():
        raise ValueError("boom")

    @decorate
    def gen_fails():
        yield 1
        raise ValueError("boom")

    seen = []
    for outside in OUTSIDE.values():
        with outside(m):
            before = state(m)
            with pytest.raises(ValueError):
                if where == "function":
                    fails()
                else:
                    list(gen_fails())
            seen.append((before, state(m)))
    return seen


@pytest.mark.parametrize("where", ["function", "generator"])
@pytest.mark.parametrize("deco", DECORATORS)
def test_exception_restores_the_callers_mode(deco, where):
    o, t = both(_exception_restores, deco, where)
    assert o == t
    assert all(before == after for before, after in o)


def _class(m, deco):
    """Decorating a class: PyTorch warns (FutureWarning) and runs only the constructor in the mode."""
    decorate = DECORATORS[deco](m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        class Made:
            def __init__(self):
                self.at_init = state(m)

            def method(self):
                return state(m)

        made_cls = decorate(Made)
    with m.enable_grad():
        obj = made_cls()
        return (isinstance(obj, Made), obj.at_init, obj.method(), [w.category.__name__ for w in caught])


@pytest.mark.parametrize("deco", ["no_grad()", "no_grad", "inference_mode()", "set_grad_enabled(False)"])
def test_decorating_a_class_warns_and_wraps_the_constructor(deco):
    o, t = both(_class, deco)
    assert o == t
    assert o[-1] == ["FutureWarning"]


def _wrapped_metadata(m):
    def documented(a, b=2):
        """Adds."""
        return a + b

    out = []
    for deco in DECORATORS.values():
        w = deco(m)(documented)
        out.append((w.__name__, w.__doc__, w.__wrapped__ is documented, w(1)))
    return out


def test_decorators_keep_name_doc_and_result():
    o, t = both(_wrapped_metadata)
    assert o == t


def _set_grad_enabled_as_decorator_does_not_leak(m):
    with m.enable_grad():
        deco = m.set_grad_enabled(False)         # constructing it sets the mode at once (PyTorch's quirk) ...
        at_construction = state(m)

        @deco
        def f():
            return state(m)
        after_decorating = state(m)              # ... and decorating puts the previous mode back
        return at_construction, after_decorating, f(), state(m)


def test_set_grad_enabled_used_as_decorator():
    o, t = both(_set_grad_enabled_as_decorator_does_not_leak)
    assert o == t


def _recursive(m):
    """Decorated functions calling each other: each restores its caller's mode (PyTorch's recursive test)."""
    seen = []

    @m.enable_grad()
    def on(depth):
        seen.append(("on", state(m)))
        if depth:
            off(depth - 1)
            seen.append(("on again", state(m)))

    @m.no_grad()
    def off(depth):
        seen.append(("off", state(m)))
        if depth:
            on(depth - 1)
            seen.append(("off again", state(m)))

    for outside in OUTSIDE.values():
        with outside(m):
            on(5)
            seen.append(("caller", state(m)))
    return seen


def test_decorated_functions_calling_each_other():
    o, t = both(_recursive)
    assert o == t


def _generator_raises_while_handling(m, deco):
    """A generator that answers a thrown exception with another one, and one that sees GeneratorExit."""
    decorate = DECORATORS[deco](m)
    seen = []

    class Unrecoverable(Exception):
        pass

    class Secondary(Exception):
        pass

    @decorate
    def critical():
        while True:
            try:
                yield state(m)
            except Unrecoverable:
                seen.append(("handling", state(m)))
                raise Secondary from None

    @decorate
    def sees_exit():
        while True:
            try:
                yield state(m)
            except GeneratorExit:
                seen.append(("exit", state(m)))
                raise

    for outside in OUTSIDE.values():
        with outside(m):
            g = critical()
            seen.append(next(g))
            with pytest.raises(Secondary):
                g.throw(Unrecoverable)
            seen.append(("after", state(m)))
            g = sees_exit()
            seen.append(next(g))
            del g                                   # closing by garbage: the generator still sees its mode
            seen.append(("after close", state(m)))
    return seen


@pytest.mark.parametrize("deco", ["no_grad()", "enable_grad()", "inference_mode()"])
def test_decorated_generator_exceptions_inside_handlers(deco):
    o, t = both(_generator_raises_while_handling, deco)
    assert o == t
    assert ("exit", o[0]) in o
