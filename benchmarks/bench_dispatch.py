"""onion against PyTorch 2.13 (and NumPy for large arrays): one command, one table of ratios.

    python benchmarks/bench_dispatch.py [--quick] [--rounds N] [--json PATH]

Every case is one function ``build(lib)`` that makes its inputs with ``lib``
(``onion``, ``torch`` or ``numpy``) and returns the zero-argument callable that
is timed, so both sides run the same code. Everything runs on one thread:
the thread-count variables are set before NumPy or PyTorch is imported, and
``torch.set_num_threads(1)``.

Within a round each side's time is the best of 3 ``timeit`` repeats (the
repeats of the two sides alternate, so drift on a busy machine hits both);
``--rounds N`` (default 3) runs the whole set N times and reports, per case,
the best ratio and the spread (min..max) of the ratio over the rounds. The
ratio is onion's time over the reference's: below 1.0 onion is faster.
``import onion`` is judged on its own time (seconds over ``python -c pass``)
and shown relative to ``import torch``.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import atexit
import importlib
import json
import math
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

import onion

try:
    import torch
    torch.set_num_threads(1)
except ImportError:   # the table then shows onion's times alone
    torch = None


# ---------------------------------------------------------------------------
# The cases: each build(lib) returns the callable to time.

def _t(lib, shape, requires_grad=False, seed=0):
    """A float32 tensor of lib (or NumPy array), filled from a fixed seed."""
    arr = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if lib is np:
        return arr
    t = lib.from_numpy(arr)
    return t.requires_grad_() if requires_grad else t


def add_fn(lib):
    a, b = _t(lib, 4), _t(lib, 4, seed=1)
    return lambda: lib.add(a, b)


def add_operator(lib):
    a, b = _t(lib, 4), _t(lib, 4, seed=1)
    return lambda: a + b


def add_inplace(lib):
    a, b = _t(lib, 4), _t(lib, 4, seed=1)
    return lambda: a.add_(b)


def view(lib):
    a = _t(lib, 4)
    return lambda: a.view(2, 2)


def index(lib):
    a = _t(lib, 4)
    return lambda: a[0]


def transpose(lib):
    m = _t(lib, (2, 2))
    return lambda: m.t()


def add_recording(lib):
    a, b = _t(lib, 4, requires_grad=True), _t(lib, 4, seed=1)
    return lambda: a + b


def sum_(lib):
    a = _t(lib, 4)
    return lambda: a.sum()


def mm(lib):
    m, n = _t(lib, (4, 4)), _t(lib, (4, 4), seed=1)
    return lambda: lib.mm(m, n)


def exp(lib):
    a = _t(lib, 4)
    return lambda: a.exp()


def ones(lib):
    return lambda: lib.ones(4)


def small_backward(lib):
    a, b = _t(lib, 4, requires_grad=True), _t(lib, 4, requires_grad=True, seed=1)

    def step():
        (a * b + a).sum().backward()
    return step


def chain_50(lib):
    x = _t(lib, 4, requires_grad=True)

    def step():
        h = x
        for _ in range(25):
            h = (h + 0.1).sin()
            h = (h * 1.01).tanh()
        h.sum().backward()
    return step


def mlp_step(sizes, batch):
    """One SGD step of a bias-free MLP written with raw ops (mm, clamp as relu, squared error)."""
    def build(lib):
        ws = []
        for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
            w = _t(lib, (fan_in, fan_out), seed=10 + i)
            with lib.no_grad():
                w.mul_(1.0 / math.sqrt(fan_in))
            ws.append(w.requires_grad_())
        x, y = _t(lib, (batch, sizes[0]), seed=1), _t(lib, (batch, sizes[-1]), seed=2)
        lr = 1e-3

        def step():
            h = x
            for i, w in enumerate(ws):
                h = lib.mm(h, w)
                if i < len(ws) - 1:
                    h = h.clamp(min=0)
            d = h - y
            (d * d).mean().backward()
            with lib.no_grad():
                for w in ws:
                    w.sub_(w.grad * lr)
                    w.grad = None
        return step
    return build


BIG = 16 * 1024 * 1024


def add_big(lib):
    x, y = _t(lib, BIG), _t(lib, BIG, seed=1)
    return lambda: lib.add(x, y)


def cat_100(lib):
    """cat of 100 float32 tensors of 10,000 elements (1M in all)."""
    parts = [_t(lib, 10_000, seed=i) for i in range(100)]
    return lambda: lib.cat(parts)


@dataclass
class Case:
    name: str
    target: float                       # the ratio (or, if absolute, the seconds) to stay at or under
    build: Callable | None = None       # build(lib) -> the callable to time
    ref: str = "torch"                  # "torch" or "numpy"
    context: Callable | None = None     # context(lib) -> a context manager held around the timing
    measure: Callable | None = None     # measure(args) -> (onion, reference) seconds, instead of build
    absolute: bool = False              # judge the onion figure itself, not the ratio
    unit: str = "us"


def _inference_mode(lib):
    return lib.inference_mode()


def _pass_through_mode(lib):
    """A TorchDispatchMode of ``lib`` that calls each operator as it came: the Python key's own cost."""
    base = importlib.import_module(f"{lib.__name__}.utils._python_dispatch").TorchDispatchMode

    class PassThrough(base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return PassThrough()


def _autocast_cpu(lib):
    return lib.autocast("cpu")


_pycache_dir = None


def _import_env():
    """The environment for the import timings: bytecode caching on, in a folder of our own.

    Timings are of imports as an installed package sees them, from .pyc files;
    with PYTHONDONTWRITEBYTECODE set (as in some sandboxes) every run would
    compile onion from source instead. The folder keeps the checkout clean.
    """
    global _pycache_dir
    if _pycache_dir is None:
        _pycache_dir = tempfile.mkdtemp(prefix="onion-bench-pycache-")
        atexit.register(shutil.rmtree, _pycache_dir, True)
    env = os.environ.copy()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = _pycache_dir
    return env


def measure_import(args):
    """Seconds of `import onion` and `import torch` beyond `python -c pass`, best of 5 fresh processes
    (after one unmeasured run that fills the bytecode cache)."""
    samples = 2 if args.quick else 5
    env = _import_env()

    def best(code):
        times = []
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=False, env=env)
        for _ in range(samples):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env)
            times.append(time.perf_counter() - t0)
            if r.returncode:
                raise RuntimeError(f"`{code}` failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        return min(times)
    base = best("pass")
    ours = best("import onion") - base
    ref = best("import torch") - base if torch is not None else None
    return ours, ref


CASES = [
    Case("add 4 floats: onion.add(a, b)", 1.0, add_fn),
    Case("a + b", 1.0, add_operator),
    Case("a.add_(b)", 1.0, add_inplace),
    Case("a.view(2, 2)", 1.0, view),
    Case("a[0]", 1.0, index),
    Case("m.t() (2x2)", 1.0, transpose),
    Case("a + b under inference_mode", 1.0, add_operator, context=_inference_mode),
    Case("a + b recording (a requires grad)", 1.3, add_recording),
    Case("a.sum()", 1.3, sum_),
    Case("mm 4x4", 1.3, mm),
    Case("a.exp()", 1.3, exp),
    Case("ones(4)", 1.3, ones),
    Case("(a*b+a).sum().backward()", 1.0, small_backward),
    Case("50-op chain + backward", 1.3, chain_50),
    Case("MLP step 784-128-64-10, batch 64", 1.2, mlp_step((784, 128, 64, 10), 64)),
    Case("MLP step 16-16-16-4, batch 8", 1.5, mlp_step((16, 16, 16, 4), 8)),
    Case("add 16M float32 (vs np.add)", 1.05, add_big, ref="numpy"),
    Case("cat 100 tensors, 1M float32", 1.5, cat_100),
    Case("a + b under a pass-through TorchDispatchMode", 1.5, add_operator, context=_pass_through_mode),
    Case("mm 4x4 under autocast('cpu') (bfloat16)", 2.0, mm, context=_autocast_cpu),
    Case("import onion (s; ratio vs import torch)", 0.35, measure=measure_import, absolute=True, unit="s"),
]


# ---------------------------------------------------------------------------
# Timing

def _per_call(fn, budget):
    """Calls per timeit run so that one run takes about `budget` seconds.  A few calls run first: a first call
    can cost a thousand later ones (torch, under a newly defined TorchDispatchMode class), and sizing the runs
    from it timed a single call."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t = timeit.timeit(fn, number=n)
        if t >= min(budget, 0.01) or n >= 1 << 20:
            return max(1, int(budget / (t / n)))
        n *= 4


def _context(case, lib):
    return case.context(lib) if case.context is not None and lib is not np else nullcontext()


def time_pair(case, args):
    """Best-of-3 seconds per call for onion and the reference, repeats interleaved."""
    libs = {"onion": onion, "ref": torch if case.ref == "torch" else np}
    fns, numbers, errors = {}, {}, {}
    for side, lib in libs.items():
        if lib is None:
            errors[side] = "torch not installed"
            continue
        try:
            fns[side] = case.build(lib)
            with _context(case, lib):
                numbers[side] = _per_call(fns[side], args.budget)
        except Exception as e:   # an op onion lacks: shown in the table, the run goes on
            errors[side] = f"{type(e).__name__}: {e}".splitlines()[0][:90]
            fns.pop(side, None)
    best = {side: math.inf for side in fns}
    for _ in range(3):
        for side in list(fns):
            lib = libs[side]
            try:
                with _context(case, lib):    # entered outside the timed loop
                    t = timeit.timeit(fns[side], number=numbers[side]) / numbers[side]
            except Exception as e:
                errors[side] = f"{type(e).__name__}: {e}".splitlines()[0][:90]
                del fns[side], best[side]
                continue
            best[side] = min(best[side], t)
    return best.get("onion"), best.get("ref"), errors


def run_round(args):
    out = []
    for case in CASES:
        if case.measure is not None:
            try:
                ours, ref = case.measure(args)
                out.append((ours, ref, {} if ref is not None else {"ref": "torch not installed"}))
            except Exception as e:
                out.append((None, None, {"onion": f"{type(e).__name__}: {e}"}))
            continue
        ours, ref, errors = time_pair(case, args)
        out.append((ours, ref, errors))
    return out


# ---------------------------------------------------------------------------
# Report

def summarize(rounds):
    rows = []
    for i, case in enumerate(CASES):
        per = [r[i] for r in rounds]
        ours = [o for o, _, _ in per if o is not None]
        refs = [f for _, f, _ in per if f is not None]
        ratios = [o / f for o, f, _ in per if o is not None and f is not None and f > 0]
        judged = ours if case.absolute else ratios
        errors = {}
        for _, _, e in per:
            errors.update(e)
        best = min(judged) if judged else None
        # the row shows the round with the best judged figure, so its ratio is onion / reference
        complete = [(o, f) for o, f, _ in per if o is not None and f is not None and f > 0]
        if complete:
            o, f = min(complete, key=(lambda p: p[0]) if case.absolute else (lambda p: p[0] / p[1]))
        else:
            o, f = (min(ours) if ours else None), (min(refs) if refs else None)
        rows.append({
            "case": case.name,
            "reference": case.ref,
            "unit": case.unit,
            "onion": o,
            "ref": f,
            "ratio": o / f if o is not None and f else None,
            "ratio_spread": [min(ratios), max(ratios)] if ratios else None,
            "judged_on": "seconds" if case.absolute else "ratio",
            "judged_spread": [min(judged), max(judged)] if judged else None,
            "target": case.target,
            "result": None if best is None else ("PASS" if best <= case.target else "MISS"),
            "errors": errors,
            "rounds": [{"onion": o, "ref": f} for o, f, _ in per],
        })
    return rows


def _fmt_time(seconds, unit):
    if seconds is None:
        return "-"
    return f"{seconds:.3f}" if unit == "s" else f"{seconds * 1e6:.2f}"


def print_table(rows, args):
    head = ("case", "onion", "reference", "ratio", "spread", "target", "result")
    lines = []
    for r in rows:
        unit = r["unit"]
        ref_name = {"torch": "torch", "numpy": "numpy"}[r["reference"]]
        spread = r["judged_spread"]
        spread_s = "-" if spread is None else (
            f"{spread[0]:.3f}..{spread[1]:.3f}s" if r["judged_on"] == "seconds"
            else f"{spread[0]:.2f}..{spread[1]:.2f}")
        target = f"<={r['target']:.2f}" + ("s" if r["judged_on"] == "seconds" else "")
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        result = r["result"] or "ERROR"
        if r["errors"].get("onion"):
            result += " " + r["errors"]["onion"]
        elif r["errors"].get("ref"):
            result += f" ({ref_name}: {r['errors']['ref']})"
        lines.append((r["case"], f"{_fmt_time(r['onion'], unit)} {unit}",
                      f"{_fmt_time(r['ref'], unit)} {unit} {ref_name}", ratio, spread_s, target, result))
    widths = [max(len(str(x[i])) for x in [head, *lines]) for i in range(len(head) - 1)]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths)) + "  {}"
    print(fmt.format(*head))
    print(fmt.format(*("-" * w for w in widths), "-" * 4))
    for line in lines:
        print(fmt.format(*line))
    passed = sum(r["result"] == "PASS" for r in rows)
    print(f"\n{passed}/{len(rows)} cases at target. Times per call (best of 3 timeit runs) from the "
          f"best of {args.rounds} round(s); ratio = onion / reference, lower is better; "
          f"spread = min..max of the judged figure over the rounds.")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="shorter timing runs (a smoke test; noisier)")
    p.add_argument("--rounds", type=int, default=3, help="times to run the whole set (default 3)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = p.parse_args()
    args.budget = 0.01 if args.quick else 0.1     # seconds per timeit run
    print(f"onion vs torch {torch.__version__ if torch else '(not installed)'}, numpy {np.__version__}, "
          f"Python {platform.python_version()}, 1 thread{', quick' if args.quick else ''}", flush=True)
    rounds = []
    for i in range(args.rounds):
        t0 = time.perf_counter()
        rounds.append(run_round(args))
        print(f"round {i + 1}/{args.rounds}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    rows = summarize(rounds)
    print_table(rows, args)
    if args.json:
        meta = {"torch": torch.__version__ if torch else None, "numpy": np.__version__,
                "python": platform.python_version(), "quick": args.quick, "rounds": args.rounds}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cases": rows}, f, indent=1)


if __name__ == "__main__":
    main()
