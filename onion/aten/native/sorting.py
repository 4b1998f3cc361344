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

from ...core import dtype as _dt
from ...core.geometry import is_non_overlapping_and_dense, wrap_dim
from .. import iterator as _it
from ..at import at
from ..tensor_new import empty_tensor

_int64 = _dt.int64
_int32 = _dt.int32
_f32 = np.float32


# --------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------

def _meta(impl) -> bool:
    return impl.device.type == "meta"


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


def _stable_argsort(a, axis, descending=False):
    """Indices that sort ``a`` along ``axis``; equal elements keep their order, NaN counts as the largest."""
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
    r = _all_reduce("max", "max_all", self, np.max)
    return _new(self._impl.device, (), self._impl.dtype, r)


def min(self):  # noqa: A001
    r = _all_reduce("min", "min_all", self, np.min)
    return _new(self._impl.device, (), self._impl.dtype, r)


def max_unary_out(self, out):
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
    idx = np.argmax(a, axis=d, keepdims=True) if largest else np.argmin(a, axis=d, keepdims=True)
    vals = np.take_along_axis(a, idx, d)
    return out_shape, vals, idx


def _dim_result(self, out_shape, vals, idx):
    dev = self._impl.device
    return _new(dev, out_shape, self._impl.dtype, vals), _new(dev, out_shape, _int64, idx)


def max_dim(self, dim, keepdim=False):
    return _dim_result(self, *_minmax_dim("max", self, dim, keepdim, True))


def min_dim(self, dim, keepdim=False):
    return _dim_result(self, *_minmax_dim("min", self, dim, keepdim, False))


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
        raise RuntimeError("Sort does not support complex dtypes on CPU")
    if _meta(impl) or not shape:
        a = None if _meta(impl) else impl._array
        return shape, a, (None if a is None else np.zeros((), np.int64))
    a = _values(impl)
    if shape[d] <= 1:
        return shape, a, np.zeros(shape, np.int64)
    if a.ndim == 1 and not descending:
        idx = np.argsort(a, kind="stable")
        return shape, a[idx], idx
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
        raise RuntimeError("topk does not support complex dtypes on CPU")
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
    if 4 * k < n and a.ndim == 1:
        # select the k candidates first: the boundary value's ties are taken in input order
        b = -a if (largest and a.dtype.kind == "f") else a
        if largest and a.dtype.kind != "f":
            idx = _stable_argsort(a, 0, True)[:k]
        else:
            kth = np.partition(b, k - 1)[k - 1]
            if b.dtype.kind == "f" and kth != kth:
                idx = _stable_argsort(a, 0, largest)[:k]
            else:
                cand = np.flatnonzero(b <= kth)
                order = np.argsort(b[cand], kind="stable")[:k]
                idx = cand[order]
                if largest:             # -x ascending is x descending, except NaN, handled above
                    nan = np.isnan(a[idx])
                    if nan.any():
                        idx = _stable_argsort(a, 0, True)[:k]
        return out_shape, a[idx], idx
    idx = np.take(_stable_argsort(a, d, largest), np.arange(k), axis=d)
    return out_shape, np.take_along_axis(a, idx, d), idx


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    shape, vals, idx = _topk(self, k, dim, largest, sorted)
    dev = self._impl.device
    return _new(dev, shape, self._impl.dtype, vals), _new(dev, shape, _int64, idx)


def topk_values(self, k, dim=-1, largest=True, sorted=True, values=None, indices=None):  # noqa: A002
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
    order = np.argsort(a, axis=d, kind="stable")
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
    return _dim_result(self, *_kthvalue(self, k, dim, keepdim))


def kthvalue_values(self, k, dim=-1, keepdim=False, values=None, indices=None):
    shape, vals, idx = _kthvalue(self, k, dim, keepdim)
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
    return _new(self._impl.device, (), self._impl.dtype, _median_all(self, False))


def nanmedian(self):
    return _new(self._impl.device, (), self._impl.dtype, _median_all(self, True))


def median_out(self, out):
    return _write_outs("median", self._impl.device, [(out, (), self._impl.dtype, _median_all(self, False))])[0]


def nanmedian_out(self, out):
    return _write_outs("nanmedian", self._impl.device, [(out, (), self._impl.dtype, _median_all(self, True))])[0]


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
    order = np.argsort(rows, axis=1, kind="stable")
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


