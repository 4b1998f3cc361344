"""Elementwise formulas over an array namespace ``xp`` (one per operator).

The ``ufunc_inner_loop`` field of native_functions.yaml names them.  Each is a
plain function of arrays (already in the compute dtype) and Python scalars.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import dtype as _dt
from .. import iterator as _it
from .. import view_geometry as _g
from ..ufunc import UfuncFormula
from .factories import checked_scalar

FORMULAS: dict = {}


def formula(kind: str, n: int, *, check=None, errstate=False, opmath=True, torch_name="", skip_check=None, plain="",
            float_keeps_python_scalars=False, plain_scalars=(),
            operand_check=None, promote=None, extra_dtypes=(), plain_layout=None, out_check=None, layout=None,
            opmath_scalars=(), device_order=()):
    def deco(fn):
        FORMULAS[fn.__name__] = UfuncFormula(fn.__name__, fn, kind, n, check, errstate, opmath, torch_name, skip_check,
                                             opmath_scalars=opmath_scalars,
                                             operand_check=operand_check, promote=promote,
                                             extra_dtypes=tuple(extra_dtypes), plain_layout=plain_layout,
                                             out_check=out_check, plain=plain, plain_scalars=plain_scalars,
                                             float_keeps_python_scalars=float_keeps_python_scalars,
                                             layout=layout, device_order=tuple(device_order))
        return fn
    return deco


def _wrapped_value(impl):
    """The Python value of a wrapped-number operand (a Scalar argument)."""
    return impl._array.item() if impl.device.type != "meta" else None


def _as_elem(xp, value, arr):
    """A Python scalar as an element of ``arr``'s dtype (integers wrap, as C++ casts do)."""
    if arr.dtype.kind in "iub" and not isinstance(value, bool):
        return xp.asarray(value).astype(xp.int64).astype(arr.dtype)
    return value


def alpha_check(dtype, alpha, *rest):
    """PyTorch's checks on ``alpha`` against the result dtype (by the Python type of alpha)."""
    if isinstance(alpha, bool) and dtype is not _dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.category < 2 and isinstance(alpha, (float, complex)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    if dtype.category == 1:
        checked_scalar(alpha, dtype)    # alpha must fit the integer type


def sub_check(dtype, alpha):
    if dtype is _dt.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    alpha_check(dtype, alpha)


def sub_operand_check(ops, compute, alpha):
    """PyTorch refuses a bool operand (tensor or Python bool) whatever the result dtype."""
    a, b = ops[0].dtype is _dt.bool, ops[1].dtype is _dt.bool
    if a and b:
        sub_check(_dt.bool, alpha)
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def neg_check(dtype):
    if dtype is _dt.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


def no_complex(name):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
    return check


def _alpha_is_one(dtype, alpha):
    """``check`` has nothing to say when alpha is the int 1 (the common call); complex results take the
    formula (see ``add``)."""
    return alpha.__class__ is int and alpha == 1 and not dtype.is_complex


def _alpha_is_one_not_bool(dtype, alpha):
    return alpha.__class__ is int and alpha == 1 and dtype is not _dt.bool and not dtype.is_complex


def _not_bool(dtype):
    return dtype is not _dt.bool


def _real(dtype, *scalars):
    return not dtype.is_complex


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{dtype.scalar_type_name}\'')


# PyTorch's CPU add/sub compute ``self + alpha * other`` with alpha as a complex number for complex results,
# alpha 1 included: (1+0j) * (inf+1j) is inf+nanj (0 * inf), so an infinite part of ``other`` makes the
# other part NaN.  onion multiplies the same way (NumPy's complex product is the same textbook formula).
# opmath is done here: float16/bfloat16 round alpha to the dtype (as PyTorch's kernel holds it), then compute
# self + alpha * other in float32 and round once.
@formula("binary", 2, check=alpha_check, skip_check=_alpha_is_one, plain="add", plain_scalars=(1,), opmath=False)
def add(xp, self, other, alpha):
    if alpha == 1 and self.dtype.kind != "c":
        return xp.add(self, other)
    if self.dtype.kind == "b":
        return xp.logical_or(self, xp.logical_and(other, bool(alpha)))
    if _reduced_float(self.dtype):
        return _reduced_alpha(xp, xp.add, self, other, alpha)
    return xp.add(self, xp.multiply(other, _as_elem(xp, alpha, other)))


@formula("binary", 2, check=sub_check, operand_check=sub_operand_check,
         skip_check=_alpha_is_one_not_bool, plain="subtract", plain_scalars=(1,), opmath=False)
def sub(xp, self, other, alpha):
    if alpha == 1 and self.dtype.kind != "c":
        return xp.subtract(self, other)
    if _reduced_float(self.dtype):
        return _reduced_alpha(xp, xp.subtract, self, other, alpha)
    return xp.subtract(self, xp.multiply(other, _as_elem(xp, alpha, other)))


def _reduced_float(dt) -> bool:
    """float16 or bfloat16 (ml_dtypes' bfloat16 is of kind 'V')."""
    return dt.itemsize == 2 and dt.kind in "fV"


def _reduced_alpha(xp, op, self, other, alpha):
    dt, f32 = self.dtype, xp.float32
    if isinstance(alpha, float):
        alpha = xp.asarray(alpha, dtype=f32)        # a double reaches Half/BFloat16 through float (c10)
    alpha = xp.asarray(alpha, dtype=dt).astype(f32)
    return op(self.astype(f32), xp.multiply(other.astype(f32), alpha)).astype(dt)


@formula("binary", 2, plain="multiply", opmath_scalars=(1,))
def mul(xp, self, other):
    return xp.multiply(self, other)        # on bool arrays this is logical and


@formula("binary_float", 2, errstate=True, plain="true_divide", opmath_scalars=(1,))
def div_true(xp, self, other):
    return xp.true_divide(self, other)


def _int_zero_check(xp, other):
    if bool((other == 0).any()):
        raise RuntimeError("ZeroDivisionError")


