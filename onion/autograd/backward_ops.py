"""Backward formulas of ormqr, stft and istft (derivatives.yaml, ops block).

Written with onion operators, so a gradient built with ``create_graph=True`` is itself differentiable.
"""
from __future__ import annotations

from ..aten.at import at
from ..aten.native.lapack import _fstrides
from .backward_linalg import _colmajor, _diag, _eye, diag_embed, mH, tril, triu

__all__ = ["ormqr_backward"]


def _mm(a, b):
    return at.matmul(a, b)


def _sub(a, b):
    return at.sub_Tensor(a, b, 1)


def _add(a, b):
    return at.add_Tensor(a, b, 1)


def ormqr_backward(grad, result, self, input2, input3, left, transpose, mask):
    """ormqr multiplies by Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H, whose compact WY form is
    Q = I - V T V^H with T = (I + diag(tau) striu(V^H V))^-1 diag(tau) (unit upper triangular to invert, so a
    zero tau needs no care); the gradients are those of that product, with V the unit lower trapezoid of
    self's first k columns (the rest of self is not read, so its gradient is zero)."""
    if grad is None:
        return None, None, None
    A, tau, C = self, input2, input3
    a_shape = tuple(A._impl._array.shape)
    if 0 in a_shape or 0 in tuple(tau._impl._array.shape):
        mask = (False, False, mask[2])          # no reflector touches C: self and tau get no gradient
    m, k = a_shape[-2], tuple(tau._impl._array.shape)[-1]
    Ak = at.slice_Tensor(A, -1, 0, k, 1)
    V = _add(tril(Ak, -1), at.slice_Tensor(_eye(m, A), -1, 0, k, 1))
    Dm = diag_embed(tau, A)
    S = triu(_mm(mH(V), V), 1)
    U = _add(_eye(k, A), _mm(Dm, S))
    T = at.triangular_solve(Dm, U, True, False, True)[0]
    Q = _sub(_eye(m, A), _mm(_mm(V, T), mH(V)))
    G = grad
    gC = None
    if mask[2] and 0 in tuple(C._impl._array.shape):     # nothing to compute; column-major, as LAPACK's result
        c_shape = tuple(C._impl._array.shape)
        gC = at.new_empty_strided(C, list(c_shape), list(_fstrides(c_shape)), None, None, None, None)
    elif mask[2]:
        if left:
            gC = _mm(Q, G) if transpose else _mm(mH(Q), G)
        else:
            gC = _mm(G, Q) if transpose else _mm(G, mH(Q))
        gC = _colmajor(gC)
    if not (mask[0] or mask[1]):
        return None, None, gC
    if left:
        gQ = _mm(C, mH(G)) if transpose else _mm(G, mH(C))
    else:
        gQ = _mm(mH(G), C) if transpose else _mm(mH(C), G)
    W = _mm(V, T)
    gW = at.neg(_mm(gQ, V))
    gV = _add(at.neg(_mm(mH(gQ), W)), _mm(gW, mH(T)))
    gT = _mm(mH(V), gW)
    Z = at.triangular_solve(gT, mH(U), False, False, True)[0]          # U^-H gT
    gU = at.neg(_mm(Z, mH(T)))
    gD = _add(Z, _mm(gU, mH(S)))
    gK = triu(_mm(mH(Dm), gU), 1)
    gV = _add(gV, _add(_mm(V, mH(gK)), _mm(V, gK)))
    gA = None
    if mask[0]:
        gA = tril(gV, -1)
        if a_shape[-1] > k:
            gA = at.cat([gA, at.zeros_like(at.slice_Tensor(A, -1, k, None, 1), None, None, None, None, None)], -1)
        gA = _colmajor(gA)
    gtau = at.contiguous(_diag(gD)) if mask[1] else None
    return gA, gtau, gC
