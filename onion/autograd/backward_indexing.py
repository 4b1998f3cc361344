"""Backward helpers of the indexing operators (derivatives.yaml, ``# ---- indexing``).

Written with onion operators so double backward works: under grad mode (``create_graph``) the
functional ``index_put`` is used, otherwise the in-place kernel on a fresh zeros tensor.
"""
from __future__ import annotations

from ..aten.at import at
from ..core import dtype as _dt
from ..core.tls import state as _tls_state


def _zeros(sizes, like):
    i = like._impl
    return at.zeros(list(sizes), i.dtype, None, i.device, None)


def index_backward(grad, sizes, indices):
    """PyTorch's index_backward: the gradient scattered (added) back to where it was read from."""
    z = _zeros(sizes, grad)
    if _tls_state().grad_enabled:
        return at.index_put(z, indices, grad, True)
    return at._index_put_impl_(z, indices, grad, True, True)


def unsafe_masked_index_backward(grad, sizes, mask, indices):
    return at._unsafe_masked_index_put_accumulate(_zeros(sizes, grad), mask, indices, grad)


def masked_fill_backward(grad, mask):
    """The value's gradient: the sum of the gradient where the mask held."""
    return at.sum(at.masked_select(grad, mask), None)


def masked_scatter_backward(grad, mask, sizes):
    """The source's gradient: the gradient where the mask held, in order, zero-padded to the source's size."""
    n = 1
    for s in sizes:
        n *= s
    picked = at.masked_select(grad, mask)
    k = picked._impl._array.size
    if k < n:
        i = picked._impl
        where = at.arange(k, _dt.int64, None, i.device, None)
        picked = at.index_put(at.zeros([n], i.dtype, None, i.device, None), [where], picked, False)
    return at.view(picked, list(sizes))


def masked_select_backward(grad, sizes, mask):
    """The gradient put back where the mask held, over the broadcast shape (the engine sums it down to
    the input's shape)."""
    from ..aten.view_geometry import broadcast_pair_for_op
    shape = tuple(broadcast_pair_for_op(tuple(sizes), tuple(mask._impl._array.shape)))
    return at.masked_scatter(_zeros(shape, grad), mask, grad)


def take_backward(grad, sizes, index):
    z = _zeros(sizes, grad)
    return at.put(z, index, grad, True) if _tls_state().grad_enabled else at.put_(z, index, grad, True)


def put_source_backward(grad, index, sizes):
    return at.view(at.take(grad, index), list(sizes))


def unsafe_masked_index(grad, mask, indices, fill):
    return at._unsafe_masked_index(grad, mask, indices, fill)
