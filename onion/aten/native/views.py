"""View operators: a new TensorImpl over the same storage, no kernel launched.

The geometry (sizes, strides, offset) comes from ``view_geometry``; the
backend only builds its array over the shared storage.
"""
from __future__ import annotations

from ...backends import backend_for
from ...core.tensor import make_tensor
from ...core.tensor_impl import TensorImpl
from .. import view_geometry as g
from .copy import clone
from ..at import at


def _geom(t):
    impl = t._impl
    return tuple(impl._array.shape), impl.strides, impl.storage_offset()


def make_view(self, sizes, strides, offset):
    """A tensor viewing ``self``'s storage with the given geometry (shares the version counter)."""
    impl = self._impl
    storage = impl.storage()
    sizes = tuple(sizes)
    # an empty view may sit past the end of its storage (e.g. x[:, 1] of a 0x3 tensor):
    # its array then needs no memory at all, and the offset is kept on the impl only
    empty = 0 in sizes
    arr = backend_for(impl.device).view(storage, sizes, tuple(strides), 0 if empty else offset, impl.dtype.np)
    v = TensorImpl(arr, impl.dtype, impl.device, impl.keyset)
    v._storage = storage
    v._offset = offset
    if arr.size == 0:
        v._strides = tuple(strides)
    v._vc = impl.version_counter()
    v._base = impl._base if impl._base is not None else impl
    if impl._inference:
        v._inference = True
    return make_tensor(v)


def view(self, size):
    return make_view(self, *g.view(*_geom(self), tuple(size)))


def _reshape_alias(self, size, stride):
    return make_view(self, tuple(size), tuple(stride), self._impl.storage_offset())


def t(self):
    return make_view(self, *g.t(*_geom(self)))


def transpose(self, dim0, dim1):
    return make_view(self, *g.transpose(*_geom(self), dim0, dim1))


def permute(self, dims):
    return make_view(self, *g.permute(*_geom(self), tuple(dims)))


def expand(self, size, implicit=False):
    geom = _geom(self)
    try:
        return make_view(self, *g.expand(*geom, tuple(size), ""))
    except RuntimeError:    # the message names the tensor type: only worked out when it is needed
        impl = self._impl
        g.expand(*geom, tuple(size), g.legacy_type_str(impl.dtype.scalar_type_name, impl.device.type))
        raise


def unsqueeze(self, dim):
    return make_view(self, *g.unsqueeze(*_geom(self), dim))


def squeeze(self):
    return make_view(self, *g.squeeze(*_geom(self), None))


def squeeze_dim(self, dim):
    return make_view(self, *g.squeeze(*_geom(self), dim))


def squeeze_dims(self, dim):
    return make_view(self, *g.squeeze(*_geom(self), tuple(dim)))


def select(self, dim, index):
    return make_view(self, *g.select(*_geom(self), dim, index))


def slice(self, dim=0, start=None, end=None, step=1):  # noqa: A001 - the operator's name
    return make_view(self, *g.slice(*_geom(self), dim, start, end, step))


def as_strided(self, size, stride, storage_offset=None):
    impl = self._impl
    storage = impl.storage()
    geom = g.as_strided(*_geom(self), tuple(size), tuple(stride), storage_offset,
                        itemsize=impl.dtype.itemsize, storage_nbytes=storage.nbytes)
    return make_view(self, *geom)


def alias(self):
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
    out._impl._vc = [0]
    return out


def reshape(self, shape):
    """CompositeImplicitAutograd: a view when the geometry allows, else a copy."""
    impl = self._impl
    sizes = tuple(impl._array.shape)
    shape = g.infer_size(tuple(shape), impl._array.size)
    r = g.reshape_is_view(sizes, impl.strides, shape)
    if r is not None:
        return at.view(self, shape)
    return at._unsafe_view(at.clone(self, "contiguous_format"), shape)
