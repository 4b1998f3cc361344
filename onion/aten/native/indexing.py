"""Indexing by tensors: ``index`` / ``index_put_`` (advanced indexing), the masked operators,
``nonzero``, ``take`` / ``put_`` and ``isin``.

The CPU kernels are NumPy fancy indexing, which follows the same rule as PyTorch for where
the indexed dims go (in place when the index tensors are adjacent, in front otherwise).
What NumPy does differently is checked here first, in PyTorch's order and words: index
dtypes, mask shapes, broadcasting, bounds (before anything is written), and the layout of
the result (TensorIterator's, which follows the input's strides).
"""
from __future__ import annotations

import warnings

import numpy as np

from ...core import dtype as _dt
from .. import iterator as _it
from .. import view_geometry as g
from ..at import at
from ..tensor_new import empty_tensor, scalar_to_tensor, wrap
from .factories import checked_scalar

# c10's names of the C++ element types, as masked_fill_'s mask error prints them
_CPP_NAMES = {"Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
              "Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
              "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>", "Bool": "bool",
              "UInt16": "unsigned short", "UInt32": "unsigned int", "UInt64": "unsigned long"}

_NONZERO_META = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
                 "data-independent implementation does not exist. This implementation returns a fake value, "
                 "assuming all elements of the tensor are non-zero. To enable this registration, please set "
                 "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def _no_meta(opname: str) -> NotImplementedError:
    return NotImplementedError(f"aten::{opname}: attempted to run this operator with Meta tensors, but there was no "
                               f"fake impl or Meta kernel registered: its output shape depends on the data")


def _is_meta(*impls) -> bool:
    return any(i is not None and i.device.type == "meta" for i in impls)


def _check_no_overlap(out_impl, inputs) -> None:
    """at::assert_no_overlap: an out= that shares any memory with an input (itself included) is refused,
    judged as PyTorch judges it, on dense tensors only."""
    oa = out_impl._array
    if type(oa) is not np.ndarray or oa.size == 0 or not _it._dense(out_impl):
        return
    for i in inputs:
        ia = i._array
        if type(ia) is np.ndarray and ia.size and np.may_share_memory(oa, ia) and _it._dense(i):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


def _check_inplace_devices(self_impl, others) -> None:
    """An in-place kernel writes real memory from its arguments: a meta argument has none to give (PyTorch's
    words), and any other device than self's is refused as TensorIterator refuses it."""
    for o in others:
        if o is None or o.device == self_impl.device:
            continue
        if o.device.type == "meta" and self_impl.device.type != "meta":
            raise NotImplementedError("Cannot inplace into non-meta tensor with meta tensor argument")
        if o.device.type != "meta" and self_impl.device.type != "meta" and not (
                o.device.type == "cpu" and o._array.ndim == 0):
            raise _it.device_mismatch(self_impl.device, o.device)


# --------------------------------------------------------------------------------------------------
# the plan of an advanced index: PyTorch's checkIndexTensorTypes, expandTensors, AdvancedIndex
# --------------------------------------------------------------------------------------------------

class _Index:
    """One expanded index list against ``self``: per indexed dim an integer array (NumPy), or None.

    ``shapes``/``strides`` are each index's geometry (the arrays themselves are None on Meta)."""
    __slots__ = ("arrays", "shapes", "strides", "dims", "bshape", "adjacent", "result_shape", "self_shape")


def _check_index_types(indices) -> None:
    for idx in indices:
        if idx is not None and idx._impl.dtype not in (_dt.int64, _dt.int32, _dt.uint8, _dt.bool):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _plan(self_impl, indices, meta: bool) -> _Index:
    shape = tuple(self_impl._array.shape)
    ndim = len(shape)
    if len(indices) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
    _check_index_types(indices)
    arrays, shapes, strides = [], [], []
    for idx in indices:
        if idx is None:
            arrays.append(None)
            shapes.append(None)
            strides.append(None)
            continue
        ii = idx._impl
        if ii.dtype is _dt.bool or ii.dtype is _dt.uint8:
            if ii.dtype is _dt.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=4)
            k = len(arrays)
            mshape = tuple(ii._array.shape)
            for j, s in enumerate(mshape):
                if k + j >= ndim or s != shape[k + j]:
                    raise IndexError(f"The shape of the mask {list(mshape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {k + j}")
            if meta or ii.device.type == "meta":
                raise NotImplementedError(_NONZERO_META)
            for a in np.nonzero(ii._array):
                arrays.append(a)
                shapes.append(a.shape)
                strides.append((1,))
            continue
        arrays.append(None if ii.device.type == "meta" else ii._array)
        shapes.append(tuple(ii._array.shape))
        strides.append(ii.strides)
    if len(arrays) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(arrays)})")
    dims = [d for d, s in enumerate(shapes) if s is not None]
    if not dims:
        raise IndexError("at least one index must be provided")
    given = [shapes[d] for d in dims]
    try:
        bshape = tuple(np.broadcast_shapes(*given))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in given)) from None
    adjacent = dims[-1] - dims[0] + 1 == len(dims)
    if adjacent:
        result_shape = shape[:dims[0]] + bshape + shape[dims[-1] + 1:]
    else:
        result_shape = bshape + tuple(s for d, s in enumerate(shape) if d not in dims)
    p = _Index()
    p.arrays, p.shapes, p.strides, p.dims = arrays, shapes, strides, dims
    p.bshape, p.adjacent, p.result_shape, p.self_shape = bshape, adjacent, result_shape, shape
    if not meta:
        _check_bounds(p)
    return p


