"""What TensorIterator does for onion's elementwise operators.

``common_dtype`` promotes operands (dimensioned tensors over 0-dim tensors
over wrapped numbers, by category); ``check_devices`` allows CPU scalars next
to device tensors; ``write_out`` resizes, casts and copies into ``out=`` and
in-place outputs; ``broadcast_error`` turns NumPy's message into PyTorch's.
"""
from __future__ import annotations

import warnings

import numpy as _np

from ..core import dtype as _dt
from ..core.promotion import DIMENSIONED, WRAPPED, ZERO_DIM, can_cast, promote_pair, result_type_of
from .view_geometry import broadcast_pair_for_op
from ..backends import backend_for
from .view_geometry import contiguous_strides
from .view_geometry import is_non_overlapping_and_dense
from .tensor_new import allocation_error


def priority(impl) -> int:
    if impl.is_wrapped_number:
        return WRAPPED
    return ZERO_DIM if impl._array.ndim == 0 else DIMENSIONED


def common_dtype2(a, b):
    """Promoted dtype of two tensors' impls."""
    da = a.dtype
    if da is b.dtype and not a.is_wrapped_number:
        return da
    return promote_pair(da, priority(a), b.dtype, priority(b))


def common_dtype(impls):
    return result_type_of(tuple((i.dtype, priority(i)) for i in impls))


def check_devices(opname: str, impls, allow_cpu_scalars: bool = True) -> object:
    """The device the op runs on: every tensor's, except that (where the op allows it, as
    TensorIterator's binary ops do) a CPU 0-dim tensor may join tensors of another device."""
    dev = None
    scalar_dev = None
    for i in impls:
        d = i.device
        if d is dev:
            continue
        if allow_cpu_scalars and d.type == "cpu" and i._array.ndim == 0:
            scalar_dev = d
            continue
        if dev is None:
            dev = d
        elif d != dev:
            raise device_mismatch(dev, d)
    return dev if dev is not None else scalar_dev


def device_mismatch(expected, got) -> RuntimeError:
    """PyTorch's words for two tensors on different devices: on Meta its Python meta kernels
    check (``check_same_device``), elsewhere the C++ kernels' common-device check."""
    if expected.type == "meta" or got.type == "meta":
        return RuntimeError(f"Tensor on device {got} is not on the expected device {expected}!")
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                        f"{expected} and {got}!")


def check_iterator_output(device, out_impl) -> None:
    """An elementwise op's output (``out=`` or in-place self) must be on the op's device; a CPU 0-dim
    tensor may join as an input only.  TensorIterator names the output's device first; on Meta,
    PyTorch reports the copy of the result."""
    d = out_impl.device
    if d is not device and d != device:
        if d.type == "meta" or device.type == "meta":
            check_out_device(device, out_impl)
        raise device_mismatch(d, device)


def check_out_device(result_device, out_impl) -> None:
    """An ``out=`` tensor must be on the device the result is computed on (no copy across devices)."""
    d = out_impl.device
    if d is not result_device and d != result_device:
        if d.type == "meta" or result_device.type == "meta":
            raise RuntimeError(f"Attempting to copy from device {result_device} to device {d}, but cross-device "
                               f"copies are not allowed!")
        raise RuntimeError(f"Expected out tensor to have device {result_device}, but got {d} instead")


def broadcast_operands(shapes) -> tuple:
    """The broadcast shape of an op's operands, folded left to right as TensorIterator does
    (so a mismatch names the shape so far as tensor a and the next operand as tensor b)."""
    out = tuple(shapes[0]) if shapes else ()
    for s in shapes[1:]:
        out = tuple(broadcast_pair_for_op(out, tuple(s)))
    return out


def broadcast_error(opname: str, impls, exc=None):
    """Raise PyTorch's message for shapes that do not broadcast."""
    broadcast_operands([tuple(i._array.shape) for i in impls])
    raise RuntimeError(f"{opname}: {exc}")


