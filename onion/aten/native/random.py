"""Random sampling operators, drawing PyTorch's own CPU stream (see onion/core/generator.py).

Each kernel takes its raw draws from the generator as one array, in the order PyTorch's serial CPU
loop takes them (TensorIterator's element order), and transforms them as PyTorch's
TransformationHelper does: the low ``digits`` bits of a draw scaled to [0, 1) (24 bits from a 32-bit
draw for float32, 53 bits from a 64-bit draw for float64), integers as ``draw % range + from``.  Where
PyTorch's compiled loop fuses ``x * a + b`` into one FMA, the sum is formed in wider precision and
rounded once.  Fisher-Yates (randperm) is sequential: its draws are one array, its swaps a Python loop.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ...core import dtype as _dt
from ...core import geometry as geo
from ...core import loops
from ...core.device import canonical
from ...core.generator import Generator, get_generator_or_default
from .. import iterator as _it
from ..at import at
from ..tensor_new import empty_tensor
from .factories import _check_size, _like

_TWO_PI = 2.0 * math.pi
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_U32 = np.uint64(0xFFFFFFFF)


# ----------------------------------------------------------------------------- plumbing
def _generator(gen, device) -> Generator | None:
    """The generator a kernel draws from; None on Meta (nothing is drawn)."""
    if device.type == "meta":
        return None
    g = get_generator_or_default(gen)
    if not isinstance(g, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(g).__name__}")
    if g.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found '{g.device.type}'")
    return g


def _check_copy_device(src, out) -> None:
    """An out= filled from a result computed on ``src``'s device: PyTorch refuses a cross-device copy."""
    a, b = src._impl.device, out._impl.device
    if a != b:
        raise RuntimeError(f"Attempting to copy from device {a} to device {b}, but cross-device copies are not "
                           "allowed!")


def _check_normal_out(out) -> None:
    dt = out._impl.dtype
    if not dt.is_complex:
        _float_digits(dt, "normal_kernel_cpu")


def _check_combines_into(out, *operands) -> None:
    """out.mul_(std) / out.add_(mean) will succeed: each operand's promotion with out casts back to out (checked
    before anything is drawn or written, so a refused call leaves out as it was)."""
    for t in operands:
        _it.check_out_dtype(_it.common_dtype2(out._impl, t._impl), out._impl.dtype)


def _check_same_device(t, expected) -> None:
    """``expected`` (std, multiplied in) may be a CPU 0-dim tensor next to tensors of another device."""
    a, b = t._impl.device, expected._impl.device
    if a != b and not (b.type == "cpu" and expected._impl._array.ndim == 0):
        raise RuntimeError(f"Tensor on device {a} is not on the expected device {b}!")


def _begin_inplace(self):
    impl = self._impl
    impl.check_writable()
    _it.check_internal_overlap(impl)
    return impl


def _iter_view(arr, shape, strides):
    """``arr`` transposed so that C order is TensorIterator's order over it (smallest stride innermost;
    equal strides put the smaller size first), so a flat array of draws lands where PyTorch puts it."""
    nd = len(shape)
    if nd < 2 or arr.flags.c_contiguous:
        return arr

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 != 0 and s1 != 0:
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
        return 1 if shape[d0] > shape[d1] else 0
    perm = geo.sort_dims(list(range(nd - 1, -1, -1)), should_swap)
    return arr.transpose(perm[::-1])


def _store(impl, values) -> None:
    """Write the flat ``values`` (one per element, in draw order) into the tensor, cast as C++ casts."""
    arr = impl._array
    view = _iter_view(arr, tuple(arr.shape), impl.strides)
    vals = values.reshape(view.shape)
    if impl.dtype.category == 1 and vals.dtype.kind == "f":
        vals = np.trunc(vals)
        with np.errstate(invalid="ignore"):
            vals = vals.astype(np.int64)
    _it.xp_copy(view, vals)


def _ordered(impl, arr):
    """The tensor's values (from ``arr`` shaped like it) flattened in TensorIterator's order."""
    return np.ascontiguousarray(_iter_view(arr, tuple(arr.shape), impl.strides)).reshape(-1)


def _finish(self):
    self._impl.bump_version()
    return self


def _fresh(t):
    """A factory's result: it was filled in place, but a new tensor starts at version 0 (as PyTorch's,
    whose factories fill below the ADInplaceOrView key)."""
    t._impl._vc = None
    return t


def _two_prod(a, b):
    """p, e with p = fl(a * b) and p + e == a * b exactly (Veltkamp splitting, Dekker's product)."""
    p = a * b

    def split(v):
        t = 134217729.0 * v
        hi = t - (t - v)
        return hi, v - hi
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma_f64(x, a, b):
    """``x * a + b`` rounded once, as PyTorch's FMA-contracted loops compute it (float64): the product's
    rounding error and the sum's are carried exactly and added back before the last rounding."""
    if isinstance(b, float) and b == 0.0:
        return x * a
    if isinstance(a, float) and a == 1.0:
        return x + b
    x = np.asarray(x, np.float64)
    p, e1 = _two_prod(x, np.float64(a))
    s = p + b
    bb = s - p
    e2 = (p - (s - bb)) + (b - bb)
    return s + (e1 + e2)


def _libm(np_fn, math_fn, x, slack=0.06):
    """``math_fn`` (the C library's double function, which PyTorch calls) over an array: evaluated in long
    double and rounded, except where that value lies within ``slack`` ulp of a rounding midpoint, where the
    C library's own (not always correctly rounded) answer is asked for element by element."""
    wide = np_fn(np.asarray(x, np.longdouble))
    y = wide.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        frac = np.abs((wide - y) / np.spacing(np.abs(y)).astype(np.longdouble)).astype(np.float64)
    near = np.flatnonzero(np.isfinite(y) & (np.abs(frac - 0.5) < slack))
    if near.size:
        xs = np.asarray(x, np.float64).reshape(-1)
        flat = y.reshape(-1)
        flat[near] = [math_fn(v) for v in xs[near].tolist()]
    return y


