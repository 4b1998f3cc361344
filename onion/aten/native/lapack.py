"""Decompositions and solvers on LAPACK (NumPy's batched drivers, SciPy's LAPACK/BLAS wrappers one
matrix at a time where NumPy has no batched one, as ATen loops over a batch): cholesky,
cholesky_solve, cholesky_inverse, triangular_solve, linalg_qr, _linalg_svd, _linalg_slogdet,
linalg_inv_ex, linalg_matrix_exp, linalg_lu_factor_ex, lu_unpack, geqrf, ormqr, and the
CompositeImplicitAutograd operators written over them (qr, svd, logdet, matrix_exp, pinverse,
lu_solve, ...).

Results have LAPACK's layout where PyTorch's do: each matrix of a batch column-major (Fortran order),
the batch dims outermost.  The kernels of several outputs work for CPU and Meta alike: on Meta only
the checks run and the outputs are allocated with the same geometry.
"""
from __future__ import annotations

import numpy as _np

from ...core import dtype as _dt
from ...core.linalg_error import LinAlgError
from ..at import at
from ..iterator import check_devices, resize_out
from ..structured import Plan
from ..tensor_new import empty_tensor
from ..view_geometry import broadcast_pair_for_op, contiguous_strides as _contiguous_strides

_FLOATING = (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128)


# --------------------------------------------------------------------------
# shared checks and layouts
# --------------------------------------------------------------------------

def _shape(t):
    return tuple(t._impl._array.shape)


def _fstrides(shape):
    """Strides of a batch of column-major matrices (the batch dims row-major, outermost)."""
    shape = tuple(shape)
    if len(shape) < 2:
        strides = []
        acc = 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(n, 1)
        return tuple(reversed(strides))
    m, n = shape[-2], shape[-1]
    inner = (1, max(m, 1))
    acc = max(m, 1) * max(n, 1)
    batch = []
    for s in reversed(shape[:-2]):
        batch.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(batch)) + inner


def _colmajor(a):
    """``a`` as a new array with each matrix in Fortran order."""
    return _np.swapaxes(_np.ascontiguousarray(_np.swapaxes(a, -1, -2)), -1, -2)


def _at_least_2d(name, t, what="A"):
    nd = len(_shape(t))
    if nd < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def _square(name, t, what="A"):
    s = _shape(t)
    if s[-1] != s[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are {s[-2]} by {s[-1]} "
                           f"matrices")


def _floating(name, t, what="input", kernel=None):
    dt = t._impl.dtype
    if kernel is not None and dt in (_dt.float16, _dt.bfloat16):
        # a floating type LAPACK has no routine for: the kernel's own dispatch refuses it
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_type_name}'")
    if dt not in _FLOATING:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as {what}. Got "
                           f"{dt.scalar_type_name}")


def _lapack_dtype(kernel, t):
    dt = t._impl.dtype
    if dt not in _FLOATING:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_type_name}'")