def check_out_dtype(result_dtype, out_dtype) -> None:
    if not can_cast(result_dtype, out_dtype):
        raise RuntimeError(f"result type {result_dtype.scalar_type_name} can't be cast to the desired output "
                           f"type {out_dtype.scalar_type_name}")


def resize_out(out, shape, layout=None) -> None:
    """Resize an ``out=`` tensor as at::native::resize_output does (warning if it had data).

    ``layout`` (a function of nothing, asked only when a resize happens) gives the strides the output
    takes then, as TensorIterator's resized outputs follow the inputs' layout; row-major without it."""
    impl = out._impl
    shape = tuple(shape)
    if tuple(impl._array.shape) == shape:
        return
    for d in shape:
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(shape)}")
    strides = None if layout is None else layout()
    if impl._array.size != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(impl._array.shape)}, "
            f"which does not match the required output shape {list(shape)}. This behavior is deprecated, and in "
            f"a future PyTorch release outputs will not be resized unless they have zero elements. You can "
            f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
            UserWarning, stacklevel=4)
    b = backend_for(impl.device)
    n = 1
    for s in shape:
        n *= s
    storage = impl.storage()
    offset = impl.storage_offset()
    if (offset + n) * impl.dtype.itemsize <= storage._nbytes:
        # as resize_: the memory stays where it is (views of it keep seeing it), now contiguous
        impl._array = b.view(storage, shape, strides or contiguous_strides(shape), 0 if n == 0 else offset,
                             impl.dtype.np)
        impl._strides = tuple(strides) if strides and n == 0 else None     # NumPy cannot tell an empty one's
        return
    if impl._base is not None:
        raise RuntimeError("resize_ on a view of another tensor is not supported by onion when the storage must "
                           "grow; pass a fresh tensor as out=")
    try:
        if strides:
            arr = b.empty_strided(shape, strides, impl.dtype.np, impl.device)
        else:
            arr = b.empty(shape, impl.dtype.np, impl.device)
    except (ValueError, MemoryError) as e:     # PyTorch's RuntimeError, and ``out`` left as it was
        raise allocation_error(shape, impl.dtype.itemsize, e) from None
    impl._array = arr
    impl._strides = tuple(strides) if strides and n == 0 else None
    impl._storage = None
    impl._offset = 0


_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                     "memory location. Please clone() the tensor before performing the operation.")
_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                    "single memory location. Please clone() the tensor before performing the operation.")


def _dense(impl) -> bool:
    return is_non_overlapping_and_dense(tuple(impl._array.shape), impl.strides)


def check_internal_overlap(impl) -> None:
    """An output some of whose elements share memory (an expanded view) cannot be written."""
    a = impl._array
    if 0 in a.strides and a.size > 1 and any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides)):
        raise RuntimeError(_INTERNAL_OVERLAP)


def iterator_out(out, shape) -> None:
    """An ``out=`` a TensorIterator-built kernel fills (arange, linspace): the internal-overlap check comes
    before the resize, as in TensorIterator's build (structured reductions and bmm resize first, and
    PyTorch lets them write into an expanded ``out``)."""
    check_internal_overlap(out._impl)
    resize_out(out, shape)


def _byte_span(a):
    """(first byte, one past the last byte) of a dense NumPy array."""
    start = a.__array_interface__["data"][0]
    low = sum((n - 1) * st for n, st in zip(a.shape, a.strides) if st < 0)
    return start + low, start + low + a.size * a.itemsize


def check_no_partial_overlap(out_impl, inputs) -> None:
    """at::assert_no_partial_overlap: an input may be the output itself, or not touch it at all.

    As PyTorch, only pairs of non-overlapping-and-dense tensors are judged (others are 'too hard')."""
    oa = out_impl._array
    if type(oa) is not _np.ndarray or oa.size == 0:
        return
    dense_out = None
    for i in inputs:
        if i is None or i is out_impl or i.is_wrapped_number:
            continue
        ia = i._array
        if type(ia) is not _np.ndarray or ia.size == 0 or not _np.may_share_memory(oa, ia):
            continue
        if dense_out is None:
            dense_out = _dense(out_impl)
        if not dense_out or not _dense(i):
            continue
        (ob, oe), (ib, ie) = _byte_span(oa), _byte_span(ia)
        if ob == ib and oe == ie:
            if tuple(out_impl.strides) != tuple(i.strides) or oa.dtype != ia.dtype:
                raise RuntimeError(_PARTIAL_OVERLAP)
        elif ob < ie and ib < oe:
            raise RuntimeError(_PARTIAL_OVERLAP)


