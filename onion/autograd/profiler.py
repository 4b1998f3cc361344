"""``onion.autograd.profiler``: the names PyTorch users import from ``torch.autograd.profiler``.

``profile`` here is the older autograd profiler (``enabled``, ``use_cuda``, ``record_shapes``,
``profile_memory``, ``with_stack``; ``function_events``, ``table``, ``total_average``), recording
through the same dispatcher hooks as ``onion.profiler.profile``."""
from __future__ import annotations

import functools
import time
import types
from enum import Enum

from ..dispatch import profiling as _profiling
from ..dispatch.dispatcher import dispatcher as _dispatcher
from .graph import Node
from .profiler_util import DeviceType, EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg", "DeviceType",
           "ProfilerActivity"]


class ProfilerActivity(Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


# --- autograd nodes ----------------------------------------------------------------------------------
_PATCHED: list = []          # (node class, its own apply) while recording


def _node_classes():
    seen, todo = [], [Node]
    while todo:
        c = todo.pop()
        seen.append(c)
        todo.extend(c.__subclasses__())
    return seen


def _profiled_apply(orig):
    def apply(self, grads):
        rec = _profiling.ACTIVE[0]
        if rec is None:
            return orig(self, grads)
        top = rec.top()
        if top is not None and top.kind == "autograd" and top.handle is self:
            return orig(self, grads)        # a subclass's apply calling its base's: one node event
        name = self.name()
        seq = getattr(self, "_sequence_nr", -1)
        outer = rec.begin(f"autograd::engine::evaluate_function: {name}", "autograd")
        outer.seq_nr = seq
        inner = rec.begin(name, "autograd", self)
        inner.seq_nr = seq
        try:
            return orig(self, grads)
        finally:
            rec.end(inner)
            rec.end(outer)
    apply.__wrapped__ = orig
    return apply


def patch_nodes() -> None:
    """Wrap every autograd node class's own ``apply`` (the engine is untouched, so a backward outside
    the profiler runs exactly the code it always runs)."""
    for cls in _node_classes():
        fn = cls.__dict__.get("apply")
        if isinstance(fn, types.FunctionType):
            _PATCHED.append((cls, fn))
            cls.apply = _profiled_apply(fn)


def unpatch_nodes() -> None:
    while _PATCHED:
        cls, fn = _PATCHED.pop()
        cls.apply = fn


def start_recording(record_shapes=False, with_stack=False, profile_memory=False):
    """A new recorder, recording: the dispatcher's caches swapped, the node classes wrapped."""
    rec = _profiling.Recorder(record_shapes, with_stack, profile_memory)
    _profiling.start(rec, _dispatcher)
    patch_nodes()
    return rec


def stop_recording(rec) -> None:
    if _profiling.ACTIVE[0] is rec:
        unpatch_nodes()
    _profiling.stop(rec, _dispatcher)


def _to_events(rec: _profiling.Recorder) -> EventList:
    """The recorder's raw intervals as ``FunctionEvent``s, parents and kernels linked."""
    made = {}
    out = EventList(profile_memory=rec.profile_memory,
                    trace_meta={"base_us": rec.wall0_us, "trace_name": "onion"})
    end_default = time.perf_counter_ns()
    for raw in rec.events:
        end = raw.end_ns if raw.end_ns is not None else end_default
        ev = FunctionEvent(raw.id, raw.name, raw.tid, (raw.start_ns - rec.t0_ns) / 1000.0,
                           (end - rec.t0_ns) / 1000.0, raw.kind, input_shapes=raw.input_shapes,
                           input_types=raw.input_types, stack=raw.stack, self_mem=raw.mem,
                           sequence_nr=raw.seq_nr)
        made[id(raw)] = ev
        if raw.device is not None:            # a kernel timed on its device (CUDA events)
            timer, token = raw.device
            _device_row(ev, timer.kernel_timer_us(token))
        if raw.parent is not None and id(raw.parent) in made:
            parent = made[id(raw.parent)]
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
        if raw.op is not None and id(raw.op) in made:
            ev.op = made[id(raw.op)]
            ev.op.kernels.append(ev)
        out.append(ev)
    return _remove_dup_nodes(out)


def _device_row(ev, device_us: float) -> None:
    """A kernel event that ran on the GPU: its row (onion's kernel track) also gives the device time."""
    ev.device_time = ev.device_time_total = ev.self_device_time_total = device_us


def _remove_dup_nodes(events: EventList) -> EventList:
    """An event that is its parent's only (CPU) child and has the parent's name is folded into the parent,
    as PyTorch's EventList does when it builds the tree: a composite overload calling another overload of
    its own operator (``mean`` -> ``mean.dim``, ``mul.Scalar`` -> ``mul.Tensor``) shows as one row."""
    gone = set()
    for ev in events:
        parent = ev.cpu_parent
        if parent is None or parent.name != ev.name or ev.device_type is DeviceType.KERNEL:
            continue
        if sum(1 for c in parent.cpu_children if c.device_type is not DeviceType.KERNEL) != 1:
            continue
        # ``parent`` may itself have been folded into its own parent already: it is still the live holder
        parent.cpu_children = [c for c in parent.cpu_children if c is not ev] + ev.cpu_children
        for c in ev.cpu_children:
            c.cpu_parent = parent
        for k in ev.kernels:
            k.op = parent
        parent.kernels = parent.kernels + ev.kernels
        parent._self_mem += ev._self_mem          # its time and bytes become the parent's own
        gone.add(id(ev))
    if not gone:
        return events
    kept = EventList([e for e in events if id(e) not in gone], profile_memory=events._profile_memory,
                     trace_meta=events._trace_meta)
    return kept


class record_function:
    """A named block in the profile: ``with record_function("forward"): ...`` or ``@record_function("f")``.
    Outside a recording profiler it costs one check."""

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._ev = None
        self._rec = None

    def __enter__(self):
        rec = _profiling.ACTIVE[0]
        if rec is not None:
            self._rec = rec
            self._ev = rec.begin(self.name, "user")
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._ev is not None:
            self._rec.end(self._ev)
            self._ev = self._rec = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


class profile:
    """``with onion.autograd.profiler.profile() as prof: ...; print(prof.key_averages().table())``."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.entered = False
        self.function_events: EventList | None = None
        self._rec = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._rec = start_recording(self.record_shapes, self.with_stack, self.profile_memory)
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self.enabled or self._rec is None:
            return False
        stop_recording(self._rec)
        self.function_events = _to_events(self._rec)
        self._rec = None
        self.entered = False
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    def events(self):
        self._check_finish()
        return self.function_events

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        self._check_finish()
        return str(self.function_events)
