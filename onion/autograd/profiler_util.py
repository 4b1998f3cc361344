"""What the profiler returns: ``FunctionEvent`` (one interval), ``FunctionEventAvg`` (one row of
``key_averages``) and ``EventList`` (``table``, ``export_chrome_trace``, ``export_stacks``), shaped as
``torch.autograd.profiler_util``'s so that code written against PyTorch reads them unchanged.
Times are microseconds (floats), memory bytes."""
from __future__ import annotations

import json
import os
from enum import Enum


class DeviceType(Enum):
    CPU = 0
    CUDA = 1
    KERNEL = 100        # onion's own: the backend kernel a CPU operator ran (NumPy/CuPy)


class _Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_share(us: float, total: float) -> str:
    if total == 0:
        return "NaN"
    return f"{us * 100.0 / total:.2f}%"


def format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _TimeStrings:
    @property
    def self_cpu_time_total_str(self):
        return format_time(self.self_cpu_time_total)

    @property
    def cpu_time_total_str(self):
        return format_time(self.cpu_time_total)

    @property
    def cpu_time_str(self):
        return format_time(self.cpu_time)

    # no device timings on onion's CPU rows: PyTorch's device columns read zero
    self_device_time_total = 0.0
    device_time_total = 0.0
    device_time = 0.0
    self_device_memory_usage = 0
    device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = False
    is_remote = False
    is_legacy = False
    use_device = None
    overload_name = ""


