"""Pointwise operators that are not a single formula: Scalar overloads and ``where``."""
from __future__ import annotations

from ...core import dtype as _dt
from .. import iterator as _it
from ..at import at
from ..math_bits import CONJ, NEG
from ..tensor_new import scalar_to_tensor, wrap, wrap_cpu
import numpy as _np
from ...core.device import CPU as _CPU
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


_SIGNED_OF_SIZE = {1: _np.int8, 2: _np.int16, 4: _np.int32, 8: _np.int64}


def _select_bits(mask, x, y):
    """``np.where(mask, x, y)`` for a bool mask and contiguous ``x`` and ``y`` of one dtype (``y`` of the
    same shape or 0-d): each item moved as the integer of its size, ``(x & m) | (y & ~m)`` with ``m`` 0 or
    all ones.  The bits copied are np.where's (NaN payloads and signed zeros included), in two to five
    passes without branches: about twice as fast as np.where's element loop on a mask with no long runs
    (a ReLU's, in every clamp/threshold backward).  Items of 16 bytes (complex128) and 0-d operands take
    np.where."""
    sint = _SIGNED_OF_SIZE.get(x.dtype.itemsize)
    if sint is None or not x.ndim:          # (0-d: NumPy's ufuncs give scalars, not arrays)
        return _np.where(mask, x, y)
    m = _np.negative(mask, dtype=sint)          # True -> -1 (every bit set), False -> 0
    if y.ndim:
        yv = y.view(sint)
    else:
        yv = y.reshape(1).view(sint)[0]
        if not yv:                              # a zero y, the backward formulas' ``where(mask, grad, 0)``
            return _np.bitwise_and(x.view(sint), m, out=m).view(x.dtype)
    r = x.view(sint) & m
    _np.invert(m, out=m)
    m &= yv
    r |= m
    return r.view(x.dtype)


def where_self(ks, condition, self, other):
    c, a, b = condition._impl, self._impl, other._impl
    if c.device is _CPU and a.device is _CPU and b.device is _CPU and c.dtype is _dt.bool and a.dtype is b.dtype:
        # the backward formulas' case (``where(mask, grad, zero)``): a bool mask and values of one shape, all
        # contiguous, the other value that or 0-d; TensorIterator's output is then contiguous, as NumPy's
        ca, aa, ba = c._array, a._array, b._array
        shape = aa.shape
        if (ca.shape == shape and (ba.shape == shape or not ba.ndim) and 0 not in shape and ca.flags.c_contiguous
                and aa.flags.c_contiguous and ba.flags.c_contiguous):
            return wrap_cpu(_select_bits(ca, aa, ba), a.dtype)
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
    impls = [condition._impl, self._impl, other._impl]
    # a resized out= takes TensorIterator's layout of the inputs, as the functional result does
    return _it.write_out("where", out, r, dt, inputs=impls, layout=lambda: _expected_strides(tuple(r.shape), impls))


def _where_out_dtype(dt, out):
    """where's out= must have the result dtype exactly (no casting)."""
    if out._impl.dtype is not dt:
        raise RuntimeError(f"Expected out type to be {dt.scalar_type_name} but got "
                           f"{out._impl.dtype.scalar_type_name}")


def where_ScalarSelf(condition, self, other):
    """PyTorch's decomposition: the number as a 0-d ``scalar_tensor`` of the result type, the tensor cast to it."""
    dt = _it.common_dtype2(other._impl, scalar_to_tensor(self)._impl)
    self_t = at.scalar_tensor(self, dt, "strided", other._impl.device, None)
    return at.where_self(condition, self_t, other.to(dt))


def where_ScalarOther(condition, self, other):
    dt = _it.common_dtype2(self._impl, scalar_to_tensor(other)._impl)
    other_t = at.scalar_tensor(other, dt, "strided", self._impl.device, None)
    return at.where_self(condition, self.to(dt), other_t)


