"""Backward formulas of the decompositions and solvers (derivatives.yaml, linalg block).

Written with onion operators, so a gradient built with ``create_graph=True`` is itself
differentiable.  ``mH`` is the conjugate transpose; one formula serves real and complex inputs.
Triangles and diagonals are taken with masks and identity matrices (``where`` and products), and
blocks are joined with selection matrices, which keeps every step an operator with a derivative.
"""
from __future__ import annotations

import numpy as _np

from ..aten.at import at
from ..aten.math_bits import CONJ
from ..core.geometry import is_contiguous
from ..aten.tensor_new import scalar_to_tensor, wrap

__all__ = ["addbmm_batch1_backward", "addbmm_batch2_backward", "block_diag_backward", "cdist_backward",
           "cholesky_backward", "cholesky_inverse_backward", "cholesky_solve_backward", "linalg_inv_backward",
           "linalg_matrix_exp_differential", "linalg_qr_backward", "lu_factor_ex_backward", "lu_unpack_backward",
           "slogdet_backward", "svd_backward_full", "triangular_solve_backward"]


# ----------------------------------------------------------------------------- small pieces
def maybe_multiply(t, s):
    return t if (s is None or (not isinstance(s, bool) and s == 1)) else at.mul_Scalar(t, s)


def conj_scalar(s):
    return s.conjugate() if isinstance(s, complex) else s


def real_part(g):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return at._to_copy(g, g._impl.dtype.to_real(), None, None, None, False, None)


def where(cond, a, b):
    if not hasattr(a, "_impl"):
        a = scalar_to_tensor(a, cond._impl.device)
    if not hasattr(b, "_impl"):
        b = scalar_to_tensor(b, cond._impl.device)
    return at.where_self(cond, a, b)


def sgn(t):
    """-1, 0 or 1 of a real tensor, as its dtype (a constant: no gradient flows through it)."""
    dt = t._impl.dtype
    pos = at._to_copy(at.gt_Scalar(t, 0), dt, None, None, None, False, None)
    neg = at._to_copy(at.lt_Scalar(t, 0), dt, None, None, None, False, None)
    return at.sub_Tensor(pos, neg, 1)
def _sizes(t):
    return tuple(t._impl._array.shape)


def _const(arr, like):
    """A constant (no history) array as a tensor of ``like``'s dtype and device."""
    dt = like._impl.dtype
    t = wrap(_np.asarray(arr, dtype=dt.np), dt, like._impl.device) if like._impl.device.type == "cpu" else \
        at._to_copy(wrap(_np.asarray(arr, dtype=dt.np), dt, _cpu()), None, None, like._impl.device, None, False, None)
    return t


def _cpu():
    from ..core.device import CPU
    return CPU


def _mask(rows, cols, k, lower, like):
    m = _np.tri(rows, cols, k, dtype=bool) if lower else ~_np.tri(rows, cols, k - 1, dtype=bool)
    return wrap(m, _bool(), like._impl.device) if like._impl.device.type == "cpu" else \
        at._to_copy(wrap(m, _bool(), _cpu()), None, None, like._impl.device, None, False, None)


def _bool():
    from ..core import dtype as _dt
    return _dt.bool


def tril(t, k=0):
    s = _sizes(t)
    return at.where_self(_mask(s[-2], s[-1], k, True, t), t, scalar_to_tensor(0.0, t._impl.device))


def triu(t, k=0):
    s = _sizes(t)
    return at.where_self(_mask(s[-2], s[-1], k, False, t), t, scalar_to_tensor(0.0, t._impl.device))


def mH(t):
    return at.transpose_int(at.conj(t), -2, -1)


def _eye(n, like):
    return _const(_np.eye(n), like)


def diag_embed(v, like=None):
    """A batch of diagonal matrices with ``v`` (..., n) on the diagonal, in ``like``'s dtype."""
    n = _sizes(v)[-1]
    return at.mul_Tensor(at.unsqueeze(v, -1), _eye(n, like if like is not None else v))


def _diag(t):
    return at.diagonal(t, 0, -2, -1)


def _real(t):
    return real_part(t) if t._impl.dtype.is_complex else t


def _imag(t):
    return real_part(at.mul_Scalar(t, -1j))


def _narrow(t, dim, start, length):
    return at.slice_Tensor(t, dim, start, start + length, 1)


def _place_cols(X, n, start=0):
    """X (..., m, c) as the columns start..start+c of an (..., m, n) matrix of zeros."""
    c = _sizes(X)[-1]
    E = _np.zeros((c, n))
    E[_np.arange(c), start + _np.arange(c)] = 1
    return at.matmul(X, _const(E, X))