def div_mode_check(dtype, rounding_mode):
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if rounding_mode is not None and (dtype.is_complex or dtype is _dt.bool):
        raise _not_implemented(f"div_{rounding_mode}_cpu", dtype)


def div_mode_promote(ops, common, rounding_mode):
    """True division (no rounding mode) makes integers the default float; trunc/floor keep the dtype."""
    if rounding_mode is None and common.category < 2:
        return _dt.get_default_dtype()
    return common


# kind binary_float: the generated fast path then only takes floating inputs, whose dtype every mode keeps.
# opmath is done here: float16/bfloat16 round the quotient to their own precision before truncating, and run
# div_floor's fmod steps in their own arithmetic (each step rounded, as PyTorch's reduced-float kernel does); a
# divisor that is one element (PyTorch's CPU scalar: its value unrounded, opmath_scalars) gives trunc/floor of
# the float32 quotient.
@formula("binary_float", 2, check=div_mode_check, promote=div_mode_promote, errstate=True, torch_name="div",
         opmath=False, opmath_scalars=(1,))
def div_mode(xp, self, other, rounding_mode):
    dt = self.dtype
    if dt.kind in "iu":
        _int_zero_check(xp, other)
        q = xp.floor_divide(self, other)
        if rounding_mode == "floor":
            return q
        # floor -> trunc: one up where the division was inexact and the signs differ
        fix = (xp.remainder(self, other) != 0) & ((self < 0) != (other < 0))
        return q + fix.astype(q.dtype)
    reduced = dt.itemsize == 2 and dt.kind != "c"
    if reduced:
        reduced = not (other.size == 1 or not any(other.strides))     # a scalar divisor: all in float32
        if reduced and rounding_mode == "floor":
            return _floor_div_float(xp, self, other)
        self, other = self.astype(xp.float32), other.astype(xp.float32)
    if rounding_mode is None:
        r = xp.true_divide(self, other)
    elif rounding_mode == "trunc":
        r = xp.true_divide(self, other)
        if reduced:
            r = r.astype(dt)
        r = xp.trunc(r)
    else:
        r = _floor_div_float(xp, self, other)
    return r.astype(dt) if r.dtype != dt else r


def _floor_div_float(xp, a, b):
    """PyTorch's div_floor for floats: floor of the exact quotient, via fmod."""
    mod = xp.fmod(a, b)
    div = xp.true_divide(a - mod, b)
    adjust = (mod != 0) & ((b < 0) != (mod < 0))
    div = xp.where(adjust, div - 1, div)
    floordiv = xp.floor(div)
    floordiv = xp.where(div - floordiv > 0.5, floordiv + 1, floordiv)
    plain = xp.true_divide(a, b)
    return xp.where(b == 0, plain, xp.where(div == 0, xp.copysign(xp.zeros_like(div), plain), floordiv))


def same_dtype_out_check(ops, result_dtype, out_dtype, inplace):
    """neg, abs and conj_physical build TensorIterator's plain unary op, which wants ``out=`` of exactly the input's dtype
    (no casting, unlike the float ops: ``sin(int_tensor, out=double)`` is fine, ``neg`` is not).  A complex
    input to abs is the exception: its real result is copied, so any out dtype takes it."""
    if out_dtype is result_dtype or (ops[0].dtype.is_complex and result_dtype is not ops[0].dtype):
        return
    raise RuntimeError(f"Found dtype {out_dtype.scalar_type_name} but expected {result_dtype.scalar_type_name}")


@formula("unary", 1, check=neg_check, skip_check=_not_bool, plain="negative", out_check=same_dtype_out_check)
def neg(xp, self):
    return xp.negative(self)


# Layouts of the kernels PyTorch writes as composites over empty_like (see UfuncFormula.layout).
def _geometry(impl):
    return tuple(impl._array.shape), impl.strides


def _like_self_layout(impls, out):
    """A functional result made by empty_like(self) (its layout kept exactly when dense, which an empty
    tensor always is); ``out=`` is TensorIterator's."""
    return _g.preserve_strides(*_geometry(impls[0])) if out is None else None


def _abs_layout(impls, out):
    """Complex abs: the functional result is empty_like(self) in the real dtype; into a real ``out=`` the
    complex result is computed apart and copied into ``out`` resized row-major."""
    a = impls[0]
    if not a.dtype.is_complex:
        return None
    shape, strides = _geometry(a)
    if out is None:
        return _g.preserve_strides(shape, strides)
    return None if out.dtype.is_complex else _g.contiguous_strides(shape)


def _times_constant_layout(impls, out):
    """deg2rad/rad2deg: empty_like(self), and ``out=`` a multiplication by a wrapped number (which keeps
    TensorIterator off its same-shape fast path)."""
    shape, strides = _geometry(impls[0])
    if out is None:
        return _g.preserve_strides(shape, strides)
    return tuple(_g.output_strides_like(shape, [(shape, strides), ((), ())]))


@formula("unary", 1, out_check=same_dtype_out_check, layout=_like_self_layout)  # out=: TensorIterator's unary op
def conj_physical(xp, self):
    return xp.conjugate(self) if self.dtype.kind == "c" else self    # NumPy's conjugate turns bool into int8


def abs_check(dtype):
    if dtype is _dt.bool:
        raise _not_implemented("abs_cpu", dtype)


@formula("abs", 1, check=abs_check, skip_check=_not_bool, plain="abs", out_check=same_dtype_out_check,
         layout=_abs_layout)
def abs(xp, self):  # noqa: A001 - the operator's name
    return xp.abs(self)


@formula("unary_float", 1, errstate=True, plain="exp")
def exp(xp, self):
    return xp.exp(self)


@formula("unary_float", 1, errstate=True, plain="log")
def log(xp, self):
    return xp.log(self)


@formula("unary_float", 1, errstate=True, plain="sqrt")
def sqrt(xp, self):
    return xp.sqrt(self)


