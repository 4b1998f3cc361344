"""Joining, splitting and reshaping operators: cat/stack and their relatives, split/chunk/unbind,
flatten/narrow/movedim, broadcasting helpers, the ``*_copy`` variants of the views, and the small
factories and in-place resizers that live next to them in PyTorch's TensorShape.cpp.

Views are made by the view operators (``at.slice_Tensor``, ``at.as_strided`` ...), so they share
storage and get PyTorch's strides; the joining kernels write with one NumPy call per output.
"""
from __future__ import annotations

import math

import numpy as np

from ...backends import backend_for
from ...backends.meta import MetaArray
from ...core import dtype as _dt
from ...core.creation_meta import CreationMeta
from ...core.device import canonical
from ...core.tls import state as _tls_state
from ...core.promotion import can_cast, promote_types
from .. import iterator as _it
from .. import view_geometry as g
from ..at import at
from ..tensor_new import empty_tensor, wrap

_ndarray = np.ndarray


def _shape(t):
    return t._impl._array.shape


def _ndim(t):
    return t._impl._array.ndim


def _wrap_dim(dim, ndim):
    return g.wrap_dim(dim, ndim)


# --------------------------------------------------------------------------
# cat
# --------------------------------------------------------------------------

def _cat_skipped(shape):
    """PyTorch's legacy rule: a 1-D empty tensor takes no part in a cat's shape checks."""
    return len(shape) == 1 and shape[0] == 0


def _cat_plan(tensors, dim):
    """(shape, dtype, device, strides or None, dim, arrays to join) for cat; PyTorch's checks and texts."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    impls = [t._impl for t in tensors]
    first = impls[0]
    dev = first.device
    dt = first.dtype
    valid = None
    for i, im in enumerate(impls):
        shape = im._array.shape
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if im.device is not dev and im.device != dev:
            raise RuntimeError(f"Tensor on device {im.device} is not on the expected device {dev}!")
        if im.dtype is not dt:
            dt = promote_types(dt, im.dtype)
        if valid is None and not _cat_skipped(shape):
            valid = i
    if valid is None:           # every tensor is a 1-D empty one
        return (0,), dt, dev, None, 0, []
    ref = impls[valid]._array.shape
    n = len(ref)
    dim = g.wrap_dim(dim, n)
    total = 0
    arrays = []
    for i in range(valid, len(impls)):
        a = impls[i]._array
        shape = a.shape
        if shape is ref or shape == ref:
            total += shape[dim]
            arrays.append(a)
            continue
        if _cat_skipped(shape):
            continue
        if len(shape) != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and {len(shape)}")
        for d in range(n):
            if d != dim and shape[d] != ref[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size "
                                   f"{ref[d]} but got size {shape[d]} for tensor number {i} in the list.")
        total += shape[dim]
        arrays.append(a)
    out_shape = ref[:dim] + (total,) + ref[dim + 1:]
    strides = None
    if n in (4, 5):
        fmt = _cat_memory_format(impls)
        if fmt != "contiguous_format":
            strides = g.strides_for_format(out_shape, fmt)
    return out_shape, dt, dev, strides, dim, arrays


def _cat_memory_format(impls):
    """The inputs' common suggested memory format, else contiguous (cat_compute_output_memory_format)."""
    fmt = None
    for im in impls:
        f = g.suggest_memory_format(tuple(im._array.shape), im.strides)
        if f == "contiguous_format" or (fmt is not None and f != fmt):
            return "contiguous_format"
        fmt = f
    return fmt


def _concat_into(xp, dst, arrays, dim):
    if not arrays or dst.size == 0:
        return
    if xp is np:
        if all(a.dtype == dst.dtype for a in arrays):
            np.concatenate(arrays, axis=dim, out=dst)
            return
        if dst.dtype.kind not in "iub" or all(a.dtype.kind != "V" and a.dtype != _dt.bfloat16.np for a in arrays):
            np.concatenate(arrays, axis=dim, out=dst, casting="unsafe")
            return
    _it.xp_copy(dst, xp.concatenate([a.astype(dst.dtype) if a.dtype != _dt.bfloat16.np else a.astype(np.float32)
                                     for a in arrays], axis=dim))


def cat(ks, tensors, dim=0):
    shape, dt, dev, strides, dim, arrays = _cat_plan(tensors, dim)
    if dev.type == "meta":
        return empty_tensor(shape, dt, dev, strides)
    xp = backend_for(dev).xp
    if strides is None and dev.type == "cpu" and len(arrays) == len(tensors) and shape:
        r = np.empty(shape, dt.np)      # row-major whatever the inputs' order (NumPy would keep theirs)
        if dt is tensors[0]._impl.dtype and dt is tensors[-1]._impl.dtype and r.size:
            try:                        # one dtype (the common case): no per-array check; a mix raises
                np.concatenate(arrays, axis=dim, out=r, casting="no")
                return wrap(r, dt, dev)
            except TypeError:
                pass
        _concat_into(np, r, arrays, dim)
        return wrap(r, dt, dev)
    out = empty_tensor(shape, dt, dev, strides)
    _concat_into(xp, out._impl._array, arrays, dim)
    return out


def _assert_no_overlap(out_impl, impls):
    """at::assert_no_overlap: an input may not share any memory with the output."""
    oa = out_impl._array
    if type(oa) is not _ndarray or oa.size == 0:
        return
    for im in impls:
        a = im._array
        if type(a) is _ndarray and a.size and np.may_share_memory(oa, a):
            if im is out_impl or np.shares_memory(oa, a, max_work=1000):
                raise RuntimeError(_it._PARTIAL_OVERLAP)


