"""Backward helpers of the random sampling operators (derivatives.yaml, '# ---- rng')."""
from __future__ import annotations

from ..aten.at import at


def zeros_sized_like_grad(shape, grad):
    """Zeros of an input's shape with the gradient's dtype and device (at::zeros(sizes, grad.options()))."""
    return at.zeros(tuple(shape), grad._impl.dtype, None, grad._impl.device, None)


def dropout_mask_backward(grad, mask, scale):
    """native_dropout_double_backward: the gradient through grad_output is the forward's mask-and-scale."""
    return at.mul_Tensor(grad, at.mul_Scalar(at._to_copy(mask, grad._impl.dtype, None, None, None, False, None),
                                             scale))


def dropout_train_scale(p):
    """1 / (1 - p), and 0 for p == 1 (everything dropped)."""
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def dropout_scale(p, train):
    """The scale native_dropout's derivative uses: PyTorch's formula takes 1 unless train is given and true
    (an absent ``train`` scales by 1 there although the forward pass drops)."""
    return dropout_train_scale(p) if train is not None and train else 1.0


def dropout_backward(grad, mask, scale):
    return at.native_dropout_backward(grad, mask, scale)
