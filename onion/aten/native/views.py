"""View operators: a new TensorImpl over the same storage, no kernel launched.

The geometry (sizes, strides, offset) comes from ``view_geometry``; the
backend only builds its array over the shared storage.

On CPU the common views of a non-empty tensor take a shorter road: NumPy
derives the new array from the input's array (``arr.T``, ``arr[i]``, a basic
slice, a contiguous reshape), which gives exactly the sizes and strides the
geometry functions would, over the same memory, for a fraction of the cost of
building an array over the storage bytes.  Everything else (empty tensors,
other devices, the cases where NumPy's strides differ from PyTorch's) takes
the general road through ``view_geometry`` and ``make_view``.

The commonest views (``view``, ``t``, ``select``, ``transpose``, ...) take the dispatch keyset first (``ks``,
unused): codegen then registers them as they are, with no generated wrapper between the Dispatcher and
them (see onion/codegen/native_index.py, ``keyset_kernels``).
"""
from __future__ import annotations

from builtins import slice as _py_slice

import numpy as np

from ...backends import backend_for
from ...core.creation_meta import note_view_creation
from ...core.device import CPU as _CPU
from ...core.geometry import contiguous_strides
from ...core.tensor import Tensor
from ...core.tensor_impl import LazyViewImpl, ViewImpl, element_strides
from ...core.tls import state as _tls_state
from .. import view_geometry as g
from .copy import clone
from ..at import at
from ..tensor_new import view_error

_ndarray = np.ndarray
_ALL = _py_slice(None)
_LEAD = tuple((_ALL,) * d for d in range(64))    # the index prefix that skips the first d dims


def _geom(t):
    """(sizes, strides, storage offset) of ``t`` (sizes as the array's shape tuple)."""
    impl = t._impl
    if impl._storage is None:
        impl.storage()
    arr = impl._array
    shape = arr.shape
    strides = impl._strides
    if strides is None:     # TensorImpl.strides, without the property call
        if 0 in shape:
            strides = contiguous_strides(shape)
        else:
            strides = element_strides(arr.strides, impl.dtype.itemsize)
    return shape, strides, impl._offset


def _share(src, arr, delta):
    """A view of tensor ``src`` whose array is ``arr`` (already over its memory), ``delta``
    elements further into the storage: same storage object, version counter and root base."""
    impl = src._impl
    storage = impl._storage
    if storage is None:
        storage = impl.storage()
    # made in grad mode from a tensor without grad: a view that follows its base if that gains history
    grad_mode = _tls_state().grad_enabled
    inference = impl._inference
    if not impl.requires_grad and grad_mode and not inference:
        v = LazyViewImpl()      # its requires_grad is a property: the slot stays unset
    else:
        v = ViewImpl()
        v.requires_grad = False
    # every slot of ViewImpl is set here (see TensorImpl.__init__ and ViewImpl for what they hold)
    v._array = arr
    v.dtype = impl.dtype
    v.device = impl.device
    v.keyset = impl.keyset
    v._inference = inference
    v._storage = storage
    v._offset = impl._offset + delta
    vc = impl._vc
    if vc is None:
        vc = impl._vc = [0]
    v._vc = vc
    if inference:
        v._base = None          # a view of an inference tensor is no view for autograd (PyTorch)
        v._base_tensor = None
    else:
        base = impl._base
        if base is None:        # the root's Python object too, so that ``_base`` is that very tensor
            v._base = impl
            v._base_tensor = src
        else:
            v._base = base
            v._base_tensor = impl._base_tensor
        if impl._creation_meta or not grad_mode:
            note_view_creation(v, impl)
    t = Tensor()
    t._impl = v
    return t


def _byte_strides(strides, itemsize):
    k = len(strides)
    if k == 2:
        return (strides[0] * itemsize, strides[1] * itemsize)
    if k == 1:
        return (strides[0] * itemsize,)
    if k == 3:
        return (strides[0] * itemsize, strides[1] * itemsize, strides[2] * itemsize)
    return tuple([s * itemsize for s in strides])


def make_view(self, sizes, strides, offset):
    """A tensor viewing ``self``'s storage with the given geometry (shares the version counter)."""
    impl = self._impl
    storage = impl._storage
    if storage is None:
        storage = impl.storage()
    if type(sizes) is not tuple:
        sizes = tuple(sizes)
    if type(strides) is not tuple:
        strides = tuple(strides)
    dt = impl.dtype
    device = impl.device
    empty = 0 in sizes
    try:
        if empty:
            # an empty view may sit past the end of its storage (e.g. x[:, 1] of a 0x3 tensor):
            # its array then needs no memory at all, and the offset (and strides, which the
            # array cannot tell) are kept on the impl only
            arr = backend_for(device).view(storage, sizes, strides, 0, dt.np)
        elif device is _CPU:
            arr = _ndarray(sizes, dt.np, storage.data, offset * dt.itemsize, _byte_strides(strides, dt.itemsize))
        else:
            arr = backend_for(device).view(storage, sizes, strides, offset, dt.np)
    except ValueError as e:
        err = view_error(sizes, e)      # over 64 dims, or an expanded size NumPy cannot index
        if err is e:
            # other geometry PyTorch allows but no NumPy array can have (a negative size next to a zero one)
            err = RuntimeError(f"onion cannot make a view of sizes {list(sizes)} and strides {list(strides)}: "
                               "NumPy (onion's CPU arrays) has no such array")
        raise err from None
    t = _share(self, arr, offset - impl._offset)
    if empty:
        t._impl._strides = strides
    return t