def _place_rows(X, m, start=0):
    """X (..., r, n) as the rows start..start+r of an (..., m, n) matrix of zeros."""
    r = _sizes(X)[-2]
    E = _np.zeros((m, r))
    E[start + _np.arange(r), _np.arange(r)] = 1
    return at.matmul(_const(E, X), X)


def _solve(A, B, upper, left=True, unit=False):
    """linalg.solve_triangular: A^-1 B (left) or B A^-1 (right) for triangular A, laid out as PyTorch's: a right
    solve column-major (LAPACK's layout), and either one row-major when A is a conjugate view whose transpose is
    contiguous (PyTorch then allocates a row-major result so as not to copy A; an empty A counts as contiguous,
    so the conjugate-transposed R or L of an empty batch gives a row-major gradient)."""
    if left:
        X = at.triangular_solve(B, A, upper, False, unit)[0]
    else:
        X = mH(at.triangular_solve(mH(B), mH(A), not upper, False, unit)[0])
    if A._impl.keyset & CONJ and _transpose_contiguous(A._impl):
        return _rowmajor(X)
    return X if left else _colmajor(X)


def _transpose_contiguous(impl) -> bool:
    """Whether the matrix batch's transpose is contiguous (read from the geometry: no operator dispatched)."""
    sizes, strides = list(impl._array.shape), list(impl.strides)
    sizes[-2], sizes[-1] = sizes[-1], sizes[-2]
    strides[-2], strides[-1] = strides[-1], strides[-2]
    return is_contiguous(sizes, strides)


def _rowmajor(t):
    # an empty tensor counts as contiguous whatever its strides: copied, so its (empty) batch is row-major too
    return at.clone(t, "contiguous_format") if t._impl._array.size == 0 else at.contiguous(t)


def _colmajor(t):
    return at.transpose_int(_rowmajor(at.transpose_int(t, -2, -1)), -2, -1)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return at.add_Tensor(a, b, 1)


# ----------------------------------------------------------------------------- products
def _addbmm_grad_expanded(grad, b, n, p):
    """addbmm's output gradient repeated for every batch: (b, n, p)."""
    return at.expand(at.unsqueeze(grad, 0), [b, n, p], False)


def addbmm_batch1_backward(grad, batch1_sizes, batch2, alpha):
    g = _addbmm_grad_expanded(grad, batch1_sizes[0], batch1_sizes[1], _sizes(batch2)[2])
    return maybe_multiply(at.bmm(g, at.conj(at.transpose_int(batch2, 1, 2))), conj_scalar(alpha))


def addbmm_batch2_backward(grad, batch1, batch2_sizes, alpha):
    s1 = _sizes(batch1)
    g = _addbmm_grad_expanded(grad, s1[0], s1[1], batch2_sizes[2])
    return maybe_multiply(at.bmm(at.conj(at.transpose_int(batch1, 1, 2)), g), conj_scalar(alpha))


# ----------------------------------------------------------------------------- Cholesky
def cholesky_backward(gL, upper, L):
    """A = L L^H: gA = L^-H Φ L^-1 with Φ the Hermitian matrix built from tril(L^H gL)."""
    if gL is None:
        return None
    if upper:
        L = mH(L)
        gL = mH(gL)
    phi = tril(at.matmul(mH(L), gL))
    phi = at.mul_Scalar(at.add_Tensor(phi, mH(tril(phi, -1)), 1), 0.5)
    gA = _solve(mH(L), phi, True)
    return _solve(L, gA, False, left=False)


def cholesky_solve_backward(grad, self, input2, result, upper, mask):
    """X = (L L^H)^-1 B: gB = (L L^H)^-1 gX; gL from the symmetric part of gB X^H."""
    if grad is None:
        return None, None
    g_self = at.cholesky_solve(grad, input2, upper)
    g_input2 = None
    if mask[1]:
        common = at.matmul(g_self, mH(result))
        common = at.add_Tensor(common, mH(common), 1)
        g_input2 = at.neg(at.matmul(input2, common) if upper else at.matmul(common, input2))
    return (g_self if mask[0] else None), g_input2


def cholesky_inverse_backward(grad, L, upper, inverse):
    common = at.add_Tensor(grad, mH(grad), 1)
    common = at.matmul(inverse, at.matmul(common, inverse))
    return at.neg(at.matmul(L, common) if upper else at.matmul(common, L))


