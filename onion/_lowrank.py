"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``), written with onion
operators so autograd comes from the operators they call (Halko, Martinsson and Tropp's range finder
with subspace iterations).

The Gaussian test matrix is drawn with ``randn`` from onion's default generator, as PyTorch's
torch/_lowrank.py draws it, so after the same seed both libraries project onto the same subspace."""
from __future__ import annotations

from ._generated.python_functions import FUNCTIONS as _F, LINALG_FUNCTIONS as _LF
from .core import dtype as _dt
from .core.tensor import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _mH(t):
    return t.conj().transpose(-2, -1)


def _floating_dtype(A):
    """The test matrix's dtype: A's when it is float16/32/64 or complex, else float32 (PyTorch's rule)."""
    dt = A.dtype
    return dt if dt in (_dt.float16, _dt.float32, _dt.float64) or dt.is_complex else _dt.float32


def _gaussian(rows, cols, like):
    return _F["randn"](rows, cols, dtype=_floating_dtype(like), device=like.device)


def _approximate_basis(A, q, niter, M=None):
    """An orthonormal (..., m, q) basis whose span approximates A's range."""
    n = A.shape[-1]
    R = _gaussian(n, q, A)
    X = _F["matmul"](A, R)
    if M is not None:
        X = X - _F["matmul"](M, R)
    Q = _LF["linalg_qr"](X)[0]
    for _ in range(niter):
        X = _F["matmul"](_mH(A), Q)
        if M is not None:
            X = X - _F["matmul"](_mH(M), Q)
        Q = _LF["linalg_qr"](X)[0]
        X = _F["matmul"](A, Q)
        if M is not None:
            X = X - _F["matmul"](M, Q)
        Q = _LF["linalg_qr"](X)[0]
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """U, S, V with A - M ~ U diag(S) V^H, of rank ``q`` (PyTorch's default 6)."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape) if hasattr(M, "broadcast_to") else M
    if m < n:
        A = _mH(A)
        M = None if M is None else _mH(M)
    Q = _approximate_basis(A, q, niter, M)
    B = _F["matmul"](_mH(Q), A)
    if M is not None:
        B = B - _F["matmul"](_mH(Q), M)
    U, S, Vh = _F["_linalg_svd"](B, False)
    V = _mH(Vh)
    U = _F["matmul"](Q, U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """U, S, V of the (centered) data A: its principal directions are V's columns."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)


PUBLIC = {name: globals()[name] for name in __all__}
