"""How fast onion parses function schemas, as a ratio to torchgen's own (pure Python) parser.

    python benchmarks/bench_schema.py [--rounds N]

The schemas are every ``func:`` of PyTorch's native_functions.yaml (torchgen ships
it with torch) or, without torch, of onion's own YAML.  onion's ``parse_schema`` is
timed without its cache.  Nothing is asserted: timings depend on the machine, so the
test suite checks what is parsed and this script reports how fast.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time

import yaml

import onion
from onion.dispatch.schema import parse_schema


def _funcs():
    spec = importlib.util.find_spec("torchgen")
    if spec is not None and spec.origin is not None:
        path = os.path.join(os.path.dirname(spec.origin), "packaged", "ATen", "native", "native_functions.yaml")
        if os.path.exists(path):
            return "torchgen's native_functions.yaml", path
    return "onion's native_functions.yaml", os.path.join(os.path.dirname(onion.__file__), "aten",
                                                        "native_functions.yaml")


def _best(fn, texts, rounds):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for t in texts:
            fn(t)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    label, path = _funcs()
    with open(path) as f:
        entries = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    texts = [e["func"] for e in entries if "func" in e]
    uncached = getattr(parse_schema, "__wrapped__", parse_schema)
    uncached(texts[0])
    t_onion = _best(uncached, texts, args.rounds)
    print(f"{label}: {len(texts)} schemas")
    print(f"onion parse_schema (uncached): {t_onion:.3f} s in all, {t_onion / len(texts) * 1e6:.1f} us per schema")
    try:
        from torchgen.model import FunctionSchema
    except ImportError:
        print("torchgen not installed: no reference to compare with")
        return
    t_ref = _best(FunctionSchema.parse, texts, args.rounds)
    print(f"torchgen FunctionSchema.parse: {t_ref:.3f} s in all, {t_ref / len(texts) * 1e6:.1f} us per schema")
    print(f"ratio onion / torchgen: {t_onion / t_ref:.2f} (below 1.0: onion is faster)")


if __name__ == "__main__":
    main()
