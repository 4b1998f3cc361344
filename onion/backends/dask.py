"""The Dask backend: a ``dask`` device on PrivateUse2 whose tensors are chunked ``dask.array`` arrays.

``xp`` is ``dask.array``, which follows NumPy's API, so the xp-generic kernels CUDA runs (codegen mirrors
them onto PrivateUse2, see ``MIRRORS`` in onion/codegen/gen_registrations.py) build Dask graphs instead of
computing: nothing runs until a value is needed (``.item()``, ``.tolist()``, ``.numpy()``, printing,
``.to("cpu")``, ``onion.dask.compute``).  ``import onion.dask`` registers it (this module: the device
and its arrays; onion/dask: the kernels and the user functions).

Design (storage, in-place, views).  A Dask array has no memory, strides or offset, so, as PyTorch/XLA,
a dask tensor's storage is a *root*: the graph of the tensor that owns the data, in row-major order.

- Every dask tensor reports row-major strides; results are always contiguous (the strides PyTorch gives
  a result of transposed inputs are not kept: there is no layout to keep).
- In-place operators rebind the array: ``x.add_(1)`` writes ``x._array[...] = result``, which on a Dask
  array replaces its graph (Dask's own ``__setitem__`` does this to the array object); the version counter
  is bumped as on any device, so autograd still catches an in-place change of a saved tensor.
- Views are re-derived from their base.  ``make_view`` gives a view's geometry (sizes, strides, offset
  into the root, all in elements, computed by the same ``view_geometry`` functions as on CPU); this
  backend turns it into Dask operations on the root's array: basic indexing (slices and integers), a
  transpose, size-1 dims and broadcasting (``t()``, ``x[1:, 2]``, ``permute``, ``expand``,
  ``unsqueeze``), a reshape (``view``/``reshape`` of a contiguous tensor), or, for what is none of these,
  a gather by flat index.  The root remembers its views (weakly) and each view its geometry.  A write to a
  view (an in-place op on it, ``copy_``, item assignment) is turned into item assignment on the root (the
  inverse of the same Dask operations), and every view of that root is then re-derived from the new
  root, so that a write through a view is seen by the base and by the other views, and a write to the
  base is seen by its views.  Writing into an expanded view is refused (as PyTorch's overlap check does);
  a view of another dtype (``view(dtype)``, ``view_as_real``) is not supported.

The derivation costs nothing until a value is needed: it only adds tasks to the graph.
"""
from __future__ import annotations

import contextlib
import math
import weakref

import dask.array as da
import numpy as np

from ..core import device as _device_mod
from ..core.dispatch_key import K
from ..core.geometry import contiguous_strides
from ..core.storage import Storage
from .base import Backend, register_backend

DEVICE_TYPE = "dask"
# how arrays are computed: ``fn(arrays) -> values``; onion.dask puts its scheduler choice (a cluster) here
COMPUTE = [lambda arrays: __import__("dask").compute(*arrays)]

# --- chunk sizes -------------------------------------------------------------------------------------------
_CHUNKS = ["auto"]


def get_chunk_size():
    """The ``chunks`` new dask tensors get (Dask's "auto" unless set)."""
    return _CHUNKS[0]


def set_chunk_size(chunks) -> None:
    """Chunks for tensors made from now on: "auto" (Dask picks, from ``array.chunk-size`` in Dask's config),
    a number of elements per dimension, a tuple per dimension, or a byte size string such as "64MiB"."""
    _CHUNKS[0] = "auto" if chunks is None else chunks


@contextlib.contextmanager
def chunk_size(chunks):
    """``with onion.dask.chunk_size(...)``: ``set_chunk_size`` inside the block only."""
    before = _CHUNKS[0]
    set_chunk_size(chunks)
    try:
        yield
    finally:
        _CHUNKS[0] = before


def _chunks_for(shape, np_dtype):
    c = _CHUNKS[0]
    if isinstance(c, str) and c != "auto":
        with __import__("dask").config.set({"array.chunk-size": c}):
            return da.core.normalize_chunks("auto", shape, dtype=np.dtype(np_dtype))
    if isinstance(c, int) and not isinstance(c, bool):
        return tuple(min(c, max(n, 1)) for n in shape) if shape else ()
    return c


# --- what onion reads from an array: strides and flags ------------------------------------------------------
class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "writeable", "owndata")

    def __init__(self, c, f):
        self.c_contiguous = c
        self.f_contiguous = f
        self.writeable = True
        self.owndata = False


def _strides(self):
    """Byte strides as onion's kernels read them from an array: a view's own, else row-major."""
    own = self.__dict__.get("_onion_strides")
    if own is not None:
        return own
    item = self.dtype.itemsize
    return tuple(s * item for s in contiguous_strides(self.shape))


def _flags(self):
    own = self.__dict__.get("_onion_strides")
    if own is None:
        return _Flags(True, self.ndim <= 1)
    item = self.dtype.itemsize
    c = all(st == cs * item for n, st, cs in zip(self.shape, own, contiguous_strides(self.shape)) if n != 1)
    return _Flags(c, False)


