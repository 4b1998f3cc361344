"""Factory operators: tensors made from sizes and values, on any backend."""
from __future__ import annotations

import math

import numpy as np

from ...backends import backend_for
from ...core import dtype as _dt
from ...core.device import CPU as _CPU, canonical
from ...core.promotion import default_dtype_for_scalar
from ...core.tensor import Tensor
from .. import iterator as _it
from .. import view_geometry as g
from ..tensor_new import MAX_DIMS, allocation_error, check_storage_size, empty_tensor, too_many_dims, wrap_cpu
from .views import make_view
from .copy import _like_strides



def _check_size(size):
    if type(size) is tuple:
        for s in size:
            if type(s) is not int or s < 0:
                break
        else:
            return size         # already a tuple of Python ints, the common case
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _cpu_array(make, size, dt):
    """``make(size, dt.np)`` (np.empty or np.zeros) with PyTorch's size checks and errors.  zeros and ones try
    ``make`` on the sizes as given first (the binding passes a tuple of ints): NumPy refuses every size
    these checks refuse, so they need only run once it has, to raise PyTorch's error instead of NumPy's."""
    size = _check_size(size)
    try:
        return make(size, dt.np)
    except (ValueError, MemoryError) as e:
        raise allocation_error(size, dt.itemsize, e) from None


