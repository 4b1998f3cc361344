"""Sorting and selection: max/min (full, along a dim, binary), aminmax, sort/argsort/msort, topk,
kthvalue, median/nanmedian, mode, cummax/cummin, searchsorted/bucketize, unique, histograms,
bincount, quantile.

Every kernel serves CPU and Meta: the checks and the result geometry come first (Meta stops
there), then the NumPy computation.  float16/bfloat16 are compared in float32 (exact).  Orders
follow PyTorch: NaN sorts as the largest value, ties keep their input order (one stable sort is
used everywhere, so indices are deterministic), max/min return the first maximal element and
propagate NaN with the index of the first NaN, median takes the lower of the two middle values.
"""
from __future__ import annotations


import numpy as np

from ...backends.meta import MetaArray
from ...core import dtype as _dt
from ...core.device import CPU as _CPU
from ...core.geometry import is_non_overlapping_and_dense, wrap_dim
from .. import iterator as _it
from ..at import at
from ..tensor_new import empty_tensor, wrap_cpu
from .factories import checked_scalar

_int64 = _dt.int64
_int32 = _dt.int32
_f32 = np.float32


# --------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------

def _meta(impl) -> bool:
    return impl.device.type == "meta"


def _no_data(impl) -> bool:
    """No values to read: a Meta tensor, or a composite's input that is a fake tensor (a real device over a
    Meta array); the composite then computes geometry only, through operators a mode sees."""
    return impl.device.type == "meta" or type(impl._array) is MetaArray


def _values(impl):
    """The input's array, float16/bfloat16 widened to float32 (exact) so NumPy's loops order them."""
    a = impl._array
    if impl.dtype is _dt.bfloat16 or impl.dtype is _dt.float16:
        a = a.astype(_f32)
    return a


def _new(device, shape, dtype, arr=None, strides=None):
    """A fresh result tensor of ``shape`` (row-major unless ``strides``), filled from ``arr`` off Meta."""
    t = empty_tensor(tuple(shape), dtype, device, strides)
    if arr is not None and device.type != "meta":
        _it.xp_copy(t._impl._array, np.asarray(arr).reshape(tuple(shape)))
    return t


def _check_out(out, dtype, device):
    _it.check_out_device(device, out._impl)
    odt = out._impl.dtype
    if odt is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {dtype.typemeta_name}, but got {odt.typemeta_name} "
                           f"instead")


def _write(opname, out, shape, dtype, arr):
    """Resize ``out`` to ``shape`` and fill it (nothing to fill on Meta)."""
    if out._impl.device.type == "meta" or arr is None:
        _it.resize_out(out, tuple(shape))
        return out
    return _it.write_out(opname, out, np.asarray(arr).reshape(tuple(shape)), dtype)


def _write_outs(opname, device, items):
    """``items``: (out, shape, dtype, array) per output; every check runs before anything is written."""
    for out, _shape, dtype, _arr in items:
        _check_out(out, dtype, device)
    return tuple(_write(opname, out, shape, dtype, arr) for out, shape, dtype, arr in items)


def _dense_strides(impl):
    """sort's outputs keep a non-overlapping and dense input's strides, else are row-major."""
    shape = tuple(impl._array.shape)
    strides = impl.strides
    if len(shape) > 1 and is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return None


def _no_complex(impl, kernel):
    if impl.dtype.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{impl.dtype.scalar_type_name}\'')


def _no_bool(impl, kernel):
    if impl.dtype is _dt.bool:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _reduced(shape, d, keepdim):
    return shape[:d] + (1,) + shape[d + 1:] if keepdim else shape[:d] + shape[d + 1:]


def _order_key32(a):
    """uint32 keys ordered as PyTorch orders ``a``'s values (NaN largest, -0.0 equal to 0.0), or None when the
    dtype does not fit in 32 bits (or an int64 input spans more than 2**32 values)."""
    k = a.dtype.kind
    if k == "b":
        return a.astype(np.uint32)
    if k == "u" and a.dtype.itemsize <= 4:
        return a.astype(np.uint32)
    if k == "i" and a.dtype.itemsize <= 4:
        return a.astype(np.int32).view(np.uint32) ^ np.uint32(0x80000000)
    if k == "i" and a.size:
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < 2 ** 32:
            return (a - lo).astype(np.uint32)
        return None
    if k == "f" and a.dtype.itemsize <= 4:
        f = a.astype(np.float32)
        f = np.where(f != f, np.float32(np.nan), f) + np.float32(0)    # one NaN; -0.0 becomes 0.0
        bits = f.view(np.uint32)
        return bits ^ np.where(bits >> 31, np.uint32(0xFFFFFFFF), np.uint32(0x80000000))
    return None


def _stable_argsort(a, axis, descending=False):
    """Indices that sort ``a`` along ``axis``; equal elements keep their order, NaN counts as the largest."""
    n = a.shape[axis]
    if a.dtype.kind in "iub" and a.size > 1:
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < 2 ** 16:
            # integers of a narrow range: NumPy's stable sort of uint16 keys is a radix sort
            wide = a.dtype.kind == "i" and a.dtype.itemsize >= 4          # a - lo fits: the range is < 2**16
            key16 = (a - a.dtype.type(lo) if wide else a.astype(np.int64) - lo).astype(np.uint16)
            return np.argsort(np.uint16(hi - lo) - key16 if descending else key16, axis=axis, kind="stable")
    key = _order_key32(a) if 1 < n < 2 ** 32 else None
    if key is not None:
        # one unstable sort of (value key, position) pairs packed in uint64: unique keys, so ties come out
        # in input order; NumPy's vectorised integer sort is much faster than its stable argsort
        if descending:
            key = ~key
        pos = np.arange(n, dtype=np.uint64).reshape((n,) + (1,) * (a.ndim - axis - 1))
        packed = np.sort((key.astype(np.uint64) << np.uint64(32)) | pos, axis=axis)
        return (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    # sorting the reversed input ascending and reading the result backwards keeps ties in input order
    rev = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(rev, axis)


def _nonempty_dim(name, shape, d, dim):
    if shape and shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


# --------------------------------------------------------------------------
# max / min
# --------------------------------------------------------------------------

def _all_reduce(name, kernel, self, fn):
    impl = self._impl
    if impl._array.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           f"reduction dim with the 'dim' argument.")
    _no_complex(impl, kernel)
    if _meta(impl):
        return None
    return fn(_values(impl))


def max(self):  # noqa: A001 - the operator's name
    _it.refuse_barebones_unsigned("max_all", self._impl)
    r = _all_reduce("max", "max_all", self, np.max)
    return _new(self._impl.device, (), self._impl.dtype, r)


def min(self):  # noqa: A001
    _it.refuse_barebones_unsigned("min_all", self._impl)
    r = _all_reduce("min", "min_all", self, np.min)
    return _new(self._impl.device, (), self._impl.dtype, r)


def max_unary_out(self, out):
    _it.refuse_barebones_unsigned("max_all", self._impl)
    r = _all_reduce("max", "max_all", self, np.max)
    return _write_outs("max", self._impl.device, [(out, (), self._impl.dtype, r)])[0]


def min_unary_out(self, out):
    r = _all_reduce("min", "min_all", self, np.min)
    return _write_outs("min", self._impl.device, [(out, (), self._impl.dtype, r)])[0]


def _minmax_dim(name, self, dim, keepdim, largest):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    _nonempty_dim(name, shape, d, dim)
    if impl.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    out_shape = _reduced(shape, d, keepdim) if shape else ()
    if _meta(impl):
        return out_shape, None, None
    a = _values(impl)
    if a.ndim == 0:
        return out_shape, a, np.zeros((), np.int64)
    # (the array methods: np.argmax's Python wrapper costs as much as the search on a small tensor)
    idx = a.argmax(axis=d, keepdims=True) if largest else a.argmin(axis=d, keepdims=True)
    if a.ndim == 2 and type(a) is np.ndarray:
        # the values at those indices: take_along_axis's gather, spelled out for a matrix
        vals = a[np.arange(a.shape[0])[:, None], idx] if d == 1 else a[idx, np.arange(a.shape[1])]
    else:
        vals = np.take_along_axis(a, idx, d)
    return out_shape, vals, idx


