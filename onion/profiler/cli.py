"""``python -m onion profile script.py``: run a script under the profiler and write what it found.

Writes ``<out>/<script>.table.txt`` (``key_averages().table``), ``<out>/<script>.trace.json`` (the chrome
trace: open it in Perfetto or chrome://tracing) and, when matplotlib is installed (the ``plot`` extra),
``<out>/<script>.png``: the operators with the most self time, as horizontal bars."""
from __future__ import annotations

import os
import runpy
import sys

from .profiler import ProfilerActivity, profile


def top_rows(events, n: int) -> list:
    """The ``n`` operators with the most self time, kernels included: ``(name, overhead_us, kernel_us)``
    with the operator's own time outside its kernels (dispatch and Python) and the time in the backend
    kernels it ran (the kernel rows are the operator's children, so its self time leaves them out)."""
    overhead: dict = {}
    kernel: dict = {}
    for e in events:
        if e.name.startswith("aten::"):
            overhead[e.name] = overhead.get(e.name, 0.0) + e.self_cpu_time_total
            kernel[e.name] = kernel.get(e.name, 0.0) + sum(k.cpu_time_total for k in e.kernels)
    rows = sorted(((name, overhead[name], kernel[name]) for name in overhead), key=lambda r: r[1] + r[2],
                  reverse=True)
    return rows[:n]


def plot(rows, path: str, title: str) -> bool:
    """Horizontal bars of ``rows`` (operator overhead, then kernel time); False without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(reversed(rows))
    names = [r[0] for r in rows]
    over = [r[1] / 1000.0 for r in rows]
    kern = [r[2] / 1000.0 for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.4))
    ys = list(range(len(rows)))
    ax.barh([y + 0.2 for y in ys], kern, height=0.4, color="#4f81bd", label="in backend kernels (NumPy)")
    ax.barh([y - 0.2 for y in ys], over, height=0.4, color="#c0504d", label="operator overhead (dispatch, Python)")
    ax.set_yticks(ys)
    ax.set_yticklabels(names)
    ax.set_xscale("log")
    ax.set_xlabel("self CPU time (ms, log scale)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def run(script: str, script_args=(), out_dir: str | None = None, sort_by: str = "self_cpu_time_total",
        row_limit: int = 30, record_shapes: bool = False, profile_memory: bool = False, top: int = 15,
        stream=None) -> dict:
    """Profile ``script`` (run as ``__main__`` with ``script_args``); returns the paths written."""
    stream = sys.stdout if stream is None else stream
    if not os.path.isfile(script):
        raise FileNotFoundError(f"python -m onion profile: no such script: {script}")
    out_dir = out_dir or os.path.dirname(os.path.abspath(script))
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(script))[0])
    argv = sys.argv
    sys.argv = [script, *script_args]
    try:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=record_shapes,
                     profile_memory=profile_memory) as prof:
            runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = argv
    table = prof.key_averages(group_by_input_shape=record_shapes).table(sort_by=sort_by, row_limit=row_limit)
    written = {"table": stem + ".table.txt", "trace": stem + ".trace.json"}
    with open(written["table"], "w") as f:
        f.write(table)
    prof.export_chrome_trace(written["trace"])
    if plot(top_rows(prof.events(), top), stem + ".png", f"{os.path.basename(script)}: top operators by self time"):
        written["png"] = stem + ".png"
    stream.write(table)
    for kind, path in written.items():
        stream.write(f"{kind}: {path}\n")
    return written
