"""Statistics and norms: var/std (and their means), nansum/nanmean, logsumexp, count_nonzero,
all/any, norms, dist, renorm, trace, softmax and friends, isclose/allclose, cross, cov/corrcoef.

Structured ones follow reductions.py: a meta function (dims, result shape and dtype,
PyTorch's checks) and one impl over ``xp``.  float32 statistics accumulate in float64 (ATen's
CPU Welford and norms accumulate in double or in float with care); float16/bfloat16 in float32.
"""
from __future__ import annotations

import math
import warnings

import numpy as _np

from ...core import dtype as _dt
from ...core.promotion import can_cast
from ..at import at
from ..structured import Plan
from ..view_geometry import wrap_dim
from .. import iterator as _it
from .reductions import _float_sum, _int_or_float_result, _reduce_dims, _reduced_shape

_int64 = _dt.int64
_float32 = _dt.float32
_WIDE = {_dt.float32: _np.float64, _dt.float16: _np.float32, _dt.bfloat16: _np.float32,
         _dt.complex64: _np.complex128}


def _wide(dtype):
    """The NumPy dtype a statistic of ``dtype`` is computed in."""
    return _WIDE.get(dtype, dtype.np)


def _axis_numel(shape, axis):
    n = 1
    for d in (range(len(shape)) if axis is None else axis):
        n *= shape[d]
    return n


def _cast_rule(plan, odt, xp):
    """``out=`` of another dtype: the result is cast to it when it casts safely (ATen's reductions copy into out)."""
    if not can_cast(plan.dtype, odt):
        raise RuntimeError(f"result type {plan.dtype.scalar_type_name} can't be cast to the desired output type "
                           f"{odt.scalar_type_name}")


# --------------------------------------------------------------------------
# var / std
# --------------------------------------------------------------------------

def _meta_std_var(name, self, dim, correction, keepdim):
    impl = self._impl
    dt = impl.dtype
    if dt.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(correction, complex):
        raise RuntimeError("value cannot be converted to type double without overflow")
    shape = impl._array.shape
    out_shape, axis = _reduced_shape(shape, _reduce_dims(dim, len(shape)), keepdim)
    return Plan(out_shape, dt.to_real(), impl.device, None, axis, _std_var_out_rule, None, (name, correction, dt))


def meta_var(self, dim=None, correction=None, keepdim=False):
    return _meta_std_var("var", self, dim, correction, keepdim)


def meta_std(self, dim=None, correction=None, keepdim=False):
    return _meta_std_var("std", self, dim, correction, keepdim)


def _std_var_out_rule(plan, odt, xp):
    if odt.is_complex and not plan.args[2].is_complex:
        raise NotImplementedError(f'"std_{"cuda" if plan.device.type == "cuda" else "cpu"}" not implemented for '
                                  f"'{odt.scalar_type_name}'")
    return _cast_rule(plan, odt, xp)


def _variance(xp, plan, self):
    name, correction, _ = plan.args
    impl = self._impl
    a = impl._array.astype(_wide(impl.dtype))
    axis = plan.extra
    n = a.size if axis is None else _axis_numel(a.shape, axis)
    c = 1 if correction is None else correction
    dof = n - c
    if dof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    with _np.errstate(invalid="ignore", divide="ignore"):
        mean = xp.sum(a, axis=axis, keepdims=True) / max(n, 1) if n else xp.full((1,) * a.ndim, xp.nan, a.dtype)
        d = a - mean
        sq = d.real * d.real + d.imag * d.imag if impl.dtype.is_complex else d * d
        return xp.sum(sq, axis=axis) / max(dof, 0)


def var_impl(xp, plan, self, dim=None, correction=None, keepdim=False):
    return _variance(xp, plan, self)


def std_impl(xp, plan, self, dim=None, correction=None, keepdim=False):
    return xp.sqrt(_variance(xp, plan, self))


def _unbiased(unbiased):
    return 1 if unbiased else 0


def var(self, unbiased=True):
    return at.var_correction(self, None, _unbiased(unbiased), False)


def var_dim(self, dim, unbiased=True, keepdim=False):
    return at.var_correction(self, dim, _unbiased(unbiased), keepdim)


def var_out(self, dim, unbiased=True, keepdim=False, out=None):
    return at.var_correction_out(self, dim, _unbiased(unbiased), keepdim, out)


