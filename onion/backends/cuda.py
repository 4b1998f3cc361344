"""The CUDA backend on CuPy (optional: registered only when CuPy imports and sees a GPU).

Kernels reach the GPU through ``xp`` (CuPy follows NumPy's API: the generated ufunc loops, reductions,
indexing and ``matmul`` -> cuBLAS run unchanged on it); the rest of this class is the device runtime
that ``onion.cuda`` wraps (devices, streams, events, memory statistics, the random generators).  That
runtime is a small set of methods so that a test can stand in a NumPy-backed subclass for it
(tests/backends/fake_cuda.py) and exercise every line above the array namespace without a GPU.

Random numbers come from CuPy's generator, one per device, seeded by ``onion.cuda.manual_seed``:
PyTorch's CUDA stream (Philox, with its own offsets per kernel) is not reproduced, so seeded CUDA
draws differ from PyTorch's CUDA draws (as they differ between PyTorch's CPU and CUDA already).
"""
from __future__ import annotations

import numpy as np

from ..core.dispatch_key import K
from ..core.storage import Storage
from .base import Backend, register_backend

try:  # CuPy is optional (``pip install onion[cuda]``)
    import cupy as cp
    AVAILABLE = cp.cuda.runtime.getDeviceCount() > 0
except Exception:  # noqa: BLE001 - any import/driver failure means "no CUDA"
    cp = None
    AVAILABLE = False

DEFAULT_SEED = 67280421310721       # PyTorch's default_rng_seed_val, the seed before any manual_seed


def _index(device) -> int:
    return 0 if device is None or device.index is None else device.index