@formula("unary_float", 1, errstate=True)
def rsqrt(xp, self):
    return xp.reciprocal(xp.sqrt(self))


@formula("unary_float", 1, plain="sin")
def sin(xp, self):
    return xp.sin(self)


@formula("unary_float", 1, plain="cos")
def cos(xp, self):
    return xp.cos(self)


@formula("unary_float", 1, plain="tanh")
def tanh(xp, self):
    return xp.tanh(self)


@formula("unary_float", 1, errstate=True)
def sigmoid(xp, self):
    if self.dtype.kind == "c":
        return 1 / (1 + xp.exp(-self))
    # stable in both tails, as PyTorch's vectorised kernel
    e = xp.exp(-xp.abs(self))
    return xp.where(self >= 0, 1 / (1 + e), e / (1 + e))


def relu_check(dtype):
    if dtype is _dt.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")


@formula("unary", 1, check=relu_check, torch_name="clamp_min")
def relu(xp, self):
    return xp.maximum(self, xp.zeros((), self.dtype))


def pow_operand_check(ops, compute):
    """Checks of pow's meta function that depend on which operand is a Python number."""
    base, exp = ops
    if exp.is_wrapped_number and base.dtype.category <= 1 and exp.dtype.category <= 1:
        v = _wrapped_value(exp)
        if v is not None and v < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    # a bool result only comes from a bool base and a Python bool exponent (x ** True is x,
    # x ** False is all True); with a tensor exponent there is no bool kernel
    if compute is _dt.bool and not exp.is_wrapped_number:
        raise _not_implemented("pow", compute)


def _int_pow(xp, base, exp):
    """Integer powers; a negative exponent gives 1 for base 1, +-1 for base -1, else 0 (as c10's powi)."""
    neg = exp < 0
    if not bool(neg.any()):
        return xp.power(base, exp)
    r = xp.power(base, xp.where(neg, xp.zeros((), exp.dtype), exp))
    sign = xp.where(exp % 2 == 0, xp.ones((), r.dtype), -xp.ones((), r.dtype))
    special = xp.where(base == 1, xp.ones((), r.dtype), xp.where(base == -1, sign, xp.zeros((), r.dtype)))
    return xp.where(neg, special, r).astype(r.dtype)


def _scalar_base(ops) -> bool:
    """pow.Scalar (a Python number raised to a tensor) gives a contiguous result."""
    return ops[0].is_wrapped_number


@formula("binary", 2, errstate=True, operand_check=pow_operand_check, extra_dtypes=(_dt.bool,),
         plain_layout=_scalar_base)
def pow(xp, self, exponent):  # noqa: A001 - the operator's name
    if self.dtype.kind == "b":
        return xp.logical_or(self, xp.logical_not(exponent))
    if self.dtype.kind == "i":
        return _int_pow(xp, self, exponent)
    r = xp.power(self, exponent)
    if self.dtype.kind == "c":
        zero = self == 0
        if zero.any():
            # PyTorch's complex power is exp(y log x), also at x = 0 where NumPy has its own rules: 0 ** 0 is
            # NaN there, 0 ** y with Re(y) < 0 is inf+nanj
            at_zero = xp.exp(exponent * xp.log(xp.zeros((), self.dtype)))
            r = xp.where(zero, at_zero, r).astype(self.dtype, copy=False)
    return r


def _unary_layout(impls, out):
    """TensorIterator's layout of a unary op: pow.Tensor_Scalar's exponent is no operand of its iterator."""
    shape, strides = _geometry(impls[0])
    return tuple(_g.output_strides_like(shape, [(shape, strides)]))


@formula("binary", 2, errstate=True, operand_check=pow_operand_check, extra_dtypes=(_dt.bool,), torch_name="pow",
         layout=_unary_layout)
def pow_tensor_scalar(xp, self, exponent):
    """pow.Tensor_Scalar: PyTorch's kernel fills ones for a Python-number exponent 0 (0 ** 0 of complex
    included) and copies self for exponent 1, before any arithmetic."""
    if self.dtype.kind in "fc" and exponent.ndim == 0:
        if exponent == 0:
            return xp.ones(self.shape, self.dtype)
        if exponent == 1:
            return xp.asarray(self).copy()
    return pow(xp, self, exponent)


@formula("comparison", 2, torch_name="eq", plain="equal")
def eq(xp, self, other):
    return xp.equal(self, other)


@formula("comparison", 2, torch_name="ne", plain="not_equal")
def ne(xp, self, other):
    return xp.not_equal(self, other)


def _order_check(name):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise _not_implemented(f"{name}_cpu", dtype)
    return check


@formula("comparison", 2, check=_order_check("lt"), torch_name="lt", plain="less", skip_check=_real)
def lt(xp, self, other):
    return xp.less(self, other)


@formula("comparison", 2, check=_order_check("le"), torch_name="le", plain="less_equal", skip_check=_real)
def le(xp, self, other):
    return xp.less_equal(self, other)


@formula("comparison", 2, check=_order_check("gt"), torch_name="gt", plain="greater", skip_check=_real)
def gt(xp, self, other):
    return xp.greater(self, other)


@formula("comparison", 2, check=_order_check("ge"), torch_name="ge", plain="greater_equal", skip_check=_real)
def ge(xp, self, other):
    return xp.greater_equal(self, other)


@formula("binary", 2, check=no_complex("maximum"), plain="maximum", skip_check=_real)
def maximum(xp, self, other):
    return xp.maximum(self, other)


@formula("binary", 2, check=no_complex("minimum"), plain="minimum", skip_check=_real)
def minimum(xp, self, other):
    return xp.minimum(self, other)


