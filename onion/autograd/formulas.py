"""Named backward helpers used by derivatives.yaml formulas.

Everything here is written with onion operators (methods and ``at``), so a
gradient computed with ``create_graph=True`` is itself differentiable.
Broadcast reduction and dtype casts of gradients happen in the engine
(``validate_outputs``), as in PyTorch, not in each formula.
"""
from __future__ import annotations

from ..aten.at import at
from ..aten.tensor_new import scalar_to_tensor
from ..core.tls import tls as _tls
from .function import Function as _Function
import math
from ..aten.tensor_new import wrap
from ..backends import backend_for


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
    ``sgn`` and ``threshold_backward`` give, rather than no graph at all.
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
    if _tls.grad_enabled and source._impl.requires_grad:
        return _LocallyConstant.apply(value, source)
    return value


def sgn(t):
    return _locally_constant(_mask(t > 0, t) - _mask(t < 0, t), t)


def where(cond, a, b):
    if not hasattr(a, "_impl"):
        a = scalar_to_tensor(a)
    if not hasattr(b, "_impl"):
        b = scalar_to_tensor(b)
    return at.where_self(cond, a, b)


def threshold_backward(grad, result):
    out = where(result > 0, grad, 0)
    if _tls.grad_enabled and result._impl.requires_grad:     # create_graph: keep result in the graph
        out = out + _LocallyConstant.apply(zeros_like(grad), result)
    return out


def div_self_backward(grad, other, rounding_mode=None):
    if rounding_mode is not None:
        return zeros_like(grad)
    return grad / other


def div_other_backward(grad, self, other, rounding_mode=None):
    if rounding_mode is not None:
        return zeros_like(grad)
    return -grad * ((self / other) / other)


def pow_backward(grad, self, exponent):
    if exponent == 0:
        return zeros_like(self)
    return grad * exponent * self ** (exponent - 1)


def pow_backward_self(grad, self, exponent):
    zero = exponent == 0       # masked before multiplying: 0 * 0 ** -1 would be nan
    return where(zero, 0.0, grad * exponent * self ** (where(zero, 1.0, exponent) - 1))


def pow_backward_exponent(grad, self, exponent, result):
    if not hasattr(self, "_impl"):          # pow.Scalar: the base is a Python number
        if self == 0:
            return where(exponent >= 0, 0.0, grad * result * float("-inf"))
        return grad * result * math.log(self)
    zero = _and(self == 0, exponent >= 0)          # d(0 ** e)/de = 0 for e >= 0, as in PyTorch
    return where(zero, 0.0, grad * result * where(zero, 1.0, self).log())


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


def _dims(dim, ndim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    return [d % ndim if ndim else 0 for d in dim]


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
        return grad * result / self
    if zeros > 1:
        return zeros_like(self)
    others = where(self == 0, 1.0, self).prod()
    return grad * where(self == 0, others, 0.0)


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
    return g * where(nz == 0, no_zero_part, where(nz == 1, one_zero_part, 0.0))


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


def _storage_indices(sizes, strides, offset):
    """The storage index of every element of a strided geometry, in row-major order (NumPy, host)."""
    import numpy as np
    idx = np.full(tuple(sizes), offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx = idx + np.arange(n, dtype=np.int64).reshape(shape) * st
    return idx.reshape(-1)


def _extent(sizes, strides, offset) -> int:
    """One past the largest storage index a geometry touches (its offset when empty)."""
    if any(n == 0 for n in sizes):
        return offset
    return offset + 1 + sum((n - 1) * st for n, st in zip(sizes, strides))


def _may_overlap(sizes, strides) -> bool:
    """False when no two elements share a location; True may be a false alarm (checked exactly after)."""
    dims = sorted((st, n) for n, st in zip(sizes, strides) if n > 1)
    reach = 0
    for st, n in dims:
        if st <= reach:
            return True
        reach += (n - 1) * st
    return False


def _overlaps(sizes, strides, offset) -> bool:
    import numpy as np
    if not _may_overlap(sizes, strides):
        return False
    idx = _storage_indices(sizes, strides, offset)
    return idx.size != np.unique(idx).size


def as_strided_backward(grad, sizes, strides, offset, size, stride, storage_offset):
    """Scatter ``grad`` into a storage-sized zero buffer and read it back with the input's geometry.

    Overlapping output elements accumulate; overlapping input elements share
    their location's gradient equally, as in PyTorch.
    """
    size, stride = list(size), list(stride)
    out_off = offset if storage_offset is None else storage_offset
    n = max(_extent(sizes, strides, offset), _extent(size, stride, out_off), 1)
    on_meta = grad._impl.device.type == "meta"
    if not on_meta and _overlaps(size, stride, out_off):
        flat = _ScatterAddStrided.apply(grad, n, size, stride, out_off)
    else:
        flat = at.zeros([n], grad.dtype, None, grad.device, None)
        at.copy_(at.as_strided(flat, size, stride, out_off), grad, False)
    if not on_meta and _overlaps(sizes, strides, offset):
        import numpy as np
        counts = np.bincount(_storage_indices(sizes, strides, offset), minlength=n).astype(grad._impl.dtype.np)
        counts[counts == 0] = 1
        dev = grad._impl.device
        flat = flat / wrap(backend_for(dev).from_numpy(counts, dev), grad._impl.dtype, dev)
    return at.as_strided(flat, list(sizes), list(strides), offset)


class _ScatterAddStrided(_Function):
    """Sum of ``grad``'s elements into a flat buffer at a (self-overlapping) strided geometry."""

    @staticmethod
    def forward(ctx, grad, n, size, stride, offset):
        import numpy as np
        ctx.geometry = (size, stride, offset)
        impl = grad._impl
        backend = backend_for(impl.device)
        values = np.asarray(backend.to_numpy(impl._array)).reshape(-1)
        out = np.zeros(n, dtype=values.dtype)
        np.add.at(out, _storage_indices(size, stride, offset), values)
        return wrap(backend.from_numpy(out, impl.device), impl.dtype, impl.device)

    @staticmethod
    def backward(ctx, g):
        size, stride, offset = ctx.geometry
        return at.as_strided(g, size, stride, offset), None, None, None, None


def to_copy_backward(grad, dtype, device):
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
