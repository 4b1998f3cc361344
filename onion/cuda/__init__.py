"""``onion.cuda``: devices, streams, events, memory statistics and seeding of the CUDA backend (CuPy).

Without CuPy or a GPU it behaves as PyTorch built without CUDA: ``is_available()`` is False,
``device_count()`` 0, the memory statistics 0, ``manual_seed`` does nothing, and what needs a device
raises PyTorch's exception type (an AssertionError for lazy initialisation) with onion's words.
Everything here talks to the backend's runtime methods (onion/backends/cuda.py), so a stand-in
backend exercises it without a GPU.
"""
from __future__ import annotations

import contextlib

from ..backends.base import BACKENDS, NO_CUDA
from ..core.device import device as _device_cls
from ..core.generator import nondeterministic_seed

__all__ = ["is_available", "device_count", "current_device", "set_device", "device", "device_of", "synchronize",
           "Stream", "Event", "stream", "current_stream", "default_stream", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "empty_cache", "get_device_name", "get_device_capability", "get_device_properties", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed", "is_initialized", "init"]

_KERNEL_LIBS: list = []        # the Library of the CUDA random kernels, while a CUDA backend is installed


def _backend():
    return BACKENDS.get("cuda")


def _lazy_init():
    b = BACKENDS.get("cuda")
    if b is None:
        raise AssertionError(NO_CUDA)
    return b


def is_available() -> bool:
    b = _backend()
    return b is not None and b.device_count() > 0


def device_count() -> int:
    b = _backend()
    return 0 if b is None else b.device_count()


def is_initialized() -> bool:
    return _backend() is not None


def init() -> None:
    _lazy_init()


def current_device() -> int:
    return _lazy_init().current_device()


def _get_device_index(dev, optional: bool = True) -> int:
    """A device index from an int, a string, an ``onion.device`` or None (the current device)."""
    if isinstance(dev, str):
        dev = _device_cls(dev)
    if isinstance(dev, _device_cls):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        idx = dev.index
    else:
        idx = dev
    if idx is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{dev}")
        return current_device()
    return int(idx)


def set_device(device) -> None:
    idx = _get_device_index(device)
    if idx >= 0:
        _lazy_init().set_device(idx)


class device:
    """Context manager that makes ``device`` current (an index, a ``cuda`` device or None: no change)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return None
        b = _backend()
        if b is None:
            raise RuntimeError(NO_CUDA)
        self.prev_idx = b.current_device()
        if self.prev_idx != self.idx:
            b.set_device(self.idx)
        return None

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != self.idx:
            _backend().set_device(self.prev_idx)
        return False


class device_of(device):
    """``device`` of a tensor's device (a CPU tensor: no change)."""

    def __init__(self, obj):
        super().__init__(obj.device.index if obj.is_cuda else None)


def synchronize(device=None) -> None:
    b = _lazy_init()
    b.synchronize(_get_device_index(device))


# --- device properties -----------------------------------------------------------------------------------
class _CudaDeviceProperties:
    """What ``get_device_properties`` returns (the fields PyTorch's prints)."""

    def __init__(self, props: dict):
        for k, v in props.items():
            setattr(self, k, v)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    b = _lazy_init()
    idx = _get_device_index(device)
    if idx < 0 or idx >= b.device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(b.device_properties(idx))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return p.major, p.minor


# --- memory ----------------------------------------------------------------------------------------------
def _memory_stat(method: str, device) -> int:
    b = _backend()
    if b is None:
        return 0
    return getattr(b, method)(_get_device_index(device))


def memory_allocated(device=None) -> int:
    """Bytes held by tensors (CuPy's memory pool: ``used_bytes``)."""
    return _memory_stat("memory_allocated", device)


def max_memory_allocated(device=None) -> int:
    return _memory_stat("max_memory_allocated", device)


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds (CuPy's memory pool: ``total_bytes``)."""
    return _memory_stat("memory_reserved", device)


def max_memory_reserved(device=None) -> int:
    return _memory_stat("max_memory_reserved", device)


def reset_peak_memory_stats(device=None) -> None:
    _lazy_init().reset_peak_memory_stats(_get_device_index(device))


def empty_cache() -> None:
    b = _backend()
    if b is not None:
        b.empty_cache()


# --- random numbers --------------------------------------------------------------------------------------
def manual_seed(seed) -> None:
    """Seed the current device's generator (CuPy's; PyTorch's CUDA numbers are not reproduced)."""
    seed = int(seed)
    b = _backend()
    if b is not None:
        b.manual_seed(seed, b.current_device())


def manual_seed_all(seed) -> None:
    seed = int(seed)
    b = _backend()
    if b is not None:
        for i in range(b.device_count()):
            b.manual_seed(seed, i)


def seed() -> None:
    manual_seed(nondeterministic_seed())


def seed_all() -> None:
    manual_seed_all(nondeterministic_seed())


def initial_seed() -> int:
    b = _lazy_init()
    return b.initial_seed(b.current_device())


# --- streams and events ----------------------------------------------------------------------------------
class Stream:
    """A CUDA stream (CuPy's ``cupy.cuda.Stream``) on ``device``."""

    def __init__(self, device=None, priority: int = 0, *, _raw=None):
        b = _backend()
        if b is None:
            raise RuntimeError(f"onion.cuda.Stream requires CUDA support ({NO_CUDA})")
        self.device = _device_cls("cuda", _get_device_index(device))
        self._raw = _raw if _raw is not None else b.new_stream(self.device.index, priority)

    @property
    def cuda_stream(self) -> int:
        return int(getattr(self._raw, "ptr", 0))

    def synchronize(self) -> None:
        self._raw.synchronize()

    def query(self) -> bool:
        return bool(self._raw.done)

    def wait_event(self, event) -> None:
        self._raw.wait_event(event._raw)

    def wait_stream(self, stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and (self._raw is other._raw or self._raw == other._raw)

    def __hash__(self):
        return hash((self.cuda_stream, self.device))

    def __repr__(self):
        return f"<onion.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


def current_stream(device=None) -> Stream:
    b = _lazy_init()
    idx = _get_device_index(device)
    return Stream(idx, _raw=b.current_stream(idx))


def default_stream(device=None) -> Stream:
    b = _lazy_init()
    idx = _get_device_index(device)
    return Stream(idx, _raw=b.default_stream(idx))


@contextlib.contextmanager
def stream(s):
    """Make ``s`` the current stream inside the block (None: no change)."""
    if s is None:
        yield
        return
    with s._raw:
        yield


class Event:
    """A CUDA event: ``record`` on a stream, ``synchronize``, ``elapsed_time`` (milliseconds) to another."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        b = _backend()
        if b is None:
            raise RuntimeError(f"onion.cuda.Event requires CUDA support ({NO_CUDA})")
        self.enable_timing = bool(enable_timing)
        self._raw = b.new_event(self.enable_timing, bool(blocking), bool(interprocess))
        self._recorded = False

    def record(self, stream=None) -> None:
        s = current_stream() if stream is None else stream
        self._raw.record(s._raw)
        self._recorded = True

    def wait(self, stream=None) -> None:
        s = current_stream() if stream is None else stream
        s.wait_event(self)

    def query(self) -> bool:
        return bool(self._raw.done)

    def synchronize(self) -> None:
        self._raw.synchronize()

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _lazy_init().elapsed_ms(self._raw, end_event._raw)

    def __repr__(self):
        return f"<onion.cuda.Event {'recorded' if self._recorded else 'uninitialized'}>"


def _install_kernels() -> None:
    """Register the CUDA random kernels once a CUDA backend is there (at import, or after a stand-in)."""
    if _backend() is not None and not _KERNEL_LIBS:
        from ..backends.cpu_fallback import register_cpu_fallback
        from . import random_kernels
        _KERNEL_LIBS.append(random_kernels.register())
        _KERNEL_LIBS.append(register_cpu_fallback("CUDA"))     # the kit's fallback, as any backend's


def _uninstall_kernels() -> None:
    while _KERNEL_LIBS:
        _KERNEL_LIBS.pop()._destroy()


_install_kernels()