def clamp_promote(ops, common):
    """clamp's dtype rule: Python-number bounds promote only a non-floating self; tensor bounds always."""
    self, lo, hi = ops
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    bounds = [b for b in (lo, hi) if b is not None]
    if all(b.is_wrapped_number for b in bounds):
        values = [_wrapped_value(b) for b in bounds]
        if self.dtype.is_floating_point:
            # bounds are read as double: only an imaginary part is refused
            if any(isinstance(v, complex) and v.imag != 0 for v in values):
                raise RuntimeError("value cannot be converted to type double without overflow")
            return self.dtype
        if common.is_complex:
            raise NotImplementedError("clamp is not supported for complex types")
        if common is _dt.bool:
            which = "clamp" if len(bounds) == 2 else ("clamp_min" if lo is not None else "clamp_max")
            raise _not_implemented(f"{which}_scalar_cpu", common)
        if common.category == 1:
            for v in values:
                if v is not None:
                    checked_scalar(v, common)      # the bounds must fit the integer type
        return common
    if len(bounds) == 2:
        if common is _dt.bool or common.is_complex:
            raise _not_implemented("clamp_cpu", common)
    elif common.is_complex:
        raise _not_implemented("maximum_cpu" if lo is not None else "minimum_cpu", common)
    return common


def clamp_out_check(ops, result, out, inplace):
    """clamp with Python-number bounds is a unary op on self cast to the result type: no casting
    of the output at all (tensor bounds follow TensorIterator's usual rule)."""
    if not all(b is None or b.is_wrapped_number for b in ops[1:]) or result is out:
        return
    if inplace:
        raise RuntimeError(f"result type {result.scalar_type_name} can't be cast to the desired output type "
                           f"{out.typemeta_name}")
    raise RuntimeError(f"Found dtype {out.scalar_type_name} but expected {result.scalar_type_name}")


@formula("binary", 3, promote=clamp_promote, out_check=clamp_out_check, torch_name="clamp",
         float_keeps_python_scalars=True)
def clamp(xp, self, lo, hi):
    """Either bound may be absent (None); NaN in self or a bound propagates."""
    if lo is None:
        return xp.minimum(self, hi)
    if hi is None:
        return xp.maximum(self, lo)
    return xp.minimum(xp.maximum(self, lo), hi)


# ---------------------------------------------------------------- pointwise (issue 8, item 2)
# Trigonometric, hyperbolic, exponential and logarithmic functions: integers and bool compute in the default
# float dtype (kind unary_float); float16/bfloat16 compute in float32 and round once (opmath).
@formula("unary_float", 1, errstate=True, plain="arccos")
def acos(xp, self):
    return xp.arccos(self)


@formula("unary_float", 1, errstate=True, plain="arccosh")
def acosh(xp, self):
    return xp.arccosh(self)


@formula("unary_float", 1, errstate=True, plain="arcsin")
def asin(xp, self):
    return xp.arcsin(self)


@formula("unary_float", 1, errstate=True, plain="arcsinh")
def asinh(xp, self):
    return xp.arcsinh(self)


@formula("unary_float", 1, errstate=True, plain="arctan")
def atan(xp, self):
    return xp.arctan(self)


@formula("unary_float", 1, errstate=True, plain="arctanh")
def atanh(xp, self):
    return xp.arctanh(self)


@formula("unary_float", 1, errstate=True, plain="cosh")
def cosh(xp, self):
    return xp.cosh(self)


@formula("unary_float", 1, errstate=True, plain="sinh")
def sinh(xp, self):
    return xp.sinh(self)


@formula("unary_float", 1, errstate=True, plain="tan")
def tan(xp, self):
    return xp.tan(self)


@formula("unary_float", 1, errstate=True)
def exp2(xp, self):
    if self.dtype.kind == "c":      # NumPy's complex exp2 loses the imaginary part's accuracy less than this
        w = xp.empty_like(self)     # each part times log 2 (a complex product would make inf * 0 = NaN)
        w.real, w.imag = self.real * 0.6931471805599453, self.imag * 0.6931471805599453
        return xp.exp(w)
    return xp.exp2(self)


@formula("unary_float", 1, errstate=True, plain="expm1")
def expm1(xp, self):
    return xp.expm1(self)


@formula("unary_float", 1, errstate=True, plain="log10")
def log10(xp, self):
    return xp.log10(self)


@formula("unary_float", 1, errstate=True, plain="log1p")
def log1p(xp, self):
    return xp.log1p(self)


@formula("unary_float", 1, errstate=True, skip_check=_real, plain="log2")
def log2(xp, self):
    if self.dtype.kind == "c":      # PyTorch's complex log2 is log(z) / log(2), each part divided
        z = xp.log(self)
        ln2 = z.real.dtype.type(math.log(2))
        r = xp.empty_like(z)
        r.real, r.imag = z.real / ln2, z.imag / ln2
        return r
    return xp.log2(self)


@formula("unary_float", 1, errstate=True)
def reciprocal(xp, self):
    return xp.true_divide(1, self) if self.dtype.kind == "c" else xp.reciprocal(self)


@formula("unary_float", 1, errstate=True)
def sinc(xp, self):
    """sin(pi x) / (pi x), 1 at 0 (NumPy's sinc is the normalised one, as PyTorch's)."""
    return xp.sinc(self)


def _not_complex_runtime(name):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
    return check


@formula("unary_float", 1, check=_not_complex_runtime("deg2rad"), skip_check=_real, layout=_times_constant_layout)
def deg2rad(xp, self):
    return xp.multiply(self, xp.asarray(0.017453292519943295, dtype=self.dtype))


@formula("unary_float", 1, check=_not_complex_runtime("rad2deg"), skip_check=_real, layout=_times_constant_layout)
def rad2deg(xp, self):
    return xp.multiply(self, xp.asarray(57.29577951308232, dtype=self.dtype))


# Rounding: integers are their own result; bool and (for most) complex are refused.
def _rounding_check(name):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise NotImplementedError(f"{name} is not supported for complex inputs")
    return check


