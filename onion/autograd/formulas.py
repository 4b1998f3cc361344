"""Named backward helpers used by derivatives.yaml formulas.

Everything here is written with onion operators (methods and ``at``), so a
gradient computed with ``create_graph=True`` is itself differentiable.
Broadcast reduction and dtype casts of gradients happen in the engine
(``validate_outputs``), as in PyTorch, not in each formula.
"""
from __future__ import annotations

from ..aten.at import at
from .backward_common import reduced_dims as _dims, where  # noqa: F401  (derivatives.yaml)
from ..core.tls import state as _tls_state
from .function import Function as _Function
from .strided_backward import as_strided_backward  # noqa: F401  (derivatives.yaml)
import cmath
import math
import warnings


def maybe_multiply(t, s):
    return t if (s is None or (not isinstance(s, bool) and s == 1)) else t * s


def zeros_like(t):
    return at.zeros_like(t, None, None, None, None, None)


def ones_like(t):
    return at.ones_like(t, None, None, None, None, None)


def _mask(cond, like):
    """A boolean tensor as 0/1 of ``like``'s dtype (non-differentiable)."""
    return at._to_copy(cond, like.dtype, None, None, None, False, None)


class _LocallyConstant(_Function):
    """``value``, computed from ``source`` by a piecewise-constant map (a sign, a mask): zero gradient.

    It keeps ``value`` in the graph of ``source``, so that a first derivative
    built from it requires grad and its derivative is zeros, as PyTorch's
    ``sgn`` gives, rather than no graph at all.
    """

    @staticmethod
    def forward(ctx, value, source):
        ctx.meta = (list(source.shape), source.dtype, source.device)
        return value.clone()

    @staticmethod
    def backward(ctx, g):
        shape, dtype, device = ctx.meta
        return None, at.zeros(shape, dtype, None, device, None)


def _locally_constant(value, source):
    if _tls_state().grad_enabled and source._impl.requires_grad:
        return _LocallyConstant.apply(value, source)
    return value


def sgn(t):
    """``t / |t|`` for complex (0 at 0, differentiable); -1, 0 or 1 for real (a zero-gradient map)."""
    if t._impl.dtype.is_complex:
        a = t.abs()
        zero = a == 0
        return where(zero, 0.0, t / where(zero, 1.0, a))
    return _locally_constant(_mask(t > 0, t) - _mask(t < 0, t), t)


def _column_major(sizes, strides) -> bool:
    return len(sizes) == 2 and strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(grad, mat2, sizes, strides, alpha):
    """mm's gradient for its first matrix; a column-major input gets a column-major gradient (PyTorch's
    mm_mat1_backward computes it transposed for that case)."""
    if _column_major(sizes, strides):
        return maybe_multiply(mat2.conj().mm(grad.t()).t(), conj_scalar(alpha))
    return maybe_multiply(grad.mm(mat2.t().conj()), conj_scalar(alpha))


def mm_mat2_backward(grad, mat1, sizes, strides, alpha):
    """mm's gradient for its second matrix, column-major for a column-major input (mm_mat2_backward)."""
    if _column_major(sizes, strides):
        return maybe_multiply(grad.t().mm(mat1.conj()).t(), conj_scalar(alpha))
    return maybe_multiply(mat1.t().conj().mm(grad), conj_scalar(alpha))


def conj_scalar(s):
    """A Scalar argument conjugated (alpha, beta, a Scalar operand): real numbers are their own conjugate."""
    return s.conjugate() if isinstance(s, complex) else s


