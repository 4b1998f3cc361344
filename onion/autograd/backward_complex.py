"""Backward helpers of the complex views and pairs (``derivatives.yaml``: real, imag, view_as_real,
view_as_complex, complex, polar, angle): PyTorch's formulas in FunctionsManual.cpp, written with onion ops
so that a gradient taken with ``create_graph=True`` is itself differentiable."""
from __future__ import annotations

from ..aten.at import at

__all__ = ["real_part_view", "imag_part_view", "view_as_real", "view_as_complex", "polar_backward",
           "angle_backward"]


def real_part_view(t):
    """``at::real``: the real part as a view (``complex``'s formulas name an argument ``real``)."""
    return at.real(t)


def imag_part_view(t):
    return at.imag(t)


def view_as_real(t):
    return at.view_as_real(t)


def view_as_complex(t):
    return at.view_as_complex(t)


def _sgn(z):
    """z / |z|, 0 where z is 0 (PyTorch's sgn of a complex tensor)."""
    a = at.abs(z)
    return at.where_self(at.eq_Scalar(a, 0), at.zeros_like(z, None, None, None, None, None), at.div_Tensor(z, a))


def polar_backward(grad, result):
    """(grad of abs, grad of angle) of ``polar``: Re(conj(grad) * sgn(result)), Re(conj(grad) * i * result)."""
    if grad is None:
        return None, None
    g = at.conj(grad)
    grad_abs = at.real(at.mul_Tensor(g, _sgn(result)))
    grad_angle = at.real(at.mul_Tensor(g, at.mul_Scalar(result, 1j)))
    return grad_abs, grad_angle


def angle_backward(grad, self):
    """Complex input: grad * self / |self|^2 * i (0 where self is 0); real input: zeros (angle is flat)."""
    if not self._impl.dtype.is_complex:
        return at.zeros_like(self, None, None, None, None, "preserve_format")
    scaled = at.mul_Scalar(at.div_Tensor(at.mul_Tensor(grad, self), at.pow_Tensor_Scalar(at.abs(self), 2)), 1j)
    return at.where_self(at.eq_Scalar(self, 0), at.zeros_like(scaled, None, None, None, None, None), scaled)