def _linear_solve_checks(name, b, A):
    """linearSolveCheckInputs: dtypes, devices, square A, matching rows."""
    if b._impl.dtype is not A._impl.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b._impl.dtype.scalar_type_name} and A of type {A._impl.dtype.scalar_type_name} instead.")
    db, da = b._impl.device, A._impl.device
    if db != da:
        raise RuntimeError(f"Expected b and A to be on the same device, but found b on {db} and A on {da} instead.")
    sa = _shape(A)
    sb = _shape(b)
    if sa[-1] != sa[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {sa[-2]} by {sa[-1]} matrices")
    if sa[-1] != sb[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {sa[-1]} by {sa[-1]} but each b "
                           f"matrix is {sb[-2]} by {sb[-1]}")


def _batch_broadcast(b, A):
    """The broadcast batch shape of b and A (PyTorch's _linalg_broadcast_batch_dims)."""
    return tuple(broadcast_pair_for_op(_shape(b)[:-2], _shape(A)[:-2]))


def _new(shape, dtype, device, strides=None, value=None):
    """A new tensor of the given geometry; on CPU ``value`` (an array) is copied into it."""
    t = empty_tensor(tuple(shape), dtype, device, strides)
    if value is not None and device.type != "meta":
        _np.copyto(t._impl._array, value, casting="unsafe")
    return t


def _is_meta(t):
    return t._impl.device.type == "meta"


def _batches(a):
    """Each matrix of a batch (the matrices of an array of shape (..., m, n)), as 2-D views."""
    return a.reshape((-1,) + a.shape[-2:])


def _prefix(kind, a):
    return {_np.dtype(_np.float32): "s", _np.dtype(_np.float64): "d", _np.dtype(_np.complex64): "c",
            _np.dtype(_np.complex128): "z"}[_np.dtype(a.dtype)] + kind


def _batch_msg(name, batched, i, text):
    if batched:
        return f"{name}: (Batch element {i}): {text}"
    return f"{name}: {text}"


def _conj_t(a):
    return _np.conj(_np.swapaxes(a, -1, -2))


# --------------------------------------------------------------------------
# triangular solves (BLAS trsm: a zero on the diagonal gives inf/nan, as ATen's)
# --------------------------------------------------------------------------

def _trsm(A, B, lower, trans, unit, left=True):
    """op(A)^-1 B (or B op(A)^-1 when not ``left``) for batches of triangular A, broadcast."""
    from scipy.linalg import blas
    batch = _np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = _np.broadcast_to(A, batch + A.shape[-2:])
    B = _np.broadcast_to(B, batch + B.shape[-2:])
    out = _np.empty(batch + B.shape[-2:], dtype=B.dtype)
    if out.size == 0:
        return out
    fn = getattr(blas, _prefix("trsm", B))
    As = _batches(A)
    Bs = _batches(B)
    Os = out.reshape((-1,) + out.shape[-2:])
    trans_a = {False: 0, True: 1, "H": 2}[trans]
    for i in range(As.shape[0]):
        Os[i] = fn(1.0, As[i], Bs[i], side=0 if left else 1, lower=int(lower), trans_a=trans_a, diag=int(unit))
    return out


# --------------------------------------------------------------------------
# cholesky
# --------------------------------------------------------------------------

def meta_cholesky(self, upper=False):
    shape = _shape(self)
    if 0 in shape:
        # PyTorch's cholesky returns empty_like(self, contiguous) for an empty input before any check
        return Plan(shape, self._impl.dtype, self._impl.device, _contiguous_strides(shape), upper)
    nd = len(shape)
    if nd < 2:
        raise RuntimeError("cholesky: The input tensor A must have at least 2 dimensions.")
    _square("cholesky", self)
    _lapack_dtype("cholesky_cpu", self)
    shape = _shape(self)
    return Plan(shape, self._impl.dtype, self._impl.device, _fstrides(shape), upper)


def _potrf_fail(name, a, batched):
    """The first matrix of ``a`` that is not positive-definite and its failing minor, in PyTorch's words."""
    from scipy.linalg import lapack
    fn = getattr(lapack, _prefix("potrf", a))
    mats = _batches(a)
    for i in range(mats.shape[0]):
        _c, info = fn(mats[i], lower=1)
        if info > 0:
            return LinAlgError(_batch_msg(name, batched, i, "The factorization could not be completed because the "
                                          f"input is not positive-definite (the leading minor of order {info} is not "
                                          "positive-definite)."))
    return LinAlgError(f"{name}: The factorization could not be completed because the input is not positive-definite.")


def _cholesky_lower(name, a):
    if a.size == 0:
        return _np.zeros(a.shape, dtype=a.dtype)
    # only the lower triangle is read, as LAPACK's potrf does
    low = _np.tril(a)
    herm = low + _conj_t(_np.tril(a, -1))
    if a.dtype.kind == "c":
        herm = herm.copy()
        idx = _np.arange(a.shape[-1])
        herm[..., idx, idx] = herm[..., idx, idx].real
    try:
        return _np.linalg.cholesky(herm)
    except _np.linalg.LinAlgError:
        raise _potrf_fail(name, herm, a.ndim > 2) from None


def cholesky_impl(xp, plan, self, upper=False):
    a = self._impl._array
    if a.size == 0:
        return _np.empty(a.shape, a.dtype)
    if plan.extra:
        # U^H U = A from the upper triangle: the lower factor of A^H (its lower triangle is A's upper one)
        L = _cholesky_lower("cholesky", _conj_t(a))
        return _colmajor(_conj_t(L))
    return _colmajor(_cholesky_lower("cholesky", a))


# --------------------------------------------------------------------------
# cholesky_solve
# --------------------------------------------------------------------------

def _cholesky_solve_checks(self, input2):
    sb = _shape(self)
    sa = _shape(input2)
    if len(sb) < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {len(sb)} dimensions instead")
    if len(sa) < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {len(sa)} dimensions instead")
    _linear_solve_checks("cholesky_solve", self, input2)
    batch = _batch_broadcast(self, input2)
    return batch + sb[-2:]


def meta_cholesky_solve(self, input2, upper=False):
    shape = _cholesky_solve_checks(self, input2)
    _lapack_dtype("cholesky_solve_cpu", self)
    return Plan(shape, self._impl.dtype, self._impl.device, _fstrides(shape), upper)


def cholesky_solve_impl(xp, plan, self, input2, upper=False):
    b = self._impl._array
    u = input2._impl._array
    if upper:
        # A = U^H U: U^H y = b, then U x = y
        y = _trsm(u, b, False, "H", False)
        x = _trsm(u, y, False, False, False)
    else:
        y = _trsm(u, b, True, False, False)
        x = _trsm(u, y, True, "H", False)
    return _colmajor(_np.broadcast_to(x, plan.shape))


# --------------------------------------------------------------------------
# cholesky_inverse
# --------------------------------------------------------------------------

def meta_cholesky_inverse(self, upper=False):
    _at_least_2d("cholesky_inverse", self)
    _square("cholesky_inverse", self)
    _lapack_dtype("cholesky_inverse_out_cpu", self)
    shape = _shape(self)
    return Plan(shape, self._impl.dtype, self._impl.device, _fstrides(shape), upper)


def cholesky_inverse_impl(xp, plan, self, upper=False):
    a = self._impl._array
    n = a.shape[-1]
    if a.size == 0:
        return _np.zeros(plan.shape, dtype=a.dtype)
    diag = _np.diagonal(a, axis1=-2, axis2=-1)
    zero = diag == 0
    if zero.any():
        flat = zero.reshape(-1, n)
        b, j = _np.argwhere(flat)[0]
        raise LinAlgError(_batch_msg("cholesky_inverse", a.ndim > 2, int(b),
                                     f"The diagonal element {int(j) + 1} is zero, the inversion could not be completed "
                                     f"because the input matrix is singular."))
    eye = _np.broadcast_to(_np.eye(n, dtype=a.dtype), a.shape)
    if upper:
        # (U^H U)^-1 = U^-1 U^-H
        y = _trsm(a, eye, False, False, False)
        return _colmajor(_np.matmul(y, _conj_t(y)))
    y = _trsm(a, eye, True, False, False)      # L^-1
    return _colmajor(_np.matmul(_conj_t(y), y))


# --------------------------------------------------------------------------
# triangular_solve (two results: CPU and Meta)
# --------------------------------------------------------------------------

def _triangular_solve_geometry(self, A):
    sb = _shape(self)
    sa = _shape(A)
    if len(sb) < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {len(sb)} "
                           f"dimensions instead")
    if len(sa) < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {len(sa)} "
                           f"dimensions instead")
    _linear_solve_checks("triangular_solve", self, A)
    batch = _batch_broadcast(self, A)
    return batch + sb[-2:], batch + sa[-2:]


