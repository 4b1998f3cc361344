"""Import time and memory of a selective build against the full one.

    python benchmarks/bench_selective_build.py [--select ops.yaml] [--runs 7]

Builds two copies of the package in a temporary folder (the full build, and a selective build of
``--select``, by default add/mul/sum/mm as a tiny training step needs them), then imports each in fresh
processes: the median wall time of ``import onion``, the memory it allocated (tracemalloc, in a run of its
own since tracing slows the import) and the process's peak RSS; NumPy's own import (which onion pays too)
and PyTorch's, when installed, are shown for scale.  The shared onion/_generated is never touched.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SELECTION = """\
operators:
  aten::add.Tensor: {}
  aten::mul.Tensor: {}
  aten::sum: {include_all_overloads: true}
  aten::mm: {}
"""

PROBE = """\
import json, resource, sys, time
t = time.perf_counter()
import {module}
dt = time.perf_counter() - t
extra = {{}}
if {module!r} == "onion":
    from onion.dispatch.dispatcher import dispatcher
    extra["operators"] = len(dispatcher.ops)
print(json.dumps({{"seconds": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}}))
"""

TRACED = """\
import json, tracemalloc
tracemalloc.start()
import {module}
cur, peak = tracemalloc.get_traced_memory()
print(json.dumps({{"traced_mb": cur / 2**20, "traced_peak_mb": peak / 2**20}}))
"""


def _run(path, code):
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("ONION_SKIP_CODEGEN", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=path, capture_output=True, text=True, check=False)
    if r.returncode:
        raise SystemExit(f"failed in {path}:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _build(dst, select=None):
    shutil.copytree(os.path.join(ROOT, "onion"), os.path.join(dst, "onion"),
                    ignore=shutil.ignore_patterns("_generated", "__pycache__"))
    args = [sys.executable, "-m", "onion.codegen"] + (["--select", select] if select else [])
    env = {**os.environ, "PYTHONPATH": dst}
    r = subprocess.run(args, env=env, cwd=dst, capture_output=True, text=True, check=False)
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    _run(dst, "import onion; print(1)")          # warm: bytecode and any first-import work are done before timing


def _measure(path, module, runs):
    times, rss, ops = [], [], None
    for _ in range(runs):
        r = _run(path, PROBE.format(module=module))
        times.append(r["seconds"])
        rss.append(r["rss_mb"])
        ops = r.get("operators", ops)
    traced = _run(path, TRACED.format(module=module))
    return {"seconds": statistics.median(times), "rss_mb": statistics.median(rss), "operators": ops, **traced}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--select", help="selection file (default: add, mul, sum, mm)")
    ap.add_argument("--runs", type=int, default=7)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="onion-selective-") as tmp:
        select = ns.select
        if select is None:
            select = os.path.join(tmp, "ops.yaml")
            with open(select, "w") as f:
                f.write(DEFAULT_SELECTION)
        full, selective = os.path.join(tmp, "full"), os.path.join(tmp, "selective")
        _build(full)
        _build(selective, os.path.abspath(select))
        rows = [("onion, full build", _measure(full, "onion", ns.runs)),
                ("onion, selective build", _measure(selective, "onion", ns.runs)),
                ("numpy alone", _measure(full, "numpy", ns.runs))]
        try:
            import importlib.util
            if importlib.util.find_spec("torch") is not None:
                rows.append(("torch (for scale)", _measure(full, "torch", max(3, ns.runs // 2))))
        except ImportError:
            pass
    print(f"selection: {ns.select or 'add.Tensor, mul.Tensor, sum (all overloads), mm'}; median of {ns.runs} runs")
    print(f"{'':26} {'operators':>9} {'import s':>9} {'peak RSS MB':>12} {'traced MB':>10} {'traced peak MB':>15}")
    for name, r in rows:
        ops = "" if r["operators"] is None else str(r["operators"])
        print(f"{name:26} {ops:>9} {r['seconds']:9.3f} {r['rss_mb']:12.1f} {r['traced_mb']:10.1f} "
              f"{r['traced_peak_mb']:15.1f}")
    f, s = rows[0][1], rows[1][1]
    print(f"selective / full: import time {s['seconds'] / f['seconds']:.2f}x, peak RSS {s['rss_mb'] / f['rss_mb']:.2f}x, "
          f"traced memory {s['traced_mb'] / f['traced_mb']:.2f}x, operators {s['operators']}/{f['operators']}")


if __name__ == "__main__":
    main()