def empty_memory_format(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    size = _check_size(size)
    strides = None
    if memory_format is not None and memory_format != "contiguous_format":
        if memory_format == "preserve_format":
            raise RuntimeError("unsupported memory format Preserve")
        strides = g.strides_for_format(size, memory_format)
    return empty_tensor(size, dtype or _dt.get_default_dtype(), canonical(device), strides)


def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    size = _check_size(size)
    stride = tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    dt = dtype or _dt.get_default_dtype()
    dev = canonical(device)
    if dev.type != "meta" or all(st >= 0 for st in stride):
        check_storage_size(size, dt.itemsize, stride)      # also a negative stride, reaching before the storage
    if len(size) > MAX_DIMS:
        raise too_many_dims(len(size))
    n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    base = empty_tensor((max(n, 0),), dt, dev)
    return make_view(base, size, stride, 0)


def checked_scalar(value, dt):
    """A Python number as an element of ``dt``, refusing what would overflow (c10's checked_convert):
    out-of-range integers (unsigned types also take negatives down to -max, wrapping), finite floats
    beyond the type's range, NaN/inf into integers, complex with an imaginary part into real types."""
    if (value == 0 or value == 1) and type(value) in (int, float, bool):   # fits every dtype
        return dt.np.type(value)

    def overflow():
        return RuntimeError(f"value cannot be converted to type {dt.cpp_type_name} without overflow")
    if isinstance(value, np.generic):
        value = value.item()
    if dt is _dt.bool:
        return np.bool_(bool(value))
    if isinstance(value, complex):
        if dt.is_complex:
            limit = float(np.finfo(dt.to_real().np).max)
            if any(math.isfinite(p) and abs(p) > limit for p in (value.real, value.imag)):
                raise overflow()
            return dt.np.type(value)
        if value.imag != 0:
            raise overflow()
        value = value.real
    if dt.category == 1:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise overflow()
        iv = int(value)
        info = np.iinfo(dt.np)
        if iv > info.max or iv < (info.min if dt.is_signed else -int(info.max)):
            raise overflow()
        return np.array(iv, dtype=np.int64).astype(dt.np)[()] if iv >= 0 or dt.is_signed else \
            np.array(iv % (int(info.max) + 1), dtype=np.int64).astype(dt.np)[()]
    v = float(value) if not isinstance(value, bool) else float(int(value))
    limit = float(np.finfo(dt.np).max) if dt is not _dt.bfloat16 else 3.3895313892515355e38
    if math.isfinite(v) and abs(v) > limit:
        raise overflow()
    if dt.itemsize == 2:        # Half, BFloat16: made from a float, so a double is rounded twice (as c10)
        with np.errstate(over="ignore"):
            return dt.np.type(np.float32(v))
    return dt.np.type(v) if not dt.is_complex else dt.np.type(complex(v))


def _fill(t, value):
    impl = t._impl
    v = checked_scalar(value, impl.dtype)
    if impl.device.type != "meta":
        impl._array[...] = v
    return t


def zeros(size, dtype=None, layout=None, device=None, pin_memory=None):
    if device is None or device is _CPU:
        dt = dtype or _dt._default_dtype        # what get_default_dtype() returns, without the call
        try:
            a = np.zeros(size, dt.np)
        except Exception:       # (the error is raised outside the handler, so it does not chain NumPy's)
            a = None
        if a is None:
            a = _cpu_array(np.zeros, size, dt)
        return wrap_cpu(a, dt)
    return _fill(empty_memory_format(size, dtype, layout, device), 0)


def ones(size, dtype=None, layout=None, device=None, pin_memory=None):
    if device is _CPU or device is None:        # the binding passes the default device
        dt = dtype or _dt._default_dtype        # what get_default_dtype() returns, without the call
        try:
            a = np.empty(size, dt.np)
        except Exception:       # (the error is raised outside the handler, so it does not chain NumPy's)
            a = None
        if a is None:
            a = _cpu_array(np.empty, size, dt)
        a.fill(1)       # one in every dtype; cheaper than np.ones
        return wrap_cpu(a, dt)
    return _fill(empty_memory_format(size, dtype, layout, device), 1)


def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or default_dtype_for_scalar(fill_value)
    return _fill(empty_memory_format(size, dt, layout, device), fill_value)


def _out_fill(size, out, value):
    _it.resize_out(out, tuple(size))
    _fill(out, value)
    out._impl.bump_version()
    return out


def zeros_out(size, out):
    return _out_fill(size, out, 0)


def ones_out(size, out):
    return _out_fill(size, out, 1)


def full_out(size, fill_value, out):
    return _out_fill(size, out, fill_value)


def _real_arg(v):
    """A range argument as a real Python number (complex ones must have no imaginary part)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        v = v.real
    return int(v) if isinstance(v, bool) else v


def _fmt(v) -> str:
    """A number as C++'s ostream prints it (what PyTorch's messages show)."""
    return f"{float(v):g}" if isinstance(v, float) else str(v)


def _arange_values(start, end, step, dt):
    """arange's values as a NumPy array (int64 or float64), with PyTorch's rules per dtype:
    int64 truncates start/end/step first and counts in integers; the other integer types count
    ceil((end - start) / step) on the given values but step from the truncated start by the truncated
    step; floating types compute start + i * step."""
    if dt is _dt.bool or dt.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dt.scalar_type_name}\'')
    start, end, step = _real_arg(start), _real_arg(end), _real_arg(step)
    if step == 0 or step != step:       # a NaN step is refused as a zero one
        raise RuntimeError("step must be nonzero")
    for v in (start, end):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    integral = dt.category == 1
    if dt is _dt.int64:
        if isinstance(step, float) and not math.isfinite(step):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        xs, xe, xst = int(start), int(end), int(step)
        if xst == 0:
            raise ValueError("step must be nonzero")
    else:
        xs, xe, xst = start, end, step
    if not ((xst > 0 and xe >= xs) or (xst < 0 and xe <= xs)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt is _dt.int64:
        num = xe - xs + xst - (1 if xst > 0 else -1)
        n = abs(num) // abs(xst) * (1 if (num >= 0) == (xst > 0) else -1)   # C++ integer division
    else:
        n = math.ceil((end - start) / step)
    n = max(int(n), 0)
    check_storage_size((n,), max(dt.itemsize, 8))   # the values are computed in 64 bits first
    try:
        if integral:
            return int(xs) + np.arange(n, dtype=np.int64) * int(xst)
        return start + np.arange(n, dtype=np.float64) * step
    except MemoryError as e:
        raise allocation_error((n,), 8, e) from None


def _arange_dtype(start, end, step):
    if any(isinstance(v, (float, complex, np.floating, np.complexfloating)) and not isinstance(v, bool)
           for v in (start, end, step)):
        return _dt.get_default_dtype()
    return _dt.int64


def _to_dtype_array(vals, dt):
    """Computed values (int64 / float64 / complex128) cast as PyTorch's conversion does (integers wrap)."""
    if dt.category == 1 and vals.dtype.kind == "f":
        vals = np.trunc(vals).astype(np.int64)
    return vals.astype(dt.np)


def arange_start_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or _arange_dtype(start, end, step)
    vals = _arange_values(start, end, step, dt)
    out = empty_tensor((len(vals),), dt, canonical(device))
    _it.refuse_barebones_unsigned("arange_cpu", out._impl)
    if out._impl.device.type != "meta":
        arr = _to_dtype_array(vals, dt)
        _it.xp_copy(out._impl._array, arr if out._impl.device.type == "cpu" else
                    backend_for(out._impl.device).from_numpy(arr, out._impl.device))
    return out


def arange(end, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype or _arange_dtype(0, end, 1), layout, device, pin_memory)


def arange_start(start, end, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype, layout, device, pin_memory)


def arange_start_out(start, end, step, out):
    _it.refuse_barebones_unsigned("arange_cpu", out._impl)
    vals = _arange_values(start, end, step, out._impl.dtype)
    _it.iterator_out(out, (len(vals),))
    if out._impl.device.type != "meta":
        _it.xp_copy(out._impl._array, _to_dtype_array(vals, out._impl.dtype))
    out._impl.bump_version()
    return out