def _dim_result(self, out_shape, vals, idx):
    dev = self._impl.device
    return _new(dev, out_shape, self._impl.dtype, vals), _new(dev, out_shape, _int64, idx)


def _gathered_dim_result(self, out_shape, vals, idx):
    """``_dim_result`` for max/min along a dim: on CPU the gathered values and argmax's indices are new row-major
    arrays (over no input), wrapped as they are once the reduced dim is dropped.  A 0-d input (whose values
    are the input itself) and a result with a size-1 dim (whose fresh tensor has ATen's strides for it) go
    to ``_dim_result``."""
    impl = self._impl
    if impl.device is _CPU and vals is not None and vals.ndim and 1 not in out_shape and type(vals) is np.ndarray:
        dt = impl.dtype
        v = vals.reshape(out_shape)
        if v.dtype != dt.np:
            v = v.astype(dt.np)      # (float16/bfloat16 were compared in float32)
        return wrap_cpu(v, dt), wrap_cpu(idx.reshape(out_shape), _int64)
    return _dim_result(self, out_shape, vals, idx)


def max_dim(self, dim, keepdim=False):
    _it.refuse_barebones_unsigned("max_cpu", self._impl)
    return _gathered_dim_result(self, *_minmax_dim("max", self, dim, keepdim, True))


def min_dim(self, dim, keepdim=False):
    _it.refuse_barebones_unsigned("min_cpu", self._impl)
    return _gathered_dim_result(self, *_minmax_dim("min", self, dim, keepdim, False))


def max_dim_max(self, dim, keepdim=False, max=None, max_values=None):  # noqa: A002
    shape, vals, idx = _minmax_dim("max", self, dim, keepdim, True)
    return _write_outs("max", self._impl.device, [(max, shape, self._impl.dtype, vals),
                                                  (max_values, shape, _int64, idx)])


def min_dim_min(self, dim, keepdim=False, min=None, min_indices=None):  # noqa: A002
    shape, vals, idx = _minmax_dim("min", self, dim, keepdim, False)
    return _write_outs("min", self._impl.device, [(min, shape, self._impl.dtype, vals),
                                                  (min_indices, shape, _int64, idx)])


def max_other(self, other):
    return at.maximum(self, other)


def min_other(self, other):
    return at.minimum(self, other)


def max_out(self, other, out):
    return at.maximum_out(self, other, out)


def min_out(self, other, out):
    return at.minimum_out(self, other, out)


# --------------------------------------------------------------------------
# aminmax
# --------------------------------------------------------------------------

def _aminmax(self, dim, keepdim):
    impl = self._impl
    shape = tuple(impl._array.shape)
    if dim is None:
        if impl._array.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        out_shape = (1,) * len(shape) if keepdim else ()
        axis = None
    else:
        d = wrap_dim(dim, len(shape))
        if shape and shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        out_shape = _reduced(shape, d, keepdim) if shape else ()
        axis = d if shape else None
    _no_complex(impl, "aminmax_cpu")
    if _meta(impl):
        return out_shape, None, None
    a = _values(impl)
    return out_shape, np.min(a, axis=axis), np.max(a, axis=axis)


def aminmax(self, dim=None, keepdim=False):
    _it.refuse_barebones_unsigned("aminmax_cpu", self._impl)
    shape, lo, hi = _aminmax(self, dim, keepdim)
    dev, dt = self._impl.device, self._impl.dtype
    return _new(dev, shape, dt, lo), _new(dev, shape, dt, hi)


def aminmax_out(self, dim=None, keepdim=False, min=None, max=None):  # noqa: A002
    shape, lo, hi = _aminmax(self, dim, keepdim)
    dt = self._impl.dtype
    return _write_outs("aminmax", self._impl.device, [(min, shape, dt, lo), (max, shape, dt, hi)])


# --------------------------------------------------------------------------
# sort / argsort / msort
# --------------------------------------------------------------------------

def _sort(self, dim, descending):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    if impl.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")    # sic: PyTorch's text starts with a space
    if _meta(impl) or not shape:
        a = None if _meta(impl) else impl._array
        return shape, a, (None if a is None else np.zeros((), np.int64))
    a = _values(impl)
    if shape[d] <= 1:
        return shape, a, np.zeros(shape, np.int64)
    idx = _stable_argsort(a, d, descending)
    return shape, np.take_along_axis(a, idx, d), idx


def sort_stable(self, stable, dim=-1, descending=False):
    shape, vals, idx = _sort(self, dim, descending)
    impl = self._impl
    strides = _dense_strides(impl)
    return (_new(impl.device, shape, impl.dtype, vals, strides), _new(impl.device, shape, _int64, idx, strides))


def sort_values_stable(self, stable, dim=-1, descending=False, values=None, indices=None):
    shape, vals, idx = _sort(self, dim, descending)
    return _write_outs("sort", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                   (indices, shape, _int64, idx)])


def sort(self, dim=-1, descending=False):
    return at.sort_stable(self, False, dim, descending)


def sort_values(self, dim=-1, descending=False, values=None, indices=None):
    return at.sort_values_stable(self, False, dim, descending, values, indices)


def argsort(self, dim=-1, descending=False):
    return at.sort_stable(self, False, dim, descending)[1]


def argsort_stable(self, stable, dim=-1, descending=False):
    return at.sort_stable(self, stable, dim, descending)[1]


def argsort_stable_out(self, stable, dim=-1, descending=False, out=None):
    values = at.empty_like(self, None, None, None, None, None)
    at.sort_values_stable(self, stable, dim, descending, values, out)
    return out


def msort(self):
    return at.sort(self, 0, False)[0]


def msort_out(self, out):
    indices = at.empty_like(self, _int64, None, None, None, None)
    at.sort_values(self, 0, False, out, indices)
    return out


# --------------------------------------------------------------------------
# topk
# --------------------------------------------------------------------------

def _topk(self, k, dim, largest, sorted):  # noqa: A002
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    n = shape[d] if shape else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if impl.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if impl.dtype is _dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    out_shape = shape[:d] + (k,) + shape[d + 1:] if shape else ()
    if _meta(impl):
        return out_shape, None, None
    a = _values(impl)
    if not shape:
        return out_shape, a, np.zeros((), np.int64)
    if k == 0 or a.size == 0:
        return out_shape, np.empty(out_shape, a.dtype), np.empty(out_shape, np.int64)
    if a.ndim == 1 and 64 * k <= n:
        idx = _topk_candidates(a, k, largest)
        if idx is not None:
            return out_shape, a[idx], idx
    idx = np.take(_stable_argsort(a, d, largest), np.arange(k), axis=d)
    return out_shape, np.take_along_axis(a, idx, d), idx


