"""Geometry of PyTorch's view operators, as pure functions over ints and tuples.

A view never touches data: it maps an input geometry ``(sizes, strides, offset)``
to a new one over the same storage. Each function here returns exactly what
PyTorch gives for ``t.size(), t.stride(), t.storage_offset()`` and raises
PyTorch's exception type and text on bad input, so view kernels, meta kernels and
fake tensors can all share them. ``output_strides_like`` is the one non-view
piece: the layout TensorIterator picks for an elementwise op's fresh output.
"""
from math import prod as _prod

from ..core.geometry import (channels_last_3d_strides, channels_last_strides, sort_dims,  # noqa: F401  core's rules;
                             contiguous_strides, infer_dense_strides, is_channels_last_3d_contiguous,  # kernels
                             is_channels_last_contiguous, is_contiguous, is_contiguous_as,  # also find them here
                             is_non_overlapping_and_dense, like_strides, meta_like_strides, preserve_strides,
                             strides_for_format, suggest_memory_format, wrap_dim, elementwise_ref_strides)

_INT64_MAX = (1 << 63) - 1
_U64 = 1 << 64


# --------------------------------------------------------------------------
# dims and shapes
# --------------------------------------------------------------------------

def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def infer_size(shape, numel):
    """Resolve one ``-1`` in ``shape`` against ``numel`` (ATen's infer_size)."""
    newsize = 1
    infer_dim = None
    for d, s in enumerate(shape):
        if s == -1:
            if infer_dim is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_dim = d
        elif s >= 0:
            newsize *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {d} of shape {_shape_str(shape)}")
    if infer_dim is None:
        if numel != newsize:
            raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
        return tuple(shape)
    if not (numel == newsize or (newsize > 0 and numel % newsize == 0)):
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    if newsize == 0:
        raise RuntimeError(
            f"cannot reshape tensor of 0 elements into shape {_shape_str(shape)} because the "
            "unspecified dimension size -1 can be any value and is ambiguous")
    res = list(shape)
    res[infer_dim] = numel // newsize
    return tuple(res)


# --------------------------------------------------------------------------
# broadcasting
# --------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """torch.broadcast_shapes: ints count as 1-D shapes, None is skipped."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    if not shapes:
        return ()
    ndim = max(len(s) for s in shapes)
    common = [1] * ndim
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            size = shape[idx]
            if size == common[idx]:
                continue
            if common[idx] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = size
            if size == 1:
                continue
            if common[idx] != size:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {idx}! Mismatching "
                    f"argument at index {arg_idx} had {shape}; but expected shape should be "
                    f"broadcastable to {common}")
    return tuple(common)


def broadcast_pair_for_op(shape_a, shape_b):
    """Broadcast of two operand shapes as an elementwise op (ATen's infer_size) does it."""
    if len(shape_a) == len(shape_b) and tuple(shape_a) == tuple(shape_b):
        return tuple(shape_a)
    na = len(shape_a)
    nb = len(shape_b)
    ndim = na if na > nb else nb
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        off = ndim - 1 - i
        da = na - 1 - off
        db = nb - 1 - off
        sa = shape_a[da] if da >= 0 else 1
        sb = shape_b[db] if db >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) "
                f"at non-singleton dimension {i}")
        out[i] = sb if sa == 1 else sa
    return tuple(out)


# --------------------------------------------------------------------------
# view / reshape
# --------------------------------------------------------------------------

def compute_stride(oldshape, oldstride, newshape):
    """ATen's computeStride: strides viewing (oldshape, oldstride) as newshape, or None."""
    if not oldshape:
        return (1,) * len(newshape)
    n = numel(oldshape)
    if n == 0:
        if tuple(oldshape) == tuple(newshape):
            return tuple(oldstride)
        return contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1
                             and oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def view(sizes, strides, offset, shape):
    shape = infer_size(shape, numel(sizes))
    st = compute_stride(sizes, strides, shape)
    if st is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return shape, st, offset


def reshape_is_view(sizes, strides, shape):
    """(new_sizes, new_strides) when reshape can alias the input, None when it must copy."""
    shape = infer_size(shape, numel(sizes))
    st = compute_stride(sizes, strides, shape)
    if st is None:
        return None
    return shape, st


# --------------------------------------------------------------------------
# dimension shuffles
# --------------------------------------------------------------------------

