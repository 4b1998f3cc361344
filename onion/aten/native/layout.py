"""Layout operators: roll, flip (fliplr, flipud, rot90), tril/triu, tril_indices/triu_indices,
diag/diag_embed/diagflat, repeat/tile/repeat_interleave, and the view-scatter ops (select_scatter,
slice_scatter, diagonal_scatter, as_strided_scatter).

The view-scatter ops and diag_embed copy ``self`` (or zeros) into a fresh result and write the
source through a NumPy view of the result with the geometry the matching view operator would have
(``view_geometry``), so their bounds and errors are the view's own.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as _dt
from ...core.device import canonical
from ...core.geometry import contiguous_strides, like_strides, wrap_dim
from .. import iterator as _it
from .. import view_geometry as g
from ..at import at
from ..structured import Plan
from ..tensor_new import allocation_error, empty_tensor, wrap


def _shape(t):
    return tuple(t._impl._array.shape)


def _is_meta(impl):
    return impl.device.type == "meta"


def _strides_of(impl):
    return tuple(impl.strides)


def _preserve(impl):
    """Strides of empty_like(self) (preserve_format)."""
    return like_strides(_shape_impl(impl), _strides_of(impl), None)


def _shape_impl(impl):
    return tuple(impl._array.shape)


def _new_result(impl, shape, dtype=None, strides=None):
    return empty_tensor(shape, dtype or impl.dtype, impl.device, strides)


def _strided_view(arr, sizes, strides, offset):
    """A NumPy view of a fresh, dense array with positive strides, by element geometry
    counted from its lowest address."""
    flat = arr.ravel(order="K")
    item = arr.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(sizes),
                                           strides=tuple(s * item for s in strides))


def _elem_strides(arr):
    item = arr.itemsize
    return tuple(s // item for s in arr.strides)


def _check_dims_unique(dims, ndim):
    wrapped = [wrap_dim(d, ndim) for d in dims]
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return wrapped


# --------------------------------------------------------------------------
# flip, fliplr, flipud, rot90, roll
# --------------------------------------------------------------------------

def flip(self, dims):
    impl = self._impl
    shape = _shape(self)
    axes = _check_dims_unique(list(dims), len(shape))
    strides = _preserve(impl)
    if _is_meta(impl):
        return empty_tensor(shape, impl.dtype, impl.device, strides)
    a = impl._array
    if shape:
        a = np.flip(a, axes) if axes else a
    out = _new_result(impl, shape, None, strides)
    _it.xp_copy(out._impl._array, a)
    return out


def fliplr(self):
    if len(_shape(self)) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return at.flip(self, [1])


def flipud(self):
    if len(_shape(self)) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return at.flip(self, [0])


def _fresh_transpose(t, d0, d1):
    """``t`` (a fresh result) with two dims swapped, as PyTorch's in-place transpose_ of its own temporary."""
    impl = t._impl
    shape = list(_shape(t))
    strides = list(impl.strides)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    if _is_meta(impl):
        return empty_tensor(tuple(shape), impl.dtype, impl.device, tuple(strides))
    return wrap(impl._array.swapaxes(d0, d1), impl.dtype, impl.device)


def rot90(self, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = len(_shape(self))
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim), wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = k % 4
    if k == 1:
        return _fresh_transpose(at.flip(self, [d1]), d0, d1)
    if k == 2:
        return at.flip(self, [d0, d1])
    if k == 3:
        return _fresh_transpose(at.flip(self, [d0]), d0, d1)
    return at.clone(self, "contiguous_format")


def roll(self, shifts, dims=()):
    impl = self._impl
    shifts = list(shifts)
    dims = list(dims)
    shape = _shape(self)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        pass
    elif len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    axes = [wrap_dim(d, len(shape), wrap_scalar=False) for d in dims]
    if _is_meta(impl):
        return empty_tensor(shape, impl.dtype, impl.device)
    a = impl._array
    if a.size == 0:
        return empty_tensor(shape, impl.dtype, impl.device)
    if not dims:
        r = np.roll(a.reshape(-1), shifts[0]).reshape(shape)
    else:
        r = np.roll(a, shifts, axes)
    return _copy_new(impl, r)


