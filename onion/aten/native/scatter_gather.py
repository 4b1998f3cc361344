"""gather / scatter / scatter_add / scatter_reduce and the index_* family (index_select, index_add,
index_copy, index_fill, index_reduce), take_along_dim.

Every scatter-like kernel reduces to one step: the result starts as a row-major copy of ``self``
and each element of the (sliced) source goes to one flat position of it.  The flat positions are
the index values times the result's stride along ``dim`` plus the broadcast offsets of the other
dims, so the writes are one fancy assignment or one ``ufunc.at`` (``np.add.at``, ``np.maximum.at``,
...) over 1-D arrays, NumPy's fast path.  The index_* ops are the same with the 1-D index expanded
along ``dim``.  Meta runs only the checks and shapes (PyTorch's meta functions check no bounds).
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as _dt
from ...core import loops
from ...core.geometry import contiguous_strides, wrap_dim
from ..at import at
from ..structured import Plan
from .. import iterator as _it
from .workspace import scratch

_int64 = _dt.int64
_int32 = _dt.int32
_INDEX_DTYPES = (_int64, _int32)


# --------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------

def _shape(t):
    return tuple(t._impl._array.shape)


def _nz(n):
    """ensure_nonempty_dim: a 0-dim tensor counts as one dim."""
    return n if n > 0 else 1


def _nz_size(shape, d):
    return shape[d] if shape else 1


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _is_meta(*impls):
    return any(i.device.type == "meta" for i in impls)


def _acc_np(dt):
    """The NumPy dtype a reduction into ``dt`` runs in (float16/bfloat16 in float32, as ATen's opmath)."""
    if dt is _dt.float16 or dt is _dt.bfloat16:
        return np.float32
    return dt.np


def _index_array(impl, shape=None):
    a = np.asarray(impl._array)
    if a.dtype != np.int64:
        a = a.astype(np.int64)
    if shape is not None:
        a = a.reshape(shape)
    return a


def _first_bad(idx, size, allow_negative=False):
    """The first index (row-major order) outside [0, size) (or [-size, size)), or None."""
    if idx.size == 0:
        return None
    lo = -size if allow_negative else 0
    if idx.min() >= lo and idx.max() < size:
        return None
    flat = idx.reshape(-1)
    bad = np.flatnonzero((flat < lo) | (flat >= size))
    return int(flat[bad[0]])


def _check_bounds(idx, size, dim):
    bad = _first_bad(idx, size)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _lead_slices(shape):
    return tuple(slice(0, n) for n in shape)


def _flat_targets(out_shape, dim, idx):
    """Flat positions in a row-major array of ``out_shape`` for index ``idx`` along ``dim``
    (``idx`` has the same number of dims; its other sizes are no larger than the result's)."""
    st, off = _flat_offsets(out_shape, dim, idx)
    if st == 1:
        return idx.copy() if off is None else np.add(idx, off)
    flat = np.multiply(idx, st)
    if off is not None:
        flat += off
    return flat


_CHUNK = 1 << 17       # flat positions worked out per block: 1 MiB of int64, which stays in cache


def _flat_offsets(out_shape, dim, idx):
    """(stride along ``dim``, the other dims' offsets broadcast over ``idx``'s shape or None) for flat
    positions in a row-major array of ``out_shape``."""
    strides = contiguous_strides(out_shape)
    nd = idx.ndim
    off = None
    for d in range(nd):
        n = idx.shape[d]
        if d == dim or n == 1:
            continue
        sh = [1] * nd
        sh[d] = n
        part = (np.arange(n, dtype=np.int64) * strides[d]).reshape(sh)
        off = part if off is None else off + part
    return strides[dim], off


def _flat_chunks(out_shape, dim, idx):
    """The flat positions of ``idx`` (int64, >= 1-D) in a row-major array of ``out_shape``, a block of its
    leading dim at a time: yields (slice of that dim, origin, 1-D positions relative to ``origin``).  Each
    block's index values are checked against the size of ``dim`` first (one max over their unsigned view: a
    negative one is huge there), and the first bad value in row-major order raises, as ATen's check does.
    Working block by block keeps the positions in cache between being made and being used, and the offsets
    of the other dims are the same in every block relative to its origin, so they are made once."""
    size = out_shape[dim]
    st, off = _flat_offsets(out_shape, dim, idx)
    n0 = idx.shape[0]
    inner = _numel(idx.shape[1:])
    if n0 == 0 or inner == 0:
        return
    step = min(n0, max(1, _CHUNK // inner))
    buf = local = None
    moves = 0
    if off is not None:
        # the dim-0 offset of a block's first row is its origin; what is left repeats in every block
        moves = contiguous_strides(out_shape)[0] if dim != 0 and off.shape[0] > 1 else 0
        local = scratch("flat.local", (step,) + idx.shape[1:], np.int64)
        np.copyto(local, off[:step] if off.shape[0] > 1 else off)
    for r0 in range(0, n0, step):
        rows = slice(r0, min(n0, r0 + step))
        ic = idx[rows]
        if ic.view(np.uint64).max() >= size:
            _check_bounds(ic, size, dim)
        if st == 1 and local is None:
            yield rows, 0, ic.reshape(-1)
            continue
        if buf is None:
            buf = scratch("flat.positions", (step,) + idx.shape[1:], np.int64)
        n = rows.stop - r0
        b = buf[:n]
        if st == 1:
            np.add(ic, local[:n], out=b)
        else:
            np.multiply(ic, st, out=b)
            if local is not None:
                b += local[:n]
        yield rows, r0 * moves, b.reshape(-1)


def _result_copy(impl, acc=None):
    """A fresh row-major copy of ``impl``'s data (at least 1-D), in ``acc`` when given."""
    a = np.asarray(impl._array)
    if a.ndim == 0:
        a = a.reshape(1)
    dt = acc if acc is not None else a.dtype
    return np.array(a, dtype=dt, order="C", copy=True)


_LOWEST = {"amax": "min", "amin": "max"}


def _identity(mode, np_dtype):
    """What a position scattered to without ``include_self`` starts from."""
    if mode in ("sum", "mean", "add"):
        return 0
    if mode in ("prod", "multiply"):
        return 1
    kind = np.dtype(np_dtype).kind
    if kind == "b":
        return mode == "amin"
    if kind in "iu":
        info = np.iinfo(np_dtype)
        return info.min if mode == "amax" else info.max
    return -np.inf if mode == "amax" else np.inf


_UFUNC = {"sum": np.add, "add": np.add, "prod": np.multiply, "multiply": np.multiply,
          "amax": np.maximum, "amin": np.minimum}


def _scatter_into(res, dim, idx, vals, mode, include_self=True):
    """Scatter ``vals`` (idx's shape, or a scalar) into ``res`` (row-major, >= 1-D) in place, checking the
    index values against ``res``'s size along ``dim`` (``res`` is a fresh copy: a bad index may leave it
    partly written)."""
    if idx.size == 0:
        return res
    out = res.reshape(-1)
    scalar = not isinstance(vals, np.ndarray) or vals.ndim == 0
    if mode == "mean" or not include_self:
        # every target is reset (or counted) before anything accumulates: one pass over all positions
        _check_bounds(idx, res.shape[dim], dim)
        flat = _flat_targets(res.shape, dim, idx).reshape(-1)
        vals = np.full(flat.shape, vals, dtype=res.dtype) if scalar else _flat_values(vals, res.dtype)
        if not include_self:
            out[flat] = _identity(mode, res.dtype)
        if mode != "mean":
            _UFUNC[mode].at(out, flat, vals)
            return res
        _add_at(out, flat, vals)
        cnt = np.bincount(flat, minlength=out.size)
        if include_self:
            cnt += 1
        hit = cnt > 0
        if out.dtype.kind in "iub":
            np.floor_divide(out, np.where(hit, cnt, 1).astype(out.dtype), out=out)
        else:
            np.divide(out, np.where(hit, cnt, 1), out=out, casting="unsafe")
        return res
    if scalar:
        vals = np.asarray(vals, dtype=res.dtype)
    elif mode in ("sum", "add") and _add_rows(res, dim, idx, vals):
        return res
    # blocks in index order: a later block's writes land after an earlier one's, as one pass would
    for rows, origin, flat in _flat_chunks(res.shape, dim, idx):
        v = vals if scalar else _flat_values(vals[rows], res.dtype)
        part = out[origin:]
        if mode is None:
            part[flat] = v
        elif mode in ("sum", "add"):
            _add_at(part, flat, v)
        else:
            _UFUNC[mode].at(part, flat, v)
    return res


_ROW_ADD_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_sparsetools = None


def _add_rows(res, dim, idx, vals):
    """scatter-add along the last dim, where each row of ``idx`` (and ``vals``) adds into the same row of
    ``res``: SciPy's CSR-to-dense kernel does exactly that, ``row[idx[j]] += vals[j]`` for j in order, in
    ``res``'s dtype (the sequential additions of ``np.add.at``), without flat positions or the bounds pass
    ``np.add.at`` makes itself.  The index values are checked here first (the kernel checks none).  False
    (nothing done) where it does not apply."""
    global _sparsetools
    nd = res.ndim
    if dim != nd - 1 or res.dtype not in _ROW_ADD_DTYPES or idx.shape[1:-1] != res.shape[1:-1]:
        return False
    size = res.shape[dim]
    if idx.view(np.uint64).max() >= size:        # a negative index is huge as unsigned
        _check_bounds(idx, size, dim)
    if _sparsetools is None:
        try:        # a private SciPy module: if a SciPy release moves it, np.add.at does the work
            from scipy.sparse import _sparsetools
            _sparsetools.csr_todense
        except (ImportError, AttributeError):
            _sparsetools = False
    if _sparsetools is False or not res.flags.c_contiguous:
        return False
    k = idx.shape[-1]
    rows = idx.size // k
    cols = np.ascontiguousarray(idx).reshape(-1)
    v = np.ascontiguousarray(_flat_values(vals, res.dtype))
    _sparsetools.csr_todense(rows, size, np.arange(0, rows * k + 1, k, dtype=np.int64), cols, v,
                             res.reshape(-1)[:rows * size])
    return True


def _flat_values(vals, dtype):
    vals = vals.reshape(-1)
    return vals if vals.dtype == dtype else vals.astype(dtype)


def _add_at(out, flat, vals):
    """out[flat] += vals with repeated positions accumulating (NumPy >= 2's ufunc.at has a fast 1-D path)."""
    np.add.at(out, flat, vals)


def _source_values(impl, idx_shape):
    """The part of a source tensor an index of ``idx_shape`` reads (its leading corner)."""
    a = np.asarray(impl._array)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.shape != idx_shape:
        a = a[_lead_slices(idx_shape)]
    return a


def _scalar_value(value, dt):
    """A Scalar converted to the tensor's dtype, as ATen's fill/scatter value does."""
    if dt.is_complex:
        return np.array(value, dtype=dt.np)
    if isinstance(value, complex):
        value = value.real
    if dt is _dt.bool:
        return np.array(bool(value))
    if dt.category == 1 and isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return np.array(value).astype(dt.np)
        return np.array(int(value)).astype(dt.np)
    return np.array(value).astype(dt.np)


def _finish(res, plan):
    """The row-major result array in the plan's dtype and shape."""
    if res.dtype != plan.dtype.np:
        res = res.astype(plan.dtype.np)
    return res.reshape(plan.shape)


# --------------------------------------------------------------------------
# gather
# --------------------------------------------------------------------------

def _dtype_check(method, self, index, src=None):
    if index._impl.dtype not in _INDEX_DTYPES and index._impl._array.size:
        raise RuntimeError(f"{method}(): Expected dtype int32/int64 for index")
    if src is not None and self._impl.dtype is not src._impl.dtype:
        raise RuntimeError(f"{method}(): Expected self.dtype to be equal to src.dtype")


def _gather_shape_check(self_shape, dim, index_shape):
    if _nz(len(self_shape)) != _nz(len(index_shape)):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(_nz(len(self_shape))):
        if d != dim and _nz_size(index_shape, d) > _nz_size(self_shape, d):
            raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index_shape)} to be no "
                               f"larger than self {list(self_shape)} apart from dimension {dim}")


