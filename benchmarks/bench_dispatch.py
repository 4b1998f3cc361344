"""Per-call overhead vs PyTorch and large-tensor throughput vs NumPy, as ratios, in one run.

    python benchmarks/bench_dispatch.py [--quick]
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import onion


def best_us(fn, number: int, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    n_small = 20000 if args.quick else 200000
    n_big = 3 if args.quick else 10
    try:
        import torch
    except ImportError:
        torch = None
    rows = []

    a, b = onion.ones(4), onion.ones(4)
    x, y = np.ones(4, np.float32), np.ones(4, np.float32)
    small = {"onion": best_us(lambda: onion.add(a, b), n_small), "numpy": best_us(lambda: np.add(x, y), n_small)}
    small_op = {"onion": best_us(lambda: a + b, n_small)}
    if torch is not None:
        ta, tb = torch.ones(4), torch.ones(4)
        small["torch"] = best_us(lambda: torch.add(ta, tb), n_small)
        small_op["torch"] = best_us(lambda: ta + tb, n_small)
    rows.append(("add, 4 x float32 (us/call)", small, "torch"))
    rows.append(("a + b, 4 x float32 (us/call)", small_op, "torch"))

    ga, gb = onion.ones(4).requires_grad_(), onion.ones(4).requires_grad_()
    rec = {"onion": best_us(lambda: ga + b, n_small // 4)}
    n_bw = max(n_small // 50, 200)

    def fb_onion():
        (ga * gb + ga).sum().backward()
    fb = {"onion": best_us(fb_onion, n_bw)}
    if torch is not None:
        tga, tgb = torch.ones(4).requires_grad_(), torch.ones(4).requires_grad_()
        rec["torch"] = best_us(lambda: tga + tb, n_small // 4)

        def fb_torch():
            (tga * tgb + tga).sum().backward()
        fb["torch"] = best_us(fb_torch, n_bw)
    rows.append(("a + b recording, 4 x f32 (us)", rec, "torch"))
    rows.append(("(a*b+a).sum().backward() (us)", fb, "torch"))

    N = 16 * 1024 * 1024
    A, B = onion.ones(N), onion.ones(N)
    X, Y = np.ones(N, np.float32), np.ones(N, np.float32)
    big = {"onion": best_us(lambda: onion.add(A, B), n_big, 3) / 1000,
           "numpy": best_us(lambda: np.add(X, Y), n_big, 3) / 1000}
    if torch is not None:
        TA, TB = torch.ones(N), torch.ones(N)
        big["torch"] = best_us(lambda: torch.add(TA, TB), n_big, 3) / 1000
    rows.append(("add, 16M x float32 (ms/call)", big, "numpy"))

    for title, r, ref in rows:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in r.items())
        ratio = f"onion/{ref} = {r['onion'] / r[ref]:.2f}x" if ref in r else "(reference not installed)"
        print(f"{title:32s} {parts:55s} {ratio}")


if __name__ == "__main__":
    main()