def view(ks, self, size):
    impl = self._impl
    if impl.device is _CPU:
        arr = impl._array
        shape = arr.shape
        if 1 not in shape and 0 not in shape and arr.flags.c_contiguous:
            # dense with no size-1 dims: the strides are row-major, and so are the view's
            # (compute_stride's and NumPy's agree then; size-1 dims are where they may not)
            try:
                out = arr.reshape(size)
            except (TypeError, ValueError):
                out = None          # PyTorch's error comes from the general road below
            if out is not None:
                if out.shape != size:
                    # a -1 filled in, or a negative NumPy takes and PyTorch refuses: ask PyTorch's rule
                    g.infer_size(tuple(size), arr.size)
                return _share(self, out, 0)
    return make_view(self, *g.view(*_geom(self), tuple(size)))


def _reshape_alias(self, size, stride):
    return make_view(self, tuple(size), tuple(stride), self._impl.storage_offset())


def t(ks, self):
    impl = self._impl
    if impl.device is _CPU:
        arr = impl._array
        if arr.size and arr.ndim <= 2:      # 0-d and 1-d: the same geometry
            return _share(self, arr.T, 0)
    return make_view(self, *g.t(*_geom(self)))


def transpose(ks, self, dim0, dim1):
    impl = self._impl
    arr = impl._array
    if impl.device is _CPU and arr.size:
        n = arr.ndim
        if -n <= dim0 < n and -n <= dim1 < n:
            return _share(self, arr.swapaxes(dim0, dim1), 0)
    return make_view(self, *g.transpose(*_geom(self), dim0, dim1))


def permute(ks, self, dims):
    impl = self._impl
    if impl.device is _CPU:
        arr = impl._array
        if arr.size:
            try:        # NumPy takes exactly PyTorch's permutations (negative dims wrapped), with the same strides
                out = arr.transpose(dims)
            except (ValueError, TypeError, IndexError):
                out = None      # PyTorch's error comes from the general road below
            if out is not None and dims and (min(dims) < -arr.ndim or max(dims) >= arr.ndim):
                out = None      # NumPy truncates a dim to a C int (-2**40 reads as 0): refused below
            if out is not None:
                return _share(self, out, 0)
    return make_view(self, *g.permute(*_geom(self), tuple(dims)))


def expand(ks, self, size, implicit=False):
    impl = self._impl
    if impl.device is _CPU and impl._strides is None:
        arr = impl._array
        if arr.size and arr.flags.c_contiguous:
            # (sum's and mean's backward: a fresh 0-d gradient to the input's shape) PyTorch's geometry, over the
            # array itself as the buffer (a contiguous array exports one): no byte view of the storage needed
            item = impl.dtype.itemsize
            try:
                sizes, strides, _ = g.expand(arr.shape, element_strides(arr.strides, item), 0, tuple(size), "")
                out = _ndarray(sizes, arr.dtype, arr, 0, _byte_strides(strides, item))
            except (RuntimeError, ValueError):
                out = None          # the general road raises PyTorch's message
            if out is not None:
                return _share(self, out, 0)
    geom = _geom(self)
    try:
        return make_view(self, *g.expand(*geom, tuple(size), ""))
    except RuntimeError:    # the message names the tensor type: only worked out when it is needed
        impl = self._impl
        g.expand(*geom, tuple(size), g.legacy_type_str(impl.dtype.scalar_type_name, impl.device.type))
        raise


def unsqueeze(ks, self, dim):
    impl = self._impl
    if impl.device is _CPU:
        arr = impl._array
        shape = arr.shape
        n = len(shape)
        if -n - 1 <= dim <= n and 0 not in shape and 1 not in shape and arr.flags.c_contiguous:
            # row-major with no size-1 dims: PyTorch's stride for the new dim (the product of the
            # sizes after it) is the row-major one NumPy gives a contiguous reshape
            if dim < 0:
                dim += n + 1
            return _share(self, arr.reshape(shape[:dim] + (1,) + shape[dim:]), 0)
    return make_view(self, *g.unsqueeze(*_geom(self), dim))


def squeeze(ks, self):
    impl = self._impl
    arr = impl._array
    if impl.device is _CPU and arr.size:
        return _share(self, arr.squeeze(), 0)
    return make_view(self, *g.squeeze(*_geom(self), None))


def squeeze_dim(self, dim):
    return make_view(self, *g.squeeze(*_geom(self), dim))


def squeeze_dims(self, dim):
    return make_view(self, *g.squeeze(*_geom(self), tuple(dim)))


