"""Everyday calls beyond bench_dispatch's table: keywords, plain ints after self, a Python number where a tensor
may go, composites (softmax, stack).  Each is timed in onion and in PyTorch in the same run; the ratio is
onion / PyTorch.  No targets: this shows where the argument parser's road and the kernels still cost most.

    python benchmarks/bench_calls.py
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import timeit  # noqa: E402

import onion  # noqa: E402

CALLS = {
    "where(m, x, 0.0)": lambda e: e["L"].where(e["m"], e["x"], 0.0),
    "x.sum(dim=1)": lambda e: e["x"].sum(dim=1),
    "x.sum(1)": lambda e: e["x"].sum(1),
    "x.to(float64)": lambda e: e["x"].to(e["L"].float64),
    "x.float()": lambda e: e["x"].float(),
    "zeros(3, dtype=float64)": lambda e: e["L"].zeros(3, dtype=e["L"].float64),
    "ones((2, 3))": lambda e: e["L"].ones((2, 3)),
    "full((2, 2), 3.0)": lambda e: e["L"].full((2, 2), 3.0),
    "x.clamp(0, 1)": lambda e: e["x"].clamp(0, 1),
    "cat([a, b], dim=0)": lambda e: e["L"].cat([e["a"], e["b"]], dim=0),
    "stack([a, b])": lambda e: e["L"].stack([e["a"], e["b"]]),
    "x.mean(1, keepdim=True)": lambda e: e["x"].mean(1, keepdim=True),
    "x.max(dim=1)": lambda e: e["x"].max(dim=1),
    "x.argmax(1)": lambda e: e["x"].argmax(1),
    "x.softmax(-1)": lambda e: e["x"].softmax(-1),
    "x.reshape(-1)": lambda e: e["x"].reshape(-1),
    "x.permute(1, 0)": lambda e: e["x"].permute(1, 0),
    "x.transpose(0, 1)": lambda e: e["x"].transpose(0, 1),
    "x.unsqueeze(0)": lambda e: e["x"].unsqueeze(0),
    "add(a, b, alpha=2)": lambda e: e["L"].add(e["a"], e["b"], alpha=2),
    "a.add(1)": lambda e: e["a"].add(1),
}


def _us(fn, number=20_000, repeat=5) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def _env(lib) -> dict:
    x = lib.rand(4, 4)
    return {"L": lib, "x": x, "m": x > 0.5, "a": lib.rand(4), "b": lib.rand(4)}


def main() -> None:
    try:
        import torch
        torch.set_num_threads(1)
        ref = _env(torch)
    except ImportError:
        ref = None
    mine = _env(onion)
    print(f"{'call':26s} {'onion':>9s} {'torch':>9s}  ratio")
    for name, call in CALLS.items():
        o = _us(lambda: call(mine))
        if ref is None:
            print(f"{name:26s} {o:7.2f}us")
            continue
        t = _us(lambda: call(ref))
        print(f"{name:26s} {o:7.2f}us {t:7.2f}us  {o / t:5.2f}")


if __name__ == "__main__":
    main()