def real_part(g):
    """The real part of a complex gradient as a real tensor (PyTorch's ``at::real``), differentiably.

    ``_to_copy`` to the real dtype drops the imaginary part, and its backward casts back to complex, which is
    the adjoint of taking the real part; the cast's "discards the imaginary part" warning is meant for users,
    not for this deliberate projection, so it is silenced here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return at._to_copy(g, g._impl.dtype.to_real(), None, None, None, False, None)


def handle_r_to_c(dtype, g):
    """A real input whose gradient came out complex gets its real part (PyTorch's ``handle_r_to_c``)."""
    if g._impl.dtype.is_complex and not dtype.is_complex:
        return at.real(g)       # a view (strides twice the complex gradient's), as PyTorch's at::real
    return g


def threshold_backward(grad, self, threshold):
    """The operator, under the name PyTorch's formulas call it by (relu's gradient is this on its result)."""
    return at.threshold_backward(grad, self, threshold)


def div_self_backward(grad, other, self_dtype, rounding_mode=None):
    if rounding_mode is not None:
        return zeros_like(grad)
    return handle_r_to_c(self_dtype, grad / other.conj())


def div_other_backward(grad, self, other, rounding_mode=None):
    if rounding_mode is not None:
        return zeros_like(grad)
    return handle_r_to_c(other._impl.dtype, -grad * ((self / other) / other).conj())


def pow_backward(grad, self, exponent):
    """``grad * (e * self ** (e - 1)).conj()`` with ``e`` the exponent as a double (or complex), as PyTorch
    computes it: pow.Tensor_Scalar, mul.Scalar, mul.Tensor, which a traced backward records."""
    if exponent == 0:
        return zeros_like(self)
    e = complex(exponent) if isinstance(exponent, complex) else float(exponent)
    return handle_r_to_c(self._impl.dtype, grad * at.mul_Scalar(at.pow_Tensor_Scalar(self, e - 1), e).conj())


def pow_backward_self(grad, self, exponent):
    zero = exponent == 0       # masked before multiplying: 0 * 0 ** -1 would be nan
    d = (exponent * self ** (where(zero, 1.0, exponent) - 1)).conj()
    return handle_r_to_c(self._impl.dtype, where(zero, 0.0, grad * d))


def _real_nonnegative(exponent):
    """``exponent >= 0``; a complex exponent must also be real (it equals its modulus exactly then)."""
    if exponent._impl.dtype.is_complex:
        return exponent == exponent.abs()
    return exponent >= 0


def _scalar_log(base):
    """log of a Python number as PyTorch's Scalar log gives it: complex stays complex, a negative real is nan."""
    if isinstance(base, complex):
        return cmath.log(base) if base != 0 else float("-inf")
    if base > 0:
        return math.log(base)
    return float("-inf") if base == 0 else float("nan")


def pow_backward_exponent(grad, self, exponent, result):
    edt = exponent._impl.dtype
    if not hasattr(self, "_impl"):          # pow.Scalar: the base is a Python number
        base = complex(self) if edt.is_complex and not isinstance(self, complex) else self
        d = (result * _scalar_log(base)).conj()
        if self == 0:
            return handle_r_to_c(edt, where(_real_nonnegative(exponent), 0.0, grad * d))
        return handle_r_to_c(edt, grad * d)
    zero = _and(self == 0, _real_nonnegative(exponent))     # d(0 ** e)/de = 0 for e >= 0, as in PyTorch
    base = where(zero, 1.0, self)
    if base._impl.dtype is not result._impl.dtype:     # log of a real base in the complex result dtype
        base = at._to_copy(base, result._impl.dtype, None, None, None, False, None)
    return handle_r_to_c(edt, where(zero, 0.0, grad * (result * base.log()).conj()))


def _and(a, b):
    return at.mul_Tensor(a, b)


def clamp_backward(grad, self, lo, hi):
    keep = None
    if lo is not None:
        keep = self >= lo
    if hi is not None:
        k2 = self <= hi
        keep = k2 if keep is None else _and(keep, k2)
    if keep is None:
        return grad
    return where(keep, grad, 0.0)


def clamp_backward_min_max(grad, self, lo, hi, mask):
    """Gradients of clamp's tensor bounds: min gets grad where it bound ``self``, max likewise."""
    gmin = gmax = None
    if lo is not None and mask[1]:
        cond = self < lo if hi is None else _and(self < lo, lo <= hi)
        gmin = where(cond, grad, 0.0)
    if hi is not None and mask[2]:
        gmax = where(self > hi, grad, 0.0)
        if lo is not None:
            gmax = where(lo > hi, grad, gmax)
    return gmin, gmax


def sum_backward(grad, sizes, dim, keepdim):
    if not keepdim and sizes:
        for d in sorted(_dims(dim, len(sizes))):
            grad = grad.unsqueeze(d)
    return grad.expand(sizes)


def mean_backward(grad, sizes, dim, numel, keepdim):
    n = 1
    for d in _dims(dim, len(sizes)):
        n *= sizes[d] if sizes else 1
    return sum_backward(grad, sizes, dim, keepdim) / n


def restore_reduced_dims(t, dim, keepdim, ndim):
    if keepdim:
        return t
    for d in sorted(_dims(dim, ndim)):
        t = t.unsqueeze(d)
    return t


def amax_backward(grad, self, result, dim, keepdim):
    nd = self.dim()
    g = restore_reduced_dims(grad, dim, keepdim, nd)
    r = restore_reduced_dims(result, dim, keepdim, nd)
    mask = _mask(r == self, grad)
    count = mask.sum(_dims(dim, nd), True) if nd else mask
    return g * mask / count


def prod_backward(grad, self, result):
    if self.dim() == 0:
        return grad
    zeros = int((self == 0).sum().item())
    if zeros == 0:
        return grad * (result / self).conj()
    if zeros > 1:
        return zeros_like(self)
    others = where(self == 0, 1.0, self).prod()
    return grad * where(self == 0, others, 0.0).conj()


def prod_dim_backward(grad, self, result, dim, keepdim):
    if self.dim() == 0:
        return grad
    g = grad if keepdim else grad.unsqueeze(dim)
    r = result if keepdim else result.unsqueeze(dim)
    is_zero = self == 0
    nz = _mask(is_zero, self).sum([dim], True)
    others = where(is_zero, 1.0, self).prod(dim, True)
    safe = where(is_zero, 1.0, self)
    no_zero_part = r / safe
    one_zero_part = where(is_zero, others, 0.0)
    return g * where(nz == 0, no_zero_part, where(nz == 1, one_zero_part, 0.0)).conj()


def permute_backwards(grad, dims):
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return grad.permute(inverse)


def unsqueeze_to(grad, dim, sizes):
    dims = [dim] if isinstance(dim, int) else list(dim)
    n = len(sizes)
    for d in sorted(x % n if n else 0 for x in dims):
        if n and sizes[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


def _zeros(sizes, like):
    return at.zeros(list(sizes), like.dtype, None, like.device, None)


def select_backward(grad, sizes, dim, index):
    out = _zeros(sizes, grad)
    at.copy_(at.select_int(out, dim, index), grad, False)
    return out


def slice_backward(grad, sizes, dim, start, end, step):
    out = _zeros(sizes, grad)
    at.copy_(at.slice_Tensor(out, dim, start, end, step), grad, False)
    return out


def diagonal_backward(grad, sizes, offset, dim1, dim2):
    out = _zeros(sizes, grad)
    at.copy_(at.diagonal(out, offset, dim1, dim2), grad, False)
    return out


def to_copy_backward(grad, dtype, device):
    grad = handle_r_to_c(dtype, grad)       # a real -> complex cast: the real part flows back, as a view
    if grad._impl.dtype == dtype and grad._impl.device == device:
        # already self's type, left as Tensor.to(copy=False) leaves it: the real part keeps the view's strides
        # (twice the complex gradient's), as PyTorch's gradient does
        return grad
    return at._to_copy(grad, dtype, None, device, None, False, None)


def expand_backward(grad, sizes):
    return sum_to(grad, sizes)


def sum_to(grad, sizes):
    """Reduce a broadcast gradient back to ``sizes`` (leading dims, then size-1 dims)."""
    sizes = tuple(sizes)
    gshape = tuple(grad._impl._array.shape)
    if gshape == sizes:
        return grad
    lead = len(gshape) - len(sizes)
    dims = list(range(lead))
    for i, s in enumerate(sizes):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        grad = at.sum_dim_IntList(grad, dims, True, None)
    return at.view(grad, list(sizes)) if tuple(grad._impl._array.shape) != sizes else grad


def numel_of(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n
from .backward_reduce import *  # noqa: F401,F403


from .backward_shape import *  # noqa: F401,F403,E402
from .backward_linalg import *  # noqa: E402,F401,F403
from .backward_indexing import *  # noqa: F401,F403
from .backward_complex import *  # noqa: F401,F403
from .backward_scatter import *  # noqa: E402,F401,F403
from .backward_rng import *  # noqa: E402,F401,F403
from .backward_sorting import *  # noqa: F401,F403,E402
from .backward_indexing import *  # noqa: F401,F403,E402


from .backward_pointwise import *  # noqa: E402,F401,F403
from .backward_ops import *  # noqa: F401,F403


def mean_backward_all(grad, sizes):
    """mean()'s gradient: ``grad`` expanded to the input's shape, divided by its element count (div.Scalar, as
    PyTorch's formula; an empty input has an empty gradient, so the 0 divides nothing)."""
    n = 1
    for s in sizes:
        n *= s
    return at.div_Scalar(grad.expand(sizes), n)


from .backward_gradops import *  # noqa: F401,F403,E402