def _topk_candidates(a, k, largest):
    """The first ``k`` of a long vector in PyTorch's order without sorting it all: a threshold from a strided
    sample keeps a few more than ``k`` candidates, which are then sorted (None: fall back to a full sort,
    e.g. when NaN, which ranks above everything, is present or the sample misjudged)."""
    n = a.shape[0]
    if a.dtype.kind == "f" and np.isnan(a.max() if largest else a.min()):
        return None
    step = (n // (64 * k + 1024)) or 1
    sample = a[::step]
    m = sample.shape[0]
    r = np.minimum(m - 1, 2 * (k * m // n + 1) + 8)          # rank in the sample of the threshold
    if largest:
        t = np.partition(sample, m - 1 - r)[m - 1 - r]
        cand = np.flatnonzero(a >= t)
    else:
        t = np.partition(sample, r)[r]
        cand = np.flatnonzero(a <= t)
    if cand.size < k:
        return None
    order = _stable_argsort(a[cand], 0, largest)[:k]
    return cand[order]


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    _it.refuse_barebones_unsigned("topk_cpu", self._impl)
    shape, vals, idx = _topk(self, k, dim, largest, sorted)
    dev = self._impl.device
    return _new(dev, shape, self._impl.dtype, vals), _new(dev, shape, _int64, idx)


def topk_values(self, k, dim=-1, largest=True, sorted=True, values=None, indices=None):  # noqa: A002
    _it.refuse_barebones_unsigned("topk_cpu", self._impl)
    shape, vals, idx = _topk(self, k, dim, largest, sorted)
    return _write_outs("topk", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                   (indices, shape, _int64, idx)])


# --------------------------------------------------------------------------
# kthvalue, median, nanmedian, mode
# --------------------------------------------------------------------------

def _select_along(name, kernel, self, dim, keepdim, pick):
    """A value chosen per slice along ``dim`` by ``pick(sorted values, sort indices, axis)``, which returns the
    position in sorted order to take (an array with the reduced shape, keepdims)."""
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    _nonempty_dim(name, shape, d, dim)
    _no_bool(impl, kernel)
    _no_complex(impl, kernel)
    out_shape = _reduced(shape, d, keepdim) if shape else ()
    if _meta(impl):
        return out_shape, None, None
    a = _values(impl)
    if not shape:
        return out_shape, a, np.zeros((), np.int64)
    order = _stable_argsort(a, d)
    svals = np.take_along_axis(a, order, d)
    pos = pick(svals, order, d)
    idx = np.take_along_axis(order, pos, d)
    return out_shape, np.take_along_axis(a, idx, d), idx


def _kthvalue(self, k, dim, keepdim):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    n = shape[d] if shape else 1
    _nonempty_dim("kthvalue", shape, d, dim)
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")

    def pick(svals, order, axis):
        return np.full(svals.shape[:axis] + (1,) + svals.shape[axis + 1:], k - 1, np.int64)
    return _select_along("kthvalue", "kthvalue_cpu", self, dim, keepdim, pick)


def kthvalue(self, k, dim=-1, keepdim=False):
    _it.refuse_barebones_unsigned("kthvalue_cpu", self._impl)
    return _dim_result(self, *_kthvalue(self, k, dim, keepdim))


def kthvalue_values(self, k, dim=-1, keepdim=False, values=None, indices=None):
    shape, vals, idx = _kthvalue(self, k, dim, keepdim)
    a = self._impl._array
    for out in (values, indices):       # ATen's assert_no_overlap: not even the input itself
        o = out._impl._array
        if type(o) is np.ndarray and type(a) is np.ndarray and o.size and a.size and np.may_share_memory(o, a):
            raise RuntimeError(_it._PARTIAL_OVERLAP)
    return _write_outs("kthvalue", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                       (indices, shape, _int64, idx)])


def _median_pick(ignore_nan):
    def pick(svals, order, axis):
        n = svals.shape[axis]
        if svals.dtype.kind != "f":
            return np.full(svals.shape[:axis] + (1,) + svals.shape[axis + 1:], (n - 1) // 2, np.int64)
        nan = np.isnan(svals)
        count = n - nan.sum(axis=axis, keepdims=True)       # NaN sorts last
        if ignore_nan:
            return np.maximum((count - 1) // 2, 0)
        # a slice with NaN has NaN as its median, at the first NaN of the input (the first NaN in sorted order)
        return np.where(count < n, count, (n - 1) // 2)
    return pick


def _median_dim(name, self, dim, keepdim, ignore_nan):
    kernel = "nanmedian_cpu" if ignore_nan else "median_cpu"
    return _select_along(name, kernel, self, dim, keepdim, _median_pick(ignore_nan))


def median_dim(self, dim, keepdim=False):
    _it.refuse_barebones_unsigned("median_out", self._impl)
    return _dim_result(self, *_median_dim("median", self, dim, keepdim, False))


def nanmedian_dim(self, dim, keepdim=False):
    return _dim_result(self, *_median_dim("nanmedian", self, dim, keepdim, True))


def median_dim_values(self, dim, keepdim=False, values=None, indices=None):
    shape, vals, idx = _median_dim("median", self, dim, keepdim, False)
    return _write_outs("median", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                     (indices, shape, _int64, idx)])


def nanmedian_dim_values(self, dim, keepdim=False, values=None, indices=None):
    shape, vals, idx = _median_dim("nanmedian", self, dim, keepdim, True)
    return _write_outs("nanmedian", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                        (indices, shape, _int64, idx)])


def _median_all(self, ignore_nan):
    impl = self._impl
    kernel = "nanmedian_cpu" if ignore_nan else "median_cpu"
    _no_bool(impl, kernel)
    _no_complex(impl, kernel)
    if _meta(impl):
        return None
    a = _values(impl).reshape(-1)
    if a.size == 0:
        return np.array(np.nan, a.dtype) if a.dtype.kind == "f" else np.zeros((), a.dtype)
    s = np.sort(a)
    pos = _median_pick(ignore_nan)(s, None, 0)
    return s[pos[0]]


def median(self):
    _it.refuse_barebones_unsigned("median_cpu", self._impl)
    return _new(self._impl.device, (), self._impl.dtype, _median_all(self, False))


def nanmedian(self):
    _it.refuse_barebones_unsigned("median_cpu", self._impl)
    return _new(self._impl.device, (), self._impl.dtype, _median_all(self, True))


def _generated_out(r, out):
    """An autogen ``out=`` overload: the functional result, checked against and copied into ``out``."""
    _check_out(out, r._impl.dtype, r._impl.device)
    _it.resize_out(out, tuple(r._impl._array.shape))
    at.copy_(out, r, False)
    return out


def median_out(self, out):
    return _generated_out(at.median(self), out)


def nanmedian_out(self, out):
    return _generated_out(at.nanmedian(self), out)


def _mode(self, dim, keepdim):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    _nonempty_dim("mode", shape, d, dim)
    _no_complex(impl, "mode_cpu")
    out_shape = _reduced(shape, d, keepdim) if shape else ()
    if _meta(impl):
        return out_shape, None, None
    a = _values(impl)
    if not shape:
        return out_shape, a, np.zeros((), np.int64)
    # slices as rows: sort each, find the longest run (the smallest value among equally long runs), and
    # report the input position of the run's last element in sorted order, as ATen's CPU kernel does
    moved = np.moveaxis(a, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    m, n = rows.shape
    order = _stable_argsort(rows, 1)
    s = np.take_along_axis(rows, order, 1)
    new_run = np.ones((m, n), bool)
    new_run[:, 1:] = s[:, 1:] != s[:, :-1]
    if s.dtype.kind == "f":
        new_run[:, 1:] &= ~(np.isnan(s[:, 1:]) & np.isnan(s[:, :-1]))
    pos = np.arange(n)
    run_start = np.maximum.accumulate(np.where(new_run, pos, 0), axis=1)
    length = pos - run_start + 1
    last = length.argmax(axis=1)                # the first longest run: the smallest such value
    r = np.arange(m)
    vals = s[r, last]
    idx = order[r, last]
    inner = moved.shape[:-1]
    vals = vals.reshape(inner)
    idx = idx.reshape(inner)
    if keepdim:
        vals = np.expand_dims(vals, d)
        idx = np.expand_dims(idx, d)
    return out_shape, vals, idx


def mode(self, dim=-1, keepdim=False):
    _it.refuse_barebones_unsigned("mode_cpu", self._impl)
    return _dim_result(self, *_mode(self, dim, keepdim))


def mode_values(self, dim=-1, keepdim=False, values=None, indices=None):
    shape, vals, idx = _mode(self, dim, keepdim)
    return _write_outs("mode", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                   (indices, shape, _int64, idx)])


# --------------------------------------------------------------------------
# cummax / cummin
# --------------------------------------------------------------------------

def _cumulative(self, dim, largest):
    impl = self._impl
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    _no_complex(impl, "cummax_cpu" if largest else "cummin_cpu")
    if _meta(impl):
        return shape, None, None
    a = _values(impl)
    if not shape:
        return shape, a, np.zeros((), np.int64)
    if a.size == 0:
        return shape, a, np.zeros(shape, np.int64)
    acc = np.maximum if largest else np.minimum
    work = a.astype(np.uint8) if a.dtype == np.bool_ else a
    vals = acc.accumulate(work, axis=d)
    # an element that reaches (or ties) the running extreme takes its place; after a NaN, only NaN does
    hit = work == vals
    if a.dtype.kind == "f":
        hit |= np.isnan(a)
    pos = np.arange(shape[d]).reshape((-1,) + (1,) * (len(shape) - d - 1))
    idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=d)
    return shape, vals, idx


def cummax(self, dim):
    _it.refuse_barebones_unsigned("cummax_cpu", self._impl)
    return _dim_result(self, *_cumulative(self, dim, True))


def cummin(self, dim):
    return _dim_result(self, *_cumulative(self, dim, False))


def cummax_out(self, dim, values=None, indices=None):
    shape, vals, idx = _cumulative(self, dim, True)
    return _write_outs("cummax", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                     (indices, shape, _int64, idx)])


