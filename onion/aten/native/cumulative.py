"""Scans along one dim: cumsum, cumprod, logcumsumexp.

ATen's CPU scans keep a running value in the accumulate type (double for float,
float for float16/bfloat16, int64 for integers) and round each output; NumPy's
accumulate in that dtype and one cast do the same.  The result is contiguous.
"""
from __future__ import annotations

import numpy as _np

from ...backends import backend_for
from ...core import dtype as _dt
from ..at import at
from ..iterator import resize_out, write_out
from ..structured import Plan
from ..tensor_new import empty_tensor, wrap
from ..view_geometry import wrap_dim
from .reductions import _cast
from .workspace import scratch

_int64 = _dt.int64
_SCAN_ACC = {_dt.float32: _np.float64, _dt.float16: _np.float32, _dt.bfloat16: _np.float32,
             _dt.complex64: _np.complex128}


def _scan_acc(dtype):
    """The accumulate dtype of a scan producing ``dtype``."""
    if dtype.category < 2:
        return _int64.np
    return _SCAN_ACC.get(dtype, dtype.np)


def _scan_dtype(self_dtype, dtype):
    if dtype is not None:
        return dtype
    return _int64 if self_dtype.category < 2 else self_dtype


def _scan_meta(name, self, dim, dtype):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    out_dtype = _scan_dtype(impl.dtype, dtype)
    err = _bool_error(name, out_dtype, impl.device)
    rule = None if dtype is not None else _scan_out_rule
    return Plan(shape, out_dtype, impl.device, None, d if shape else None, rule, err, (name, self))


def _bool_error(name, out_dtype, device):
    if out_dtype is _dt.bool:
        suffix = "cuda" if device.type == "cuda" else "cpu"
        return NotImplementedError(f'"{name}_out_{suffix}" not implemented for \'Bool\'')
    return None


def _scan_out_rule(plan, odt, xp):
    """Without ``dtype=``, an ``out=`` (or in-place self) of another dtype is the dtype the scan runs in."""
    name, self = plan.args
    err = _bool_error(name, odt, plan.device)
    if err is not None:
        raise err
    if xp is None:
        return None
    p = Plan(plan.shape, odt, plan.device, None, plan.extra)
    return _SCANS[name](xp, p, self, plan.extra, odt)


def _scan_input(xp, plan, self, dtype):
    impl = self._impl
    a = impl._array
    if dtype is not None and dtype is not impl.dtype:
        a = _cast(xp, a, impl.dtype, dtype)
    elif plan.dtype is not impl.dtype:
        a = a.astype(plan.dtype.np)
    return a


def meta_cumsum(self, dim, dtype=None):
    return _scan_meta("cumsum", self, dim, dtype)


def _scan(xp, plan, self, dtype, scan):
    """The scan along the planned axis in PyTorch's accumulation dtype (a 0-dim input is its own scan)."""
    if plan.impl_error is not None:
        return None
    a = _scan_input(xp, plan, self, dtype)
    axis = plan.extra
    if axis is None:
        return a.astype(plan.dtype.np, copy=True)
    if scan is _np.cumsum and a.dtype == _np.float32 and plan.dtype is _dt.float32 and a.size >= _EXACT_MIN:
        r = _exact_float32_cumsum(a, axis)
        if r is not None:
            return r
    with _np.errstate(over="ignore", invalid="ignore"):
        r = scan(a, axis=axis, dtype=_scan_acc(plan.dtype))
    if scan is _np.cumsum and r.dtype.kind in "fc":
        r += 0.0        # ATen's running sum starts at +0, so it never yields -0.0 (NumPy's starts at x[0])
    return r


_EXACT_MIN = 4096        # below this the float64 scan is as quick


_BLOCK = 1 << 18         # a 1-D scan runs a block at a time: its int64 work array (2 MiB) stays in cache