def alias(sizes, strides, offset):
    return sizes, strides, offset


def transpose(sizes, strides, offset, dim0, dim1):
    n = len(sizes)
    dim0 = wrap_dim(dim0, n)
    dim1 = wrap_dim(dim1, n)
    if dim0 == dim1:
        return sizes, strides, offset
    sz = list(sizes)
    st = list(strides)
    sz[dim0], sz[dim1] = sz[dim1], sz[dim0]
    st[dim0], st[dim1] = st[dim1], st[dim0]
    return tuple(sz), tuple(st), offset


def t(sizes, strides, offset, name="t"):
    n = len(sizes)
    if n > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {n}D")
    if n < 2:
        return sizes, strides, offset
    return (sizes[1], sizes[0]), (strides[1], strides[0]), offset


def permute(sizes, strides, offset, dims):
    n = len(sizes)
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{n} is not equal to len(dims) = {len(dims)}")
    seen = [False] * n
    sz = [0] * n
    st = [0] * n
    for i, d in enumerate(dims):
        d = wrap_dim(d, n)
        if seen[d]:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        seen[d] = True
        sz[i] = sizes[d]
        st[i] = strides[d]
    return tuple(sz), tuple(st), offset


def _check_numel(sizes):
    """TensorImpl's safe_compute_numel: negative sizes wrap as unsigned and overflow."""
    n = 1
    over = False
    for s in sizes:
        n *= s % _U64
        if n >= _U64:
            over = True
            n %= _U64
    if over or n > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")


def expand(sizes, strides, offset, shape, type_str="torch.FloatTensor"):
    """``type_str`` is the tensor's legacy type name, which the rank error quotes."""
    ndim = len(shape)
    tdim = len(sizes)
    if ndim < tdim:
        raise RuntimeError(
            f"expand({type_str}{{{_shape_str(sizes)}}}, size={_shape_str(shape)}): the number of "
            f"sizes provided ({ndim}) must be greater or equal to the number of dimensions in "
            f"the tensor ({tdim})")
    if tdim == 0:
        out_sizes = tuple(shape)
        out_strides = (0,) * ndim
        negative = False
        for s in out_sizes:
            if s < 0:
                negative = True
    else:
        # from the last dim to the first, as ATen (so the first error found is ATen's):
        # the tensor's own dims line up with the last ones, new dims lead
        sz = [0] * ndim
        st = [0] * ndim
        negative = False
        i = ndim - 1
        for d in range(tdim - 1, -1, -1):
            size = sizes[d]
            target = shape[i]
            if target == -1 or target == size:
                sz[i] = size
                st[i] = strides[d]
            elif size == 1:     # broadcast: stride 0
                sz[i] = target
                if target < 0:
                    negative = True
            else:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: "
                    f"{_shape_str(shape)}.  Tensor sizes: {_shape_str(sizes)}")
            i -= 1
        while i >= 0:
            target = shape[i]
            if target == 1:     # a new size-1 dim strides over the dims after it
                sz[i] = 1
                st[i] = sz[i + 1] * st[i + 1]
            elif target == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}")
            else:
                sz[i] = target
                if target < 0:
                    negative = True
            i -= 1
        out_sizes = tuple(sz)
        out_strides = tuple(st)
    if negative:
        _check_numel(out_sizes)
    elif _prod(out_sizes) > _INT64_MAX:       # (a size-0 dim makes any other size fine)
        raise RuntimeError("numel: integer multiplication overflow")
    return out_sizes, out_strides, offset


def unsqueeze(sizes, strides, offset, dim):
    n = len(sizes)
    dim = wrap_dim(dim, n + 1)
    new_stride = 1 if dim >= n else sizes[dim] * strides[dim]
    return (sizes[:dim] + (1,) + sizes[dim:],
            strides[:dim] + (new_stride,) + strides[dim:], offset)


def squeeze(sizes, strides, offset, dims=None):
    """squeeze(), squeeze(dim) with an int, squeeze(dims) with a tuple/list."""
    n = len(sizes)
    if dims is None:
        keep = [i for i in range(n) if sizes[i] != 1]
    elif isinstance(dims, int):
        d = wrap_dim(dims, n)
        if n == 0 or sizes[d] != 1:
            return sizes, strides, offset
        keep = [i for i in range(n) if i != d]
    else:
        mask = [False] * max(n, 1)
        for d in dims:
            d = wrap_dim(d, n)
            if mask[d]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            mask[d] = True
        keep = [i for i in range(n) if not mask[i] or sizes[i] != 1]
    if len(keep) == n:
        return sizes, strides, offset
    return tuple(sizes[i] for i in keep), tuple(strides[i] for i in keep), offset


