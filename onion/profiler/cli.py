"""``python -m onion profile script.py``: run a script under the profiler and write what it found.

Writes ``<out>/<script>.table.txt`` (``key_averages().table``), ``<out>/<script>.trace.json`` (the chrome
trace: open it in Perfetto or chrome://tracing) and, when matplotlib is installed (the ``plot`` extra),
``<out>/<script>.png``: the operators with the most self time, as horizontal bars."""
from __future__ import annotations

import os
import runpy
import sys

from .profiler import ProfilerActivity, profile


def top_rows(events, n: int):
    """The ``n`` operators (not kernels, blocks or nodes) with the most self time, most first."""
    rows = [r for r in events.key_averages() if r.key.startswith("aten::")]
    rows.sort(key=lambda r: r.self_cpu_time_total, reverse=True)
    return rows[:n]


def plot(rows, path: str, title: str) -> bool:
    """A bar chart of ``rows``' self CPU time; False when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r.key for r in reversed(rows)]
    times = [r.self_cpu_time_total / 1000.0 for r in reversed(rows)]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    ax.barh(names, times, color="#c0504d")
    ax.set_xlabel("self CPU time (ms)")
    ax.set_title(title)
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