def _uniform_units(g, n, digits, wide: bool):
    """n draws as uniform_real(val, 0, 1) builds them: (val & (2^digits - 1)) * 2^-digits (float64)."""
    if wide:
        return (g.random64(n) & np.uint64((1 << digits) - 1)).astype(np.float64) * (2.0 ** -digits)
    return (g.random(n) & np.uint32((1 << digits) - 1)).astype(np.float64) * (2.0 ** -digits)


def _uniform_float(g, n):
    """n float uniforms from 32-bit draws (24 bits each), exact in float32."""
    return (g.random(n) & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def _uniform_double(g, n):
    return _uniform_units(g, n, 53, True)


def _float_digits(dt, opname):
    d = _DIGITS.get(dt.name)
    if d is None:
        raise NotImplementedError(f'"{opname}" not implemented for \'{dt.scalar_type_name}\'')
    return d


def _real_view(impl):
    """A complex tensor's float view (view_as_real), as PyTorch's complex uniform_/normal_ use."""
    from ...aten.tensor_new import wrap_cpu
    arr = impl._array
    rdt = impl.dtype.to_real()
    real = arr.reshape(arr.shape or (1,)).view(rdt.np).reshape(tuple(arr.shape) + (2,)) if arr.flags.c_contiguous else \
        np.lib.stride_tricks.as_strided(arr.real, tuple(arr.shape) + (2,), tuple(arr.strides) + (arr.itemsize // 2,))
    return wrap_cpu(real, rdt)._impl


# The C library's log1p (fdlibm's reduction and degree-7 polynomial in s = f / (2 + f), with the one
# multiply-add the compiler fuses), which PyTorch's Box-Muller and exponential samplers call: vectorised
# so that onion's float64 samples are PyTorch's to the bit.
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_LP = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
       1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)


def _high_word(v):
    return (v.view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32).astype(np.int64)


def _set_high_word(v, hi):
    return ((v.view(np.uint64) & _U32) | (hi.astype(np.uint64) << np.uint64(32))).view(np.float64)


def _log1p_libm(x):
    """log1p(x) for an array of x > -1 (our draws give x in (-1, 0]), as glibc computes it."""
    x = np.ascontiguousarray(x, np.float64)
    hx = _high_word(x)
    ax = hx & 0x7FFFFFFF
    tiny = (hx < 0x3FDA827A) & (ax < 0x3E200000)                 # |x| < 2^-29
    direct = (hx < 0x3FDA827A) & ~tiny & ((hx > 0) | (hx <= -1076707645))   # -0.2929 < x < 0.41422
    u = np.where(hx >= 0x43400000, x, 1.0 + x)
    hu = _high_word(u)
    k = (hu >> 20) - 1023
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(hx >= 0x43400000, 0.0, np.where(k > 0, 1.0 - (u - x), x - (u - 1.0)) / u)
    hu &= 0x000FFFFF
    low = hu < 0x6A09E
    u = np.where(low, _set_high_word(u, hu | 0x3FF00000), _set_high_word(u, hu | 0x3FE00000))
    k = np.where(low, k, k + 1)
    hu = np.where(low, hu, (0x00100000 - hu) >> 2)
    f = np.where(direct, x, u - 1.0)
    k = np.where(direct, 0, k)
    hu = np.where(direct, 1, hu)
    c = np.where(direct, 0.0, c)
    kf = k.astype(np.float64)
    hfsq = 0.5 * f * f
    with np.errstate(divide="ignore", invalid="ignore"):
        s = f / (2.0 + f)
    z = s * s
    z2 = z * z
    z4 = z2 * z2
    r1 = _fma_f64_arrays(z, _LP[0], z2 * (_LP[1] + z * _LP[2]))
    r = r1 + z4 * (_LP[3] + z * _LP[4]) + (z4 * z2) * (_LP[5] + z * _LP[6])
    main = np.where(k == 0, f - (hfsq - s * (hfsq + r)),
                    kf * _LN2_HI - ((hfsq - (s * (hfsq + r) + (kf * _LN2_LO + c))) - f))
    r0 = hfsq * (1.0 - 0.66666666666666666 * f)                  # |f| < 2^-20
    small = np.where(k == 0, f - r0, kf * _LN2_HI - ((r0 - (kf * _LN2_LO + c)) - f))
    small = np.where(f == 0, np.where(k == 0, 0.0, kf * _LN2_HI + (c + kf * _LN2_LO)), small)
    out = np.where(hu == 0, small, main)
    out = np.where(tiny, np.where(ax < 0x3C900000, x, x - x * x * 0.5), out)
    with np.errstate(invalid="ignore"):
        return np.where(x == -1.0, -np.inf, np.where(x < -1.0, np.nan, out))


def _fma_f64_arrays(a, b, c):
    p, e1 = _two_prod(a, np.float64(b) if np.ndim(b) == 0 else b)
    s = p + c
    bb = s - p
    e2 = (p - (s - bb)) + (c - bb)
    return s + (e1 + e2)


def _safe_log(v):
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)


def _safe_exp(v):
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


# ----------------------------------------------------------------------------- uniform_
def _check_uniform(dt, frm, to):
    if dt.category < 2 or dt.is_complex:
        pass
    if not frm <= to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_g(frm)} > to={_g(to)}")
    if dt.category == 2 or dt.is_complex:
        limit = float(np.finfo((dt.to_real() if dt.is_complex else dt).np).max) if dt is not _dt.bfloat16 \
            else 3.3895313892515355e38
        if to - frm > limit:
            tname = {"float32": "float", "float64": "double", "float16": "c10::Half",
                     "bfloat16": "c10::BFloat16"}[(dt.to_real() if dt.is_complex else dt).name]
            raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{tname}>::max(), but found "
                               f"to={_g(to)} and from={_g(frm)} which result in to-from to exceed the limit")


def _g(v) -> str:
    """A double as C++'s ostream prints it."""
    if v != v:
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


