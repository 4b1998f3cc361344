"""Compiled inner loops for the few kernels NumPy can only run one element at a time.

Most CPU kernels are whole-array NumPy calls.  Three are not, because NumPy has no vectorised form of
them and its element-at-a-time road is 2-4x slower than ATen's C++ loop:

- a scan along a contiguous axis (``cumsum``): NumPy's accumulate is one dependent addition after another
  through its generic loop, ~2 ns an element;
- ``gather`` along a dim: NumPy needs flat positions built and bounds-checked first (three passes);
- the mt19937 stream behind float32 ``randn``/``normal_``: NumPy's ``MT19937`` makes ~2.4 ns a draw.

numba compiles each loop on first use (cached on disk, so later processes load it); ``import onion``
never imports numba.  The loops only move and add numbers in the order ATen does, so their results are
the same bits as the NumPy roads the callers keep for where numba is missing (``available()`` is False).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

_loops = None       # the compiled functions (a namespace), False where numba cannot be imported


def available() -> bool:
    """Whether the compiled loops can run here (numba importable)."""
    return _compiled() is not False


def _compiled():
    global _loops
    if _loops is None:
        try:
            import numba  # type: ignore[import-untyped]
        except Exception:       # pragma: no cover - no numba wheel here, or one that fails to load: the NumPy roads
            _loops = False
        else:
            _loops = _build(numba)
    return _loops


def scan_add_rows(a, acc):
    """Running sums along the last axis of the 2-D ``a`` in the accumulate dtype ``acc`` (float64 for a
    float32 or float64 input), each rounded once to ``a``'s dtype: ATen's cpu_cum_base_kernel, which
    starts from +0 (so no sum is -0.0) and adds in index order."""
    out = np.empty(a.shape, a.dtype)
    _compiled().scan_add(a, out, acc(0))
    return out


def gather_rows(src, idx):
    """``out[o, k, i] = src[o, idx[o, k, i], i]`` over 3-D arrays (outer, dim, inner); ``src`` holds items
    of 1, 2, 4 or 8 bytes read as unsigned integers.  None when an index is outside ``[0, src.shape[1])``
    (nothing is written to any tensor: the caller raises PyTorch's error)."""
    out = np.empty(idx.shape, src.dtype)
    bad = _compiled().gather3(src, idx, out)
    return None if bad else out


def mt19937_uniform_halves(key, pos, halves, two_pi):
    """The next ``16 m`` draws of the mt19937 stream whose 624-word ``key`` (uint32, advanced in place) is
    next read at ``pos``, as normal_fill's float32 uniforms, into ``halves`` ((2, m, 8) float32): for each
    block of 16 draws, the first 8 as ``1 - u`` into ``halves[0]`` and the last 8 as ``two_pi * u`` into
    ``halves[1]``, u being the low 24 bits times 2^-24 (float32 steps, rounded as ATen's).  Returns the new
    pos."""
    return _compiled().uniform_halves(key, pos, halves[0], halves[1], np.float32(two_pi))


def box_muller_store(radius, theta, cos, dst, std, mean):
    """normal_fill's last step: ``dst[b, 0] = cos * radius`` and ``dst[b, 1] = radius * theta`` (theta
    holding sin by then), each then ``* std + mean`` where those are not (1, 0), all in float32 as
    ATen's; ``dst`` is (m, 2, 8), the others (m, 8)."""
    _compiled().box_muller_store(radius, theta, cos, dst, np.float32(std), np.float32(mean),
                                 std != 1.0 or mean != 0.0)


def _build(numba):
    """The loops, compiled lazily per argument types (nogil: threads may run them side by side)."""
    jit = numba.njit(cache=True, nogil=True)
    u32, u64 = np.uint32, np.uint64
    N, M = 624, 397

    @jit
    def scan_add(a, out, zero):
        rows, n = a.shape
        for r in range(rows):
            s = zero
            for k in range(n):
                s += a[r, k]
                out[r, k] = s
        return 0

    @jit
    def gather3(src, idx, out):
        # in the index's row-major order, so that index and output are read and written in memory order
        size = u64(src.shape[1])
        for o in range(src.shape[0]):
            if idx.shape[2] == 1:           # along the last dim: one flat row per o
                s, x, y = src[o, :, 0], idx[o, :, 0], out[o, :, 0]
                for k in range(x.shape[0]):
                    j = x[k]
                    if u64(j) >= size:      # a negative index is huge as unsigned
                        return 1
                    y[k] = s[j]
                continue
            for k in range(idx.shape[1]):
                x, y = idx[o, k], out[o, k]
                for i in range(x.shape[0]):
                    j = x[i]
                    if u64(j) >= size:
                        return 1
                    y[i] = src[o, j, i]
        return 0

    @jit
    def twist(key):
        # the reference recurrence, split where i + M wraps so no index needs a modulo
        up, lo, a, one = u32(0x80000000), u32(0x7FFFFFFF), u32(0x9908B0DF), u32(1)
        for i in range(N - M):
            y = (key[i] & up) | (key[i + 1] & lo)
            key[i] = key[i + M] ^ (y >> one) ^ (a * (y & one))
        for i in range(N - M, N - 1):
            y = (key[i] & up) | (key[i + 1] & lo)
            key[i] = key[i + M - N] ^ (y >> one) ^ (a * (y & one))
        y = (key[N - 1] & up) | (key[0] & lo)
        key[N - 1] = key[M - 1] ^ (y >> one) ^ (a * (y & one))

    @jit
    def draws(key, pos, out):
        # a run of up to 624 words is tempered at a time: a loop without a branch, which LLVM vectorises
        n = out.shape[0]
        k = 0
        while k < n:
            if pos >= N:
                twist(key)
                pos = 0
            c = min(N - pos, n - k)
            for t in range(c):
                y = key[pos + t]
                y ^= y >> u32(11)
                y ^= (y << u32(7)) & u32(0x9D2C5680)
                y ^= (y << u32(15)) & u32(0xEFC60000)
                out[k + t] = y ^ (y >> u32(18))
            k += c
            pos += c
        return pos

    @jit
    def uniform_halves(key, pos, first, second, two_pi):
        # the draws a piece at a time into a small buffer that stays in cache, then split into halves
        scale = np.float32(2.0 ** -24)
        one = np.float32(1.0)
        low = u32(0xFFFFFF)
        piece = 256                         # blocks of 16 draws per piece
        raw = np.empty((piece, 16), np.uint32)
        m = first.shape[0]
        for b0 in range(0, m, piece):
            nb = min(piece, m - b0)
            pos = draws(key, pos, raw[:nb].reshape(-1))
            for b in range(nb):
                for j in range(8):
                    first[b0 + b, j] = one - np.float32(np.int32(raw[b, j] & low)) * scale
                    second[b0 + b, j] = two_pi * (np.float32(np.int32(raw[b, 8 + j] & low)) * scale)
        return pos

    @jit
    def box_muller_store(radius, theta, cos, dst, std, mean, scaled):
        for b in range(dst.shape[0]):
            for j in range(8):
                r = radius[b, j]
                x = cos[b, j] * r
                y = r * theta[b, j]
                if scaled:
                    x = x * std + mean
                    y = y * std + mean
                dst[b, 0, j] = x
                dst[b, 1, j] = y
        return 0

    return SimpleNamespace(scan_add=scan_add, gather3=gather3, draws=draws, uniform_halves=uniform_halves,
                           box_muller_store=box_muller_store)
