"""Factory operators: tensors made from sizes and values, on any backend."""
from __future__ import annotations

import math

import numpy as np

from ...backends import backend_for
from ...core import dtype as _dt
from ...core.device import canonical
from ...core.promotion import default_dtype_for_scalar
from .. import iterator as _it
from ..tensor_new import empty_tensor


def _check_size(size):
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def empty_memory_format(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return empty_tensor(_check_size(size), dtype or _dt.get_default_dtype(), canonical(device))


def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    size = _check_size(size)
    dt = dtype or _dt.get_default_dtype()
    dev = canonical(device)
    b = backend_for(dev)
    n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    base = empty_tensor((n,), dt, dev)
    from .views import make_view
    del b
    return make_view(base, size, tuple(stride), 0)


def _fill(t, value):
    impl = t._impl
    if impl.device.type != "meta":
        impl._array[...] = value
    return t


def zeros(size, dtype=None, layout=None, device=None, pin_memory=None):
    return _fill(empty_memory_format(size, dtype, layout, device), 0)


def ones(size, dtype=None, layout=None, device=None, pin_memory=None):
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


def _arange_values(start, end, step, dt):
    for v, name in ((start, "start"), (end, "end")):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.ceil((end - start) / step) if dt.category >= 2 or any(isinstance(v, float) for v in (start, end, step)) \
        else -((start - end) // step)
    n = max(int(n), 0)
    if dt.category == 1 and not any(isinstance(v, float) for v in (start, end, step)):
        return np.arange(start, start + n * step, step, dtype=np.int64)[:n]
    return start + np.arange(n, dtype=np.float64) * step


def _arange_dtype(start, end, step):
    if any(isinstance(v, (float, complex)) and not isinstance(v, bool) for v in (start, end, step)):
        return _dt.get_default_dtype()
    return _dt.int64


def arange_start_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or _arange_dtype(start, end, step)
    vals = _arange_values(start, end, step, dt)
    out = empty_tensor((len(vals),), dt, canonical(device))
    if out._impl.device.type != "meta":
        _it.xp_copy(out._impl._array, vals.astype(dt.np) if out._impl.device.type == "cpu" else
                    backend_for(out._impl.device).from_numpy(vals.astype(dt.np), out._impl.device))
    return out


def arange(end, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype or _arange_dtype(0, end, 1), layout, device, pin_memory)


def arange_start(start, end, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype, layout, device, pin_memory)


def arange_start_out(start, end, step, out):
    vals = _arange_values(start, end, step, out._impl.dtype)
    _it.resize_out(out, (len(vals),))
    if out._impl.device.type != "meta":
        _it.xp_copy(out._impl._array, vals.astype(out._impl.dtype.np))
    out._impl.bump_version()
    return out


def _linspace_values(start, end, steps, dt):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    compute = np.complex128 if dt.is_complex else np.float64
    if steps == 0:
        return np.empty(0, compute)
    if steps == 1:
        return np.array([start], compute)
    step = (end - start) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    return np.where(i < half, start + step * i, end - step * (steps - i - 1)).astype(compute)


def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or (_dt.get_default_complex_dtype() if any(isinstance(v, complex) for v in (start, end))
                   else _dt.get_default_dtype())
    vals = _linspace_values(start, end, steps, dt)
    out = empty_tensor((steps,), dt, canonical(device))
    if out._impl.device.type != "meta":
        if dt.category < 2:
            vals = np.trunc(vals)
        _it.xp_copy(out._impl._array, vals.astype(dt.np) if out._impl.device.type == "cpu" else
                    backend_for(out._impl.device).from_numpy(vals.astype(dt.np), out._impl.device))
    return out


def linspace_out(start, end, steps, out):
    vals = _linspace_values(start, end, steps, out._impl.dtype)
    _it.resize_out(out, (steps,))
    if out._impl.device.type != "meta":
        _it.xp_copy(out._impl._array, vals.astype(out._impl.dtype.np))
    out._impl.bump_version()
    return out


def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    t = empty_tensor((), dtype or _dt.get_default_dtype(), canonical(device))
    return _fill(t, s)


def _like(self, dtype, device, memory_format):
    impl = self._impl
    dt = dtype or impl.dtype
    dev = canonical(device) if device is not None else impl.device
    strides = None
    if memory_format in (None, "preserve_format"):
        from .copy import _like_strides
        strides = _like_strides(impl)
    return empty_tensor(tuple(impl._array.shape), dt, dev, strides)


def empty_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(self, dtype, device, memory_format)


def zeros_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _fill(_like(self, dtype, device, memory_format), 0)


def ones_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _fill(_like(self, dtype, device, memory_format), 1)


def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _fill(_like(self, dtype, device, memory_format), fill_value)


def fill_scalar_(self, value):
    _fill(self, value)
    self._impl.bump_version()
    return self


def fill_tensor_(self, value):
    if value._impl._array.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._impl._array.ndim} dimensions.")
    return fill_scalar_(self, value.item() if value._impl.device.type != "meta" else 0)


# --- onion.tensor(data): not an operator in PyTorch either, but the Python binding's job ----
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
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    walk(data)
    if not cats:
        return _dt.get_default_dtype()
    top = max(c % 10 if c >= 10 else c for c in cats)
    return {0: _dt.bool, 1: _dt.int64, 2: _dt.get_default_dtype(), 3: _dt.get_default_complex_dtype()}[top]
