"""The Dask backend: onion's overhead against the same computation written in dask.array, and scaling
over local worker processes.

    python benchmarks/bench_dask.py              # a couple of minutes: ~1 GB, the threaded scheduler,
                                                 # then 1, 2 and 4 worker processes
    python benchmarks/bench_dask.py --big        # also 40 GB of float32 (more than this machine's memory)
                                                 # on a LocalCluster of worker processes with memory limits

Two computations, each written once with onion on the ``dask`` device and once in dask.array directly,
over the same chunked data (generated chunk by chunk, never materialised): a reduction (``x.sum()``) and a
matmul-then-reduce (``(x @ w).sum()``).  The ratio is onion's time (building the graph through the
dispatcher, then computing it) over dask.array's; target <= 1.1x.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

import onion  # noqa: E402
import onion.dask  # noqa: E402

COLS = 1024
CHUNK_ROWS = 16384          # 64 MiB chunks of float32


def data(rows):
    x = da.ones((rows, COLS), dtype=np.float32, chunks=(CHUNK_ROWS, COLS))
    w = da.full((COLS, 8), 0.5, dtype=np.float32, chunks=(COLS, 8))
    return x, w


def onion_cases(x, w):
    tx, tw = onion.dask.from_dask(x), onion.dask.from_dask(w)
    return {"sum": lambda: tx.sum().item(), "matmul-sum": lambda: (tx @ tw).sum().item()}


def dask_cases(x, w):
    return {"sum": lambda: float(x.sum().compute()), "matmul-sum": lambda: float((x @ w).sum().compute())}


def best(fn, repeat):
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


def overhead(rows, repeat):
    x, w = data(rows)
    gb = rows * COLS * 4 / 1e9
    print(f"\n## onion vs dask.array, {gb:.1f} GB float32 ({x.numblocks[0]} chunks), threaded scheduler, "
          f"best of {repeat}")
    print(f"{'case':<12}{'onion s':>10}{'dask s':>10}{'ratio':>8}  value")
    on, dk = onion_cases(x, w), dask_cases(x, w)
    with dask.config.set(scheduler="threads"):
        for name in on:
            (to, vo), (td, vd) = best(on[name], repeat), best(dk[name], repeat)
            assert np.isclose(vo, vd, rtol=1e-4), (name, vo, vd)
            print(f"{name:<12}{to:>10.3f}{td:>10.3f}{to / td:>7.2f}x  {vo:.6g}")


def workers(rows, counts, memory_limit):
    from distributed import Client, LocalCluster
    x, w = data(rows)
    gb = rows * COLS * 4 / 1e9
    print(f"\n## onion on a LocalCluster of worker processes (1 thread each, memory_limit={memory_limit}), "
          f"{gb:.1f} GB float32")
    print(f"{'workers':<10}{'sum s':>10}{'matmul-sum s':>14}")
    for n in counts:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            with onion.dask.use_cluster(client):
                cases = onion_cases(x, w)
                (ts, vs), (tm, vm) = best(cases["sum"], 1), best(cases["matmul-sum"], 1)
            assert np.isclose(vs, rows * COLS, rtol=1e-4) and np.isclose(vm, rows * COLS * 4, rtol=1e-4), (vs, vm)
        print(f"{n:<10}{ts:>10.2f}{tm:>14.2f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=262144, help="rows of the default run (x 1024 float32)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--big", action="store_true", help="also the 40 GB run on worker processes")
    p.add_argument("--big-gb", type=float, default=40.0)
    p.add_argument("--memory-limit", default="3GiB", help="per worker")
    args = p.parse_args(argv)
    print(f"onion Dask backend benchmark: dask {dask.__version__}, {os.cpu_count()} CPUs")
    overhead(args.rows, args.repeat)
    workers(args.rows * 4, (1, 2, 4), args.memory_limit)
    if args.big:
        rows = int(args.big_gb * 1e9 / (COLS * 4)) // CHUNK_ROWS * CHUNK_ROWS
        workers(rows, (2,), args.memory_limit)


if __name__ == "__main__":
    main()