def _linspace_values(start, end, steps, dt):
    """linspace's values (float64 / complex128, or int64 for integer dtypes) as PyTorch computes them:
    the first half counts up from start, the second down from end; integer dtypes first convert
    start and end to the dtype (wrapping), then truncate each value."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dt is _dt.bool:
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    if dt.is_complex:
        start, end, compute = complex(start), complex(end), np.complex128
    else:
        start, end = _real_arg(start), _real_arg(end)
        compute = np.float64
        if dt.category == 1:
            start = float(np.array(int(start), dtype=np.int64).astype(dt.np))
            end = float(np.array(int(end), dtype=np.int64).astype(dt.np))
    check_storage_size((steps,), max(dt.itemsize, 8))
    if steps == 0:
        return np.empty(0, compute)
    if steps == 1:
        return np.array([start], compute)
    if dt in (_dt.float16, _dt.bfloat16):
        return _half_linspace(start, end, steps, dt.np)
    step = (end - start) / (steps - 1)
    if dt.category == 2 and dt.itemsize < 8:
        step = float(dt.np.type(step))   # the step is held in the dtype (float, Half, BFloat16)
    try:
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        return np.where(i < half, start + step * i, end - step * (steps - i - 1)).astype(compute)
    except MemoryError as e:
        raise allocation_error((steps,), 8, e) from None


def _half_linspace(start, end, steps, t):
    """linspace in Half/BFloat16 as ATen's CPU kernel computes it: every operation in the dtype (c10's Half
    arithmetic: through float, rounded after each one, an int64 operand converted to the dtype first),
    start + step * i for the first half, end - step * (steps - 1 - i) for the second; float64 values."""
    f32 = np.float32

    def rnd(x):
        return np.asarray(x, f32).astype(t).astype(f32)
    with np.errstate(all="ignore"):     # overflow to inf is the dtype's own result
        s, e = rnd(start), rnd(end)
        step = rnd(rnd(e - s) / rnd(steps - 1))
        i = np.arange(steps, dtype=np.int64)
        up = rnd(s + rnd(step * rnd(i)))
        down = rnd(e - rnd(step * rnd(steps - 1 - i)))
    return np.where(i < steps // 2, up, down).astype(np.float64)


def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or (_dt.get_default_complex_dtype() if any(isinstance(v, complex) for v in (start, end))
                   else _dt.get_default_dtype())
    vals = _linspace_values(start, end, steps, dt)
    out = empty_tensor((steps,), dt, canonical(device))
    _it.refuse_barebones_unsigned("linspace_cpu", out._impl)
    if out._impl.device.type != "meta":
        arr = _to_dtype_array(vals, dt)
        _it.xp_copy(out._impl._array, arr if out._impl.device.type == "cpu" else
                    backend_for(out._impl.device).from_numpy(arr, out._impl.device))
    return out


def linspace_tensor_bounds(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    """``linspace`` with tensor bounds (the ``Tensor_Tensor``, ``Tensor_Scalar`` and ``Scalar_Tensor``
    overloads): each tensor bound must be 0-dimensional, and stands for its value."""
    bounds = (("start", start), ("end", end))
    bad = [f"{name} with {b._impl._array.ndim} dimension(s)" for name, b in bounds
           if isinstance(b, Tensor) and b._impl._array.ndim != 0]
    if bad:
        raise RuntimeError("linspace only supports 0-dimensional start and end tensors, but got "
                           f"{' and '.join(bad)}.")
    dev = device
    vals = []
    for _, b in bounds:
        if isinstance(b, Tensor):
            if device is None and (dev is None or b._impl.device.type == "meta"):
                dev = b._impl.device        # a meta bound makes a meta result (PyTorch)
            b = 0 if b._impl.device.type == "meta" else b.item()    # a meta bound has no value; none is needed
        vals.append(b)
    return linspace(vals[0], vals[1], steps, dtype, layout, dev, pin_memory)


def linspace_out(start, end, steps, out):
    _it.refuse_barebones_unsigned("linspace_cpu", out._impl)
    vals = _linspace_values(start, end, steps, out._impl.dtype)
    _it.iterator_out(out, (steps,))
    if out._impl.device.type != "meta":
        _it.xp_copy(out._impl._array, _to_dtype_array(vals, out._impl.dtype))
    out._impl.bump_version()
    return out


def _linspace_tensor_out(start, end, steps, out):
    """linspace's Tensor overloads with ``out=``: the bounds' devices are checked against ``out``'s as
    PyTorch's copies check them; the values are written as linspace.out."""
    from ..at import at
    linspace_tensor_bounds(start, end, steps, dtype=out._impl.dtype, device=None)    # the bounds' checks
    dst = out._impl.device
    for name, b in (("start", start), ("end", end)):
        # PyTorch moves start to out's device, and end too unless out is meta (then any end will do)
        if isinstance(b, Tensor) and b._impl.device != dst and (name == "start" or dst.type != "meta"):
            raise RuntimeError(f"Attempting to copy from device {b._impl.device} to device {dst}, but cross-device "
                               "copies are not allowed!")
    bounds = [0 if isinstance(b, Tensor) and b._impl.device.type == "meta" else
              (b.item() if isinstance(b, Tensor) else b) for b in (start, end)]
    return at.linspace_out(bounds[0], bounds[1], steps, out)


