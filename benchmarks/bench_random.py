"""Random sampling: onion against PyTorch 2.13 on one thread, one table of ratios.

    python benchmarks/bench_random.py [--n N]

Each case draws ``N`` (default 10^6) samples with the same seed in both libraries; each side's time is
the best of 5 runs, and the ratio is onion's time over PyTorch's (below 1.0 onion is faster).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import onion  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

CASES = {
    "randn float32": lambda lib, n: lib.randn(n),
    "randn float64": lambda lib, n: lib.randn(n, dtype=lib.float64),
    "rand float32": lambda lib, n: lib.rand(n),
    "rand float64": lambda lib, n: lib.rand(n, dtype=lib.float64),
    "randint": lambda lib, n: lib.randint(0, 1000, (n,)),
    "exponential_ float64": lambda lib, n: lib.empty(n, dtype=lib.float64).exponential_(),
    "bernoulli_(0.3)": lambda lib, n: lib.empty(n).bernoulli_(0.3),
    "normal_ noncontiguous float64": lambda lib, n: lib.empty(n // 2, 2, dtype=lib.float64).t().normal_(),
    "multinomial replacement": lambda lib, n: lib.multinomial(lib.ones(100), n, True),
    "randperm (10^5)": lambda lib, n: lib.randperm(100000),
}


def best(fn, reps=5):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    n = ap.parse_args().n
    print(f"{'case':32s} {'onion ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for name, case in CASES.items():
        onion.manual_seed(0)
        torch.manual_seed(0)
        to = best(lambda: case(onion, n))
        tt = best(lambda: case(torch, n))
        print(f"{name:32s} {to * 1e3:10.2f} {tt * 1e3:10.2f} {to / tt:7.2f}")


if __name__ == "__main__":
    main()