def triangular_solve_kernel(self, A, upper=True, transpose=False, unitriangular=False):
    xs, as_ = _triangular_solve_geometry(self, A)
    _lapack_dtype("triangular_solve_cpu", self)
    dt = self._impl.dtype
    dev = self._impl.device
    if _is_meta(self):
        return _new(xs, dt, dev, _fstrides(xs)), _new(as_, dt, dev, _fstrides(as_))
    a = _np.broadcast_to(A._impl._array, as_)
    x = _trsm(a, self._impl._array, not upper, bool(transpose), bool(unitriangular))
    return _new(xs, dt, dev, _fstrides(xs), x), _new(as_, dt, dev, _fstrides(as_), a)


def triangular_solve_X(self, A, upper=True, transpose=False, unitriangular=False, X=None, M=None):
    x, m = at.triangular_solve(self, A, upper, transpose, unitriangular)
    _write_outs((X, M), (x, m), "triangular_solve")
    return X, M


def _write_outs(outs, results, name):
    """out= of an operator with several results: each result's dtype must be its out's, then each out is
    resized (keeping its strides if its size is right, else column-major as LAPACK writes) and written."""
    for o, r in zip(outs, results):
        if o._impl.dtype is not r._impl.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {r._impl.dtype.typemeta_name}, but got "
                               f"{o._impl.dtype.typemeta_name} instead")
        check_devices(name, (o._impl, r._impl), allow_cpu_scalars=False)
    for o, r in zip(outs, results):
        # a resized out takes the result's layout (column-major for LAPACK's results), as ATen's linalg
        # kernels resize their outputs
        resize_out(o, _shape(r), lambda r=r: r._impl.strides)
        at.copy_(o, r, False)


# --------------------------------------------------------------------------
# linalg_qr, qr
# --------------------------------------------------------------------------

def linalg_qr_kernel(A, mode="reduced"):
    _at_least_2d("linalg.qr", A)
    _floating("linalg.qr", A, kernel="geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    s = _shape(A)
    m, n = s[-2], s[-1]
    k = min(m, n)
    batch = s[:-2]
    dt = A._impl.dtype
    dev = A._impl.device
    if mode == "complete":
        qs, rs = batch + (m, m), batch + (m, n)
    elif mode == "reduced":
        qs, rs = batch + (m, k), batch + (k, n)
    else:
        qs, rs = (0,), batch + (k, n)
    if _is_meta(A):
        return _new(qs, dt, dev, _fstrides(qs)), _new(rs, dt, dev, _fstrides(rs))
    a = A._impl._array
    if a.size == 0:
        q = _np.zeros(qs, dtype=a.dtype)
        if mode == "complete" and m:
            q = _np.broadcast_to(_np.eye(m, dtype=a.dtype), qs)
        return _new(qs, dt, dev, _fstrides(qs), q), _new(rs, dt, dev, _fstrides(rs), _np.zeros(rs, a.dtype))
    if mode == "r":
        r = _np.linalg.qr(a, mode="r")
        return _new(qs, dt, dev, _fstrides(qs)), _new(rs, dt, dev, _fstrides(rs), r)
    q, r = _np.linalg.qr(a, mode=mode)
    return _new(qs, dt, dev, _fstrides(qs), q), _new(rs, dt, dev, _fstrides(rs), r)


def linalg_qr_out(A, mode="reduced", Q=None, R=None):
    q, r = at.linalg_qr(A, mode)
    _write_outs((Q, R), (q, r), "linalg_qr")
    return Q, R


def qr(self, some=True):
    import warnings
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                  "release.", UserWarning, stacklevel=2)
    return at.linalg_qr(self, "reduced" if some else "complete")