# linspace's Tensor overloads with out= (PyTorch's, for 0-dim bounds): CompositeImplicitAutograd bodies, found by name
def linspace_Tensor_Tensor_out(start, end, steps, out):
    return _linspace_tensor_out(start, end, steps, out)


def linspace_Tensor_Scalar_out(start, end, steps, out):
    return _linspace_tensor_out(start, end, steps, out)


def linspace_Scalar_Tensor_out(start, end, steps, out):
    return _linspace_tensor_out(start, end, steps, out)


def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or _dt.get_default_dtype()
    dev = canonical(device)
    if dev is _CPU:         # (the backward formulas' zeros) the checked value as a 0-d array
        return wrap_cpu(np.array(checked_scalar(s, dt), dt.np), dt)
    return _fill(empty_tensor((), dt, dev), s)


def _filled_like(self, dtype, device, memory_format, value):
    """``*_like`` with a value: one NumPy call when the input is a plain CPU array (the common case)."""
    impl = self._impl
    a = impl._array
    if device is None and impl.device.type == "cpu" and memory_format in (None, "preserve_format") \
            and a.flags.c_contiguous and a.size and 1 not in a.shape:   # (size-1 dims keep their strides)
        dt = dtype or impl.dtype
        out = np.empty(a.shape, dt.np)
        out.fill(checked_scalar(value, dt))
        return wrap_cpu(out, dt)
    return _fill(_like(self, dtype, device, memory_format), value)


def _like(self, dtype, device, memory_format):
    impl = self._impl
    dt = dtype or impl.dtype
    dev = canonical(device) if device is not None else impl.device
    if impl.device.type == "meta" and memory_format in (None, "preserve_format"):
        # PyTorch's Meta *_like run its Python reference, whose layout rule differs from ATen's
        strides = g.meta_like_strides(tuple(impl._array.shape), impl.strides)
    else:
        strides = _like_strides(impl, memory_format)
    return empty_tensor(tuple(impl._array.shape), dt, dev, strides)


def empty_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(self, dtype, device, memory_format)


def zeros_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _filled_like(self, dtype, device, memory_format, 0)


def ones_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _filled_like(self, dtype, device, memory_format, 1)


def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _fill(_like(self, dtype, device, memory_format), fill_value)


def fill_scalar_(self, value):
    self._impl.check_writable()
    _fill(self, value)
    self._impl.bump_version()
    return self


def fill_tensor_(self, value):
    if value._impl._array.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._impl._array.ndim} dimensions.")
    return fill_scalar_(self, value.item() if value._impl.device.type != "meta" else 0)


# --- onion.tensor(data): not an operator in PyTorch either, but the Python binding's job ----
def string_data_error(data) -> Exception:
    """The error for a string inside tensor data, as PyTorch's: a string met while reading the shape
    (down the first elements) is taken for one more dimension; anywhere else it is a bad element."""
    x = data
    while isinstance(x, (list, tuple)) and len(x):
        x = x[0]
        if isinstance(x, str):
            return ValueError(f"too many dimensions '{type(x).__name__}'")
    return TypeError("new(): invalid data type 'str'")


def infer_dtype(data):
    """PyTorch's dtype inference for nested Python data."""
    cats = set()

    def walk(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, bool) or isinstance(x, np.bool_):
            cats.add(0)
        elif isinstance(x, (int, np.integer)):
            cats.add(1)
        elif isinstance(x, (float, np.floating)):
            cats.add(2)
        elif isinstance(x, (complex, np.complexfloating)):
            cats.add(3)
        elif hasattr(x, "_impl"):
            cats.add(x._impl.dtype.category + 10)
        elif isinstance(x, str):
            raise string_data_error(data)
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
    walk(data)
    if not cats:
        return _dt.get_default_dtype()
    top = max(c % 10 if c >= 10 else c for c in cats)
    return {0: _dt.bool, 1: _dt.int64, 2: _dt.get_default_dtype(), 3: _dt.get_default_complex_dtype()}[top]
