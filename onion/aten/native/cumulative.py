"""Scans along one dim: cumsum, cumprod, logcumsumexp.

ATen's CPU scans keep a running value in the accumulate type (double for float,
float for float16/bfloat16, int64 for integers) and round each output; NumPy's
accumulate in that dtype and one cast do the same.  The result is contiguous.
"""
from __future__ import annotations

import numpy as _np

from ...backends import backend_for
from ...core import dtype as _dt
from ...core import loops
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


def _scan(xp, plan, self, dtype, scan):
    """The scan along the planned axis in PyTorch's accumulation dtype (a 0-dim input is its own scan)."""
    if plan.impl_error is not None:
        return None
    a = _scan_input(xp, plan, self, dtype)
    axis = plan.extra
    if axis is None:
        return a.astype(plan.dtype.np, copy=True)
    if (scan is _np.cumsum and axis == a.ndim - 1 and a.dtype.type in _LOOP_SCANS and xp is _np
            and type(a) is _np.ndarray and a.size >= _LOOP_MIN and loops.available()):
        # along the contiguous axis NumPy's accumulate adds one element at a time through its generic loop
        # (about 3x ATen's time); the compiled loop adds in the same order, in the same dtypes
        n = a.shape[-1]
        return loops.scan_add_rows(a.reshape(-1, n), _LOOP_SCANS[a.dtype.type]).reshape(a.shape)
    with _np.errstate(over="ignore", invalid="ignore"):
        r = scan(a, axis=axis, dtype=_scan_acc(plan.dtype))
    if scan is _np.cumsum and r.dtype.kind in "fc":
        r += 0.0        # ATen's running sum starts at +0, so it never yields -0.0 (NumPy's starts at x[0])
    return r


_LOOP_SCANS = {_np.float32: _np.float64, _np.float64: _np.float64}     # input dtype -> accumulate dtype
_LOOP_MIN = 256         # below this NumPy's call is as quick


def cumsum_impl(xp, plan, self, dim, dtype=None):
    return _scan(xp, plan, self, dtype, xp.cumsum)


def meta_cumprod(self, dim, dtype=None):
    return _scan_meta("cumprod", self, dim, dtype)


def cumprod_impl(xp, plan, self, dim, dtype=None):
    return _scan(xp, plan, self, dtype, xp.cumprod)


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


# --------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------

def _size(t, dim):
    return t._impl._array.shape[dim]


def _narrow(t, dim, start, length):
    return at.slice_Tensor(t, dim, start, start + length, 1)


def _concat(tensors, dim):
    """``tensors`` joined along ``dim`` (a fresh tensor filled through views, so autograd follows copy_)."""
    first = tensors[0]._impl
    from ...core.promotion import promote_types
    dt = first.dtype
    for t in tensors[1:]:
        dt = promote_types(dt, t._impl.dtype)
    shape = list(first._array.shape)
    shape[dim] = sum(_size(t, dim) for t in tensors)
    out = at.empty_memory_format(shape, dt, None, first.device, None, None)
    pos = 0
    for t in tensors:
        n = _size(t, dim)
        at.copy_(_narrow(out, dim, pos, n), t, False)
        pos += n
    return out


def _diff_checks(self, n, dim, prepend, append):
    nd = self._impl._array.ndim
    if nd < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is not None and other._impl._array.ndim != nd:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    return wrap_dim(dim, nd)


def _diff_input(self, n, dim, prepend, append):
    d = _diff_checks(self, n, dim, prepend, append)
    joined = [t for t in (prepend, self, append) if t is not None]
    for t in joined[1:]:        # checked in cat's order: the first tensor's device is the expected one
        if t._impl.device is not joined[0]._impl.device:
            raise RuntimeError(f"Tensor on device {t._impl.device} is not on the expected device "
                               f"{joined[0]._impl.device}!")
    if n and (prepend is not None or append is not None):
        self = _concat([t for t in (prepend, self, append) if t is not None], d)
    return self, d


def _diff_step(out, d, out_tensor=None):
    length = _size(out, d)
    hi, lo = _narrow(out, d, 1, length - 1), _narrow(out, d, 0, length - 1)
    if out._impl.dtype is _dt.bool:
        return at.ne_Tensor(hi, lo) if out_tensor is None else at.ne_Tensor_out(hi, lo, out_tensor)
    return at.sub_Tensor(hi, lo, 1) if out_tensor is None else at.sub_out(hi, lo, 1, out_tensor)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    if n == 0:
        _diff_input(self, n, dim, prepend, append)
        return at.clone(self, None)       # n=0 leaves the input as it is, prepend/append unused
    out, d = _diff_input(self, n, dim, prepend, append)
    for _ in range(n):
        if _size(out, d) == 0:
            break
        out = _diff_step(out, d)
    return out