def qr_Q(self, some=True, Q=None, R=None):
    return at.linalg_qr_out(self, "reduced" if some else "complete", Q, R)


# --------------------------------------------------------------------------
# _linalg_svd, svd
# --------------------------------------------------------------------------

def _linalg_svd_kernel(A, full_matrices=False, compute_uv=True, driver=None):
    s = _shape(A)
    if len(s) < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {len(s)} dimensions instead")
    _floating("linalg.svd", A, kernel="linalg_svd_cpu")
    m, n = s[-2], s[-1]
    k = min(m, n)
    batch = s[:-2]
    dt = A._impl.dtype
    real = dt.to_real()
    dev = A._impl.device
    if compute_uv:
        us = batch + ((m, m) if full_matrices else (m, k))
        vs = batch + ((n, n) if full_matrices else (k, n))
    else:
        us = vs = (0,)
    ss = batch + (k,)
    if _is_meta(A):
        return _new(us, dt, dev, _fstrides(us)), _new(ss, real, dev), _new(vs, dt, dev, _fstrides(vs))
    a = A._impl._array
    if a.size == 0:
        u = _np.zeros(us, a.dtype)
        vh = _np.zeros(vs, a.dtype)
        if compute_uv and full_matrices:
            u = _np.broadcast_to(_np.eye(m, dtype=a.dtype), us)
            vh = _np.broadcast_to(_np.eye(n, dtype=a.dtype), vs)
        return (_new(us, dt, dev, _fstrides(us), u), _new(ss, real, dev, None, _np.zeros(ss, real.np)),
                _new(vs, dt, dev, _fstrides(vs), vh))
    if not compute_uv:
        sv = _np.linalg.svd(a, compute_uv=False)
        return _new(us, dt, dev, _fstrides(us)), _new(ss, real, dev, None, sv), _new(vs, dt, dev, _fstrides(vs))
    u, sv, vh = _np.linalg.svd(a, full_matrices=bool(full_matrices))
    return (_new(us, dt, dev, _fstrides(us), u), _new(ss, real, dev, None, sv),
            _new(vs, dt, dev, _fstrides(vs), vh))


def _linalg_svd_U(A, full_matrices=False, compute_uv=True, driver=None, U=None, S=None, Vh=None):
    u, s, vh = at._linalg_svd(A, full_matrices, compute_uv, driver)
    _write_outs((U, S, Vh), (u, s, vh), "_linalg_svd")
    return U, S, Vh


def svd(self, some=True, compute_uv=True):
    if compute_uv:
        u, s, vh = at._linalg_svd(self, not some, True, None)
        return u, s, at.transpose_int(at.conj(vh), -2, -1)
    s = at._linalg_svd(self, False, False, None)[1]
    sh = _shape(self)
    m, n = sh[-2], sh[-1]
    batch = sh[:-2]
    dt = self._impl.dtype
    dev = self._impl.device
    u = at.zeros(list(batch + (m, m)), dt, None, dev, None)
    v = at.transpose_int(at.zeros(list(batch + (n, n)), dt, None, dev, None), -2, -1)
    return u, s, v


def svd_U(self, some=True, compute_uv=True, U=None, S=None, V=None):
    if not compute_uv:
        _write_outs((U, S, V), svd(self, some, compute_uv), "svd")
        return U, S, V
    from ...core.tls import state as _tls_state
    if _tls_state().grad_enabled and any(o._impl.requires_grad and o._impl.grad_fn is None for o in (U, S, V)):
        # PyTorch's svd.U writes its outs in place first
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    # through _linalg_svd.U (whose autograd kernel refuses inputs that require grad), V then holding Vh
    at._linalg_svd_U(self, not some, True, None, U, S, V)
    v = at.clone(at.transpose_int(at.conj(V), -2, -1), None)
    resize_out(V, _shape(v), lambda: _fstrides(_shape(v)))
    at.copy_(V, v, False)
    return U, S, V


# --------------------------------------------------------------------------
# LU: linalg_lu_factor_ex, lu_unpack
# --------------------------------------------------------------------------

def _getrf(a):
    """LU with partial pivoting of every matrix of ``a``: (LU, 1-based int32 pivots, info)."""
    from scipy.linalg import lapack
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = _np.empty(a.shape, dtype=a.dtype)
    piv = _np.empty(a.shape[:-2] + (k,), dtype=_np.int32)
    info = _np.zeros(a.shape[:-2], dtype=_np.int32)
    if a.size == 0:
        piv[...] = _np.arange(1, k + 1, dtype=_np.int32)
        return lu, piv, info
    fn = getattr(lapack, _prefix("getrf", a))
    mats = _batches(a)
    lus = lu.reshape((-1, m, n))
    pivs = piv.reshape((-1, k))
    infos = info.reshape(-1)
    for i in range(mats.shape[0]):
        f, p, inf = fn(mats[i])
        lus[i] = f
        pivs[i] = p[:k] + 1
        infos[i] = inf
    return lu, piv, info