def meta_gather(self, dim, index, sparse_grad=False):
    impl = self._impl
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    ishape = _shape(index)
    _dtype_check("gather", self, index)
    if _numel(ishape):
        _gather_shape_check(shape, d, ishape)
    return Plan(ishape, impl.dtype, impl.device, None, d, None, None, (self, index))


def gather_impl(xp, plan, self, dim, index, sparse_grad=False):
    ishape = plan.shape
    if _numel(ishape) == 0:
        return np.empty(ishape, dtype=plan.dtype.np)
    d = plan.extra
    a = np.asarray(self._impl._array)
    nd = max(a.ndim, 1)
    if a.ndim and a.dtype.itemsize in _UINT_OF_SIZE and _numel(ishape) >= _LOOP_MIN and loops.available():
        r = _gather_loop(a, d, np.asarray(index._impl._array))
        if r is not None:
            return r
    idx = _index_array(index._impl, ishape if ishape else (1,))
    a1 = a.reshape(1) if a.ndim == 0 else a
    # flat takes from a row-major copy, a block of positions at a time (much faster than take_along_axis's
    # broadcast fancy index); the positions are checked, so the take need not check them again
    if nd > 1 and not a1.flags.c_contiguous:
        a1 = np.ascontiguousarray(a1)
    src = a1.reshape(-1)
    r = np.empty(idx.shape, a1.dtype)
    for rows, origin, flat in _flat_chunks(a1.shape, d, idx):
        src[origin:].take(flat, out=r[rows].reshape(-1), mode="wrap")
    return r.reshape(ishape)