def _check_bounds(p: _Index) -> None:
    """Every index within its dim (negative ones count from the end), checked before any element moves."""
    # the index kernel names a dim by its place among the indexed dims
    for pos, d in enumerate(p.dims):
        a = p.arrays[d]
        n = p.self_shape[d]
        if a is None or a.size == 0:
            continue
        if n == 0:
            if 0 not in p.bshape:
                raise IndexError("index is out of bounds for dimension with size 0")
            continue
        lo, hi = a.min(), a.max()
        if lo < -n or hi >= n:
            bad = a[(a < -n) | (a >= n)].flat[0]
            raise IndexError(f"index {bad} is out of bounds for dimension {pos} with size {n}")


def _result_strides(self_impl, p: _Index):
    """The layout TensorIterator gives ``index``'s output: the input restrided (indexed dims replaced by
    the index shape, stride 0) and the index tensors, ordered by their strides."""
    sizes = p.self_shape
    st = self_impl.strides
    ndim = len(sizes)
    dims = p.dims
    if not p.adjacent:              # transposeToFront
        order = dims + [d for d in range(ndim) if d not in dims]
        sizes = tuple(sizes[d] for d in order)
        st = tuple(st[d] for d in order)
        first, last = 0, len(dims) - 1
    else:
        first, last = dims[0], dims[-1]
    bshape = p.bshape
    nb = len(bshape)
    before, after = first, ndim - last - 1
    src = (sizes[:first] + bshape + sizes[last + 1:], st[:first] + (0,) * nb + st[last + 1:])
    operands = [src]
    for d in dims:
        ishape, istr = p.shapes[d], p.strides[d]
        off = nb - len(ishape)
        full = [0] * nb
        for i, (s, t) in enumerate(zip(ishape, istr)):
            if s != 1 or bshape[off + i] == 1:
                full[off + i] = t
        operands.append(((1,) * before + bshape + (1,) * after, (0,) * before + tuple(full) + (0,) * after))
    return g.output_strides_like(p.result_shape, operands)


def mask_take(a, m):
    """``a[m]`` for a bool ``m`` of ``a``'s shape: NumPy's boolean indexing branches per element, so the
    positions are found first (flatnonzero) and gathered with take, several times faster."""
    if a.flags.c_contiguous:
        return a.reshape(-1).take(np.flatnonzero(m))
    return a[m]


def mask_put(a, m, v) -> None:
    """``a[m] = v`` (``v`` one value or as many as the mask holds), as mask_take."""
    if a.flags.c_contiguous:
        a.reshape(-1)[np.flatnonzero(m)] = v
    else:
        a[m] = v


def _fancy(p: _Index):
    return tuple(slice(None) if a is None else a for a in p.arrays)


def _mask_fast(self_impl, indices):
    """``x[mask]`` with one bool mask over all of ``x``: NumPy's boolean indexing, no nonzero."""
    if len(indices) != 1 or indices[0] is None:
        return None
    m = indices[0]._impl
    if m.dtype is not _dt.bool or m.device.type != "cpu" or self_impl.device.type != "cpu":
        return None
    a = self_impl._array
    if m._array.shape != a.shape or not a.ndim:
        return None
    return mask_take(a, m._array)


def _index_compute(self, indices):
    impl = self._impl
    r = _mask_fast(impl, indices)
    if r is not None:
        return r, None
    meta = _is_meta(impl) or any(i is not None and i._impl.device.type == "meta" for i in indices)
    p = _plan(impl, indices, meta)
    if meta:
        return None, p
    return impl._array[_fancy(p)], p