def cummin_out(self, dim, values=None, indices=None):
    shape, vals, idx = _cumulative(self, dim, False)
    return _write_outs("cummin", self._impl.device, [(values, shape, self._impl.dtype, vals),
                                                     (indices, shape, _int64, idx)])




# --------------------------------------------------------------------------
# searchsorted / bucketize
# --------------------------------------------------------------------------

_SS = "torch.searchsorted(): "


def _searchsorted_checks(seq, vshape, out_int32, right, side, sorter, out=None, values=None):
    simpl = seq._impl
    dev = _it.check_devices("searchsorted", [i._impl for i in (seq, values, sorter) if i is not None], False)
    if out is not None:
        _it.check_out_device(dev, out._impl)
    sshape = tuple(simpl._array.shape)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{_SS}side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{_SS}side and right can't be set to opposites, got side of left while right was True")
    if sorter is not None:
        st = sorter._impl
        if tuple(st._array.shape) != sshape:
            raise RuntimeError(f"{_SS}boundary and sorter must have the same size, but got boundary tensor "
                               f"{list(sshape)}and got sorter tensor {list(st._array.shape)}")
        if st.dtype is not _int64:
            raise RuntimeError(f"{_SS}sorter must be a tensor of long dtype but got dtype {st.dtype.scalar_type_name}")
    if len(vshape) == 0 and len(sshape) > 1:
        raise RuntimeError(f"{_SS}input value can be a scalar only when boundaries tensor dimension is 1, but we got "
                           f"boundaries tensor dim({len(sshape)}) and input value's dim(0) numel(1)")
    if len(sshape) == 0:
        raise RuntimeError(f"{_SS}boundaries tensor should have positive dimension, but got 0 dimension")
    if len(sshape) != 1 and (len(sshape) != len(vshape) or sshape[:-1] != tuple(vshape[:-1])):
        raise RuntimeError(f"{_SS}boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                           f"tensor and input value tensor must match, but we got boundaries tensor {list(sshape)} "
                           f"and input value tensor {list(vshape)}")
    if out is not None:
        odt = out._impl.dtype
        if not ((odt is _int64 and not out_int32) or (odt is _int32 and out_int32)):
            raise RuntimeError(f"{_SS}output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) "
                               f"depending on whether out_int32 flag is True, but we got output tensor's dtype "
                               f"{odt.scalar_type_name} and out_int32 flag is {'True' if out_int32 else 'False'}")


def _batched_searchsorted(seq, vals, right):
    """Row-wise searchsorted of ``vals`` (..., k) in ``seq`` (..., n): one stable sort of both per row, the
    values placed before (left) or after (right) equal boundaries; each value's count of boundaries before it."""
    n, k = seq.shape[-1], vals.shape[-1]
    lead = vals.shape[:-1]
    ct = np.result_type(seq.dtype, vals.dtype)
    s = seq.reshape(-1, n).astype(ct, copy=False)
    v = vals.reshape(-1, k).astype(ct, copy=False)
    m = v.shape[0]
    comb = np.concatenate([s, v] if right else [v, s], axis=1)
    is_seq = np.zeros(n + k, np.int64)
    if right:
        is_seq[:n] = 1
    else:
        is_seq[k:] = 1
    order = np.argsort(comb, axis=1, kind="stable")
    flag = is_seq[order]
    before = np.cumsum(flag, axis=1) - flag
    where = np.empty_like(order)
    np.put_along_axis(where, order, np.broadcast_to(np.arange(n + k), (m, n + k)), 1)
    cols = where[:, n:] if right else where[:, :k]
    return np.take_along_axis(before, cols, 1).reshape(lead + (k,))


def _searchsorted(seq, values, vdtype, vshape, out_int32, right, side, sorter):
    simpl = seq._impl
    if side is not None:
        right = side == "right"
    if simpl.dtype.is_complex or simpl.dtype is _dt.bool or vdtype.is_complex or vdtype is _dt.bool:
        bad = simpl.dtype if (simpl.dtype.is_complex or simpl.dtype is _dt.bool) else vdtype
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{bad.scalar_type_name}'")
    if _meta(simpl):
        return None
    s = _values(simpl)
    n = s.shape[-1]
    if sorter is not None:
        srt = sorter._impl._array
        if srt.size and (srt.min() < 0 or srt.max() >= n):
            raise RuntimeError(f"{_SS}sorter index out of range")
        s = np.take_along_axis(s, srt, -1)
    v = values
    if n == 0:
        return np.zeros(vshape, np.int64)
    if s.ndim == 1:
        ct = np.result_type(s.dtype, v.dtype)
        return np.searchsorted(s.astype(ct, copy=False), v.astype(ct, copy=False), "right" if right else "left")
    if v.shape[-1] == 0:
        return np.zeros(vshape, np.int64)
    return _batched_searchsorted(s, v, right)