_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_LOOP_MIN = 1024        # below this the flat take is as quick


def _gather_loop(a, d, idx):
    """gather through the compiled loop: input and index seen as (outer, dim, inner) (views where their
    layout allows; the input cut to the index's extent on the other dims) and the items moved as unsigned
    integers of their size.  None where an index is out of bounds: the flat road raises ATen's error."""
    shape = idx.shape
    outer, inner = _numel(shape[:d]), _numel(shape[d + 1:])
    if a.shape[:d] != shape[:d] or a.shape[d + 1:] != shape[d + 1:]:
        a = a[tuple(slice(0, n) if k != d else slice(None) for k, n in enumerate(shape))]
    src = a.view(_UINT_OF_SIZE[a.dtype.itemsize]).reshape(outer, a.shape[d], inner)
    r = loops.gather_rows(src, idx.reshape(outer, shape[d], inner))
    return None if r is None else r.view(a.dtype).reshape(shape)


# --------------------------------------------------------------------------
# scatter, scatter_add, scatter_reduce
# --------------------------------------------------------------------------

def _scatter_shape_check(self_shape, dim, index_shape, src_shape=None):
    if not _numel(index_shape):
        return
    nd = _nz(len(self_shape))
    if nd != _nz(len(index_shape)):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src_shape is not None and _nz(len(src_shape)) != _nz(len(index_shape)):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    wrong = any(d != dim and _nz_size(index_shape, d) > _nz_size(self_shape, d) for d in range(nd))
    if not wrong and src_shape is not None:
        wrong = any(_nz_size(index_shape, d) > _nz_size(src_shape, d) for d in range(nd))
    if wrong:
        if src_shape is not None:
            raise RuntimeError(f"Expected index {list(index_shape)} to be no larger than self {list(self_shape)} "
                               f"apart from dimension {dim} and to be no larger size than src {list(src_shape)}")
        raise RuntimeError(f"Expected index {list(index_shape)} to be no larger than self {list(self_shape)} "
                           f"apart from dimension {dim}")