def _copy_new(impl, r):
    """A new row-major tensor holding ``r`` (a fresh array of the kernel's own)."""
    if impl.device.type == "cpu":
        return wrap(r if r.flags.c_contiguous else r.copy(order="C"), impl.dtype, impl.device)
    out = _new_result(impl, tuple(r.shape))
    _it.xp_copy(out._impl._array, r)
    return out


# --------------------------------------------------------------------------
# tril, triu
# --------------------------------------------------------------------------

def _meta_tri(name, self, diagonal):
    impl = self._impl
    shape = _shape(self)
    if len(shape) < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return Plan(shape, impl.dtype, impl.device, None, diagonal)


def meta_tril(self, diagonal=0):
    return _meta_tri("tril", self, diagonal)


def meta_triu(self, diagonal=0):
    return _meta_tri("triu", self, diagonal)


def _tri_mask(shape, k, lower):
    n, m = shape[-2], shape[-1]
    r = np.arange(n).reshape(n, 1)
    c = np.arange(m).reshape(1, m)
    return (c - r <= k) if lower else (c - r >= k)


def tril_impl(xp, plan, self, diagonal=0):
    _it.refuse_barebones_unsigned("tril", self._impl)
    a = self._impl._array
    return np.where(_tri_mask(a.shape, plan.extra, True), a, np.zeros((), a.dtype))


def triu_impl(xp, plan, self, diagonal=0):
    _it.refuse_barebones_unsigned("triu", self._impl)
    a = self._impl._array
    return np.where(_tri_mask(a.shape, plan.extra, False), a, np.zeros((), a.dtype))


# --------------------------------------------------------------------------
# tril_indices, triu_indices
# --------------------------------------------------------------------------

def _tri_indices(row, col, offset, dtype, device, lower):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = dtype if dtype is not None else _dt.int64
    dev = canonical(device)
    if dt.category != 1:
        raise NotImplementedError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented for "
                                  f"'{dt.scalar_type_name}'")
    try:
        if lower:
            r, c = np.tril_indices(row, offset, col)
        else:
            r, c = np.triu_indices(row, offset, col)
    except (MemoryError, ValueError) as e:
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory for the indices of a {row}x{col} "
                           f"matrix ({e})") from None
    n = r.size
    out = empty_tensor((2, n), dt, dev)
    if dev.type != "meta" and n:
        _it.xp_copy(out._impl._array, np.stack([r, c]))
    return out


def tril_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
    return _tri_indices(row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
    return _tri_indices(row, col, offset, dtype, device, False)


# --------------------------------------------------------------------------
# diag_embed, diag, diagflat
# --------------------------------------------------------------------------

def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    impl = self._impl
    shape = _shape(self)
    nd = len(shape) + 1
    d1 = wrap_dim(dim1, nd)
    d2 = wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    last = shape[-1] if shape else 1
    n = last + abs(offset)
    rest = list(shape[:-1])
    out_shape = []
    it = iter(rest)
    for i in range(nd):
        out_shape.append(n if i in (d1, d2) else next(it))
    out_shape = tuple(out_shape)
    out = _new_result(impl, out_shape)
    if _is_meta(impl):
        return out
    arr = out._impl._array
    arr[...] = 0
    sizes, strides, off = g.diagonal(out_shape, contiguous_strides(out_shape), 0, offset, d1, d2)
    view = _strided_view(arr, sizes, strides, off)
    src = impl._array
    _it.xp_copy(view, src.reshape(1) if src.ndim == 0 else src)
    return out


def diag(self, diagonal=0):
    nd = len(_shape(self))
    if nd == 1:
        return at.diag_embed(self, diagonal, 0, 1)
    if nd == 2:
        return at.clone(at.diagonal(self, diagonal, 0, 1), None)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


def diag_out(self, diagonal=0, out=None):
    r = diag(self, diagonal)
    _cross_device_copy(r._impl.device, out._impl.device)
    if r._impl.dtype is not out._impl.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {r._impl.dtype.typemeta_name}, but got "
                           f"{out._impl.dtype.typemeta_name} instead")
    _it.resize_out(out, _shape(r))
    return at.copy_(out, r, False)