def std(self, unbiased=True):
    return at.std_correction(self, None, _unbiased(unbiased), False)


def std_dim(self, dim, unbiased=True, keepdim=False):
    return at.std_correction(self, dim, _unbiased(unbiased), keepdim)


def std_out(self, dim, unbiased=True, keepdim=False, out=None):
    return at.std_correction_out(self, dim, _unbiased(unbiased), keepdim, out)


def var_mean_correction(self, dim=None, correction=None, keepdim=False):
    return at.var_correction(self, dim, correction, keepdim), at.mean_dim(self, dim, keepdim, None)


def std_mean_correction(self, dim=None, correction=None, keepdim=False):
    return at.std_correction(self, dim, correction, keepdim), at.mean_dim(self, dim, keepdim, None)


def var_mean(self, unbiased=True):
    return at.var_mean_correction(self, None, _unbiased(unbiased), False)


def var_mean_dim(self, dim, unbiased=True, keepdim=False):
    return at.var_mean_correction(self, dim, _unbiased(unbiased), keepdim)


def std_mean(self, unbiased=True):
    return at.std_mean_correction(self, None, _unbiased(unbiased), False)


def std_mean_dim(self, dim, unbiased=True, keepdim=False):
    return at.std_mean_correction(self, dim, _unbiased(unbiased), keepdim)


def _copy_to_out(out, r):
    from ..iterator import check_out_dtype, resize_out
    check_out_dtype(r._impl.dtype, out._impl.dtype)
    resize_out(out, tuple(r._impl._array.shape))
    at.copy_(out, r, False)
    return out


def _check_copy_devices(self, *outs):
    for out in outs:
        if out._impl.device is not self._impl.device:
            raise RuntimeError(f"Attempting to copy from device {self._impl.device} to device {out._impl.device}, but "
                               "cross-device copies are not allowed!")


def var_mean_correction_out(self, dim=None, correction=None, keepdim=False, out0=None, out1=None):
    _check_copy_devices(self, out0, out1)
    v, m = at.var_mean_correction(self, dim, correction, keepdim)
    return _copy_to_out(out0, v), _copy_to_out(out1, m)


def std_mean_correction_out(self, dim=None, correction=None, keepdim=False, out0=None, out1=None):
    _check_copy_devices(self, out0, out1)
    s, m = at.std_mean_correction(self, dim, correction, keepdim)
    return _copy_to_out(out0, s), _copy_to_out(out1, m)


# --------------------------------------------------------------------------
# nansum / nanmean
# --------------------------------------------------------------------------

def _nansum_out_rule(plan, odt, xp):
    self = plan.args[0]
    if (odt.category < 2 and self._impl.dtype.category >= 2) or odt.is_complex:
        raise NotImplementedError(f'"nansum_{"cuda" if plan.device.type == "cuda" else "cpu"}" not implemented for '
                                  f"'{odt.scalar_type_name}'")
    if xp is None:
        return None
    self, dim, keepdim = plan.args
    p = Plan(plan.shape, odt, plan.device, None, plan.extra)
    return nansum_impl(xp, p, self, dim, keepdim, odt)


def meta_nansum(self, dim=None, keepdim=False, dtype=None):
    impl = self._impl
    if impl.dtype.is_complex or (dtype is not None and dtype.is_complex):
        raise RuntimeError(f"nansum on {'CUDA' if impl.device.type == 'cuda' else 'CPU'} does not support "
                           "complex inputs")
    shape = impl._array.shape
    out_shape, axis = _reduced_shape(shape, _reduce_dims(dim, len(shape)), keepdim)
    rule = None if dtype is not None else _nansum_out_rule
    return Plan(out_shape, _int_or_float_result(impl.dtype, dtype), impl.device, None, axis, rule, None,
                (self, dim, keepdim))


def nansum_impl(xp, plan, self, dim=None, keepdim=False, dtype=None):
    impl = self._impl
    a = impl._array
    out = plan.dtype
    if out.category < 2:
        return xp.sum(a, axis=plan.extra, dtype=_int64.np)
    if a.dtype != out.np:
        a = a.astype(out.np)
    if impl.dtype.category >= 2:
        a = xp.where(xp.isnan(a), 0, a)
    acc = _float32.np if out in (_dt.float16, _dt.bfloat16) else out.np
    return _float_sum(xp, a, plan.extra, acc)


