"""The backward of ``as_strided``, which views modified in place also need (their regenerated nodes).

It lives below ``Function`` and the formulas so that the graph's view
machinery can use it: its one custom step (summing a gradient into
overlapping storage locations) is a hand-written ``Node``, not a ``Function``.
"""
from __future__ import annotations

import numpy as np

from ..aten.at import at
from ..aten.tensor_new import wrap
from ..backends import backend_for
from ..core.tls import state as _tls_state
from .graph import Node, gradient_edge, meta, set_grad_fn


def _storage_indices(sizes, strides, offset):
    """The storage index of every element of a strided geometry, in row-major order (NumPy, host)."""
    idx = np.full(tuple(sizes), offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx = idx + np.arange(n, dtype=np.int64).reshape(shape) * st
    return idx.reshape(-1)


def _extent(sizes, strides, offset) -> int:
    """One past the largest storage index a geometry touches (its offset when empty)."""
    if any(n == 0 for n in sizes):
        return offset
    return offset + 1 + sum((n - 1) * st for n, st in zip(sizes, strides))


def _may_overlap(sizes, strides) -> bool:
    """False when no two elements share a location; True may be a false alarm (checked exactly after)."""
    reach = 0
    for st, n in sorted((st, n) for n, st in zip(sizes, strides) if n > 1):
        if st <= reach:
            return True
        reach += (n - 1) * st
    return False


def _overlaps(sizes, strides, offset) -> bool:
    if not _may_overlap(sizes, strides):
        return False
    idx = _storage_indices(sizes, strides, offset)
    return idx.size != np.unique(idx).size


class ScatterAddStridedBackward(Node):
    """The node of a gradient summed into a flat buffer at an overlapping geometry: read it back there."""

    def __init__(self, grad, geometry):
        super().__init__()
        self.geometry = geometry
        self.next_functions = (gradient_edge(grad),)
        self._in_meta = (meta(grad),)

    def apply(self, grads):
        (g,) = grads
        if g is None:
            return (None,)
        size, stride, offset = self.geometry
        return (at.as_strided(g, size, stride, offset),)


def _scatter_add_strided(grad, n, size, stride, offset):
    """A length-``n`` buffer holding the sum of ``grad``'s elements at each location they map to."""
    impl = grad._impl
    backend = backend_for(impl.device)
    values = np.asarray(backend.to_numpy(impl._array)).reshape(-1)
    out = np.zeros(n, dtype=values.dtype)
    np.add.at(out, _storage_indices(size, stride, offset), values)
    flat = wrap(backend.from_numpy(out, impl.device), impl.dtype, impl.device)
    if _tls_state().grad_enabled and impl.requires_grad:     # differentiable, for create_graph
        set_grad_fn(flat._impl, ScatterAddStridedBackward(grad, (size, stride, offset)), 0)
    return flat


def as_strided_backward(grad, sizes, strides, offset, size, stride, storage_offset):
    """Scatter ``grad`` into a storage-sized zero buffer and read it back with the input's geometry.

    Overlapping output elements accumulate; overlapping input elements share
    their location's gradient equally, as in PyTorch.
    """
    size, stride = list(size), list(stride)
    out_off = offset if storage_offset is None else storage_offset
    n = max(_extent(sizes, strides, offset), _extent(size, stride, out_off), 1)
    on_meta = grad._impl.device.type == "meta"
    if not on_meta and _overlaps(size, stride, out_off):
        flat = _scatter_add_strided(grad, n, size, stride, out_off)
    else:
        flat = at.zeros([n], grad.dtype, None, grad.device, None)
        at.copy_(at.as_strided(flat, size, stride, out_off), grad, False)
    if not on_meta and _overlaps(sizes, strides, offset):
        counts = np.bincount(_storage_indices(sizes, strides, offset), minlength=n).astype(grad._impl.dtype.np)
        counts[counts == 0] = 1
        dev = grad._impl.device
        flat = flat / wrap(backend_for(dev).from_numpy(counts, dev), grad._impl.dtype, dev)
    return at.as_strided(flat, list(sizes), list(strides), offset)