def cat_out(tensors, dim=0, out=None):
    shape, dt, dev, strides, dim, arrays = _cat_plan(tensors, dim)
    o = out._impl
    _it.check_out_device(dev, o)
    if not can_cast(dt, o.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{o.dtype.scalar_type_name}")
    if o._inference:
        o.check_writable()
    _it.resize_out(out, shape, None if strides is None else (lambda: strides))
    if dev.type != "meta":
        _it.check_internal_overlap(o)
        _assert_no_overlap(o, [t._impl for t in tensors])
        _concat_into(backend_for(dev).xp, o._array, arrays, dim)
    o.bump_version()
    return out


def concat(tensors, dim=0):
    return at.cat(tensors, dim)


def concat_out(tensors, dim=0, out=None):
    return at.cat_out(tensors, dim, out)


def concatenate(tensors, dim=0):
    return at.cat(tensors, dim)


def concatenate_out(tensors, dim=0, out=None):
    return at.cat_out(tensors, dim, out)


# --------------------------------------------------------------------------
# stack and its relatives
# --------------------------------------------------------------------------

def _stack_geometry(tensors, dim):
    """The tensors' common shape and the wrapped new dim; PyTorch's checks and texts."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = _shape(tensors[0])
    dim = g.wrap_dim(dim, len(ref) + 1)
    for i in range(1, len(tensors)):
        s = _shape(tensors[i])
        if s != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                               f"{list(s)} at entry {i}")
    return ref, dim


def _stack_inputs(tensors, dim):
    _ref, dim = _stack_geometry(tensors, dim)
    return [at.unsqueeze(t, dim) for t in tensors], dim


def stack(tensors, dim=0):
    """PyTorch's: below the last dim, one cat along ``dim`` viewed with the new dim split off (splitting a dim is
    always a view); at the end, each tensor unsqueezed, then cat."""
    ref, d = _stack_geometry(tensors, dim)
    if d < len(ref):
        return at.view(at.cat(tensors, d), ref[:d] + (len(tensors),) + ref[d:])
    return at.cat([at.unsqueeze(t, d) for t in tensors], d)


def stack_out(tensors, dim=0, out=None):
    parts, dim = _stack_inputs(tensors, dim)
    return at.cat_out(parts, dim, out)


def _nonempty(tensors, name):
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def atleast_1d(self):
    return at.reshape(self, [1]) if _ndim(self) == 0 else self


def atleast_2d(self):
    n = _ndim(self)
    if n == 0:
        return at.reshape(self, [1, 1])
    if n == 1:
        return at.unsqueeze(self, 0)
    return self


def atleast_3d(self):
    n = _ndim(self)
    if n == 0:
        return at.reshape(self, [1, 1, 1])
    if n == 1:
        return at.unsqueeze(at.unsqueeze(self, 0), -1)
    if n == 2:
        return at.unsqueeze(self, -1)
    return self


def atleast_1d_Sequence(tensors):
    return [at.atleast_1d(t) for t in tensors]


def atleast_2d_Sequence(tensors):
    return [at.atleast_2d(t) for t in tensors]


def atleast_3d_Sequence(tensors):
    return [at.atleast_3d(t) for t in tensors]


def _hstack_parts(tensors):
    _nonempty(tensors, "hstack")
    parts = [at.atleast_1d(t) for t in tensors]
    return parts, (0 if _ndim(parts[0]) == 1 else 1)


def hstack(tensors):
    parts, dim = _hstack_parts(tensors)
    return at.cat(parts, dim)


def hstack_out(tensors, out=None):
    parts, dim = _hstack_parts(tensors)
    return at.cat_out(parts, dim, out)


def _vstack_parts(tensors):
    _nonempty(tensors, "vstack")
    return [at.atleast_2d(t) for t in tensors]


def vstack(tensors):
    return at.cat(_vstack_parts(tensors), 0)


def vstack_out(tensors, out=None):
    return at.cat_out(_vstack_parts(tensors), 0, out)


def row_stack(tensors):
    return at.vstack(tensors)


def row_stack_out(tensors, out=None):
    return at.vstack_out(tensors, out)


def _dstack_parts(tensors):
    _nonempty(tensors, "dstack")
    return [at.atleast_3d(t) for t in tensors]


def dstack(tensors):
    return at.cat(_dstack_parts(tensors), 2)


def dstack_out(tensors, out=None):
    return at.cat_out(_dstack_parts(tensors), 2, out)


def _column_parts(tensors):
    _nonempty(tensors, "column_stack")
    return [at.reshape(t, [t._impl._array.size, 1]) if _ndim(t) <= 1 else t for t in tensors]


def column_stack(tensors):
    return at.hstack(_column_parts(tensors))


def column_stack_out(tensors, out=None):
    return at.hstack_out(_column_parts(tensors), out)


def _chunk_cat_parts(tensors, dim, num_chunks):
    """Each tensor padded along ``dim`` to a multiple of ``num_chunks`` and viewed as (lead..., num_chunks, -1)."""
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    ref = tensors[0]._impl
    dt = ref.dtype
    dev = ref.device
    for t in tensors:
        im = t._impl
        if im._array.size == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if im.dtype is not dt:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
        if im.device != dev:
            raise RuntimeError("_chunk_cat expects all inputs tensors on the same device")
    ndims = {_ndim(t) for t in tensors}
    if len(ndims) == 1:
        dim = g.wrap_dim(dim, ref._array.ndim)
    else:
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have different ndims")
        if any(dim >= n for n in ndims):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    lead = list(ref._array.shape[:dim])
    if any(list(_shape(t)[:dim]) != lead for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    parts = []
    for t in tensors:
        shape = _shape(t)
        size = shape[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            pad_shape = list(shape)
            pad_shape[dim] = padded - size
            t = at.cat([t, at.zeros(pad_shape, dt, None, dev, None)], dim)
        parts.append(at.reshape(t, lead + [num_chunks, -1]))
    return parts, dim + 1


def _chunk_cat(tensors, dim, num_chunks):
    parts, d = _chunk_cat_parts(tensors, dim, num_chunks)
    return at.cat(parts, d)


def _chunk_cat_out(tensors, dim, num_chunks, out=None):
    parts, d = _chunk_cat_parts(tensors, dim, num_chunks)
    at.cat_out(parts, d, out)
    return out


# --------------------------------------------------------------------------
# split, chunk, unbind: lists of views (narrow/slice/select of the input)
# --------------------------------------------------------------------------

def _split_sizes_for(self, split_size, dim):
    if _ndim(self) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    dim = g.wrap_dim(dim, _ndim(self))
    dim_size = _shape(self)[dim]
    if split_size == 0 and dim_size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}")
    num = max(-(-dim_size // split_size), 1) if split_size else 1
    last = split_size - (split_size * num - dim_size)
    return [split_size] * (num - 1) + [last], dim


def _split_with_sizes_check(self, split_sizes, dim):
    if _ndim(self) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = g.wrap_dim(dim, _ndim(self))
    dim_size = _shape(self)[dim]
    sizes = list(split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != dim_size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={sizes}")
    return sizes, dim


def _slices(self, sizes, dim):
    out = []
    start = 0
    for s in sizes:
        out.append(at.slice_Tensor(self, dim, start, start + s, 1))
        start += s
    return out


def _multi_output(parts, self):
    """Views that are outputs of one node (split, unbind): PyTorch forbids modifying them in place with grad
    mode on (CreationMeta.MULTI_OUTPUT_NODE); a stricter meta of the input (no_grad, inference) is kept."""
    impl = self._impl
    if _tls_state().grad_enabled and not impl._inference and not impl._creation_meta:
        for p in parts:
            p._impl._creation_meta = CreationMeta.MULTI_OUTPUT_NODE
    return parts


def split(self, split_size, dim=0):
    sizes, dim = _split_sizes_for(self, split_size, dim)
    return _multi_output(_slices(self, sizes, dim), self)


def split_with_sizes(self, split_sizes, dim=0):
    sizes, dim = _split_with_sizes_check(self, split_sizes, dim)
    return _multi_output(_slices(self, sizes, dim), self)


def split_sizes(self, split_size, dim=0):
    return at.split_with_sizes(self, split_size, dim)


def _unview(parts):
    """Fresh tensors with the parts' geometry and memory, but no base: unsafe_split's outputs are not views."""
    for p in parts:
        impl = p._impl
        impl._base = None
        impl._base_tensor = None
        impl._vc = [0]
        impl._creation_meta = 0
    return parts


def unsafe_split(self, split_size, dim=0):
    return _unview(at.split_Tensor(self, split_size, dim))


def unsafe_split_with_sizes(self, split_sizes, dim=0):
    return _unview(at.split_with_sizes(self, split_sizes, dim))


def _copies(parts):
    return [at.clone(p, "contiguous_format") for p in parts]


def split_with_sizes_copy(self, split_sizes, dim=0):
    sizes, dim = _split_with_sizes_check(self, split_sizes, dim)
    return _copies(_slices(self, sizes, dim))


def _copy_list_out(parts, out, opname):
    if len(out) != len(parts):
        raise RuntimeError(f"{opname} expected an out= argument of size {len(parts)}, got size {len(out)}")
    for p, o in zip(parts, out):
        _it.check_out_device(p._impl.device, o._impl)
        if o._impl.dtype is not p._impl.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {p._impl.dtype.typemeta_name}, but got "
                               f"{o._impl.dtype.typemeta_name} instead")
    for p, o in zip(parts, out):
        _it.resize_out(o, _shape(p))
        at.copy_(o, p, False)


def split_with_sizes_copy_out(self, split_sizes, dim=0, out=None):
    sizes, dim = _split_with_sizes_check(self, split_sizes, dim)
    _copy_list_out(_slices(self, sizes, dim), out, "split_with_sizes_copy_out")


def unbind(self, dim=0):
    n = _ndim(self)
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = g.wrap_dim(dim, n)
    return _multi_output([at.select_int(self, dim, i) for i in range(_shape(self)[dim])], self)


def unbind_copy(self, dim=0):
    return _copies(at.unbind_int(self, dim))


def unbind_copy_out(self, dim=0, out=None):
    parts = at.unbind_int(self, dim)
    _copy_list_out(parts, out, "unbind_copy_int_out")


def _chunk_sizes(self, chunks, dim):
    if _ndim(self) == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = g.wrap_dim(dim, _ndim(self))
    dim_size = _shape(self)[dim]
    split_size = -(-dim_size // chunks)
    if split_size == 0 and dim_size == 0:
        sizes = [split_size] * chunks
        sizes[-1] = split_size - (split_size * chunks - dim_size)
        return sizes, dim, None
    return None, dim, split_size


def chunk(self, chunks, dim=0):
    sizes, dim, split_size = _chunk_sizes(self, chunks, dim)
    if sizes is not None:
        return at.split_with_sizes(self, sizes, dim)
    return at.split_Tensor(self, split_size, dim)


def unsafe_chunk(self, chunks, dim=0):
    sizes, dim, split_size = _chunk_sizes(self, chunks, dim)
    if sizes is not None:
        return at.unsafe_split_with_sizes(self, sizes, dim)
    return at.unsafe_split_Tensor(self, split_size, dim)


def _tensor_split_dim(self, dim):
    n = _ndim(self)
    if n == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with {n} dims")
    return g.wrap_dim(dim, n)


def tensor_split_sections(self, sections, dim=0):
    dim = _tensor_split_dim(self, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = _shape(self)[dim]
    base, extra = divmod(size, sections)
    out = []
    start = 0
    for i in range(sections):
        n = base + 1 if i < extra else base
        out.append(at.slice_Tensor(self, dim, start, start + n, 1))
        start += n
    return out


def tensor_split_indices(self, indices, dim=0):
    dim = _tensor_split_dim(self, dim)
    out = []
    start = 0
    for end in indices:
        out.append(at.slice_Tensor(self, dim, start, end, 1))
        start = end
    out.append(at.slice_Tensor(self, dim, start, _shape(self)[dim], 1))
    return out


def tensor_split_tensor_indices_or_sections(self, tensor_indices_or_sections, dim=0):
    _tensor_split_dim(self, dim)
    ti = tensor_indices_or_sections._impl
    if ti.device.type != "cpu":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {ti.device}")
    if ti.dtype is not _dt.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{ti.dtype.scalar_type_name}")
    n = ti._array.ndim
    if n > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {n} dims")
    if n == 0:      # item(): a fake tensor raises DataDependentOutputException there, as in PyTorch
        return at.tensor_split_sections(self, int(tensor_indices_or_sections.item()), dim)
    if ti._array.size and type(ti._array) is MetaArray:
        # PyTorch reads the indices from the tensor's memory, which a fake tensor does not have
        raise RuntimeError("The tensor has a non-zero number of elements, but its data is not allocated yet.")
    return at.tensor_split_indices(self, [int(v) for v in ti._array.tolist()], dim)


_SPLIT_DIMS = {"hsplit": (1, None), "vsplit": (2, 0), "dsplit": (3, 2)}


def _xsplit_dim(self, name):
    need, dim = _SPLIT_DIMS[name]
    n = _ndim(self)
    if n < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{n} dimensions!")
    return (0 if n == 1 else 1) if dim is None else dim


def _xsplit_int(self, sections, name):
    dim = _xsplit_dim(self, name)
    size = _shape(self)[dim]
    if sections == 0 or size % sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{size} is not divisible by the split_size {sections}!")
    return at.tensor_split_sections(self, sections, dim)


def hsplit_int(self, sections):
    return _xsplit_int(self, sections, "hsplit")


def hsplit_array(self, indices):
    return at.tensor_split_indices(self, indices, _xsplit_dim(self, "hsplit"))


def vsplit_int(self, sections):
    return _xsplit_int(self, sections, "vsplit")


def vsplit_array(self, indices):
    return at.tensor_split_indices(self, indices, _xsplit_dim(self, "vsplit"))


def dsplit_int(self, sections):
    return _xsplit_int(self, sections, "dsplit")


def dsplit_array(self, indices):
    return at.tensor_split_indices(self, indices, _xsplit_dim(self, "dsplit"))


# --------------------------------------------------------------------------
# reshaping views
# --------------------------------------------------------------------------

def flatten_using_ints(self, start_dim=0, end_dim=-1):
    n = _ndim(self)
    start = g.wrap_dim(start_dim, n)
    end = g.wrap_dim(end_dim, n)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if n == 0:
        return at.reshape(self, [1])
    if start == end:
        return self
    shape = _shape(self)
    return at.reshape(self, list(shape[:start]) + [math.prod(shape[start:end + 1])] + list(shape[end + 1:]))


def unflatten_int(self, dim, sizes):
    shape = _shape(self)
    dim = g.wrap_dim(dim, len(shape))
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        inferred = list(g.infer_size(tuple(sizes), shape[dim]))
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                           f"({shape[dim]}) in the input tensor") from None
    return at.view(self, list(shape[:dim]) + inferred + list(shape[dim + 1:]))


def ravel(self):
    return at.view(at.contiguous(self, "contiguous_format"), [-1])


def _narrow_start(self, dim, start, length, opname_checks_length_first):
    n = _ndim(self)
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if opname_checks_length_first and length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = g.wrap_dim(dim, n)
    cur = _shape(self)[dim]
    if not -cur <= start <= cur:
        raise IndexError(f"start out of range (expected to be in range of [{-cur}, {cur}], but got {start})")
    if start < 0:
        start += cur
    if length < 0 or start > cur - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({cur}).")
    return dim, start


def narrow(self, dim, start, length):
    dim, start = _narrow_start(self, dim, start, length, True)
    return at.slice_Tensor(self, dim, start, start + length, 1)


def narrow_Tensor(self, dim, start, length):
    si = start._impl
    if si._array.ndim != 0 or si.dtype.category != 1:
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return at.narrow(self, dim, int(backend_for(si.device).to_numpy(si._array)), length)


def _narrow_copy_dim(self, dim):
    if _ndim(self) and dim >= _ndim(self):      # the CPU kernel's own check, before the dim is wrapped
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")


def narrow_copy(self, dim, start, length):
    _narrow_copy_dim(self, dim)
    dim, start = _narrow_start(self, dim, start, length, False)
    return at.clone(at.slice_Tensor(self, dim, start, start + length, 1), "contiguous_format")


def narrow_copy_out(self, dim, start, length, out=None):
    _narrow_copy_dim(self, dim)
    dim, start = _narrow_start(self, dim, start, length, False)
    return _copy_out(at.slice_Tensor(self, dim, start, start + length, 1), out)


def _copy_out(src, out):
    """A *_copy op's out=: the exact dtype, out resized to the result's shape, then copied."""
    s = src._impl
    o = out._impl
    _it.check_out_device(s.device, o)
    if o.dtype is not s.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {s.dtype.typemeta_name}, but got "
                           f"{o.dtype.typemeta_name} instead")
    _it.resize_out(out, s._array.shape)
    return at.copy_(out, src, False)


def _movedim_perm(n, source, destination):
    src = list(source)
    dst = list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    src_w = [g.wrap_dim(d, n) for d in src]
    dst_w = [g.wrap_dim(d, n) for d in dst]
    if len(set(src_w)) != len(src_w):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst_w)) != len(dst_w):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [-1] * n
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(d for d in range(n) if d not in set(src_w))
    return [o if o != -1 else next(rest) for o in order]


def movedim_intlist(self, source, destination):
    n = _ndim(self)
    perm = _movedim_perm(n, source, destination)
    if n == 0:
        return at.alias(self)
    return at.permute(self, perm)


def movedim_int(self, source, destination):
    return at.movedim_intlist(self, [source], [destination])


def moveaxis_intlist(self, source, destination):
    return at.movedim_intlist(self, source, destination)


def moveaxis_int(self, source, destination):
    return at.movedim_intlist(self, [source], [destination])


def swapaxes(self, axis0, axis1):
    return at.transpose_int(self, axis0, axis1)


def swapdims(self, dim0, dim1):
    return at.transpose_int(self, dim0, dim1)


def broadcast_to(self, size):
    return at.expand(self, size, False)


def broadcast_tensors(tensors):
    shape = _it.broadcast_operands([tuple(_shape(t)) for t in tensors])
    return [at.expand(t, list(shape), False) for t in tensors]


def expand_as(self, other):
    return at.expand(self, list(_shape(other)), False)


def reshape_as(self, other):
    return at.reshape(self, list(_shape(other)))


def view_as(self, other):
    return at.view(self, list(_shape(other)))


def _meshgrid(tensors, indexing):
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a._impl.dtype is not b._impl.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a._impl.device != b._impl.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    for t in ts:
        if _ndim(t) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    shape = [t._impl._array.size for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = -1
        grids.append(at.expand(at.view(t, view_shape), shape, False))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def meshgrid(tensors):
    return _meshgrid(tensors, "ij")


def meshgrid_indexing(tensors, indexing):
    return _meshgrid(tensors, indexing)


def sum_to_size(self, size):
    size = tuple(size)
    shape = tuple(_shape(self))
    if not g.is_expandable_to(size, shape):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if not size:            # at::sum_to: an empty target is a full sum (a new tensor, bool summed to int64)
        return at.sum(self, None)
    if shape == size:
        return self
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    r = at.sum_dim_IntList(self, dims, True, None) if dims else self
    if lead:
        r = at.view(r, list(size))
    return r


# --------------------------------------------------------------------------
# unfold and the copying variants of the views (``*_copy``: the view, then a contiguous copy)
# --------------------------------------------------------------------------

def unfold(self, dimension, size, step):
    from .views import _geom, make_view
    return make_view(self, *g.unfold(*_geom(self), dimension, size, step))


def unfold_backward(grad_in, input_sizes, dim, size, step):
    """The gradient of unfold: every window's gradient added back where the window came from."""
    if step <= 0:
        raise ValueError(f"step is {step} but must be > 0")
    sizes = list(input_sizes)
    gi = grad_in._impl
    out = at.zeros(sizes, gi.dtype, None, gi.device, None)
    n = len(sizes)
    d = g.wrap_dim(dim, n)
    if n == 0:
        return at.add_Tensor(out, at.sum(grad_in, None), 1)
    count = grad_in._impl._array.shape[d]
    if count == 0 or size == 0 or gi.device.type == "meta" or out._impl.device.type == "meta":
        return out
    if gi.device.type == "cpu":
        # window w covers positions w*step .. w*step+size-1: one scatter-add of every window at once
        idx = np.arange(count)[:, None] * step + np.arange(size)[None, :]
        dst = np.moveaxis(out._impl._array, d, 0)
        np.add.at(dst, idx, np.moveaxis(gi._array, (d, n), (0, 1)))
        return out
    # other backends: add each offset's slab at once
    for k in range(size):
        dst = at.slice_Tensor(out, d, k, k + (count - 1) * step + 1, step)
        src = at.select_int(grad_in, n, k)
        at.add__Tensor(dst, src, 1)
    return out