def linalg_lu_factor_ex_kernel(A, pivot=True, check_errors=False):
    s = _shape(A)
    if len(s) < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(s)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _floating("linalg.lu_factor", A)
    m, n = s[-2], s[-1]
    batch = s[:-2]
    dt = A._impl.dtype
    dev = A._impl.device
    ps = batch + (min(m, n),)
    if _is_meta(A):
        return _new(s, dt, dev, _fstrides(s)), _new(ps, _dt.int32, dev), _new(batch, _dt.int32, dev)
    lu, piv, info = _getrf(A._impl._array)
    if check_errors and (info > 0).any():
        i = int(_np.argmax(info.reshape(-1) > 0))
        raise LinAlgError(_batch_msg("torch.linalg.lu_factor_ex", len(batch) > 0, i,
                                     f"U[{info.reshape(-1)[i]},{info.reshape(-1)[i]}] is zero, singular U."))
    return _new(s, dt, dev, _fstrides(s), lu), _new(ps, _dt.int32, dev, None, piv), _new(batch, _dt.int32, dev,
                                                                                         None, info)


def linalg_lu_factor_ex_out(A, pivot=True, check_errors=False, LU=None, pivots=None, info=None):
    results = at.linalg_lu_factor_ex(A, pivot, check_errors)
    _write_outs((LU, pivots, info), results, "linalg_lu_factor_ex")
    return LU, pivots, info


def _lu_with_info(self, pivot=True, check_errors=True):
    return at.linalg_lu_factor_ex(self, pivot, False)


def _permutation_from_pivots(piv, m):
    """The row permutation P (as indices) with A = P L U from LAPACK's sequential row swaps."""
    batch = piv.shape[:-1]
    perm = _np.broadcast_to(_np.arange(m), batch + (m,)).copy()
    if perm.size == 0 or piv.shape[-1] == 0:
        return perm
    flat = perm.reshape(-1, m)
    pv = piv.reshape(-1, piv.shape[-1]).astype(_np.int64) - 1
    rows = _np.arange(flat.shape[0])
    for i in range(pv.shape[1]):           # the swaps are sequential; each is vectorised over the batch
        j = pv[:, i]
        a = flat[rows, i].copy()
        flat[rows, i] = flat[rows, j]
        flat[rows, j] = a
    return perm


def lu_unpack_kernel(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    s = _shape(LU_data)
    if len(s) < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(s)} instead")
    pi = LU_pivots._impl
    if unpack_pivots:
        if pi.dtype is not _dt.int32:
            raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                               "Note: this function is intended to be used with the output produced by "
                               "torch.linalg.lu_factor")
    m, n = s[-2], s[-1]
    k = min(m, n)
    batch = s[:-2]
    dt = LU_data._impl.dtype
    dev = LU_data._impl.device
    ls = batch + (m, k) if unpack_data else (0,)
    us = batch + (k, n) if unpack_data else (0,)
    ps = batch + (m, m) if unpack_pivots else (0,)
    if _is_meta(LU_data):
        return _new(ps, dt, dev), _new(ls, dt, dev), _new(us, dt, dev)
    a = LU_data._impl._array
    P = L = U = None
    if unpack_data:
        L = _np.tril(a[..., :, :k], -1)
        idx = _np.arange(k)
        L[..., idx, idx] = 1
        U = _np.triu(a[..., :k, :])
    if unpack_pivots:
        piv = pi._array
        if piv.shape[-1] and ((piv < 1).any() or (piv > m).any()):
            raise RuntimeError("torch.lu_unpack: Pivots is out of range of the matrix size.")
        perm = _permutation_from_pivots(_np.broadcast_to(piv, batch + (piv.shape[-1],)), m)
        P = _np.zeros(ps, dtype=a.dtype)
        # A = P L U: row i of L U is row perm[i] of A, so P[perm[i], i] = 1
        _np.put_along_axis(P, perm[..., None, :], 1, axis=-2)
    return _new(ps, dt, dev, None, P), _new(ls, dt, dev, None, L), _new(us, dt, dev, None, U)


def lu_unpack_out(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, P=None, L=None, U=None):
    results = at.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    _write_outs((P, L, U), results, "lu_unpack")
    return P, L, U