def _uniform_values(g, n, dt, frm, to):
    """from + x * (to - from), fused, in the dtype's opmath type (float for float32 and the reduced types);
    a value that rounds to ``to`` in the dtype becomes ``from``, keeping the range half-open as PyTorch does."""
    _float_digits(dt, "uniform_kernel_cpu")
    if dt is _dt.float64:
        x = _uniform_units(g, n, 53, True)
        vals = _fma_f64(x, float(np.float64(to) - np.float64(frm)), float(frm))
    elif frm == 0 and to == 1:
        vals = _uniform_float(g, n)         # x * 1 + 0 is x
        if dt is not _dt.float32:
            vals = vals.astype(dt.np)
    else:
        f, t = float(np.float32(frm)), float(np.float32(to))
        x = _uniform_units(g, n, 24, False)
        vals = (x * float(np.float32(t) - np.float32(f)) + f).astype(np.float32).astype(dt.np)
    lo, hi = dt.np.type(frm), dt.np.type(to)
    return np.where(vals == hi, lo, vals)


def _fill_unit_float32(g, out, n):
    """uniform_(0, 1) into a flat float32 array: 24-bit draws scaled, with no intermediate array."""
    np.bitwise_and(g.random(n), np.uint32(0xFFFFFF), out=out.view(np.uint32))
    np.multiply(out.view(np.uint32), np.float32(2.0 ** -24), out=out, casting="unsafe")


def uniform_(self, from_=0.0, to=1.0, generator=None):
    impl = _begin_inplace(self)
    dt = impl.dtype
    if dt.is_complex:
        _check_uniform(dt, from_, to)
        if impl.device.type != "meta" and impl._array.size:
            real = _real_view(impl)
            _store(real, _uniform_values(_generator(generator, impl.device), real._array.size, real.dtype, from_, to))
        return _finish(self)
    _float_digits(dt, "check_uniform_bounds")
    _check_uniform(dt, from_, to)
    g = _generator(generator, impl.device)
    arr = impl._array
    if g is not None and dt is _dt.float32 and from_ == 0 and to == 1 and arr.size and arr.flags.c_contiguous \
            and type(arr) is np.ndarray:
        _fill_unit_float32(g, arr.reshape(-1), arr.size)
    elif g is not None and impl._array.size:
        _store(impl, _uniform_values(g, impl._array.size, dt, from_, to))
    return _finish(self)


# ----------------------------------------------------------------------------- normal_
def _normal_pairs(g, n):
    """n samples of normal_distribution<double> (serial Box-Muller with the generator's cached sample)."""
    out = np.empty(n, np.float64)
    k = 0
    if n and g.next_double_normal_sample is not None:
        out[0] = g.next_double_normal_sample
        g.next_double_normal_sample = None
        k = 1
    m = n - k
    if m > 0:
        pairs = (m + 1) // 2
        u = _uniform_double(g, 2 * pairs)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * _log1p_libm(-u2))
        theta = _TWO_PI * u1
        both = np.empty(2 * pairs, np.float64)
        both[0::2] = r * np.cos(theta)
        both[1::2] = r * np.sin(theta)
        out[k:] = both[:m]
        if m % 2:
            g.next_double_normal_sample = float(both[-1])
    return out


def _box_muller_16(data, mean, std, wide=True):
    """normal_fill_16 in double over every whole block of 16 in ``data`` (uniforms, modified in place)."""
    blocks = data.reshape(-1, 16)
    u1 = 1.0 - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(-2.0 * _libm(np.log, _safe_log, u1))
    theta = _TWO_PI * u2
    c, s = radius * np.cos(theta), radius * np.sin(theta)
    blocks[:, :8] = _fma_f64(c, std, mean)
    blocks[:, 8:] = _fma_f64(s, std, mean)


def _box_muller_16_float(blocks, mean, std):
    """normal_fill_16 in float over an (m, 16) float32 array of uniforms, in place (PyTorch's AVX2 kernel
    computes log/sin/cos with its own vector approximations: the results agree to float rounding)."""
    radius = np.sqrt(np.float32(-2.0) * np.log(np.float32(1.0) - blocks[:, :8]))
    theta = np.float32(_TWO_PI) * blocks[:, 8:]
    c = radius * np.cos(theta)
    radius *= np.sin(theta)
    if std != 1.0 or mean != 0.0:
        c *= np.float32(std)
        c += np.float32(mean)
        radius *= np.float32(std)
        radius += np.float32(mean)
    blocks[:, :8] = c
    blocks[:, 8:] = radius


_SCRATCH = threading.local()
_SCRATCH_MAX = 64 << 20


def _scratch(shape, dtype):
    """A work array reused between calls (up to 64 MiB per thread): large fresh temporaries cost more in
    page faults than the arithmetic done in them."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes > _SCRATCH_MAX:
        return np.empty(shape, dtype)
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.nbytes < nbytes:
        buf = _SCRATCH.buf = np.empty(max(nbytes, 1 << 16), np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


_BLOCK8 = np.dtype((np.void, 32))      # eight float32 / uint32 values moved as one item


def _regroup(src, dst):
    """Copy an (a, b, 8) 4-byte array into a (b, a, 8) one (the two outer dims swapped): each run of eight
    moves as one 32-byte item, several times faster than NumPy's strided copy with an inner length of 8."""
    a, b = src.shape[0], src.shape[1]
    np.copyto(dst.view(_BLOCK8).reshape(b, a), src.view(_BLOCK8).reshape(a, b).T)