def searchsorted_Tensor(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    _it.refuse_barebones_unsigned("searchsorted_out_cpu", sorted_sequence._impl)
    vimpl = self._impl
    vshape = tuple(vimpl._array.shape)
    _searchsorted_checks(sorted_sequence, vshape, out_int32, right, side, sorter, None, self)
    r = _searchsorted(sorted_sequence, None if _meta(vimpl) else _values(vimpl), vimpl.dtype, vshape,
                      out_int32, right, side, sorter)
    return _new(vimpl.device, vshape, _int32 if out_int32 else _int64, r)


def searchsorted_Tensor_out(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None, out=None):
    vimpl = self._impl
    vshape = tuple(vimpl._array.shape)
    _searchsorted_checks(sorted_sequence, vshape, out_int32, right, side, sorter, out, self)
    r = _searchsorted(sorted_sequence, None if _meta(vimpl) else _values(vimpl), vimpl.dtype, vshape,
                      out_int32, right, side, sorter)
    return _write("searchsorted", out, vshape, out._impl.dtype, r)


def _scalar_values(seq, value):
    from ...core.promotion import scalar_dtype
    dt = scalar_dtype(value)
    return np.array(value, dt.np), dt


def searchsorted_Scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    simpl = sorted_sequence._impl
    _searchsorted_checks(sorted_sequence, (), out_int32, right, side, sorter)
    v, vdt = _scalar_values(sorted_sequence, self)
    r = _searchsorted(sorted_sequence, v, vdt, (), out_int32, right, side, sorter)
    return _new(simpl.device, (), _int32 if out_int32 else _int64, r)


def searchsorted_Scalar_out(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None, out=None):
    _searchsorted_checks(sorted_sequence, (), out_int32, right, side, sorter, out)
    v, vdt = _scalar_values(sorted_sequence, self)
    r = _searchsorted(sorted_sequence, v, vdt, (), out_int32, right, side, sorter)
    return _write("searchsorted", out, (), out._impl.dtype, r)


def _bucketize_check(boundaries):
    nd = boundaries._impl._array.ndim
    if nd != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({nd})")


def bucketize_Tensor(self, boundaries, out_int32=False, right=False):
    _bucketize_check(boundaries)
    return at.searchsorted_Tensor(boundaries, self, out_int32, right, None, None)


def bucketize_Tensor_out(self, boundaries, out_int32=False, right=False, out=None):
    _bucketize_check(boundaries)
    return at.searchsorted_Tensor_out(boundaries, self, out_int32, right, None, None, out)


def bucketize_Scalar(self, boundaries, out_int32=False, right=False):
    _bucketize_check(boundaries)
    return at.searchsorted_Scalar(boundaries, self, out_int32, right, None, None)




# --------------------------------------------------------------------------
# unique
# --------------------------------------------------------------------------

def _empty_long(device):
    return _new(device, (0,), _int64, np.zeros(0, np.int64))


def _unique_flat(self, return_inverse, return_counts):
    impl = self._impl
    dev = impl.device
    a = impl._array.reshape(-1)
    if impl.dtype is _dt.bfloat16:
        a = a.astype(_f32)
    vals, inv, cnt = _unique_sorted(a, return_inverse, return_counts)
    out = _new(dev, vals.shape, impl.dtype, vals)
    if inv is not None:
        inv = _new(dev, tuple(impl._array.shape), _int64, inv.reshape(impl._array.shape))
    if cnt is not None:
        cnt = _new(dev, cnt.shape, _int64, cnt)
    return out, inv, cnt


def _unique_sorted(a, return_inverse, return_counts):
    """Sorted distinct values of a vector (each NaN distinct, as PyTorch's CPU unique), the index of each
    element's value among them, and their counts (None where not asked)."""
    n = a.size
    if a.dtype.kind in "iub" and n:
        lo, hi = int(a.min()), int(a.max())
        if hi - lo <= 4 * n + 1024:
            # a narrow range: counting is one pass, no sort
            off = a.astype(np.int64) - lo
            counts = np.bincount(off, minlength=hi - lo + 1)
            present = counts > 0
            vals = (np.flatnonzero(present) + lo).astype(a.dtype)
            inv = (np.cumsum(present) - 1)[off] if return_inverse else None
            return vals, inv, (counts[present] if return_counts else None)
    if return_inverse:
        order = _stable_argsort(a, 0) if n > 1 else np.zeros(n, np.int64)
        s = a[order]
    else:
        s = np.sort(a)
    new = np.ones(n, bool)
    if n > 1:
        new[1:] = s[1:] != s[:-1]
    vals = s[new]
    inv = cnt = None
    if return_inverse:
        inv = np.empty(n, np.int64)
        inv[order] = np.cumsum(new) - 1
    if return_counts:
        starts = np.flatnonzero(new)
        cnt = np.diff(np.append(starts, n))
    return vals, inv, cnt


def _unique_no_complex(impl, kernel):
    if impl.dtype.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{impl.dtype.scalar_type_name}\'')