_SCATTER_REDUCES = ("add", "multiply")
_SCATTER_REDUCE_TWO = ("sum", "prod", "mean", "amax", "amin")


def _meta_scatter(method, self, dim, index, src=None, reduce=None, reduce_names=None):
    impl = self._impl
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    _dtype_check(method, self, index, src)
    _scatter_shape_check(shape, d, _shape(index), None if src is None else _shape(src))
    if reduce is not None and reduce_names is _SCATTER_REDUCES and reduce not in _SCATTER_REDUCES:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if reduce is not None and reduce_names is _SCATTER_REDUCE_TWO and reduce not in _SCATTER_REDUCE_TWO:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    err = None
    if reduce == "mean" and impl.dtype is _dt.bool:
        err = NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'")
    return Plan(shape, impl.dtype, impl.device, None, d, None, err)


def _scatter_run(plan, self, index, vals, mode, include_self=True):
    if plan.impl_error is not None:
        return None
    idx_shape = _shape(index)
    d = plan.extra
    acc = None if mode is None else _acc_np(plan.dtype)
    res = _result_copy(self._impl, acc)
    if _numel(idx_shape):
        idx = _index_array(index._impl, idx_shape if idx_shape else (1,))
        if isinstance(vals, np.ndarray) and vals.ndim and vals.shape != idx.shape:
            vals = vals[_lead_slices(idx.shape)]
        _scatter_into(res, d, idx, vals, mode, include_self)
    return _finish(res, plan)


def meta_scatter_src_out(self, dim, index, src):
    return _meta_scatter("scatter", self, dim, index, src)


def scatter_src_impl(xp, plan, self, dim, index, src):
    return _scatter_run(plan, self, index, _source_values(src._impl, _shape(index) or (1,)), None)


def meta_scatter_value_out(self, dim, index, value):
    return _meta_scatter("scatter", self, dim, index)


def scatter_value_impl(xp, plan, self, dim, index, value):
    return _scatter_run(plan, self, index, _scalar_value(value, plan.dtype), None)


def _warn_scatter_reduce():
    import warnings
    warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                  "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                  UserWarning, stacklevel=5)


def meta_scatter_reduce_out(self, dim, index, src, reduce):
    return _meta_scatter("scatter", self, dim, index, src, reduce, _SCATTER_REDUCES)


def scatter_reduce_impl(xp, plan, self, dim, index, src, reduce):
    _warn_scatter_reduce()
    return _scatter_run(plan, self, index, _source_values(src._impl, _shape(index) or (1,)), reduce)


def meta_scatter_value_reduce_out(self, dim, index, value, reduce):
    return _meta_scatter("scatter", self, dim, index, None, reduce, _SCATTER_REDUCES)


def scatter_value_reduce_impl(xp, plan, self, dim, index, value, reduce):
    return _scatter_run(plan, self, index, _scalar_value(value, plan.dtype), reduce)


def meta_scatter_add(self, dim, index, src):
    return _meta_scatter("scatter", self, dim, index, src)


def scatter_add_impl(xp, plan, self, dim, index, src):
    return _scatter_run(plan, self, index, _source_values(src._impl, _shape(index) or (1,)), "sum")


def meta_scatter_reduce_two_out(self, dim, index, src, reduce, include_self=True):
    return _meta_scatter("scatter", self, dim, index, src, reduce, _SCATTER_REDUCE_TWO)


def scatter_reduce_two_impl(xp, plan, self, dim, index, src, reduce, include_self=True):
    return _scatter_run(plan, self, index, _source_values(src._impl, _shape(index) or (1,)), reduce, include_self)


# --------------------------------------------------------------------------
# index_select
# --------------------------------------------------------------------------