def index_Tensor(self, indices):
    impl = self._impl
    r, p = _index_compute(self, indices)
    if p is None:
        return wrap(r, impl.dtype, impl.device)
    want = _result_strides(impl, p)
    out = empty_tensor(p.result_shape, impl.dtype, impl.device, want)
    if r is not None and r.size:
        np.copyto(out._impl._array, r)
    return out


def index_Tensor_out(self, indices, out):
    impl = self._impl
    r, p = _index_compute(self, indices)
    _it.check_out_device(impl.device, out._impl)
    if out._impl.dtype is not impl.dtype:
        raise RuntimeError(f"index_out: self ({impl.dtype.scalar_type_name}) and result "
                           f"({out._impl.dtype.scalar_type_name}) must have the same scalar type")
    if r is None:
        _it.resize_out(out, p.result_shape, lambda: _result_strides(impl, p))
        out._impl.bump_version()
        return out
    _it.check_no_partial_overlap(out._impl, [impl])
    layout = None if p is None else (lambda: _result_strides(impl, p))
    _it.resize_out(out, r.shape, layout)
    np.copyto(out._impl._array, r)
    out._impl.bump_version()
    return out


# --------------------------------------------------------------------------------------------------
# index_put_
# --------------------------------------------------------------------------------------------------

def _masked_fill_dispatch(self_impl, indices, values):
    """PyTorch's canDispatchToMaskedFill: one bool mask (after leading Nones) and a one-element CPU value
    become ``masked_fill_`` (the value then converts to self's dtype like any Scalar)."""
    v = values._impl
    if v._array.size != 1 or v.device.type != "cpu":
        return None
    mask = None
    num = 0
    for idx in indices:
        if idx is None:
            num += 1
            continue
        ii = idx._impl
        if (ii.dtype is not _dt.bool and ii.dtype is not _dt.uint8) or ii.device != self_impl.device \
                or mask is not None:
            return None
        mask = idx
        shape = tuple(self_impl._array.shape)
        for j, s in enumerate(ii._array.shape):
            if num + j >= len(shape) or s != shape[num + j]:
                raise IndexError(f"The shape of the mask {list(ii._array.shape)} at index {j} does not match the "
                                 f"shape of the indexed tensor {list(shape)} at index {num + j}")
        num += ii._array.ndim
    if mask is None:
        return None
    m = mask
    for _ in range(num, self_impl._array.ndim):
        m = at.unsqueeze(m, -1)
    return m