def _exact_float32_cumsum(a, axis):
    """float32 cumsum as ATen computes it (a float64 running sum, each partial sum rounded to float32), by an
    int64 scan where that is provably the same; None where it is not (NaN/inf, subnormals, a dynamic range
    over 2^50, sums near int64's range).  Every value is an integer multiple of q, the ulp of the smallest
    nonzero magnitude, so in units of q the values are integers and their int64 prefix sums P are exact.
    While every P_i is exactly representable in float64, each float64 addition of the running sum is exact
    too, so the running sum IS P_i * q, and the result is P_i * q rounded once to float32.  An int64 scan
    runs at vector speed, where NumPy's float64 one is bound by the latency of each addition.  A 1-D scan
    finds where ATen's float64 sum first rounds (``_first_rounding``) and carries that rounded sum on into
    a fresh int64 scan; an n-D scan takes the int64 path only when every |P_i| < 2^53."""
    hi = _largest_magnitude(a)               # |a| as a bit pattern: the largest, and whether any is NaN/inf
    if hi >= 0x7F800000 or hi == 0:
        return None
    chunks = None
    if a.ndim == 1:
        chunks = _chunk_smallest(a)
        lo = int(chunks.min())
        if lo == 0:                          # a zero somewhere
            lo = _smallest_magnitude(a)
    else:
        lo = _smallest_magnitude(a)
    emin, emax = lo >> 23, hi >> 23          # biased exponents of the smallest nonzero and largest magnitude
    if emin < 25 or emax - emin + 24 > 50:   # q below float32's normal range, or values >= 2^50 q
        return None
    q = 2.0 ** (emin - 150)
    if a.ndim == 1:
        return _exact_cumsum_1d(a, q, emin, chunks)
    p = _units_of(a, q, scratch("cumsum.p", a.shape, _np.float64))
    _np.cumsum(p, axis=axis, out=p)
    if max(int(p.max()), -int(p.min())) >= _EXACT_P:
        return None
    out = p.astype(_np.float32)              # P rounded once, then scaled by a power of two (exact: q is normal)
    out *= _np.float32(q)
    return out


_EXACT_P = 1 << 53


def _largest_magnitude(a):
    """The largest |a| (float32) as a bit pattern, from two reductions of its bits read as int32 (the largest
    nonnegative) and as uint32 (the negative of largest magnitude), no temporary."""
    sp, un = int(a.view(_np.int32).max()), int(a.view(_np.uint32).max())
    return max(sp if sp >= 0 else 0, un & 0x7FFFFFFF if un >= 0x80000000 else 0)


def _smallest_magnitude(a):
    """The smallest nonzero |a| (float32, not all zero) as a bit pattern: the smallest nonnegative bits read as
    uint32 and the smallest magnitude negative bits read as int32 (-0.0 is int32's minimum); with a zero
    among them, |a|'s bits less one (a zero wraps to the top)."""
    up, sn = int(a.view(_np.uint32).min()), int(a.view(_np.int32).min())
    pos = up if up < 0x80000000 else 0x7FFFFFFF
    neg = sn & 0x7FFFFFFF if sn < 0 else 0x7FFFFFFF
    if pos and neg:
        return min(pos, neg)
    return int(_magnitude_bits(a).min()) + 1


_CHUNK = 1 << 12


def _chunk_smallest(a):
    """For each run of ``_CHUNK`` elements of the 1-D float32 ``a`` (the last one shorter), the smallest
    nonzero |a| as a bit pattern, or 0 where the run holds a zero: the same two reductions as
    ``_smallest_magnitude``, a row at a time (as quick as over the whole)."""
    n = a.size
    k = n // _CHUNK
    u, v = a.view(_np.uint32), a.view(_np.int32)
    up = _np.empty(k + 1, _np.uint32)
    sn = _np.empty(k + 1, _np.int32)
    if k:
        _np.minimum.reduce(u[:k * _CHUNK].reshape(k, _CHUNK), axis=1, out=up[:k])
        _np.minimum.reduce(v[:k * _CHUNK].reshape(k, _CHUNK), axis=1, out=sn[:k])
    if k * _CHUNK < n:
        up[k], sn[k] = u[k * _CHUNK:].min(), v[k * _CHUNK:].min()
    else:
        up, sn = up[:k], sn[:k]
    pos = _np.where(up < _np.uint32(0x80000000), up, _np.uint32(0x7FFFFFFF))
    neg = _np.where(sn < 0, (sn & 0x7FFFFFFF).view(_np.uint32), _np.uint32(0x7FFFFFFF))
    return _np.minimum(pos, neg)


