"""The generated fast path for Scalar arguments given as Python numbers (``t.clamp(min=0)``).

The path passes plain numbers (a float, an int within int64) straight to the operator and leaves
everything else to the parser.  Each case runs in both libraries: same result (values, dtype) or the
same exception type; a TorchDispatchMode-style recorder checks that the overload the fast path picks
is the one PyTorch's parser picks.
"""
from __future__ import annotations

import pytest

from conftest import check_same, onion, torch  # (torch: a stand-in without PyTorch)

pytestmark = pytest.mark.oracle


def _x(L, dtype="float32"):
    return L.tensor([[-2.5, 0.0, 1.5], [3.0, -0.5, 7.0]], dtype=getattr(L, dtype))


CASES = {
    "clamp(min=0)": lambda L: _x(L).clamp(min=0),
    "clamp(max=1)": lambda L: _x(L).clamp(max=1),
    "clamp(0, 1)": lambda L: _x(L).clamp(0, 1),
    "clamp(0, max=2.5)": lambda L: _x(L).clamp(0, max=2.5),
    "clamp(min=-1, max=1) int": lambda L: _x(L, "int64").clamp(min=-1, max=1),
    "clamp(min=0.5) on int": lambda L: _x(L, "int32").clamp(min=0.5),
    "clamp_(min=0)": lambda L: _x(L).clamp_(min=0),
    "clip(max=0)": lambda L: _x(L).clip(max=0),
    "function clamp(x, min=0)": lambda L: L.clamp(_x(L), min=0),
    "function clamp(x, 1, 2)": lambda L: L.clamp(_x(L), 1, 2),
    "eq(1.5)": lambda L: _x(L).eq(1.5),
    "lt(other=0)": lambda L: _x(L).lt(other=0),
    "pow(2)": lambda L: _x(L).pow(2),
    "pow(exponent=0.5)": lambda L: _x(L).abs().pow(exponent=0.5),
    "fill_(3)": lambda L: _x(L).fill_(3),
    "clamp_min(0)": lambda L: _x(L).clamp_min(0),
    # what the fast path leaves to the parser: its overload or its error
    "clamp() no bound": lambda L: _x(L).clamp(),
    "clamp(min=None, max=None)": lambda L: _x(L).clamp(min=None, max=None),
    "clamp(min=True)": lambda L: _x(L).clamp(min=True),
    "clamp(min=2**62)": lambda L: _x(L).clamp(min=2 ** 62),
    "clamp(min=tensor)": lambda L: _x(L).clamp(min=L.tensor(0.0)),
    "clamp(0, min=1) twice": lambda L: _x(L).clamp(0, min=1),
    "clamp(0, 1, 2) too many": lambda L: _x(L).clamp(0, 1, 2),
    "clamp(lo=0) unknown": lambda L: _x(L).clamp(lo=0),
    "clamp(min='0')": lambda L: _x(L).clamp(min="0"),
    "eq(None)": lambda L: _x(L).eq(None),
    "pow(1j)": lambda L: _x(L, "complex64").pow(1j),
    "clamp_min(None)": lambda L: _x(L).clamp_min(None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_torch(name):
    fn = CASES[name]
    check_same(lambda: fn(onion), lambda: fn(torch))


OVERLOADS = {
    "clamp(min=0)": lambda L: _x(L).clamp(min=0),
    "clamp(0, 1)": lambda L: _x(L).clamp(0, 1),
    "clamp(min=tensor)": lambda L: _x(L).clamp(min=L.tensor(0.0)),
    "eq(2)": lambda L: _x(L).eq(2),
    "eq(tensor)": lambda L: _x(L).eq(_x(L)),
    "pow(2)": lambda L: _x(L).pow(2),
}


def _recorded(lib, fn):
    """The operator overloads a call reaches, as a dispatch mode sees them."""
    seen = []
    if lib is onion:
        from onion.modes.python_dispatch import TorchDispatchMode as Mode
    else:
        from torch.utils._python_dispatch import TorchDispatchMode as Mode

    class Record(Mode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Record():
        fn(lib)
    return [s for s in seen if not s.startswith(("aten.lift_fresh", "aten._to_copy"))]


@pytest.mark.parametrize("name", list(OVERLOADS))
def test_same_overload_as_torch(name):
    fn = OVERLOADS[name]
    assert _recorded(onion, fn)[-1:] == _recorded(torch, fn)[-1:]