# Dask arrays lack these two attributes (NumPy's chunks have them, and Dask reads them only there)
if not hasattr(da.Array, "strides"):
    da.Array.strides = property(_strides)
if not hasattr(da.Array, "flags"):
    da.Array.flags = property(_flags)


# --- roots and views -------------------------------------------------------------------------------------
def _handle(x):
    """A new plain Dask array over ``x``'s graph (so that item assignment on it leaves ``x`` alone)."""
    return da.Array(x.dask, x.name, x.chunks, meta=x._meta)


def _rebind(obj, y) -> None:
    """Make the array object ``obj`` hold ``y``'s graph (as Dask's own ``__setitem__`` does)."""
    obj._meta = y._meta
    obj.dask = y.dask
    obj._name = y.name
    obj._chunks = y.chunks


class ViewPlan:
    """How a view's geometry is made from its root's array, and how a value is written back."""

    __slots__ = ("kind", "index", "perm", "kept", "shape", "bcast", "offset", "numel", "flat")

    def derive(self, root):
        kind = self.kind
        if kind == "reshape":
            return root.reshape(self.shape)
        if kind == "index":
            a = root[self.index]
            if self.perm != tuple(range(len(self.perm))):
                a = a.transpose(self.perm)
            if a.shape != self.shape:
                a = a.reshape(tuple(1 if b else n for n, b in zip(self.shape, self.bcast)))
                if any(self.bcast):
                    a = da.broadcast_to(a, self.shape)
            return a
        flat = root.reshape(-1)
        if kind == "range":
            return flat[self.offset:self.offset + self.numel].reshape(self.shape)
        return flat[self.flat].reshape(self.shape)          # "gather"

    def write(self, root, value):
        """The root's new array once ``value`` (the view's new value) is written through the view."""
        kind = self.kind
        if kind == "reshape":
            return value.reshape(root.shape)
        if any(self.bcast):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        if kind == "index":
            v = value.reshape(self.kept) if value.shape != self.kept else value
            if self.perm != tuple(range(len(self.perm))):
                v = v.transpose(tuple(np.argsort(self.perm)))
            r = _handle(root)
            da.Array.__setitem__(r, self.index, v)
            return r
        flat = _handle(root.reshape(-1))
        key = slice(self.offset, self.offset + self.numel) if kind == "range" else self.flat
        da.Array.__setitem__(flat, key, value.reshape(-1))
        return flat.reshape(root.shape)


def plan_view(root_shape, shape, strides, offset) -> ViewPlan:
    """The Dask operations that give the view (``shape``, ``strides``, ``offset``, in elements) of a
    row-major root of ``root_shape``."""
    p = ViewPlan()
    p.shape, p.offset = tuple(shape), offset
    p.numel = math.prod(shape)
    p.bcast = tuple(n != 1 and st == 0 for n, st in zip(shape, strides))
    contiguous = all(st == cs for n, st, cs in zip(shape, strides, contiguous_strides(shape)) if n != 1)
    if contiguous and offset == 0 and p.numel == math.prod(root_shape):
        p.kind = "reshape"
        return p
    if p.numel and _index_plan(p, root_shape, shape, strides, offset):
        p.kind = "index"
        return p
    if contiguous:
        p.kind = "range"
        return p
    p.kind = "gather"
    idx = np.full((), offset, np.int64)
    for n, st in zip(shape, strides):
        idx = idx[..., None] + np.arange(n, dtype=np.int64) * st
    p.flat = idx.reshape(-1)
    return p