class CUDABackend(Backend):
    device_type = "cuda"
    key = K.CUDA

    def __init__(self, xp=None):
        self.xp = cp if xp is None else xp
        self._seeds: dict = {}          # device index -> seed of its generator
        self._rngs: dict = {}           # device index -> the generator (made on first draw)
        self._peak: dict = {}           # device index -> highest memory_allocated seen
        self._peak_reserved: dict = {}

    # --- memory and views ------------------------------------------------------------------
    def device_guard(self, index: int):
        """A context making device ``index`` current (CuPy allocates and launches there)."""
        return cp.cuda.Device(index)

    @staticmethod
    def check_dtype(np_dtype) -> None:
        """CuPy has no bfloat16 arrays (ml_dtypes' type is NumPy-only): refused with a clear error."""
        if getattr(np_dtype, "__name__", None) == "bfloat16" or str(np_dtype) == "bfloat16":
            raise TypeError("onion's CUDA backend has no bfloat16: CuPy arrays cannot hold it "
                            "(use float16 or float32 on CUDA)")

    def empty(self, shape, np_dtype, device=None):
        self.check_dtype(np_dtype)
        with self.device_guard(_index(device)):
            return self.xp.empty(shape, np_dtype)

    def empty_strided(self, shape, strides, np_dtype, device=None):
        from .cpu import strided_empty
        self.check_dtype(np_dtype)
        with self.device_guard(_index(device)):
            return strided_empty(self.xp, shape, strides, np_dtype)

    def view(self, storage, shape, strides, offset, np_dtype):
        item = np.dtype(np_dtype).itemsize
        return cp.ndarray(shape, np_dtype, storage.data.data + offset * item, tuple(s * item for s in strides))

    def storage_of(self, array, device):
        from ..core.device import device as _device
        dev = _device("cuda", array.device.id)
        item = array.dtype.itemsize
        if array.size == 0:
            return Storage(cp.empty(0, cp.uint8), 0, dev), 0
        extent = 1 + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // item
        flat = cp.ndarray((extent * item,), cp.uint8, array.data)
        return Storage(flat, extent * item, dev), 0

    def to_numpy(self, array):
        return cp.asnumpy(array)

    def from_numpy(self, array, device=None):
        self.check_dtype(array.dtype)
        with self.device_guard(_index(device)):
            return cp.asarray(array)

    def asarray(self, array, device):
        with self.device_guard(_index(device)):
            return cp.asarray(array)

    # --- devices ---------------------------------------------------------------------------
    def device_count(self) -> int:
        return cp.cuda.runtime.getDeviceCount()

    def current_device(self) -> int:
        return cp.cuda.runtime.getDevice()

    def set_device(self, index: int) -> None:
        cp.cuda.runtime.setDevice(index)

    def synchronize(self, index: int) -> None:
        cp.cuda.Device(index).synchronize()
        self.memory_allocated(index)            # samples the peak (CuPy's pool keeps none)

    def device_properties(self, index: int) -> dict:
        """What ``get_device_properties`` reports: name, capability, memory, multiprocessors."""
        p = cp.cuda.runtime.getDeviceProperties(index)
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        return {"name": name, "major": int(p["major"]), "minor": int(p["minor"]),
                "total_memory": int(p["totalGlobalMem"]), "multi_processor_count": int(p["multiProcessorCount"]),
                "L2_cache_size": int(p.get("l2CacheSize", 0)), "warp_size": int(p.get("warpSize", 32))}

    # --- memory statistics (CuPy's memory pool) ------------------------------------------------
    def memory_allocated(self, index: int) -> int:
        with self.device_guard(index):
            used = cp.get_default_memory_pool().used_bytes()
        if used > self._peak.get(index, 0):
            self._peak[index] = used
        return used

    def memory_reserved(self, index: int) -> int:
        with self.device_guard(index):
            total = cp.get_default_memory_pool().total_bytes()
        if total > self._peak_reserved.get(index, 0):
            self._peak_reserved[index] = total
        return total

    def max_memory_allocated(self, index: int) -> int:
        """The highest ``memory_allocated`` observed (CuPy's pool keeps no peak; onion samples it when
        asked and at every synchronize)."""
        return max(self.memory_allocated(index), self._peak.get(index, 0))

    def max_memory_reserved(self, index: int) -> int:
        return max(self.memory_reserved(index), self._peak_reserved.get(index, 0))

    def reset_peak_memory_stats(self, index: int) -> None:
        self._peak.pop(index, None)
        self._peak_reserved.pop(index, None)

    def empty_cache(self) -> None:
        cp.get_default_memory_pool().free_all_blocks()

    # --- streams and events ------------------------------------------------------------------
    def new_stream(self, index: int, priority: int = 0):
        with self.device_guard(index):
            return cp.cuda.Stream(non_blocking=False, priority=priority) if priority else cp.cuda.Stream()

    def current_stream(self, index: int):
        return cp.cuda.get_current_stream(index)

    def default_stream(self, index: int):
        return cp.cuda.Stream.null

    def new_event(self, enable_timing: bool, blocking: bool, interprocess: bool):
        return cp.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def elapsed_ms(self, start, end) -> float:
        return float(cp.cuda.get_elapsed_time(start, end))

    # --- random numbers ------------------------------------------------------------------------
    def manual_seed(self, seed: int, index: int) -> None:
        self._seeds[index] = int(seed) & ((1 << 64) - 1)
        self._rngs.pop(index, None)

    def initial_seed(self, index: int) -> int:
        return self._seeds.get(index, DEFAULT_SEED)

    def rng(self, index: int):
        """Device ``index``'s generator: NumPy's Generator API (``random``, ``standard_normal``,
        ``standard_exponential``, ``integers``), drawing on the device."""
        g = self._rngs.get(index)
        if g is None:
            with self.device_guard(index):
                g = self._rngs[index] = self._make_rng(self.initial_seed(index))
        return g

    def _make_rng(self, seed: int):
        return cp.random.default_rng(seed)

    # --- profiler: device time of a kernel ------------------------------------------------------
    def kernel_timer_start(self):
        start, end = self.new_event(True, False, False), self.new_event(True, False, False)
        start.record()
        return start, end

    def kernel_timer_stop(self, token) -> None:
        token[1].record()

    def kernel_timer_us(self, token) -> float:
        token[1].synchronize()
        return self.elapsed_ms(*token) * 1000.0


def install(backend: CUDABackend) -> None:
    """Register ``backend`` as the ``cuda`` device and load what rides on it (its random kernels, its
    profiler timer); the generated CUDA kernels are loaded by ``onion`` at import (or by the caller)."""
    register_backend(backend)
    from ..dispatch import profiling
    profiling.DEVICE_TIMERS[int(K.CUDA)] = backend


if AVAILABLE:
    install(CUDABackend())