def _contig(t):
    return at.clone(t, "contiguous_format")


def alias_copy(self):
    return _contig(at.alias(self))


def as_strided_copy(self, size, stride, storage_offset=None):
    return _contig(at.as_strided(self, size, stride, storage_offset))


def diagonal_copy(self, offset=0, dim1=0, dim2=1):
    return _contig(at.diagonal(self, offset, dim1, dim2))


def expand_copy(self, size, implicit=False):
    return _contig(at.expand(self, size, implicit))


def permute_copy(self, dims):
    return _contig(at.permute(self, dims))


def slice_copy(self, dim=0, start=None, end=None, step=1):
    return _contig(at.slice_Tensor(self, dim, start, end, step))


def squeeze_copy(self):
    return _contig(at.squeeze(self))


def squeeze_copy_dim(self, dim):
    return _contig(at.squeeze_dim(self, dim))


def squeeze_copy_dims(self, dim):
    return _contig(at.squeeze_dims(self, dim))


def t_copy(self):
    return _contig(at.t(self))


def transpose_copy(self, dim0, dim1):
    return _contig(at.transpose_int(self, dim0, dim1))


def unfold_copy(self, dimension, size, step):
    return _contig(at.unfold(self, dimension, size, step))


def unsqueeze_copy(self, dim):
    return _contig(at.unsqueeze(self, dim))