def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    _it.refuse_barebones_unsigned("index_put", self._impl)
    impl = self._impl
    if impl._inference:
        impl.check_writable()
    ndim = impl._array.ndim
    if len(indices) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
    if impl._array.size > 1 and any(st == 0 and n > 1 for n, st in zip(impl._array.shape, impl.strides)):
        warnings.warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = "
                      "tensor", UserWarning, stacklevel=3)
    if not accumulate:
        _check_index_types(indices)
        mask = _masked_fill_dispatch(impl, indices, values)
        if mask is not None:
            return masked_fill__Scalar(self, mask, values.item())
    v = values._impl
    _check_inplace_devices(impl, [v] + [i._impl for i in indices if i is not None])
    meta = _is_meta(impl, v) or any(i is not None and i._impl.device.type == "meta" for i in indices)
    if not meta:
        _it.check_no_partial_overlap(impl, [v] + [i._impl for i in indices if i is not None])
    if meta and any(i is not None and i._impl.dtype in (_dt.bool, _dt.uint8) for i in indices):
        _check_index_types(indices)         # the result is self's shape: no need for the mask's count
        if v.dtype is not impl.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{impl.dtype.scalar_type_name} for the destination and {v.dtype.scalar_type_name} "
                               f"for the source.")
        impl.bump_version()
        return self
    if all(i is None for i in indices):
        raise RuntimeError("index_put_: at least one index must be provided")
    p = _plan(impl, indices, meta)
    vshape = tuple(v._array.shape)
    rshape = p.result_shape
    if len(vshape) > len(rshape) or any(a != b and a != 1 for a, b in zip(vshape[::-1], rshape[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing "
                           f"result of shape {list(rshape)}")
    if v.dtype is not impl.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{impl.dtype.scalar_type_name} for the destination and {v.dtype.scalar_type_name} for "
                           f"the source.")
    if not meta:
        arr = impl._array
        fancy = _fancy(p)
        if accumulate:
            _accumulate(arr, fancy, p, v._array)
        else:
            arr[fancy] = v._array
    impl.bump_version()
    return self


def _accumulate(arr, fancy, p: _Index, vals) -> None:
    """``arr[fancy] += vals`` where repeated positions all add (np.add.at semantics), vectorised: with one
    index over a contiguous array the positions are summed by sorting them once."""
    if 0 in p.result_shape:
        return
    if arr.dtype.kind in "fc" and arr.flags.c_contiguous and len(p.dims) == 1 and p.dims[0] == 0 \
            and arr.dtype.itemsize >= 4:
        idx = p.arrays[0]
        n = arr.shape[0]
        rows = arr.reshape(n, -1)
        v = np.broadcast_to(vals, p.result_shape).reshape(idx.size, -1)
        flat = idx.reshape(-1)
        if rows.shape[1] == 1 and arr.dtype.kind == "f" and arr.dtype != np.float64:
            np.add.at(rows[:, 0], flat, v[:, 0])    # (ufunc.at wraps negative positions itself)
            return
        flat = np.where(flat < 0, flat + n, flat)   # bincount takes no negative positions
        if rows.shape[1] == 1:
            if arr.dtype.kind == "c":
                re = np.bincount(flat, weights=v[:, 0].real, minlength=n)
                im = np.bincount(flat, weights=v[:, 0].imag, minlength=n)
                rows[:, 0] += (re + 1j * im).astype(arr.dtype)
            elif arr.dtype == np.float64:
                rows[:, 0] += np.bincount(flat, weights=v[:, 0], minlength=n)
            else:
                np.add.at(rows[:, 0], flat, v[:, 0])
            return
    np.add.at(arr, fancy, vals)


def index_put_(self, indices, values, accumulate=False):
    return at._index_put_impl_(self, indices, values, accumulate, False)


def index_put(self, indices, values, accumulate=False):
    return at._index_put_impl_(at.clone(self, "preserve_format"), indices, values, accumulate, False)


def _unsafe_index_Tensor(self, indices):
    return at.index_Tensor(self, indices)


def _unsafe_index_put(self, indices, values, accumulate=False):
    return at.index_put(self, indices, values, accumulate)


def _clamped_indices(mask, indices):
    """The indices of ``_unsafe_masked_index``: where ``mask`` is False they may be anything, so they are
    replaced by 0 (an index every non-empty dim has) before indexing."""
    return [None if idx is None else at.where_self(mask, idx, at.zeros_like(idx, None, None, None, None, None))
            for idx in indices]


def _unsafe_masked_index(self, mask, indices, fill):
    """``self[indices]`` where ``mask`` holds and ``fill`` elsewhere (the indices under a False mask are
    never read, so they may be out of bounds)."""
    got = at.index_Tensor(self, _clamped_indices(mask, indices))
    if got._impl.device.type == "meta":
        return got
    return at.where_self(mask, got, scalar_to_tensor(fill, got._impl.device))


def _unsafe_masked_index_put_accumulate(self, mask, indices, values):
    """Adds ``values`` into a copy of ``self`` at ``indices`` where ``mask`` holds."""
    kept = at.where_self(mask, values, at.zeros_like(values, None, None, None, None, None)) \
        if values._impl.device.type != "meta" else values
    return at.index_put(self, _clamped_indices(mask, indices), kept, True)


# --------------------------------------------------------------------------------------------------
# masked_fill, masked_scatter, masked_select
# --------------------------------------------------------------------------------------------------

def _expand_mask_inplace(opname, self_impl, mask_impl):
    """The mask broadcast to self's shape, as expand_inplace (self never grows)."""
    shape = tuple(self_impl._array.shape)
    mshape = tuple(mask_impl._array.shape)
    if mshape == shape:
        return mask_impl._array
    out = tuple(g.broadcast_pair_for_op(shape, mshape))
    if out != shape:
        if len(mshape) > len(shape) and opname == "masked_scatter_":
            raise RuntimeError(f"expand({_type_name(mask_impl)}{{{list(mshape)}}}, size={list(shape)}): the number "
                               f"of sizes provided ({len(shape)}) must be greater or equal to the number of "
                               f"dimensions in the tensor ({len(mshape)})")
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(out)}")
    if mask_impl.device.type == "meta":
        return None
    return np.broadcast_to(mask_impl._array, shape)


def _type_name(impl) -> str:
    return f"{'CPU' if impl.device.type == 'cpu' else impl.device.type.upper()}{impl.dtype.scalar_type_name}Type"