@formula("unary", 1, check=_rounding_check("ceil"), skip_check=_real, torch_name="ceil_vml", out_check=same_dtype_out_check)
def ceil(xp, self):
    return xp.ceil(self) if self.dtype.kind == "f" else self.copy()


@formula("unary", 1, check=_rounding_check("floor"), skip_check=_real, torch_name="floor_vml", out_check=same_dtype_out_check)
def floor(xp, self):
    return xp.floor(self) if self.dtype.kind == "f" else self.copy()


@formula("unary", 1, check=_rounding_check("trunc"), skip_check=_real, torch_name="trunc_vml", out_check=same_dtype_out_check)
def trunc(xp, self):
    return xp.trunc(self) if self.dtype.kind == "f" else self.copy()


@formula("unary", 1, torch_name="round_vml", out_check=same_dtype_out_check)
def round(xp, self):
    """Half to even (nearbyint), as NumPy's rint."""
    return xp.rint(self) if self.dtype.kind == "f" else self.copy()


@formula("unary", 1, torch_name="round", out_check=same_dtype_out_check)
def round_decimals(xp, self, decimals):
    """x scaled by 10**decimals (held in x's dtype: inf past its range, making NaN as in PyTorch), rounded half
    to even and scaled back."""
    try:
        power = 10.0 ** (-decimals if decimals < 0 else decimals)     # (``abs`` here is the formula)
    except OverflowError:
        power = float("inf")
    with xp.errstate(over="ignore", invalid="ignore"):
        scale = xp.asarray(power).astype(self.dtype)
        if decimals >= 0:
            return xp.true_divide(xp.rint(xp.multiply(self, scale)), scale)
        return xp.multiply(xp.rint(xp.true_divide(self, scale)), scale)


@formula("unary", 1, torch_name="frac", out_check=same_dtype_out_check)
def frac(xp, self):
    return xp.subtract(self, xp.trunc(self))


def sign_check(dtype):
    if dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")


def _sign_real(xp, self):
    if self.dtype.kind == "b":
        return self.copy()
    one = xp.ones((), self.dtype)
    zero = xp.zeros((), self.dtype)
    if self.dtype.kind == "u":
        return xp.where(self > 0, one, zero)
    return xp.where(self > 0, one, xp.where(self < 0, -one, zero))      # NaN gives 0, as PyTorch's


@formula("unary", 1, check=sign_check, skip_check=_real, out_check=same_dtype_out_check)
def sign(xp, self):
    return _sign_real(xp, self)


@formula("unary", 1, errstate=True, out_check=same_dtype_out_check)
def sgn(xp, self):
    """z / |z| (0 at 0) for complex; sign for the rest."""
    if self.dtype.kind != "c":
        return _sign_real(xp, self)
    a = xp.abs(self)
    zero = a == 0
    return xp.where(zero, xp.zeros((), self.dtype), self / xp.where(zero, 1, a).astype(self.dtype))


def _complex_not_implemented_check(message):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise NotImplementedError(message)
    return check


def _bool_out_check(name):
    """signbit, isposinf and isneginf want a bool ``out=``."""
    def check(ops, result, out, inplace):
        if out is not _dt.bool:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")
    return check


@formula("comparison", 1, check=_complex_not_implemented_check("signbit is not implemented for complex tensors."),
         skip_check=_real, out_check=_bool_out_check("signbit"))
def signbit(xp, self):
    if self.dtype.kind == "f":
        return xp.signbit(self)
    if self.dtype.kind in "ub":
        return xp.zeros(self.shape, bool)
    return self < 0


def _complex_runtime_check(message):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise RuntimeError(message)
    return check


@formula("comparison", 1, check=_complex_runtime_check("isposinf does not support complex inputs."),
         skip_check=_real, out_check=_bool_out_check("isposinf"))
def isposinf(xp, self):
    if self.dtype.kind != "f":
        return xp.zeros(self.shape, bool)
    return self == xp.inf


@formula("comparison", 1, check=_complex_runtime_check("isneginf does not support complex inputs."),
         skip_check=_real, out_check=_bool_out_check("isneginf"))
def isneginf(xp, self):
    if self.dtype.kind != "f":
        return xp.zeros(self.shape, bool)
    return self == -xp.inf


def _float_limits(dtype_name):
    """(largest, smallest) finite value of a floating NumPy dtype (bfloat16's by name: ml_dtypes' finfo)."""
    big = {"float16": 65504.0, "bfloat16": 3.3895313892515355e+38, "float32": 3.4028234663852886e+38,
           "float64": 1.7976931348623157e+308}[dtype_name]
    return big, -big


def nan_to_num_out_check(ops, result, out, inplace):
    if out is not ops[0].dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {out.scalar_type_name} should be same as input: "
                           f"{ops[0].dtype.scalar_type_name}")


def _nan_to_num_layout(impls, out):
    """An integral (or bool) self is copied into ``out`` resized as at::native::resize_output does, row-major."""
    a = impls[0]
    if out is not None and a.dtype.category < 2:
        return _g.contiguous_strides(tuple(a._array.shape))
    return None


@formula("unary", 1, opmath=False, torch_name="nan_to_num", out_check=nan_to_num_out_check, layout=_nan_to_num_layout)
def nan_to_num(xp, self, nan, posinf, neginf):
    """NaN, +inf and -inf replaced (each part of a complex number); the defaults are the dtype's extremes."""
    kind = self.dtype.kind
    if kind in "iub":
        return self.copy()
    if kind == "c":
        real = nan_to_num(xp, xp.real(self), nan, posinf, neginf)
        imag = nan_to_num(xp, xp.imag(self), nan, posinf, neginf)
        return (real + 1j * imag).astype(self.dtype)
    big, small = _float_limits(self.dtype.name)
    dt = self.dtype
    r = xp.where(xp.isnan(self), xp.asarray(0.0 if nan is None else nan).astype(dt), self)
    r = xp.where(r == xp.inf, xp.asarray(big if posinf is None else posinf).astype(dt), r)
    return xp.where(r == -xp.inf, xp.asarray(small if neginf is None else neginf).astype(dt), r)