def _unique2(self, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    _unique_no_complex(self._impl, "unique")
    out, inv, cnt = _unique_flat(self, return_inverse, return_counts)
    dev = self._impl.device
    return out, (inv if inv is not None else _empty_long(dev)), (cnt if cnt is not None else _empty_long(dev))


def _unique(self, sorted=True, return_inverse=False):  # noqa: A002
    _unique_no_complex(self._impl, "unique")
    out, inv, _cnt = _unique_flat(self, return_inverse, False)
    return out, (inv if inv is not None else _empty_long(self._impl.device))


def _rows_along(impl, dim, name):
    """The input with ``dim`` first and the rest flattened: one row per index along ``dim``."""
    shape = tuple(impl._array.shape)
    d = wrap_dim(dim, len(shape))
    if impl._array.size == 0 and any(s == 0 for i, s in enumerate(shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    a = impl._array
    if impl.dtype is _dt.bfloat16:
        a = a.astype(_f32)
    moved = np.moveaxis(a, d, 0) if shape else a.reshape(1)
    inner = 1
    for n in moved.shape[1:]:
        inner *= n
    return d, moved, moved.reshape(moved.shape[0], inner)


def _from_rows(impl, d, moved, rows):
    """The distinct rows as a tensor laid out as PyTorch's unique_dim leaves it: the rows are computed with
    ``dim`` first (row-major) and moved back, so for ``dim != 0`` the result is that permuted view's strides."""
    shape = (rows.shape[0],) + moved.shape[1:]
    arr = np.moveaxis(rows.reshape(shape), 0, d)
    strides = None
    if d and rows.shape[0]:
        row_major = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            row_major[i] = row_major[i + 1] * (shape[i + 1] or 1)
        strides = tuple(row_major[1:d + 1]) + (row_major[0],) + tuple(row_major[d + 1:])
    return _new(impl.device, arr.shape, impl.dtype, arr, strides)


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    impl = self._impl
    _unique_no_complex(impl, "unique_dim")
    d, moved, rows = _rows_along(impl, dim, "unique_dim")
    dev = impl.device
    n = rows.shape[0]
    if n == 0:
        return (_from_rows(impl, d, moved, rows), _new(dev, (0,), _int64, np.zeros(0, np.int64)),
                _new(dev, (0,), _int64, np.zeros(0, np.int64)))
    if rows.shape[1] == 0:
        uniq, inv, cnt = rows[:1], np.zeros(n, np.int64), np.array([n], np.int64)
    else:
        # rows compared lexicographically, as ATen's unique_dim sorts them
        order = np.lexsort(rows.T[::-1])
        s = rows[order]
        new = np.ones(n, bool)
        new[1:] = np.any(s[1:] != s[:-1], axis=1)
        group = np.cumsum(new) - 1
        uniq = s[new]
        inv = np.empty(n, np.int64)
        inv[order] = group
        cnt = np.bincount(group)
    return (_from_rows(impl, d, moved, uniq),
            _new(dev, (n,), _int64, inv) if return_inverse else _empty_long(dev),
            _new(dev, cnt.shape, _int64, cnt) if return_counts else _empty_long(dev))


def _consecutive_runs(rows):
    n = rows.shape[0]
    new = np.ones(n, bool)
    if n > 1:
        diff = rows[1:] != rows[:-1]
        new[1:] = diff if diff.ndim == 1 else np.any(diff, axis=1)
    starts = np.flatnonzero(new)
    return new, starts, np.diff(np.append(starts, n))


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    impl = self._impl
    _unique_no_complex(impl, "unique_consecutive")
    if dim is not None:
        return at.unique_dim_consecutive(self, dim, return_inverse, return_counts)
    dev = impl.device
    a = impl._array.reshape(-1)
    if impl.dtype is _dt.bfloat16:
        a = a.astype(_f32)
    new, starts, counts = _consecutive_runs(a)
    vals = a[starts]
    inv = (np.cumsum(new) - 1).reshape(impl._array.shape)
    return (_new(dev, vals.shape, impl.dtype, vals),
            _new(dev, inv.shape, _int64, inv) if return_inverse else _empty_long(dev),
            _new(dev, counts.shape, _int64, counts) if return_counts else _empty_long(dev))


def unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    impl = self._impl
    _unique_no_complex(impl, "unique_dim_consecutive")
    d, moved, rows = _rows_along(impl, dim, "unique_dim_consecutive")
    dev = impl.device
    n = rows.shape[0]
    new, starts, counts = _consecutive_runs(rows) if n else (np.zeros(0, bool), np.zeros(0, np.int64),
                                                             np.zeros(0, np.int64))
    inv = np.cumsum(new) - 1
    return (_from_rows(impl, d, moved, rows[starts]),
            _new(dev, (n,), _int64, inv) if return_inverse else _empty_long(dev),
            _new(dev, counts.shape, _int64, counts) if return_counts else _empty_long(dev))


# --------------------------------------------------------------------------
# bincount, histc, histogram
# --------------------------------------------------------------------------

def bincount(self, weights=None, minlength=0):
    _it.refuse_barebones_unsigned("bincount_cpu", self._impl)
    impl = self._impl
    if impl.dtype.category != 1:
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{impl.dtype.scalar_type_name}\'')
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None:
        _it.check_devices("bincount", [impl, weights._impl], False)
    a = impl._array
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    dev = impl.device
    if weights is None:
        r = np.bincount(a.astype(np.int64), minlength=minlength)
        return _new(dev, r.shape, _int64, r)
    w = weights._impl
    if w._array.ndim != 1 or w._array.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dt = _dt.float32 if w.dtype is _dt.float32 else _dt.float64
    wa = w._array.astype(np.float64) if not w.dtype.is_complex else w._array.real.astype(np.float64)
    r = np.bincount(a.astype(np.int64), weights=wa, minlength=minlength)
    return _new(dev, r.shape, out_dt, r)


def _float_input(impl, kernel):
    half = kernel == "histogramdd" and (impl.dtype is _dt.float16 or impl.dtype is _dt.bfloat16)
    if not impl.dtype.is_floating_point or half:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{impl.dtype.scalar_type_name}\'')


def _linear_bins(a, lo, hi, bins, edges=None, narrow=None):
    """Bin index of every element of ``a`` in ``bins`` equal bins over [lo, hi] (``hi`` in the last bin), -1
    outside; with ``edges``, an element is moved to its neighbour bin where rounding put it on the wrong
    side of an edge (PyTorch's local search).  ``narrow`` (a float16/bfloat16 NumPy dtype, ``a`` widened to
    float32) rounds each step to it, as PyTorch's kernel does arithmetic in the input's c10::Half/BFloat16."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if narrow is not None:
            def r(v):
                return np.asarray(v, _f32).astype(narrow).astype(_f32)
            pos = r(r(r(a - lo) * _f32(r(bins))) / r(hi - lo))
        else:
            pos = ((a - lo) * bins / (hi - lo))
        inside = (a >= lo) & (a <= hi)
        idx = np.where(inside, pos, 0).astype(np.int64)
    idx = np.minimum(idx, bins - 1)
    if edges is not None:
        idx = np.where(inside & (a < edges[idx]), idx - 1, idx)
        idx = np.where(inside & (idx + 1 < bins) & (a >= edges[np.minimum(idx + 1, bins)]), idx + 1, idx)
    return np.where(inside, idx, -1)


def _count(idx, bins, weights, dtype):
    keep = idx >= 0
    if weights is None:
        return np.bincount(idx[keep], minlength=bins)[:bins].astype(dtype)
    # weights summed into each bin in the input's type, element by element in order, as PyTorch's histogram
    # kernel does on one thread (its result with several threads depends on their number)
    hist = np.zeros(bins, dtype)
    np.add.at(hist, idx[keep], weights[keep].astype(dtype))
    return hist


def histc(self, bins=100, min=0, max=0):  # noqa: A002
    impl = self._impl
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _float_input(impl, "histogram_cpu")
    if _meta(impl):
        return _new(impl.device, (bins,), impl.dtype)
    return _new(impl.device, (bins,), impl.dtype, _histc(impl, bins, min, max))


def _histc_bound(v, dtype):
    """A Scalar bound as histc reads it: to double first, then to the input's type, refusing overflow."""
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        v = v.real
    return checked_scalar(float(v), dtype)


def _histc(impl, bins, lo, hi):
    lo, hi = _histc_bound(lo, impl.dtype), _histc_bound(hi, impl.dtype)
    a = _values(impl).reshape(-1)
    ct = a.dtype.type
    lo, hi = ct(lo), ct(hi)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and a.size:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    narrow = impl.dtype.np if impl.dtype is _dt.float16 or impl.dtype is _dt.bfloat16 else None
    return _count(_linear_bins(a, lo, hi, bins, narrow=narrow), bins, None, a.dtype)


def _fmt(v):
    v = float(v)
    if v != v:
        return "-nan"
    return repr(int(v)) if v.is_integer() else repr(v).replace("inf", "inf")


def histc_out(self, bins=100, min=0, max=0, out=None):  # noqa: A002
    impl = self._impl
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _float_input(impl, "histogram_cpu")
    r = None if _meta(impl) else _histc(impl, bins, min, max)
    return _write_outs("histc", impl.device, [(out, (bins,), impl.dtype, r)])[0]


_HDD = "torch.histogramdd: "


def _weight_dtype_check(impl, w) -> None:
    if w.dtype is not impl.dtype:
        raise RuntimeError(f"{_HDD}if weight tensor is provided, input tensor and weight tensor should have the "
                           f"same dtype, but got input({impl.dtype.cpp_type_name}), and weight({w.dtype.cpp_type_name})")


def _histogram_checks(impl, weight, bins_dtype=None, bins=None):
    _it.check_devices("histogram", [i._impl for i in (weight, bins) if i is not None] + [impl], False)
    if weight is not None:
        w = weight._impl
        if w._array.size != impl._array.size:     # both flattened first, as histogram does
            raise RuntimeError(f"{_HDD}if weight tensor is provided it should have the same shape as the input tensor "
                               f"excluding its innermost dimension, but got input with shape "
                               f"{[impl._array.size, 1]} and weight with shape {[w._array.size]}")
        _weight_dtype_check(impl, w)
    if bins_dtype is not None and bins_dtype is not impl.dtype:
        raise RuntimeError(f"{_HDD}input tensor and bins tensors should have the same dtype, but got input with "
                           f"dtype {impl.dtype.cpp_type_name} and bins for dimension 0 with dtype "
                           f"{bins_dtype.cpp_type_name}")


def _histogram_range(a, range_, dtype):
    ct = a.dtype.type
    if range_ is not None:
        lo, hi = ct(range_[0]), ct(range_[1])
    elif a.size:
        lo, hi = a.min(), a.max()
    else:
        lo, hi = ct(0), ct(1)
    if lo > hi:
        raise RuntimeError(f"{_HDD}min should not exceed max, but got min {_fmt(lo)} max {_fmt(hi)} for dimension 0")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"{_HDD}range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo == hi:
        lo, hi = lo - ct(0.5), hi + ct(0.5)
    return lo, hi


def _density(hist, edges):
    # as PyTorch: divided by the total first, then by each bin's width (two roundings in the input's type)
    total = hist.sum()
    widths = np.diff(edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (hist / total) / widths


def _histogram_bin_ct(self, bins, range_, weight, density):
    impl = self._impl
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _float_input(impl, "histogramdd")
    _histogram_checks(impl, weight)
    if _meta(impl):
        return None, None
    a = _values(impl).reshape(-1)
    lo, hi = _histogram_range(a, range_, impl.dtype)
    edges = np.linspace(lo, hi, bins + 1, dtype=a.dtype)
    w = None if weight is None else _values(weight._impl).reshape(-1)
    hist = _count(_linear_bins(a, lo, hi, bins, edges), bins, w, a.dtype)
    if density:
        hist = _density(hist, edges).astype(a.dtype)
    return hist, edges


def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):  # noqa: A002
    hist, edges = _histogram_bin_ct(self, bins, range, weight, density)
    dev, dt = self._impl.device, self._impl.dtype
    return _new(dev, (bins,), dt, hist), _new(dev, (bins + 1,), dt, edges)


def histogram_bin_ct_out(self, bins=100, range=None, weight=None, density=False, hist=None,  # noqa: A002
                         bin_edges=None):
    h, e = _histogram_bin_ct(self, bins, range, weight, density)
    dt = self._impl.dtype
    return _write_outs("histogram", self._impl.device, [(hist, (bins,), dt, h), (bin_edges, (bins + 1,), dt, e)])


def _histogram_bins_tensor(self, bins, weight, density):
    impl = self._impl
    b = bins._impl
    if b._array.ndim != 1:
        raise RuntimeError(f"{_HDD}bins tensor should have one dimension, but got {b._array.ndim} dimensions in the "
                           f"bins tensor for dimension 0")
    nb = b._array.shape[0] - 1
    if nb <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must have at least 1 bin edge, but got {nb + 1} for "
                           f"dimension 0")
    _float_input(impl, "histogramdd")
    _histogram_checks(impl, weight, b.dtype, bins)
    if _meta(impl):
        return nb, None, None
    a = _values(impl).reshape(-1)
    edges = _values(b)
    lo, hi = edges[0], edges[-1]
    # the bin of x is the last edge <= x; the last edge itself belongs to the last bin
    idx = np.searchsorted(edges, a, "right") - 1
    idx = np.where(a == hi, nb - 1, idx)
    with np.errstate(invalid="ignore"):
        inside = (a >= lo) & (a <= hi)
    idx = np.where(inside & (idx >= 0) & (idx < nb), idx, -1)
    w = None if weight is None else _values(weight._impl).reshape(-1)
    hist = _count(idx, nb, w, a.dtype)
    if density:
        hist = _density(hist, edges).astype(a.dtype)
    return nb, hist, edges


