"""Sorting and selection on 1M elements: onion against PyTorch 2.13 and NumPy, one thread, ratios.

    python benchmarks/bench_sorting.py [--repeat N]

Each side's time is the best of N runs (the sides alternate, so drift on a busy machine hits both);
the ratio is onion's time over PyTorch's (below 1.0 onion is faster).  NumPy's column is the plain
library call onion builds on (np.sort / np.argpartition / np.unique), for scale.
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


def cases():
    rs = np.random.RandomState(0)
    f = rs.randn(N).astype(np.float32)
    i = rs.randint(0, 1000, N).astype(np.int64)
    t, o, ti, oi = torch.from_numpy(f), onion.tensor(f), torch.from_numpy(i), onion.tensor(i)
    return [
        ("sort float32", lambda: torch.sort(t), lambda: onion.sort(o), lambda: np.sort(f)),
        ("sort stable descending float32", lambda: torch.sort(t, stable=True, descending=True),
         lambda: onion.sort(o, stable=True, descending=True), lambda: np.argsort(-f, kind="stable")),
        ("sort int64 (1000 values)", lambda: torch.sort(ti), lambda: onion.sort(oi), lambda: np.sort(i)),
        ("topk k=10", lambda: torch.topk(t, 10), lambda: onion.topk(o, 10), lambda: np.argpartition(f, -10)),
        ("topk k=1000 smallest", lambda: torch.topk(t, 1000, largest=False), lambda: onion.topk(o, 1000, largest=False),
         lambda: np.argpartition(f, 1000)),
        ("unique float32", lambda: torch.unique(t), lambda: onion.unique(o), lambda: np.unique(f)),
        ("unique int64 inverse+counts", lambda: torch.unique(ti, return_inverse=True, return_counts=True),
         lambda: onion.unique(oi, return_inverse=True, return_counts=True),
         lambda: np.unique(i, return_inverse=True, return_counts=True)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'case':34s} {'torch ms':>9s} {'onion ms':>9s} {'numpy ms':>9s} {'onion/torch':>12s}")
    for name, ft, fo, fn in cases():
        best = {k: float("inf") for k in "ton"}
        for _ in range(args.repeat):
            for k, fn_ in (("t", ft), ("o", fo), ("n", fn)):
                best[k] = min(best[k], timeit.timeit(fn_, number=1))
        print(f"{name:34s} {best['t'] * 1e3:9.2f} {best['o'] * 1e3:9.2f} {best['n'] * 1e3:9.2f} "
              f"{best['o'] / best['t']:12.2f}")


if __name__ == "__main__":
    main()