def _index_select_plan(self, dim, index):
    impl = self._impl
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    ishape = _shape(index)
    numel = _numel(ishape)
    if len(ishape) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if not shape and numel != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {numel} value(s)")
    if index._impl.dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    out_shape = shape[:d] + (numel,) + shape[d + 1:] if shape else ()
    return Plan(out_shape, impl.dtype, impl.device, None, d)


def _index_select_values(plan, self, index):
    a = np.asarray(self._impl._array)
    idx = _index_array(index._impl, (-1,))
    d = plan.extra
    size = a.shape[d] if a.ndim else 1
    bad = _first_bad(idx, size)
    if bad is not None:
        if a.ndim > 1:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
        raise IndexError("index out of range in self")
    if a.ndim == 0:
        return a.copy()
    return np.take(a, idx, axis=d)


def index_select(self, dim, index):
    if self._impl._array.ndim <= 1:   # ATen's index_select dispatches on dtype only for a vector self
        _it.refuse_barebones_unsigned("index_select", self._impl)
    from ..structured import functional, meta_functional
    plan = _index_select_plan(self, dim, index)
    if _is_meta(self._impl, index._impl):
        return meta_functional(plan)
    return functional(plan, _index_select_values(plan, self, index))


def index_select_out(self, dim, index, out):
    from ..structured import meta_out, out as _out
    plan = _index_select_plan(self, dim, index)
    if out._impl.dtype is not plan.dtype:
        raise RuntimeError("index_select(): self and result must have the same scalar type")
    if _is_meta(self._impl, index._impl, out._impl):
        return meta_out("index_select", plan, out)
    from ..iterator import check_no_overlap
    check_no_overlap(out._impl, (self._impl, index._impl))
    return _out("index_select", plan, _index_select_values(plan, self, index), out)


# --------------------------------------------------------------------------
# index_add, index_copy, index_reduce, index_fill
# --------------------------------------------------------------------------

def _expanded_index(idx, self_ndim, dim, source_shape):
    """A 1-D index along ``dim`` as a scatter index of the source's shape."""
    if self_ndim == 0:
        return idx.reshape(1)
    sh = [1] * self_ndim
    sh[dim] = idx.size
    return np.broadcast_to(idx.reshape(sh), source_shape)


def _index_func_meta(func, self, dim, index, source):
    """Shared checks of index_add / index_reduce (PyTorch's index_func_meta_impl)."""
    impl = self._impl
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    ishape = _shape(index)
    numel = _numel(ishape)
    iimpl = index._impl
    if len(ishape) > 1:
        raise IndexError(f"{func}_(): Index is supposed to be a vector, but got dim: {len(ishape)} with type: "
                         f"{iimpl.dtype.scalar_type_name} and size: {list(ishape)}")
    if iimpl.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{func}_(): Expected dtype int32/int64 for index but got: {iimpl.dtype.scalar_type_name}")
    simpl = source._impl
    if impl.dtype is not simpl.dtype:
        raise RuntimeError(f"{func}_(): self ({impl.dtype.scalar_type_name}) and source "
                           f"({simpl.dtype.scalar_type_name}) must have the same scalar type")
    sshape = _shape(source)
    src_dim_size = 1 if not sshape else (sshape[d] if d < len(sshape) else None)
    if src_dim_size is None:
        wrap_dim(d, len(sshape))
    if numel != src_dim_size:
        raise RuntimeError(f"{func}_(): Number of indices ({numel}) should be equal to source.size(dim): "
                           f"({src_dim_size}), for dim: {d}")
    a, b = list(shape), list(sshape)
    if a and b:
        del a[d]
        del b[d]
    if a != b:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(shape)} source.shape = {list(sshape)}")
    return Plan(shape, impl.dtype, impl.device, None, d)


def _index_scatter(plan, self, index, source, mode, include_self=True, alpha=None, oob=None, native=False):
    """index_add/index_copy/index_reduce as one scatter of the whole source (``native``: reduce in the
    tensor's own dtype, rounding each step, as ATen's index_reduce loop does for float16/bfloat16)."""
    if plan.impl_error is not None:
        return None
    d = plan.extra
    acc = None if mode is None or native else _acc_np(plan.dtype)
    res = _result_copy(self._impl, acc)
    idx = _index_array(index._impl, (-1,))
    size = res.shape[d]
    bad = _first_bad(idx, size)
    if bad is not None:
        raise oob(bad, size, d, len(_shape(self)))
    src = np.asarray(source._impl._array)
    if src.ndim == 0:
        src = src.reshape(1)
    if alpha is not None:
        src = src.astype(res.dtype) * _scalar_value(alpha, plan.dtype).astype(res.dtype)
    if (mode is None or mode == "sum") and res.ndim > 1 and src.ndim == res.ndim and \
            (mode is None or np.unique(idx).size == idx.size):
        # a copy, or an add with no repeated index: one fancy-indexed write of whole slices
        key = (slice(None),) * d + (idx,)
        if mode is None:
            res[key] = src
        else:
            res[key] += src.astype(res.dtype, copy=False)
        return _finish(res, plan)
    full = _expanded_index(idx, res.ndim, d, src.shape)
    _scatter_into(res, d, full, src, mode, include_self)
    return _finish(res, plan)