def _masked_fill_devices(self, mask, value=None) -> None:
    """The device rules of PyTorch's masked_fill with meta tensors (its reference implementation): the value
    on self's device, the mask on self's (a CPU 0-dim self joins the mask's device)."""
    impl, m = self._impl, mask._impl
    if value is not None and value._impl.device != impl.device and "meta" in (value._impl.device.type,
                                                                               impl.device.type):
        raise RuntimeError("Expected `value` to be on same device as `a`")
    if m.device != impl.device and "meta" in (m.device.type, impl.device.type) and not any(
            t.device.type == "cpu" and t._array.ndim == 0 for t in (impl, m)):
        raise _it.device_mismatch(m.device, impl.device)


def masked_fill__Scalar(self, mask, value):
    impl, m = self._impl, mask._impl
    if m.dtype is not _dt.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_NAMES.get(m.dtype.scalar_type_name, m.dtype.name)}")
    if impl._inference:
        impl.check_writable()
    _check_inplace_devices(impl, [m])
    _it.check_internal_overlap(impl)
    _it.check_no_partial_overlap(impl, [m])
    v = checked_scalar(value, impl.dtype)
    marr = _expand_mask_inplace("masked_fill_", impl, m)
    if impl.device.type != "meta" and marr is not None:
        mask_put(impl._array, marr, v)
    impl.bump_version()
    return self


def masked_fill__Tensor(self, mask, value):
    _masked_fill_devices(self, mask, value)
    vi = value._impl
    if vi._array.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{vi._array.ndim} dimension(s).")
    if vi.device != self._impl.device and vi.device.type != "cpu":
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{self._impl.device} and {vi.device}!")
    if self._impl.device.type == "meta" or vi.device.type == "meta":
        return masked_fill__Scalar(self, mask, 0)
    return masked_fill__Scalar(self, mask, value.item())


def _expand_outplace_clone(self, mask):
    """expand_outplace(mask, self) then self cloned contiguous: what the functional masked ops start from."""
    shape = tuple(g.broadcast_pair_for_op(tuple(mask._impl._array.shape), tuple(self._impl._array.shape)))
    src = self if tuple(self._impl._array.shape) == shape else at.expand(self, list(shape), False)
    return at.clone(src, "contiguous_format")


def masked_fill_Scalar(self, mask, value):
    _masked_fill_devices(self, mask)
    return at.masked_fill__Scalar(_expand_outplace_clone(_to_mask_device(self, mask), mask), mask, value)


def masked_fill_Tensor(self, mask, value):
    _masked_fill_devices(self, mask, value)
    return at.masked_fill__Tensor(_expand_outplace_clone(_to_mask_device(self, mask), mask), mask, value)


def _to_mask_device(self, mask):
    """A CPU 0-dim self next to a mask elsewhere is a scalar: the result is made on the mask's device."""
    d = mask._impl.device
    if self._impl.device != d and self._impl._array.ndim == 0:
        return at._to_copy(self, None, None, d, None, False, None)
    return self


def _masked_scatter_mask_check(m, opname="masked_scatter_"):
    if m.dtype is _dt.uint8:
        warnings.warn(f"{opname} received a mask with dtype torch.uint8, this behavior is now deprecated,please use "
                      f"a mask with dtype torch.bool instead.", UserWarning, stacklevel=4)
    if m.dtype is not _dt.bool:
        raise RuntimeError(f"{opname} only supports boolean masks, but got mask with dtype "
                           f"{m.dtype.scalar_type_name}")


def masked_scatter_(self, mask, source):
    impl, m, s = self._impl, mask._impl, source._impl
    _check_inplace_devices(impl, [m, s])
    _masked_scatter_mask_check(m)
    if s.dtype is not impl.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{impl.dtype.scalar_type_name} and {s.dtype.scalar_type_name}")
    if impl._inference:
        impl.check_writable()
    _check_inplace_devices(impl, [m, s])
    marr = _expand_mask_inplace("masked_scatter_", impl, m)
    _it.check_internal_overlap(impl)
    if not _is_meta(impl, m, s) and marr is not None:
        _it.check_no_partial_overlap(impl, [m, s])
        n = int(np.count_nonzero(marr))
        if n > s._array.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        if n:
            mask_put(impl._array, marr, s._array.reshape(-1)[:n])
    impl.bump_version()
    return self


