"""Pointwise operators that are not a single formula: Scalar overloads and ``where``."""
from __future__ import annotations

from ...core import dtype as _dt
from .. import iterator as _it
from ..at import at
from ..math_bits import CONJ, NEG
from ..tensor_new import scalar_to_tensor, wrap
import warnings
from ..ufunc import _expected_strides, meta_output_strides
from ...backends import backend_for
from ..tensor_new import empty_tensor


def add_Scalar(self, other, alpha=1):
    return at.add_Tensor(self, scalar_to_tensor(other), alpha)


def add__Scalar(self, other, alpha=1):
    return at.add__Tensor(self, scalar_to_tensor(other), alpha)


def sub_Scalar(self, other, alpha=1):
    return at.sub_Tensor(self, scalar_to_tensor(other), alpha)


def sub__Scalar(self, other, alpha=1):
    return at.sub__Tensor(self, scalar_to_tensor(other), alpha)


def rsub_Tensor(self, other, alpha=1):
    return at.sub_Tensor(other, self, alpha)


def rsub_Scalar(self, other, alpha=1):
    return at.sub_Tensor(scalar_to_tensor(other), self, alpha)


def mul_Scalar(self, other):
    return at.mul_Tensor(self, scalar_to_tensor(other))


def mul__Scalar(self, other):
    return at.mul__Tensor(self, scalar_to_tensor(other))


def div_Scalar(self, other):
    return at.div_Tensor(self, scalar_to_tensor(other))


def div__Scalar(self, other):
    return at.div__Tensor(self, scalar_to_tensor(other))


def div_Scalar_mode(self, other, rounding_mode=None):
    return at.div_Tensor_mode(self, scalar_to_tensor(other), rounding_mode)


def div__Scalar_mode(self, other, rounding_mode=None):
    return at.div__Tensor_mode(self, scalar_to_tensor(other), rounding_mode)


def _where_plan(condition, self, other):
    c = condition._impl
    if c.dtype is not _dt.bool:
        if c.dtype is not _dt.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{c.dtype.scalar_type_name}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in "
                      "a future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=4)
    impls = [c, self._impl, other._impl]
    dev = _it.check_devices("where", impls)
    dt = _it.common_dtype2(self._impl, other._impl)
    return dt, dev, impls


def _where_compute(condition, self, other):
    dt, dev, impls = _where_plan(condition, self, other)
    xp = backend_for(dev).xp
    arrays = [i._array for i in impls]
    if dev.type != "cpu":
        import numpy as np
        arrays = [backend_for(dev).from_numpy(a, dev) if type(a) is np.ndarray else a for a in arrays]
    try:
        r = xp.where(arrays[0].astype(bool), arrays[1].astype(dt.np), arrays[2].astype(dt.np))
    except ValueError as e:
        _it.broadcast_error("where", impls, e)
    r = xp.asarray(r)
    want = _expected_strides(tuple(r.shape), impls)
    if want is not None and r.size > 1:
        arr = backend_for(dev).empty_strided(tuple(r.shape), want, r.dtype, dev)
        _it.xp_copy(arr, r)
        r = arr
    return r, dt, dev


def _where_meta(condition, self, other):
    dt, dev, impls = _where_plan(condition, self, other)
    shape = _it.broadcast_operands([tuple(i._array.shape) for i in impls])
    return empty_tensor(shape, dt, dev, meta_output_strides(shape, impls))    # torch's Meta where: the refs' layout


def where_self(condition, self, other):
    if condition._impl.device.type == "meta" or self._impl.device.type == "meta":
        return _where_meta(condition, self, other)
    r, dt, dev = _where_compute(condition, self, other)
    t = wrap(r, dt, dev)
    if r.size == 0 and r.ndim > 1:      # an empty array cannot tell its strides: the impl keeps them
        want = _expected_strides(tuple(r.shape), [condition._impl, self._impl, other._impl])
        if want is not None:
            t._impl._strides = want
    return t


def where_self_out(condition, self, other, out):
    if out._impl.device.type == "meta" or any(t._impl.device.type == "meta" for t in (condition, self, other)):
        res = _where_meta(condition, self, other)
        _it.check_out_device(res._impl.device, out._impl)
        _where_out_dtype(res._impl.dtype, out)
        _it.resize_out(out, tuple(res._impl._array.shape))
        return out
    r, dt, dev = _where_compute(condition, self, other)
    _it.check_out_device(dev, out._impl)
    _where_out_dtype(dt, out)
    return _it.write_out("where", out, r, dt, inputs=[condition._impl, self._impl, other._impl])


def _where_out_dtype(dt, out):
    """where's out= must have the result dtype exactly (no casting)."""
    if out._impl.dtype is not dt:
        raise RuntimeError(f"Expected out type to be {dt.scalar_type_name} but got "
                           f"{out._impl.dtype.scalar_type_name}")


def where_ScalarSelf(condition, self, other):
    return at.where_self(condition, scalar_to_tensor(self, other._impl.device), other)


def where_ScalarOther(condition, self, other):
    return at.where_self(condition, self, scalar_to_tensor(other, self._impl.device))


def where_Scalar(condition, self, other):
    return at.where_self(condition, scalar_to_tensor(self), scalar_to_tensor(other))


def conj(self):
    """Real tensors come back as themselves, as PyTorch's; a complex one as a view of the same memory
    carrying the Conjugate bit (``_conj``), resolved when an operator needs its values (aten/math_bits.py)."""
    if not self._impl.dtype.is_complex:
        return self
    return at._conj(self)


def conj_physical(self):
    """A real tensor is its own conjugate and comes back as itself, as in PyTorch; complex ones are copied."""
    if not self._impl.dtype.is_complex:
        return self
    return at._conj_physical(self)


def resolve_conj(self):
    """``self`` when no Conjugate bit is pending; else a new tensor holding the conjugated values
    (``copy_`` resolves the bit)."""
    if not self._impl.keyset & CONJ:
        return self
    return at.copy_(at.empty_like(self, None, None, None, None, None), self, False)


def resolve_neg(self):
    """``self`` when no Negative bit is pending; else a new tensor holding the negated values."""
    if not self._impl.keyset & NEG:
        return self
    return at.copy_(at.empty_like(self, None, None, None, None, None), self, False)
