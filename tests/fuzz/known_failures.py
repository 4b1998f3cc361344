"""Bad calls where onion knowingly differs from PyTorch, each with its reason.

Keys are case ids as the fuzzer prints them (``add(T(3, 3), 'abc')``), where ``*``
stands for any text.  The list is strict: tests/fuzz/test_fuzz_bad_inputs.py
fails for an entry none of whose calls fails any more, or one that matches a call
that now passes (narrow it or drop it), so the list only shrinks.
"""
from __future__ import annotations

KNOWN_FAILURES: dict[str, str] = {}
KNOWN_FAILURES.update({
    "rot90(T(3, 3), dims=None)": "onion's argument parser takes None for a defaulted non-optional int[] (rot90's "
                                 "dims=[0,1]) as the default; PyTorch's refuses it (TypeError)",
    "T(3, 3).rot90(dims=None)": "the same as rot90(T(3, 3), dims=None)",
})
KNOWN_FAILURES.update({
    "*count_nonzero(*dim=-2**63*)": "as below, for the int below int64's range",
    "*count_nonzero(*dim=2**6*)": "count_nonzero's int[] overload is tried first and onion's argument parser "
                                  "refuses the int beyond int64 there (TypeError); PyTorch's falls through to the "
                                  "int? overload, which raises ValueError",
})
_OVERLOAD_OVERFLOW = ("an int beyond int64 for movedim's int overload: PyTorch's parser raises its overflow "
                      "ValueError on that overload; onion's tries the int[] overload next and reports TypeError")
KNOWN_FAILURES.update({
    **{f"{pre}{name}({args})": _OVERLOAD_OVERFLOW for pre, self_ in (("", "T(3, 3), "), ("T(3, 3).", ""))
       for name in ("movedim", "moveaxis") for args in [f"{self_}{v}, 1" for v in ("2**63", "2**64", "-2**63+")]
       + [f"{self_}1, {v}" for v in ("2**63", "2**64", "-2**63+")]},
    "T(3, 3).unflatten(0, None)": ("PyTorch's Tensor.unflatten is Python code that reads an empty or None sizes as "
                                   "'sizes must be non-empty'; onion's method is the binding, whose parser refuses "
                                   "None for int[] first"),
})


# Calls whose integer arguments Hypothesis draws (any size, any sign) are not fixed calls, so they are
# matched by family here ("name(*") and not held to the strict check above.
KNOWN_DRAWN: dict[str, str] = {}