def where_Scalar(condition, self, other):
    dt = _it.common_dtype2(scalar_to_tensor(self)._impl, scalar_to_tensor(other)._impl)
    dev = condition._impl.device
    other_t = at.scalar_tensor(other, dt, "strided", dev, None)
    return at.where_self(condition, at.scalar_tensor(self, dt, "strided", dev, None), other_t)


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


# ---------------------------------------------------------------- pointwise (issue 8, item 2)
# Scalar overloads: the Python number becomes a wrapped-number tensor and the Tensor overload runs, as
# PyTorch's CompositeExplicitAutograd wrappers do; aliases and compositions follow PyTorch's
# CompositeImplicitAutograd bodies.
def copysign_Scalar(self, other):
    return at.copysign_Tensor(self, scalar_to_tensor(other))


def copysign__Scalar(self, other):
    return at.copysign__Tensor(self, scalar_to_tensor(other))


def copysign_Scalar_out(self, other, out):
    return at.copysign_out(self, scalar_to_tensor(other), out)


def clip(self, min=None, max=None):
    return at.clamp(self, min, max)


def clip_Tensor(self, min=None, max=None):
    return at.clamp_Tensor(self, min, max)


def clip_(self, min=None, max=None):
    return at.clamp_(self, min, max)


def clip__Tensor(self, min=None, max=None):
    return at.clamp__Tensor(self, min, max)


def clip_out(self, min, max, out):
    return at.clamp_out(self, min, max, out)


def clip_Tensor_out(self, min, max, out):
    return at.clamp_Tensor_out(self, min, max, out)


def true_divide_Tensor(self, other):
    return at.div_Tensor(self, other)


def true_divide__Tensor(self, other):
    return at.div__Tensor(self, other)


def true_divide_out(self, other, out):
    return at.div_out(self, other, out)


def true_divide_Scalar(self, other):
    return at.div_Scalar(self, other)


def true_divide__Scalar(self, other):
    return at.div__Scalar(self, other)


def floor_divide_Scalar(self, other):
    return at.floor_divide(self, scalar_to_tensor(other))


def floor_divide__Scalar(self, other):
    return at.floor_divide__Tensor(self, scalar_to_tensor(other))


def _bool_like(self, value: bool):
    make = at.ones_like if value else at.zeros_like
    return make(self, _dt.bool, None, None, None, None)


def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """Into ``empty_like(self)``, as PyTorch's: the result keeps self's layout (even an empty one's strides)."""
    out = at.empty_like(self, None, None, None, None, None)
    return at.nan_to_num_out(self, nan, posinf, neginf, out)


def isnan(self):
    return at.ne_Tensor(self, self)


def isinf(self):
    if self._impl.dtype.category < 2:
        return _bool_like(self, False)
    return at.eq_Scalar(at.abs(self), float("inf"))


def isfinite(self):
    if self._impl.dtype.category < 2:
        return _bool_like(self, True)
    return at.logical_and(at.eq_Tensor(self, self), at.ne_Scalar(at.abs(self), float("inf")))


def isreal(self):
    """True where the imaginary part is 0 (everywhere for a real dtype)."""
    if not self._impl.dtype.is_complex:
        return _bool_like(self, True)
    # z - conj(z) is 2i imag(z) for a finite real part
    return at.eq_Scalar(at.sub_Tensor(self, at._conj_physical(self), 1), 0)


def _ldexp_check(self, other):
    """A floating self takes PyTorch's exponent kernel, which has no bool exponents."""
    if other._impl.dtype is _dt.bool and self._impl.dtype.is_floating_point:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")


def ldexp_Tensor(self, other):
    _ldexp_check(self, other)
    return at.mul_Tensor(self, at.pow_Scalar(2.0, other))


def ldexp_(self, other):
    _ldexp_check(self, other)
    return at.mul__Tensor(self, at.pow_Scalar(2.0, other))


def ldexp_out(self, other, out):
    _ldexp_check(self, other)
    return at.mul_out(self, at.pow_Scalar(2.0, other), out)


def xlogy_Scalar_Self(self, other):
    return at.xlogy_Tensor(scalar_to_tensor(self), other)


def xlogy_Scalar_Other(self, other):
    return at.xlogy_Tensor(self, scalar_to_tensor(other))


def xlogy__Scalar_Other(self, other):
    return at.xlogy__Tensor(self, scalar_to_tensor(other))


def xlogy_OutScalar_Self(self, other, out):
    return at.xlogy_OutTensor(scalar_to_tensor(self), other, out)


def xlogy_OutScalar_Other(self, other, out):
    return at.xlogy_OutTensor(self, scalar_to_tensor(other), out)


def square(self):
    return at.pow_Tensor_Scalar(self, 2)


def square_(self):
    return at.pow__Scalar(self, 2)


def square_out(self, out):
    return at.pow_Tensor_Scalar_out(self, 2, out)


def fix(self):
    return at.trunc(self)


def fix_(self):
    return at.trunc_(self)


def fix_out(self, out):
    return at.trunc_out(self, out)


def arctan2(self, other):
    return at.atan2(self, other)


def arctan2_(self, other):
    return at.atan2_(self, other)


def arctan2_out(self, other, out):
    return at.atan2_out(self, other, out)


def fmod_Scalar(self, other):
    return at.fmod_Tensor(self, scalar_to_tensor(other))


def fmod__Scalar(self, other):
    return at.fmod__Tensor(self, scalar_to_tensor(other))


def fmod_Scalar_out(self, other, out):
    return at.fmod_Tensor_out(self, scalar_to_tensor(other), out)


def remainder_Scalar(self, other):
    return at.remainder_Tensor(self, scalar_to_tensor(other))


def remainder__Scalar(self, other):
    return at.remainder__Tensor(self, scalar_to_tensor(other))


def remainder_Scalar_out(self, other, out):
    return at.remainder_Tensor_out(self, scalar_to_tensor(other), out)


def remainder_Scalar_Tensor(self, other):
    return at.remainder_Tensor(scalar_to_tensor(self), other)


# bitwise operators and their dunders
def bitwise_and_Scalar(self, other):
    return at.bitwise_and_Tensor(self, scalar_to_tensor(other))


def bitwise_and_Scalar_Tensor(self, other):
    return at.bitwise_and_Tensor(scalar_to_tensor(self), other)


def bitwise_and__Scalar(self, other):
    return at.bitwise_and__Tensor(self, scalar_to_tensor(other))


def bitwise_and_Scalar_out(self, other, out):
    return at.bitwise_and_Tensor_out(self, scalar_to_tensor(other), out)


def bitwise_or_Scalar(self, other):
    return at.bitwise_or_Tensor(self, scalar_to_tensor(other))


def bitwise_or_Scalar_Tensor(self, other):
    return at.bitwise_or_Tensor(scalar_to_tensor(self), other)


def bitwise_or__Scalar(self, other):
    return at.bitwise_or__Tensor(self, scalar_to_tensor(other))


def bitwise_or_Scalar_out(self, other, out):
    return at.bitwise_or_Tensor_out(self, scalar_to_tensor(other), out)


def bitwise_xor_Scalar(self, other):
    return at.bitwise_xor_Tensor(self, scalar_to_tensor(other))


def bitwise_xor_Scalar_Tensor(self, other):
    return at.bitwise_xor_Tensor(scalar_to_tensor(self), other)


def bitwise_xor__Scalar(self, other):
    return at.bitwise_xor__Tensor(self, scalar_to_tensor(other))


def bitwise_xor_Scalar_out(self, other, out):
    return at.bitwise_xor_Tensor_out(self, scalar_to_tensor(other), out)


def bitwise_left_shift_Tensor_Scalar(self, other):
    return at.bitwise_left_shift_Tensor(self, scalar_to_tensor(other))


def bitwise_left_shift__Tensor_Scalar(self, other):
    return at.bitwise_left_shift__Tensor(self, scalar_to_tensor(other))


def bitwise_left_shift_Tensor_Scalar_out(self, other, out):
    return at.bitwise_left_shift_Tensor_out(self, scalar_to_tensor(other), out)


def bitwise_left_shift_Scalar_Tensor(self, other):
    return at.bitwise_left_shift_Tensor(scalar_to_tensor(self), other)


def bitwise_right_shift_Tensor_Scalar(self, other):
    return at.bitwise_right_shift_Tensor(self, scalar_to_tensor(other))


def bitwise_right_shift__Tensor_Scalar(self, other):
    return at.bitwise_right_shift__Tensor(self, scalar_to_tensor(other))


def bitwise_right_shift_Tensor_Scalar_out(self, other, out):
    return at.bitwise_right_shift_Tensor_out(self, scalar_to_tensor(other), out)


def bitwise_right_shift_Scalar_Tensor(self, other):
    return at.bitwise_right_shift_Tensor(scalar_to_tensor(self), other)


def __and___Scalar(self, other):
    return at.bitwise_and_Scalar(self, other)


def __and___Tensor(self, other):
    return at.bitwise_and_Tensor(self, other)


def __iand___Scalar(self, other):
    return at.bitwise_and__Scalar(self, other)


def __iand___Tensor(self, other):
    return at.bitwise_and__Tensor(self, other)


def __or___Scalar(self, other):
    return at.bitwise_or_Scalar(self, other)


def __or___Tensor(self, other):
    return at.bitwise_or_Tensor(self, other)


def __ior___Scalar(self, other):
    return at.bitwise_or__Scalar(self, other)


def __ior___Tensor(self, other):
    return at.bitwise_or__Tensor(self, other)


def __xor___Scalar(self, other):
    return at.bitwise_xor_Scalar(self, other)


def __xor___Tensor(self, other):
    return at.bitwise_xor_Tensor(self, other)


def __ixor___Scalar(self, other):
    return at.bitwise_xor__Scalar(self, other)


def __ixor___Tensor(self, other):
    return at.bitwise_xor__Tensor(self, other)


def __lshift___Scalar(self, other):
    return at.bitwise_left_shift_Tensor_Scalar(self, other)


def __lshift___Tensor(self, other):
    return at.bitwise_left_shift_Tensor(self, other)


def __ilshift___Scalar(self, other):
    return at.bitwise_left_shift__Tensor_Scalar(self, other)


def __ilshift___Tensor(self, other):
    return at.bitwise_left_shift__Tensor(self, other)


def __rshift___Scalar(self, other):
    return at.bitwise_right_shift_Tensor_Scalar(self, other)


def __rshift___Tensor(self, other):
    return at.bitwise_right_shift_Tensor(self, other)


def __irshift___Scalar(self, other):
    return at.bitwise_right_shift__Tensor_Scalar(self, other)


def __irshift___Tensor(self, other):
    return at.bitwise_right_shift__Tensor(self, other)


# float_power: pow in double precision (complex128 when either side is complex)
def _float_power_dtype(*operands):
    cplx = any(o._impl.dtype.is_complex if hasattr(o, "_impl") else isinstance(o, complex) for o in operands)
    return _dt.complex128 if cplx else _dt.float64


def _to(t, dt):
    return t if t._impl.dtype is dt else at._to_copy(t, dt, None, None, None, False, None)


def _scalar_as(value, dt):
    return complex(value) if dt.is_complex else float(value.real if isinstance(value, complex) else value)


def _float_power_out_check(out, dt):
    if out._impl.dtype is not dt:
        raise RuntimeError(f"the output given to float_power has dtype {out._impl.dtype.scalar_type_name} but the "
                           f"operation's result requires dtype {dt.scalar_type_name}")


def _float_power_inplace_check(self, dt):
    if self._impl.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {self._impl.dtype.scalar_type_name} but the "
                           f"operation's result requires dtype {dt.scalar_type_name}")


def float_power_Tensor_Tensor(self, exponent):
    dt = _float_power_dtype(self, exponent)
    return at.pow_Tensor_Tensor(_to(self, dt), _to(exponent, dt))


def float_power_Tensor_Scalar(self, exponent):
    dt = _float_power_dtype(self, exponent)
    return at.pow_Tensor_Scalar(_to(self, dt), _scalar_as(exponent, dt))


def float_power_Scalar(self, exponent):
    dt = _float_power_dtype(self, exponent)
    return at.pow_Scalar(_scalar_as(self, dt), _to(exponent, dt))


def float_power_Tensor_Tensor_out(self, exponent, out):
    dt = _float_power_dtype(self, exponent)
    _float_power_out_check(out, dt)
    return at.pow_Tensor_Tensor_out(_to(self, dt), _to(exponent, dt), out)


def float_power_Tensor_Scalar_out(self, exponent, out):
    dt = _float_power_dtype(self, exponent)
    _float_power_out_check(out, dt)
    return at.pow_Tensor_Scalar_out(_to(self, dt), _scalar_as(exponent, dt), out)


def float_power_Scalar_out(self, exponent, out):
    dt = _float_power_dtype(self, exponent)
    _float_power_out_check(out, dt)
    return at.pow_Scalar_out(_scalar_as(self, dt), _to(exponent, dt), out)


def float_power__Tensor(self, exponent):
    dt = _float_power_dtype(self, exponent)
    _float_power_inplace_check(self, dt)
    return at.pow__Tensor(self, _to(exponent, dt))


def float_power__Scalar(self, exponent):
    dt = _float_power_dtype(self, exponent)
    _float_power_inplace_check(self, dt)
    return at.pow__Scalar(self, _scalar_as(exponent, dt))


# polygamma(int n, Tensor self): the formula's operand comes second in the schema, so its kernels
# call the ufunc's kernels with the operand first.
_POLYGAMMA = {}


def _polygamma_ufunc(device):
    uf = _POLYGAMMA.get(device.type)
    if uf is None:
        from ..ufunc import MetaUfunc, Ufunc
        from .ufunc_formulas import FORMULAS
        formula = FORMULAS["polygamma"]
        groups = ("Floating", "BFloat16", "Half")
        if device.type == "meta":
            uf = MetaUfunc(formula)
        else:
            xp = backend_for(device).xp if device.type == "cpu" else None
            uf = Ufunc(formula, device.type, xp, groups)
        uf = _POLYGAMMA[device.type] = (uf.functional("polygamma", ("Tensor",)), uf.out("polygamma", ("Tensor",)))
    return uf


def _meta_or(*tensors):
    """The device whose kernel runs: Meta when any tensor is on it (its dispatch key wins), else the first's."""
    for t in tensors:
        if t._impl.device.type == "meta":
            return t._impl.device
    return tensors[0]._impl.device


def polygamma_kernel(n, self):
    return _polygamma_ufunc(self._impl.device)[0](None, self, n)


def polygamma_out_kernel(n, self, out):
    return _polygamma_ufunc(_meta_or(self, out))[1](None, self, n, out)


def polygamma_(self, n):
    return at.polygamma_out(n, self, self)


# frexp: mantissa in self's dtype, exponent int32
def frexp_Tensor(self):
    mantissa = at.empty_like(self, None, None, None, None, None)
    exponent = at.empty_like(self, _dt.int32, None, None, None, None)
    return at.frexp_Tensor_out(self, mantissa, exponent)


def frexp_out_kernel(self, mantissa, exponent):
    si = self._impl
    if not si.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    if mantissa._impl.dtype is not si.dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {si.dtype.typemeta_name} but got "
                           f"{mantissa._impl.dtype.typemeta_name}")
    if exponent._impl.dtype is not _dt.int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                           f"{exponent._impl.dtype.typemeta_name}")
    shape = tuple(si._array.shape)
    if si.device.type == "meta":
        _it.resize_out(mantissa, shape)
        _it.resize_out(exponent, shape)
        return mantissa, exponent
    xp = backend_for(si.device).xp
    a = si._array
    if si.dtype in (_dt.float16, _dt.bfloat16):
        m, e = xp.frexp(a.astype(xp.float32))
        m = m.astype(a.dtype)
    else:
        m, e = xp.frexp(a)
    _it.write_out("frexp", mantissa, m, si.dtype, inputs=[si])
    _it.write_out("frexp", exponent, e.astype(xp.int32), _dt.int32, inputs=[si])
    return mantissa, exponent
