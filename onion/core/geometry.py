"""Sizes, strides and dims as plain tuples: the rules every layer applies the same way (c10's).

The one place for them, in the lowest layer that needs them (``TensorImpl``
reports contiguous strides for empty arrays); ATen's geometry, the backends
and autograd import them from here.
"""
from __future__ import annotations


def contiguous_strides(sizes) -> tuple:
    """Row-major strides of ``sizes``; a dim of size 0 counts as 1, as empty_tensor_restride does."""
    strides = []
    acc = 1
    for n in reversed(sizes):
        strides.append(acc)
        if n > 1:
            acc *= n
    return tuple(reversed(strides))


def wrap_dim(dim: int, ndim: int, wrap_scalar: bool = True) -> int:
    """c10's maybe_wrap_dim: a negative ``dim`` counts from the end.

    A 0-dim tensor accepts -1 and 0 when ``wrap_scalar`` (most operators), and
    no dim at all otherwise (``Tensor.size`` / ``Tensor.stride``).
    """
    if ndim <= 0:
        if not wrap_scalar:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        ndim = 1
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim
