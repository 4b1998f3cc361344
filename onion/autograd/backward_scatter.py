"""Backward helpers of the scatter/gather, index_* and layout operators (derivatives.yaml's scatter block).

Written with onion operators, so the gradients are differentiable again.  Boolean masks are made
0/1 tensors of the gradient's dtype (``_mask``) and combined arithmetically.
"""
from __future__ import annotations

import numpy as np

from ..aten.at import at
from .backward_common import where


def _mask(cond, like):
    """A boolean tensor as 0/1 of ``like``'s dtype (not differentiable)."""
    return at._to_copy(cond, like.dtype, None, None, None, False, None)


def ones_like(t):
    return at.ones_like(t, None, None, None, None, None)


def zeros_like(t):
    return at.zeros_like(t, None, None, None, None, None)


__all__ = ["scatter_reduce_backward", "index_reduce_backward", "index_add_source_backward",
           "index_copy_source_backward", "index_fill_value_backward", "repeat_backward", "roll_backward",
           "as_strided_scatter_self_backward", "as_strided_scatter_src_backward", "take_unique_index"]


def _shape(t):
    return tuple(t._impl._array.shape)


def _zero_at(grad, dim, index):
    """``grad`` with the positions ``index`` scatters to (along ``dim``) set to zero."""
    return grad.scatter(dim, index, 0)


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result, mask=(True, True)):
    """Gradients of scatter_reduce.two for self and src (PyTorch's scatter_reduce_backward)."""
    if _shape(index) and 0 in _shape(index) or not _shape(grad) and 0 in _shape(index):
        return grad, zeros_like(src)
    if reduce == "sum":
        grad_self = grad
        grad_src = grad.gather(dim, index)
    elif reduce == "prod":
        masked_self = where(self == 0, 1.0, self)
        masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = _mask(src == 0, src)
        src_num_zeros = zeros_like(self).scatter_add(dim, index, src_zero).gather(dim, index)
        single = (src_zero * _mask(src_num_zeros == 1, src)) != 0
        masked_src = where(single, 1.0, src)
        masked_src_result = self.scatter_reduce(dim, index, masked_src, reduce, include_self=include_self)
        grad_src = where(single, (grad * masked_src_result).gather(dim, index),
                         (grad * result).gather(dim, index) / where(src == 0, 1.0, src))
    elif reduce == "mean":
        n = (ones_like(grad) if include_self else zeros_like(grad)).scatter_add(dim, index, ones_like(src))
        n = where(n == 0, 1.0, n)
        grad_self = grad / n
        grad_src = grad.gather(dim, index) / n.gather(dim, index)
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        self_is = _mask(self == result, self)
        src_is = _mask(src == value, self)
        n = self_is.scatter_add(dim, index, src_is)
        dist = grad / n
        grad_self = self_is * dist
        grad_src = src_is * dist.gather(dim, index)
    else:
        raise RuntimeError(f"Expected 'reduce' argument to be one of 'sum', 'prod', 'mean', 'amax', 'amin' "
                           f"but got {reduce}.")
    if not include_self:
        grad_self = _zero_at(grad_self, dim, index)
    return grad_self, grad_src


def index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result, mask=(True, True)):
    """Gradients of index_reduce for self and source (PyTorch's index_reduce_backward)."""
    if reduce == "prod":
        masked_self = where(self == 0, 1.0, self)
        masked_self_result = masked_self.index_reduce(dim, index, source, reduce, include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = _mask(source == 0, source)
        num_zeros = zeros_like(self).index_add(dim, index, src_zero).index_select(dim, index)
        single = (src_zero * _mask(num_zeros == 1, source)) != 0
        masked_src = where(single, 1.0, source)
        masked_src_result = self.index_reduce(dim, index, masked_src, reduce, include_self=include_self)
        grad_src = where(single, (grad * masked_src_result).index_select(dim, index),
                         (grad * result).index_select(dim, index) / where(source == 0, 1.0, source))
    elif reduce == "mean":
        n = (ones_like(grad) if include_self else zeros_like(grad)).index_add(dim, index, ones_like(source))
        n = where(n == 0, 1.0, n)
        grad_self = grad / n
        grad_src = grad.index_select(dim, index) / n.index_select(dim, index)
    elif reduce in ("amax", "amin"):
        self_is = _mask(self == result, self)
        src_is = _mask(source == result.index_select(dim, index), self)
        n = self_is.index_add(dim, index, src_is)
        dist = grad / n
        grad_self = self_is * dist
        grad_src = src_is * dist.index_select(dim, index)
    else:
        raise RuntimeError(f"Expected 'reduce' argument to be one of 'prod', 'mean', 'amax', 'amin' but got "
                           f"{reduce}.")
    if not include_self:
        grad_self = grad_self.index_fill(dim, index, 0)
    return grad_self, grad_src


def index_add_source_backward(grad, dim, index, source_shape, alpha):
    """index_add's source gradient: the selected slices (times alpha), shaped as the source."""
    if source_shape:
        g = grad.index_select(dim, index).expand(list(source_shape))
    else:
        g = grad.index_select(dim, index.reshape([]) if _shape(index) else index)
    if alpha is None or (not isinstance(alpha, bool) and alpha == 1):
        return g
    return g * alpha


def index_copy_source_backward(grad, dim, index, source_shape):
    return index_add_source_backward(grad, dim, index, source_shape, 1)


def take_unique_index(index):
    """The distinct values of an index tensor (sorted), as a new int64 tensor; not differentiable."""
    from ..aten.tensor_new import wrap
    from ..core import dtype as _dt
    vals = np.unique(np.asarray(index._impl._array).reshape(-1))
    return wrap(vals.astype(np.int64), _dt.int64, index._impl.device)


def index_fill_value_backward(grad, dim, index):
    """index_fill's Tensor value: the sum of the gradient over the filled slices (each counted once)."""
    if grad.dim() == 0:
        return grad.sum() if _shape(index) != (0,) else zeros_like(grad).sum()
    return grad.index_select(dim, take_unique_index(index)).sum()


def repeat_backward(grad, repeats, input_shape):
    """Sum each repetition of the input back onto it (PyTorch's repeat_backward)."""
    input_shape = tuple(input_shape)
    repeats = list(repeats)
    lead = len(repeats) - len(input_shape)
    for _ in range(lead):
        grad = grad.sum(0)
    repeats = repeats[lead:]
    if 0 in input_shape or 0 in repeats:
        return at.zeros(list(input_shape), grad.dtype, None, grad.device, None)
    split = []
    sum_dims = []
    for i, (r, s) in enumerate(zip(repeats, input_shape)):
        if r != 1:
            sum_dims.append(len(split))
            split.append(r)
        split.append(s)
    if not sum_dims:
        return grad.reshape(list(input_shape))
    return grad.reshape(split).sum(sum_dims).reshape(list(input_shape))


def roll_backward(grad, shifts, dims):
    return grad.roll([-s for s in reversed(list(shifts))], list(reversed(list(dims))))


def as_strided_scatter_self_backward(grad, src_shape, size, stride, storage_offset):
    z = at.zeros(list(src_shape), grad.dtype, None, grad.device, None)
    return grad.contiguous().as_strided_scatter(z, size, stride, storage_offset)


def as_strided_scatter_src_backward(grad, size, stride, storage_offset):
    return grad.contiguous().as_strided(size, stride, storage_offset)
