"""Instructions CPython 3.11 could not specialise on one benchmark case's call path.

    python benchmarks/unspecialized.py "a + b"

An attribute read that stays generic (a class-level default read through an instance, a NumPy array's
``shape``/``ndim``/``flags``) costs about four times a slot read; this lists, per function, each executed
``LOAD_ATTR``/``STORE_ATTR``/``BINARY_SUBSCR``/``COMPARE_OP``... left in its adaptive (generic) form after the
case has run a few thousand times, with how often one call executes it.
"""
from __future__ import annotations

import collections
import dis
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_dispatch as B  # noqa: E402

import onion  # noqa: E402

WATCH = ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "BINARY_SUBSCR", "LOAD_GLOBAL", "COMPARE_OP", "STORE_SUBSCR",
         "BINARY_OP")


def main(select: str) -> None:
    case = next((c for c in B.CASES if select in c.name), None)
    if case is None:
        raise SystemExit(f"no case matches {select!r}")
    seen = collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            seen[(frame.f_code, frame.f_lasti)] += 1
        return tracer

    with B._context(case, onion):
        f = case.build(onion)
        for _ in range(3000):
            f()
        sys.settrace(tracer)
        try:
            f()
        finally:
            sys.settrace(None)
        for _ in range(3000):
            f()
    by_code = collections.defaultdict(dict)
    for (co, off), n in seen.items():
        by_code[co][off] = n
    for co, offs in by_code.items():
        generic = []
        for ins in dis.get_instructions(co, adaptive=True):
            if ins.offset not in offs or ins.opname.startswith(("CALL", "PRECALL")):
                continue
            if ins.opname in WATCH or ins.opname.endswith("_ADAPTIVE"):
                if ins.opname == "BINARY_OP" and ins.argrepr in ("|", "&", "&=", "|="):
                    continue        # int bit operations have no specialised form in 3.11
                generic.append(f"    line {ins.positions.lineno:5d}  x{offs[ins.offset]:<4d} {ins.opname:24s} "
                               f"{ins.argrepr}")
        if generic:
            print(f"{co.co_filename.split('/onion/')[-1]}:{co.co_firstlineno} {co.co_name}")
            print("\n".join(generic))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "add 4 floats")