# Bitwise operators: integers and bool only (a floating operand is refused by name, as PyTorch's dispatch).
@formula("unary", 1, plain="invert", torch_name="bitwise_not", out_check=same_dtype_out_check)
def bitwise_not(xp, self):
    return xp.invert(self)


@formula("binary", 2, plain="bitwise_and", torch_name="bitwise_and")
def bitwise_and(xp, self, other):
    return xp.bitwise_and(self, other)


@formula("binary", 2, plain="bitwise_or", torch_name="bitwise_or")
def bitwise_or(xp, self, other):
    return xp.bitwise_or(self, other)


@formula("binary", 2, plain="bitwise_xor", torch_name="bitwise_xor")
def bitwise_xor(xp, self, other):
    return xp.bitwise_xor(self, other)


def _bits(dt) -> int:
    return dt.itemsize * 8


@formula("binary", 2, torch_name="lshift")
def bitwise_left_shift(xp, self, other):
    """A shift by a negative amount or by the width or more gives 0 (integers wrap otherwise)."""
    n = _bits(self.dtype)
    bad = (other < 0) | (other >= n)
    safe = xp.where(bad, xp.zeros((), other.dtype), other)
    r = xp.left_shift(self, safe.astype(self.dtype))
    return xp.where(bad, xp.zeros((), self.dtype), r)


@formula("binary", 2, torch_name="rshift")
def bitwise_right_shift(xp, self, other):
    """A shift by a negative amount or by the width or more fills with the sign bit."""
    n = _bits(self.dtype)
    bad = (other < 0) | (other >= n)
    fill = n - 1 if self.dtype.kind == "i" else 0
    safe = xp.where(bad, xp.asarray(fill, other.dtype), other)
    r = xp.right_shift(self, safe.astype(self.dtype))
    if self.dtype.kind == "u":
        r = xp.where(bad, xp.zeros((), self.dtype), r)
    return r


# Logical operators: any dtype, a bool result (which ``out=`` casts to its own dtype).
@formula("comparison", 1, plain="logical_not", torch_name="logical_not")
def logical_not(xp, self):
    return xp.logical_not(self)


@formula("comparison", 2, plain="logical_and", torch_name="logical_and")
def logical_and(xp, self, other):
    return xp.logical_and(self, other)


@formula("comparison", 2, plain="logical_or", torch_name="logical_or")
def logical_or(xp, self, other):
    return xp.logical_or(self, other)


@formula("comparison", 2, plain="logical_xor", torch_name="logical_xor")
def logical_xor(xp, self, other):
    return xp.logical_xor(self, other)


# Binary floating functions.
@formula("binary_float", 2, errstate=True, plain="arctan2", torch_name="atan2")
def atan2(xp, self, other):
    return xp.arctan2(self, other)


@formula("binary_float", 2, plain="copysign", torch_name="copysign")
def copysign(xp, self, other):
    return xp.copysign(self, other)


@formula("binary", 2, errstate=True, plain="hypot", torch_name="hypot")
def hypot(xp, self, other):
    return xp.hypot(self, other)


@formula("binary", 2, errstate=True, torch_name="logaddexp")
def logaddexp(xp, self, other):
    if self.dtype.kind != "c":
        return xp.logaddexp(self, other)
    # complex, as PyTorch: the operand with the larger real part (``other`` on a tie) factored out; a NaN
    # part anywhere gives NaN; equal infinite real parts give the lower operand (-inf) or log(e^a + e^b) (+inf)
    a_big = xp.real(self) >= xp.real(other)
    m = xp.where(a_big, self, other)
    n = xp.where(a_big, other, self)
    r = xp.log1p(xp.exp(n - m)) + m
    inf_tie = xp.isinf(n.real) & (n.real == m.real)
    if inf_tie.any():
        r = xp.where(inf_tie & (n.real < 0), n, r)
        r = xp.where(inf_tie & (n.real > 0), xp.log(xp.exp(n) + xp.exp(m)), r)
    nan = xp.isnan(self) | xp.isnan(other)
    return xp.where(nan, xp.asarray(complex("nan+nanj"), dtype=r.dtype), r)


@formula("binary", 2, errstate=True, plain="logaddexp2", torch_name="logaddexp2")
def logaddexp2(xp, self, other):
    return xp.logaddexp2(self, other)


def _bf16_nextafter(xp, a, b):
    """nextafter on bfloat16 by stepping the 16-bit pattern (NumPy has no bfloat16 nextafter)."""
    bits = a.view(xp.uint16).astype(xp.int32)
    af, bf = a.astype(xp.float32), b.astype(xp.float32)
    up = (bf > af) == (af >= 0)       # away from zero when moving in the sign's direction
    step = xp.where(up, bits + 1, bits - 1)
    zero_step = xp.where(bf > 0, 1, 0x8001)     # the smallest subnormal with b's sign
    r = xp.where(af == 0, zero_step, step).astype(xp.uint16).view(a.dtype)
    r = xp.where(af == bf, b, r)
    return xp.where(xp.isnan(af) | xp.isnan(bf), xp.asarray(float("nan")).astype(a.dtype), r)


@formula("binary", 2, opmath=False, torch_name="nextafter")
def nextafter(xp, self, other):
    if self.dtype.name == "bfloat16":
        return _bf16_nextafter(xp, self, other)
    return xp.nextafter(self, other)


# opmath is done here: PyTorch's float16/bfloat16 kernel rounds log(y) to the dtype before multiplying.
@formula("binary_float", 2, errstate=True, torch_name="xlogy", opmath=False)
def xlogy(xp, self, other):
    """x * log(y), 0 where x is 0 (unless y is NaN)."""
    dt = self.dtype
    if dt.itemsize == 2:        # float16/bfloat16 (binary_float: no integers here)
        self, other = self.astype(xp.float32), other.astype(xp.float32)
        r = xp.multiply(self, xp.log(other).astype(dt).astype(xp.float32))
        return xp.where((self == 0) & ~xp.isnan(other), xp.zeros((), r.dtype), r).astype(dt)
    r = xp.multiply(self, xp.log(other))
    return xp.where((self == 0) & ~xp.isnan(other), xp.zeros((), r.dtype), r)