class FunctionEvent(_TimeStrings):
    """One recorded interval: an operator call (``aten::mm``), a ``record_function`` block, an autograd
    node (``MulBackward0`` and its ``autograd::engine::evaluate_function: ...``), or a backend kernel
    (``device_type == DeviceType.KERNEL``, named by the NumPy function and dtype, ``op`` its operator)."""

    def __init__(self, id, name, thread, start_us, end_us, kind, input_shapes=None, input_types=None,
                 stack=None, self_mem=0, sequence_nr=-1):
        self.id = id
        self.trace_name = name                  # as recorded (ProfilerStep#3)
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"              # the steps aggregate into one row, as PyTorch's
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range = _Interval(start_us, end_us)
        self.kind = kind
        self.device_type = DeviceType.KERNEL if kind == "kernel" else DeviceType.CPU
        self.is_user_annotation = kind == "user"
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.stack = stack if stack is not None else []
        self._self_mem = self_mem
        self.sequence_nr = sequence_nr
        self.cpu_children: list = []
        self.cpu_parent = None
        self.kernels: list = []          # kernel events this operator ran (linked both ways)
        self.op = None
        self.count = 1

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def self_cpu_memory_usage(self) -> int:
        return self._self_mem

    @property
    def cpu_memory_usage(self) -> int:
        return self._self_mem + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_total_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_TimeStrings):
    """One ``key_averages`` row: the events with one key (and shapes / stack when grouped)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False

    def add(self, ev):
        if self.key is None:
            self.key = ev.key
            self.input_shapes = ev.input_shapes
            self.stack = ev.stack
            self.device_type = ev.device_type
            self.is_user_annotation = ev.is_user_annotation
            self.cpu_parent = ev.cpu_parent
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


_STACK_METRICS = ("self_cpu_time_total",)


class EventList(list):
    """A list of ``FunctionEvent`` (or, from ``key_averages``, ``FunctionEventAvg``)."""

    def __init__(self, *args, profile_memory=False, trace_meta=None, **kwargs):
        kwargs.pop("use_device", None)
        kwargs.pop("with_flops", None)
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._trace_meta = trace_meta or {}

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        rows: dict = {}
        for e in self:
            key = (e.key,)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg()
            row.add(e)
        out = EventList(rows.values(), profile_memory=self._profile_memory)
        if not group_by_input_shapes:
            for r in out:
                r.input_shapes = None
        if group_by_stack_n == 0:
            for r in out:
                r.stack = None
        return out

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return build_table(self, sort_by=sort_by, row_limit=row_limit, header=header,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width,
                           profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                           time_unit=time_unit)

    def __str__(self):
        return self.table()

    def supported_export_stacks_metrics(self):
        return list(_STACK_METRICS)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """One line per event with a recorded stack: the frames outermost first, ``;``-joined, then the
        metric in whole microseconds (the folded format flame-graph tools read)."""
        if metric not in _STACK_METRICS:
            raise ValueError("metric should be one of: " + str(list(_STACK_METRICS)))
        bad = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for e in self:
                if e.stack and int(getattr(e, metric)) > 0:
                    frames = ";".join(s.translate(bad) for s in reversed(e.stack))
                    f.write(f"{frames};{e.name.translate(bad)} {int(getattr(e, metric))}\n")

    def export_chrome_trace(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(chrome_trace(self, self._trace_meta), f, indent=1)


# --- the table ---------------------------------------------------------------------------------------
def build_table(events, sort_by=None, row_limit=100, header=None, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                top_level_events_only=False, time_unit=None) -> str:
    """PyTorch's ``key_averages().table()`` layout: right-aligned columns two spaces apart, a dashed
    rule above and below the header, ``Self CPU time total`` at the end."""
    if not events:
        return ""
    events = list(events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events.sort(key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_w = min(max(len(e.key) for e in events) + 4, max_name_column_width or 10 ** 9)
    shapes_w = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width or 10 ** 9)
    src_w = None
    if stacks:
        src_w = min(max(len(s) for st in stacks for s in st) + 4, max_src_column_width or 10 ** 9)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_w] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(src_w)
        aligns.append("<")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    rule = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def unit(us, default):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return default

    def trim(path):
        if len(path) > src_w:
            path = path[len(path) - src_w:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [rule, row_format.format(*headers), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, format_share(e.self_cpu_time_total, total),
               unit(e.self_cpu_time_total, e.self_cpu_time_total_str),
               format_share(e.cpu_time_total, total), unit(e.cpu_time_total, e.cpu_time_total_str),
               unit(e.cpu_time, e.cpu_time_str)]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if stacks:
            row.append(trim(e.stack[0]) if e.stack else "")
        out.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for s in (e.stack or [])[1:]:
                out.append(row_format.format(*(blank + [trim(s)])))
            out.append(row_format.format(*(blank + [""])))
    out += [rule, f"Self CPU time total: {unit(total, format_time(total))}"]
    return "\n".join(out) + "\n"


# --- the chrome trace ----------------------------------------------------------------------------------
_CATEGORY = {"op": "cpu_op", "user": "user_annotation", "autograd": "cpu_op", "kernel": "kernel"}
KERNEL_TID = 7          # the kernels' own track (as a device stream), in the same process


def chrome_trace(events, meta) -> dict:
    """The Trace Event Format that chrome://tracing and Perfetto load: complete events (``ph: X``) with
    ``ts``/``dur`` in microseconds, and a flow (``ph: s`` at the operator, ``ph: f`` at its kernel,
    category ``ac2g`` as PyTorch links launches to kernels) per kernel."""
    pid = os.getpid()
    base = meta.get("base_us", 0.0)
    trace = []
    tids = sorted({e.thread for e in events if e.device_type is not DeviceType.KERNEL})
    trace.append({"ph": "M", "name": "process_name", "ts": base, "pid": pid, "tid": 0,
                  "args": {"name": "python"}})
    for t in tids:
        trace.append({"ph": "M", "name": "thread_name", "ts": base, "pid": pid, "tid": t,
                      "args": {"name": f"thread {t} (python)"}})
    if any(e.device_type is DeviceType.KERNEL for e in events):
        trace.append({"ph": "M", "name": "thread_name", "ts": base, "pid": pid, "tid": KERNEL_TID,
                      "args": {"name": "backend kernels"}})
    flow = 0
    for e in events:
        kernel = e.device_type is DeviceType.KERNEL
        args = {"External id": e.id}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes and not kernel:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_types
        if kernel:
            args["device"] = e.input_types[0] if e.input_types else "cpu"
            if e.op is not None:
                args["correlation"] = e.op.id
        if e.stack:
            args["Call stack"] = ";".join(reversed(e.stack))
        if e.self_cpu_memory_usage:
            args["Self CPU Mem"] = e.self_cpu_memory_usage
        ts = base + e.time_range.start
        trace.append({"ph": "X", "cat": _CATEGORY.get(e.kind, "cpu_op"), "name": e.trace_name, "pid": pid,
                      "tid": KERNEL_TID if kernel else e.thread, "ts": round(ts, 3),
                      "dur": round(e.cpu_time_total, 3), "args": args})
        if kernel and e.op is not None:
            flow += 1
            trace.append({"ph": "s", "id": flow, "pid": pid, "tid": e.op.thread, "cat": "ac2g", "name": "ac2g",
                          "ts": round(base + e.op.time_range.start, 3)})
            trace.append({"ph": "f", "id": flow, "pid": pid, "tid": KERNEL_TID, "cat": "ac2g", "name": "ac2g",
                          "ts": round(ts, 3), "bp": "e"})
    return {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
            "traceName": meta.get("trace_name", "onion"), "traceEvents": trace}
