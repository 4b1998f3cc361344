"""Work arrays reused between kernel calls, per thread.

A large fresh NumPy temporary costs page faults on first touch (the allocator hands big blocks back to the
system when they are freed), often more than the arithmetic done in it.  A kernel that needs a temporary it
does not return takes one from here by name; the buffer is kept for the thread's next call.  Two names
never share memory, so one kernel may hold several at once; a kernel must not call another kernel while it
holds one under a name that kernel uses too.
"""
from __future__ import annotations

import threading

import numpy as np

_LOCAL = threading.local()
_MAX_BYTES = 64 << 20          # bigger requests get a plain fresh array (nothing kept)


def scratch(name: str, shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape`` and ``dtype``, reused under ``name`` in this thread."""
    dtype = np.dtype(dtype)
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    if nbytes > _MAX_BYTES:
        return np.empty(shape, dtype)
    bufs = getattr(_LOCAL, "bufs", None)
    if bufs is None:
        bufs = _LOCAL.bufs = {}
    buf = bufs.get(name)
    if buf is None or buf.nbytes < nbytes:
        buf = bufs[name] = np.empty(max(nbytes, 1 << 12), np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)
