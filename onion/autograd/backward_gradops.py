"""Backward helpers whose operator sequence is PyTorch's, so traced and profiled backward passes match it:
tanh's and sigmoid's gradients through their own backward operators (and those operators' derivatives),
clamp's and where's through a 0-d ``scalar_tensor`` zero, as PyTorch's FunctionsManual builds them.
"""
from __future__ import annotations

from ..aten.at import at

__all__ = ["tanh_backward", "sigmoid_backward", "tanh_backward_output_grad", "sigmoid_backward_output_grad",
           "tanh_backward_jvp", "sigmoid_backward_jvp", "clamp_backward", "clamp_backward_min_max",
           "where_zero_other", "where_zero_self", "clamp_min_backward", "clamp_max_backward",
           "clamp_min_bound_backward", "clamp_max_bound_backward"]


def tanh_backward(grad, output):
    return at.tanh_backward(grad, output)


def sigmoid_backward(grad, output):
    return at.sigmoid_backward(grad, output)


def _minus_two_times(t):
    """``-2 * t`` as PyTorch's C++ writes it (a ``mul.Scalar``)."""
    return at.mul_Scalar(t.conj(), -2)


def tanh_backward_output_grad(grad, grad_output, output):
    """d(tanh_backward)/d(output): ``grad * conj(-2 * output * grad_output)``."""
    return grad.conj() * (_minus_two_times(output) * grad_output)


def sigmoid_backward_output_grad(grad, grad_output, output):
    """d(sigmoid_backward)/d(output): ``grad * grad_output * conj(1 - 2 * output)``."""
    factor = at.add_Scalar(_minus_two_times(output), 1, 1)
    return grad.conj() * grad_output * factor


def tanh_backward_jvp(grad_output_t, grad_output_p, output_t, output_p):
    return at.tanh_backward(grad_output_t, output_p) + output_t.conj() * (_minus_two_times(output_p) * grad_output_p)


def sigmoid_backward_jvp(grad_output_t, grad_output_p, output_t, output_p):
    factor = at.add_Scalar(_minus_two_times(output_p), 1, 1)
    return at.sigmoid_backward(grad_output_t, output_p) + output_t.conj() * grad_output_p * factor


def _zero_like(grad):
    """PyTorch's ``at::scalar_tensor(0., grad.options())``."""
    return at.scalar_tensor(0.0, grad._impl.dtype, "strided", grad._impl.device, None)


def clamp_backward(grad, self, lo, hi):
    """clamp's gradient for ``self``: ``grad`` where ``lo <= self <= hi`` (each bound optional), else 0."""
    if lo is None and hi is None:
        return grad
    zero = _zero_like(grad)
    if lo is not None and hi is not None:
        keep = self >= lo
        if hasattr(lo, "_impl") or hasattr(hi, "_impl"):
            keep = at.logical_and(keep, self <= hi)
        else:
            keep = at.logical_and_(keep, self <= hi)
    elif lo is not None:
        keep = self >= lo
    else:
        keep = self <= hi
    return at.where_self(keep, grad, zero)


def clamp_backward_min_max(grad, self, lo, hi, mask):
    """clamp.Tensor's gradients for its bounds: ``min`` where it bound ``self`` (and was below ``max``), ``max``
    where it bound ``self`` or undercut ``min`` (then the result is ``max``)."""
    gmin = gmax = None
    if grad is None:
        return gmin, gmax
    zero = _zero_like(grad)
    if lo is not None and hi is not None:
        if mask[1]:
            gmin = at.where_self(at.logical_and(self < lo, lo < hi), grad, zero)
        if mask[2]:
            gmax = at.where_self(at.logical_or(self > hi, hi < lo), grad, zero)
    elif lo is not None and mask[1]:
        gmin = at.where_self(self < lo, grad, zero)
    elif hi is not None and mask[2]:
        gmax = at.where_self(self > hi, grad, zero)
    return gmin, gmax


def clamp_min_backward(grad, self, lo):
    """clamp_min's gradient for ``self``: ``where(self >= min, grad, 0)``, the zero made first (as PyTorch's)."""
    zero = _zero_like(grad)
    return at.where_self(self >= lo, grad, zero)


def clamp_max_backward(grad, self, hi):
    zero = _zero_like(grad)
    return at.where_self(self <= hi, grad, zero)


def clamp_min_bound_backward(grad, self, lo):
    """clamp_min.Tensor's gradient for ``min``: where it bound ``self``."""
    zero = _zero_like(grad)
    return at.where_self(self < lo, grad, zero)


def clamp_max_bound_backward(grad, self, hi):
    zero = _zero_like(grad)
    return at.where_self(self > hi, grad, zero)


def where_zero_other(condition, grad):
    """``where(condition, grad, 0)``: PyTorch's where.ScalarOther."""
    return at.where_ScalarOther(condition, grad, 0)


def where_zero_self(condition, grad):
    """``where(condition, 0, grad)``: PyTorch's where.ScalarSelf."""
    return at.where_ScalarSelf(condition, 0, grad)
