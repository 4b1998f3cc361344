"""Complex numbers as views and pairs: ``_conj``/``_neg_view`` (the math-bit views), ``view_as_real``,
``view_as_complex``, ``real``/``imag``, and the pointwise ``complex``, ``polar`` and ``angle``.

``view_as_real`` and ``view_as_complex`` reinterpret the same memory with another dtype: a complex
element is two reals side by side, so sizes gain (or lose) a trailing 2 and every stride doubles (or
halves), as PyTorch's.  ``real``/``imag`` select from ``view_as_real``; the imaginary part of a
conjugate view is a Negative view of the stored one (PyTorch's ``x.conj().imag``).
"""
from __future__ import annotations

import numpy as np

from ...backends import backend_for
from ...core import dtype as _dt
from ...core.tensor import Tensor
from .. import iterator as _it
from .. import view_geometry as g
from ..at import at
from ..math_bits import CONJ, NEG
from ..tensor_new import empty_tensor
from ..ufunc import meta_output_strides
from .views import _share

_REAL_OF = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


def _toggle(self, flag: int) -> Tensor:
    """An alias of ``self`` (a view: same memory, version counter, base) with ``flag`` flipped."""
    impl = self._impl
    t = _share(self, impl._array, 0)
    t._impl.keyset ^= flag
    if impl._array.size == 0:
        t._impl._strides = impl.strides      # an empty array cannot tell its strides: they live on the impl
    return t


def _conj(self):
    return _toggle(self, CONJ)


def _neg_view(self):
    return _toggle(self, NEG)


def _retyped_view(self, dtype, sizes, strides, offset) -> Tensor:
    """A view of ``self``'s storage as ``dtype`` (sizes, strides, offset in elements of ``dtype``)."""
    impl = self._impl
    storage = impl._storage if impl._storage is not None else impl.storage()
    # an empty view may sit past the end of its storage: its array needs no memory, the offset stays on the impl
    arr = backend_for(impl.device).view(storage, tuple(sizes), tuple(strides), 0 if 0 in sizes else offset, dtype.np)
    t = _share(self, arr, 0)
    v = t._impl
    v.dtype = dtype
    v._offset = offset
    if 0 in sizes:
        v._strides = tuple(strides)
    return t


def view_as_real(self):
    impl = self._impl
    if not impl.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if impl.keyset & CONJ:
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    sizes = tuple(impl._array.shape) + (2,)
    strides = tuple(2 * s for s in impl.strides) + (1,)
    return _retyped_view(self, _REAL_OF[impl.dtype], sizes, strides, 2 * impl.storage_offset())


