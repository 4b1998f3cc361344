"""``torch.linalg.LinAlgError``: a RuntimeError that LAPACK-backed kernels raise for a matrix the
factorization or inversion cannot handle (not positive-definite, singular)."""
from __future__ import annotations


class LinAlgError(RuntimeError):
    """Raised by linear-algebra kernels when the input matrix does not allow the computation."""

    __module__ = "onion.linalg"