# Binary functions that keep integers.
@formula("binary", 2, check=no_complex("fmax"), skip_check=_real, plain="fmax")
def fmax(xp, self, other):
    return xp.fmax(self, other)


@formula("binary", 2, check=no_complex("fmin"), skip_check=_real, plain="fmin")
def fmin(xp, self, other):
    return xp.fmin(self, other)


@formula("binary", 2, errstate=True, torch_name="fmod")
def fmod(xp, self, other):
    if self.dtype.kind in "iu":
        _int_zero_check(xp, other)
    return xp.fmod(self, other)


@formula("binary", 2, errstate=True, torch_name="remainder")
def remainder(xp, self, other):
    """Python's modulo: the result takes the divisor's sign."""
    if self.dtype.kind in "iu":
        _int_zero_check(xp, other)
        return xp.remainder(self, other)
    mod = xp.fmod(self, other)
    fix = (mod != 0) & ((other < 0) != (mod < 0))
    return xp.where(fix, mod + other, mod)


@formula("binary", 2, torch_name="gcd")   # no NumPy plain path: np.gcd takes abs() of the minimum
def gcd(xp, self, other):
    r = xp.gcd(self, other)
    if r.dtype.kind == "i" and r.size:
        # PyTorch's calc_gcd takes abs() into the operands' own type, where the minimum stays negative, then runs
        # Euclid with C's truncating %: gcd(-128, 127) is -1 for int8.  Only operands holding the minimum differ.
        lo = np.iinfo(r.dtype).min
        hit = (self == lo) | (other == lo)
        if hit.any():
            a, b = xp.broadcast_arrays(xp.abs(self).astype(r.dtype), xp.abs(other).astype(r.dtype))
            a, b = a.copy(), b.copy()
            with np.errstate(all="ignore"):
                while True:
                    nz = a != 0
                    if not nz.any():
                        break
                    a, b = xp.where(nz, xp.fmod(b, xp.where(nz, a, 1)), 0).astype(r.dtype), xp.where(nz, a, b)
            r = xp.where(hit, b, r)
    return r


@formula("binary", 2, torch_name="lcm")
def lcm(xp, self, other):
    dt = self.dtype
    if dt.itemsize < 4:         # C++ promotes narrower integers to int: |a / g * b| is taken there, then narrowed
        self, other = self.astype(xp.int32), other.astype(xp.int32)
    g = xp.gcd(self, other)
    safe = xp.where(g == 0, xp.ones((), g.dtype), g)
    r = xp.where(g == 0, xp.zeros((), g.dtype), xp.abs(xp.floor_divide(self, safe) * other))
    return r.astype(dt, copy=False)


def heaviside_operand_check(ops, compute):
    if ops[0].dtype is not ops[1].dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if compute.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")


def heaviside_out_check(ops, result, out, inplace):
    if out.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    _it.check_out_dtype(result, out)


@formula("binary", 2, operand_check=heaviside_operand_check, torch_name="heaviside", out_check=heaviside_out_check)
def heaviside(xp, self, values):
    """``values`` where self is 0, else 1 for a positive self and 0 for the rest (NaN included)."""
    pos = (self > 0).astype(self.dtype)
    return xp.where(self == 0, values, pos)


# Clamping by one bound (clamp's rules for the bound's dtype).
def _clamp_one_promote(which):
    def promote(ops, common):
        bound = ops[1]
        if bound.is_wrapped_number and isinstance(_wrapped_value(bound), complex):
            raise NotImplementedError("clamp is not supported for complex types")
        if not bound.is_wrapped_number and common.is_complex:
            raise _not_implemented("maximum_cpu" if which == "min" else "minimum_cpu", common)
        if which == "min":
            return clamp_promote([ops[0], bound, None], common)
        return clamp_promote([ops[0], None, bound], common)
    return promote


def _clamp_one_out_check(ops, result, out, inplace):
    clamp_out_check([ops[0], ops[1], None], result, out, inplace)


@formula("binary", 2, promote=_clamp_one_promote("min"), out_check=_clamp_one_out_check, torch_name="clamp_min",
         float_keeps_python_scalars=True)
def clamp_min(xp, self, lo):
    return xp.maximum(self, lo)


@formula("binary", 2, promote=_clamp_one_promote("max"), out_check=_clamp_one_out_check, torch_name="clamp_max",
         float_keeps_python_scalars=True)
def clamp_max(xp, self, hi):
    return xp.minimum(self, hi)


def _opmath(dtype):
    return _dt.float32 if dtype in (_dt.float16, _dt.bfloat16) else dtype


def _lerp_promote(which):
    """lerp computes in self's dtype; ``end`` (and a tensor weight) must have it; a Python weight must fit it."""
    def promote(ops, common):
        self, end, weight = ops
        if self.dtype.category < 2:
            raise _not_implemented(f"lerp_kernel_{which}", self.dtype)
        if end.dtype is not self.dtype:
            raise RuntimeError(f"expected dtype {self.dtype.typemeta_name} for `end` but got dtype "
                               f"{end.dtype.typemeta_name}")
        if weight.is_wrapped_number and which == "scalar":
            v = _wrapped_value(weight)
            if v is not None and self.dtype.category >= 2:
                checked_scalar(v, _opmath(self.dtype))
        elif weight.dtype is not self.dtype:
            raise RuntimeError(f"expected dtype {self.dtype.typemeta_name} for `weight` but got dtype "
                               f"{weight.dtype.typemeta_name}")
        return self.dtype
    return promote


