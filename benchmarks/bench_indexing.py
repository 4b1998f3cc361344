"""Advanced indexing against PyTorch 2.13 and NumPy: 1M-element mask indexing and index_put_ with
accumulate (the two targets of issue 8 item 3: within 1.5x of PyTorch).

    python benchmarks/bench_indexing.py [--rounds N]

One thread on every side (set before NumPy and PyTorch load).  Each case is ``build(lib)`` returning
the timed callable, so each library runs the same code; per round a side's time is the best of 5
repeats, the repeats of the sides alternating; the table shows the best ratio over the rounds
(onion's time over the reference's: below 1.0 onion is faster).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402

N = 1_000_000


def _data(lib):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    idx = rng.integers(0, N, N)
    vals = rng.standard_normal(N).astype(np.float32)
    if lib is np:
        return a, a > 0, idx, vals
    return lib.from_numpy(a), lib.from_numpy(a > 0), lib.from_numpy(idx), lib.from_numpy(vals)


def mask_get(lib):
    x, m, _, _ = _data(lib)
    return lambda: x[m]


def mask_set(lib):
    x, m, _, _ = _data(lib)

    def f():
        x[m] = 0.0
    return f


def index_put_accumulate(lib):
    x, _, i, v = _data(lib)
    if lib is np:
        return lambda: np.add.at(x, i, v)
    return lambda: x.index_put_((i,), v, accumulate=True)


def index_put_accumulate_f64(lib):
    x, _, i, v = _data(lib)
    if lib is np:
        x, v = x.astype(np.float64), v.astype(np.float64)
        return lambda: np.add.at(x, i, v)
    x, v = x.double(), v.double()
    return lambda: x.index_put_((i,), v, accumulate=True)


def int_get(lib):
    x, _, i, _ = _data(lib)
    return lambda: x[i]


CASES = [mask_get, mask_set, index_put_accumulate, index_put_accumulate_f64, int_get]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    import torch
    torch.set_num_threads(1)
    import onion
    print(f"{'case':28s} {'onion ms':>9s} {'torch ms':>9s} {'numpy ms':>9s} {'vs torch':>9s} {'vs numpy':>9s}")
    for case in CASES:
        fo, ft, fn = case(onion), case(torch), case(np)
        best = {"o": [], "t": [], "n": []}
        for _ in range(args.rounds):
            r = {"o": 1e9, "t": 1e9, "n": 1e9}
            for _ in range(5):
                for k, f in (("o", fo), ("t", ft), ("n", fn)):
                    r[k] = min(r[k], timeit.timeit(f, number=1))
            for k in r:
                best[k].append(r[k])
        o, t, n = min(best["o"]), min(best["t"]), min(best["n"])
        print(f"{case.__name__:28s} {o * 1e3:9.2f} {t * 1e3:9.2f} {n * 1e3:9.2f} {o / t:9.2f} {o / n:9.2f}")


if __name__ == "__main__":
    main()
