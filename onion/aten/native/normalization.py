"""_batch_norm_with_update: training-mode batch norm that also updates the running statistics in place.

Written with other operators (one body for CPU and Meta, as PyTorch's meta registration mirrors its kernel):
the statistics of every channel over the batch and spatial dims, in float32 for float16/bfloat16 inputs (PyTorch's
opmath), the running mean/variance blended with ``momentum`` (the variance unbiased), the result in the input's
memory format.
"""
from __future__ import annotations

from ...core import dtype as _dt
from ..at import at
from .lapack import _write_outs


def _channel_view(t, ndim):
    return at.view(t, [1, -1] + [1] * (ndim - 2))


def _dense_layout(t):
    """Contiguous, or channels-last contiguous (the layouts PyTorch's fused CPU kernel takes)."""
    impl = t._impl
    if impl.is_contiguous():
        return True
    from ...core.geometry import strides_for_format
    fmt = {4: "channels_last", 5: "channels_last_3d"}.get(len(impl.sizes))
    return fmt is not None and tuple(impl.strides) == tuple(strides_for_format(impl.sizes, fmt))


def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    ndim = input.dim()
    if ndim < 2:
        raise RuntimeError(f"batch_norm: expected input to have at least 2 dimensions, but got {ndim}")
    dt = input._impl.dtype
    if not dt.is_floating_point:
        raise RuntimeError(f'"batch_norm_cpu" not implemented for \'{dt.scalar_type_name}\'')
    opmath = _dt.float32 if dt in (_dt.float16, _dt.bfloat16) else dt
    x = input if dt is opmath else at._to_copy(input, opmath, None, None, None, False, None)
    dims = [0] + list(range(2, ndim))
    mean = at.mean_dim(x, dims, False, None)
    var = at.var_correction(x, dims, 0, False)
    invstd = at.rsqrt(at.add_Scalar(var, eps, 1))
    stat_dt = running_mean._impl.dtype if running_mean is not None else dt
    save_mean = mean if stat_dt is opmath else at._to_copy(mean, stat_dt, None, None, None, False, None)
    save_invstd = invstd if stat_dt is opmath else at._to_copy(invstd, stat_dt, None, None, None, False, None)
    # per channel: y = x * alpha + beta, alpha = invstd * weight, beta = bias - mean * alpha, from the statistics
    # as saved (rounded to float16/bfloat16 parameters' dtype, as PyTorch's CPU kernel uses them)
    m, s = (mean, invstd) if stat_dt is opmath else (at._to_copy(save_mean, opmath, None, None, None, False, None),
                                                      at._to_copy(save_invstd, opmath, None, None, None, False, None))
    if dt is not opmath and not _dense_layout(input):
        # a strided input takes PyTorch's generic path: (x - mean) * invstd * weight + bias, operator by operator
        # in the input's dtype
        y = at.mul_Tensor(at.sub_Tensor(input, _channel_view(save_mean, ndim), 1), _channel_view(save_invstd, ndim))
        if weight is not None:
            y = at.mul_Tensor(y, _channel_view(weight, ndim))
        if bias is not None:
            y = at.add_Tensor(y, _channel_view(bias, ndim), 1)
    else:
        alpha = s if weight is None else at.mul_Tensor(s, weight)
        beta = at.neg(at.mul_Tensor(m, alpha))
        if bias is not None:
            beta = at.add_Tensor(bias, beta, 1)
        y = at.add_Tensor(at.mul_Tensor(x, _channel_view(alpha, ndim)), _channel_view(beta, ndim), 1)
    out = at.empty_like(input, None, None, None, None, "preserve_format")
    at.copy_(out, y, False)
    n = input.numel() // max(input.shape[1], 1)
    if running_mean is not None:
        blended = at.add_Tensor(at.mul_Scalar(running_mean, 1 - momentum), at.mul_Scalar(mean, momentum), 1)
        at.copy_(running_mean, blended, False)
    if running_var is not None:
        unbiased = at.mul_Scalar(var, n / (n - 1) if n > 1 else float("inf"))
        blended = at.add_Tensor(at.mul_Scalar(running_var, 1 - momentum), at.mul_Scalar(unbiased, momentum), 1)
        at.copy_(running_var, blended, False)
    reserve = at.empty_memory_format([0], _dt.uint8, None, input._impl.device, None, None)
    return out, save_mean, save_invstd, reserve


def _batch_norm_with_update_out(input, weight, bias, running_mean, running_var, momentum, eps, out=None,
                                save_mean=None, save_invstd=None, reserve=None):
    results = _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps)
    _write_outs((out, save_mean, save_invstd, reserve), results, "_batch_norm_with_update")
    return out, save_mean, save_invstd, reserve
