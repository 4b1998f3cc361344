"""A stand-in CUDA backend whose arrays are NumPy's, for testing the CUDA wiring without a GPU.

Its namespace has only the functions CuPy has, and its arrays refuse NumPy operands as CuPy's do, so a
kernel that would fail on CuPy fails here.  It subclasses the real ``CUDABackend`` and replaces only what
touches CuPy (arrays, the device runtime),
so the generated ``register_cuda.py`` kernels, the CUDA random kernels, ``onion.cuda`` and the profiler's
device timing run as they would on a GPU, with NumPy doing the arithmetic.  ``installed()`` puts it in
place and restores every registry afterwards.
"""
from __future__ import annotations

import contextlib
import copy
import importlib
import sys
import time
import types

import numpy as np

import onion
from onion.backends import cuda as _cuda_backend
from onion.backends.base import BACKEND_BY_KEY, BACKENDS
from onion.backends.cpu import storage_of_dense, strided_empty
from onion.core.tensor_impl import STORAGE_MAKERS
from onion.dispatch import profiling

from .cupy_names import CUPY, CUPYX_SCIPY_SPECIAL

DEVICES = 2


def _restricted(name, source, names):
    """A module named ``name`` holding only ``names`` of ``source``."""
    m = types.ModuleType(name)
    for n in names:
        setattr(m, n, getattr(source, n))
    return m


class DeviceArray(np.ndarray):
    """A NumPy array standing for device memory, refusing what CuPy's arrays refuse: a host (NumPy) array as
    an operand, and NumPy functions CuPy does not implement."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out") or ()
        for x in inputs + tuple(out):
            if type(x) is np.ndarray:
                raise TypeError(f"Unsupported type {type(x)} (a host array in {ufunc.__name__} on the device)")
        inputs = tuple(x.view(np.ndarray) if isinstance(x, DeviceArray) else x for x in inputs)
        if out:
            kwargs["out"] = tuple(o.view(np.ndarray) for o in out)
        return _device(getattr(ufunc, method)(*inputs, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ not in CUPY:
            raise TypeError(f"no implementation found for 'numpy.{func.__name__}' on CuPy arrays")
        return _device(super().__array_function__(func, types, args, kwargs))


def _device(r):
    if type(r) is np.ndarray:
        return r.view(DeviceArray)
    if isinstance(r, tuple):
        return tuple(_device(x) for x in r)
    return r


def _returning_device_arrays(fn):
    def wrapper(*args, **kwargs):
        return _device(fn(*args, **kwargs))
    wrapper.__name__ = getattr(fn, "__name__", "function")
    return wrapper


def cupy_like_numpy():
    """NumPy's functions under CuPy's name, only those CuPy has, making ``DeviceArray``s: the stand-in's
    ``xp``."""
    m = _restricted("cupy", np, CUPY)
    for n in CUPY:
        v = getattr(np, n)
        if callable(v) and not isinstance(v, (type, np.ufunc)):
            setattr(m, n, _returning_device_arrays(v))
    m.ndarray = DeviceArray
    return m


def _cupyx_modules() -> dict:
    """``cupyx.scipy.special`` as SciPy's functions that CuPy's has (what ``_special(xp)`` imports)."""
    import scipy.special
    special = _restricted("cupyx.scipy.special", scipy.special, CUPYX_SCIPY_SPECIAL)
    scipy_ = types.ModuleType("cupyx.scipy")
    scipy_.special = special
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = scipy_
    return {"cupyx": cupyx, "cupyx.scipy": scipy_, "cupyx.scipy.special": special}


class FakeStream:
    """cupy.cuda.Stream's interface: work is synchronous, so a stream is always done."""

    def __init__(self, backend, index):
        self.backend, self.index, self.ptr, self.done = backend, index, 0x1000 + id(self) % 0x1000, True
        self.waited = []

    def synchronize(self):
        pass

    def wait_event(self, event):
        self.waited.append(event)

    def __enter__(self):
        self.backend._stream_stack.append(self)
        return self

    def __exit__(self, *exc):
        self.backend._stream_stack.pop()
        return False


class FakeEvent:
    """cupy.cuda.Event's interface, timed with the host clock."""

    def __init__(self, timing):
        self.timing, self.t, self.done = timing, None, True

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


