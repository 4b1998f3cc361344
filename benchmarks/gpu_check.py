"""One prepared run for a machine with an NVIDIA GPU: install, check, measure, all within about 5 minutes.

    python benchmarks/gpu_check.py [--no-install] [--max-ops N]

1. installs what it needs (``pip install -e '.[cuda]'``, and pytest/torch only if missing: a CUDA build
   of PyTorch already there is kept and used as the reference);
2. runs the OpInfo harness's samples on CUDA: float32 and int64, one sample per operator (CuPy compiles
   each kernel on first use, so more samples cost minutes), each result compared with PyTorch on the CPU;
3. runs the ``cuda``-marked tests;
4. prints a throughput table (16M-element add, 4096x4096 matmul, a small MLP training step) for onion on
   CUDA, onion on CPU, and PyTorch CUDA when the installed torch has CUDA (else that column says why not).

Without a GPU it prints why it cannot run and exits 0; with a GPU but nothing to install from (no network
and no ``--find-links`` folder of wheels) it says so and exits 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def why_no_gpu() -> str | None:
    """None when an NVIDIA GPU is visible; else the reason, for the message."""
    if os.environ.get("ONION_GPU_CHECK_FORCE_NO_GPU") == "1":
        return "ONION_GPU_CHECK_FORCE_NO_GPU=1"
    if shutil.which("nvidia-smi") is None and not os.path.exists("/dev/nvidia0"):
        return "no NVIDIA driver (no nvidia-smi, no /dev/nvidia0)"
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"nvidia-smi failed: {e}"
    if r.returncode != 0 or "GPU" not in r.stdout:
        return f"nvidia-smi lists no GPU ({(r.stderr or r.stdout).strip()[:200]})"
    return None


def _pip(*args, find_links=None) -> None:
    extra = ["--find-links", find_links] if find_links else []
    cmd = [sys.executable, "-m", "pip", "install", "-q", *extra, *args]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True, timeout=240)


def install(find_links=None) -> str | None:
    """Install what is missing; None when done, else why it could not be (a machine without the network
    needs ``--find-links DIR`` with the wheels: cupy-cuda12x, and pytest/torch if absent)."""
    try:
        if importlib.util.find_spec("cupy") is None:
            _pip("-e", ".[cuda]", find_links=find_links)
        missing = [p for p, m in (("pytest", "pytest"), ("torch==2.13.0", "torch"), ("hypothesis", "hypothesis"),
                                  ("expecttest", "expecttest")) if importlib.util.find_spec(m) is None]
        if missing:
            _pip(*missing, find_links=find_links)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        return f"installing failed ({e})"
    importlib.invalidate_caches()
    return None


# --- OpInfo on CUDA ----------------------------------------------------------------------------------
def _to_device(x, dev):
    import onion
    if isinstance(x, onion.Tensor):
        y = x.detach().to(dev)
        return y.requires_grad_() if x.requires_grad else y
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v, dev) for v in x)
    if isinstance(x, dict):
        return {k: _to_device(v, dev) for k, v in x.items()}
    return x


def _to_cpu(x):
    import onion
    if isinstance(x, onion.Tensor):
        return x.detach().cpu()
    if isinstance(x, (list, tuple)):
        return [_to_cpu(v) for v in x]
    return x


def _to_torch(x):
    import torch

    import onion
    if isinstance(x, onion.Tensor):
        t = x.detach().cpu()
        return torch.from_numpy(t.float().numpy()).to(torch.bfloat16) if t.dtype is onion.bfloat16 \
            else torch.from_numpy(t.numpy().copy())
    if isinstance(x, (list, tuple)):
        return [_to_torch(v) for v in x]
    return x


def _compare(ro, rt, where):
    """Values, dtypes and shapes of onion's CUDA result against PyTorch's (strides are the device's business)."""
    import numpy as np
    import torch

    import onion
    if isinstance(rt, torch.Tensor):
        if not isinstance(ro, onion.Tensor):
            raise AssertionError(f"{where}: expected a Tensor, got {type(ro).__name__}")
        if str(ro.dtype).split(".")[-1] != str(rt.dtype).split(".")[-1] or tuple(ro.shape) != tuple(rt.shape):
            raise AssertionError(f"{where}: {ro.dtype}{tuple(ro.shape)} vs torch {rt.dtype}{tuple(rt.shape)}")
        if rt.dtype == torch.bfloat16:
            ro, rt = ro.float(), rt.float()
        a = np.asarray(ro.resolve_conj().resolve_neg().numpy())
        b = rt.detach().resolve_conj().resolve_neg().cpu().numpy()
        tol = 1e-4 if rt.is_floating_point() or rt.is_complex() else 0
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
    elif isinstance(rt, (list, tuple)):
        if len(ro) != len(rt):
            raise AssertionError(f"{where}: {len(ro)} results vs torch {len(rt)}")
        for i, (a, b) in enumerate(zip(ro, rt)):
            _compare(a, b, f"{where}[{i}]")


def opinfo_on_cuda(dtypes=("float32", "int64"), max_ops=None, names=None, device="cuda", out=print,
                   budget_s=None) -> dict:
    """One sample per OpInfo entry and dtype, run on ``device`` and compared with PyTorch's result for the
    same sample (on the CPU, or on CUDA when torch has it).  ``budget_s``: stop starting new operators after
    that many seconds (CuPy compiles each new kernel, so a cold cache costs most).  Returns counts and the
    failures."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "opinfo"))
    import torch

    from opinfo_convert import Unconvertible, to_onion
    from opinfo_entries import entries, entry_is_seeded
    tdev = "cuda" if torch.cuda.is_available() else "cpu"
    stats = {"passed": 0, "failed": 0, "skipped": 0, "failures": []}
    # values left uninitialised, an argument PyTorch wants on the CPU (the sample's devices are not kept), or
    # a dtype CuPy has not (bfloat16: refused on CUDA with its own error)
    unchecked = {"empty_like", "new_empty", "new_empty_strided", "empty", "empty_strided", "empty_permuted",
                 "tensor_split", "bfloat16"}
    chosen = [e for e in entries() if e.function is not None and not entry_is_seeded(e.op)
              and (names is None or e.key in names) and e.key not in unchecked]
    t0 = time.perf_counter()
    stats["operators"] = 0
    for e in chosen[:max_ops]:
        if budget_s is not None and time.perf_counter() - t0 > budget_s:
            out(f"OpInfo on {device}: time budget of {budget_s:.0f}s spent after {stats['operators']} of "
                f"{len(chosen)} operators")
            break
        stats["operators"] += 1
        for dname in dtypes:
            dt = getattr(torch, dname)
            if dt not in e.op.supported_dtypes("cpu"):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sample = next(iter(e.op.sample_inputs("cpu", dt, requires_grad=False)))
                    args = _to_device(to_onion([sample.input, *sample.args], "cpu"), device)
                    kwargs = _to_device(to_onion(dict(sample.kwargs), "cpu"), device)
                    t_args = [a.to(tdev) if isinstance(a, torch.Tensor) else a for a in [sample.input, *sample.args]]
                    rt = e.op(*t_args, **sample.kwargs)
            except (Unconvertible, StopIteration, RuntimeError, TypeError, ValueError):
                stats["skipped"] += 1
                continue
            where = f"{e.key}[{dname}]"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ro = _to_cpu(e.function(*args, **kwargs))
                try:
                    _compare(ro, rt, where)
                except AssertionError:
                    # where onion's CPU result already differs from PyTorch's (indices of ties, a different
                    # algorithm), the CUDA result must be onion's CPU result
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        rc = e.function(*to_onion([sample.input, *sample.args], "cpu"),
                                        **to_onion(dict(sample.kwargs), "cpu"))
                    try:
                        _compare(_to_cpu(rc), rt, where)
                    except AssertionError:
                        _compare(ro, _to_torch(rc), where + " (against onion on the CPU)")
                    else:
                        raise
                stats["passed"] += 1
            except AssertionError as exc:
                stats["failed"] += 1
                stats["failures"].append(f"{where}: {' '.join(str(exc).split())[:160]}")
            except Exception as exc:  # noqa: BLE001 - every failure is reported, the run goes on
                try:          # onion refusing the sample on the CPU as well is not CUDA's failure
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e.function(*to_onion([sample.input, *sample.args], "cpu"), **to_onion(dict(sample.kwargs), "cpu"))
                except type(exc):
                    stats["skipped"] += 1
                    continue
                except Exception:  # noqa: BLE001
                    pass
                stats["failed"] += 1
                stats["failures"].append(f"{where}: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
    out(f"OpInfo on {device}: {stats['passed']} passed, {stats['failed']} failed, {stats['skipped']} skipped "
        f"(one sample per operator and dtype, compared with torch on {tdev})")
    for f in stats["failures"][:40]:
        out("  FAIL " + f)
    return stats


# --- throughput --------------------------------------------------------------------------------------
def _time(fn, sync, reps=10) -> float:
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t0) / reps


SIZES = {"add": 16 << 20, "matmul": 4096, "batch": 512, "hidden": 1024}


def throughput(sizes=SIZES, out=print) -> dict:
    """Seconds per call of each case for onion on CUDA and PyTorch on CUDA (None without it), printed as a
    table with the ratio."""
    import torch

    import onion
    rows = []
    n, m, bsz, h = sizes["add"], sizes["matmul"], sizes["batch"], sizes["hidden"]

    def cases(lib, dev, sync):
        a, b = lib.rand(n, device=dev), lib.rand(n, device=dev)
        m1, m2 = lib.rand(m, m, device=dev), lib.rand(m, m, device=dev)
        x, y = lib.rand(bsz, h, device=dev), lib.rand(bsz, 1, device=dev)
        w1 = lib.rand(h, h, device=dev, requires_grad=True)
        w2 = lib.rand(h, 1, device=dev, requires_grad=True)

        def step():
            loss = ((x @ w1).relu() @ w2 - y).pow(2).mean()
            loss.backward()
            with lib.no_grad():
                for w in (w1, w2):
                    w -= 1e-3 * w.grad
                    w.grad = None
        return {f"add {n >> 20}M float32" if n >= 1 << 20 else f"add {n} float32": _time(lambda: a + b, sync),
                f"matmul {m}x{m} float32": _time(lambda: m1 @ m2, sync, reps=5),
                f"MLP step {bsz}x{h}x{h}x1": _time(step, sync)}

    onion_cuda = cases(onion, "cuda", onion.cuda.synchronize)
    torch_cuda = cases(torch, "cuda", torch.cuda.synchronize) if torch.cuda.is_available() else None
    for name, t in onion_cuda.items():
        ref = torch_cuda[name] if torch_cuda else None
        rows.append((name, t, ref))
    out(f"{'case':28} {'onion cuda':>12} {'torch cuda':>12} {'ratio':>7}")
    for name, t, ref in rows:
        ref_s = f"{ref * 1e3:10.3f}ms" if ref else "-"
        ratio = f"{t / ref:6.2f}x" if ref else ""
        out(f"{name:28} {t * 1e3:10.3f}ms {ref_s:>12} {ratio:>7}")
    if torch_cuda is None:
        out("throughput against PyTorch CUDA skipped: the installed torch is a CPU build")
    return {"onion": onion_cuda, "torch": torch_cuda}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-install", action="store_true")
    p.add_argument("--find-links", default=os.environ.get("ONION_WHEELS"),
                   help="a folder of wheels for pip (machines without the network)")
    p.add_argument("--max-ops", type=int, default=None)
    p.add_argument("--opinfo-budget-s", type=float, default=150.0,
                   help="seconds the OpInfo sweep may take (the whole run should stay within 5 minutes)")
    args = p.parse_args(argv)
    reason = why_no_gpu()
    if reason is not None:
        print(f"gpu_check: cannot run: {reason}. It needs an NVIDIA GPU; run it where one is lent "
              "(python benchmarks/gpu_check.py).")
        return 0
    t0 = time.perf_counter()
    if not args.no_install:
        failed = install(args.find_links)
        if failed is not None:
            print(f"gpu_check: cannot run: {failed}")
            return 2
    sys.path.insert(0, ROOT)
    import onion
    if not onion.cuda.is_available():
        print("gpu_check: cannot run: CuPy does not see the GPU (onion.cuda.is_available() is False)")
        return 1
    print(f"device: {onion.cuda.get_device_name()}, {onion.cuda.device_count()} GPU(s)", flush=True)
    stats = opinfo_on_cuda(max_ops=args.max_ops, budget_s=args.opinfo_budget_s)
    print(f"[{time.perf_counter() - t0:.0f}s] cuda-marked tests:", flush=True)
    rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "cuda", "-p", "no:cacheprovider",
                         "tests/backends"], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}).returncode
    print(f"[{time.perf_counter() - t0:.0f}s] throughput:", flush=True)
    throughput()
    print(f"[{time.perf_counter() - t0:.0f}s] done")
    return 0 if rc == 0 and stats["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
