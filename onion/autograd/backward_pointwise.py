"""Backward helpers of the pointwise operators (issue 8, item 2), for derivatives.yaml.

Written with onion operators, so the gradients they build are differentiable again.
"""
from __future__ import annotations

import math
import warnings

from ..aten.at import at
from .backward_common import where as _where

__all__ = [
    "acosh_backward",
    "atan2_backward",
    "copysign_tensor_self_backward",
    "deg2rad_backward",
    "fmax_fmin_masks",
    "i1_backward",
    "lerp_scalar_self_backward",
    "log1p_backward",
    "logit_backward",
    "masked_zero",
    "mvlgamma_backward",
    "rad2deg_backward",
    "sgn_backward",
    "sinc_backward",
    "xlogy_scalar_other_backward",
]


def _real_part(g):
    """The real part of a complex tensor as a real one, differentiably (a cast, its warning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return at._to_copy(g, g._impl.dtype.to_real(), None, None, None, False, None)


def masked_zero(grad, cond):
    """``grad`` with 0 where ``cond`` holds (PyTorch's ``grad.masked_fill(cond, 0)``)."""
    return _where(cond, 0.0, grad)


def atan2_backward(grad, self, other, mask):
    recip = (self * self + other * other).reciprocal()
    return (grad * other * recip if mask[0] else None,
            grad * -self * recip if mask[1] else None)


def copysign_tensor_self_backward(grad, self, result):
    ratio = _where(self == 0, 0.0, result / self)
    return grad * ratio


def deg2rad_backward(grad):
    return grad * (math.pi / 180.0)


def rad2deg_backward(grad):
    return grad * (180.0 / math.pi)


def log1p_backward(grad, self):
    return grad / (self + 1).conj()


def acosh_backward(grad, self):
    if self.is_complex():
        return grad * ((self + 1).rsqrt() * (self - 1).rsqrt()).conj()
    return grad * (self * self - 1).rsqrt()


def sinc_backward(grad, self):
    pi_x = self * math.pi
    pi_x2 = self * self * math.pi
    out = grad * ((pi_x * pi_x.cos() - pi_x.sin()) / pi_x2).conj()
    return _where(pi_x2 == 0, 0.0, out)


def sgn_backward(self, grad, result):
    """Real: zero.  Complex: the part of ``grad`` orthogonal to sgn(z), over |z| (0 at 0)."""
    if not self.is_complex():
        return at.zeros_like(grad, None, None, None, None, None)
    a = self.abs()
    zero = a == 0
    out = (grad - result * _real_part(result.conj() * grad)) / _where(zero, 1.0, a)
    return _where(zero, 0.0, out)


def mvlgamma_backward(grad, self, p):
    total = None
    for j in range(p):      # p terms of the function's sum, not a loop over elements
        term = (self - j / 2).digamma()
        total = term if total is None else total + term
    return grad * total


def logit_backward(grad, self, eps):
    if grad._impl._array.size == 0:     # PyTorch's kernel lays out the empty result as grad (where's differs)
        return at.empty_like(grad)
    if eps is None:
        inside = at.logical_and(self >= 0, self <= 1)
        return _where(inside, grad / (self * (1 - self)), float("nan"))
    outside = at.logical_or(self < eps, self > 1 - eps)
    return _where(outside, 0.0, grad / (self * (1 - self)))


def fmax_fmin_masks(self, other, ge):
    """Where fmax (``ge``) / fmin picks ``self``: self beats other, or other is NaN."""
    wins = (self >= other) if ge else (self <= other)
    return at.logical_or(wins, at.isnan(other))


def xlogy_scalar_other_backward(grad, self, other):
    g = at.xlogy_Scalar_Other(grad, other)
    if (other.real if isinstance(other, complex) else other) > 0:
        return g
    return masked_zero(g, self == 0)


def i1_backward(grad, self, result):
    """d/dx I1(x) = I0(x) - I1(x)/x, which is 1/2 at 0."""
    zero = self == 0
    d = self.i0() - result / _where(zero, 1.0, self)
    return grad * _where(zero, 0.5, d)


def lerp_scalar_self_backward(grad, weight):
    if isinstance(weight, complex):
        return grad * (1 - weight.conjugate())
    return grad * (1 - float(weight))
