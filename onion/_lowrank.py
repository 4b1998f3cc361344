"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``), written with onion
operators so autograd comes from the operators they call (Halko, Martinsson and Tropp's range finder
with subspace iterations).

The Gaussian test matrix comes from NumPy's generator (seeded by ``seed_lowrank``) until onion has
PyTorch's CPU generator: results agree with PyTorch's up to the randomness (an exact low-rank input
is recovered exactly either way)."""
from __future__ import annotations

import numpy as _np

from ._generated.python_functions import FUNCTIONS as _F, LINALG_FUNCTIONS as _LF
from .bindings.python_torch_functions import tensor as _tensor
from .core.tensor import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]

_RNG = [_np.random.default_rng(0)]


def seed_lowrank(seed: int) -> None:
    """Seed the generator of the random test matrices."""
    _RNG[0] = _np.random.default_rng(seed)


def _mH(t):
    return t.conj().transpose(-2, -1)


def _gaussian(rows, cols, like):
    dt = like.dtype
    real = _RNG[0].standard_normal((rows, cols))
    if dt.is_complex:
        real = real + 1j * _RNG[0].standard_normal((rows, cols))
    return _tensor(real, dtype=dt, device=like.device)


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
