"""Deterministic per-call cost of the dispatch benchmarks: Python opcodes and calls, per case or per function.

    python benchmarks/opcodes.py                 # every per-call case: opcodes and Python calls of one call
    python benchmarks/opcodes.py "a.sum()"       # one case (substring of its name): opcodes per function

Wall-clock ratios move with machine load; these counts do not, so they show whether a change to the call
path removed work even on a busy machine.  (At the C level, ``valgrind --tool=callgrind`` on a loop of N
calls, minus a loop of none, gives instructions per call just as steadily.)  Each case is run twice before
counting, so caches and CPython's specialised instructions are warm.
"""
from __future__ import annotations

import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_dispatch as B  # noqa: E402

import onion  # noqa: E402


def _trace(f):
    ops, calls = collections.Counter(), collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        co = frame.f_code
        key = f"{co.co_filename.split('/onion/')[-1]}:{co.co_firstlineno}:{co.co_name}"
        if event == "call":
            calls[key] += 1
        elif event == "opcode":
            ops[key] += 1
        return tracer

    f()
    f()
    sys.settrace(tracer)
    try:
        f()
    finally:
        sys.settrace(None)
    return ops, calls


def _cases(select=None):
    for case in B.CASES:
        if case.measure is not None or (case.ref or "torch") != "torch":
            continue
        if select is None or select in case.name:
            yield case


def main(argv) -> None:
    if not argv:
        for case in _cases():
            with B._context(case, onion):
                ops, calls = _trace(case.build(onion))
            print(f"{case.name:42s} opcodes {sum(ops.values()):7d}  calls {sum(calls.values()):5d}")
        return
    for case in _cases(argv[0]):
        with B._context(case, onion):
            ops, calls = _trace(case.build(onion))
        total = sum(ops.values())
        print(f"{case.name}: {total} opcodes")
        for key, n in ops.most_common(30):
            print(f"{n:7d} {n / total * 100:5.1f}%  calls {calls[key]:5d}  {key}")
        return
    raise SystemExit(f"no per-call case matches {argv[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
