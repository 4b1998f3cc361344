"""Special-function formulas (error, gamma and Bessel families) over SciPy's special ufuncs.

They register into ``ufunc_formulas.FORMULAS`` as the other formulas do; ``_special(xp)`` is the
special-function namespace that goes with an array namespace (``scipy.special`` for NumPy,
``cupyx.scipy.special`` for CuPy).  Integers and bool compute in the default float dtype, float16 and
bfloat16 in float32 (PyTorch's opmath); complex inputs are refused as PyTorch refuses them.
"""
from __future__ import annotations

import math

from .. import iterator as _it
from .ufunc_formulas import _not_implemented, _real, formula


def _special(xp):
    if getattr(xp, "__name__", "") in ("numpy", "dask.array"):   # SciPy's ufuncs run on Dask arrays lazily
        import scipy.special
        return scipy.special
    import cupyx.scipy.special  # the CUDA backend's namespace
    return cupyx.scipy.special


@formula("unary_float", 1, torch_name="erf_vml")
def erf(xp, self):
    return _special(xp).erf(self)


@formula("unary_float", 1, torch_name="erfc_vml")
def erfc(xp, self):
    return _special(xp).erfc(self)


@formula("unary_float", 1, torch_name="erfinv_vml")
def erfinv(xp, self):
    return _special(xp).erfinv(self)


@formula("unary_float", 1, errstate=True, torch_name="lgamma_vml")
def lgamma(xp, self):
    """log|Gamma(x)|: +inf at the poles (0 and the negative integers)."""
    r = _special(xp).gammaln(self)
    return xp.where(self == -xp.inf, xp.asarray(xp.inf, dtype=r.dtype), r)      # lgamma(-inf) is +inf


def _no_complex_named(kernel):
    """A complex input refused with PyTorch's kernel name as it prints it (no ``_cpu`` suffix)."""
    def check(dtype, *scalars):
        if dtype.is_complex:
            raise _not_implemented(kernel, dtype)
    return check


@formula("unary_float", 1, check=_no_complex_named("digamma"), skip_check=_real, errstate=True)
def digamma(xp, self):
    """psi(x); at 0 PyTorch gives -inf with 0's sign flipped (+inf at -0) and NaN at the negative integers."""
    r = _special(xp).psi(self)
    zero = self == 0
    if bool(zero.any()):
        r = xp.where(zero, xp.where(xp.signbit(self), xp.inf, -xp.inf).astype(r.dtype), r)
    return r


def _trigamma(xp, x):
    """psi'(x) in x's own precision, by PyTorch's method (so float32 loses the digits PyTorch's does near
    the poles): reflection below 1/2, six steps of the recurrence, then the asymptotic series."""
    one = x.dtype.type(1)
    pi = x.dtype.type(math.pi)
    low = x < 0.5
    s = xp.sin(pi * x)
    result = xp.where(low, -(pi * pi) / (s * s), x.dtype.type(0))
    y = xp.where(low, one - x, x)
    for _ in range(6):      # fixed recurrence steps, not a loop over elements
        result = result + one / (y * y)
        y = y + one
    ixx = one / (y * y)
    series = (one + one / (2 * y) + ixx * (x.dtype.type(1 / 6) - ixx * (x.dtype.type(1 / 30)
                                                                        - ixx * x.dtype.type(1 / 42)))) / y
    result = result + series
    return xp.where(low, -result, result)


def polygamma_check(dtype, n):
    if dtype.is_complex:
        raise _not_implemented("polygamma", dtype)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


@formula("unary_float", 1, check=polygamma_check, errstate=True, torch_name="polygamma")
def polygamma(xp, self, n):
    if n == 0:
        return digamma(xp, self)
    if n == 1:
        return _trigamma(xp, self)
    sp = _special(xp)
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x)
    sign = 1.0 if n % 2 == 1 else -1.0
    r = (sign * math.factorial(n)) * sp.zeta(float(n + 1), self).astype(self.dtype)
    # PyTorch's series (Cephes' zeta) gives NaN at +inf (its first term over the sum is 0/0)
    return xp.where(self == xp.inf, xp.asarray(xp.nan, dtype=r.dtype), r)