def check_no_overlap(out_impl, inputs) -> None:
    """at::assert_no_overlap: an input may not share any memory with the output (not even all of it)."""
    oa = out_impl._array
    if type(oa) is not _np.ndarray or oa.size == 0:
        return
    for i in inputs:
        ia = i._array
        if type(ia) is _np.ndarray and ia.size and _np.may_share_memory(oa, ia):
            raise RuntimeError(_PARTIAL_OVERLAP)


def write_out(opname: str, out, result_array, result_dtype, inplace: bool = False, inputs=(), layout=None,
              check_overlap: bool = True):
    """Copy a computed array into ``out`` (in place or ``out=``), with PyTorch's checks.

    ``inputs`` (impls) are checked for partial memory overlap with ``out``; ``check_overlap=False`` for the
    kernels PyTorch lets write into an expanded ``out`` (its elements then overwrite each other);
    ``layout`` gives a resized ``out`` its strides (see ``resize_out``)."""
    impl = out._impl
    if impl._inference:
        impl.check_writable()
    # TensorIterator's order: memory overlap, shapes, dtypes, then resizing the output
    if check_overlap:
        check_internal_overlap(impl)
    if inputs:
        check_no_partial_overlap(impl, inputs)
    shape = tuple(result_array.shape)
    if inplace and tuple(impl._array.shape) != shape:
        raise RuntimeError(f"output with shape {list(impl._array.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")
    if result_dtype is not impl.dtype:
        check_out_dtype(result_dtype, impl.dtype)
    if not inplace:
        resize_out(out, shape, layout)
    xp_copy(impl._array, result_array)
    impl.bump_version()
    return out


def refuse_barebones_unsigned(kernel: str, impl) -> None:
    """A CPU kernel whose AT_DISPATCH leaves out uint16/uint32/uint64 (PyTorch's barebones unsigned types
    run only a few kernels: copies, comparisons, bit operations, mul, sort, sum...); Meta lets them through."""
    dt = impl.dtype
    if dt in _dt.BAREBONES_UNSIGNED_DTYPES and impl.device.type != "meta":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt.scalar_type_name}\'')


_DOUBLES = (_dt.float64.np, _dt.complex128.np)


def xp_copy(dst, src) -> None:
    """Elementwise copy with casting into a (possibly strided) destination array."""
    if type(dst).__module__.startswith("numpy"):
        import numpy as np
        sdt = getattr(src, "dtype", None)
        if dst.dtype.kind in "iu" and sdt == _dt.bfloat16.np:
            # ml_dtypes saturates bfloat16 -> integer casts; PyTorch converts as float does (wrapping)
            src = src.astype(np.float32)
        elif dst.itemsize == 2 and dst.dtype.kind in "fV" and sdt is not None and sdt.kind in "fc":
            # c10's Half and BFloat16 are made from a float: a double reaches them through float32 (two
            # roundings); overflowing to inf is no error there, so NumPy's warning is silenced
            with np.errstate(over="ignore"):
                if sdt in _DOUBLES:
                    src = src.astype(np.float32 if sdt.kind == "f" else np.complex64)
                np.copyto(dst, src, casting="unsafe")
            return
        np.copyto(dst, src, casting="unsafe")
    else:  # CuPy and array-API namespaces
        dst[...] = src


__all__ = ["priority", "common_dtype2", "common_dtype", "check_devices", "device_mismatch", "check_out_device",
           "check_iterator_output", "broadcast_error", "broadcast_operands", "check_out_dtype", "resize_out",
           "write_out", "check_internal_overlap", "iterator_out", "check_no_partial_overlap",
           "refuse_barebones_unsigned"]