def histogram_bins_tensor(self, bins, weight=None, density=False):
    nb, hist, edges = _histogram_bins_tensor(self, bins, weight, density)
    dev, dt = self._impl.device, self._impl.dtype
    return _new(dev, (nb,), dt, hist), _new(dev, (nb + 1,), dt, edges)


def histogram_bins_tensor_out(self, bins, weight=None, density=False, hist=None, bin_edges=None):
    nb, h, e = _histogram_bins_tensor(self, bins, weight, density)
    dt = self._impl.dtype
    return _write_outs("histogram", self._impl.device, [(hist, (nb,), dt, h), (bin_edges, (nb + 1,), dt, e)])


# --------------------------------------------------------------------------
# quantile / nanquantile (composites: sort, then the two neighbours of each rank, interpolated)
# --------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(name, self, q, dim, interpolation, out=None):
    impl = self._impl
    if impl._array.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if not (impl.dtype is _dt.float32 or impl.dtype is _dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if hasattr(q, "_impl"):
        qi = q._impl
        if qi._array.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if qi.dtype is not impl.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if qi.device != impl.device:
            raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if dim is not None:
        wrap_dim(dim, impl._array.ndim)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if out is not None and out._impl.dtype is not impl.dtype:
        raise RuntimeError(f"{name}() out tensor must be same dtype as the input tensor")
    if hasattr(q, "_impl") and not _no_data(q._impl):
        qa = q._impl._array
        if qa.size and not ((qa >= 0).all() and (qa <= 1).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")


def _quantile(name, self, q, dim, keepdim, interpolation, ignore_nan):
    _quantile_checks(name, self, q, dim, interpolation)
    impl = self._impl
    ndim = impl._array.ndim
    scalar_q = not hasattr(q, "_impl") or q._impl._array.ndim == 0
    if dim is None:
        x = at.reshape(self, [-1])
    else:
        d = wrap_dim(dim, ndim)
        x = at.unsqueeze(self, -1) if ndim else at.reshape(self, [1, 1])
        if ndim:
            x = at.transpose_int(x, d, -1)
    srt = at.sort(x, -1, False)[0]
    n = srt._impl._array.shape[-1]
    lead = tuple(srt._impl._array.shape[:-1])
    dt = impl.dtype
    if hasattr(q, "_impl"):
        qv = None if _no_data(q._impl) else q._impl._array.reshape(-1)
        nq = q._impl._array.size
    else:
        qv = _namespace_of(impl._array).asarray([q], dtype=dt.np)        # on self's device
        nq = 1
    q_slope = q_fixed = None    # d rank / d q, where q is a tensor the linear weights depend on (as ATen's ranks)
    no_values = _no_data(impl) or qv is None
    if no_values:
        below = np.zeros(lead + (nq,), np.int64)
        above, weight = below, None
    else:
        s = srt._impl._array
        one = dt.np.type(1)
        qv = qv.astype(dt.np)
        if ignore_nan:
            count = (n - np.isnan(s).sum(-1, keepdims=True)).astype(dt.np)
            rank = qv * (count - one)
            q_fixed = np.broadcast_to(rank < 0, lead + (nq,))        # ATen clamps negative ranks to 0
            q_slope = np.broadcast_to(count - one, lead + (nq,))
            rank = np.where(count == 0, dt.np.type(n - 1), rank)
        else:
            rank = np.broadcast_to(qv * dt.np.type(n - 1), lead + (nq,))
            nan_row = np.isnan(s[..., -1:])
            q_fixed = np.broadcast_to(nan_row, lead + (nq,))         # a row with NaN: rank fixed at n - 1
            q_slope = np.full(lead + (nq,), n - 1, dt.np)
            rank = np.where(nan_row, dt.np.type(n - 1), rank)
        if interpolation == "lower":
            rank = np.floor(rank)
        elif interpolation == "higher":
            rank = np.ceil(rank)
        elif interpolation == "nearest":
            rank = np.round(rank)
        below = np.floor(rank).astype(np.int64)
        above = np.minimum(np.ceil(rank).astype(np.int64), n - 1)
        if interpolation == "midpoint":
            weight = np.where(above == below, dt.np.type(0), dt.np.type(0.5)).astype(dt.np)
        else:
            weight = (rank - below).astype(dt.np)
    lo = _pick_sorted(srt, below, n)
    r = lo
    if interpolation in ("linear", "midpoint"):
        hi = _pick_sorted(srt, above, n)
        w = _blank_or_new(impl, below.shape, dt, weight)
        if interpolation == "linear" and (q_slope is not None or no_values) and hasattr(q, "_impl") \
                and q._impl.requires_grad:
            # the weights are rank - floor(rank) with rank linear in q: q's gradient flows through them (the
            # added term is zero, its derivative the slope), as through ATen's composite
            # where a rank is fixed, ATen's masked_fill gives q a zero gradient (not NaN * 0)
            dq = at.sub_Tensor(at.reshape(q, [-1]), at.reshape(q.detach(), [-1]), 1)
            dw = dq * _blank_or_new(impl, below.shape, dt, q_slope)
            w = w + at.where_self(_blank_or_new(impl, below.shape, _dt.bool, q_fixed),
                                  at.zeros_like(dw, None, None, None, None, None), dw)
        # ATen's lerp: from the nearer end, so a weight of 1 gives the upper value exactly
        diff = hi - lo
        r = at.where_self(at.lt_Scalar(w, 0.5), lo + w * diff, hi - diff * (1 - w))
    # r: lead + (nq,) -> (nq,) + lead, the reduced dim kept or dropped
    nd = len(lead) + 1
    r = at.permute(r, [nd - 1] + list(range(nd - 1)))
    if dim is None:
        if keepdim:
            r = at.reshape(r, [nq] + [1] * ndim)
        else:
            r = at.reshape(r, [nq])
    elif not ndim:
        r = at.reshape(r, [nq])             # a 0-dim input has no dim to keep
    elif not keepdim:
        r = at.squeeze_dim(r, wrap_dim(dim, ndim) + 1)
    if scalar_q:
        r = at.squeeze_dim(r, 0)
    return r


def _blank_or_new(impl, shape, dtype, arr):
    """A tensor of ``arr``'s values on ``impl``'s device; without values (``impl`` holds no data) a ``zeros``
    call, so that under a mode (FakeTensorMode) it is the mode's tensor like the others."""
    if arr is None:
        return at.zeros(list(shape), dtype, None, impl.device, None)
    return _new(impl.device, shape, dtype, arr)


def _namespace_of(arr):
    if type(arr) is np.ndarray:
        return np
    from ...backends.base import BACKENDS
    for b in BACKENDS.values():
        xp = b.xp
        if xp is not None and xp is not np:
            array_type = getattr(xp, "ndarray", None) or getattr(xp, "Array", None)     # CuPy's, Dask's
            if array_type is not None and isinstance(arr, array_type):
                return xp
    return np


def _pick_sorted(srt, pos, n):
    """``srt``'s elements at ``pos`` along its last dim (``pos``: lead + (nq,)), differentiably: a 0/1
    selection matrix per row, summed over the sorted values."""
    impl = srt._impl
    shape = pos.shape[:-1] + (n, pos.shape[-1])
    # the positions' own namespace (CuPy refuses a NumPy operand next to a device array)
    sel = None if _no_data(impl) else (_namespace_of(pos).arange(n).reshape(-1, 1) == pos[..., None, :])
    mask = _blank_or_new(impl, shape, impl.dtype, sel)
    if sel is None or not np.isnan(impl._array).any():
        return at.sum_dim_IntList(at.unsqueeze(srt, -1) * mask, [-2], False, None)
    # NaN * 0 would spread: the NaN are zeroed first, and put back where a NaN itself is picked
    nan = at.ne_Tensor(srt, srt)
    clean = at.where_self(nan, at.zeros_like(srt, None, None, None, None, None), srt)
    r = at.sum_dim_IntList(at.unsqueeze(clean, -1) * mask, [-2], False, None)
    picked_nan = np.take_along_axis(np.isnan(impl._array), pos, -1)
    return at.where_self(_new(impl.device, pos.shape, _dt.bool, picked_nan),
                         at.full_like(r, float("nan"), None, None, None, None, None), r)


def quantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def quantile_scalar(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def nanquantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def nanquantile_scalar(self, q, dim=None, keepdim=False, interpolation="linear"):
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def _quantile_out(name, self, q, dim, keepdim, interpolation, ignore_nan, out):
    _quantile_checks(name, self, q, dim, interpolation, out)
    r = _quantile(name, self, q, dim, keepdim, interpolation, ignore_nan)
    _it.check_out_device(self._impl.device, out._impl)
    _it.resize_out(out, tuple(r._impl._array.shape))
    at.copy_(out, r, False)
    return out


def quantile_out(self, q, dim=None, keepdim=False, interpolation="linear", out=None):
    return _quantile_out("quantile", self, q, dim, keepdim, interpolation, False, out)


def quantile_scalar_out(self, q, dim=None, keepdim=False, interpolation="linear", out=None):
    return _quantile_out("quantile", self, q, dim, keepdim, interpolation, False, out)


def nanquantile_out(self, q, dim=None, keepdim=False, interpolation="linear", out=None):
    return _quantile_out("nanquantile", self, q, dim, keepdim, interpolation, True, out)


def nanquantile_scalar_out(self, q, dim=None, keepdim=False, interpolation="linear", out=None):
    return _quantile_out("nanquantile", self, q, dim, keepdim, interpolation, True, out)


# --------------------------------------------------------------------------
# histogramdd (torch.histogramdd is onion.functional.histogramdd over these three)
# --------------------------------------------------------------------------

def _hdd_checks(self, nbins, range_, weight):
    impl = self._impl
    if impl._array.ndim < 2:
        raise RuntimeError(f"{_HDD}input tensor should have at least 2 dimensions")
    d = impl._array.shape[-1]
    if nbins != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range_ is not None and len(range_) != 2 * d:
        raise RuntimeError(f"{_HDD}for a {d}-dimensional histogram range should have {2 * d} elements, but got "
                           f"{len(range_)}")
    _float_input(impl, "histogramdd")
    if weight is not None:
        w = weight._impl
        _it.check_devices("histogramdd", [impl, w], False)
        if tuple(w._array.shape) != tuple(impl._array.shape[:-1]):
            n = impl._array.size // d if d else 0
            raise RuntimeError(f"{_HDD}if weight tensor is provided it should have the same shape as the input tensor "
                               f"excluding its innermost dimension, but got input with shape {[n, d]} and weight "
                               f"with shape {list(w._array.shape)}")
        _weight_dtype_check(impl, w)


def _hdd_edges(self, bins, range_):
    """Each dim's bin edges (equal bins over its range: given, else the data's, widened when empty)."""
    a = _values(self._impl)
    d = a.shape[-1]
    pts = a.reshape(-1, d)
    out = []
    for j, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {j}")
        col = pts[:, j]
        lo, hi = _histogram_range(col, None if range_ is None else range_[2 * j:2 * j + 2], self._impl.dtype)
        out.append(np.linspace(lo, hi, b + 1, dtype=a.dtype))
    return pts, out


def _hdd_count(self, pts, edges, linear, weight, density):
    dt = pts.dtype
    shape = tuple(e.shape[0] - 1 for e in edges)
    flat = np.zeros(pts.shape[0], np.int64)
    keep = np.ones(pts.shape[0], bool)
    for j, e in enumerate(edges):
        nb = shape[j]
        col = pts[:, j]
        if linear:
            idx = _linear_bins(col, e[0], e[-1], nb, e)
        else:
            idx = np.searchsorted(e, col, "right") - 1
            idx = np.where(col == e[-1], nb - 1, idx)
            with np.errstate(invalid="ignore"):
                idx = np.where((col >= e[0]) & (col <= e[-1]) & (idx >= 0) & (idx < nb), idx, -1)
        keep &= idx >= 0
        flat = flat * nb + np.maximum(idx, 0)
    total = 1
    for nb in shape:
        total *= nb
    w = None if weight is None else _values(weight._impl).reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(flat[keep], weights=w, minlength=total)[:total].astype(np.float64).reshape(shape)
    if density:
        vol = np.ones(shape)
        for j, e in enumerate(edges):
            vol = vol * np.diff(e.astype(np.float64)).reshape((1,) * j + (-1,) + (1,) * (len(shape) - j - 1))
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = hist / (hist.sum() * vol)
    return hist.astype(dt)


def _histogramdd_bin_edges(self, bins, range=None, weight=None, density=False):  # noqa: A002
    _hdd_checks(self, len(bins), range, weight)
    _pts, edges = _hdd_edges(self, bins, range)
    return [_new(self._impl.device, e.shape, self._impl.dtype, e) for e in edges]


def _histogramdd_from_bin_cts(self, bins, range=None, weight=None, density=False):  # noqa: A002
    _hdd_checks(self, len(bins), range, weight)
    pts, edges = _hdd_edges(self, bins, range)
    hist = _hdd_count(self, pts, edges, True, weight, density)
    return _new(self._impl.device, hist.shape, self._impl.dtype, hist)


def _histogramdd_from_bin_tensors(self, bins, weight=None, density=False):
    _hdd_checks(self, len(bins), None, weight)
    impl = self._impl
    for j, b in enumerate(bins):
        bi = b._impl
        if bi._array.ndim != 1:
            raise RuntimeError(f"{_HDD}bins tensor should have one dimension, but got {bi._array.ndim} dimensions in "
                               f"the bins tensor for dimension {j}")
        if bi.dtype is not impl.dtype:
            raise RuntimeError(f"{_HDD}input tensor and bins tensors should have the same dtype, but got input with "
                               f"dtype {impl.dtype.cpp_type_name} and bins for dimension {j} with dtype "
                               f"{bi.dtype.cpp_type_name}")
    a = _values(impl)
    pts = a.reshape(-1, a.shape[-1])
    hist = _hdd_count(self, pts, [_values(b._impl) for b in bins], False, weight, density)
    return _new(impl.device, hist.shape, impl.dtype, hist)