def _add_oob(bad, size, d, ndim):
    if ndim > 1:
        return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return IndexError("index out of range in self")


def meta_index_add(self, dim, index, source, alpha=1):
    return _index_func_meta("index_add", self, dim, index, source)


def index_add_impl(xp, plan, self, dim, index, source, alpha=1):
    _it.refuse_barebones_unsigned("index_add_", self._impl)
    is_one = not isinstance(alpha, bool) and alpha == 1
    return _index_scatter(plan, self, index, source, "sum", True, None if is_one else alpha, _add_oob)


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def meta_index_reduce(self, dim, index, source, reduce, include_self=True):
    import warnings
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=4)
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    return _index_func_meta("index_reduce", self, dim, index, source)


def _reduce_oob(bad, size, d, ndim):
    return IndexError("index out of range in self")


def index_reduce_impl(xp, plan, self, dim, index, source, reduce, include_self=True):
    return _index_scatter(plan, self, index, source, reduce, include_self, None, _reduce_oob, native=True)


def meta_index_copy(self, dim, index, source):
    impl = self._impl
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    ishape = _shape(index)
    if len(ishape) >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {len(ishape)})")
    numel = _numel(ishape)
    sshape = _shape(source)
    if not sshape and numel != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {numel})")
    if sshape and d < len(sshape) and numel != sshape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({numel}) should be equal to source.size(dim) "
                         f"({sshape[d]})")
    if index._impl.dtype is not _int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{index._impl.dtype.scalar_type_name}")
    if impl.dtype is not source._impl.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{impl.dtype.scalar_type_name} and (source) {source._impl.dtype.scalar_type_name}")
    if shape and sshape:
        if len(shape) != len(sshape):
            raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality "
                             f"must match. Source dimensionality ({len(sshape)}), destination dimensionality "
                             f"({len(shape)})")
        a = [s for i, s in enumerate(shape) if i != d]
        b = [s for i, s in enumerate(sshape) if i != d]
        if a != b:
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                             f"slice shape: {' '.join(map(str, a))} at dimension {d} and source slice shape: "
                             f"{' '.join(map(str, b))} at dimension 0.")
    return Plan(shape, impl.dtype, impl.device, None, d)


def _copy_oob(bad, size, d, ndim):
    return IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {size}")


def index_copy_impl(xp, plan, self, dim, index, source):
    return _index_scatter(plan, self, index, source, None, True, None, _copy_oob)


def _index_fill_checks(self, dim, index, value_is_complex):
    impl = self._impl
    if index._impl.dtype is not _int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if not impl.dtype.is_complex and value_is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    shape = _shape(self)
    d = wrap_dim(dim, _nz(len(shape)))
    if len(_shape(index)) > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return d


def _index_fill_into(self, d, index, value):
    """Fill in place: the selected slices of ``self`` take ``value``."""
    impl = self._impl
    if _is_meta(impl, index._impl):
        return self
    a = impl._array
    a1 = a.reshape(1) if a.ndim == 0 else a
    idx = _index_array(index._impl, (-1,))
    size = a1.shape[d]
    bad = _first_bad(idx, size, allow_negative=True)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    v = _scalar_value(value, impl.dtype)
    if a.ndim == 0:
        if idx.size:
            a[...] = v
    else:
        a[(slice(None),) * d + (idx,)] = v
    impl.bump_version()
    return self


def index_fill__int_Scalar(self, dim, index, value):
    d = _index_fill_checks(self, dim, index, isinstance(value, complex))
    return _index_fill_into(self, d, index, value)


def index_fill__int_Tensor(self, dim, index, value):
    vimpl = value._impl
    if vimpl._array.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{vimpl._array.ndim} dimension(s).")
    d = _index_fill_checks(self, dim, index, vimpl.dtype.is_complex)
    if _is_meta(self._impl, index._impl, vimpl):
        return self
    return _index_fill_into(self, d, index, np.asarray(vimpl._array).item())


def index_fill_int_Scalar(self, dim, index, value):
    _it.refuse_barebones_unsigned("index_fill_cpu", self._impl)
    return at.index_fill__int_Scalar(at.clone(self, None), dim, index, value)


def index_fill_int_Tensor(self, dim, index, value):
    return at.index_fill__int_Tensor(at.clone(self, None), dim, index, value)


# --------------------------------------------------------------------------
# composites: take_along_dim, the backward helpers PyTorch names as operators
# --------------------------------------------------------------------------

def _check_same_device(where, *tensors):
    first = tensors[0]._impl.device
    for t in tensors[1:]:
        d = t._impl.device
        if d != first:
            raise RuntimeError(f"Expected tensor to have {first.type} Device, but got tensor with {d.type} Device "
                               f"(while checking arguments for {where})")


