"""The CPU backend: NumPy arrays over byte storages."""
from __future__ import annotations

import numpy as np

from ..core.device import CPU, device as _device
from ..core.dispatch_key import K
from ..core.storage import Storage
from .base import Backend, register_backend

_uint8 = np.uint8
_itemsize: dict = {}       # NumPy dtype -> itemsize, filled below for onion's dtypes
_ndarray = np.ndarray


class HostArrayBackend(Backend):
    """A device whose memory is host NumPy arrays, as the CPU's: what a backend written in Python starts from
    while it stands in for an accelerator (the example ``npu`` package, test backends).  A subclass names its
    ``device_type`` and ``key``; crossing to or from the CPU copies, as a transfer would."""

    xp = np

    def empty(self, shape, np_dtype, device=None):
        return np.empty(shape, np_dtype)

    def empty_strided(self, shape, strides, np_dtype, device=None):
        return strided_empty(np, shape, strides, np_dtype)

    def view(self, storage, shape, strides, offset, np_dtype):
        item = _itemsize.get(np_dtype) or np.dtype(np_dtype).itemsize
        if len(strides) == 1:
            return _ndarray(shape, np_dtype, storage.data, offset * item, (strides[0] * item,))
        return _ndarray(shape, np_dtype, storage.data, offset * item, tuple(s * item for s in strides))

    def storage_of(self, array, device):
        return storage_of_dense(array, _device(self.device_type), np)

    def to_numpy(self, array):
        return np.array(array)

    def from_numpy(self, array, device=None):
        return np.array(array)


class CPUBackend(HostArrayBackend):
    """The CPU itself: its arrays are the host's, so crossing to NumPy neither copies nor moves."""

    device_type = "cpu"
    key = K.CPU

    def storage_of(self, array, device):
        return storage_of_dense(array, CPU, np)

    def to_numpy(self, array):
        return array

    def from_numpy(self, array, device=CPU):
        return np.asarray(array)


def strided_empty(xp, shape, strides, np_dtype):
    """Allocate a dense block and view it with ``strides`` (a permutation of dense strides)."""
    n = 1
    for s in shape:
        n *= s
    if not shape or all(b >= a for a, b in zip(strides[1:], strides[:-1])):
        arr = xp.empty(shape, np_dtype)
    else:
        order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
        base = xp.empty(tuple(shape[d] for d in order), np_dtype)
        inverse = [0] * len(order)
        for i, d in enumerate(order):
            inverse[d] = i
        arr = base.transpose(inverse)
    if n == 0:
        return arr
    item = arr.itemsize
    if arr.strides == tuple(st * item for st in strides):
        return arr
    # strides the dense block cannot give (a size-1 dim's own stride, gaps): a buffer spanning them
    extent = 1 + sum((d - 1) * st for d, st in zip(shape, strides))
    return xp.lib.stride_tricks.as_strided(xp.empty(extent, np_dtype), shape, tuple(st * item for st in strides))


def storage_of_dense(array, device, xp):
    """The byte storage under a NumPy array and the array's element offset in it.

    Arrays onion makes are dense blocks (possibly permuted); arrays from users
    (``from_numpy``) may be strided views of a larger buffer: the storage then
    spans from the lowest to the highest byte the array touches.
    """
    if array.flags.c_contiguous and array.size:     # what onion allocates: the array is its storage
        data = array.reshape(-1).view(_uint8)
        if not data.flags.writeable and array.flags.writeable:
            data.flags.writeable = True
        return Storage(data, data.size, device), 0
    item = array.dtype.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if array.size == 0:
        return Storage(np.empty(0, _uint8), 0, device), 0
    extent = 1 + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // item
    if array.flags.c_contiguous:
        flat = array.reshape(-1)
    else:
        flat = np.lib.stride_tricks.as_strided(array, shape=(extent,), strides=(item,))
    data = flat.view(_uint8)
    if not data.flags.writeable and array.flags.writeable:
        data.flags.writeable = True
    return Storage(data, data.size, device), 0


def _fill_itemsizes():
    from ..core.dtype import numpy_dtypes_loaded_and_listen

    def add(d):
        _itemsize[d.np] = d.itemsize
    for d in numpy_dtypes_loaded_and_listen(add):   # bfloat16 is added when ml_dtypes loads
        add(d)


_fill_itemsizes()
register_backend(CPUBackend())
