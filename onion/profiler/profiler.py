"""``onion.profiler.profile``, ``record_function``, ``schedule``, ``tensorboard_trace_handler``.

The events come from the dispatcher (see ``onion.dispatch.profiling`` for how recording costs nothing
while off): one per operator call with the calls it made nested inside, one per autograd node as
PyTorch names them, one per backend kernel run (onion's own rows, named by the NumPy function and
dtype, linked to the operator that ran them), and the ``record_function`` blocks.
"""
from __future__ import annotations

import gzip
import os
import socket
import time
import warnings
from enum import Enum

from ..autograd.profiler import ProfilerActivity, _to_events, record_function, start_recording, stop_recording
from ..autograd.profiler_util import EventList


def supported_activities() -> set:
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """The step -> ``ProfilerAction`` function PyTorch's ``schedule`` returns: ``skip_first`` steps, then
    cycles of ``wait`` idle, ``warmup`` and ``active`` recorded steps (the last one saves), ``repeat``
    cycles (0: forever).  ``skip_first_wait`` drops the first cycle's wait."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")

    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step should be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _default_schedule(_step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False):
    """An ``on_trace_ready`` that writes ``<worker>.<ns>.pt.trace.json[.gz]`` into ``dir_name``."""
    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())
            os.remove(path)
    return handler


class _KinetoProfile:
    """The recording half (``start``/``stop``, results); ``profile`` adds the schedule."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None):
        acts = set(activities) if activities is not None else supported_activities()
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"activities must be ProfilerActivity values, got {a!r}")
        self.activities = acts
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.acc_events = acc_events
        self._recorder = None
        self._events: EventList | None = None
        self._warned_cycles = False

    def _start_trace(self) -> None:
        if self._events is not None and not self.acc_events and not self._warned_cycles:
            self._warned_cycles = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                          "cycle will be reported. To keep events across cycles, set acc_events=True.",
                          stacklevel=3)
        self._recorder = start_recording(self.record_shapes, self.with_stack, self.profile_memory)

    def _stop_trace(self) -> None:
        rec = self._recorder
        if rec is None:
            return
        stop_recording(rec)
        self._recorder = None
        events = _to_events(rec)
        if self.acc_events and self._events is not None:
            events = EventList(list(self._events) + list(events), profile_memory=rec.profile_memory,
                               trace_meta=events._trace_meta)
        self._events = events

    def events(self) -> EventList:
        if self._events is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        if self._events is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self._events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str) -> None:
        if self._events is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        if path.endswith(".gz"):
            tmp = path[:-3]
            self._events.export_chrome_trace(tmp)
            with open(tmp, "rb") as src, gzip.open(path, "wb") as dst:
                dst.write(src.read())
            os.remove(tmp)
        else:
            self._events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if self._events is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._events.export_stacks(path, metric)


class profile(_KinetoProfile):
    """``with onion.profiler.profile(...) as prof: ...`` or ``start()`` / ``step()`` / ``stop()``."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is None and use_cuda:
            activities = {ProfilerActivity.CPU, ProfilerActivity.CUDA}
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events)
        self.schedule = schedule if schedule is not None else _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_rec = None
        self._started = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()

    def _recording(self, action) -> bool:
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _open_step(self):
        if self.record_steps and self._recorder is not None:
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def _close_step(self):
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None

    def _save(self):
        self._close_step()
        self._stop_trace()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def start(self) -> None:
        self._started = True
        if self._recording(self.current_action):
            self._start_trace()
        self._open_step()

    def stop(self) -> None:
        self._close_step()
        if self._recorder is not None:
            self._save()
        self._started = False

    def step(self) -> None:
        """Advance the schedule one step; a recorded span that ends here is saved (``on_trace_ready``)."""
        if not self._started:
            return          # as PyTorch: step() on a profiler not started does nothing
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._close_step()
        if self._recording(prev) and (prev is ProfilerAction.RECORD_AND_SAVE
                                      or not self._recording(self.current_action)):
            self._save()
        if self._recording(self.current_action) and self._recorder is None:
            self._start_trace()
        self._open_step()
