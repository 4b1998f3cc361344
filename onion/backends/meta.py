"""The Meta backend: tensors with sizes, strides and dtype but no data."""
from __future__ import annotations

import numpy as np

from ..core.device import META
from ..core.dispatch_key import K
from ..core.geometry import contiguous_strides
from ..core.storage import Storage
from .base import Backend, register_backend


class MetaArray:
    """Stands in for an ndarray: geometry only (strides in bytes, as NumPy's)."""

    __slots__ = ("shape", "strides", "dtype", "ndim", "size", "offset")

    def __init__(self, shape, strides_bytes, np_dtype, offset=0):
        self.shape = tuple(shape)
        self.strides = tuple(strides_bytes)
        self.dtype = np.dtype(np_dtype)
        self.ndim = len(self.shape)
        n = 1
        for s in self.shape:
            n *= s
        self.size = n
        self.offset = offset

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, strides={self.strides}, dtype={self.dtype})"


class MetaBackend(Backend):
    device_type = "meta"
    key = K.Meta
    xp = None

    def empty(self, shape, np_dtype, device=META):
        item = np.dtype(np_dtype).itemsize
        return MetaArray(shape, tuple(s * item for s in contiguous_strides(shape)), np_dtype)

    def empty_strided(self, shape, strides, np_dtype, device=META):
        item = np.dtype(np_dtype).itemsize
        return MetaArray(shape, tuple(s * item for s in strides), np_dtype)

    def view(self, storage, shape, strides, offset, np_dtype):
        item = np.dtype(np_dtype).itemsize
        return MetaArray(shape, tuple(s * item for s in strides), np_dtype, offset)

    def storage_of(self, array, device):
        item = array.dtype.itemsize
        extent = 0 if array.size == 0 else \
            (array.offset + 1 + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // item) * item
        return Storage(None, extent, META), array.offset

    def to_numpy(self, array):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def from_numpy(self, array, device=META):
        a = np.asarray(array)
        return self.empty(a.shape, a.dtype)


register_backend(MetaBackend())