def mvlgamma_check(dtype, p):
    if dtype.is_complex:        # PyTorch's composite fails building its arange in self's dtype
        raise _not_implemented("arange_cpu", dtype)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def mvlgamma_operand_check(ops, compute, p):
    if ops[0].dtype.name == "bool":
        raise RuntimeError("The input tensor may not be a boolean tensor.")


def _cast_out_check(ops, result, out, inplace):
    """TensorIterator's cast rule, checked after the operator's own errors (PyTorch's mvlgamma is a composite)."""
    _it.check_out_dtype(result, out)


def _contiguous_result(ops) -> bool:
    """PyTorch's mvlgamma is a composite (a sum over a new last dimension): its result is contiguous."""
    return True


# opmath is done here: PyTorch's composite builds its arguments x - j/2 in self's dtype, so float16/bfloat16
# round them (and the lgamma of each) to that dtype before the float32 sum.
@formula("unary_float", 1, check=mvlgamma_check, operand_check=mvlgamma_operand_check, errstate=True, opmath=False,
         torch_name="mvlgamma", out_check=_cast_out_check, plain_layout=_contiguous_result)
def mvlgamma(xp, self, p):
    """The multivariate log-gamma: sum_j lgamma(x - j/2) for j < p, plus p(p-1)/4 log(pi).

    As PyTorch's composite computes it: the arguments x + (-(p-1)/2, ..., -1/2, 0) in self's dtype, their
    lgamma summed in that order, then the constant (rounded to self's dtype) added.  A float16/bfloat16 argument that rounds onto a pole
    (-4.015625 is -4 in bfloat16) gives +inf, as there."""
    gammaln = _special(xp).gammaln
    dt = self.dtype
    reduced = dt.itemsize == 2
    work = xp.float32 if reduced else dt
    x = self.astype(work) if reduced else self
    total = None
    for k in range(p):      # p terms (the order of the function), not a loop over elements
        arg = x + (k - (p - 1)) / 2
        if reduced:
            arg = arg.astype(dt).astype(work)
        term = gammaln(arg)
        if reduced:
            term = term.astype(dt).astype(work)
        total = term if total is None else total + term
    const = xp.asarray(p * (p - 1) / 4 * math.log(math.pi), dtype=dt)      # the Scalar of add_, in self's dtype
    if reduced:
        total = total.astype(dt).astype(work)
        const = const.astype(work)
    r = total + const
    r = xp.where(self == -xp.inf, xp.asarray(xp.inf, dtype=r.dtype), r)     # lgamma(-inf) is +inf
    return r.astype(dt) if reduced else r


@formula("unary_float", 1, torch_name="i0_vml")
def i0(xp, self):
    return _special(xp).i0(self)


@formula("unary_float", 1, torch_name="i1")
def special_i1(xp, self):
    return _special(xp).i1(self)


def _igamma_nan_limits(xp, a, x, r, lower: bool):
    """PyTorch's igamma/igammac decide x == 0, a == +inf and x == +inf before looking at a NaN in the other
    argument (P(nan, 0) = 0, P(nan, inf) = 1, P(inf, nan) = 0; Q the complement); SciPy gives NaN there."""
    zero, one = xp.asarray(0, dtype=r.dtype), xp.asarray(1, dtype=r.dtype)
    lo, hi = (zero, one) if lower else (one, zero)
    nan_a, nan_x = xp.isnan(a), xp.isnan(x)
    r = xp.where(nan_a & (x == 0), lo, r)
    r = xp.where(nan_a & (x == xp.inf), hi, r)
    return xp.where(nan_x & (a == xp.inf), lo, r)


@formula("binary", 2, errstate=True, torch_name="igamma")
def igamma(xp, self, other):
    """The regularised lower incomplete gamma P(a, x)."""
    return _igamma_nan_limits(xp, self, other, _special(xp).gammainc(self, other), True)


@formula("binary", 2, errstate=True, torch_name="igammac")
def igammac(xp, self, other):
    """The regularised upper incomplete gamma Q(a, x)."""
    return _igamma_nan_limits(xp, self, other, _special(xp).gammaincc(self, other), False)