# --------------------------------------------------------------------------
# indexing views
# --------------------------------------------------------------------------

def select(sizes, strides, offset, dim, index):
    n = len(sizes)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, n)
    size = sizes[dim]
    if index < -size or index >= size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {_shape_str(sizes)} "
            f"at dimension {dim}")
    if index < 0:
        index += size
    return (sizes[:dim] + sizes[dim + 1:], strides[:dim] + strides[dim + 1:],
            offset + index * strides[dim])


def slice(sizes, strides, offset, dim=0, start=None, end=None, step=1):
    n = len(sizes)
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, n)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = sizes[dim]
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    if start < 0:
        start = 0
    elif start >= size:
        start = size
    if end < start:
        end = start
    elif end >= size:
        end = size
    stride = strides[dim]
    return (sizes[:dim] + ((end - start + step - 1) // step,) + sizes[dim + 1:],
            strides[:dim] + (stride * step,) + strides[dim + 1:],
            offset + start * stride)


def _storage_nbytes(sizes, strides, itemsize, storage_offset=0):
    """ATen's computeStorageNbytes with its unsigned-overflow checks."""
    size = storage_offset + 1
    over = False
    for sz, st in zip(sizes, strides):
        if sz == 0:
            return 0
        step = (st % _U64) * ((sz - 1) % _U64)
        if step >= _U64:
            over = True
            step %= _U64
        size += step
        if size >= _U64:
            over = True
            size %= _U64
    size *= itemsize
    if size >= _U64:
        over = True
        size %= _U64
    if over or size > _INT64_MAX:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={_shape_str(sizes)} "
            f"and strides={_shape_str(strides)}")
    return size


def as_strided(sizes, strides, offset, size, stride, storage_offset=None, *,
               itemsize=1, storage_nbytes=None):
    """Bounds are checked against the storage only when ``storage_nbytes`` is given."""
    size = tuple(size)
    stride = tuple(stride)
    if storage_offset is None:
        storage_offset = offset
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for s in stride:
        if s < 0:
            raise RuntimeError(
                f"as_strided: Negative strides are not supported at the moment, got strides: "
                f"{_shape_str(stride)}")
    base = _storage_nbytes(size, stride, itemsize)
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if base != 0:
        need = _storage_nbytes(size, stride, itemsize, storage_offset)
        if storage_nbytes is not None and need > storage_nbytes:
            raise RuntimeError(
                f"setStorage: sizes {_shape_str(size)}, strides {_shape_str(stride)}, storage "
                f"offset {storage_offset}, and itemsize {itemsize} requiring a storage size of "
                f"{need} are out of bounds for storage of size {storage_nbytes}")
    _check_numel(size)
    return size, stride, storage_offset


def diagonal(sizes, strides, offset, diag_offset=0, dim1=0, dim2=1):
    n = len(sizes)
    d1 = wrap_dim(dim1, n)
    d2 = wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    s1 = sizes[d1]
    s2 = sizes[d2]
    if diag_offset >= 0:
        diag_size = s2 - diag_offset
        if s1 < diag_size:
            diag_size = s1
    else:
        diag_size = s1 + diag_offset
        if s2 < diag_size:
            diag_size = s2
    if diag_size <= 0:
        diag_size = 0
    elif diag_offset >= 0:
        offset += diag_offset * strides[d2]
    else:
        offset -= diag_offset * strides[d1]
    stride = strides[d1] + strides[d2]
    if n == 2:
        return (diag_size,), (stride,), offset
    keep = [i for i in range(n) if i != d1 and i != d2]
    return (tuple([sizes[i] for i in keep]) + (diag_size,),
            tuple([strides[i] for i in keep]) + (stride,), offset)


# --------------------------------------------------------------------------
# TensorIterator's output layout
# --------------------------------------------------------------------------

