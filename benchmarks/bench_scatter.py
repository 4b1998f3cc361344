"""gather / scatter_add / index_select / index_add on 1M elements: onion against PyTorch 2.13 (one thread).

    python benchmarks/bench_scatter.py

Each case builds its inputs with ``lib`` (onion or torch) from the same NumPy data and times the call
(best of 5 ``timeit`` repeats, the two libraries alternating); the ratio is onion's time over torch's.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import timeit  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import onion  # noqa: E402

torch.set_num_threads(1)
N = 1_000_000
rng = np.random.default_rng(0)
X1 = rng.standard_normal(N).astype(np.float32)
I1 = rng.integers(0, N, N)
X2 = rng.standard_normal((1000, 1000)).astype(np.float32)
I2 = rng.integers(0, 1000, (1000, 1000))
IV = rng.integers(0, 1000, 1000)


def cases(lib):
    t = lib.from_numpy if lib is torch else (lambda a: onion.tensor(a))
    x1, i1, x2, i2, iv = t(X1), t(I1), t(X2), t(I2), t(IV)
    z1 = lib.zeros(N)
    z2 = lib.zeros(1000, 1000)
    return {
        "gather 1-D 1M": lambda: x1.gather(0, i1),
        "gather 2-D dim=1 1M": lambda: x2.gather(1, i2),
        "gather 2-D dim=0 1M": lambda: x2.gather(0, i2),
        "scatter_add 1-D 1M": lambda: z1.scatter_add(0, i1, x1),
        "scatter_add 2-D dim=1 1M": lambda: z2.scatter_add(1, i2, x2),
        "scatter 2-D dim=1 1M": lambda: z2.scatter(1, i2, x2),
        "index_select dim=0 1M": lambda: x2.index_select(0, iv),
        "index_add dim=0 1M": lambda: z2.index_add(0, iv, x2),
    }


def main():
    on, th = cases(onion), cases(torch)
    print(f"{'case':28s} {'onion ms':>9s} {'torch ms':>9s} {'ratio':>6s}")
    for name in on:
        to, tt = [], []
        for _ in range(5):
            to.append(timeit.timeit(on[name], number=3) / 3)
            tt.append(timeit.timeit(th[name], number=3) / 3)
        a, b = min(to), min(tt)
        print(f"{name:28s} {a * 1e3:9.2f} {b * 1e3:9.2f} {a / b:6.2f}")


if __name__ == "__main__":
    main()