def view_as_complex(self):
    impl = self._impl
    dt = impl.dtype
    if dt not in _COMPLEX_OF:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {dt.scalar_type_name}")
    sizes = tuple(impl._array.shape)
    if not sizes:
        raise RuntimeError("Input tensor must have one or more dimensions")
    strides = impl.strides
    if sizes[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if impl.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _retyped_view(self, _COMPLEX_OF[dt], sizes[:-1], tuple(s // 2 for s in strides[:-1]),
                         impl.storage_offset() // 2)


def real(self):
    """The real part, a view; a real tensor is its own real part (PyTorch's CompositeImplicit ``real``)."""
    if not self._impl.dtype.is_complex:
        return self
    pairs = at.view_as_real(at._conj(self) if self._impl.keyset & CONJ else self)
    return at.select_int(pairs, -1, 0)


def imag(self):
    """The imaginary part, a view; of a conjugate view, a Negative view of the stored imaginary part."""
    if not self._impl.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if self._impl.keyset & CONJ:
        pairs = at._neg_view(at.view_as_real(at._conj(self)))
    else:
        pairs = at.view_as_real(self)
    return at.select_int(pairs, -1, 1)


# ---------------------------------------------------------------- complex, polar, angle
def _pair_device(name, a, b):
    """Checks of ``complex``/``polar`` (one floating dtype for both) and the device the result is on."""
    da, db = a._impl.dtype, b._impl.dtype
    if not all(d is _dt.float16 or d in _COMPLEX_OF for d in (da, db)):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{da.scalar_type_name} and {db.scalar_type_name}")
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {da.scalar_type_name} but got scalar type "
                           f"{db.scalar_type_name} for second argument")
    if da is _dt.float16:
        if name == "polar":     # PyTorch's polar kernel has no Half loop
            raise NotImplementedError(f'"polar_cpu" not implemented for \'{da.scalar_type_name}\'')
        # PyTorch makes a complex32 (ComplexHalf) tensor of two Half tensors
        raise RuntimeError("complex of two Half tensors is a ComplexHalf (complex32) tensor, a dtype onion does "
                           "not have; convert them to float32 first for a complex64 result")
    return _it.check_devices(name, [a._impl, b._impl])


def _pair(name, a, b, values, out=None):
    device = _pair_device(name, a, b)
    cdt = _COMPLEX_OF[a._impl.dtype]
    shape = tuple(g.broadcast_pair_for_op(tuple(a._impl._array.shape), tuple(b._impl._array.shape)))
    if out is not None:
        _it.check_out_device(device, out._impl)
        if out._impl.dtype is not cdt:
            raise RuntimeError(f"Expected object of scalar type {cdt.scalar_type_name} but got scalar type "
                               f"{out._impl.dtype.scalar_type_name} for argument 'out'")
    impls = [a._impl, b._impl]
    if device.type == "meta":
        if out is None:     # PyTorch's Meta runs its Python reference: the references' elementwise layout
            return empty_tensor(shape, cdt, device, meta_output_strides(shape, impls))
        _it.check_internal_overlap(out._impl)
        _it.resize_out(out, shape)
        return out
    arr = values(a._impl._array, b._impl._array)
    # TensorIterator's layout (complex_out builds one over real and imag)
    layout = tuple(g.output_strides_like(shape, [(tuple(i._array.shape), i.strides) for i in impls]))
    if out is None:
        result = empty_tensor(shape, cdt, device, layout)
        result._impl._array[...] = arr
        return result
    return _it.write_out(name, out, arr, cdt, inputs=impls, layout=lambda: layout)


def _complex_values(x, y):
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, np.complex64))
    out.real = x
    out.imag = y
    return out


def _polar_values(r, theta):
    out = np.empty(np.broadcast_shapes(r.shape, theta.shape), np.result_type(r, np.complex64))
    out.real = r * np.cos(theta)
    out.imag = r * np.sin(theta)
    return out


def complex(real, imag):  # noqa: A001 - PyTorch's operator name
    return _pair("complex", real, imag, _complex_values)


def complex_out(real, imag, out):
    return _pair("complex", real, imag, _complex_values, out)


def polar(abs, angle):  # noqa: A002 - PyTorch's argument names
    return _pair("polar", abs, angle, _polar_values)


def polar_out(abs, angle, out):  # noqa: A002
    return _pair("polar", abs, angle, _polar_values, out)


def _angle_dtype(dt):
    if dt.is_complex:
        return _REAL_OF[dt]
    if dt.is_floating_point:
        return dt
    return _dt.get_default_dtype()


def _angle_values(arr, dt, out_np):
    if dt.is_complex:
        return np.angle(arr).astype(out_np, copy=False)
    a = arr.astype(out_np, copy=False)
    # 0 for x >= 0, pi for x < 0, NaN kept (PyTorch's real angle)
    return np.where(np.isnan(a), a, np.where(a < 0, np.asarray(np.pi, out_np), np.asarray(0, out_np)))


def _angle_layout(impl, out_dtype):
    """PyTorch's angle of a complex tensor into a real result computes a complex result apart and copies it
    into the real one, made (or resized) row-major; otherwise TensorIterator lays the result out."""
    shape = tuple(impl._array.shape)
    if impl.dtype.is_complex and not out_dtype.is_complex:
        return g.contiguous_strides(shape)
    return tuple(g.output_strides_like(shape, [(shape, impl.strides)]))


def angle(self):
    impl = self._impl
    odt = _angle_dtype(impl.dtype)
    shape = tuple(impl._array.shape)
    result = empty_tensor(shape, odt, impl.device, _angle_layout(impl, odt) if impl.device.type != "meta"
                          else g.like_strides(shape, impl.strides, None) if impl._array.size else None)
    if impl.device.type != "meta":
        result._impl._array[...] = _angle_values(impl._array, impl.dtype, odt.np)
    return result


def angle_out(self, out):
    impl = self._impl
    odt = _angle_dtype(impl.dtype)
    _it.check_out_device(impl.device, out._impl)
    return _it.write_out("angle", out, _angle_values(impl._array, impl.dtype, odt.np), odt, inputs=[impl],
                         layout=lambda: _angle_layout(impl, out._impl.dtype))
