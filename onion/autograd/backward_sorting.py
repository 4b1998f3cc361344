"""Backward helpers of the sorting and selection operators (derivatives.yaml's `# ---- sort` block).

A value-selecting operator (max/min along a dim, sort, topk, kthvalue, median, mode, cummax) sends
each output gradient back to the input position its index names: a scatter along ``dim`` into
zeros, whose own derivative is the gather along the same indices (and the other way round), so
gradients of gradients work.  Both are small Functions over the backend's arrays.
"""
from __future__ import annotations

import numpy as np

from ..aten.at import at
from ..aten.tensor_new import empty_tensor, wrap
from .function import Function


def _coords(idx, dim):
    """Index arrays addressing, for every element of ``idx``, the position ``idx`` names along ``dim``."""
    coords = list(np.indices(idx.shape, sparse=True))
    coords[dim] = idx
    return tuple(coords)


def _scatter_along(src, indices, dim, sizes, accumulate):
    impl = src._impl
    if impl.device.type == "meta":
        return empty_tensor(tuple(sizes), impl.dtype, impl.device)
    out = np.zeros(tuple(sizes), impl.dtype.np)
    idx = indices._impl._array
    if idx.size:
        where = _coords(idx, dim)
        if accumulate:
            np.add.at(out, where, impl._array)
        else:
            out[where] = impl._array
    return wrap(out, impl.dtype, impl.device)


def _gather_along(src, indices, dim):
    impl = src._impl
    iimpl = indices._impl
    if impl.device.type == "meta":
        return empty_tensor(tuple(iimpl._array.shape), impl.dtype, impl.device)
    return wrap(np.ascontiguousarray(np.take_along_axis(impl._array, iimpl._array, dim)), impl.dtype, impl.device)


class _ScatterAlong(Function):
    """Zeros of ``sizes`` with ``src`` put (``accumulate``: added) where ``indices`` point along ``dim``."""

    @staticmethod
    def forward(ctx, src, indices, dim, sizes, accumulate):
        ctx.save_for_backward(indices)
        ctx.dim = dim
        return _scatter_along(src, indices, dim, sizes, accumulate)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return _GatherAlong.apply(grad, indices, ctx.dim), None, None, None, None


class _GatherAlong(Function):
    """The elements of ``src`` that ``indices`` name along ``dim``."""

    @staticmethod
    def forward(ctx, src, indices, dim):
        ctx.save_for_backward(indices)
        ctx.dim = dim
        ctx.sizes = tuple(src._impl._array.shape)
        return _gather_along(src, indices, dim)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return _ScatterAlong.apply(grad, indices, ctx.dim, ctx.sizes, True), None, None


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    """The gradient of an input from its selected values: each lands where its index points."""
    sizes = tuple(sizes)
    if not sizes:
        return grad
    d = dim % len(sizes)
    if not keepdim:
        grad = grad.unsqueeze(d)
        indices = indices.unsqueeze(d)
    return _ScatterAlong.apply(grad, indices, d, sizes, False)


def cummaxmin_backward(grad, self, indices, dim):
    """cummax/cummin: every output's gradient is added at the input position it came from."""
    sizes = tuple(self.shape)
    if self.numel() == 0:
        return at.zeros_like(self, None, None, None, None, None)
    if not sizes:
        return grad
    return _ScatterAlong.apply(grad, indices, dim % len(sizes), sizes, True)


def _isnan(t):
    return at.ne_Tensor(t, t)


def evenly_distribute_backward(grad, self, result):
    """max()/min()/median(): the gradient split evenly between the elements equal to the result (NaN
    matching NaN)."""
    mask = at.eq_Tensor(self, result)
    if result._impl.dtype.is_floating_point:
        mask = at.where_self(_isnan(result), _isnan(self), mask)
    m = at._to_copy(mask, grad._impl.dtype, None, None, None, False, None)
    return m * (grad / m.sum())


def _spread_over_ties(grad, self, value, dim, keepdim):
    """A reduction's gradient shared evenly by the elements equal to its value (amax/amin's rule)."""
    nd = self.dim()
    dims = list(range(nd)) if dim is None else ([dim % nd] if nd else [])
    if not keepdim:
        for d in sorted(dims):
            grad = grad.unsqueeze(d)
            value = value.unsqueeze(d)
    mask = at._to_copy(at.eq_Tensor(value, self), grad._impl.dtype, None, None, None, False, None)
    count = at.sum_dim_IntList(mask, dims, True, None) if dims else mask
    return grad * mask / count


def aminmax_backward(grad_min, grad_max, self, dim, keepdim, min, max):  # noqa: A002
    """aminmax: amin's and amax's gradients (each spread evenly over its ties), added."""
    out = None
    if grad_min is not None:
        out = _spread_over_ties(grad_min, self, min, dim, keepdim)
    if grad_max is not None:
        g = _spread_over_ties(grad_max, self, max, dim, keepdim)
        out = g if out is None else out + g
    return out
