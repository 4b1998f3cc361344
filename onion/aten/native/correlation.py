"""cov and corrcoef: PyTorch's CompositeImplicitAutograd bodies (Correlation.cpp), composed of other operators
so that autograd, Meta and every backend come from theirs."""
from __future__ import annotations

import warnings

from ...core import dtype as _dt
from ..at import at

_OBSERVATIONS_DIM = 1


def _is_true(t):
    """The value of a boolean 0-dim tensor (PyTorch's is_scalar_tensor_true, which Meta tensors cannot answer)."""
    if t.device.type == "meta":
        raise NotImplementedError("aten::equal: attempted to run this operator with Meta tensors, but there was no "
                                  "fake impl or Meta kernel registered.")
    return bool(t.item())


def _check_weights(name, w, num_observations, want, want_text):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.dim()} dimensions")
    if not want(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have {want_text} dtype but got {name} with "
                           f"{w.dtype.scalar_type_name} dtype")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {num_observations}")
    if num_observations != 0 and not _is_true(at.ge_Scalar(at.min(w), 0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _is_integral(d):
    return d.category == _dt.CATEGORY_INTEGRAL


def cov(self, correction=1, fweights=None, aweights=None):
    """Covariance of the rows (variables) over the columns (observations), weighted by fweights * aweights."""
    if self.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.dim()} dimensions")
    if self.dtype is _dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = at.view(self, [1, -1]) if self.dim() < 2 else self
    n = x.shape[_OBSERVATIONS_DIM]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, _is_integral, "integral")
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, lambda d: d.is_floating_point, "floating point")
        w = aweights if w is None else at.mul_Tensor(w, aweights)
    if w is None:
        w_sum = at.scalar_tensor(n, _dt.int64, None, x.device, None)
    else:
        w_sum = at.sum(w, None)
        if not _is_true(at.ne_Scalar(w_sum, 0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    weighted = x if w is None else at.mul_Tensor(x, w)
    avg = at.div_Tensor(at.sum_dim_IntList(weighted, [_OBSERVATIONS_DIM], False, None), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        spread = at.div_Tensor(at.sum(at.mul_Tensor(w, aweights), None), w_sum)
        norm_factor = at.sub_Tensor(w_sum, at.mul_Scalar(spread, correction), 1)
    else:
        norm_factor = at.sub_Scalar(w_sum, correction, 1)
    if _is_true(at.le_Scalar(norm_factor, 0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = at.zeros_like(norm_factor, None, None, None, None, None)
    centred = at.sub_Tensor(x, at.unsqueeze(avg, 1), 1)
    other = centred if w is None else at.mul_Tensor(centred, w)
    c = at.mm(centred, at.conj(at.t(other)))
    return at.squeeze(at.true_divide_Tensor(c, norm_factor))


def corrcoef(self):
    """Pearson correlation of the rows: cov scaled by the standard deviations, clipped to [-1, 1]."""
    if self.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.dim()} dimensions")
    c = at.cov(self, 1, None, None)
    if c.dim() == 0:
        return at.div_Tensor(c, c)          # nan for a variance of nan, inf or 0, else 1
    d = at.diagonal(c, 0, 0, 1)
    stddev = at.sqrt(at.real(d) if d.dtype.is_complex else d)
    c = at.div_Tensor(c, at.view(stddev, [-1, 1]))
    c = at.div_Tensor(c, at.view(stddev, [1, -1]))
    if c.dtype.is_complex:
        return at.complex(at.clip(at.real(c), -1, 1), at.clip(at.imag(c), -1, 1))
    return at.clip(c, -1, 1)