def nanmean(self, dim=None, keepdim=False, dtype=None):
    _nanmean_check(self, dtype)
    factor = at.sum_dim_IntList(at.eq_Tensor(self, self), dim, keepdim, None)
    return at.div_Tensor(at.nansum(self, dim, keepdim, dtype), factor)


def _nanmean_check(self, dtype):
    dt = self._impl.dtype
    if dt.category < 2:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{dt.scalar_type_name}")
    if dtype is not None and dtype.category < 2:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {dtype.scalar_type_name}")


def nanmean_out(self, dim=None, keepdim=False, dtype=None, out=None):
    _nanmean_check(self, dtype)
    factor = at.sum_dim_IntList(at.eq_Tensor(self, self), dim, keepdim, None)
    at.nansum_out(self, dim, keepdim, dtype, out)
    return at.div__Tensor(out, factor)


# --------------------------------------------------------------------------
# logsumexp
# --------------------------------------------------------------------------

def meta_logsumexp(self, dim, keepdim=False):
    impl = self._impl
    dt = impl.dtype
    out_dtype = dt if dt.category >= 2 else _dt.get_default_dtype()
    shape = impl._array.shape
    if shape and not keepdim and type(dim) is not int and len(dim) == 0:
        # ATen adds the kept-dims maxima to the reduced result in place, which cannot broadcast back
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * len(shape)}")
    out_shape, axis = _reduced_shape(shape, _reduce_dims(dim, len(shape)), keepdim)
    return Plan(out_shape, out_dtype, impl.device, None, axis, _logsumexp_out_rule, None)


def _logsumexp_out_rule(plan, odt, xp):
    if odt.category < 2:
        raise RuntimeError(f"logsumexp(): Expected floating point type for result tensor, but got: "
                           f"{odt.scalar_type_name}")


def logsumexp_impl(xp, plan, self, dim, keepdim=False):
    impl = self._impl
    out = plan.dtype
    a = impl._array.astype(_wide(out))
    axis = plan.extra
    if a.size == 0:
        with _np.errstate(divide="ignore"):
            return xp.log(xp.sum(xp.exp(a), axis=axis))
    m = xp.max(a.real if out.is_complex else a, axis=axis, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m)
    with _np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = xp.sum(xp.exp(a - m), axis=axis, keepdims=True)
        r = xp.log(s) + m
    return r.reshape(plan.shape)


# --------------------------------------------------------------------------
# count_nonzero
# --------------------------------------------------------------------------

def meta_count_nonzero(self, dim):
    impl = self._impl
    shape = impl._array.shape
    out_shape, axis = _reduced_shape(shape, _reduce_dims(list(dim), len(shape)), False)
    return Plan(out_shape, _int64, impl.device, None, axis)


def count_nonzero_impl(xp, plan, self, dim):
    _it.refuse_barebones_unsigned("nonzero_count_cpu", self._impl)
    return xp.count_nonzero(self._impl._array, axis=plan.extra)


def count_nonzero(self, dim=None):
    return at.count_nonzero_dim_IntList(self, [] if dim is None else [dim])


def count_nonzero_out(self, dim=None, out=None):
    return at.count_nonzero_dim_IntList_out(self, [] if dim is None else [dim], out)


# --------------------------------------------------------------------------
# all / any
# --------------------------------------------------------------------------

def _meta_all_any(name, self, dim, keepdim, identity_on_empty_dims):
    impl = self._impl
    shape = impl._array.shape
    out_dtype = _dt.uint8 if impl.dtype is _dt.uint8 else _dt.bool
    if identity_on_empty_dims and dim is not None and type(dim) is not int and len(dim) == 0:
        return Plan(tuple(shape), out_dtype, impl.device, None, (), _all_any_out_rule, None, name)
    if type(dim) is int:
        dims = (wrap_dim(dim, len(shape)),)
    else:
        dims = _reduce_dims(dim, len(shape))
    out_shape, axis = _reduced_shape(shape, dims, keepdim)
    return Plan(out_shape, out_dtype, impl.device, None, axis, _all_any_out_rule, None, name)


def _all_any_out_rule(plan, odt, xp):
    if odt is not _dt.bool and odt is not _dt.uint8:
        raise RuntimeError(f"{plan.args} only supports bool tensor for result, got: {odt.scalar_type_name}")


