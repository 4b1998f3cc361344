"""Backward helpers of the scans, statistics, norms and softmax (derivatives.yaml, h-reduce block).

Written with onion operators, so gradients are differentiable again; ``_flip`` is a small
autograd Function (a reversed copy whose gradient is the reversed gradient) for the reverse
scans PyTorch builds from ``flip``.
"""
from __future__ import annotations

import math

import numpy as _np

from ..aten.at import at
from .backward_common import reduced_dims as _dims, where as _where
from ..aten.tensor_new import wrap as _wrap
from .function import Function as _Function


class _Flip(_Function):
    @staticmethod
    def forward(ctx, t, dim):
        ctx.dim = dim
        impl = t._impl
        if impl.device.type == "meta":
            return at.clone(t, None)
        return _wrap(_np.ascontiguousarray(_np.flip(impl._array, dim)), impl.dtype, impl.device)

    @staticmethod
    def backward(ctx, g):
        return _Flip.apply(g, ctx.dim), None


def flip_dim(t, dim):
    """``t`` reversed along ``dim`` (a copy)."""
    nd = t.dim()
    if nd == 0:
        return t
    return _Flip.apply(t, dim % nd)


def to_dtype(g, dtype):
    """``grad.to(self.scalar_type())``: a complex gradient of a real input keeps its real part."""
    gd = g._impl.dtype
    if gd is dtype:
        return g
    if gd.is_complex and not dtype.is_complex:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return at._to_copy(g, dtype, None, None, None, False, None)
    return at._to_copy(g, dtype, None, None, None, False, None)


def reversed_cumsum(t, dim):
    """Sums from each position to the end of ``dim``."""
    return flip_dim(at.cumsum(flip_dim(t, dim), dim, None), dim)


def _size(t, dim):
    shape = t._impl._array.shape
    return shape[dim % len(shape)] if shape else 1


def cumsum_backward(grad, self_dtype, dim):
    grad = to_dtype(grad, self_dtype)
    if grad._impl._array.size <= 1 or _size(grad, dim) == 1:
        return grad
    return reversed_cumsum(grad, dim)


def cumprod_backward(grad, self, dim, result):
    grad = to_dtype(grad, self._impl.dtype)
    if self._impl._array.size <= 1 or _size(self, dim) == 1:
        return grad
    if self._impl.dtype.is_complex:
        result = result.conj()
    is_zero = self == 0
    nzeros = at.cumsum(is_zero, dim, None)
    before = nzeros == 0                       # positions before the first zero
    # before the first zero: sum_{j>=k} g_j out_j / x_k (out_j is 0 from the first zero on)
    safe = _where(before, self, 1.0)
    if self._impl.dtype.is_complex:
        safe = safe.conj()
    part = reversed_cumsum(grad * result, dim) / safe
    if not bool(is_zero.sum().item()):
        return part
    first = _and(is_zero, nzeros == 1)
    # at the first zero: sum_{j>=z} g_j prod_{i<=j, i!=z} x_i, the products with that zero taken as one
    others = at.cumprod(_where(first, 1.0, self), dim, None)
    if self._impl.dtype.is_complex:
        others = others.conj()
    at_zero = reversed_cumsum(grad * others, dim)
    return _where(before, part, _where(first, at_zero, 0.0))


def _and(a, b):
    return at.mul_Tensor(a, b)


def logcumsumexp_backward(grad, self, result, dim):
    if self._impl._array.ndim == 0 or self._impl._array.size == 0:
        return grad
    if self._impl.dtype.is_complex:
        # sum_{j>=k} g_j conj(exp(x_k - r_j)) = exp(conj(x_k) + log sum_{j>=k} exp(log g_j - conj(r_j)))
        return (self.conj() + _reverse_logcumsumexp(grad.log() - result.conj(), dim)).exp()
    # sum_{j>=k} g_j exp(x_k - r_j), with positive and negative gradients in log space (stable)
    try:
        lowest = float(_np.finfo(self._impl.dtype.np).min)
    except (TypeError, ValueError):
        lowest = -3.3895313892515355e38     # bfloat16's
    log_abs = grad.abs().log()
    pos = _where(grad > 0, log_abs, lowest)
    neg = _where(grad < 0, log_abs, lowest)
    rev = _reverse_logcumsumexp
    return (rev(pos - result, dim) + self).exp() - (rev(neg - result, dim) + self).exp()


def _reverse_logcumsumexp(t, dim):
    return flip_dim(at.logcumsumexp(flip_dim(t, dim), dim), dim)


# --------------------------------------------------------------------------
# var / std / nansum / logsumexp
# --------------------------------------------------------------------------

def _restore(t, dim, keepdim, ndim):
    """A reduced result with its reduced dims back (size 1), unless keepdim kept them."""
    if ndim == 0 or keepdim:
        return t
    for d in sorted(_dims(dim, ndim)):
        t = t.unsqueeze(d)
    return t


def _reduced_numel(shape, dim):
    n = 1
    for d in _dims(dim, len(shape)):
        n *= shape[d] if shape else 1
    return n


