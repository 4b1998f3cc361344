"""Binary dunders turn a TypeError into ``NotImplemented`` (PyTorch's ``TypeError_to_NotImplemented_``), so
Python tries the other operand and then says "unsupported operand type(s)": for a string or None operand,
for the bitwise dunders declared in native_functions.yaml, and for a subclass whose ``__torch_dispatch__``
returns NotImplemented everywhere."""
from __future__ import annotations

import pytest

import onion
from conftest import torch

pytestmark = pytest.mark.oracle

DUNDERS = ["__add__", "__sub__", "__mul__", "__truediv__", "__matmul__", "__pow__", "__floordiv__", "__mod__",
           "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__iadd__", "__iand__", "__ior__",
           "__ixor__", "__ilshift__", "__irshift__", "__eq__", "__lt__", "__rsub__", "__rpow__", "__rand__"]


def _results(L):
    a = L.ones(2, dtype=L.int64)
    return [getattr(a, d)("x") is NotImplemented for d in DUNDERS]


def test_a_string_operand_gives_not_implemented():
    assert _results(onion) == _results(torch) == [True] * len(DUNDERS)


def _errors(L):
    class Refuses(L.Tensor):
        @staticmethod
        def __new__(cls, e):
            return L.Tensor._make_wrapper_subclass(cls, e.shape, dtype=e.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    a = Refuses(L.ones(2))
    out = []
    for fn in (lambda: a + a, lambda: a & a, lambda: L.ones(2, dtype=L.int64) ^ "x", lambda: a.__radd__(3),
               lambda: L.Tensor.__radd__(3, L.ones(2))):
        try:
            fn()
            out.append("ok")
        except TypeError as e:
            out.append(str(e).split(" for ")[0] if "unsupported" in str(e) else "TypeError")
    return out


def test_python_reports_the_unsupported_operands():
    assert _errors(onion) == _errors(torch)