def take_along_dim(self, indices, dim=None):
    _check_same_device("torch.take_along_dim()", self, indices)
    if indices._impl.dtype is not _int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices._impl.dtype.scalar_type_name}")
    if dim is None:
        flat = at.reshape(indices, (-1,))
        return at.gather(at.reshape(self, (-1,)), 0, _wrap_negative(flat, _numel(_shape(self))), False)
    shape, ishape = _shape(self), _shape(indices)
    if len(shape) != len(ishape):
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {len(shape)} dimensions for input, and {len(ishape)} dimensions for indices")
    d = wrap_dim(dim, len(shape))
    self_sizes = list(shape)
    idx_sizes = list(ishape)
    if shape:
        self_sizes[d] = ishape[d]
        idx_sizes[d] = shape[d]
    bshape_self = _broadcast(self_sizes, ishape)
    bshape_idx = _broadcast(idx_sizes, shape)
    if shape:
        bshape_self[d] = shape[d]
        bshape_idx[d] = ishape[d]
    indices = _wrap_negative(indices, shape[d] if shape else 1)
    return at.gather(at.expand(self, bshape_self, False), d, at.expand(indices, bshape_idx, False), False)


def _wrap_negative(indices, size):
    """take_along_dim counts a negative index from the end (gather itself refuses one)."""
    return at.where_self(at.lt_Scalar(indices, 0), at.add_Scalar(indices, size, 1), indices)


def take_along_dim_out(self, indices, dim=None, out=None):
    _check_same_device("torch.take_along_dim()", self, indices, out)
    r = take_along_dim(self, indices, dim)
    if out._impl.dtype is not r._impl.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {r._impl.dtype.typemeta_name}, but got "
                           f"{out._impl.dtype.typemeta_name} instead")
    at.resize_(out, _shape(r), None) if hasattr(at, "resize_") else _resize(out, _shape(r))
    return at.copy_(out, r, False)


def _resize(out, shape):
    from ..iterator import resize_out
    resize_out(out, shape)


def _broadcast(a, b):
    """Broadcast two size lists (PyTorch's infer_size, with its error)."""
    from ..iterator import broadcast_operands
    return list(broadcast_operands([tuple(a), tuple(b)]))


def gather_backward(grad, self, dim, index, sparse_grad):
    z = at.zeros(_shape(self), grad._impl.dtype, None, grad._impl.device, None)
    return at.scatter_add(z, dim, index, grad)


def index_select_backward(grad, self_sizes, dim, index):
    z = at.zeros(tuple(self_sizes), grad._impl.dtype, None, grad._impl.device, None)
    return at.index_add(z, dim, index, grad, 1)


# --------------------------------------------------------------------------
# segment_reduce (the OpInfo entry _segment_reduce) and its backward
# --------------------------------------------------------------------------

_SEGMENT_REDUCES = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "min": "amin",
                    "amax": "amax", "amin": "amin"}
_SEGMENT_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}
_SEGMENT_EMPTY = {"sum": 0.0, "mean": float("nan"), "prod": 1.0, "amax": -np.inf, "amin": np.inf}


def _segment_plan(data, reduce, lengths, offsets, axis, unsafe):
    """(mode, axis, number of segments, result shape) after PyTorch's checks."""
    impl = data._impl
    mode = _SEGMENT_REDUCES.get(reduce)
    if mode is None:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    shape = _shape(data)
    ax = wrap_dim(axis, len(shape))
    seg = lengths if lengths is not None else offsets
    sshape = _shape(seg)
    if len(sshape) - 1 != ax:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"{'lengths' if lengths is not None else 'offsets'} but got {ax}.")
    if impl.dtype.category != 2:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{impl.dtype.scalar_type_name}'")
    k = sshape[-1] if lengths is not None else sshape[-1] - 1
    return mode, ax, k, shape[:ax] + (k,) + shape[ax + 1:]