# ----------------------------------------------------------------------------- triangular systems
def triangular_solve_backward(grad_x, grad_m, b, a, x, upper, transpose, unitriangular, mask):
    """op(A) X = B: gB solves the adjoint system; A's gradient keeps A's triangle; the copy of A
    passes its gradient to A unchanged."""
    g_b = g_a = None
    if grad_x is not None:
        g_b = at.triangular_solve(grad_x, at.conj(a), upper, not transpose, unitriangular)[0]
        if mask[1]:
            g_a = at.neg(at.matmul(at.conj(x), at.transpose_int(g_b, -2, -1)) if transpose
                         else at.matmul(g_b, mH(x)))
            g_a = triu(g_a, 1 if unitriangular else 0) if upper else tril(g_a, -1 if unitriangular else 0)
    if mask[1] and grad_m is not None:
        g_a = _add(g_a, grad_m)
    return (g_b if mask[0] else None), g_a


# ----------------------------------------------------------------------------- QR
def linalg_qr_backward(gQ, gR, Q, R, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m = _sizes(Q)[-2]
    n = _sizes(R)[-1]
    if mode != "reduced" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:
        gA = at.neg(at.matmul(mH(Q), gQ))
        if gR is not None:
            gA = at.add_Tensor(at.matmul(gR, mH(R)), gA, 1)
    else:
        gA = at.matmul(gR, mH(R))
    if m >= n:
        # M + M^H from the upper triangle, with the real part of the diagonal counted once
        sym = triu(gA)
        sym = at.add_Tensor(sym, mH(sym), 1)
        sym = at.sub_Tensor(sym, diag_embed(at.mul_Scalar(_real(_diag(sym)), 0.5), sym), 1)
        gA = at.matmul(Q, sym)
        if gQ is not None:
            gA = at.add_Tensor(gA, gQ, 1)
        return _solve(mH(R), gA, False, left=False)
    # a wide A: the first m columns of R are square
    X = at.neg(gA)
    skew = tril(at.sub_Tensor(X, mH(X), 1))
    if skew._impl.dtype.is_complex:
        im = at.mul_Scalar(_imag(_diag(skew)), 0.5)
        skew = at.sub_Tensor(skew, at.mul_Scalar(diag_embed(im, skew), 1j), 1)
    gA = at.matmul(Q, skew)
    gA = _solve(mH(_narrow(R, -1, 0, m)), gA, False, left=False)
    gA = _place_cols(gA, n)
    if gR is not None:
        gA = at.add_Tensor(gA, at.matmul(Q, gR), 1)
    return gA


# ----------------------------------------------------------------------------- SVD
def svd_backward_full(gU, gS, gVh, U, S, Vh, full_matrices):
    """_linalg_svd's gradient: the extra columns of a full U (rows of Vh) carry nothing about A."""
    if gU is None and gS is None and gVh is None:
        return None
    if full_matrices:
        k = _sizes(S)[-1]
        U = _narrow(U, -1, 0, k)
        Vh = _narrow(Vh, -2, 0, k)
        if gU is not None:
            gU = _narrow(gU, -1, 0, k)
        if gVh is not None:
            gVh = _narrow(gVh, -2, 0, k)
    return svd_backward(gU, gS, gVh, U, S, Vh)


def _to(t, like):
    dt = like._impl.dtype
    if t._impl.dtype is dt:
        return t
    return at._to_copy(t, dt, None, None, None, False, None)


def svd_backward(gU, gS, gVh, U, S, Vh):
    m = _sizes(U)[-2]
    n = _sizes(Vh)[-1]
    Sc = _to(S, U)
    if gU is None and gVh is None:
        gSc = _to(gS, U)
        if m >= n:
            return at.matmul(U, at.mul_Tensor(at.unsqueeze(gSc, -1), Vh))
        return at.matmul(at.mul_Tensor(U, at.unsqueeze(gSc, -2)), Vh)
    is_complex = U._impl.dtype.is_complex

    def skew(X):
        return at.sub_Tensor(X, mH(X), 1)
    UhgU = skew(at.matmul(mH(U), gU)) if gU is not None else None
    VhgV = skew(at.matmul(Vh, mH(gVh))) if gVh is not None else None
    S2 = at.mul_Tensor(Sc, Sc)
    # E[i, j] = S_j^2 - S_i^2, with ones on the diagonal (the diagonal is handled apart)
    ones = at.ones_like(Sc, None, None, None, None, None)
    E = at.add_Tensor(at.sub_Tensor(at.unsqueeze(S2, -2), at.unsqueeze(S2, -1), 1), diag_embed(ones), 1)
    if UhgU is not None and VhgV is not None:
        gA = at.div_Tensor(at.add_Tensor(at.mul_Tensor(UhgU, at.unsqueeze(Sc, -2)),
                                         at.mul_Tensor(at.unsqueeze(Sc, -1), VhgV), 1), E)
    elif UhgU is not None:
        gA = at.mul_Tensor(at.div_Tensor(UhgU, E), at.unsqueeze(Sc, -2))
    else:
        gA = at.mul_Tensor(at.unsqueeze(Sc, -1), at.div_Tensor(VhgV, E))
    if gS is not None:
        gA = at.add_Tensor(gA, diag_embed(_to(gS, U)), 1)
    if is_complex and UhgU is not None and VhgV is not None:
        gA = at.add_Tensor(gA, diag_embed(at.div_Tensor(_diag(UhgU), at.mul_Scalar(Sc, 2))), 1)
    if m > n and gU is not None:
        gA = at.matmul(U, gA)
        gUSinv = at.div_Tensor(gU, at.unsqueeze(Sc, -2))
        gA = at.sub_Tensor(at.add_Tensor(gA, gUSinv, 1), at.matmul(U, at.matmul(mH(U), gUSinv)), 1)
        return at.matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = at.matmul(gA, Vh)
        SinvgVh = at.div_Tensor(gVh, at.unsqueeze(Sc, -1))
        gA = at.sub_Tensor(at.add_Tensor(gA, SinvgVh, 1), at.matmul(at.matmul(SinvgVh, mH(Vh)), Vh), 1)
        return at.matmul(U, gA)
    return at.matmul(U, at.matmul(gA, Vh)) if m >= n else at.matmul(at.matmul(U, gA), Vh)


# ----------------------------------------------------------------------------- determinants, inverse
def linalg_inv_backward(grad, inverse):
    ih = mH(inverse)
    return at.neg(at.matmul(ih, at.matmul(grad, ih)))


def slogdet_backward(g_sign, g_logabsdet, A, sign):
    """d log|det A| = Re tr(A^-1 dA); for complex A the sign's phase moves by Im tr(A^-1 dA)."""
    is_complex = A._impl.dtype.is_complex
    if g_logabsdet is None and (not is_complex or g_sign is None):
        return None
    if is_complex:
        g = _to(g_logabsdet, A) if g_logabsdet is not None else None
        if g_sign is not None:
            im = at.neg(_imag(at.mul_Tensor(at.conj(g_sign), sign)))
            g = _add(g, at.mul_Scalar(_to(im, A), 1j))
    else:
        g = g_logabsdet
    inv = at.linalg_inv_ex(A, False)[0]
    # column-major, as the solve PyTorch uses returns it
    return _colmajor(at.mul_Tensor(mH(inv), at.unsqueeze(at.unsqueeze(g, -1), -1)))


# ----------------------------------------------------------------------------- matrix exponential
def linalg_matrix_exp_differential(A, grad, adjoint):
    """The Fréchet derivative of exp at A (at A^H for the adjoint) applied to ``grad``: the upper right
    block of exp([[A, G], [0, A]])."""
    n = _sizes(A)[-1]
    M = mH(A) if adjoint else A
    diag = _const(_np.eye(2), A)
    corner = _const(_np.array([[0.0, 1.0], [0.0, 0.0]]), A)
    big = at.add_Tensor(at.kron(diag, M), at.kron(corner, _to(grad, A)), 1)
    e = at.linalg_matrix_exp(big)
    return _narrow(_narrow(e, -2, 0, n), -1, n, n)


# ----------------------------------------------------------------------------- LU
def lu_unpack_backward(gL, gU, m, n):
    if gL is None and gU is None:
        return None
    k = min(m, n)
    if gL is not None and gU is not None:
        if m == n:
            return at.add_Tensor(tril(gL, -1), triu(gU), 1)
        if m > n:
            top = at.add_Tensor(tril(_narrow(gL, -2, 0, k), -1), triu(_narrow(gU, -1, 0, k)), 1)
            return at.add_Tensor(_place_rows(top, m), _place_rows(_narrow(gL, -2, k, m - k), m, k), 1)
        left = at.add_Tensor(tril(_narrow(gL, -2, 0, k), -1), triu(_narrow(gU, -1, 0, k)), 1)
        return at.add_Tensor(_place_cols(left, n), _place_cols(_narrow(gU, -1, k, n - k), n, k), 1)
    if gL is not None:
        return tril(gL, -1) if m >= n else _place_cols(tril(gL, -1), n)
    return triu(gU) if n >= m else _place_rows(triu(gU), m)


def _lu_backward(gL, gU, P, L, U, pivot):
    m = _sizes(L)[-2]
    n = _sizes(U)[-1]
    k = min(m, n)
    if m == n:
        gA = None
        if gL is not None:
            gA = tril(at.matmul(mH(L), gL), -1)
        if gU is not None:
            gA = _add(gA, triu(at.matmul(gU, mH(U))))
        gA = _solve(mH(U), gA, False, left=False)
        gA = _solve(mH(L), gA, True, left=True, unit=True)
    elif m < n:
        U1 = _narrow(U, -1, 0, k)
        gA = at.matmul(mH(L), gL) if gL is not None else None
        if gU is not None:
            gA = _add(gA, at.neg(at.matmul(triu(gU), mH(U))))
        gA = _solve(mH(U1), tril(gA, -1), False, left=False)
        if gU is not None:
            gA = at.add_Tensor(_place_cols(at.add_Tensor(gA, triu(_narrow(gU, -1, 0, k)), 1), n),
                               _place_cols(_narrow(gU, -1, k, n - k), n, k), 1)
        gA = _solve(mH(L), gA, True, left=True, unit=True)
        if gU is None:
            gA = _place_cols(gA, n)
    else:
        L1 = _narrow(L, -2, 0, k)
        gA = at.matmul(gU, mH(U)) if gU is not None else None
        if gL is not None:
            gA = _add(gA, at.neg(at.matmul(mH(L), tril(gL, -1))))
        gA = _solve(mH(L1), triu(gA), True, left=True, unit=True)
        if gL is not None:
            gA = at.add_Tensor(_place_rows(at.add_Tensor(gA, tril(_narrow(gL, -2, 0, k), -1), 1), m),
                               _place_rows(_narrow(gL, -2, k, m - k), m, k), 1)
        gA = _solve(mH(U), gA, False, left=False)
        if gL is None:
            gA = _place_rows(gA, m)
    return at.matmul(P, gA) if pivot else gA


def lu_factor_ex_backward(grad, LU, pivots, pivot):
    """The packed factors hold L below the diagonal and U on and above it."""
    if grad is None:
        return None
    P, L, U = at.lu_unpack(LU, pivots, True, pivot)
    s = _sizes(LU)
    k = min(s[-2], s[-1])
    return _lu_backward(_narrow(grad, -1, 0, k), _narrow(grad, -2, 0, k), P, L, U, pivot)


# ----------------------------------------------------------------------------- block_diag
def block_diag_backward(grad, tensors):
    """Each input's block of the gradient, in the input's own shape."""
    grads = []
    r = c = 0
    for t in tensors:
        s = _sizes(t)
        h, w = (1, 1) if len(s) == 0 else (1, s[0]) if len(s) == 1 else s
        g = at.slice_Tensor(at.slice_Tensor(grad, 0, r, r + h, 1), 1, c, c + w, 1)
        grads.append(at.reshape(g, list(s)))
        r += h
        c += w
    return grads


# ----------------------------------------------------------------------------- cdist
def cdist_backward(grad, x1, x2, p, result, mask):
    """Gradients of the pairwise distances d_ij = ||x1_i - x2_j||_p; a zero distance passes none."""
    diff = at.sub_Tensor(at.unsqueeze(x1, -2), at.unsqueeze(x2, -3), 1)      # (..., r1, r2, m)
    g = at.unsqueeze(grad, -1)
    d = at.unsqueeze(result, -1)
    zero = at.eq_Scalar(d, 0)
    if p == 0:
        coef = at.mul_Scalar(diff, 0.0)
    elif p == 1:
        coef = at.mul_Tensor(g, sgn(diff))
    elif p == 2:
        coef = at.mul_Tensor(at.div_Tensor(g, where(zero, 1.0, d)), diff)
    elif p == float("inf"):
        hit = at._to_copy(at.eq_Tensor(at.abs(diff), d), diff._impl.dtype, None, None, None, False, None)
        coef = at.mul_Tensor(at.mul_Tensor(g, sgn(diff)), hit)
    else:
        absd = at.abs(diff)
        num = at.mul_Tensor(sgn(diff), at.pow_Tensor_Scalar(absd, p - 1))
        if p < 1:
            num = where(at.eq_Scalar(absd, 0), 0.0, num)
        coef = at.mul_Tensor(at.div_Tensor(g, where(zero, 1.0, at.pow_Tensor_Scalar(d, p - 1))), num)
    coef = where(zero, 0.0, coef)
    g1 = at.sum_dim_IntList(coef, [-2], False, None) if mask[0] else None
    g2 = at.neg(at.sum_dim_IntList(coef, [-3], False, None)) if mask[1] else None
    return g1, g2
