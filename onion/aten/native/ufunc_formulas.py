"""Elementwise formulas over an array namespace ``xp`` (one per operator).

The ``ufunc_inner_loop`` field of native_functions.yaml names them.  Each is a
plain function of arrays (already in the compute dtype) and Python scalars.
"""
from __future__ import annotations

from ...core import dtype as _dt
from ..ufunc import UfuncFormula

FORMULAS: dict = {}


def formula(kind: str, n: int, *, check=None, errstate=False, opmath=True, torch_name="", fast_ok=""):
    def deco(fn):
        FORMULAS[fn.__name__] = UfuncFormula(fn.__name__, fn, kind, n, check, errstate, opmath, torch_name, fast_ok)
        return fn
    return deco


def _is_float_scalar(v) -> bool:
    return isinstance(v, (float, complex)) and not isinstance(v, bool)


def alpha_check(dtype, alpha, *rest):
    """PyTorch's checks on ``alpha`` against the result dtype."""
    if isinstance(alpha, bool) and dtype is not _dt.bool and False:
        pass
    if dtype is _dt.bool and not isinstance(alpha, bool) and alpha != 1:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.category < 2 and _is_float_scalar(alpha):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def sub_check(dtype, alpha):
    if dtype is _dt.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    alpha_check(dtype, alpha)


def neg_check(dtype):
    if dtype is _dt.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


def no_complex(name):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
    return check


@formula("binary", 2, check=alpha_check, fast_ok="alpha == 1")
def add(xp, self, other, alpha):
    if alpha == 1:
        return xp.add(self, other)
    if self.dtype == xp.bool_:
        return xp.logical_or(self, xp.logical_and(other, bool(alpha)))
    return xp.add(self, xp.multiply(other, alpha))


@formula("binary", 2, check=sub_check, fast_ok="alpha == 1 and dt is not _dt.bool")
def sub(xp, self, other, alpha):
    if alpha == 1:
        return xp.subtract(self, other)
    return xp.subtract(self, xp.multiply(other, alpha))


@formula("binary", 2)
def mul(xp, self, other):
    if self.dtype == xp.bool_:
        return xp.logical_and(self, other)
    return xp.multiply(self, other)


@formula("binary_float", 2, errstate=True)
def div_true(xp, self, other):
    return xp.true_divide(self, other)


def _int_zero_check(xp, other):
    if bool((other == 0).any()):
        raise RuntimeError("ZeroDivisionError")


def div_mode_check(dtype, rounding_mode):
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if rounding_mode is not None and dtype.is_complex:
        raise RuntimeError(f"div_{rounding_mode}_cpu not implemented for '{dtype.scalar_type_name}'")


class _DivModeFormula:
    pass


@formula("binary", 2, check=div_mode_check, errstate=True, torch_name="div")
def div_mode(xp, self, other, rounding_mode):
    if rounding_mode is None:
        return xp.true_divide(self, other)
    if self.dtype.kind in "biu":
        _int_zero_check(xp, other)
        if self.dtype == xp.bool_:
            self = self.astype(xp.uint8)
            other = other.astype(xp.uint8)
            q = xp.floor_divide(self, other)
            return q.astype(xp.bool_)
        if rounding_mode == "floor":
            return xp.floor_divide(self, other)
        q = xp.floor_divide(self, other)
        fix = (xp.remainder(self, other) != 0) & ((self < 0) != (other < 0))
        return q + fix.astype(q.dtype)
    if rounding_mode == "trunc":
        return xp.trunc(xp.true_divide(self, other))
    return _floor_div_float(xp, self, other)


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


@formula("unary", 1, check=neg_check, fast_ok="dt is not _dt.bool")
def neg(xp, self):
    return xp.negative(self)


@formula("abs", 1)
def abs(xp, self):  # noqa: A001 - the operator's name
    if self.dtype == xp.bool_:
        return self.copy()
    return xp.abs(self)


@formula("unary_float", 1, errstate=True)
def exp(xp, self):
    return xp.exp(self)


@formula("unary_float", 1, errstate=True)
def log(xp, self):
    return xp.log(self)


@formula("unary_float", 1, errstate=True)
def sqrt(xp, self):
    return xp.sqrt(self)


@formula("unary_float", 1, errstate=True)
def rsqrt(xp, self):
    return xp.reciprocal(xp.sqrt(self))


@formula("unary_float", 1)
def sin(xp, self):
    return xp.sin(self)


@formula("unary_float", 1)
def cos(xp, self):
    return xp.cos(self)


@formula("unary_float", 1)
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
        raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
    if dtype.is_complex:
        raise RuntimeError("clamp is not supported for complex types")


@formula("unary", 1, check=relu_check, torch_name="clamp_min")
def relu(xp, self):
    return xp.maximum(self, xp.zeros((), self.dtype))


def pow_check(dtype, *scalars):
    pass


@formula("binary", 2, errstate=True)
def pow(xp, self, exponent):  # noqa: A001 - the operator's name
    if self.dtype.kind in "iu":
        if bool((exponent < 0).any()):
            if self.dtype.kind in "iu" and exponent.dtype.kind in "iu":
                raise RuntimeError("Integers to negative integer powers are not allowed.")
    if self.dtype == xp.bool_:
        return xp.logical_or(self, exponent == 0) if True else None
    return xp.power(self, exponent)


@formula("comparison", 2, torch_name="eq")
def eq(xp, self, other):
    return xp.equal(self, other)


@formula("comparison", 2, torch_name="ne")
def ne(xp, self, other):
    return xp.not_equal(self, other)


def _order_check(name):
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'{dtype.scalar_type_name}\'')
    return check


@formula("comparison", 2, check=_order_check("lt"), torch_name="lt")
def lt(xp, self, other):
    return xp.less(self, other)


@formula("comparison", 2, check=_order_check("le"), torch_name="le")
def le(xp, self, other):
    return xp.less_equal(self, other)


@formula("comparison", 2, check=_order_check("gt"), torch_name="gt")
def gt(xp, self, other):
    return xp.greater(self, other)


@formula("comparison", 2, check=_order_check("ge"), torch_name="ge")
def ge(xp, self, other):
    return xp.greater_equal(self, other)


@formula("binary", 2, check=no_complex("maximum"))
def maximum(xp, self, other):
    return xp.maximum(self, other)


@formula("binary", 2, check=no_complex("minimum"))
def minimum(xp, self, other):
    return xp.minimum(self, other)


def clamp_check(dtype, *bounds):
    if dtype is _dt.bool:
        raise RuntimeError("\"clamp_cpu\" not implemented for 'Bool'")
    if dtype.is_complex:
        raise RuntimeError("clamp is not supported for complex types")


@formula("binary", 3, check=clamp_check, torch_name="clamp")
def clamp(xp, self, lo, hi):
    """Tensor bounds (None-able handled by the caller passing +-inf-free arrays)."""
    out = xp.maximum(self, lo)
    return xp.minimum(out, hi)


@formula("binary", 2, check=clamp_check, torch_name="clamp")
def clamp_min(xp, self, lo):
    return xp.maximum(self, lo)


@formula("binary", 2, check=clamp_check, torch_name="clamp")
def clamp_max(xp, self, hi):
    return xp.minimum(self, hi)


def where_formula(xp, cond, self, other):
    return xp.where(cond, self, other)
