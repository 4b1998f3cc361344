"""Copies between dtypes, layouts and devices: ``copy_``, ``_to_copy``, ``clone`` and ``to``."""
from __future__ import annotations

from ...backends import backend_for
from ...core.device import CPU, canonical
from ...core import dtype as _dt
from .. import iterator as _it
from .. import view_geometry as g
from ..tensor_new import empty_tensor, wrap_cpu
import numpy as np
import warnings
from ..at import at
from ..math_bits import MATH_BITS, apply_bits


def _host_or_backend_array(src_impl, dst_device):
    """``src``'s array readable on ``dst_device`` (crossing devices through NumPy)."""
    if src_impl.device == dst_device or (src_impl.device.type == dst_device.type == "cpu"):
        return src_impl._array
    host = backend_for(src_impl.device).to_numpy(src_impl._array)
    if dst_device.type == "cpu":
        return host
    return backend_for(dst_device).from_numpy(host, dst_device)


def copy_(self, src, non_blocking=False):
    dst = self._impl
    s = src._impl
    if dst._inference:
        dst.check_writable()
    if s.device.type == "meta" and dst.device.type != "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")     # before any shape check
    dshape = tuple(dst._array.shape)
    sshape = tuple(s._array.shape)
    if sshape != dshape:
        out = tuple(g.broadcast_pair_for_op(dshape, sshape))    # raises PyTorch's size message
        if out != dshape:
            raise RuntimeError(f"output with shape {list(dshape)} doesn't match the broadcast shape {list(out)}")
    if dst.device.type == "meta" or s.device.type == "meta":
        dst.bump_version()
        return self
    if dst.device == s.device:
        # TensorIterator's memory checks: no self-overlapping destination, no partly shared memory
        _it.check_internal_overlap(dst)
        _it.check_no_partial_overlap(dst, [s])
    to_bool = dst.dtype is _dt.bool
    if dst.dtype.category < 3 and s.dtype.is_complex and not to_bool:
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
    arr = _host_or_backend_array(s, dst.device)
    bits = (s.keyset ^ dst.keyset) & MATH_BITS
    if bits:        # values as ``src`` means them, stored as ``self`` means them (each bit its own inverse)
        arr = apply_bits(arr, bits, s.dtype.is_complex and dst.dtype.is_complex)
    if s.dtype.is_complex and not dst.dtype.is_complex:
        arr = arr != 0 if to_bool else arr.real     # a complex number is true where either part is nonzero
    _it.xp_copy(dst._array, arr)
    dst.bump_version()
    return self


def _like_strides(impl, memory_format=None):
    """Strides of a fresh tensor like ``impl`` in ``memory_format`` (a name; None: preserve_format,
    which keeps a dense layout and otherwise the input's dim order, as empty_like does)."""
    return g.like_strides(tuple(impl._array.shape), impl.strides, memory_format)


def _plain_casts() -> frozenset:
    """(source, destination) dtypes whose NumPy ``astype`` gives c10's conversion and never warns: a copy,
    a widening between floating types, float32 to bfloat16 (the same range, so nothing overflows), and an
    integer or bool becoming float32/float64.  Casts that can overflow or that c10 rounds otherwise (a double
    to a 16-bit float, a float to an integer, bfloat16 to an integer) take the general path.  (onion's dtype
    objects, not NumPy's: naming bfloat16's NumPy dtype would load ml_dtypes at import.)"""
    f16, bf16, f32, f64 = _dt.float16, _dt.bfloat16, _dt.float32, _dt.float64
    pairs = {(f32, bf16), (f32, f64), (f16, f32), (f16, f64), (bf16, f32), (bf16, f64)}
    pairs.update((d, d) for d in _dt.EVERY_DTYPE)
    for src in (_dt.bool, _dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64):
        pairs.update({(src, f32), (src, f64)})
    return frozenset(pairs)


_PLAIN_CASTS = _plain_casts()
_ndarray = np.ndarray


def _to_copy(ks, self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    impl = self._impl
    arr = impl._array
    if (device is None and impl.device is CPU and type(arr) is _ndarray and (memory_format is None or memory_format == "preserve_format")
            and arr.flags.c_contiguous and arr.size and 1 not in arr.shape and not impl.keyset & MATH_BITS):
        # the everyday copy (``.float()``, autocast's casts, ``clone``): a contiguous CPU array to a dtype
        # NumPy converts as c10 does; NumPy allocates the contiguous result the general path would make
        # (not with a size-1 dim, whose stride PyTorch's preserve_format keeps as it is and NumPy does not)
        dt = dtype if dtype is not None else impl.dtype
        if (impl.dtype, dt) in _PLAIN_CASTS:
            return wrap_cpu(arr.astype(dt.np), dt)
    dt = dtype if dtype is not None else impl.dtype
    dev = canonical(device) if device is not None else impl.device
    strides = _like_strides(impl, memory_format)
    out = empty_tensor(tuple(impl._array.shape), dt, dev, strides)
    if dev.type == "meta" or impl.device.type == "meta":
        if impl.device.type == "meta" and dev.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return out
    arr = _host_or_backend_array(impl, dev)
    if impl.keyset & MATH_BITS:
        arr = apply_bits(arr, impl.keyset, impl.dtype.is_complex)
    if impl.dtype.is_complex and not dt.is_complex:
        if dt is _dt.bool:          # true where either part is nonzero
            arr = arr != 0
        else:
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
            arr = arr.real
    _it.xp_copy(out._impl._array, arr)
    return out


def clone(self, memory_format=None):
    return at._to_copy(self, None, None, None, None, False, memory_format)


def contiguous(self, memory_format="contiguous_format"):
    impl = self._impl
    if memory_format is None or memory_format == "contiguous_format":
        if impl.is_contiguous():
            return self
        return at.clone(self, "contiguous_format")
    if g.is_contiguous_as(tuple(impl._array.shape), impl.strides, memory_format):
        return self
    if memory_format == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return at.clone(self, memory_format)


def _to(self, dtype, device, non_blocking, copy, memory_format):
    impl = self._impl
    dt = dtype if dtype is not None else impl.dtype
    dev = canonical(device) if device is not None else impl.device
    if not copy and dt is impl.dtype and dev == impl.device and (
            memory_format is None or memory_format == "preserve_format"
            or g.suggest_memory_format(tuple(impl._array.shape), impl.strides) == memory_format):
        return self         # to_will_alias: nothing to change, not even the layout
    if device is None:      # as PyTorch's to.dtype: only what was given reaches _to_copy (and a mode)
        return at._to_copy(self, dtype, None, None, None, non_blocking, memory_format)
    # a device given: PyTorch's binding passes the tensor's options with that device
    return at._to_copy(self, dt, "strided", dev, None, non_blocking, memory_format)


def to_dtype_layout(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False,
                    memory_format=None):
    return _to(self, dtype, device, non_blocking, copy, memory_format)


def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to(self, dtype, device, non_blocking, copy, memory_format)


def to_dtype(ks, self, dtype, non_blocking=False, copy=False, memory_format=None):
    if dtype is not self._impl.dtype:      # another dtype is always a copy (autocast's casts): _to's last step
        return at._to_copy(self, dtype, None, None, None, non_blocking, memory_format)
    return _to(self, dtype, None, non_blocking, copy, memory_format)


def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return _to(self, other._impl.dtype, other._impl.device, non_blocking, copy, memory_format)