def lu_solve(self, LU_data, LU_pivots):
    """X with A X = B from A's LU factors: X = U^-1 L^-1 P^T B, differentiable through lu_unpack and the
    triangular solves."""
    sb = _shape(self)
    sl = _shape(LU_data)
    if len(sl) < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor LU must have at least 2 dimensions.")
    if sl[-1] != sl[-2]:
        raise RuntimeError(f"linalg.lu_solve: LU must be batches of square matrices, but they are {sl[-2]} by "
                           f"{sl[-1]} matrices")
    if len(sb) < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if sb[-2] != sl[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B ({sl[-2]}x"
                           f"{sl[-1]} and {sb[-2]}x{sb[-1]})")
    sp = _shape(LU_pivots)
    if sp[-1:] != (sl[-1],):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if LU_pivots._impl.dtype is not _dt.int32:
        raise RuntimeError("linalg.lu_solve: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.")
    if self._impl.dtype is not LU_data._impl.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{LU_data._impl.dtype.scalar_type_name} and B of type {self._impl.dtype.scalar_type_name} "
                           f"instead")
    P, L, U = at.lu_unpack(LU_data, LU_pivots, True, True)
    # P^T B formed as (B^T P)^T: B's gradient is then the transpose of a row-major product, column-major as
    # PyTorch's (whose gradient for B is itself a LAPACK solve)
    # (B^T made contiguous, so that mm's backward, which follows its input's layout, is row-major too)
    pb = at.transpose_int(at.matmul(at.contiguous(at.transpose_int(self, -2, -1)), P), -2, -1)
    y = at.triangular_solve(pb, L, False, False, True)[0]
    return at.triangular_solve(y, U, True, False, False)[0]