class NumpyCUDABackend(_cuda_backend.CUDABackend):
    """``cuda`` devices 0 and 1 whose memory is host memory, held in ``DeviceArray``s."""

    def __init__(self):
        super().__init__(xp=cupy_like_numpy())
        self._current = 0
        self._stream_stack = []
        self.synchronized = []
        self._null = [FakeStream(self, i) for i in range(DEVICES)]

    def device_guard(self, index):
        return contextlib.nullcontext()

    def empty(self, shape, np_dtype, device=None):
        self.check_dtype(np_dtype)
        return np.empty(shape, np_dtype).view(DeviceArray)

    def view(self, storage, shape, strides, offset, np_dtype):
        item = np.dtype(np_dtype).itemsize
        return DeviceArray(shape, np_dtype, storage.data, offset * item, tuple(s * item for s in strides))

    def empty_strided(self, shape, strides, np_dtype, device=None):
        self.check_dtype(np_dtype)
        return strided_empty(np, shape, strides, np_dtype).view(DeviceArray)

    def storage_of(self, array, device):
        return storage_of_dense(array.view(np.ndarray), onion.device("cuda", 0 if device is None else device.index
                                                                    or 0), np)

    def to_numpy(self, array):
        return np.array(array.view(np.ndarray) if isinstance(array, DeviceArray) else array)

    def from_numpy(self, array, device=None):
        self.check_dtype(np.asarray(array).dtype)
        return np.array(array).view(DeviceArray)

    def asarray(self, array, device):
        return np.asarray(array.view(np.ndarray) if isinstance(array, DeviceArray) else array).view(DeviceArray)

    def device_count(self):
        return DEVICES

    def current_device(self):
        return self._current

    def set_device(self, index):
        if not 0 <= index < DEVICES:
            raise RuntimeError("CUDA error: invalid device ordinal")
        self._current = index

    def synchronize(self, index):
        self.synchronized.append(index)

    def device_properties(self, index):
        return {"name": "Fake NumPy GPU", "major": 9, "minor": 0, "total_memory": 16 << 30,
                "multi_processor_count": 4, "L2_cache_size": 4 << 20, "warp_size": 32}

    def memory_allocated(self, index):
        return 0

    def memory_reserved(self, index):
        return 0

    def empty_cache(self):
        pass

    def new_stream(self, index, priority=0):
        return FakeStream(self, index)

    def current_stream(self, index):
        return self._stream_stack[-1] if self._stream_stack else self._null[index]

    def default_stream(self, index):
        return self._null[index]

    def new_event(self, enable_timing, blocking, interprocess):
        return FakeEvent(enable_timing)

    def elapsed_ms(self, start, end):
        return (end.t - start.t) * 1000.0

    def _make_rng(self, seed):
        return _DeviceRNG(np.random.default_rng(seed))


class _DeviceRNG:
    """NumPy's Generator drawing into ``DeviceArray``s (CuPy's draws on the device)."""

    def __init__(self, g):
        self.g = g

    def __getattr__(self, name):
        return _returning_device_arrays(getattr(self.g, name))


def _cuda_loops(formulas) -> dict:
    """The per-dtype loops made for the ``cuda`` backend so far, taken out of the formulas."""
    taken = {}
    for f in formulas.values():
        for k in [k for k in f.loops if k[0] == "cuda"]:
            taken[(f.name, k)] = f.loops.pop(k)
    return taken


@contextlib.contextmanager
def installed():
    """The fake as the ``cuda`` device, with the generated CUDA kernels and onion.cuda's random kernels
    loaded; afterwards the registries, dispatch tables and per-backend loops are as before (a real CUDA
    backend, where there is one, included)."""
    from onion.aten.native.ufunc_formulas import FORMULAS
    registries = (BACKENDS, BACKEND_BY_KEY, STORAGE_MAKERS, profiling.DEVICE_TIMERS)
    saved = [copy.copy(r) for r in registries]
    name = "onion._generated.register_cuda"
    had_module = name in sys.modules
    had_kernels = bool(onion.cuda._KERNEL_LIBS)
    real_loops = _cuda_loops(FORMULAS)            # a real GPU's loops close over CuPy
    backend = NumpyCUDABackend()
    shims = _cupyx_modules()
    saved_modules = {k: sys.modules.get(k) for k in shims}
    try:
        sys.modules.update(shims)
        _cuda_backend.install(backend)
        importlib.import_module(name)
        onion.cuda._install_kernels()
        yield backend
    finally:
        if not had_kernels:
            onion.cuda._uninstall_kernels()
        for k, v in saved_modules.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        if not had_module and name in sys.modules:
            sys.modules.pop(name).m._destroy()
        for registry, before in zip(registries, saved):
            registry.clear()
            registry.update(before)
        _cuda_loops(FORMULAS)
        for (fname, k), loop in real_loops.items():
            FORMULAS[fname].loops[k] = loop