def _index_plan(p, root_shape, shape, strides, offset) -> bool:
    """Basic indexing of the root, then a transpose, then size-1 dims and broadcasting; False if none fits."""
    cs = contiguous_strides(root_shape)
    start, rem = [], offset
    for c in cs:
        start.append(rem // c if c else 0)
        rem -= start[-1] * c
    if rem or any(s >= n for s, n in zip(start, root_shape) if n):
        return False
    used = {}                       # root dim -> (view dim, step)
    for i, (n, st) in enumerate(zip(shape, strides)):
        if n == 1 or st == 0:
            continue
        for j in sorted(range(len(root_shape)), key=lambda j: -cs[j]):
            if j in used or root_shape[j] <= 1 or st <= 0 or st % cs[j]:
                continue
            step = st // cs[j]
            if start[j] + (n - 1) * step < root_shape[j]:
                used[j] = (i, step)
                break
        else:
            return False
    index = []
    for j in range(len(root_shape)):
        if j in used:
            i, step = used[j]
            index.append(slice(start[j], start[j] + (shape[i] - 1) * step + 1, step))
        else:
            index.append(start[j])
    order = sorted(used, key=lambda j: used[j][0])      # root dims in the view's order
    kept_root_order = sorted(used)
    p.index = tuple(index)
    p.perm = tuple(kept_root_order.index(j) for j in order)
    p.kept = tuple(shape[used[j][0]] for j in order)
    return True


class _Address:
    """What ``Storage.data_ptr`` reads (``data.ptr``): a dask storage's address is its root's identity, so
    that a view and its base report the same storage and two tensors that share nothing do not."""

    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class DaskRoot:
    """What a dask storage holds: the root's array object and the (weakly held) views derived from it."""

    __slots__ = ("array", "views", "__weakref__")

    @property
    def data(self):
        return _Address(id(self))

    def __init__(self, array):
        self.array = array
        self.views = []         # weak references (Dask arrays are not hashable: no WeakSet)

    def add(self, view) -> None:
        if len(self.views) > 8:
            self.views = [r for r in self.views if r() is not None]
        self.views.append(weakref.ref(view))

    def refresh(self) -> None:
        root = self.array
        for r in self.views:
            v = r()
            if v is not None:
                _rebind(v, v.__dict__["_onion_plan"].derive(root))

    def write(self, plan, value) -> None:
        _rebind(self.array, plan.write(_handle(self.array), value))
        self.refresh()


class DaskTensorArray(da.Array):
    """The array of a dask tensor that has views, or of a view: item assignment goes through the root."""

    __slots__ = ()

    def __setitem__(self, key, value):
        d = self.__dict__
        root = d["_onion_root"]
        plan = d.get("_onion_plan")
        if plan is None:                         # the root itself: its views follow
            _setitem(self, key, value)
            root.refresh()
            return
        new = _handle(self)
        _setitem(new, key, value)
        root.write(plan, new)


def _setitem(arr, key, value) -> None:
    """Item assignment on a Dask array; a whole-array assignment just takes the value's graph."""
    if key is Ellipsis and isinstance(value, da.Array) and value.dtype == arr.dtype:
        if value.shape != arr.shape:
            value = da.broadcast_to(value, arr.shape)
        _rebind(arr, value)
        return
    da.Array.__setitem__(arr, key, value)


def _adopt_root(array):
    d = array.__dict__
    root = d.get("_onion_root")
    if root is None:
        root = DaskRoot(array)
        array.__class__ = DaskTensorArray
        d["_onion_root"] = root
    return root


# --- the backend ------------------------------------------------------------------------------------------
class DaskBackend(Backend):
    device_type = DEVICE_TYPE
    key = K.PrivateUse2
    xp = da
    # not PrivateUse1's xp-generic set: codegen mirrors CUDA's (a larger one: reductions, matmul...) onto
    # PrivateUse2, in register_privateuse2.py, which LOAD_GENERATED loads
    xp_generic_kernels = False

    def empty(self, shape, np_dtype, device=None):
        shape = tuple(shape)
        return da.empty(shape, dtype=np_dtype, chunks=_chunks_for(shape, np_dtype))

    def empty_strided(self, shape, strides, np_dtype, device=None):
        return self.empty(shape, np_dtype, device)       # no layout to keep: always row-major

    def view(self, storage, shape, strides, offset, np_dtype):
        root = storage.data
        base = root.array
        if np.dtype(np_dtype) != base.dtype:
            raise RuntimeError(f"a view of dtype {np.dtype(np_dtype)} of a {base.dtype} tensor is not supported by "
                               f"the dask backend")
        shape, strides = tuple(shape), tuple(strides)
        plan = plan_view(base.shape, shape, strides, offset)
        arr = plan.derive(base)
        if not isinstance(arr, da.Array):       # pragma: no cover - Dask always gives arrays
            arr = da.asarray(arr)
        arr = _handle(arr)
        arr.__class__ = DaskTensorArray
        d = arr.__dict__
        d["_onion_root"] = root
        d["_onion_plan"] = plan
        item = base.dtype.itemsize
        d["_onion_strides"] = tuple(st * item for st in strides)
        root.add(arr)
        return arr

    def storage_of(self, array, device):
        dev = _device_mod.device(DEVICE_TYPE)
        d = array.__dict__
        plan = d.get("_onion_plan")
        root = _adopt_root(array)
        nbytes = math.prod(root.array.shape) * root.array.dtype.itemsize
        return Storage(root, nbytes, dev), (plan.offset if plan is not None else 0)

    def to_numpy(self, array):
        return np.asarray(COMPUTE[0]([array])[0])

    def from_numpy(self, array, device=None):
        a = np.array(array, copy=True)          # a copy: the CPU tensor may change afterwards
        return da.from_array(a, chunks=_chunks_for(a.shape, a.dtype))

    def asarray(self, array, device=None):
        if isinstance(array, da.Array):
            return array
        return self.from_numpy(array, device)


def _register() -> None:
    """The device type and the backend (onion.dask adds the kernels: they live in layers above this one)."""
    if DEVICE_TYPE in _device_mod._BACKEND_OF_TYPE:
        return
    _device_mod._BACKEND_OF_TYPE[DEVICE_TYPE] = K.PrivateUse2
    register_backend(DaskBackend())


_register()
