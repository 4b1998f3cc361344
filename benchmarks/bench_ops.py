"""The speed table of issue 8 item 6: onion against PyTorch 2.13 on ten 1M-element cases, in one run.

    python benchmarks/bench_ops.py [--repeats R] [--rounds K] [--only SUBSTRING]

Fairness: onion's kernels are single-threaded NumPy, so PyTorch runs on one thread too
(``torch.set_num_threads(1)``, and OMP/MKL/OpenBLAS threads set to 1 before either library loads).
Both sides get the same NumPy-generated input data (float32 values, int64 indices); inputs are built
outside the timed call.  Per round each side's time is the best of ``R`` ``timeit`` repeats, the two
libraries alternating; over ``K`` rounds the best time of each side is reported (the machine may be
shared: the best-of-many figure is the least disturbed one).  ratio = onion ms / torch ms (below 1.0
onion is faster; the target is <= 1.5).  An operator onion does not have yet prints as "missing".

Cases (N = 1,000,000):
  sort          float32 [N], dim=-1
  topk          float32 [N], k=100
  cumsum        float32 [N], dim=0
  gather 1-D    float32 [N], int64 index [N] in [0, N)
  gather 2-D    float32 [1000, 1000], dim=1, int64 index [1000, 1000] in [0, 1000)
  scatter_add 1-D / 2-D   same shapes as gather, into zeros (out-of-place)
  index_put_ acc          float32 [N] zeros, int64 index [N] in [0, 1000) (many repeats), float32 values [N]
  mask index    float32 [N][mask], mask = x > 0 (about half true)
  cat           100 float32 tensors of 10,000 elements, dim=0
  unique        float32 [N] values rounded to 1e-3 steps (sorted=True)
  randn         float32 [N], generator seeded once
The older per-family scripts (bench_scatter.py, bench_indexing.py, bench_random.py) hold extra cases.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import onion  # noqa: E402

torch.set_num_threads(1)
N = 1_000_000


def _inputs():
    rng = np.random.default_rng(0)
    return {
        "x1": rng.standard_normal(N).astype(np.float32),
        "i1": rng.integers(0, N, N),
        "x2": rng.standard_normal((1000, 1000)).astype(np.float32),
        "i2": rng.integers(0, 1000, (1000, 1000)),
        "irep": rng.integers(0, 1000, N),
        "vals": rng.standard_normal(N).astype(np.float32),
        "xr": np.round(rng.standard_normal(N) * 1000).astype(np.float32) / 1000,
        "parts": [rng.standard_normal(10_000).astype(np.float32) for _ in range(100)],
    }


def cases(lib, d):
    t = lib.from_numpy if lib is torch else onion.tensor
    x1, i1, x2, i2 = t(d["x1"]), t(d["i1"]), t(d["x2"]), t(d["i2"])
    irep, vals, xr = t(d["irep"]), t(d["vals"]), t(d["xr"])
    parts = [t(p) for p in d["parts"]]
    mask = x1 > 0
    z1, z2 = lib.zeros(N), lib.zeros(1000, 1000)
    acc = lib.zeros(N)
    gen = lib.Generator()
    gen.manual_seed(0)
    return {
        "sort": lambda: lib.sort(x1),
        "topk k=100": lambda: lib.topk(x1, 100),
        "cumsum": lambda: lib.cumsum(x1, 0),
        "gather 1-D": lambda: x1.gather(0, i1),
        "gather 2-D dim=1": lambda: x2.gather(1, i2),
        "scatter_add 1-D": lambda: z1.scatter_add(0, i1, x1),
        "scatter_add 2-D dim=1": lambda: z2.scatter_add(1, i2, x2),
        "index_put_ accumulate": lambda: acc.index_put_((irep,), vals, accumulate=True),
        "bool mask index": lambda: x1[mask],
        "cat 100 x 10k": lambda: lib.cat(parts),
        "unique": lambda: lib.unique(xr),
        "randn": lambda: lib.randn(N, generator=gen),
    }


def _time(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        best = min(best, timeit.timeit(fn, number=1))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="timeit repeats per round (best taken)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (best over rounds reported)")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    args = ap.parse_args()
    d = _inputs()
    on, th = cases(onion, d), cases(torch, d)
    print(f"torch {torch.__version__} on {torch.get_num_threads()} thread; onion on NumPy {np.__version__} "
          f"(single-threaded); best of {args.repeats} x {args.rounds}; load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print(f"{'case':24s} {'onion ms':>9s} {'torch ms':>9s} {'ratio':>6s}")
    for name in on:
        if args.only not in name:
            continue
        try:
            on[name]()
        except (AttributeError, NotImplementedError) as e:
            print(f"{name:24s} {'missing':>9s} {_time(th[name], args.repeats) * 1e3:9.2f} {'-':>6s}"
                  f"  ({type(e).__name__}: {str(e)[:60]})")
            continue
        to = tt = float("inf")
        for _ in range(args.rounds):
            to = min(to, _time(on[name], args.repeats))
            tt = min(tt, _time(th[name], args.repeats))
        print(f"{name:24s} {to * 1e3:9.2f} {tt * 1e3:9.2f} {to / tt:6.2f}")


if __name__ == "__main__":
    main()
