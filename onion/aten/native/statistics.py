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


def var_mean_correction_out(self, dim=None, correction=None, keepdim=False, out0=None, out1=None):
    v, m = at.var_mean_correction(self, dim, correction, keepdim)
    return _copy_to_out(out0, v), _copy_to_out(out1, m)


def std_mean_correction_out(self, dim=None, correction=None, keepdim=False, out0=None, out1=None):
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