def _lerp(xp, self, end, weight):
    """PyTorch's two-sided form: exact at both ends of the weight's range."""
    small = xp.abs(weight) < 0.5
    diff = end - self
    return xp.where(small, self + weight * diff, end - diff * (1 - weight))


@formula("binary", 3, promote=_lerp_promote("scalar"), torch_name="lerp_kernel_scalar",
         out_check=same_dtype_out_check, opmath_scalars=(2,))
def lerp_scalar(xp, self, end, weight):
    return _lerp(xp, self, end, weight)


@formula("binary", 3, promote=_lerp_promote("tensor"), torch_name="lerp_kernel_tensor",
         out_check=same_dtype_out_check)
def lerp_tensor(xp, self, end, weight):
    return _lerp(xp, self, end, weight)


def _value_check(kernel):
    def check(dtype, value):
        if dtype is _dt.bool:
            raise _not_implemented(kernel, dtype)
        if isinstance(value, complex) and not dtype.is_complex:
            checked_scalar(value, _opmath(dtype))
    return check


@formula("binary", 3, check=_value_check("addcmul_cpu_out"))
def addcmul(xp, self, tensor1, tensor2, value):
    if self.dtype.kind in "iu":
        value = _as_elem(xp, int(value.real) if isinstance(value, complex) else int(value), self)
    return self + value * (tensor1 * tensor2)


def addcdiv_operand_check(ops, compute, value):
    if ops[1].dtype.category < 2 and ops[2].dtype.category < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


@formula("binary", 3, check=_value_check("addcdiv_cpu_out"), operand_check=addcdiv_operand_check, errstate=True)
def addcdiv(xp, self, tensor1, tensor2, value):
    return self + value * (tensor1 / tensor2)


@formula("unary_float", 1, errstate=True, opmath=False, torch_name="logit")
def logit(xp, self, eps):
    """log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps is given (the bounds rounded to
    self's dtype, as PyTorch's kernel holds them; float16/bfloat16 then compute in float32)."""
    dt = self.dtype
    reduced = dt.itemsize == 2
    x = self.astype(xp.float32) if reduced else self
    if eps is not None:
        lo = xp.asarray(eps).astype(dt).astype(x.dtype)
        hi = xp.asarray(1 - eps).astype(dt).astype(x.dtype)
        x = xp.where(x < lo, lo, xp.where(x > hi, hi, x))
    if not reduced:
        return xp.log(x / (1 - x))
    # PyTorch's reduced-float kernel rounds 1 - x and the ratio to self's dtype before the float log
    one_minus = (1 - x).astype(dt).astype(xp.float32)
    ratio = (x / one_minus).astype(dt).astype(xp.float32)
    return xp.log(ratio).astype(dt)


def floor_divide_check(dtype):
    if dtype.is_complex or dtype is _dt.bool:
        raise _not_implemented("div_floor_cpu", dtype)


@formula("binary", 2, check=floor_divide_check, errstate=True, opmath=False, torch_name="div_floor",
         opmath_scalars=(1,))
def floor_divide(xp, self, other):
    """div(rounding_mode='floor'): integers by zero raise, floats floor the exact quotient."""
    return div_mode(xp, self, other, "floor")


@formula("binary", 2, torch_name="threshold", device_order=(1, 0))
def threshold_backward(xp, grad_output, self, threshold):
    """relu's (and threshold's) gradient: ``grad_output`` where ``self`` is above ``threshold``, else 0 (a NaN in
    ``self`` passes the gradient, as PyTorch's ``x <= threshold ? 0 : grad``)."""
    return xp.where(self <= threshold, xp.zeros((), grad_output.dtype), grad_output)


# ---- gradops: the backward operators of tanh and sigmoid (their derivatives take the saved result)
# Rounded as PyTorch's CPU kernels round: ``1 - y*y`` is one fused multiply-add there (rounded once), and float16's
# sigmoid_backward multiplies in Half arithmetic, each product rounded to float16; bfloat16 computes in float32.
def _one_minus_square(xp, y):
    """``1 - y*y`` rounded once, as a fused multiply-add gives it."""
    if y.dtype == xp.float64:
        p = y * y
        hi = y * 134217729.0                    # Veltkamp split: y*y = p + err exactly (Dekker's product)
        y1 = hi - (hi - y)
        y2 = y - y1
        err = ((y1 * y1 - p) + 2 * y1 * y2) + y2 * y2
        s = 1.0 - p                             # Knuth's two-sum: 1 - p = s + t exactly
        v = s - 1.0
        t = (1.0 - (s - v)) + (-p - v)
        return s + (t - err)
    return (1.0 - xp.square(y.astype(xp.float64))).astype(y.dtype)


@formula("binary", 2, torch_name="tanh_backward", opmath=False)
def tanh_backward(xp, grad_output, output):
    """``grad_output * conj(1 - output**2)``: tanh's gradient from its own result."""
    if output.dtype.kind == "c":
        return grad_output * xp.conjugate(1 - output * output)
    if output.dtype.itemsize == 2:              # float16 / bfloat16: in float32, rounded once
        g, y = grad_output.astype(xp.float32), output.astype(xp.float32)
        return (g * _one_minus_square(xp, y)).astype(output.dtype)
    return grad_output * _one_minus_square(xp, output)


@formula("binary", 2, torch_name="sigmoid_backward", opmath=False)
def sigmoid_backward(xp, grad_output, output):
    """``grad_output * conj((1 - output) * output)``: sigmoid's gradient from its own result (real inputs multiply
    left to right, ``grad_output * (1 - output) * output``)."""
    if output.dtype.kind == "c":
        return grad_output * xp.conjugate((1 - output) * output)
    if output.dtype.itemsize == 2 and output.dtype != xp.float16:      # bfloat16
        g, y = grad_output.astype(xp.float32), output.astype(xp.float32)
        return (g * (1 - y) * y).astype(output.dtype)
    one = xp.ones((), output.dtype)
    return grad_output * (one - output) * output