def meta_all(self, dim=None, keepdim=False):
    return _meta_all_any("all", self, dim, keepdim, True)


def meta_all_out(self, dim, keepdim=False):
    return _meta_all_any("all", self, dim, keepdim, False)


def meta_all_all_out(self):
    return _meta_all_any("all", self, None, False, False)


def meta_any(self, dim=None, keepdim=False):
    return _meta_all_any("any", self, dim, keepdim, True)


def meta_any_out(self, dim, keepdim=False):
    return _meta_all_any("any", self, dim, keepdim, False)


def meta_any_all_out(self):
    return _meta_all_any("any", self, None, False, False)


def _truth(a):
    return a if a.dtype == _np.bool_ else a != 0


def all_impl(xp, plan, self, dim=None, keepdim=False):
    a = _truth(self._impl._array)
    if plan.extra == ():
        return a.copy()
    return xp.all(a, axis=plan.extra)


def any_impl(xp, plan, self, dim=None, keepdim=False):
    a = _truth(self._impl._array)
    if plan.extra == ():
        return a.copy()
    return xp.any(a, axis=plan.extra)


def all_all_impl(xp, plan, self):
    return xp.all(_truth(self._impl._array))


def any_all_impl(xp, plan, self):
    return xp.any(_truth(self._impl._array))


_ = math


# --------------------------------------------------------------------------
# softmax / log_softmax
# --------------------------------------------------------------------------

def _meta_softmax_like(name, self, dim, half_to_float):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    err = None
    if impl.dtype.category != 2 and impl._array.size:
        last = not shape or d == len(shape) - 1
        err = NotImplementedError(f'"{name}_{"lastdim_" if last else ""}kernel_impl" not implemented for '
                                  f"'{impl.dtype.scalar_type_name}'")
    return Plan(shape, impl.dtype, impl.device, None, d if shape else None, None, err)


def meta__softmax(self, dim, half_to_float):
    return _meta_softmax_like("softmax", self, dim, half_to_float)


def meta__log_softmax(self, dim, half_to_float):
    return _meta_softmax_like("log_softmax", self, dim, half_to_float)


def _softmax_array(xp, plan, self, log):
    if plan.impl_error is not None:
        return None
    impl = self._impl
    a = impl._array.astype(_wide(impl.dtype))
    axis = plan.extra
    if a.size == 0:
        return a
    # NumPy's ufuncs reduced directly (the same loops as np.max / np.sum, without their Python wrappers, which
    # cost as much again on a small tensor)
    amax, asum = (_np.maximum.reduce, _np.add.reduce) if xp is _np else (xp.max, xp.sum)
    with _np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = amax(a, axis=axis, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0) if not log else m
        e = xp.exp(a - m)
        s = asum(e, axis=axis, keepdims=True)
        if log:
            if (impl.dtype is _dt.float16 or impl.dtype is _dt.bfloat16) and axis == a.ndim - 1:
                # ATen's last-dim kernel keeps the row's sum and its log in the input's dtype
                lowp = impl.dtype.np
                return (a - m) - xp.log(s.astype(lowp).astype(a.dtype)).astype(lowp).astype(a.dtype)
            return a - m - xp.log(s)
        return e / s


def _softmax_impl(xp, plan, self, dim, half_to_float):
    return _softmax_array(xp, plan, self, False)


def _log_softmax_impl(xp, plan, self, dim, half_to_float):
    return _softmax_array(xp, plan, self, True)


def _meta_softmax_backward(name, grad_output, output, dim, input_dtype):
    from ..iterator import check_devices
    pair = (grad_output._impl, output._impl) if name == "softmax" else (output._impl, grad_output._impl)
    device = check_devices(name, pair)
    gi = grad_output._impl
    shape = tuple(gi._array.shape)
    d = wrap_dim(dim, len(shape))
    if gi.dtype is not input_dtype:
        if not (gi.dtype is _float32 and input_dtype is _dt.float16):
            raise RuntimeError(f"expected scalar type {gi.dtype.scalar_type_name} but found "
                               f"{input_dtype.scalar_type_name}")
    return Plan(shape, input_dtype, device, None, d if shape else None)