def select(ks, self, dim, index):
    impl = self._impl
    if impl.device is _CPU:
        arr = impl._array
        shape = arr.shape
        n = len(shape)
        d = dim + n if dim < 0 else dim
        if 0 <= d < n and 0 not in shape:
            size = shape[d]
            if -size <= index < size:
                if index < 0:
                    index += size
                if d == 0:
                    out = arr[index] if n > 1 else arr[index, ...]
                else:
                    out = arr[_LEAD[d] + (index, Ellipsis)]
                return _share(self, out, index * arr.strides[d] // impl.dtype.itemsize)
    return make_view(self, *g.select(*_geom(self), dim, index))


def slice(self, dim=0, start=None, end=None, step=1):  # noqa: A001 - the operator's name
    impl = self._impl
    arr = impl._array
    if impl.device is _CPU and arr.size and step > 0:
        n = arr.ndim
        if -n <= dim < n:
            if dim < 0:
                dim += n
            size = arr.shape[dim]
            # the bounds clamped as view_geometry.slice clamps them
            lo = 0 if start is None else start
            if lo < 0:
                lo = lo + size if lo > -size else 0
            elif lo > size:
                lo = size
            hi = size if end is None or end > size else end
            if hi < 0:
                hi += size
            if hi > lo:          # not empty
                delta = lo * arr.strides[dim] // impl.dtype.itemsize
                if dim == 0:
                    return _share(self, arr[lo:hi:step], delta)
                return _share(self, arr[_LEAD[dim] + (_py_slice(lo, hi, step),)], delta)
    return make_view(self, *g.slice(*_geom(self), dim, start, end, step))


def as_strided(self, size, stride, storage_offset=None):
    impl = self._impl
    storage = impl.storage()
    geom = g.as_strided(*_geom(self), tuple(size), tuple(stride), storage_offset,
                        itemsize=impl.dtype.itemsize, storage_nbytes=storage._nbytes)
    return make_view(self, *geom)


def alias(self):
    impl = self._impl
    arr = impl._array
    if impl.device is _CPU and arr.size:
        return _share(self, arr.view(), 0)
    return make_view(self, *g.alias(*_geom(self)))


def diagonal(self, offset=0, dim1=0, dim2=1):
    return make_view(self, *g.diagonal(*_geom(self), offset, dim1, dim2))


def _unsafe_view(self, size):
    """Like ``view``, but the result is not a view: no base, its own version counter
    (PyTorch uses it where the input is a temporary nobody else sees)."""
    impl = self._impl
    sizes = tuple(impl._array.shape)
    shape = g.infer_size(tuple(size), impl._array.size)
    strides = g.compute_stride(sizes, impl.strides, shape)
    if strides is None:
        return _unsafe_view(clone(self, "contiguous_format"), shape)
    out = make_view(self, shape, strides, impl.storage_offset())
    out._impl._base = None
    out._impl._base_tensor = None
    out._impl._vc = [0]
    return out


def reshape(self, shape):
    """CompositeImplicitAutograd: a view when the geometry allows, else a copy."""
    impl = self._impl
    arr = impl._array
    shape = g.infer_size(tuple(shape), arr.size)
    # a row-major tensor always reshapes as a view (compute_stride refuses only a dim that spans two
    # contiguous runs); the stride computation is for the others
    if (impl.device is _CPU and type(arr) is _ndarray and arr.flags.c_contiguous) or \
            g.reshape_is_view(tuple(arr.shape), impl.strides, shape) is not None:
        return at.view(self, shape)
    return at._unsafe_view(at.clone(self, "contiguous_format"), shape)


# ---- in-place views (PyTorch's inplace_view tag): the tensor itself takes the view's geometry over its storage
def _take_geometry(self, view):
    """Give ``self`` the sizes, strides and offset of ``view`` (a view of it just made): same storage, same
    version counter and base; autograd's kernel rebases the history as for any in-place operator."""
    impl, v = self._impl, view._impl
    impl._array = v._array
    impl._offset = v._offset
    if v._strides is not None or impl._strides is not None:
        impl._strides = v._strides
    impl.bump_version()
    return self


def t_(self):
    return _take_geometry(self, make_view(self, *g.t(*_geom(self), "t_")))


def transpose_(self, dim0, dim1):
    return _take_geometry(self, make_view(self, *g.transpose(*_geom(self), dim0, dim1)))


def unsqueeze_(self, dim):
    return _take_geometry(self, make_view(self, *g.unsqueeze(*_geom(self), dim)))


def squeeze_(self):
    return _take_geometry(self, make_view(self, *g.squeeze(*_geom(self), None)))


def squeeze__dim(self, dim):
    return _take_geometry(self, make_view(self, *g.squeeze(*_geom(self), dim)))


def squeeze__dims(self, dim):
    return _take_geometry(self, make_view(self, *g.squeeze(*_geom(self), tuple(dim))))


def as_strided_(self, size, stride, storage_offset=None):
    return _take_geometry(self, as_strided(self, size, stride, storage_offset))
