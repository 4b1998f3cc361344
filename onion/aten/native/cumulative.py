"""Scans along one dim: cumsum, cumprod, logcumsumexp.

ATen's CPU scans keep a running value in the accumulate type (double for float,
float for float16/bfloat16, int64 for integers) and round each output; NumPy's
accumulate in that dtype and one cast do the same.  The result is contiguous.
"""
from __future__ import annotations

import numpy as _np

from ...backends import backend_for
from ...core import dtype as _dt
from ..at import at
from ..iterator import resize_out, write_out
from ..structured import Plan
from ..tensor_new import empty_tensor, wrap
from ..view_geometry import wrap_dim
from .reductions import _cast

_int64 = _dt.int64
_SCAN_ACC = {_dt.float32: _np.float64, _dt.float16: _np.float32, _dt.bfloat16: _np.float32,
             _dt.complex64: _np.complex128}


def _scan_acc(dtype):
    """The accumulate dtype of a scan producing ``dtype``."""
    if dtype.category < 2:
        return _int64.np
    return _SCAN_ACC.get(dtype, dtype.np)


def _scan_dtype(self_dtype, dtype):
    if dtype is not None:
        return dtype
    return _int64 if self_dtype.category < 2 else self_dtype


def _scan_meta(name, self, dim, dtype):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    out_dtype = _scan_dtype(impl.dtype, dtype)
    err = _bool_error(name, out_dtype, impl.device)
    rule = None if dtype is not None else _scan_out_rule
    return Plan(shape, out_dtype, impl.device, None, d if shape else None, rule, err, (name, self))


def _bool_error(name, out_dtype, device):
    if out_dtype is _dt.bool:
        suffix = "cuda" if device.type == "cuda" else "cpu"
        return NotImplementedError(f'"{name}_out_{suffix}" not implemented for \'Bool\'')
    return None


def _scan_out_rule(plan, odt, xp):
    """Without ``dtype=``, an ``out=`` (or in-place self) of another dtype is the dtype the scan runs in."""
    name, self = plan.args
    err = _bool_error(name, odt, plan.device)
    if err is not None:
        raise err
    if xp is None:
        return None
    p = Plan(plan.shape, odt, plan.device, None, plan.extra)
    return _SCANS[name](xp, p, self, plan.extra, odt)


def _scan_input(xp, plan, self, dtype):
    impl = self._impl
    a = impl._array
    if dtype is not None and dtype is not impl.dtype:
        a = _cast(xp, a, impl.dtype, dtype)
    elif plan.dtype is not impl.dtype:
        a = a.astype(plan.dtype.np)
    return a


def meta_cumsum(self, dim, dtype=None):
    return _scan_meta("cumsum", self, dim, dtype)


def cumsum_impl(xp, plan, self, dim, dtype=None):
    if plan.impl_error is not None:
        return None
    a = _scan_input(xp, plan, self, dtype)
    axis = plan.extra
    if axis is None:
        return a.astype(plan.dtype.np, copy=True)
    return xp.cumsum(a, axis=axis, dtype=_scan_acc(plan.dtype))


def meta_cumprod(self, dim, dtype=None):
    return _scan_meta("cumprod", self, dim, dtype)


def cumprod_impl(xp, plan, self, dim, dtype=None):
    if plan.impl_error is not None:
        return None
    a = _scan_input(xp, plan, self, dtype)
    axis = plan.extra
    if axis is None:
        return a.astype(plan.dtype.np, copy=True)
    with _np.errstate(over="ignore", invalid="ignore"):
        return xp.cumprod(a, axis=axis, dtype=_scan_acc(plan.dtype))


_SCANS = {"cumsum": cumsum_impl, "cumprod": cumprod_impl}


# --------------------------------------------------------------------------
# logcumsumexp
# --------------------------------------------------------------------------

def _logcumsumexp_check(self):
    dt = self._impl.dtype
    if dt.category < 2:
        suffix = "cuda" if self._impl.device.type == "cuda" else "cpu"
        raise NotImplementedError(f'"logcumsumexp_out_{suffix}" not implemented for \'{dt.scalar_type_name}\'')


def _logcumsumexp_array(xp, a, axis, dtype):
    acc = _scan_acc(dtype)
    a = a.astype(acc)
    if dtype.is_complex:
        # ATen adds each term to the running value with its own complex log-add-exp, whose imaginary
        # part keeps the larger operand's branch; that choice depends on the order, so the scan runs
        # step by step along the dim (vectorised over the others)
        a = xp.moveaxis(a, axis, 0)
        out = xp.empty_like(a)
        r = out[0] = a[0]
        with _np.errstate(over="ignore", invalid="ignore"):
            for k in range(1, a.shape[0]):
                r = out[k] = _complex_log_add_exp(xp, r, a[k])
        return xp.moveaxis(out, 0, axis).astype(dtype.np)
    with _np.errstate(over="ignore", invalid="ignore"):
        return xp.logaddexp.accumulate(a, axis=axis).astype(dtype.np)


def _complex_log_add_exp(xp, x, y):
    swap = xp.real(x) < xp.real(y)
    lo = xp.where(swap, x, y)
    hi = xp.where(swap, y, x)
    same_inf = (lo == hi) & ~xp.isfinite(lo)
    return xp.where(same_inf, x, hi + xp.log1p(xp.exp(lo - hi)))


def _logcumsumexp_result(self, dim):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    a = impl._array
    if not shape or a.size == 0:
        return a.copy()
    xp = _np if impl.device.type == "cpu" else backend_for(impl.device).xp
    return _logcumsumexp_array(xp, a, d, impl.dtype)


def _logcumsumexp_cpu(self, dim):
    _logcumsumexp_check(self)
    impl = self._impl
    r = _logcumsumexp_result(self, dim)
    return wrap(r if r.ndim == 0 or r.flags.c_contiguous else r.copy(), impl.dtype, impl.device)


def _logcumsumexp_out_cpu(self, dim, out):
    _logcumsumexp_check(self)
    r = _logcumsumexp_result(self, dim)
    return write_out("_logcumsumexp", out, r, self._impl.dtype)


def logcumsumexp(self, dim):
    _logcumsumexp_check(self)
    impl = self._impl
    if impl.device.type == "meta":
        wrap_dim(dim, impl._array.ndim)
        return empty_tensor(tuple(impl._array.shape), impl.dtype, impl.device)
    return at._logcumsumexp(self, dim)


def logcumsumexp_out(self, dim, out):
    if out._impl.device is not self._impl.device:
        raise RuntimeError(f"Attempting to copy from device {self._impl.device} to device {out._impl.device}, but "
                           "cross-device copies are not allowed!")
    if out._impl.dtype is not self._impl.dtype:
        raise RuntimeError(f"expected scalar_type {self._impl.dtype.scalar_type_name} but found "
                           f"{out._impl.dtype.scalar_type_name}")
    _logcumsumexp_check(self)
    impl = self._impl
    if impl.device.type == "meta":
        wrap_dim(dim, impl._array.ndim)
        resize_out(out, tuple(impl._array.shape))
        return out
    return at._logcumsumexp_out(self, dim, out)