def _box_muller_blocks_into(raw, dst, mean, std, masked=False):
    """normal_fill's float blocks, written into ``dst`` (an (m, 2, 8) float32 view of the output): the draws
    (their low 24 bits already where ``masked``) are regrouped into first halves and second halves, every
    step then runs over contiguous arrays, and the two results are regrouped back into place.  The
    arithmetic is PyTorch's, step for step, in float32."""
    m = dst.shape[0]
    work = _scratch((4, m, 8), np.uint32)
    pair, u = work[:2], work[2:].view(np.float32)
    _regroup(raw.reshape(m, 2, 8), pair)
    if not masked:
        np.bitwise_and(pair, np.uint32(0xFFFFFF), out=pair)
    # 24-bit values: the int32 -> float32 conversion is exact (and vectorised, unlike uint32's)
    np.copyto(u, pair.view(np.int32), casting="unsafe")
    u *= np.float32(2.0 ** -24)
    spare = pair[0].view(np.float32)
    radius, theta = u[0], u[1]
    np.subtract(np.float32(1.0), radius, out=radius)
    np.log(radius, out=radius)
    radius *= np.float32(-2.0)
    np.sqrt(radius, out=radius)
    theta *= np.float32(_TWO_PI)
    np.cos(theta, out=spare)
    np.sin(theta, out=theta)
    np.multiply(radius, theta, out=theta)       # second half: radius * sin
    np.multiply(spare, radius, out=radius)      # first half: cos * radius
    if std != 1.0 or mean != 0.0:
        u *= np.float32(std)
        u += np.float32(mean)
    _regroup(u, dst)


_LOOP_MIN = 1 << 14     # from here the compiled draws pay for reading and writing the engine's state