def view_copy(self, size):
    # view_copy may copy where view cannot (PyTorch's view_copy is reshape then a contiguous copy)
    return _contig(at.reshape(self, size))


def alias_copy_out(self, out):
    return _copy_out(at.alias_copy(self), out)


def as_strided_copy_out(self, size, stride, storage_offset=None, out=None):
    return _copy_out(at.as_strided_copy(self, size, stride, storage_offset), out)


def diagonal_copy_out(self, offset=0, dim1=0, dim2=1, out=None):
    return _copy_out(at.diagonal_copy(self, offset, dim1, dim2), out)


def expand_copy_out(self, size, implicit=False, out=None):
    return _copy_out(at.expand_copy(self, size, implicit), out)


def permute_copy_out(self, dims, out=None):
    return _copy_out(at.permute_copy(self, dims), out)


def slice_copy_out(self, dim=0, start=None, end=None, step=1, out=None):
    return _copy_out(at.slice_copy_Tensor(self, dim, start, end, step), out)


def squeeze_copy_out(self, out=None):
    return _copy_out(at.squeeze_copy(self), out)


def squeeze_copy_dim_out(self, dim, out=None):
    return _copy_out(at.squeeze_copy_dim(self, dim), out)


def squeeze_copy_dims_out(self, dim, out=None):
    return _copy_out(at.squeeze_copy_dims(self, dim), out)