def masked_scatter(self, mask, source):
    m, s = mask._impl, source._impl
    if m.dtype is not _dt.bool and m.dtype is not _dt.uint8:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{m.dtype.scalar_type_name}")
    if s.dtype is not self._impl.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{self._impl.dtype.scalar_type_name} and {s.dtype.scalar_type_name}")
    return at.masked_scatter_(_expand_outplace_clone(self, mask), mask, source)


def _masked_select_compute(self, mask):
    impl, m = self._impl, mask._impl
    if m.dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _it.check_devices("masked_select", [impl, m])
    if _is_meta(impl, m):
        raise _no_meta("masked_select")
    a, b = impl._array, m._array
    if a.shape != b.shape:
        shape = tuple(g.broadcast_pair_for_op(tuple(b.shape), tuple(a.shape)))
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    return mask_take(a, b)


def masked_select(self, mask):
    return wrap(_masked_select_compute(self, mask), self._impl.dtype, self._impl.device)


def masked_select_out(self, mask, out):
    _it.check_internal_overlap(out._impl)
    _check_no_overlap(out._impl, [self._impl, mask._impl])
    r = _masked_select_compute(self, mask)
    _it.check_out_device(self._impl.device, out._impl)
    if out._impl.dtype is not self._impl.dtype:
        raise RuntimeError("masked_select(): self and result must have the same scalar type")
    return _it.write_out("masked_select", out, r, self._impl.dtype, inputs=[self._impl, mask._impl])


# --------------------------------------------------------------------------------------------------
# nonzero, argwhere
# --------------------------------------------------------------------------------------------------

def _nonzero_array(impl):
    """The coordinates of the nonzero elements, (n, ndim), column-major as PyTorch's nonzero lays them out."""
    a = impl._array
    if impl.dtype.is_complex or a.dtype.kind == "V" or impl.dtype is _dt.bfloat16:
        a = a != 0
    if a.ndim == 0:
        return np.empty((int(bool(a)), 0), np.int64)
    return np.array(np.nonzero(a), dtype=np.int64).T


def nonzero(self):
    _it.refuse_barebones_unsigned("nonzero_count_cpu", self._impl)
    impl = self._impl
    if impl.device.type == "meta":
        raise NotImplementedError(_NONZERO_META)
    r = _nonzero_array(impl)
    n, k = r.shape
    out = empty_tensor((n, k), _dt.int64, impl.device, (1, n))     # column-major, as PyTorch's
    if r.size:
        np.copyto(out._impl._array, r)
    return out


def nonzero_out(self, out):
    impl = self._impl
    if out._impl.dtype is not _dt.int64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type"
                           f"{out._impl.dtype.scalar_type_name}")
    if impl.device.type == "meta":
        raise NotImplementedError(_NONZERO_META)
    _it.check_out_device(impl.device, out._impl)
    r = _nonzero_array(impl)
    n, k = r.shape
    _it.resize_out(out, (n, k), lambda: (1, n))
    oa = out._impl._array
    if oa.shape != (n, k):
        raise RuntimeError("nonzero: out tensor could not be resized")
    np.copyto(oa, r)
    out._impl.bump_version()
    return out


def _nonzero_static_array(impl, size, fill_value):
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    k = impl._array.ndim
    if impl.device.type == "meta":
        return None, (size, k)
    r = _nonzero_array(impl)
    out = np.full((size, k), fill_value, np.int64)
    m = min(size, r.shape[0])
    out[:m] = r[:m]
    return out, (size, k)


def nonzero_static(self, size, fill_value=-1):
    impl = self._impl
    r, shape = _nonzero_static_array(impl, size, fill_value)
    if r is None:
        return empty_tensor(shape, _dt.int64, impl.device)
    return wrap(r, _dt.int64, impl.device)


def nonzero_static_out(self, size, fill_value=-1, out=None):
    impl = self._impl
    if out._impl.dtype is not _dt.int64:
        raise RuntimeError(f"nonzero_static: Expected out tensor to have scalar type Long but got scalar type"
                           f"{out._impl.dtype.scalar_type_name}")
    r, shape = _nonzero_static_array(impl, size, fill_value)
    _it.check_out_device(impl.device, out._impl)
    _it.resize_out(out, shape)
    if r is not None:
        np.copyto(out._impl._array, r)
    out._impl.bump_version()
    return out


def argwhere(self):
    return at.nonzero(self)


def nonzero_numpy(self):
    """``nonzero(as_tuple=True)``: one index tensor per dim (a 0-dim input counts as 1-dim)."""
    t = self if self._impl._array.ndim else at.unsqueeze(self, 0)
    nz = at.nonzero(t)
    return [at.select_int(nz, 1, j) for j in range(t._impl._array.ndim)]


