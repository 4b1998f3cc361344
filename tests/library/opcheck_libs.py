"""Operators for the opcheck and custom-operator tests, written once against a library ``L`` (onion or torch).

Every test gets a namespace of its own (``libs`` below: ``opcheck_<test name>``) and the libraries it opens
there are destroyed when it ends, so no operator outlives its test.  ``define`` registers through the
Library-level entry points: ``Library.define``, ``impl`` on a backend key, ``_register_fake``, and an
autograd kernel at the ``Autograd`` key (an ``autograd.Function`` that redispatches below autograd).
"""
from __future__ import annotations

import re

import numpy as np

import onion


def below_autograd(L):
    """The keyset mask a kernel at an Autograd key redispatches with."""
    if L is onion:
        from onion.core.dispatch_key import AFTER_AUTOGRAD
        return AFTER_AUTOGRAD
    return L._C._after_autograd_keyset


class Libs:
    def __init__(self, ns: str):
        self.ns = ns
        self._made: list = []

    def lib(self, L, kind: str = "FRAGMENT", ns: str | None = None):
        lib = L.library.Library(ns or self.ns, kind)
        self._made.append(lib)
        return lib

    def close(self) -> None:
        while self._made:
            self._made.pop()._destroy()


def library_scope(request):
    """The body of each test module's ``libs`` fixture: a ``Libs`` for the test, closed after it."""
    made = Libs("opcheck_" + re.sub(r"[^0-9A-Za-z]+", "_", request.node.name).strip("_"))
    try:
        yield made
    finally:
        made.close()


def overload(L, ns: str, name: str):
    base, _, over = name.partition(".")
    return getattr(getattr(getattr(L.ops, ns), base), over or "default")


def autograd_kernel(L, op, forward_saves, backward):
    """A kernel for the Autograd key: an ``autograd.Function`` around the operator below autograd.
    ``backward(L, saved, *grads)`` returns one gradient per tensor input."""
    after = below_autograd(L)

    def kernel(ks, *args):
        class Fn(L.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs):
                ctx.save_for_backward(*[inputs[i] for i in forward_saves])
                return op.redispatch(ks & after, *inputs)

            @staticmethod
            def backward(ctx, *grads):
                return backward(L, ctx.saved_tensors, *grads)

        return Fn.apply(*args)
    return kernel


def define(L, lib, schema: str, cpu=None, fake=None, *, key: str = "CPU", autograd=None):
    """``lib.define(schema)``, the kernel at ``key``, the fake, and ``autograd = (saved input indices,
    backward)`` at the Autograd key; returns the operator overload."""
    lib.define(schema)
    name = schema.split("(", 1)[0]      # "op.overload" (torch's define returns the name without it)
    if cpu is not None:
        lib.impl(name, cpu, key)
    if fake is not None:
        lib._register_fake(name, fake)
    op = overload(L, lib.ns, name)
    if autograd is not None:
        saves, backward = autograd
        lib.impl(name, autograd_kernel(L, op, saves, backward), "Autograd", with_keyset=True)
    return op


def tensor(L, shape, *, seed: int = 0, dtype: str = "float32", requires_grad: bool = False):
    values = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return L.tensor(values).requires_grad_(requires_grad)


# onion's exception classes that refine one of PyTorch's (named by the class they refine)
_REFINEMENTS = {"MissingFakeImplError"}


def verdicts(results: dict) -> dict:
    """``{test name: "SUCCESS" or the exception's type name}`` (PyTorch's class for onion's refinements)."""
    def name(v):
        return next(c.__name__ for c in type(v).__mro__ if c.__name__ not in _REFINEMENTS)
    return {k: v if v == "SUCCESS" else name(v) for k, v in results.items()}