def _normal_fill_float32(g, out, n, mean, std):
    """normal_'s float32 kernel for 16 or more contiguous elements, into the flat output array ``out``:
    n uniforms, Box-Muller over each whole block of 16, then the last 16 elements redone from 16 more."""
    whole = n - n % 16
    if whole >= _LOOP_MIN and loops.available():
        # the compiled mt19937 makes the draws and their uniforms, already split into the two halves; the
        # transcendental steps are NumPy's (vectorised); the products go straight into place
        work = _scratch((3, whole // 16, 8), np.float32)
        radius, theta, spare = work
        g.normal_uniform_halves(work[:2], _TWO_PI)
        np.log(radius, out=radius)
        radius *= np.float32(-2.0)
        np.sqrt(radius, out=radius)
        np.cos(theta, out=spare)
        np.sin(theta, out=theta)
        loops.box_muller_store(radius, theta, spare, out[:whole].reshape(-1, 2, 8), std, mean)
        if n % 16:
            g.random_low(n % 16, 24)        # the uniforms past the last whole block, drawn and not used
    else:
        raw = g.random_low(n, 24)           # the uniforms' 24 bits of every draw
        if whole:
            _box_muller_blocks_into(raw[:whole], out[:whole].reshape(-1, 2, 8), mean, std, True)
    if n % 16:
        tail = np.empty((1, 2, 8), np.float32)
        _box_muller_blocks_into(g.random_low(16, 24), tail, mean, std, True)
        out[n - 16:] = tail.reshape(-1)


def _normal_values(g, impl, n, mean, std):
    dt = impl.dtype
    _float_digits(dt, "normal_kernel_cpu")
    if n >= 16 and impl.is_contiguous():
        # normal_fill: uniforms, Box-Muller over each block of 16, the last (partial) block redone from 16
        # fresh uniforms over the last 16 elements.  float64 draws 53-bit uniforms; float32 and the reduced
        # types 24-bit ones (float32 draws all n first, the reduced types only the whole blocks)
        whole = n - n % 16
        if dt is _dt.float64:
            data = _uniform_units(g, n, 53, True)
            _box_muller_16(data[:whole], mean, std, True)
            if n % 16:
                tail = _uniform_units(g, 16, 53, True)
                _box_muller_16(tail, mean, std, True)
                data[n - 16:] = tail
            return data
        data = _uniform_float(g, n if dt is _dt.float32 else whole)
        if len(data) < n:
            data = np.concatenate([data, np.zeros(n - len(data), np.float32)])
        _box_muller_16_float(data[:whole].reshape(-1, 16), mean, std)
        if n % 16:
            tail = _uniform_float(g, 16).reshape(1, 16)
            _box_muller_16_float(tail, mean, std)
            data[n - 16:] = tail[0]
        return data
    return _fma_f64(_normal_pairs(g, n), float(std), float(mean))


def _check_normal_std(std, name="normal"):
    if not std >= 0.0:
        raise RuntimeError(f"{name} expects std >= 0.0, but found std {_g(std)}")


def normal_(self, mean=0.0, std=1.0, generator=None):
    impl = _begin_inplace(self)
    _check_normal_std(std)
    if impl.dtype.is_complex:
        real = _real_view(impl) if impl.device.type != "meta" else None
        g = _generator(generator, impl.device)
        if g is not None and impl._array.size:
            _store(real, _normal_values(g, real, real._array.size, mean, std / math.sqrt(2)))
        return _finish(self)
    _float_digits(impl.dtype, "normal_kernel_cpu")
    g = _generator(generator, impl.device)
    n = impl._array.size
    if g is not None and n:
        arr = impl._array
        if impl.dtype is _dt.float32 and n >= 16 and arr.flags.c_contiguous and type(arr) is np.ndarray:
            _normal_fill_float32(g, arr.reshape(-1), n, mean, std)
        else:
            _store(impl, _normal_values(g, impl, n, mean, std))
    return _finish(self)


def _check_std_tensor(std):
    if std._impl.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if std._impl.device.type != "meta" and std._impl._array.size and not (std._impl._array >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _check_float_tensor(t, what):
    if t._impl.dtype.category != 2:
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{t._impl.dtype.scalar_type_name}\'')


def normal_Tensor_float(mean, std=1.0, generator=None):
    _check_normal_std(std)
    out = _like(mean, None, None, "contiguous_format")
    return _fresh(normal_Tensor_float_out(mean, std, generator, out))


def normal_Tensor_float_out(mean, std=1.0, generator=None, out=None):
    _check_normal_std(std)
    _check_copy_device(mean, out)
    _check_normal_out(out)
    _check_combines_into(out, mean)
    _it.resize_out(out, _it.broadcast_operands([tuple(mean._impl._array.shape), tuple(out._impl._array.shape)]))
    normal_(out, 0.0, std, generator)
    at.add__Tensor(out, mean, 1)
    return out


def normal_float_Tensor(mean, std, generator=None):
    _check_std_tensor(std)
    out = _like(std, None, None, "contiguous_format")
    return _fresh(normal_float_Tensor_out(mean, std, generator, out))


def normal_float_Tensor_out(mean, std, generator=None, out=None):
    _check_copy_device(std, out)
    _check_std_tensor(std)
    _check_normal_out(out)
    _check_combines_into(out, std)
    _it.resize_out(out, tuple(std._impl._array.shape))
    normal_(out, 0.0, 1.0, generator)
    at.mul__Tensor(out, std)
    at.add__Scalar(out, mean, 1)
    return out


def normal_Tensor_Tensor(mean, std, generator=None):
    _check_same_device(mean, std)
    _check_std_tensor(std)
    shape = _it.broadcast_operands([tuple(mean._impl._array.shape), tuple(std._impl._array.shape)])
    out = empty_tensor(shape, mean._impl.dtype, mean._impl.device)
    return _fresh(normal_Tensor_Tensor_out(mean, std, generator, out))


def normal_Tensor_Tensor_out(mean, std, generator=None, out=None):
    _check_copy_device(mean, out)
    _check_same_device(mean, std)
    _check_std_tensor(std)
    _check_normal_out(out)
    _check_combines_into(out, std, mean)
    _it.resize_out(out, _it.broadcast_operands([tuple(mean._impl._array.shape), tuple(std._impl._array.shape)]))
    normal_(out, 0.0, 1.0, generator)
    at.mul__Tensor(out, std)
    at.add__Tensor(out, mean, 1)
    return out


def normal_float_float(mean, std, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    out = empty_tensor(_check_size(size), dtype or _dt.get_default_dtype(), canonical(device))
    return _fresh(normal_(out, mean, std, generator))


def normal_float_float_out(mean, std, size, generator=None, out=None):
    _it.resize_out(out, _check_size(size))
    return normal_(out, mean, std, generator)


# ----------------------------------------------------------------------------- factories
# One function per overload (kernels take their arguments positionally): the ``_generator`` ones take the
# generator after the size, the others draw from the default generator.
def _new(size, dtype, device, default=None):
    return empty_tensor(_check_size(size), dtype or default or _dt.get_default_dtype(), canonical(device))


def rand_generator(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _fresh(uniform_(_new(size, dtype, device), 0.0, 1.0, generator))


def rand(size, dtype=None, layout=None, device=None, pin_memory=None):
    return rand_generator(size, None, dtype, layout, device, pin_memory)


def _resized_out(size, out):
    """``out`` resized to ``size`` as the CompositeImplicitAutograd rand/randn out= do (their resize_ refuses an
    out that requires grad, whatever the size)."""
    if out._impl.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    _it.resize_out(out, _check_size(size))
    return out


def rand_generator_out(size, generator=None, out=None):      # CompositeImplicitAutograd in PyTorch
    return at.uniform_(_resized_out(size, out), 0.0, 1.0, generator)


def rand_out(size, out):
    return rand_generator_out(size, None, out)


def randn_generator(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _fresh(normal_(_new(size, dtype, device), 0.0, 1.0, generator))


def randn(size, dtype=None, layout=None, device=None, pin_memory=None):
    return randn_generator(size, None, dtype, layout, device, pin_memory)


def randn_generator_out(size, generator=None, out=None):      # CompositeImplicitAutograd in PyTorch
    return at.normal_(_resized_out(size, out), 0.0, 1.0, generator)


def randn_out(size, out):
    return randn_generator_out(size, None, out)


def rand_like_generator(self, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                        memory_format=None):
    return _fresh(uniform_(_like(self, dtype, device, memory_format), 0.0, 1.0, generator))


def rand_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return rand_like_generator(self, None, dtype, layout, device, pin_memory, memory_format)


def randn_like_generator(self, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                         memory_format=None):
    return _fresh(normal_(_like(self, dtype, device, memory_format), 0.0, 1.0, generator))


def randn_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return randn_like_generator(self, None, dtype, layout, device, pin_memory, memory_format)


def randint_low_generator(low, high, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _fresh(random__from(_new(size, dtype, device, _dt.int64), low, high, generator))


def randint_low(low, high, size, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(low, high, size, None, dtype, layout, device, pin_memory)


def randint_generator(high, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(0, high, size, generator, dtype, layout, device, pin_memory)


def randint(high, size, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(0, high, size, None, dtype, layout, device, pin_memory)


def randint_low_generator_out(low, high, size, generator=None, out=None):
    _it.resize_out(out, _check_size(size))
    return random__from(out, low, high, generator)


def randint_low_out(low, high, size, out):
    return randint_low_generator_out(low, high, size, None, out)


def randint_generator_out(high, size, generator=None, out=None):
    return randint_low_generator_out(0, high, size, generator, out)


def randint_out(high, size, out):
    return randint_low_generator_out(0, high, size, None, out)


def randint_like_low_generator_dtype(self, low, high, generator=None, dtype=None, layout=None, device=None,
                                     pin_memory=None, memory_format=None):
    return _fresh(random__from(_like(self, dtype, device, memory_format), low, high, generator))


def randint_like_low_dtype(self, low, high, dtype=None, layout=None, device=None, pin_memory=None,
                           memory_format=None):
    return randint_like_low_generator_dtype(self, low, high, None, dtype, layout, device, pin_memory, memory_format)


def randint_like_generator(self, high, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
                           memory_format=None):
    return randint_like_low_generator_dtype(self, 0, high, generator, dtype, layout, device, pin_memory,
                                            memory_format)


def randint_like(self, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return randint_like_low_generator_dtype(self, 0, high, None, dtype, layout, device, pin_memory, memory_format)


def _scalar_high(high) -> int:
    h = high._impl
    if h._array.ndim != 0 or h.dtype.category not in (0, 1):
        raise RuntimeError("high must be a scalar tensor and on CPU")
    return int(high.item())


def randint_like_Tensor_generator(self, high, generator=None, dtype=None, layout=None, device=None,
                                  pin_memory=None, memory_format=None):
    return randint_like_low_generator_dtype(self, 0, _scalar_high(high), generator, dtype, layout, device,
                                            pin_memory, memory_format)


def randint_like_Tensor(self, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return randint_like_Tensor_generator(self, high, None, dtype, layout, device, pin_memory, memory_format)


# ----------------------------------------------------------------------------- random_
_INT_RANGE = {"bool": (0, 1), "uint8": (0, 255), "int8": (-128, 127), "int16": (-(1 << 15), (1 << 15) - 1),
              "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
              "uint16": (0, (1 << 16) - 1), "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 64) - 1)}


_TYPEMETA_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
                   "int32": "int", "int64": "long int", "uint16": "unsigned short", "uint32": "unsigned int",
                   "uint64": "unsigned long"}


def _dtype_repr(dt) -> str:
    """The dtype as PyTorch's messages print a TypeMeta (the C++ type's demangled name)."""
    return _TYPEMETA_NAMES.get(dt.name, dt.cpp_type_name)


def _check_from_to_in_range(frm, to_inc, dt):
    if dt.category == 2:
        digits = _float_digits(dt, "check_random_bounds")
        lim = 1 << digits
        import warnings
        if not -lim <= frm <= lim:
            warnings.warn(f"from is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                          f"{dt.cpp_type_name} can support discrete uniform distribution only within this range. "
                          "This warning will become an error in version 1.7 release, please fix the code in advance",
                          UserWarning, stacklevel=4)
        if not -lim <= to_inc <= lim:
            warnings.warn(f"to - 1 is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                          f"{dt.cpp_type_name} can support discrete uniform distribution only within this range. "
                          "This warning will become an error in version 1.7 release, please fix the code in advance",
                          UserWarning, stacklevel=4)
        return
    lo, hi = _INT_RANGE[dt.name]
    if not lo <= frm <= hi:
        raise RuntimeError(f"from is out of bounds for {_dtype_repr(dt)}")
    if not lo <= to_inc <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_dtype_repr(dt)}")


def _random_dtype_check(dt, name):
    if dt.is_complex:
        raise NotImplementedError(f'"{name}" not implemented for \'{dt.scalar_type_name}\'')


def _from_to_values(g, n, rng, base):
    """(draw % range) + from, wrapping as C++'s uint64 arithmetic does, as int64 values."""
    if rng == 1 << 64:
        return g.random64(n).view(np.int64)
    if rng < (1 << 28):
        vals = (g.random(n) % np.uint32(rng)).astype(np.int64)
        return vals + base if -(1 << 62) < base < (1 << 62) else (vals.view(np.uint64) + np.uint64(
            base & ((1 << 64) - 1))).view(np.int64)
    vals = (g.random64(n) % np.uint64(rng)) + np.uint64(base & ((1 << 64) - 1))
    return vals.view(np.int64)


def _cast_int(v, dt) -> int:
    """int64(scalar_t(v)): an integer through the floating dtype and back."""
    return int(np.array(float(v), np.float64).astype(dt.np).astype(np.float64))


def _update_from(frm, dt) -> int:
    """A 'from' the floating dtype cannot hold exactly moves up to the next value it can (update_from)."""
    plus1 = _cast_int(frm + 1, dt)
    if plus1 < frm:
        n = abs(frm + 1).bit_length() - 1
        return plus1 + (1 << (n - _DIGITS[dt.name] + 1))
    return frm


def _update_to(to, dt) -> int:
    """A 'to' the floating dtype would round up moves down to a value below it (update_to)."""
    minus1 = _cast_int(to - 1, dt)
    if minus1 >= to:
        n = abs(to - 1).bit_length() - 1
        return minus1 - (1 << (n - _DIGITS[dt.name] + 1))
    return to


def random__from(self, from_, to=None, generator=None):
    impl = _begin_inplace(self)
    dt = impl.dtype
    _random_dtype_check(dt, "random_from_to_kernel_cpu")
    if to is not None:
        if not from_ < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        if dt.category == 2:
            _float_digits(dt, "random_update_from_to")
            from_, to = _update_from(from_, dt), _update_to(to, dt)
            if not from_ < to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={from_} >= to={to}")
        _check_from_to_in_range(from_, to - 1, dt)
        rng = to - from_
    elif from_ != -(1 << 63):
        if dt.category == 2:
            to_inc = min(1 << _float_digits(dt, "random_update_from_to"), (1 << 63) - 1)
            from_ = _update_from(from_, dt)
            if not from_ < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={from_} > to_inc={to_inc}")
        else:
            to_inc = _INT_RANGE[dt.name][1]
        _check_from_to_in_range(from_, to_inc, dt)
        rng = to_inc - from_ + 1
    else:
        if dt.name not in ("int64", "float64", "float32", "bfloat16"):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        rng = 1 << 64
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        vals = _from_to_values(g, impl._array.size, rng, from_)
        _store(impl, vals if dt.category != 2 else vals.astype(np.float64))
    return _finish(self)


def random__to(self, to, generator=None):
    return random__from(self, 0, to, generator)


def random_(self, generator=None):
    impl = _begin_inplace(self)
    dt = impl.dtype
    _random_dtype_check(dt, "random_kernel_cpu")
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        n = impl._array.size
        if dt is _dt.bool:
            vals = (g.random(n) & np.uint64(1)).astype(np.int64)
        elif dt.category == 2:
            digits = _float_digits(dt, "random_kernel_cpu")
            raw = g.random64(n) if dt is _dt.float64 else g.random(n)
            vals = (raw % np.uint64((1 << digits) + 1)).astype(np.float64)
        else:
            raw = g.random64(n) if dt is _dt.int64 else g.random(n)
            vals = (raw % np.uint64(_INT_RANGE[dt.name][1] + 1)).astype(np.int64)
        _store(impl, vals)
    return _finish(self)


# ----------------------------------------------------------------------------- other distributions
def _float_inplace(self, name):
    impl = _begin_inplace(self)
    if impl.dtype.category != 2:
        raise NotImplementedError(f'"{name}" not implemented for \'{impl.dtype.scalar_type_name}\'')
    return impl


def exponential_(self, lambd=1.0, generator=None):
    impl = _begin_inplace(self)
    if not (lambd > 0 and not math.isinf(lambd)):
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    if impl.dtype.category != 2:
        raise NotImplementedError(f'"exponential_cpu" not implemented for \'{impl.dtype.scalar_type_name}\'')
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        u = _uniform_double(g, impl._array.size)
        _store(impl, (-1.0 / lambd) * _log1p_libm(-u))
    return _finish(self)


def geometric_(self, p, generator=None):
    impl = _begin_inplace(self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    _random_dtype_check(impl.dtype, "geometric_cpu")
    if impl.dtype is _dt.bool:
        raise NotImplementedError('"geometric_cpu" not implemented for \'Bool\'')
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        u = _uniform_double(g, impl._array.size)
        with np.errstate(divide="ignore"):
            _store(impl, np.ceil(_libm(np.log, _safe_log, u) / math.log(1.0 - p)))
    return _finish(self)


def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    impl = _float_inplace(self, "cauchy_cpu")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        u = _uniform_double(g, impl._array.size)
        _store(impl, _fma_f64(_libm(np.tan, math.tan, math.pi * (u - 0.5)), float(sigma), float(median)))
    return _finish(self)


def log_normal_(self, mean=1.0, std=2.0, generator=None):
    impl = _float_inplace(self, "log_normal_cpu")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        _store(impl, _libm(np.exp, _safe_exp, _fma_f64(_normal_pairs(g, impl._array.size), float(std), float(mean))))
    return _finish(self)


# ----------------------------------------------------------------------------- bernoulli
def _bernoulli_dtype_check(dt, name):
    if dt.is_complex:
        raise NotImplementedError(f'"{name}" not implemented for \'{dt.scalar_type_name}\'')


def bernoulli__float(self, p=0.5, generator=None):
    impl = _begin_inplace(self)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
    _bernoulli_dtype_check(impl.dtype, "bernoulli_scalar_cpu_")
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        _store(impl, (_uniform_double(g, impl._array.size) < p).astype(np.int64))
    return _finish(self)


def _check_probabilities(probs) -> None:
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_expandable(src, target) -> None:
    """Tensor.expand(target)'s check, as expand_inplace(self, p) runs it."""
    if len(src) > len(target):
        raise RuntimeError(f"expand: the number of sizes provided ({len(target)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(src)})")
    for i in range(1, len(src) + 1):
        if src[-i] != 1 and src[-i] != target[-i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({src[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(src)}")


def bernoulli__Tensor(self, p, generator=None):
    impl = _begin_inplace(self)
    pi = p._impl
    if pi.device.type == "meta" and impl.device.type != "meta":
        raise NotImplementedError("Cannot inplace into non-meta tensor with meta tensor argument")
    if pi.dtype.category != 2:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{pi.dtype.scalar_type_name}\'')
    _bernoulli_dtype_check(impl.dtype, "bernoulli_tensor_cpu_self_")
    shape = tuple(impl._array.shape)
    _check_expandable(tuple(pi._array.shape), shape)
    g = _generator(generator, impl.device)
    if g is not None and impl._array.size:
        pv = np.broadcast_to(np.asarray(pi._array), shape)
        probs = _ordered(impl, pv)
        _check_probabilities(probs)
        n = impl._array.size
        if pi.dtype is _dt.float64:
            hits = _uniform_double(g, n) < probs
        else:
            hits = _uniform_units(g, n, 24, False).astype(np.float32) < probs.astype(np.float32)
        _store(impl, hits.astype(np.int64))
    return _finish(self)


def bernoulli(self, generator=None):
    out = _like(self, None, None, "contiguous_format")
    return _fresh(bernoulli__Tensor(out, self, generator))


def bernoulli_out(self, generator=None, out=None):
    _check_copy_device(self, out)
    pi = self._impl
    if pi.dtype.category != 2:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{pi.dtype.scalar_type_name}\'')
    if pi.device.type != "meta":
        _check_probabilities(np.asarray(pi._array))      # before out is resized: a refused call changes nothing
    _it.resize_out(out, tuple(self._impl._array.shape))
    return bernoulli__Tensor(out, self, generator)


def bernoulli_p(self, p, generator=None):
    return _fresh(bernoulli__float(_like(self, None, None, None), p, generator))


# ----------------------------------------------------------------------------- randperm
def _check_randperm(n, dt):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if dt.is_complex or dt is _dt.bool:
        raise NotImplementedError(f'"randperm" not implemented for \'{dt.scalar_type_name}\'')
    if dt is _dt.float32 and n > (1 << 24) + 1:
        raise RuntimeError("n cannot be greater than 2^24+1 for Float type.")
    if dt is _dt.float64 and n > (1 << 53) + 1:
        raise RuntimeError("n cannot be greater than 2^53+1 for Double type.")
    if dt.category == 1 and n > 0 and n - 1 > _INT_RANGE[dt.name][1]:
        raise RuntimeError(f"value cannot be converted to type {dt.cpp_type_name} without overflow")


def _randperm_values(g, n):
    perm = list(range(n))
    if n < 0xFFFFFFFF // 20:
        zs = (g.random(n - 1) % (n - np.arange(n - 1, dtype=np.uint64))).tolist() if n > 1 else []
        for i, z in enumerate(zs):        # Fisher-Yates: sequential, ~0.1 us per swap
            j = z + i
            perm[i], perm[j] = perm[j], perm[i]
    else:       # PyTorch's variant for huge n: 64-bit draws, inside-out shuffle
        zs = (g.random64(n) % (np.arange(n, dtype=np.uint64) + np.uint64(1))).tolist()
        for i, z in enumerate(zs):
            perm[i] = perm[z]
            perm[z] = i
    return np.array(perm, np.int64)


def randperm_generator(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype if dtype is not None else _dt.int64
    out = empty_tensor(_check_size((n,)), dt, canonical(device))
    _check_randperm(n, dt)
    return _fresh(randperm_generator_out(n, generator, out))


def randperm(n, dtype=None, layout=None, device=None, pin_memory=None):
    return randperm_generator(n, None, dtype, layout, device, pin_memory)


def randperm_out(n, out):
    return randperm_generator_out(n, None, out)


def randperm_generator_out(n, generator=None, out=None):
    _it.refuse_barebones_unsigned("randperm", out._impl)
    _check_randperm(n, out._impl.dtype)
    _it.resize_out(out, (n,))
    impl = out._impl
    g = _generator(generator, impl.device)
    if g is not None and n:
        _it.xp_copy(impl._array, _randperm_values(g, n))
    return _finish(out)


# ----------------------------------------------------------------------------- multinomial
def _multinomial_checks(self, n_sample, replacement):
    impl = self._impl
    nd = impl._array.ndim
    if nd not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if impl.dtype.category != 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{impl.dtype.scalar_type_name}")
    if n_sample <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = impl._array.shape[-1]
    if not replacement and n_sample > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_cat > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def multinomial(self, num_samples, replacement=False, generator=None):
    out = empty_tensor((0,), _dt.int64, self._impl.device)
    return _fresh(multinomial_out(self, num_samples, replacement, generator, out))


def multinomial_out(self, num_samples, replacement=False, generator=None, out=None):
    _check_copy_device(self, out)
    _multinomial_checks(self, num_samples, replacement)
    if out._impl.dtype is not _dt.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out._impl.dtype.scalar_type_name}")
    impl = self._impl
    shape = (num_samples,) if impl._array.ndim == 1 else (impl._array.shape[0], num_samples)
    _it.resize_out(out, shape)
    if out._impl._array.size == 0 or impl.device.type == "meta":
        return _finish(out)
    g = _generator(generator, impl.device)
    probs = np.asarray(impl._array)
    rows = probs.reshape(-1, probs.shape[-1])
    if not replacement or num_samples == 1:
        with np.errstate(invalid="ignore"):
            valid = bool(np.all(rows < np.inf) and np.all(rows >= 0)) if rows.size else True
        if not valid or np.isnan(rows.astype(np.float64)).any():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.astype(np.float64).sum(-1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = _like(self, None, None, None)
        exponential_(q, 1.0, g)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (probs / q._impl._array).reshape(rows.shape)
        if num_samples == 1:
            idx = np.argmax(ratio, axis=-1)[:, None]
        else:
            idx = np.argsort(-ratio.astype(np.float64), axis=-1, kind="stable")[:, :num_samples]
    else:
        work = rows.astype(np.float32 if rows.dtype != np.float64 else np.float64)
        if rows.dtype.itemsize < 4:
            work = rows.astype(np.float32)
        if (work < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(work).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        cum = np.cumsum(work, axis=-1, dtype=work.dtype)
        total = cum[:, -1:].copy()
        if (total <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = cum / total
        cum[:, -1] = 1
        u = _uniform_double(g, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
        idx = _search_rows(cum.astype(np.float64), u)
    _it.xp_copy(out._impl._array, idx.reshape(shape).astype(np.int64))
    return _finish(out)


def _search_rows(cum, u):
    """Per row, the first slot whose cumulative probability is >= u (PyTorch's binary search), for all
    rows at once: one lexsort of every row's bounds and draws, a draw placed before an equal bound."""
    n_rows, n_cat = cum.shape
    n_q = u.shape[1]
    vals = np.concatenate([cum.reshape(-1), u.reshape(-1)])
    row = np.concatenate([np.repeat(np.arange(n_rows), n_cat), np.repeat(np.arange(n_rows), n_q)])
    is_bound = np.concatenate([np.ones(cum.size, np.int64), np.zeros(u.size, np.int64)])
    order = np.lexsort((is_bound, vals, row))
    bounds_before = np.cumsum(is_bound[order])
    qpos = np.empty(u.size, np.int64)
    qmask = is_bound[order] == 0
    qpos[order[qmask] - cum.size] = bounds_before[qmask]
    return qpos.reshape(n_rows, n_q) - np.arange(n_rows)[:, None] * n_cat


# ----------------------------------------------------------------------------- dropout
def native_dropout(input, p, train=None):
    impl = input._impl
    if impl._array.size == 0:
        return input, _like(input, None, None, None)
    if train is None or train:
        p1m = 1.0 - p
        scale = 0.0 if p1m == 0 else 1.0 / p1m
        mask = _like(input, _dt.bool, None, "contiguous_format")
        bernoulli__float(mask, p1m)
        out = at.mul_Tensor(input, mask)
        at.mul__Scalar(out, scale)
        return out, mask
    return at.clone(input, None), at.ones_like(input, _dt.bool, None, None, None, None)


def native_dropout_backward(grad_output, mask, scale):
    return at.mul_Scalar(at.mul_Tensor(grad_output, mask), scale)



# ----------------------------------------------------------------------------- dropout (CompositeImplicitAutograd)
def _dropout(input, p, train, inplace):
    """ATen's _dropout on CPU (the fused native_dropout is for accelerators): a noise tensor like the input,
    bernoulli_(1 - p) divided by 1 - p, multiplied in; p == 0 or eval returns the input itself."""
    if p == 0 or not train or input._impl._array.size == 0:
        return input
    if p == 1:
        zero = at.zeros((), input._impl.dtype, None, input._impl.device, None)
        return at.mul__Tensor(input, zero) if inplace else at.mul_Tensor(input, zero)
    noise = at.empty_like(input, None, None, None, None, None)
    at.bernoulli__float(noise, 1 - p, None)
    at.div__Scalar(noise, 1 - p)
    return at.mul__Tensor(input, noise) if inplace else at.mul_Tensor(input, noise)


def dropout(input, p, train):
    return _dropout(input, p, train, False)


def dropout_(self, p, train):
    return _dropout(self, p, train, True)