def var_backward(grad, self, dim, correction, keepdim):
    shape = tuple(self._impl._array.shape)
    c = 1 if correction is None else correction
    dof = _reduced_numel(shape, dim) - c
    grad = _restore(grad, dim, keepdim, len(shape))
    mean = at.mean_dim(self, None if not dim else dim, True, None) if shape else self
    scale = 2.0 / dof if dof > 0 else (math.inf if dof == 0 else -2.0 / -dof)
    return scale * grad * (self - mean)


def std_backward(result, grad, self, dim, correction, keepdim):
    grad_var = _where(result == 0, 0.0, grad / (result * 2))
    return var_backward(grad_var, self, dim, correction, keepdim)


def nansum_backward(grad, self, dim, keepdim):
    grad = to_dtype(grad, self._impl.dtype)
    shape = list(self._impl._array.shape)
    expanded = _restore(grad, dim, keepdim, len(shape)).expand(shape)
    return _where(self != self, 0.0, expanded)


def logsumexp_backward(grad, self, result, dim, keepdim):
    nd = self._impl._array.ndim
    grad = _restore(grad, dim, keepdim, nd)
    result = _restore(result, dim, keepdim, nd)
    w = (self - result).exp()
    if self._impl.dtype.is_complex:
        w = w.conj()
    return grad * w


# --------------------------------------------------------------------------
# softmax / log_softmax
# --------------------------------------------------------------------------

def softmax_backward(grad, output, dim, input_dtype):
    return at._softmax_backward_data(grad, output, dim, input_dtype)


def log_softmax_backward(grad, output, dim, input_dtype):
    return at._log_softmax_backward_data(grad, output, dim, input_dtype)


def _sum_keep(t, dim):
    if t._impl._array.ndim == 0:
        return t
    return at.sum_dim_IntList(t, [dim], True, None)


def softmax_double_backward(grad, grad_output, dim, output):
    """d/d(output) of output * (grad_output - sum(grad_output * output))."""
    return grad * grad_output - grad * _sum_keep(grad_output * output, dim) - grad_output * _sum_keep(grad * output, dim)


def log_softmax_double_backward_grad_output(grad, dim, output):
    return grad - _sum_keep(grad * output.exp(), dim)


def log_softmax_double_backward_output(grad, grad_output, dim, output):
    return -grad * output.exp() * _sum_keep(grad_output, dim)


# --------------------------------------------------------------------------
# norms, trace
# --------------------------------------------------------------------------

def _sgn(t):
    if t._impl.dtype.is_complex:
        a = t.abs()
        zero = a == 0
        return _where(zero, 0.0, t / _where(zero, 1.0, a))
    pos = at._to_copy(t > 0, t._impl.dtype, None, None, None, False, None)
    neg = at._to_copy(t < 0, t._impl.dtype, None, None, None, False, None)
    return pos - neg


def linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim):
    p = float(ord)
    nd = self._impl._array.ndim
    grad = _restore(grad, dim, keepdim, nd)
    result = _restore(result, dim, keepdim, nd)
    if p == 0:
        return None         # PyTorch's norm_backward gives an undefined gradient for the 0-"norm"
    if p == 1:
        return _sgn(self) * grad
    if p == 2:
        return self * _where(result == 0, 0.0, grad / _where(result == 0, 1.0, result))
    a = self.abs()
    if math.isinf(p):
        mask = at._to_copy(a == result, a._impl.dtype, None, None, None, False, None)
        count = at.sum_dim_IntList(mask, None if not dim else dim, True, None) if nd else mask
        return _sgn(self) * mask * grad / count
    if p < 1:
        scale = _where(a == 0, 0.0, a ** (p - 1))
        return _sgn(self) * scale * grad * _where(result == 0, 0.0, result ** (1 - p))
    scale = self * a ** (p - 2) if p >= 2 else _sgn(self) * a ** (p - 1)
    return scale * _where(result == 0, 0.0, grad / _where(result == 0, 1.0, result ** (p - 1)))


def trace_backward(grad, sizes):
    out = at.zeros(list(sizes), grad._impl.dtype, None, grad._impl.device, None)
    n = min(sizes)
    at.copy_(at.diagonal(out, 0, 0, 1), grad.expand([n]), False)
    return out


# --------------------------------------------------------------------------
# cross, renorm
# --------------------------------------------------------------------------

def cross_backward_self(grad, other, dim):
    return at.linalg_cross(other.conj(), grad, dim)


def cross_backward_other(grad, self, dim):
    return at.linalg_cross(grad, self.conj(), dim)


def renorm_backward(grad, self, p, dim, maxnorm):
    nd = self._impl._array.ndim
    d = dim % nd
    dims = [i for i in range(nd) if i != d]
    norm = at.linalg_vector_norm(self, p, dims, True, None)
    g = self.conj() * grad
    if g._impl.dtype.is_complex:
        g = to_dtype(g, g._impl.dtype.to_real())
    g = at.sum_dim_IntList(g, dims, True, None)
    nb = linalg_vector_norm_backward(g, self, p, norm, dims, True)
    invnorm = 1.0 / (norm + 1e-7)
    factor = invnorm * maxnorm
    return _where(norm > maxnorm, factor * (grad - invnorm * nb), grad)
