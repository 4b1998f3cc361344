"""What recording costs: each per-call case of bench_dispatch timed with the profiler off and on.

    python benchmarks/bench_profiler.py [--number N]

For onion and for PyTorch 2.13 (when installed) it prints seconds per call off, on, and the ratio on/off.
Off, onion's call path is exactly the unprofiled one (benchmarks/opcodes.py counts the same opcodes with
or without onion.profiler imported); on, every operator call runs through a wrapper that records an event.
Each "on" repeat runs in a fresh profiler, so the event list stays short.
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_dispatch as B  # noqa: E402

import onion  # noqa: E402

torch = B.torch


def _time(fn, number, prof_mod=None):
    best = float("inf")
    for _ in range(3):
        if prof_mod is None:
            t = timeit.timeit(fn, number=number)
        else:
            with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU]):
                t = timeit.timeit(fn, number=number)
        best = min(best, t / number)
    return best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--number", type=int, default=200, help="calls per timing (default 200)")
    args = p.parse_args(argv)
    libs = [("onion", onion)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'case':46s}" + "".join(f"{name + ' off':>12s}{name + ' on':>12s}{'ratio':>8s}" for name, _ in libs))
    for case in B.CASES:
        if case.measure is not None or (case.ref or "torch") != "torch":
            continue
        row = f"{case.name[:45]:46s}"
        for _, lib in libs:
            with B._context(case, lib):
                fn = case.build(lib)
                fn()
                n = max(1, args.number // (50 if "MLP" in case.name or "chain" in case.name else 1))
                off = _time(fn, n)
                on = _time(fn, n, lib.profiler)
            row += f"{off * 1e6:10.1f}us{on * 1e6:10.1f}us{on / off:8.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