def diagflat(self, offset=0):
    return at.diag(at.reshape(at.contiguous(self, "contiguous_format"), (-1,)), offset)


# --------------------------------------------------------------------------
# repeat, tile, repeat_interleave
# --------------------------------------------------------------------------

def repeat(self, repeats):
    impl = self._impl
    shape = _shape(self)
    repeats = tuple(repeats)
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    padded = (1,) * (len(repeats) - len(shape)) + shape
    target = tuple(p * r for p, r in zip(padded, repeats))
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(target)}")
    if _is_meta(impl) or 0 in target:
        return empty_tensor(target, impl.dtype, impl.device)
    if not repeats:
        return _copy_new(impl, np.array(impl._array))
    try:
        r = np.tile(impl._array.reshape(padded), repeats)
    except (MemoryError, ValueError) as e:
        raise allocation_error(target, impl.dtype.itemsize, e) from None
    return _copy_new(impl, r)


def tile(self, dims):
    dims = tuple(dims)
    nd = len(_shape(self))
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return at.repeat(self, dims)


def _repeat_interleave_plan(repeats, output_size):
    impl = repeats._impl
    shape = _shape(repeats)
    if impl.dtype not in (_dt.int64, _dt.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{impl.dtype.scalar_type_name}'")
    if len(shape) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")


def repeat_interleave_Tensor(repeats, output_size=None):
    _repeat_interleave_plan(repeats, output_size)
    impl = repeats._impl
    if _is_meta(impl):
        if output_size is None:
            raise RuntimeError("Cannot repeat_interleave a meta tensor without output_size")
        return empty_tensor((output_size,), impl.dtype, impl.device)
    r = np.asarray(impl._array)
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum()) if r.size else 0
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    out = np.repeat(np.arange(r.size, dtype=impl.dtype.np), r.astype(np.int64))
    return wrap(out, impl.dtype, impl.device)


def repeat_interleave_self_Tensor(self, repeats, dim=None, output_size=None):
    inp = self
    if dim is None:
        inp = at.reshape(self, (-1,))
        dim = 0
    shape = _shape(inp)
    d = wrap_dim(dim, len(shape))
    n = shape[d] if shape else 1
    rshape = _shape(repeats)
    if len(rshape) == 0 or (len(rshape) == 1 and rshape[0] == 1):
        reps = at.expand(at.reshape(repeats, (1,)), (n,), False)
    elif len(rshape) == 1:
        if rshape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{rshape[0]} and input.size({dim}) = {n}")
        reps = repeats
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    return at.index_select(inp, d, at.repeat_interleave_Tensor(reps, output_size))