# --------------------------------------------------------------------------------------------------
# take, put_
# --------------------------------------------------------------------------------------------------

def _take_checks(opname, impl, ii):
    if ii.dtype is not _dt.int64:
        raise RuntimeError(f"{opname}(): Expected a long tensor for index, but got {ii.dtype.scalar_type_name}")


def _linear_bounds(opname, index_arr, n):
    if index_arr.size == 0:
        return index_arr
    lo, hi = index_arr.min(), index_arr.max()
    if lo < -n or hi >= n:
        bad = index_arr[(index_arr < -n) | (index_arr >= n)].flat[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return index_arr


def _take_compute(self, index):
    impl, ii = self._impl, index._impl
    _take_checks("take", impl, ii)
    _it.check_devices("take", [impl, ii])
    if _is_meta(impl, ii):
        return None
    n = impl._array.size
    if n == 0 and ii._array.size:
        raise IndexError("take(): tried to take from an empty tensor")
    idx = _linear_bounds("take", ii._array, n)
    return impl._array.reshape(-1)[idx] if n else np.empty(ii._array.shape, impl._array.dtype)


def take(self, index):
    _it.refuse_barebones_unsigned("take_cpu", self._impl)
    r = _take_compute(self, index)
    if r is None:
        return empty_tensor(tuple(index._impl._array.shape), self._impl.dtype, self._impl.device)
    return wrap(np.array(r).reshape(index._impl._array.shape), self._impl.dtype, self._impl.device)


def take_out(self, index, out):
    _it.check_internal_overlap(out._impl)
    _check_no_overlap(out._impl, [self._impl, index._impl])
    r = _take_compute(self, index)
    impl = self._impl
    _it.check_out_device(impl.device, out._impl)
    if out._impl.dtype is not impl.dtype:
        raise RuntimeError(f"take(): self and out expected to have the same dtype, but got self.dtype = "
                           f"{impl.dtype.scalar_type_name} and out.dtype = {out._impl.dtype.scalar_type_name}")
    if r is None:
        _it.resize_out(out, tuple(index._impl._array.shape))
        return out
    return _it.write_out("take", out, r, impl.dtype)


def put_(self, index, source, accumulate=False):
    impl, ii, s = self._impl, index._impl, source._impl
    _check_inplace_devices(impl, [ii, s])
    if s.dtype is not impl.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{impl.dtype.scalar_type_name} and source.dtype = {s.dtype.scalar_type_name}")
    _take_checks("put_", impl, ii)
    if ii._array.size != s._array.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {s._array.size}, index.numel() = {ii._array.size}")
    if impl._inference:
        impl.check_writable()
    _check_inplace_devices(impl, [ii, s])
    if not _is_meta(impl, ii, s):
        _it.check_internal_overlap(impl)
        _it.check_no_partial_overlap(impl, [ii, s])
        n = impl._array.size
        if n == 0 and ii._array.size:
            raise IndexError("put_(): Tried to put elements into an empty tensor")
        idx = _linear_bounds("put_", ii._array.reshape(-1), n)
        if idx.size:
            arr = impl._array
            flat = arr.reshape(-1) if arr.flags.c_contiguous else np.ascontiguousarray(arr).reshape(-1)
            src = s._array.reshape(-1)
            if accumulate:
                np.add.at(flat, idx, src)
            else:
                flat[idx] = src
            if not arr.flags.c_contiguous:
                arr[...] = flat.reshape(arr.shape)
    impl.bump_version()
    return self


def put(self, index, source, accumulate=False):
    _it.refuse_barebones_unsigned("take_put_cpu", self._impl)
    return at.put_(at.clone(self, "preserve_format"), index, source, accumulate)


# --------------------------------------------------------------------------------------------------
# isin
# --------------------------------------------------------------------------------------------------

def _isin_check(*dts):
    for dt in dts:
        if dt.is_complex or dt is _dt.bool:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {dt.scalar_type_name}")


def _isin_result(impl_shape, r, dev, out=None, like=None):
    if out is not None:
        _it.check_out_device(dev, out._impl)
        if out._impl.dtype is not _dt.bool:
            raise RuntimeError(f"Expected out tensor to have dtype bool, but got "
                               f"{_CPP_NAMES.get(out._impl.dtype.scalar_type_name)} instead")
        if r is None:
            _it.resize_out(out, impl_shape)
            return out
        return _it.write_out("isin", out, r, _dt.bool)
    if r is None:
        return empty_tensor(impl_shape, _dt.bool, dev)
    return wrap(np.array(r), _dt.bool, dev)


def _isin_tensor_tensor(elements, test_elements, assume_unique, invert, out=None):
    e, t = elements._impl, test_elements._impl
    _isin_check(e.dtype, t.dtype)
    dev = _it.check_devices("isin", [e, t])
    dev = e.device
    shape = tuple(e._array.shape)
    r = None if _is_meta(e, t) else _isin_values(e, t._array, invert)
    return _isin_result(shape, r, dev, out)


def _isin_values(e, test, invert):
    common = np.result_type(e._array.dtype, np.asarray(test).dtype)
    return np.isin(e._array.astype(common, copy=False), np.asarray(test).astype(common, copy=False), invert=invert)


def isin_Tensor_Tensor(elements, test_elements, assume_unique=False, invert=False):
    _it.refuse_barebones_unsigned("isin_default_cpu", elements._impl)
    return _isin_tensor_tensor(elements, test_elements, assume_unique, invert)


def isin_Tensor_Tensor_out(elements, test_elements, assume_unique=False, invert=False, out=None):
    return _isin_tensor_tensor(elements, test_elements, assume_unique, invert, out)


def _isin_tensor_scalar(elements, test_element, invert, out=None):
    from ...core.promotion import scalar_dtype
    e = elements._impl
    _isin_check(e.dtype, scalar_dtype(test_element))
    shape = tuple(e._array.shape)
    r = None if _is_meta(e) else _isin_values(e, np.asarray(test_element), invert)
    return _isin_result(shape, r, e.device, out)


def isin_Tensor_Scalar(elements, test_element, assume_unique=False, invert=False):
    return _isin_tensor_scalar(elements, test_element, invert)


def isin_Tensor_Scalar_out(elements, test_element, assume_unique=False, invert=False, out=None):
    return _isin_tensor_scalar(elements, test_element, invert, out)


def _isin_scalar_tensor(element, test_elements, invert, out=None):
    from ...core.promotion import scalar_dtype
    t = test_elements._impl
    _isin_check(scalar_dtype(element), t.dtype)
    r = None
    if not _is_meta(t):
        r = np.asarray(np.isin(np.asarray(element), t._array, invert=invert)).reshape(())
    return _isin_result((), r, t.device, out)


def isin_Scalar_Tensor(element, test_elements, assume_unique=False, invert=False):
    return _isin_scalar_tensor(element, test_elements, invert)


def isin_Scalar_Tensor_out(element, test_elements, assume_unique=False, invert=False, out=None):
    return _isin_scalar_tensor(element, test_elements, invert, out)


# --------------------------------------------------------------------------------------------------
# the out= overloads torchgen generates (autogen): the functional result checked against out, copied
# --------------------------------------------------------------------------------------------------

def _autogen_out(result, out):
    r, o = result._impl, out._impl
    if o.dtype is not r.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES.get(r.dtype.scalar_type_name)}, but got "
                           f"{_CPP_NAMES.get(o.dtype.scalar_type_name)} instead")
    if o.device != r.device:
        raise RuntimeError(f"Expected out tensor to have device {r.device}, but got {o.device} instead")
    _it.resize_out(out, tuple(r._array.shape))
    if r.device.type != "meta":
        _it.xp_copy(o._array, r._array)
    o.bump_version()
    return out


def index_put_out(self, indices, values, accumulate=False, out=None):
    return _autogen_out(at.index_put(self, indices, values, accumulate), out)


def _index_put_impl(self, indices, values, accumulate=False, unsafe=False):
    return at._index_put_impl_(at.clone(self, "preserve_format"), indices, values, accumulate, unsafe)


def _index_put_impl_out(self, indices, values, accumulate=False, unsafe=False, out=None):
    return _autogen_out(_index_put_impl(self, indices, values, accumulate, unsafe), out)


def masked_fill_Scalar_out(self, mask, value, out=None):
    return _autogen_out(at.masked_fill_Scalar(self, mask, value), out)


def masked_fill_Tensor_out(self, mask, value, out=None):
    return _autogen_out(at.masked_fill_Tensor(self, mask, value), out)


def masked_scatter_out(self, mask, source, out=None):
    return _autogen_out(at.masked_scatter(self, mask, source), out)


def put_out(self, index, source, accumulate=False, out=None):
    return _autogen_out(at.put(self, index, source, accumulate), out)
