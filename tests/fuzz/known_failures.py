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


# Calls whose integer arguments Hypothesis draws (any size, any sign) are not fixed calls, so they are
# matched by family here ("name(*") and not held to the strict check above.
KNOWN_DRAWN: dict[str, str] = {}