def t_copy_out(self, out=None):
    return _copy_out(at.t_copy(self), out)


def transpose_copy_out(self, dim0, dim1, out=None):
    return _copy_out(at.transpose_copy_int(self, dim0, dim1), out)


def unfold_copy_out(self, dimension, size, step, out=None):
    return _copy_out(at.unfold_copy(self, dimension, size, step), out)


def unsqueeze_copy_out(self, dim, out=None):
    return _copy_out(at.unsqueeze_copy(self, dim), out)


def view_copy_out(self, size, out=None):
    return _copy_out(at.view_copy(self, size), out)


# --------------------------------------------------------------------------
# new_* / empty_permuted / eye / logspace
# --------------------------------------------------------------------------

def _opts(self, dtype, device):
    impl = self._impl
    return (dtype if dtype is not None else impl.dtype), (canonical(device) if device is not None else impl.device)


def new_empty(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    dt, dev = _opts(self, dtype, device)
    return at.empty_memory_format(size, dt, layout, dev, None, None)


def new_empty_strided(self, size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    dt, dev = _opts(self, dtype, device)
    return at.empty_strided(size, stride, dt, layout, dev, None)


def new_full(self, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    dt, dev = _opts(self, dtype, device)
    return at.full(size, fill_value, dt, layout, dev, None)


def new_zeros(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    dt, dev = _opts(self, dtype, device)
    return at.zeros(size, dt, layout, dev, None)


def new_ones(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    dt, dev = _opts(self, dtype, device)
    return at.ones(size, dt, layout, dev, None)


def empty_permuted(size, physical_layout, dtype=None, layout=None, device=None, pin_memory=None):
    size = tuple(size)
    perm = list(physical_layout)
    n = len(size)
    if n != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {n} is not equal to len(physical_layout) = {len(perm)}")
    seen = [False] * n
    for i, p in enumerate(perm):
        if not 0 <= p < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, but got {p} at index "
                               f"{i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if seen[p]:
            raise RuntimeError("Duplicate dim not allowed")
        seen[p] = True
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    phys = g.contiguous_strides(tuple(size[p] for p in perm))
    strides = [0] * n
    for i, p in enumerate(perm):
        strides[p] = phys[i]
    return empty_tensor(size, dtype or _dt.get_default_dtype(), canonical(device), tuple(strides))


def _eye_check(n, m):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")


def _eye_fill(t, n, m):
    impl = t._impl
    if impl.device.type != "meta":
        arr = impl._array
        arr[...] = 0
        k = min(n, m)
        if k:
            idx = np.arange(k) if impl.device.type == "cpu" else backend_for(impl.device).xp.arange(k)
            arr[idx, idx] = 1
    return t


def eye(n, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype, layout, device, pin_memory)


def eye_m(n, m, dtype=None, layout=None, device=None, pin_memory=None):
    _eye_check(n, m)
    return _eye_fill(empty_tensor((n, m), dtype or _dt.get_default_dtype(), canonical(device)), n, m)


def eye_out(n, out):
    return eye_m_out(n, n, out)


def eye_m_out(n, m, out):
    _eye_check(n, m)
    _it.resize_out(out, (n, m))
    _it.check_internal_overlap(out._impl)
    _eye_fill(out, n, m)
    out._impl.bump_version()
    return out


def _logspace_array(start, end, steps, base, dt):
    """PyTorch's logspace values: integer dtypes take integer bounds and truncate base**x; the second half
    is computed from the end, as PyTorch's kernel does, so both ends are exact."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dt.is_complex:
        ct = np.complex128
    elif dt.category == 1 or dt is _dt.bool or dt is _dt.float64:
        ct = np.float64
    else:
        ct = np.float32
    if dt.category <= 1:
        start, end = int(_real(start)), int(_real(end))
    elif not dt.is_complex:
        start, end = _real(start), _real(end)
    if steps == 0:
        return np.empty((0,), ct)
    if dt.category == 2 and dt.itemsize < 8 and steps > 1:
        return _float_logspace(start, end, steps, base, dt)
    if steps == 1:
        x = np.array([start], ct)
    else:
        step = (end - start) / (steps - 1)
        idx = np.arange(steps)
        half = steps // 2
        x = np.where(idx < half, start + step * idx, end - step * (steps - idx - 1)).astype(ct)
    with np.errstate(all="ignore"):
        r = np.power(ct(base) if ct is not np.float32 else np.float32(base), x)
    if dt.category <= 1 and dt is not _dt.bool:
        with np.errstate(all="ignore"):
            r = np.trunc(r)
    return r


def _float_logspace(start, end, steps, base, dt):
    """ATen's CPU logspace for a floating dtype: start and end (and their difference) rounded to the
    dtype, then exponents and powers in double, each value rounded to the dtype (through float)."""
    t = dt.np

    def rnd(x):
        x = np.asarray(x, np.float64)
        return (x.astype(np.float32) if dt.itemsize < 4 else x).astype(t).astype(np.float64)
    with np.errstate(all="ignore"):     # overflow to inf is the dtype's own result
        s, e = rnd(start), rnd(end)
        step = float(rnd(e - s)) / (steps - 1)
        i = np.arange(steps, dtype=np.int64)
        x = np.where(i < steps // 2, s + step * i, e - step * (steps - i - 1))
        r = np.power(np.float64(base), x)
        return r.astype(np.float32).astype(t) if dt.itemsize < 4 else r.astype(t)


def _real(v):
    if isinstance(v, complex):
        return v.real
    return float(v) if not isinstance(v, (bool, int)) else int(v)


def _write_values(t, vals):
    impl = t._impl
    if impl.device.type == "meta":
        return
    arr = vals if impl.device.type == "cpu" else backend_for(impl.device).from_numpy(vals, impl.device)
    _it.xp_copy(impl._array, arr)


def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or (_dt.get_default_complex_dtype() if any(isinstance(v, complex) for v in (start, end))
                   else _dt.get_default_dtype())
    vals = _logspace_array(start, end, steps, base, dt)
    out = empty_tensor((steps,), dt, canonical(device))
    _it.refuse_barebones_unsigned("logspace_cpu", out._impl)
    _write_values(out, vals)
    return out


def _logspace_bounds(start, end):
    from ...core.tensor import Tensor
    bad = [f"{name} with {b._impl._array.ndim} dimension(s)" for name, b in (("start", start), ("end", end))
           if isinstance(b, Tensor) and b._impl._array.ndim != 0]
    if bad:
        raise RuntimeError(f"logspace only supports 0-dimensional start and end tensors, but got {' and '.join(bad)}.")
    dev = None
    vals = []
    for b in (start, end):
        if isinstance(b, Tensor):
            if dev is None or b._impl.device.type == "meta":
                dev = b._impl.device
            b = 0 if b._impl.device.type == "meta" else b.item()
        vals.append(b)
    return vals, dev


def logspace_tensor_bounds(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    (s, e), dev = _logspace_bounds(start, end)
    return logspace(s, e, steps, base, dtype, layout, device if device is not None else dev, pin_memory)


def logspace_out(start, end, steps, base=10.0, out=None):
    _it.refuse_barebones_unsigned("logspace_cpu", out._impl)
    dt = out._impl.dtype
    if dt is _dt.bool:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    if not dt.is_complex:
        from .factories import checked_scalar
        for v in (start, end):
            if isinstance(v, complex):
                checked_scalar(v, dt)       # PyTorch's "value cannot be converted ... without overflow"
    vals = _logspace_array(start, end, steps, base, dt)
    _it.iterator_out(out, (steps,))
    _write_values(out, vals)
    out._impl.bump_version()
    return out


def _logspace_tensor_out(start, end, steps, base=10.0, out=None):
    from ...core.tensor import Tensor
    (s, e), _ = _logspace_bounds(start, end)
    dst = out._impl.device
    for name, b in (("start", start), ("end", end)):
        # the bounds are copied to out's device (end not when out is meta), as linspace's
        if isinstance(b, Tensor) and b._impl.device != dst and (name == "start" or dst.type != "meta"):
            raise RuntimeError(f"Attempting to copy from device {b._impl.device} to device {dst}, but cross-device "
                               "copies are not allowed!")
    return at.logspace_out(s, e, steps, base, out)


# --------------------------------------------------------------------------
# fill, zero_, equal, resize_
# --------------------------------------------------------------------------

def fill_Scalar(self, value):
    return at.fill__Scalar(at.empty_like(self, None, None, None, None, None), value)


def fill_Tensor(self, value):
    return at.fill__Tensor(at.empty_like(self, None, None, None, None, None), value)


def zero_(self):
    return at.fill__Scalar(self, 0)


def equal(self, other):
    a = self._impl
    b = other._impl
    if a.device != b.device:
        raise RuntimeError(f"Cannot compare two tensors on different devices. Got: {a.device} and {b.device}")
    if a._array.shape != b._array.shape:
        return False
    if a.device.type == "meta":
        raise RuntimeError("aten::equal: cannot compare the values of meta tensors (they have no data)")
    xp = backend_for(a.device).xp
    x, y = a._array, b._array
    if x.dtype != y.dtype:
        ct = promote_types(a.dtype, b.dtype).np
        x, y = x.astype(ct), y.astype(ct)
    return bool(xp.array_equal(x, y))


def _resize_geometry(size, memory_format):
    shape = tuple(size)
    if any(s < 0 for s in shape) or math.prod(shape) > (1 << 63) - 1:
        n = 1
        for s in shape:         # c10's checked numel, over the sizes as unsigned 64-bit numbers
            n *= s % (1 << 64)
            if n > (1 << 63) - 1:
                raise RuntimeError("numel: integer multiplication overflow")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    fmt = memory_format or "contiguous_format"
    if fmt == "preserve_format":
        raise RuntimeError("Unsupported memory format Preserve")
    if fmt == "channels_last" and len(shape) != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if fmt == "channels_last_3d" and len(shape) != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    return shape, g.strides_for_format(shape, fmt)


def _restride(self, shape, strides):
    """Give ``self`` this geometry over its storage, growing the storage (old bytes kept) when it is too small."""
    from ...core.tensor_impl import STORAGE_MAKERS
    impl = self._impl
    b = backend_for(impl.device)
    dt = impl.dtype
    storage = impl.storage()
    offset = impl._offset
    need = offset + (1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0)
    if need * dt.itemsize > storage._nbytes:
        flat = b.empty((need,), dt.np, impl.device)
        old_data = storage.data
        if impl.device.type != "meta":
            old = storage._nbytes // dt.itemsize
            if old:
                flat[:old] = b.view(storage, (old,), (1,), 0, dt.np)
        storage, _ = STORAGE_MAKERS[impl.device.type](flat)
        impl._storage = storage
        impl._array = b.view(storage, shape, strides, offset if all(shape) else 0, dt.np)
        impl._strides = strides if not all(shape) else None
        if type(old_data) is np.ndarray and old_data.size:
            _move_views(old_data, storage, impl)
        return self
    impl._array = b.view(storage, shape, strides, offset if all(shape) else 0, dt.np)
    impl._strides = strides if not all(shape) else None
    return self


def _move_views(old_data, storage, resized):
    """PyTorch grows a storage in place: every tensor over it (views, the storage objects handed out) sees the
    new memory.  onion's tensors hold NumPy views of the old buffer, so the ones over it are found (through
    the garbage collector's referrers: only here, on the rare path where resize_ grows a shared storage) and
    re-made over the new buffer at the same byte offsets."""
    import gc
    import sys
    from ...core.storage import Storage
    from ...core.tensor_impl import TensorImpl
    root = old_data
    while isinstance(root.base, np.ndarray):
        root = root.base
    del old_data
    # held here (root), by the call (getrefcount's argument) and by the old buffer's byte view when root is not
    # that view itself: anything more is another array over the old memory
    if sys.getrefcount(root) <= 3:
        return
    start = root.__array_interface__["data"][0]
    new_bytes = storage.data

    def over_root(a):
        return type(a) is np.ndarray and (a is root or a.base is root)
    for obj in gc.get_objects():
        if isinstance(obj, TensorImpl):
            arr = obj._array
            if obj is not resized and over_root(arr):
                off = arr.__array_interface__["data"][0] - start
                obj._array = np.ndarray(arr.shape, arr.dtype, new_bytes, off, arr.strides)
                if obj._storage is not None:
                    obj._storage = storage
                    obj._offset = off // arr.dtype.itemsize
        elif type(obj) is Storage and obj is not storage and over_root(obj.data):
            obj.data = new_bytes
            obj._nbytes = storage._nbytes


def resize_(self, size, memory_format=None):
    impl = self._impl
    if impl.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape, strides = _resize_geometry(size, memory_format)
    if tuple(impl._array.shape) == shape and memory_format is None:
        return self
    return _restride(self, shape, strides)


def resize_as_(self, the_template, memory_format=None):
    ti = the_template._impl
    shape = tuple(ti._array.shape)
    if memory_format == "preserve_format":
        memory_format = g.suggest_memory_format(shape, ti.strides)
    return at.resize_(self, list(shape), memory_format)


# logspace's Tensor overloads with out= (0-dim bounds): CompositeImplicitAutograd bodies, found by name, as linspace's
def logspace_Tensor_Tensor_out(start, end, steps, base=10.0, out=None):
    return _logspace_tensor_out(start, end, steps, base, out)


def logspace_Tensor_Scalar_out(start, end, steps, base=10.0, out=None):
    return _logspace_tensor_out(start, end, steps, base, out)


def logspace_Scalar_Tensor_out(start, end, steps, base=10.0, out=None):
    return _logspace_tensor_out(start, end, steps, base, out)


# ---- cartesian_prod, combinations (PyTorch's CompositeImplicitAutograd bodies: meshgrid, then select and stack)
def _expect_1d(t):
    if t._impl._array.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._impl._array.shape)}")


def cartesian_prod(tensors):
    """Every tuple of one element from each 1-D tensor, rows in lexicographic order (a single tensor is itself)."""
    for t in tensors:
        _expect_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = at.meshgrid_indexing(list(tensors), "ij")
    return at.stack([at.flatten_using_ints(g, 0, -1) for g in grids], 1)


def combinations(self, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements (with repeats if asked), as rows, in
    itertools.combinations order: a meshgrid of r copies, kept where the index grids increase."""
    _expect_1d(self)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return at.empty_memory_format([0], self._impl.dtype, None, self._impl.device, None, None)
    n = self._impl._array.shape[0]
    idx = at.arange_start(0, n, _dt.int64, None, self._impl.device, None)
    index_grids = at.meshgrid_indexing([idx] * r, "ij")
    mask = at.ones_like(index_grids[0], _dt.bool, None, None, None, None)   # r == 1: every element, still selected
    for a, b in zip(index_grids, index_grids[1:]):
        mask = at.logical_and(mask, at.le_Tensor(a, b) if with_replacement else at.lt_Tensor(a, b))
    grids = at.meshgrid_indexing([self] * r, "ij")
    return at.stack([at.masked_select(g, mask) for g in grids], 1)


def swapaxes_(self, axis0, axis1):
    return at.transpose_(self, axis0, axis1)


def swapdims_(self, dim0, dim1):
    return at.transpose_(self, dim0, dim1)