def lu_solve_out(self, LU_data, LU_pivots, out):
    from ...core.tls import state as _tls_state
    if _tls_state().grad_enabled and any(t._impl.requires_grad for t in (self, LU_data, LU_pivots, out)):
        # PyTorch's lu_solve.out is linalg_lu_solve.out, whose autograd kernel refuses first
        raise RuntimeError("linalg_lu_solve(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    r = lu_solve(self, LU_data, LU_pivots)
    _write_outs((out,), (r,), "lu_solve")
    return out


# --------------------------------------------------------------------------
# determinants: _linalg_slogdet, linalg_slogdet, logdet; inverse
# --------------------------------------------------------------------------

def _linalg_slogdet_kernel(A):
    _at_least_2d("linalg.slogdet", A)
    _square("linalg.slogdet", A)
    _floating("linalg.slogdet", A)
    s = _shape(A)
    n = s[-1]
    batch = s[:-2]
    dt = A._impl.dtype
    real = dt.to_real()
    dev = A._impl.device
    if _is_meta(A):
        return (_new(batch, dt, dev), _new(batch, real, dev), _new(s, dt, dev, _fstrides(s)),
                _new(batch + (n,), _dt.int32, dev))
    a = A._impl._array
    lu, piv, _info = _getrf(a)
    sign, logabs = _np.linalg.slogdet(a) if a.size else (_np.ones(batch, a.dtype), _np.zeros(batch, real.np))
    return (_new(batch, dt, dev, None, sign), _new(batch, real, dev, None, logabs), _new(s, dt, dev, _fstrides(s), lu),
            _new(batch + (n,), _dt.int32, dev, None, piv))


def linalg_slogdet(A):
    sign, logabsdet, _lu, _piv = at._linalg_slogdet(A)
    return sign, logabsdet


def logdet(self):
    _at_least_2d("logdet", self)
    _square("logdet", self)
    _floating("logdet", self)
    sign, logabsdet = at.linalg_slogdet(self)
    if self._impl.dtype.is_complex:
        return at.add_Tensor(at.log(sign), logabsdet, 1)
    from ..tensor_new import scalar_to_tensor
    return at.where_self(at.eq_Scalar(sign, -1.0), scalar_to_tensor(float("nan"), self._impl.device), logabsdet)


def linalg_inv_ex_kernel(A, check_errors=False):
    _at_least_2d("linalg.inv", A)
    _square("linalg.inv", A)
    _floating("linalg.inv", A)
    s = _shape(A)
    batch = s[:-2]
    dt = A._impl.dtype
    dev = A._impl.device
    if _is_meta(A):
        return _new(s, dt, dev, _fstrides(s)), _new(batch, _dt.int32, dev)
    a = A._impl._array
    lu, _piv, info = _getrf(a)
    if (info > 0).any():
        if check_errors:
            i = int(_np.argmax(info.reshape(-1) > 0))
            raise LinAlgError(_batch_msg("linalg.inv", len(batch) > 0, i,
                                         f"The diagonal element {info.reshape(-1)[i]} is zero, the inversion could not "
                                         f"be completed because the input matrix is singular."))
        inv = _np.full(s, _np.nan, dtype=a.dtype)
        ok = info == 0
        if ok.any():
            inv[ok] = _np.linalg.inv(a[ok])
    else:
        inv = _np.linalg.inv(a) if a.size else _np.zeros(s, a.dtype)
    return _new(s, dt, dev, _fstrides(s), inv), _new(batch, _dt.int32, dev, None, info)


# --------------------------------------------------------------------------
# matrix exponential
# --------------------------------------------------------------------------

def linalg_matrix_exp_kernel(self):
    plan = _matrix_exp_plan(self)
    dev = self._impl.device
    if dev.type == "meta":
        return _new(plan.shape, plan.dtype, dev)
    return _new(plan.shape, plan.dtype, dev, None, _matrix_exp_values(plan, self))


def _matrix_exp_plan(self):
    _at_least_2d("linalg.matrix_exp", self)
    _square("linalg.matrix_exp", self)
    dt = self._impl.dtype
    if dt not in _FLOATING and dt not in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{dt.scalar_type_name}")
    return Plan(_shape(self), dt, self._impl.device)


def _matrix_exp_values(plan, self):
    from scipy.linalg import expm
    a = self._impl._array
    if plan.dtype in (_dt.float16, _dt.bfloat16, _dt.float32):
        a = a.astype(_np.float64)       # rounded once to the result's type
    elif plan.dtype is _dt.complex64:
        a = a.astype(_np.complex128)
    if a.size == 0:
        return _np.zeros(plan.shape, dtype=a.dtype)
    if a.shape[-1] == 1:
        return _np.exp(a)
    return expm(a)


def matrix_exp(self):
    return at.linalg_matrix_exp(self)


# --------------------------------------------------------------------------
# pinverse (CompositeImplicitAutograd, through the SVD)
# --------------------------------------------------------------------------

def pinverse(self, rcond=1e-15):
    s = _shape(self)
    dt = self._impl.dtype
    if len(s) < 2 or dt not in _FLOATING:
        name = {_dt.float32: "Float", _dt.float64: "Double", _dt.complex64: "ComplexFloat",
                _dt.complex128: "ComplexDouble"}.get(dt, dt.scalar_type_name)
        raise RuntimeError(f"linalg.pinv({name}{{{list(s)}}}): expected a tensor with 2 or more dimensions of "
                           f"float, double, cfloat or cdouble types")
    if 0 in s:
        return at.zeros(list(s[:-2] + (s[-1], s[-2])), dt, None, self._impl.device, None)
    u, sv, vh = at._linalg_svd(self, False, True, None)
    max_val = at.slice_Tensor(sv, -1, 0, 1, 1)
    tol = at.mul_Scalar(max_val, rcond)
    from ..tensor_new import scalar_to_tensor
    recip = at.where_self(at.gt_Tensor(sv, tol), at.reciprocal(sv) if hasattr(at, "reciprocal")
                          else at.div_Tensor(scalar_to_tensor(1.0, self._impl.device), sv),
                          scalar_to_tensor(0.0, self._impl.device))
    if dt.is_complex:
        recip = at._to_copy(recip, dt, None, None, None, False, None)
    vinv = at.mul_Tensor(at.transpose_int(at.conj(vh), -2, -1), at.unsqueeze(recip, -2))
    return at.matmul(vinv, at.transpose_int(at.conj(u), -2, -1))


# --------------------------------------------------------------------------
# geqrf, ormqr
# --------------------------------------------------------------------------

def geqrf_kernel(self):
    s = _shape(self)
    if len(s) < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _lapack_dtype("geqrf_cpu", self)
    m, n = s[-2], s[-1]
    k = min(m, n)
    dt = self._impl.dtype
    dev = self._impl.device
    ts = s[:-2] + (k,)
    if _is_meta(self):
        return _new(s, dt, dev, _fstrides(s)), _new(ts, dt, dev)
    a = self._impl._array
    qr = _np.empty(s, dtype=a.dtype)
    tau = _np.zeros(ts, dtype=a.dtype)
    if a.size:
        from scipy.linalg import lapack
        fn = getattr(lapack, _prefix("geqrf", a))
        mats = _batches(a)
        qrs = qr.reshape((-1, m, n))
        taus = tau.reshape((-1, k))
        for i in range(mats.shape[0]):
            f, t, _w, _info = fn(mats[i])
            qrs[i] = f
            taus[i] = t[:k]
    return _new(s, dt, dev, _fstrides(s), qr), _new(ts, dt, dev, None, tau)


def geqrf_a(self, a=None, tau=None):
    results = at.geqrf(self)
    _write_outs((a, tau), results, "geqrf")
    return a, tau


def meta_ormqr(self, input2, input3, left=True, transpose=False):
    si = _shape(self)
    st = _shape(input2)
    so = _shape(input3)
    if len(si) < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if len(so) < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    left_size = so[-2] if left else so[-1]
    if si[-2] != left_size:
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to other.shape[{-2 if left else -1}]")
    if st[-1] != min(so[-2] if left else so[-1], si[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
                           f"input.shape[-1])")
    if len(si) - len(st) != 1:
        raise RuntimeError("torch.ormqr: input.dim() must be greater than tau.dim() by 1")
    if len(si) != len(so):
        raise RuntimeError("torch.ormqr: input.dim() must be equal to other.dim()")
    if si[:-2] != st[:-1]:
        raise RuntimeError("torch.ormqr: input.shape[:-2] must be equal to tau.shape[:-1]")
    if si[:-2] != so[:-2]:
        raise RuntimeError("torch.ormqr: input.shape[:-2] must be equal to other.shape[:-2]")
    for name, t in (("tau", input2), ("other", input3)):
        if t._impl.dtype is not self._impl.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype "
                               f"{self._impl.dtype.scalar_type_name} and {name} has dtype "
                               f"{t._impl.dtype.scalar_type_name}")
    _lapack_dtype("ormqr_cpu", self)
    return Plan(so, self._impl.dtype, self._impl.device, _fstrides(so), (left, transpose))


def ormqr_impl(xp, plan, self, input2, input3, left=True, transpose=False):
    from scipy.linalg import lapack
    a = self._impl._array
    tau = input2._impl._array
    c = input3._impl._array
    out = _colmajor(c.astype(c.dtype, copy=True))
    if out.size == 0 or tau.shape[-1] == 0:
        return out
    complex_ = a.dtype.kind == "c"
    fn = getattr(lapack, _prefix("unmqr" if complex_ else "ormqr", a))
    trans = ("C" if complex_ else "T") if transpose else "N"
    mats = _batches(a)
    taus = tau.reshape((-1, tau.shape[-1]))
    cs = out.reshape((-1,) + out.shape[-2:]) if out.ndim > 2 else out[None]
    res = _np.empty(cs.shape, dtype=c.dtype)
    for i in range(mats.shape[0]):
        q = mats[i][:, :taus.shape[-1]]       # the k reflectors (self may hold more columns)
        r = fn("L" if left else "R", trans, q, taus[i], _np.asfortranarray(cs[i]), max(1, cs.shape[-1] * 64))
        res[i] = r[0]
    return _colmajor(res.reshape(plan.shape))


# --------------------------------------------------------------------------
# cdist: the composite over _cdist_forward (direct) with PyTorch's mm path for large Euclidean problems
# --------------------------------------------------------------------------

def _cdist_checks(x1, x2, p, compute_mode):
    s1 = _shape(x1)
    s2 = _shape(x2)
    if len(s1) < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {len(s1)}D")
    if len(s2) < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {len(s2)}D")
    if s1[-1] != s2[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {s1[-1]} X2: {s2[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        dt = t._impl.dtype
        if not dt.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {dt.scalar_type_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode is not None and not 0 <= compute_mode <= 2:
        raise RuntimeError(f"possible modes: None, 0, 1, 2, but was: {compute_mode}")
    d1 = x1._impl.device
    d2 = x2._impl.device
    if d1 != d2:
        raise RuntimeError(f"X1 and X2 must have the same device type. X1: {d1.type} X2: {d2.type}")
    if x1._impl.dtype is not x2._impl.dtype:
        raise RuntimeError(f"X1 and X2 must have the same dtype. X1: {x1._impl.dtype.scalar_type_name} X2: "
                           f"{x2._impl.dtype.scalar_type_name}")
    batch = tuple(broadcast_pair_for_op(s1[:-2], s2[:-2]))
    return batch + (s1[-2], s2[-2])


def _cdist_values(a, b, p, use_mm):
    """Pairwise p-norm distances of the rows of a (..., r1, m) and b (..., r2, m), broadcast."""
    if use_mm:
        # PyTorch's _euclidean_dist: one product of [-2 a, |a|^2, 1] and [b, 1, |b|^2], clamped, square-rooted
        an = (a * a).sum(-1, keepdims=True)
        bn = (b * b).sum(-1, keepdims=True)
        a_ = _np.concatenate([-2 * a, an, _np.ones_like(an)], -1)
        b_ = _np.concatenate([b, _np.ones_like(bn), bn], -1)
        return _np.sqrt(_np.maximum(_np.matmul(a_, _np.swapaxes(b_, -1, -2)), 0))
    diff = _np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(a.dtype)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return _np.sqrt((diff * diff).sum(-1))
    if _np.isinf(p):
        return diff.max(-1) if diff.shape[-1] else _np.zeros(diff.shape[:-1], a.dtype)
    return _np.power(_np.power(diff, p).sum(-1), 1.0 / p)


def _cdist_forward_kernel(x1, x2, p, compute_mode):
    shape = _cdist_checks(x1, x2, p, compute_mode)
    dt = x1._impl.dtype
    dev = x1._impl.device
    if dev.type == "meta":
        return _new(shape, dt, dev)
    a = x1._impl._array
    b = x2._impl._array
    r1, r2 = a.shape[-2], b.shape[-2]
    mode = 0 if compute_mode is None else compute_mode
    use_mm = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if 0 in shape:
        return _new(shape, dt, dev, None, _np.zeros(shape, dt.np))
    if a.shape[-1] == 0:
        return _new(shape, dt, dev, None, _np.zeros(shape, dt.np))
    return _new(shape, dt, dev, None, _np.broadcast_to(_cdist_values(a, b, p, use_mm), shape))


def cdist(x1, x2, p=2.0, compute_mode=None):
    return at._cdist_forward(x1, x2, p, compute_mode)
