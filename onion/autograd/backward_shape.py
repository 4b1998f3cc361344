"""Backward helpers of the joining and splitting operators (cat, stack, split, unbind, unfold).

Written with onion operators, so a gradient computed with ``create_graph=True`` is itself
differentiable.  A Tensor[] argument is read through ``to_args_sizes`` / ``to_args_scalartypes``,
as PyTorch's formulas read it.
"""
from __future__ import annotations

from ..aten.at import at
from ..core.geometry import wrap_dim

__all__ = ["to_args_sizes", "to_args_scalartypes", "cat_tensors_backward", "stack_tensors_backward",
           "split_backward", "split_with_sizes_backward", "unbind_backward", "narrow_backward",
           "unfold_backward"]


def to_args_sizes(tensors):
    return [tuple(t._impl._array.shape) for t in tensors]


def to_args_scalartypes(tensors):
    return [t._impl.dtype for t in tensors]


def _real_if_needed(dtype, g):
    """A real input's gradient: the real part of a complex one (formulas.real_part, without importing it)."""
    if g._impl.dtype.is_complex and not dtype.is_complex:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return at._to_copy(g, g._impl.dtype.to_real(), None, None, None, False, None)
    return g


def cat_tensors_backward(grad, sizes, dtypes, dim):
    """The gradient of each cat input: its slab of ``grad`` (a skipped 1-D empty input gets an empty one)."""
    if grad is None:
        return [None] * len(sizes)
    kept = [s for s in sizes if not (len(s) == 1 and s[0] == 0)]
    if kept:
        dim = wrap_dim(dim, len(kept[0]))
    gi = grad._impl
    out = []
    acc = 0
    for shape, dt in zip(sizes, dtypes):
        if len(shape) == 1 and shape[0] == 0:
            real = gi.dtype.is_complex and not dt.is_complex
            out.append(at.zeros([0], gi.dtype.to_real() if real else gi.dtype, None, gi.device, None))
            continue
        size = shape[dim]
        out.append(_real_if_needed(dt, at.narrow(grad, dim, acc, size)))
        acc += size
    return out


def stack_tensors_backward(grad, dim, dtypes):
    if grad is None:
        return [None] * len(dtypes)
    return [_real_if_needed(dt, at.select_int(grad, dim, i)) for i, dt in enumerate(dtypes)]


def split_with_sizes_backward(grads, split_sizes, dim, sizes, dtype, device):
    """Undefined gradients of some parts become zeros of their shape; then all parts are joined."""
    dim = wrap_dim(dim, len(sizes))
    parts = []
    for g, length in zip(grads, split_sizes):
        if g is not None:
            parts.append(g)
        else:
            shape = list(sizes)
            shape[dim] = length
            parts.append(at.zeros(shape, dtype, None, device, None))
    return at.cat(parts, dim)


def split_backward(grads, split_size, dim, sizes, dtype, device):
    dim = wrap_dim(dim, len(sizes))
    dim_size = sizes[dim]
    num = max(-(-dim_size // split_size), 1) if split_size else 1
    split_sizes = [split_size] * num
    split_sizes[-1] = dim_size - split_size * (num - 1)
    return split_with_sizes_backward(grads, split_sizes, dim, sizes, dtype, device)


def unbind_backward(grads, dim):
    ref = next(g for g in grads if g is not None)
    ri = ref._impl
    shape = list(ri._array.shape)
    parts = [g if g is not None else at.expand(at.zeros([], ri.dtype, None, ri.device, None), shape, False)
             for g in grads]
    return at.stack(parts, dim)


def narrow_backward(grad, sizes, dim, start, length):
    out = at.zeros(list(sizes), grad._impl.dtype, None, grad._impl.device, None)
    at.copy_(at.narrow(out, dim, start, length), grad, False)
    return out


def unfold_backward(grad, sizes, dimension, size, step):
    return at.unfold_backward(grad, list(sizes), dimension, size, step)
