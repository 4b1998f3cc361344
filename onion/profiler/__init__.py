"""``onion.profiler``: PyTorch's ``torch.profiler`` over onion's dispatcher (see ``onion.dispatch.profiling`` for
the zero-cost-when-off design and ``onion.autograd.profiler_util`` for the results)."""
from __future__ import annotations

from ..autograd.profiler_util import DeviceType, EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ..autograd.profiler import ProfilerActivity, record_function  # noqa: F401
from .profiler import (ProfilerAction, _KinetoProfile, profile, schedule, supported_activities,  # noqa: F401
                       tensorboard_trace_handler)

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "supported_activities", "tensorboard_trace_handler", "DeviceType"]