def meta__softmax_backward_data(grad_output, output, dim, input_dtype):
    """PyTorch's CPU rules: the result has grad's dtype (Half for a Float grad of a Half input, which the CPU
    kernel then refuses); the kernel takes floating grads only, with output and result of grad's dtype."""
    from ..iterator import check_devices
    gi, oi = grad_output._impl, output._impl
    device = check_devices("softmax", (gi, oi))
    shape = tuple(gi._array.shape)
    if device.type == "meta":
        # PyTorch's Meta registration: the result of input_dtype and grad's shape, no size or dtype checks
        return Plan(shape, input_dtype, device, None, wrap_dim(dim, len(shape)) if shape else None)
    if shape != tuple(oi._array.shape):
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {list(shape)} does not equal {list(oi._array.shape)} (while checking "
                           "arguments for softmax_backward)")
    d = wrap_dim(dim, len(shape))
    dtype = _dt.float16 if gi.dtype is _float32 and input_dtype is _dt.float16 else gi.dtype
    err = None
    if 0 not in shape:
        if not gi.dtype.is_floating_point:
            kernel = "softmax_backward_lastdim_kernel_impl" if d == max(len(shape) - 1, 0) else \
                "softmax_backward_kernel_impl"
            err = NotImplementedError(f'"{kernel}" not implemented for \'{gi.dtype.scalar_type_name}\'')
        else:
            found = dtype if dtype is not gi.dtype else oi.dtype
            if found is not gi.dtype:
                err = RuntimeError(f"expected scalar type {gi.dtype.scalar_type_name} but found "
                                   f"{found.scalar_type_name}")
    return Plan(shape, dtype, device, None, d if shape else None, None, err)


def meta__log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return _meta_softmax_backward("log_softmax", grad_output, output, dim, input_dtype)


def _softmax_backward_impl(xp, plan, grad_output, output, dim, input_dtype):
    if plan.impl_error is not None:
        return None
    g = grad_output._impl._array.astype(_wide(plan.dtype))
    o = output._impl._array.astype(_wide(plan.dtype))
    axis = plan.extra
    return o * (g - xp.sum(g * o, axis=axis, keepdims=True))


def _log_softmax_backward_impl(xp, plan, grad_output, output, dim, input_dtype):
    g = grad_output._impl._array.astype(_wide(plan.dtype))
    o = output._impl._array.astype(_wide(plan.dtype))
    axis = plan.extra
    with _np.errstate(over="ignore", invalid="ignore"):
        return g - xp.exp(o) * xp.sum(g, axis=axis, keepdims=True)


def _to(self, dtype):
    if dtype is None or self._impl.dtype is dtype:
        return self
    return at._to_copy(self, dtype, None, None, None, False, None)


def softmax_int(self, dim, dtype=None):
    return at._softmax(_to(self, dtype), dim, False)


def softmax_int_out(self, dim, dtype=None, out=None):
    return at._softmax_out(_to(self, dtype), dim, False, out)


def log_softmax_int(self, dim, dtype=None):
    return at._log_softmax(_to(self, dtype), dim, False)


def log_softmax_int_out(self, dim, dtype=None, out=None):
    return at._log_softmax_out(_to(self, dtype), dim, False, out)


def _safe_softmax(self, dim, dtype=None):
    out = at._softmax(_to(self, dtype), dim, False)
    masked = at.eq_Scalar(self, float("-inf"))
    rows = at.all_dim(masked, dim, True)
    return at.where_self(rows, at.zeros_like(out, None, None, None, None, None), out)


# --------------------------------------------------------------------------
# vector norms, norm, dist
# --------------------------------------------------------------------------

def _ord_text(ord):
    f = float(ord)
    if f == math.inf:
        return "inf"
    if f == -math.inf:
        return "-inf"
    return str(int(f)) if f == int(f) else str(f)


def meta_linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    impl = self._impl
    dt = impl.dtype
    if dt.category < 2:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{dt.scalar_type_name}")
    if dtype is not None:
        if dtype.category < 2:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{dtype.scalar_type_name}")
        if dtype.is_complex and not dt.is_complex:
            raise RuntimeError(f"linalg.vector_norm: dtype should be real for real inputs, but got "
                               f"{dtype.scalar_type_name}")
        if not can_cast(dt, dtype) or (dt.category == dtype.category and dt.itemsize > dtype.itemsize):
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({dt.scalar_type_name}) should be "
                               f"convertible without narrowing to the specified dtype ({dtype.scalar_type_name})")
    if isinstance(ord, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    shape = tuple(impl._array.shape)
    dims = _reduce_dims(dim, len(shape))
    p = float(ord)
    if p < 0 or p == math.inf:
        if dims is None and impl._array.size == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in dims or ():
            if shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm on the dimension "
                                   f"{d}because this dimension is empty and the operation does not have an identity")
    out_shape, axis = _reduced_shape(shape, dims, keepdim)
    out_dtype = (dtype or dt).to_real()
    return Plan(out_shape, out_dtype, impl.device, None, axis, None, None, (p, dtype))