def diff_out(self, n=1, dim=-1, prepend=None, append=None, out=None):
    if out._impl.device is not self._impl.device:
        raise RuntimeError(f"Attempting to copy from device {self._impl.device} to device {out._impl.device}, but "
                           "cross-device copies are not allowed!")
    r, d = _diff_input(self, n, dim, prepend, append)
    for k in range(n):
        if _size(r, d) == 0:
            break
        if k == n - 1 and _size(r, d) > 0:
            return _diff_step(r, d, out)      # the last difference written by sub.out, as PyTorch's
        r = _diff_step(r, d)
    from ..iterator import check_out_dtype
    check_out_dtype(r._impl.dtype, out._impl.dtype)
    resize_out(out, tuple(r._impl._array.shape))
    return at.copy_(out, r, False)


# --------------------------------------------------------------------------
# trapezoid / trapz / cumulative_trapezoid
# --------------------------------------------------------------------------

def _real_dx(name, dx):
    if isinstance(dx, complex):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _no_bool(name, *ts):
    if any(t._impl.dtype is _dt.bool for t in ts):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")


def _zeros_without(y, dim):
    shape = list(y._impl._array.shape)
    del shape[dim]
    return at.zeros(shape, y._impl.dtype, None, y._impl.device, None)


def _trapezoid_dx(y, dx, dim):
    # (sum of all samples - half of both ends) * dx
    ends = at.add_Tensor(at.select_int(y, dim, 0), at.select_int(y, dim, -1), 1)
    return at.mul_Scalar(at.sub_Tensor(at.sum_dim_IntList(y, [dim], False, None), at.mul_Scalar(ends, 0.5), 1), dx)


def _x_along(name, x, y, dim):
    """x shaped to broadcast against y along ``dim``."""
    if x._impl.device is not y._impl.device:
        from ..iterator import device_mismatch
        raise device_mismatch(y._impl.device, x._impl.device)
    ny = y._impl._array.ndim
    xs = tuple(x._impl._array.shape)
    if len(xs) == 1:
        if xs[0] != _size(y, dim):
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * ny
        shape[dim] = xs[0]
        return at.view(x, shape)
    if len(xs) < ny:
        return at.view(x, [1] * (ny - len(xs)) + list(xs))
    return x


def trapezoid_dx(y, dx=1, dim=-1):
    _real_dx("trapezoid", dx)
    d = wrap_dim(dim, y._impl._array.ndim)
    _no_bool("trapezoid", y)
    if _size(y, d) == 0:
        return _zeros_without(y, d)
    return _trapezoid_dx(y, dx, d)


def trapezoid_x(y, x, dim=-1):
    d = wrap_dim(dim, y._impl._array.ndim)
    if _size(y, d) == 0:
        return _zeros_without(y, d)
    _no_bool("trapezoid", y, x)
    xv = _x_along("trapezoid", x, y, d)
    length = _size(xv, d)
    dx = at.sub_Tensor(_narrow(xv, d, 1, length - 1), _narrow(xv, d, 0, length - 1), 1)
    n = _size(y, d)
    pair = at.add_Tensor(_narrow(y, d, 1, n - 1), _narrow(y, d, 0, n - 1), 1)
    return at.div_Scalar(at.sum_dim_IntList(at.mul_Tensor(dx, pair), [d], False, None), 2.0)


def trapz_x(y, x, dim=-1):
    return trapezoid_x(y, x, dim)


def trapz_dx(y, dx=1.0, dim=-1):
    return trapezoid_dx(y, dx, dim)


def cumulative_trapezoid_dx(y, dx=1, dim=-1):
    _real_dx("cumulative_trapezoid", dx)
    d = wrap_dim(dim, y._impl._array.ndim)
    _no_bool("cumulative_trapezoid", y)
    n = _size(y, d)
    if n == 0:
        return at.clone(y, None)
    pair = at.add_Tensor(_narrow(y, d, 1, n - 1), _narrow(y, d, 0, n - 1), 1)
    return at.cumsum(at.mul_Tensor(at.mul_Scalar(pair, 0.5), _scalar_like(dx, pair)), d, None)


def _scalar_like(v, like):
    from ..tensor_new import scalar_to_tensor
    return scalar_to_tensor(v, like._impl.device)


def cumulative_trapezoid_x(y, x, dim=-1):
    d = wrap_dim(dim, y._impl._array.ndim)
    _no_bool("cumulative_trapezoid", y, x)
    n = _size(y, d)
    if n == 0:
        return at.clone(y, None)
    xv = _x_along("cumulative_trapezoid", x, y, d)
    length = _size(xv, d)
    dx = at.sub_Tensor(_narrow(xv, d, 1, length - 1), _narrow(xv, d, 0, length - 1), 1)
    pair = at.add_Tensor(_narrow(y, d, 1, n - 1), _narrow(y, d, 0, n - 1), 1)
    return at.cumsum(at.div_Scalar(at.mul_Tensor(dx, pair), 2.0), d, None)