def repeat_interleave_self_int(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    inp = self
    if dim is None:
        inp = at.reshape(self, (-1,))
        dim = 0
    shape = _shape(inp)
    d = wrap_dim(dim, len(shape))
    n = shape[d] if shape else 1
    if output_size is not None and output_size != n * repeats:
        raise RuntimeError("allocated size does not match required size")
    if not shape:
        inp, shape = at.reshape(inp, (1,)), (1,)
    # as ATen's: each slice repeated by expanding a new dim after ``d``, then merged into it (no index_select,
    # so dtypes index_select has no kernel for work too)
    wide = list(shape[:d + 1]) + [repeats] + list(shape[d + 1:])
    r = at.clone(at.expand(at.unsqueeze(inp, d + 1), wide, False), "contiguous_format")
    return at.reshape(r, list(shape[:d]) + [n * repeats] + list(shape[d + 1:]))


# --------------------------------------------------------------------------
# select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter
# --------------------------------------------------------------------------

def _has_internal_overlap(shape, strides):
    return any(st == 0 and n > 1 for n, st in zip(shape, strides))


def _view_scatter(self, src, geom, no_meta_kernel=False):
    """``self`` copied as PyTorch's clone_preserve_strides copies it (its whole storage, so the same
    strides and storage offset; a plain clone for an expanded tensor), with ``src`` written through
    the view that ``geom(sizes, strides, storage_offset)`` describes of that copy."""
    impl = self._impl
    shape = _shape(self)
    strides = _strides_of(impl)
    if _is_meta(impl):      # PyTorch's meta kernel: self's geometry, nothing checked
        return empty_tensor(shape, impl.dtype, impl.device, strides)
    if _is_meta(src._impl):
        if no_meta_kernel:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return at.clone(self, None)     # PyTorch 2.13 copies self and writes nothing from a meta src
    expanded = _has_internal_overlap(shape, strides)
    if expanded:
        strides = _preserve(impl)
        offset = 0
    else:
        offset = impl.storage_offset()
    sizes, vstrides, voff = geom(shape, strides, offset)
    if _has_internal_overlap(sizes, vstrides):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    sshape = _shape(src)
    if tuple(sizes) != sshape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(sshape)}, "
                           f"slice size = {list(sizes)}")
    dt = impl.dtype
    item = dt.itemsize
    if expanded or impl.device.type != "cpu":
        out = empty_tensor(shape, dt, impl.device, strides)
        arr = out._impl._array
        _it.xp_copy(arr, impl._array)
        flat = arr.ravel(order="K")
    else:
        storage = impl.storage()
        flat = np.array(storage.data[:storage._nbytes // item * item]).view(dt.np)
        arr = np.ndarray(shape, dt.np, flat, offset * item, tuple(st * item for st in strides))
        out = wrap(arr, dt, impl.device)
    if 0 not in sizes:
        s = src._impl
        sa = s._array
        if s.dtype.is_complex and not dt.is_complex:
            sa = sa.real
        view = np.lib.stride_tricks.as_strided(flat[voff:], shape=tuple(sizes),
                                               strides=tuple(st * item for st in vstrides))
        _it.xp_copy(view, sa)
    return out


def select_scatter(self, src, dim, index):
    return _view_scatter(self, src, lambda sh, st, off: g.select(sh, st, off, dim, index))


def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    return _view_scatter(self, src, lambda sh, st, off: g.slice(sh, st, off, dim, start, end, step))


def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    return _view_scatter(self, src, lambda sh, st, off: g.diagonal(sh, st, off, offset, dim1, dim2))


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    impl = self._impl
    item = impl.dtype.itemsize

    def geom(sh, st, off):
        if impl.device.type == "cpu" and not _has_internal_overlap(sh, st):
            nbytes = impl.storage()._nbytes
        else:
            nbytes = (off + (1 + sum((s - 1) * t for s, t in zip(sh, st)) if all(sh) else 0)) * item
        return g.as_strided(sh, st, off, tuple(size), tuple(stride), storage_offset,
                            itemsize=item, storage_nbytes=nbytes)
    return _view_scatter(self, src, geom, no_meta_kernel=True)


def _cross_device_copy(src_device, dst_device):
    if src_device != dst_device:
        raise RuntimeError(f"Attempting to copy from device {src_device.type} to device {dst_device.type}, but "
                           "cross-device copies are not allowed!")


def _scatter_out(r, out, self=None, src=None):
    if self is not None and (_is_meta(self._impl) or _is_meta(src._impl)):
        # the out= overload dispatches on Meta when any argument is a meta tensor: its result is a meta one
        r = empty_tensor(_shape(r), r._impl.dtype, src._impl.device if _is_meta(src._impl) else self._impl.device)
    _cross_device_copy(r._impl.device, out._impl.device)
    if r._impl.dtype is not out._impl.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {r._impl.dtype.typemeta_name}, but got "
                           f"{out._impl.dtype.typemeta_name} instead")
    _it.resize_out(out, _shape(r))
    if _is_meta(out._impl):
        return out
    return at.copy_(out, r, False)


def select_scatter_out(self, src, dim, index, out):
    return _scatter_out(select_scatter(self, src, dim, index), out, self, src)


def slice_scatter_out(self, src, dim=0, start=None, end=None, step=1, out=None):
    return _scatter_out(slice_scatter(self, src, dim, start, end, step), out, self, src)


def diagonal_scatter_out(self, src, offset=0, dim1=0, dim2=1, out=None):
    return _scatter_out(diagonal_scatter(self, src, offset, dim1, dim2), out, self, src)


def as_strided_scatter_out(self, src, size, stride, storage_offset=None, out=None):
    return _scatter_out(as_strided_scatter(self, src, size, stride, storage_offset), out)