def linalg_vector_norm_impl(xp, plan, self, ord=2, dim=None, keepdim=False, dtype=None):
    p, dtype = plan.args
    impl = self._impl
    a = impl._array
    if dtype is not None and dtype is not impl.dtype:
        a = a.astype(dtype.np)
    a = xp.abs(a.astype(_wide((dtype or impl.dtype))))
    axis = plan.extra
    with _np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if p == math.inf:
            return xp.max(a, axis=axis) if a.size else xp.zeros(plan.shape)
        if p == -math.inf:
            return xp.min(a, axis=axis) if a.size else xp.zeros(plan.shape)
        if p == 0:
            return xp.sum(a != 0, axis=axis).astype(a.dtype)
        if p == 1:
            return xp.sum(a, axis=axis)
        if p == 2:
            return xp.sqrt(xp.sum(a * a, axis=axis))
        return xp.power(xp.sum(xp.power(a, p), axis=axis), 1.0 / p)


def _norm_check(self):
    dt = self._impl.dtype
    if dt.category < 2:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{dt.scalar_type_name} instead.")


def _p(p):
    return 2 if p is None else p


def norm_Scalar(self, p=2):
    _norm_check(self)
    return at.linalg_vector_norm(self, _p(p), None, False, None)


def norm_ScalarOpt_dtype(self, p, dtype):
    _norm_check(self)
    return at.linalg_vector_norm(self, _p(p), None, False, dtype)


def norm_ScalarOpt_dim(self, p, dim, keepdim=False):
    _norm_check(self)
    return at.linalg_vector_norm(self, _p(p), dim, keepdim, None)


def norm_ScalarOpt_dim_dtype(self, p, dim, keepdim, dtype):
    _norm_check(self)
    return at.linalg_vector_norm(self, _p(p), dim, keepdim, dtype)


def norm_out(self, p, dim, keepdim=False, out=None):
    _norm_check(self)
    return at.linalg_vector_norm_out(self, _p(p), dim, keepdim, None, out)


def norm_dtype_out(self, p, dim, keepdim, dtype, out=None):
    _norm_check(self)
    return at.linalg_vector_norm_out(self, _p(p), dim, keepdim, dtype, out)


def norm_Scalar_out(self, p=2, out=None):
    _norm_check(self)
    return at.linalg_vector_norm_out(self, _p(p), None, False, None, out)


def norm_ScalarOpt_dtype_out(self, p, dtype, out=None):
    _norm_check(self)
    return at.linalg_vector_norm_out(self, _p(p), None, False, dtype, out)


def dist(self, other, p=2):
    return at.norm_Scalar(at.sub_Tensor(self, other, 1), p)


def dist_out(self, other, p=2, out=None):
    return at.norm_Scalar_out(at.sub_Tensor(self, other, 1), p, out)


# --------------------------------------------------------------------------
# trace
# --------------------------------------------------------------------------

def trace(self):
    _it.refuse_barebones_unsigned("trace", self._impl)
    impl = self._impl
    if impl._array.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {impl._array.ndim}")
    if impl.dtype is _dt.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return at.sum(at.diagonal(self, 0, 0, 1), None)


def trace_out(self, out):
    _check_copy_devices(self, out)
    r = trace(self)
    return _copy_to_out(out, r)


# --------------------------------------------------------------------------
# isclose / allclose
# --------------------------------------------------------------------------

