"""The CUDA backend on CuPy (optional: registered only when CuPy imports and sees a GPU)."""
from __future__ import annotations

from ..core.dispatch_key import K
from ..core.storage import Storage
from .base import Backend, register_backend

try:  # CuPy is optional
    import cupy as cp
    AVAILABLE = cp.cuda.runtime.getDeviceCount() > 0
except Exception:  # noqa: BLE001 - any import/driver failure means "no CUDA"
    cp = None
    AVAILABLE = False


class CUDABackend(Backend):
    device_type = "cuda"
    key = K.CUDA

    @property
    def xp(self):
        return cp

    def empty(self, shape, np_dtype, device=None):
        with cp.cuda.Device(device.index or 0 if device is not None else 0):
            return cp.empty(shape, np_dtype)

    def empty_strided(self, shape, strides, np_dtype, device=None):
        from .cpu import strided_empty
        with cp.cuda.Device(device.index or 0 if device is not None else 0):
            return strided_empty(cp, shape, strides, np_dtype)

    def view(self, storage, shape, strides, offset, np_dtype):
        import numpy as np
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
        with cp.cuda.Device(device.index or 0 if device is not None else 0):
            return cp.asarray(array)


if AVAILABLE:
    register_backend(CUDABackend())