def _segment_lengths(data_shape, ax, lengths, offsets, unsafe):
    """Segment lengths as an int64 array of shape (lead..., K)."""
    if lengths is not None:
        ln = np.asarray(lengths._impl._array).astype(np.int64)
    else:
        off = np.asarray(offsets._impl._array).astype(np.int64)
        ln = np.diff(off, axis=-1)
    if not unsafe:
        if ln.size and ln.min() < 0:
            raise RuntimeError("segment_reduce(): lengths contains negative value!")
        if ln.ndim and (ln.sum(axis=-1) != data_shape[ax]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    return ln


def _segment_layout(a, ax, ln):
    """``a`` as (rows, trail) holding only the rows its segments cover, in segment order, with each
    segment's length and first row there; ``sel`` maps those rows back to ``a``'s (None: all, in order)."""
    lead = a.shape[:ax]
    trail = a.shape[ax + 1:]
    n = a.shape[ax]
    a2 = np.ascontiguousarray(a).reshape(_numel(lead) * n, _numel(trail))
    lf = ln.reshape(-1)
    starts = np.cumsum(lf) - lf
    total = int(lf.sum()) if lf.size else 0
    if total == a2.shape[0]:
        return a2, lf, starts, None
    # unsafe lengths that do not cover each row: take the covered rows only
    within = np.cumsum(ln, axis=-1) - ln
    src_start = (within + (np.arange(_numel(lead)) * n).reshape(lead + (1,))).reshape(-1)
    sel = np.repeat(src_start - starts, lf) + np.arange(total)
    return a2[sel], lf, starts, sel


def segment_reduce(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    impl = data._impl
    mode, ax, k, out_shape = _segment_plan(data, reduce, lengths, offsets, axis, unsafe)
    from ..tensor_new import empty_tensor, wrap
    if _is_meta(impl):
        return empty_tensor(out_shape, impl.dtype, impl.device)
    a = np.asarray(impl._array)
    acc = impl.dtype.np
    ln = _segment_lengths(a.shape, ax, lengths, offsets, unsafe)
    a2, lf, starts, _sel = _segment_layout(a, ax, ln)
    out = np.full((lf.size, a2.shape[1]), _SEGMENT_EMPTY[mode] if initial is None else initial, dtype=acc)
    hit = lf > 0
    if acc != _acc_np(impl.dtype) and hit.any():
        # float16/bfloat16: ATen's loop folds each value into the running result in the dtype itself
        if mode != "amax" and mode != "amin":
            out[hit] = 0 if mode in ("sum", "mean") else 1
            if initial is not None:
                out[hit] = initial
        _SEGMENT_UFUNC[mode].at(out, np.repeat(np.arange(lf.size), lf), a2)
        if mode == "mean":
            out[hit] = out[hit] / lf[hit].reshape(-1, 1).astype(acc)
    elif hit.any() and a2.shape[0]:
        r = _SEGMENT_UFUNC[mode].reduceat(a2, starts[hit], axis=0)
        if initial is not None:
            r = _SEGMENT_UFUNC[mode](r, np.asarray(initial, dtype=acc))
        if mode == "mean":
            r = r / lf[hit].reshape(-1, 1)
        out[hit] = r
    return wrap(out.reshape(out_shape).astype(impl.dtype.np, copy=False), impl.dtype, impl.device)


def _segment_reduce_backward(grad, output, data, reduce, lengths=None, offsets=None, axis=0, initial=None):
    impl = data._impl
    from ..tensor_new import empty_tensor, wrap
    mode = _SEGMENT_REDUCES.get(reduce)
    if mode is None:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if _is_meta(impl):
        return empty_tensor(_shape(data), impl.dtype, impl.device)
    shape = _shape(data)
    ax = wrap_dim(axis, len(shape))
    acc = _acc_np(impl.dtype)
    a = np.asarray(impl._array).astype(acc)
    ln = _segment_lengths(shape, ax, lengths, offsets, True)
    a2, lf, starts, sel = _segment_layout(a, ax, ln)
    ncols = a2.shape[1]
    g = np.asarray(grad._impl._array).astype(acc).reshape(lf.size, ncols)
    o = np.asarray(output._impl._array).astype(acc).reshape(lf.size, ncols)
    seg = np.repeat(np.arange(lf.size), lf)[: a2.shape[0]]      # the segment of each row of a2
    if mode == "sum":
        gi = g[seg]
    elif mode == "mean":
        gi = g[seg] / np.maximum(lf, 1)[seg].reshape(-1, 1)
    elif mode in ("amax", "amin"):
        eq = (a2 == o[seg]) | (np.isnan(a2) & np.isnan(o[seg]))
        counts = np.zeros((lf.size, ncols), acc)
        hit = lf > 0
        if hit.any():
            counts[hit] = np.add.reduceat(eq.astype(acc), starts[hit], axis=0)
        gi = np.where(eq, g[seg] / np.where(counts[seg] == 0, 1, counts[seg]), 0)
    else:   # prod
        zero = a2 == 0
        nz = np.zeros((lf.size, ncols), np.int64)
        others = np.ones((lf.size, ncols), acc)
        hit = lf > 0
        if hit.any():
            nz[hit] = np.add.reduceat(zero.astype(np.int64), starts[hit], axis=0)
            others[hit] = np.multiply.reduceat(np.where(zero, 1, a2), starts[hit], axis=0)
        if initial is not None:
            others = others * initial
        with np.errstate(divide="ignore", invalid="ignore"):
            plain = g[seg] * o[seg] / np.where(zero, 1, a2)
        gi = np.where(zero, np.where(nz[seg] == 1, g[seg] * others[seg], 0), plain)
    if sel is not None:
        full = np.zeros((_numel(shape) // max(ncols, 1) if ncols else 0, ncols), acc)
        full[sel] = gi
        gi = full
    return wrap(gi.reshape(shape).astype(impl.dtype.np, copy=False), impl.dtype, impl.device)