def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = self._impl, other._impl
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype.scalar_type_name} did not match {b.dtype.scalar_type_name}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_num(rtol)}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_num(atol)}")
    close = at.eq_Tensor(self, other)
    if a.dtype is _dt.bool or (rtol == 0 and atol == 0):
        if equal_nan and a.dtype.category >= 2:
            close = _or(close, _and(at.ne_Tensor(self, self), at.ne_Tensor(other, other)))
        return close
    if equal_nan and a.dtype.category >= 2:
        close = _or(close, _and(at.ne_Tensor(self, self), at.ne_Tensor(other, other)))
    if a.dtype.category < 2:
        # integers compare in the default float dtype, as ATen's (other * rtol) promotes them
        fdt = _dt.get_default_dtype()
        self, other = _to(self, fdt), _to(other, fdt)
    allowed = at.add_Scalar(at.abs(at.mul_Scalar(other, rtol)), atol, 1)
    actual = at.abs(at.sub_Tensor(self, other, 1))
    finite = at.ne_Scalar(at.abs(actual), float("inf"))
    finite = _and(finite, at.eq_Tensor(actual, actual))
    return _or(close, _and(finite, at.le_Tensor(actual, allowed)))


def _num(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def _and(a, b):
    return at.mul_Tensor(a, b)


def _or(a, b):
    return at.add_Tensor(a, b, 1)       # bool + bool is logical or


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(at.all(at.isclose(self, other, rtol, atol, equal_nan)).item())


# --------------------------------------------------------------------------
# cross
# --------------------------------------------------------------------------

def meta_linalg_cross(self, other, dim=-1):
    a, b = self._impl, other._impl
    sa, sb = tuple(a._array.shape), tuple(b._array.shape)
    if a.dtype is _dt.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if len(sa) != len(sb):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, len(sa))
    if sa[d] != 3 or sb[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {sa[d]} and {sb[d]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.scalar_type_name} but found {b.dtype.scalar_type_name}")
    from ..view_geometry import broadcast_shapes
    shape = tuple(broadcast_shapes(sa, sb))
    return Plan(shape, a.dtype, a.device, None, d)


def linalg_cross_impl(xp, plan, self, other, dim=-1):
    _it.refuse_barebones_unsigned("cross", self._impl)
    a, b = self._impl._array, other._impl._array
    d = plan.extra
    a0, a1, a2 = (xp.take(a, [i], axis=d) for i in range(3))
    b0, b1, b2 = (xp.take(b, [i], axis=d) for i in range(3))
    return xp.concatenate([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=d)


def _cross_dim(self, other, dim):
    if dim is not None:
        return dim
    shape = tuple(self._impl._array.shape)
    for i, s in enumerate(shape):
        if s == 3:
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                          "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
                          "agree with that of linalg.cross in a future release.", UserWarning, stacklevel=4)
            return i
    raise RuntimeError("no dimension of size 3 in input")


def cross(self, other, dim=None):
    return at.linalg_cross(self, other, _cross_dim(self, other, dim))


def cross_out(self, other, dim=None, out=None):
    return at.linalg_cross_out(self, other, _cross_dim(self, other, dim), out)


# --------------------------------------------------------------------------
# renorm
# --------------------------------------------------------------------------

def meta_renorm(self, p, dim, maxnorm):
    impl = self._impl
    shape = tuple(impl._array.shape)
    if isinstance(p, complex) or isinstance(maxnorm, complex):
        raise RuntimeError("value cannot be converted to type double without overflow")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_num(float(maxnorm))}")
    if len(shape) <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {len(shape)} dimensions")
    d = wrap_dim(dim, len(shape))
    err = None
    if impl.dtype.category < 2 and impl._array.size:
        err = NotImplementedError(f"\"renorm_out\" not implemented for '{impl.dtype.scalar_type_name}'")
    return Plan(shape, impl.dtype, impl.device, None, d, None, err)


def renorm_impl(xp, plan, self, p, dim, maxnorm):
    if plan.impl_error is not None:
        return None
    impl = self._impl
    a = impl._array
    acc = _wide(impl.dtype)
    w = xp.abs(a.astype(acc))
    axes = tuple(i for i in range(a.ndim) if i != plan.extra)
    p = float(p)
    with _np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if p == math.inf:
            norm = xp.max(w, axis=axes, keepdims=True) if a.size else xp.zeros((1,) * a.ndim)
        elif p == 1:
            norm = xp.sum(w, axis=axes, keepdims=True)
        elif p == 2:
            norm = xp.sqrt(xp.sum(w * w, axis=axes, keepdims=True))
        else:
            norm = xp.power(xp.sum(xp.power(w, p), axis=axes, keepdims=True), 1.0 / p)
        factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
        return a * factor.astype(a.real.dtype if impl.dtype.is_complex else a.dtype)