def output_strides_like(shape, operands):
    """Strides TensorIterator gives the freshly allocated output of an elementwise op.

    ``shape`` is the broadcast output shape, ``operands`` the inputs' (sizes, strides).
    Mirrors fast_set_up (all inputs the same shape: contiguous, channels-last, or
    copy the strides of a shared dense layout) and otherwise reorder_dimensions +
    allocate_or_resize_outputs (sort dims by input strides, give the output
    compatible strides in that order).
    """
    shape = tuple(shape)
    ndim = len(shape)
    if not operands:
        return contiguous_strides(shape)

    # compute_shape's all_ops_same_shape_
    first = tuple(operands[0][0])
    same = True
    has_scalars = has_tensors = False
    for sz, _ in operands:
        if len(sz):
            has_tensors = True
        else:
            has_scalars = True
        if tuple(sz) != first:
            same = False
    if has_scalars and has_tensors:
        same = False

    if same:
        contig = cl = dense = True
        for sz, st in operands:
            if contig and not is_contiguous(sz, st):
                contig = False
            if cl and not is_channels_last_contiguous(sz, st):
                cl = False
            if dense and not is_non_overlapping_and_dense(sz, st):
                dense = False
        if contig:
            return contiguous_strides(shape)
        if cl:
            return channels_last_strides(shape)
        if dense:
            st0 = tuple(operands[0][1])
            if all(tuple(st) == st0 for _, st in operands):
                return tuple(operands[-1][1])

    if ndim <= 1:
        return contiguous_strides(shape)

    # compute_strides: per operand, aligned to the output dims, broadcast dims -> 0;
    # stored fastest-first (dim i of the iterator is output dim ndim-1-i).
    op_strides = []
    for sz, st in operands:
        off = ndim - len(sz)
        full = [0] * ndim
        for i in range(len(sz)):
            if sz[i] == 1 and shape[off + i] != 1:
                continue
            full[off + i] = st[i]
        op_strides.append(full[::-1])
    rshape = shape[::-1]

    def should_swap(d0, d1):
        for s in op_strides:
            s0 = s[d0]
            s1 = s[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if rshape[d0] > rshape[d1]:
                return 1
        return 0

    perm = sort_dims(list(range(ndim)), should_swap)

    if perm == list(range(ndim)):
        return contiguous_strides(shape)
    # compatible_stride over the permuted shape (no max(size, 1) here, as in ATen),
    # then invert_perm back to output dim order.
    out = [0] * ndim
    acc = 1
    for p in perm:
        out[ndim - 1 - p] = acc
        acc *= rshape[p]
    return tuple(out)


# scalar types that still have a legacy torch.XTensor name on CPU and CUDA
_LEGACY_NAMES = frozenset(("Float", "Double", "Half", "Byte", "Char", "Short", "Int", "Long"))


def legacy_type_str(scalar_type, device_type="cpu"):
    """Tensor::toString(), e.g. ("Float", "cpu") -> "torch.FloatTensor", ("Bool", "cpu") -> "CPUBoolType"."""
    if scalar_type in _LEGACY_NAMES:
        if device_type == "cpu":
            return f"torch.{scalar_type}Tensor"
        if device_type == "cuda":
            return f"torch.cuda.{scalar_type}Tensor"
    backend = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "privateuseone": "PrivateUse1"}.get(
        device_type, device_type)
    return f"{backend}{scalar_type}Type"


# --------------------------------------------------------------------------
# shape operators (onion/aten/native/shape.py)
# --------------------------------------------------------------------------

def is_expandable_to(shape, desired):
    """at::is_expandable_to: ``shape`` broadcasts to ``desired`` (trailing dims equal or 1)."""
    n, m = len(shape), len(desired)
    if n > m:
        return False
    for i in range(1, n + 1):
        if shape[n - i] != desired[m - i] and shape[n - i] != 1:
            return False
    return True


def unfold(sizes, strides, offset, dimension, size, step):
    """Tensor.unfold: windows of ``size`` every ``step`` along ``dimension``, as a new last dim."""
    n = len(sizes)
    d = wrap_dim(dimension, n)
    max_size = sizes[d] if n else 1
    if size > max_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {max_size} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if n == 0:
        return (size,), (1,), offset
    new_sizes = list(sizes) + [size]
    new_strides = list(strides) + [strides[d]]
    new_sizes[d] = (sizes[d] - size) // step + 1
    new_strides[d] = step * strides[d]
    return tuple(new_sizes), tuple(new_strides), offset