def _magnitude_bits(a):
    """|a|'s bit patterns less one (uint32; a zero wraps to the top), in a work array."""
    bits = _np.bitwise_and(a.view(_np.uint32), _np.uint32(0x7FFFFFFF), out=scratch("cumsum.bits", a.shape, _np.uint32))
    bits -= _np.uint32(1)
    return bits


def _units_of(a, q, work):
    """``a`` (float32, every value a multiple of q and below 2^50 q) as int64 multiples of q, in ``work``
    (float64): v + 1.5 * 2^52 q is exact with ulp q, and within that binade the bit patterns differ by v / q."""
    magic = 1.5 * 2.0 ** 52 * q
    _np.copyto(work, a)
    work += magic
    p = work.view(_np.int64)
    p -= _np.float64(magic).view(_np.int64)
    return p


def _exact_cumsum_1d(a, q, emin, chunks):
    """The 1-D int64 scan, a block at a time (``emin``: the smallest nonzero magnitude's biased exponent; q its
    ulp; ``chunks``: ``_chunk_smallest(a)``).  A block's results are P * q rounded once to float32;
    while they stay below 2^53 q every P_i is exact in float64 (no test of the int64 sums is needed).  A
    block that reaches 2^53 q is tested (``_first_rounding``); at the first sum that float64 rounds, the
    rounded sum (ATen's running sum there) is carried into a fresh scan from the next element."""
    n = a.size
    out = _np.empty(n, _np.float32)
    fq = _np.float32(q)
    lim = _np.float32(float(_EXACT_P) * q)       # a power of two (inf if past float32: then so is any sum past it)
    magic = 1.5 * 2.0 ** 52 * q
    mb = _np.float64(magic).view(_np.int64)
    work = scratch("cumsum.p", (min(n, _BLOCK),), _np.float64)
    carry = 0
    s = 0
    restarts = 0
    while s < n:
        e = min(n, s + _BLOCK)
        w = work[:e - s]
        _np.copyto(w, a[s:e])                 # v + 1.5 * 2^52 q: exact with ulp q; its bits less mb are v / q
        w += magic
        p = w.view(_np.int64)
        p -= mb
        p[0] += carry                        # integers: adding the carry first changes nothing
        _np.cumsum(p, out=p)
        o = out[s:e]
        _np.copyto(o, p, casting="unsafe")   # P rounded once, then scaled by a power of two (exact: q is normal)
        o *= fq
        hi, lo = o.max(), o.min()
        if hi >= lim or lo <= -lim:
            j = _first_rounding(p, o, max(float(hi), -float(lo)) / q, q, carry, a[s:e], emin,
                                int(chunks[s // _CHUNK:(e - 1) // _CHUNK + 1].min()))
            if j is None:
                return None
            if j < e - s:
                # ATen's float64 sum rounds at s + j: carry on from that rounded sum
                rounded = float(int(p[j]))
                out[s + j] = _np.float32(rounded * q)
                carry = int(rounded)
                s += j + 1
                restarts += 1
                if restarts > _RESTARTS and s < n:      # many roundings: ATen's steps one by one from here
                    tail = a[s:].astype(_np.float64)
                    tail[0] += rounded * q
                    _np.cumsum(tail, out=tail)
                    out[s:] = tail
                    return out
                continue
        carry = int(p[-1])
        s = e
    return out


_RESTARTS = 16


def _first_rounding(p, o, top_est, q, carry, a, emin, smallest):
    """The first i where the exact prefix sum p[i] (int64, in units of q, the carry included) is not a float64,
    len(p) if there is none, None where the sums get near int64's range (``o``: p * q rounded to float32,
    ``top_est``: its largest magnitude over q, ``a`` the block's values, ``smallest``: a lower bound of their
    smallest nonzero magnitude's bits).  With top the largest |p[i]| and m = 2^(bits of top - 53),
    a value whose ulp is at least m q (biased exponent >= emin + log2 m) is a multiple of m; up to the first
    finer value every p[i] is the carry plus multiples of m: with the carry a multiple of m all are float64s,
    else (the carry an odd multiple of 2^t, t < log2 m) exactly those below 2^(53 + t) are.  From the first
    finer value on, a float64 round trip tells."""
    k = p.size
    top_bits = 0
    if top_est < 2.0 ** 60:                 # |p| from its float32 rounding, unless that straddles a power of two
        lo_t, hi_t = int(top_est * (1 - 2.0 ** -23)), int(top_est * (1 + 2.0 ** -23)) + 1
        if lo_t.bit_length() == hi_t.bit_length():
            top_bits = hi_t.bit_length()
    if not top_bits:
        top = max(int(p.max()), -int(p.min()))
        if top >= 1 << 61:                   # steps are < 2^50: below 2^61 throughout, no int64 wrap-around
            return None
        top_bits = top.bit_length()
    if top_bits <= 53:
        return k
    sh = top_bits - 53
    fine = (emin + sh) << 23                 # |a| bit patterns below this are finer than m q
    i0 = k
    if smallest < fine and _smallest_magnitude(a) < fine:
        i0 = int(_np.argmax(_magnitude_bits(a) < _np.uint32(fine - 1)))
    t = (carry & -carry).bit_length() - 1 if carry else sh
    if t < sh and i0:
        lim = _np.float32(2.0 ** (53 + t) * q)
        if _np.isinf(lim):
            i0 = 0
        else:
            head = o[:i0]
            big = (head >= lim) | (head <= -lim)
            if big.any():
                return int(_np.argmax(big))
    if i0 == k:
        return k
    v = int(p[i0])
    if float(v) != v:                        # most often the finer value itself is where the sum rounds
        return i0
    rest = p[i0:]
    bad = rest.astype(_np.float64).astype(_np.int64) != rest
    return i0 + int(_np.argmax(bad)) if bad.any() else k


def cumsum_impl(xp, plan, self, dim, dtype=None):
    return _scan(xp, plan, self, dtype, xp.cumsum)


def meta_cumprod(self, dim, dtype=None):
    return _scan_meta("cumprod", self, dim, dtype)


def cumprod_impl(xp, plan, self, dim, dtype=None):
    return _scan(xp, plan, self, dtype, xp.cumprod)


_SCANS = {"cumsum": cumsum_impl, "cumprod": cumprod_impl}


# --------------------------------------------------------------------------
# logcumsumexp
# --------------------------------------------------------------------------

def _logcumsumexp_check(self):
    dt = self._impl.dtype
    if dt.category < 2:
        suffix = "cuda" if self._impl.device.type == "cuda" else "cpu"
        raise NotImplementedError(f'"logcumsumexp_out_{suffix}" not implemented for \'{dt.scalar_type_name}\'')


def _logcumsumexp_array(xp, a, axis, dtype):
    acc = _scan_acc(dtype)
    a = a.astype(acc)
    if dtype.is_complex:
        # ATen adds each term to the running value with its own complex log-add-exp, whose imaginary
        # part keeps the larger operand's branch; that choice depends on the order, so the scan runs
        # step by step along the dim (vectorised over the others)
        a = xp.moveaxis(a, axis, 0)
        out = xp.empty_like(a)
        r = out[0] = a[0]
        with _np.errstate(over="ignore", invalid="ignore"):
            for k in range(1, a.shape[0]):
                r = out[k] = _complex_log_add_exp(xp, r, a[k])
        return xp.moveaxis(out, 0, axis).astype(dtype.np)
    with _np.errstate(over="ignore", invalid="ignore"):
        return xp.logaddexp.accumulate(a, axis=axis).astype(dtype.np)


def _complex_log_add_exp(xp, x, y):
    swap = xp.real(x) < xp.real(y)
    lo = xp.where(swap, x, y)
    hi = xp.where(swap, y, x)
    same_inf = (lo == hi) & ~xp.isfinite(lo)
    return xp.where(same_inf, x, hi + xp.log1p(xp.exp(lo - hi)))


def _logcumsumexp_result(self, dim):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    a = impl._array
    if not shape or a.size == 0:
        return a.copy()
    xp = _np if impl.device.type == "cpu" else backend_for(impl.device).xp
    return _logcumsumexp_array(xp, a, d, impl.dtype)


def _logcumsumexp_cpu(self, dim):
    _logcumsumexp_check(self)
    impl = self._impl
    r = _logcumsumexp_result(self, dim)
    return wrap(r if r.ndim == 0 or r.flags.c_contiguous else r.copy(), impl.dtype, impl.device)


def _logcumsumexp_out_cpu(self, dim, out):
    _logcumsumexp_check(self)
    r = _logcumsumexp_result(self, dim)
    return write_out("_logcumsumexp", out, r, self._impl.dtype)


def logcumsumexp(self, dim):
    _logcumsumexp_check(self)
    impl = self._impl
    if impl.device.type == "meta":
        wrap_dim(dim, impl._array.ndim)
        return empty_tensor(tuple(impl._array.shape), impl.dtype, impl.device)
    return at._logcumsumexp(self, dim)


def logcumsumexp_out(self, dim, out):
    if out._impl.device is not self._impl.device:
        raise RuntimeError(f"Attempting to copy from device {self._impl.device} to device {out._impl.device}, but "
                           "cross-device copies are not allowed!")
    if out._impl.dtype is not self._impl.dtype:
        raise RuntimeError(f"expected scalar_type {self._impl.dtype.scalar_type_name} but found "
                           f"{out._impl.dtype.scalar_type_name}")
    _logcumsumexp_check(self)
    impl = self._impl
    if impl.device.type == "meta":
        wrap_dim(dim, impl._array.ndim)
        resize_out(out, tuple(impl._array.shape))
        return out
    return at._logcumsumexp_out(self, dim, out)


# --------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------

def _size(t, dim):
    return t._impl._array.shape[dim]


def _narrow(t, dim, start, length):
    return at.slice_Tensor(t, dim, start, start + length, 1)


def _concat(tensors, dim):
    """``tensors`` joined along ``dim`` (a fresh tensor filled through views, so autograd follows copy_)."""
    first = tensors[0]._impl
    from ...core.promotion import promote_types
    dt = first.dtype
    for t in tensors[1:]:
        dt = promote_types(dt, t._impl.dtype)
    shape = list(first._array.shape)
    shape[dim] = sum(_size(t, dim) for t in tensors)
    out = at.empty_memory_format(shape, dt, None, first.device, None, None)
    pos = 0
    for t in tensors:
        n = _size(t, dim)
        at.copy_(_narrow(out, dim, pos, n), t, False)
        pos += n
    return out


def _diff_checks(self, n, dim, prepend, append):
    nd = self._impl._array.ndim
    if nd < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is not None and other._impl._array.ndim != nd:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    return wrap_dim(dim, nd)


def _diff_input(self, n, dim, prepend, append):
    d = _diff_checks(self, n, dim, prepend, append)
    joined = [t for t in (prepend, self, append) if t is not None]
    for t in joined[1:]:        # checked in cat's order: the first tensor's device is the expected one
        if t._impl.device is not joined[0]._impl.device:
            raise RuntimeError(f"Tensor on device {t._impl.device} is not on the expected device "
                               f"{joined[0]._impl.device}!")
    if n and (prepend is not None or append is not None):
        self = _concat([t for t in (prepend, self, append) if t is not None], d)
    return self, d


def _diff_step(out, d, out_tensor=None):
    length = _size(out, d)
    hi, lo = _narrow(out, d, 1, length - 1), _narrow(out, d, 0, length - 1)
    if out._impl.dtype is _dt.bool:
        return at.ne_Tensor(hi, lo) if out_tensor is None else at.ne_Tensor_out(hi, lo, out_tensor)
    return at.sub_Tensor(hi, lo, 1) if out_tensor is None else at.sub_out(hi, lo, 1, out_tensor)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    if n == 0:
        _diff_input(self, n, dim, prepend, append)
        return at.clone(self, None)       # n=0 leaves the input as it is, prepend/append unused
    out, d = _diff_input(self, n, dim, prepend, append)
    for _ in range(n):
        if _size(out, d) == 0:
            break
        out = _diff_step(out, d)
    return out


def diff_out(self, n=1, dim=-1, prepend=None, append=None, out=None):
    if out._impl.device is not self._impl.device:
        raise RuntimeError(f"Attempting to copy from device {self._impl.device} to device {out._impl.device}, but "
                           "cross-device copies are not allowed!")
    r, d = _diff_input(self, n, dim, prepend, append)
    for k in range(n):
        if _size(r, d) == 0:
            break
        if k == n - 1 and _size(r, d) > 0:
            return _diff_step(r, d, out)      # the last difference written by sub.out, as PyTorch's
        r = _diff_step(r, d)
    from ..iterator import check_out_dtype
    check_out_dtype(r._impl.dtype, out._impl.dtype)
    resize_out(out, tuple(r._impl._array.shape))
    return at.copy_(out, r, False)


# --------------------------------------------------------------------------
# trapezoid / trapz / cumulative_trapezoid
# --------------------------------------------------------------------------

def _real_dx(name, dx):
    if isinstance(dx, complex):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _no_bool(name, *ts):
    if any(t._impl.dtype is _dt.bool for t in ts):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")


def _zeros_without(y, dim):
    shape = list(y._impl._array.shape)
    del shape[dim]
    return at.zeros(shape, y._impl.dtype, None, y._impl.device, None)


def _trapezoid_dx(y, dx, dim):
    # (sum of all samples - half of both ends) * dx
    ends = at.add_Tensor(at.select_int(y, dim, 0), at.select_int(y, dim, -1), 1)
    return at.mul_Scalar(at.sub_Tensor(at.sum_dim_IntList(y, [dim], False, None), at.mul_Scalar(ends, 0.5), 1), dx)


def _x_along(name, x, y, dim):
    """x shaped to broadcast against y along ``dim``."""
    if x._impl.device is not y._impl.device:
        from ..iterator import device_mismatch
        raise device_mismatch(y._impl.device, x._impl.device)
    ny = y._impl._array.ndim
    xs = tuple(x._impl._array.shape)
    if len(xs) == 1:
        if xs[0] != _size(y, dim):
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * ny
        shape[dim] = xs[0]
        return at.view(x, shape)
    if len(xs) < ny:
        return at.view(x, [1] * (ny - len(xs)) + list(xs))
    return x


def trapezoid_dx(y, dx=1, dim=-1):
    _real_dx("trapezoid", dx)
    d = wrap_dim(dim, y._impl._array.ndim)
    _no_bool("trapezoid", y)
    if _size(y, d) == 0:
        return _zeros_without(y, d)
    return _trapezoid_dx(y, dx, d)


def trapezoid_x(y, x, dim=-1):
    d = wrap_dim(dim, y._impl._array.ndim)
    if _size(y, d) == 0:
        return _zeros_without(y, d)
    _no_bool("trapezoid", y, x)
    xv = _x_along("trapezoid", x, y, d)
    length = _size(xv, d)
    dx = at.sub_Tensor(_narrow(xv, d, 1, length - 1), _narrow(xv, d, 0, length - 1), 1)
    n = _size(y, d)
    pair = at.add_Tensor(_narrow(y, d, 1, n - 1), _narrow(y, d, 0, n - 1), 1)
    return at.div_Scalar(at.sum_dim_IntList(at.mul_Tensor(dx, pair), [d], False, None), 2.0)


def trapz_x(y, x, dim=-1):
    return trapezoid_x(y, x, dim)


def trapz_dx(y, dx=1.0, dim=-1):
    return trapezoid_dx(y, dx, dim)


def cumulative_trapezoid_dx(y, dx=1, dim=-1):
    _real_dx("cumulative_trapezoid", dx)
    d = wrap_dim(dim, y._impl._array.ndim)
    _no_bool("cumulative_trapezoid", y)
    n = _size(y, d)
    if n == 0:
        return at.clone(y, None)
    pair = at.add_Tensor(_narrow(y, d, 1, n - 1), _narrow(y, d, 0, n - 1), 1)
    return at.cumsum(at.mul_Tensor(at.mul_Scalar(pair, 0.5), _scalar_like(dx, pair)), d, None)


def _scalar_like(v, like):
    from ..tensor_new import scalar_to_tensor
    return scalar_to_tensor(v, like._impl.device)


def cumulative_trapezoid_x(y, x, dim=-1):
    d = wrap_dim(dim, y._impl._array.ndim)
    _no_bool("cumulative_trapezoid", y, x)
    n = _size(y, d)
    if n == 0:
        return at.clone(y, None)
    xv = _x_along("cumulative_trapezoid", x, y, d)
    length = _size(xv, d)
    dx = at.sub_Tensor(_narrow(xv, d, 1, length - 1), _narrow(xv, d, 0, length - 1), 1)
    pair = at.add_Tensor(_narrow(y, d, 1, n - 1), _narrow(y, d, 0, n - 1), 1)
    return at.cumsum(at.div_Scalar(at.mul_Tensor(dx, pair), 2.0), d, None)
