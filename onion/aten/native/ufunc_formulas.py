"""Elementwise formulas over an array namespace ``xp`` (one per operator).

The ``ufunc_inner_loop`` field of native_functions.yaml names them.  Each is a
plain function of arrays (already in the compute dtype) and Python scalars.
"""
from __future__ import annotations

from ...core import dtype as _dt
from ..ufunc import UfuncFormula
from .factories import checked_scalar

FORMULAS: dict = {}


def formula(kind: str, n: int, *, check=None, errstate=False, opmath=True, torch_name="", skip_check=None, plain="",
            float_keeps_python_scalars=False,
            operand_check=None, promote=None, extra_dtypes=(), plain_layout=None, out_check=None):
    def deco(fn):
        FORMULAS[fn.__name__] = UfuncFormula(fn.__name__, fn, kind, n, check, errstate, opmath, torch_name, skip_check,
                                             operand_check=operand_check, promote=promote,
                                             extra_dtypes=tuple(extra_dtypes), plain_layout=plain_layout,
                                             out_check=out_check, plain=plain,
                                             float_keeps_python_scalars=float_keeps_python_scalars)
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
    """``check`` has nothing to say when alpha is the int 1 (the common call)."""
    return alpha.__class__ is int and alpha == 1


def _alpha_is_one_not_bool(dtype, alpha):
    return alpha.__class__ is int and alpha == 1 and dtype is not _dt.bool


def _not_bool(dtype):
    return dtype is not _dt.bool


def _real(dtype, *scalars):
    return not dtype.is_complex


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{dtype.scalar_type_name}\'')


@formula("binary", 2, check=alpha_check, skip_check=_alpha_is_one, plain="add")
def add(xp, self, other, alpha):
    if alpha == 1:
        return xp.add(self, other)
    if self.dtype.kind == "b":
        return xp.logical_or(self, xp.logical_and(other, bool(alpha)))
    return xp.add(self, xp.multiply(other, _as_elem(xp, alpha, other)))


@formula("binary", 2, check=sub_check, operand_check=sub_operand_check,
         skip_check=_alpha_is_one_not_bool, plain="subtract")
def sub(xp, self, other, alpha):
    if alpha == 1:
        return xp.subtract(self, other)
    return xp.subtract(self, xp.multiply(other, _as_elem(xp, alpha, other)))


@formula("binary", 2, plain="multiply")
def mul(xp, self, other):
    return xp.multiply(self, other)        # on bool arrays this is logical and


@formula("binary_float", 2, errstate=True, plain="true_divide")
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
# opmath is done here: float16/bfloat16 round the quotient to their own precision before truncating
# (as PyTorch's vectorised reduced-float kernel does), but floor the float32 quotient.
@formula("binary_float", 2, check=div_mode_check, promote=div_mode_promote, errstate=True, torch_name="div",
         opmath=False)
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


@formula("unary", 1, out_check=same_dtype_out_check)      # also TensorIterator's plain unary op
def conj_physical(xp, self):
    return xp.conjugate(self) if self.dtype.kind == "c" else self    # NumPy's conjugate turns bool into int8


def abs_check(dtype):
    if dtype is _dt.bool:
        raise _not_implemented("abs_cpu", dtype)


@formula("abs", 1, check=abs_check, skip_check=_not_bool, plain="abs", out_check=same_dtype_out_check)
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
    return xp.power(self, exponent)


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
