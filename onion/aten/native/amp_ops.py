"""GradScaler's two operators: the inf/nan check that unscales gradients in place, and the scale update.

Both work on one-element tensors that stay on the device (``found_inf``, the scale, the growth tracker), so a
training loop never has to read a value back to decide; the checks and their order are PyTorch's CPU kernels'.
Unlike PyTorch's CPU kernel, a list with a gradient of an unsupported dtype is refused before any gradient is
touched (bad input modifies nothing).
"""
from __future__ import annotations

import math

import numpy as np

from ...core import dtype as _dt

_UNSCALE = "_amp_foreach_non_finite_check_and_unscale_cpu"
_UNSCALE_DTYPES = (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16)


def _numel(t) -> int:
    return t._impl._array.size


def _check_unscale_args(found_inf, inv_scale):
    if _numel(inv_scale) != 1:
        raise RuntimeError("inv_scale must be a 1-element tensor.")
    if _numel(found_inf) != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if inv_scale._impl.dtype is not _dt.float32:
        raise RuntimeError("inv_scale must be a float tensor.")
    if found_inf._impl.dtype is not _dt.float32:
        raise RuntimeError("found_inf must be a float tensor.")


def _amp_foreach_non_finite_check_and_unscale_cpu_(self, found_inf, inv_scale):
    """Each gradient times ``inv_scale``, in place (float16/bfloat16 computed in float32 and rounded once);
    ``found_inf`` set to 1.0 when any element of any gradient is inf or nan (it is never reset here)."""
    if len(self) == 0:
        return
    for name, t in (("inv_scale", inv_scale), ("found_inf", found_inf)):
        if t._impl.device.type != "cpu":
            raise RuntimeError(f"{name} must be a CPU tensor.")
    _check_unscale_args(found_inf, inv_scale)
    for g in self:
        impl = g._impl
        if impl.device.type != "cpu":
            raise RuntimeError("one of scaled_grads was not a CPU tensor.")
        if impl.dtype not in _UNSCALE_DTYPES:
            raise NotImplementedError(f'"{_UNSCALE}" not implemented for \'{impl.dtype.scalar_type_name}\'')
        impl.check_writable()
    inv = np.float32(inv_scale._impl._array.reshape(()))
    found = False
    for g in self:
        impl = g._impl
        a = impl._array
        if a.size == 0:
            continue
        low = impl.dtype is _dt.float16 or impl.dtype is _dt.bfloat16
        work = a.astype(np.float32) if low else a
        if not found and not np.isfinite(work).all():
            found = True
        scaled = np.multiply(work, inv, dtype=np.float32 if low else a.dtype)
        a[...] = scaled.astype(a.dtype) if low else scaled
        impl.bump_version()
    if found:
        found_inf._impl._array[...] = 1.0
        found_inf._impl.bump_version()


def _amp_foreach_non_finite_check_and_unscale_meta_(self, found_inf, inv_scale):
    """No values to check: only the arguments (as PyTorch's meta registration, which asks for floating dtypes)."""
    if _numel(found_inf) != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if _numel(inv_scale) != 1:
        raise RuntimeError("inv_scale must be a 1-element tensor.")
    if not found_inf._impl.dtype.is_floating_point:
        raise RuntimeError("found_inf must be a float tensor.")
    if not inv_scale._impl.dtype.is_floating_point:
        raise RuntimeError("inv_scale must be a float tensor.")


def _check_update_args(self, growth_tracker, found_inf):
    for name, t in (("growth_tracker", growth_tracker), ("current_scale", self), ("found_inf", found_inf)):
        if t._impl.device.type != "cpu":
            raise RuntimeError(f"{name} must be a CPU tensor.")
    for name, t in (("growth_tracker", growth_tracker), ("current_scale", self), ("found_inf", found_inf)):
        if _numel(t) != 1:
            raise RuntimeError(f"{name} must be a 1-element tensor.")
    if growth_tracker._impl.dtype is not _dt.int32:
        raise RuntimeError("growth_tracker must be an int tensor.")
    if self._impl.dtype is not _dt.float32:
        raise RuntimeError("current_scale must be a float tensor.")
    if found_inf._impl.dtype is not _dt.float32:
        raise RuntimeError("found_inf must be a float tensor.")


def _amp_update_scale_cpu_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                           growth_interval):
    """After an inf/nan (``found_inf`` nonzero): scale times the backoff factor, tracker to 0.  Otherwise the
    tracker counts clean steps and at ``growth_interval`` the scale grows (unless that overflows float32)."""
    _check_update_args(self, growth_tracker, found_inf)
    self._impl.check_writable()
    growth_tracker._impl.check_writable()
    scale = self._impl._array
    tracker = growth_tracker._impl._array
    found = float(found_inf._impl._array.reshape(()))
    if found != 0.0 or math.isnan(found):
        # float * double in C++: the product in double, stored as float32
        scale[...] = np.float32(float(scale.reshape(())) * scale_backoff_factor)
        tracker[...] = 0
    else:
        successful = int(tracker.reshape(())) + 1
        if successful == growth_interval:
            with np.errstate(over="ignore"):
                grown = np.float32(float(scale.reshape(())) * scale_growth_factor)
            if np.isfinite(grown):
                scale[...] = grown
            tracker[...] = 0
        else:
            tracker[...] = np.int32(successful)
    self._impl.bump_version()
    growth_tracker._impl.bump_version()
    return self


def _amp_update_scale_meta_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                            growth_interval):
    return self
