"""Backward formulas of ormqr, stft and istft (derivatives.yaml, ops block).

Written with onion operators, so a gradient built with ``create_graph=True`` is itself differentiable.
"""
from __future__ import annotations

import numpy as _np

from ..aten.at import at
from ..aten.tensor_new import wrap
from ..aten.native.lapack import _fstrides
from .backward_linalg import _colmajor, _diag, _eye, diag_embed, mH, tril, triu

__all__ = ["batch_norm_train_backward", "istft_backward", "ormqr_backward", "stft_backward"]


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


# ----------------------------------------------------------------------------- stft / istft
# Both are linear in the signal (or spectrum) for a fixed window: the gradients are the adjoint maps, written as
# products with DFT matrices (constants) so that they are differentiable again; frames are unfold views and
# overlap-add is unfold_backward, the two being each other's adjoints.

def _constant(arr, dtype, device):
    t = wrap(_np.asarray(arr, dtype=dtype.np), dtype, _cpu_device())
    return t if device.type == "cpu" else at._to_copy(t, None, None, device, None, False, None)


def _cpu_device():
    from ..core.device import CPU
    return CPU


def _real(t):
    return at.contiguous(at.real(t)) if t._impl.dtype.is_complex else t


def _window_full(window, win_length, n_fft, dtype, device):
    """The window as stft/istft apply it: ones when absent, zero-padded on both sides to n_fft."""
    if window is None:
        ones = _np.zeros(n_fft)
        win = n_fft if win_length is None else win_length
        ones[(n_fft - win) // 2:(n_fft - win) // 2 + win] = 1
        return _constant(ones, dtype, device), None
    win = window
    if win_length is not None and win_length < n_fft:
        left = (n_fft - win_length) // 2
        right = n_fft - win_length - left
        wdt = win._impl.dtype
        parts = ([_constant(_np.zeros(left), wdt, device)] if left else []) + [win] + \
            ([_constant(_np.zeros(right), wdt, device)] if right else [])
        return at.cat(parts, 0), left
    return win, None


def _pad_index(length, pad, mode):
    """Source index of every sample of the centre-padded signal (-1 for a constant-mode zero)."""
    i = _np.arange(-pad, length + pad)
    if mode == "reflect":
        i = _np.abs(i)
        i = _np.where(i >= length, 2 * (length - 1) - i, i)
    elif mode == "replicate":
        i = _np.clip(i, 0, length - 1)
    elif mode == "circular":
        i = _np.mod(i, length)
    else:
        i = _np.where((i < 0) | (i >= length), -1, i)
    return i


def _dft(n_freq, n_fft, sign, scale, dtype, device, weights=None):
    k = _np.arange(n_freq)[:, None]
    n = _np.arange(n_fft)[None, :]
    m = _np.exp(sign * 2j * _np.pi * ((k * n) % n_fft) / n_fft) * scale
    if weights is not None:
        m = m * weights[:, None]
    return _constant(m, dtype, device)


def stft_backward(grad, self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                  return_complex, mask):
    """The adjoint of frame -> window -> DFT: an inverse DFT of the gradient, windowed and overlap-added back
    onto the (padded) signal; the window's gradient correlates the same frames with it."""
    if grad is None:
        return None, None
    x = self
    batched = x.dim() == 2
    if not batched:
        x = at.unsqueeze(x, 0)
        grad = at.unsqueeze(grad, 0)
    if not grad._impl.dtype.is_complex:                   # return_complex=False: (..., freq, frames, 2)
        grad = at.complex(at.select_int(grad, -1, 0), at.select_int(grad, -1, 1))
    cdt = grad._impl.dtype
    dev = x._impl.device
    hop = n_fft // 4 if hop_length is None else hop_length
    length = x._impl._array.shape[-1]
    n_freq = grad._impl._array.shape[-2]
    w, left = _window_full(window, win_length, n_fft, cdt.to_real(), dev)
    if center:
        pad = n_fft // 2
        idx_np = _pad_index(length, pad, pad_mode)
        if pad_mode == "constant":
            zeros = _constant(_np.zeros((x._impl._array.shape[0], pad)), x._impl.dtype, dev)
            xp = at.cat([zeros, x, zeros], -1)
        else:
            idx = _constant(idx_np, _int64(), dev)
            xp = at.index_select(x, -1, idx)
    else:
        xp = x
    frames = at.unfold(xp, -1, n_fft, hop)                                   # (b, frames, n_fft)
    E = _dft(n_freq, n_fft, -1, 1 / _np.sqrt(n_fft) if normalized else 1.0, cdt, dev)
    g_fw = at.matmul(at.transpose_int(grad, -1, -2), at.conj(E))             # (b, frames, n_fft)
    gx = gw = None
    if mask[0]:
        g_frames = at.mul_Tensor(g_fw, at.conj(w))
        g_xp = at.unfold_backward(g_frames, list(xp._impl._array.shape), xp.dim() - 1, n_fft, hop)
        if center and pad_mode == "constant":
            g_x = at.slice_Tensor(g_xp, -1, n_fft // 2, n_fft // 2 + length, 1)
        elif center:
            g_x = at.index_select_backward(g_xp, list(x._impl._array.shape), x.dim() - 1, idx)
        else:
            g_x = g_xp
        gx = g_x if x._impl.dtype.is_complex else _real(g_x)
        if not batched:
            gx = at.squeeze_dim(gx, 0)
    if mask[1] and window is not None:
        g_w = at.sum_dim_IntList(at.mul_Tensor(g_fw, at.conj(frames)), [0, 1], False, None)
        if left is not None:
            g_w = at.slice_Tensor(g_w, 0, left, left + win_length, 1)
        gw = g_w if window._impl.dtype.is_complex else _real(g_w)
    return gx, gw


def _int64():
    from ..core import dtype as _dt
    return _dt.int64


def istft_backward(grad, self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                   return_complex, mask):
    """The adjoint of inverse DFT -> window -> overlap-add -> divide by the window envelope: the gradient is
    divided by the envelope, cut back into frames (unfold), windowed and transformed forward (an stft of the
    gradient); the window's gradient also goes through the envelope."""
    if grad is None:
        return None, None
    spec = self
    batched = spec.dim() == 3
    if not batched:
        spec = at.unsqueeze(spec, 0)
        grad = at.unsqueeze(grad, 0)
    cdt = spec._impl.dtype
    dev = spec._impl.device
    hop = n_fft // 4 if hop_length is None else hop_length
    n_freq, n_frames = spec._impl._array.shape[-2:]
    if onesided is None:
        onesided = n_freq != n_fft
    expected = n_fft + hop * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else expected - (n_fft // 2 if center else 0)
    w, left = _window_full(window, win_length, n_fft, cdt.to_real(), dev)
    scale = 1 / _np.sqrt(n_fft) if normalized else 1 / n_fft
    if return_complex:
        M = _dft(n_fft, n_fft, 1, scale, cdt, dev)
        used = spec
    else:
        half = n_fft // 2 + 1
        c = _np.full(half, 2.0)
        c[0] = 1.0
        if n_fft % 2 == 0:
            c[-1] = 1.0
        M = _dft(half, n_fft, 1, scale, cdt, dev, c)
        used = spec if onesided else at.slice_Tensor(spec, -2, 0, half, 1)
    st = at.transpose_int(used, -1, -2)                                   # (b, frames, freq)
    frames = at.matmul(st, M)                                              # inverse DFT, (b, frames, n_fft)
    if not return_complex:
        frames = at.real(frames)
    stop = min(end, expected)
    fw = at.mul_Tensor(frames, w)
    y_full = at.unfold_backward(fw, [fw._impl._array.shape[0], expected], 1, n_fft, hop)
    w2 = at.expand(at.unsqueeze(at.mul_Tensor(w, w), 0), [n_frames, n_fft], False)
    env_full = at.unfold_backward(w2, [expected], 0, n_fft, hop)
    env = at.slice_Tensor(env_full, 0, start, stop, 1)
    y = at.slice_Tensor(y_full, -1, start, stop, 1)
    g = at.slice_Tensor(grad, -1, 0, stop - start, 1)                      # the zeros padded past the signal
    g_y = at.div_Tensor(g, at.conj(env))
    g_y_full = at.slice_scatter(at.zeros_like(y_full, g_y._impl.dtype, None, None, None, None), g_y, -1, start,
                                stop, 1)
    g_fw = at.unfold(g_y_full, -1, n_fft, hop)                             # (b, frames, n_fft)
    gs = gw = None
    if mask[0]:
        g_frames = at.mul_Tensor(g_fw, at.conj(w) if w._impl.dtype.is_complex else w)
        if not g_frames._impl.dtype.is_complex:
            g_frames = at._to_copy(g_frames, cdt, None, None, None, False, None)
        g_st = at.matmul(g_frames, mH(M))
        g_used = at.transpose_int(g_st, -1, -2)
        if not return_complex and not onesided:
            zeros = at.zeros_like(at.slice_Tensor(spec, -2, n_fft // 2 + 1, None, 1), None, None, None, None, None)
            g_used = at.cat([g_used, zeros], -2)
        gs = g_used if batched else at.squeeze_dim(g_used, 0)
    if mask[1] and window is not None:
        g_w = at.sum_dim_IntList(at.mul_Tensor(g_fw, at.conj(frames)), [0, 1], False, None)
        # the envelope: y = y_full / env, env = overlap-add of w^2
        g_env = at.neg(at.sum_dim_IntList(at.mul_Tensor(g_y, at.conj(at.div_Tensor(y, env))), [0], False, None))
        g_env_full = at.slice_scatter(at.zeros_like(env_full, g_env._impl.dtype, None, None, None, None), g_env, 0,
                                      start, stop, 1)
        g_w2 = at.sum_dim_IntList(at.unfold(g_env_full, 0, n_fft, hop), [0], False, None)
        g_w = at.add_Tensor(g_w, at.mul_Scalar(at.mul_Tensor(g_w2, at.conj(w)), 2), 1)
        if left is not None:
            g_w = at.slice_Tensor(g_w, 0, left, left + win_length, 1)
        gw = g_w if window._impl.dtype.is_complex else _real(g_w)
    return gs, gw


# ----------------------------------------------------------------------------- batch norm (training)
def batch_norm_train_backward(grad, input, weight, eps, mask):
    """Training-mode batch norm: the statistics are recomputed here from the input with operators (not taken
    from the saved results), so the gradient's own gradient includes their dependence on the input."""
    if grad is None:
        return None, None, None
    ndim = input.dim()
    dims = [0] + list(range(2, ndim))
    shape = [1, -1] + [1] * (ndim - 2)
    n = input.numel() // max(input.shape[1], 1)
    mean = at.mean_dim(input, dims, True, None)
    invstd = at.rsqrt(at.add_Scalar(at.var_correction(input, dims, 0, True), eps, 1))
    x_hat = at.mul_Tensor(at.sub_Tensor(input, mean, 1), invstd)
    g_sum = at.sum_dim_IntList(grad, dims, True, None)
    gx_sum = at.sum_dim_IntList(at.mul_Tensor(grad, x_hat), dims, True, None)
    gi = gw = gb = None
    if mask[0]:
        scale = invstd if weight is None else at.mul_Tensor(invstd, at.view(weight, shape))
        inner = at.sub_Tensor(at.sub_Tensor(at.mul_Scalar(grad, n), g_sum, 1), at.mul_Tensor(x_hat, gx_sum), 1)
        gi = at.mul_Tensor(at.div_Scalar(scale, n), inner)
    if len(mask) > 1 and mask[1] and weight is not None:
        gw = at.view(gx_sum, [-1])
    if len(mask) > 2 and mask[2]:
        gb = at.view(g_sum, [-1])
    return gi, gw, gb
