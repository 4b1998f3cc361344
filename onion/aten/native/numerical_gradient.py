"""torch.gradient: second-order central differences inside, first- or second-order one-sided differences at
the edges, with uniform (Scalar) or coordinate (Tensor) spacing.  PyTorch's CompositeImplicitAutograd bodies,
composed of slices, arithmetic and cat, so that autograd and Meta come from those operators."""
from __future__ import annotations

from ...core import dtype as _dt
from ...core.geometry import wrap_dim
from ..at import at


def _check(self, spacing_size, dim, edge_order):
    """Arguments PyTorch accepts: spacing's length, edge_order, distinct dims each long enough."""
    if self.dtype is _dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dim is None and spacing_size != self.dim():
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {self.dim()}', since dim argument was not given, but got a list of "
                           f"length {spacing_size}")
    if spacing_size is not None and dim is not None and spacing_size != len(dim):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dim)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is not None:
        seen = set()
        for d in dim:
            w = wrap_dim(d, self.dim())
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
    dims = [wrap_dim(d, self.dim()) for d in dim] if dim is not None else range(self.dim())
    if any(self.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _sl(t, d, start, end=None):
    return at.slice_Tensor(t, d, start, end, 1)


def _join(prepend, center, append, d):
    return at.cat([prepend, center, append], d)


def _uniform(self, spacing, dims, edge_order):
    """One derivative per dim for a uniform step (a Scalar per dim)."""
    out = []
    for d, h in zip(dims, spacing):
        d = wrap_dim(d, self.dim())
        center = at.div_Scalar(at.sub_Tensor(_sl(self, d, 2), _sl(self, d, 0, -2), 1), h)
        if edge_order == 1:
            prepend = at.div_Scalar(at.sub_Tensor(_sl(self, d, 1, 2), _sl(self, d, 0, 1), 1), h)
            append = at.div_Scalar(at.sub_Tensor(_sl(self, d, -1), _sl(self, d, -2, -1), 1), h)
        else:
            prepend = at.sub_Tensor(at.add_Tensor(at.mul_Scalar(_sl(self, d, 0, 1), -1.5),
                                                  at.mul_Scalar(_sl(self, d, 1, 2), 2), 1),
                                    at.mul_Scalar(_sl(self, d, 2, 3), 0.5), 1)
            prepend = at.div_Scalar(prepend, h)
            append = at.add_Tensor(at.add_Tensor(at.mul_Scalar(_sl(self, d, -3, -2), 0.5),
                                                 at.mul_Scalar(_sl(self, d, -2, -1), -2), 1),
                                   at.mul_Scalar(_sl(self, d, -1), 1.5), 1)
            append = at.div_Scalar(append, h)
        out.append(_join(prepend, at.div_Scalar(center, 2), append, d))
    return out


def _coordinates(self, coordinates, dims, edge_order):
    """One derivative per dim for sample coordinates along it (non-uniform steps)."""
    for c in coordinates:
        if c.device != self.device:
            raise RuntimeError("torch.gradient expected each tensor to be on the same device, but got devices "
                               f"{self.device} and {c.device}!")
    out = []
    for d, coords in zip(dims, coordinates):
        if coords.dim() != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                               f"element with {coords.dim()} dimensions!")
        d = wrap_dim(d, self.dim())
        shape = [1] * self.dim()
        shape[d] = -1
        mul, div, add, sub = at.mul_Tensor, at.div_Tensor, at.add_Tensor, at.sub_Tensor
        dx = at.diff(coords, 1, 0, None, None)
        dx1, dx2 = _sl(dx, 0, 0, -1), _sl(dx, 0, 1)
        a = at.reshape(div(at.neg(dx2), mul(dx1, add(dx1, dx2, 1))), shape)
        b = at.reshape(div(sub(dx2, dx1, 1), mul(dx1, dx2)), shape)
        c = at.reshape(div(dx1, mul(dx2, add(dx1, dx2, 1))), shape)
        center = add(add(mul(a, _sl(self, d, 0, -2)), mul(b, _sl(self, d, 1, -1)), 1), mul(c, _sl(self, d, 2)), 1)
        h0, h1 = at.select_int(dx, 0, 0), at.select_int(dx, 0, 1 if edge_order == 2 else 0)
        hl, hl2 = at.select_int(dx, 0, -1), at.select_int(dx, 0, -2 if edge_order == 2 else -1)
        if edge_order == 1:
            prepend = div(sub(_sl(self, d, 1, 2), _sl(self, d, 0, 1), 1), h0)
            append = div(sub(_sl(self, d, -1), _sl(self, d, -2, -1), 1), hl)
        else:
            s0, sl = add(h0, h1, 1), add(hl, hl2, 1)
            a0 = at.neg(div(add(at.mul_Scalar(h0, 2.0), h1, 1), mul(h0, s0)))
            b0 = div(s0, mul(h0, h1))
            c0 = div(at.neg(h0), mul(h1, s0))
            prepend = add(add(mul(a0, _sl(self, d, 0, 1)), mul(b0, _sl(self, d, 1, 2)), 1),
                          mul(c0, _sl(self, d, 2, 3)), 1)
            al = div(hl, mul(hl2, sl))
            bl = at.neg(div(sl, mul(hl, hl2)))
            cl = div(add(at.mul_Scalar(hl, 2), hl2, 1), mul(hl, sl))
            append = add(add(mul(al, _sl(self, d, -3, -2)), mul(bl, _sl(self, d, -2, -1)), 1),
                         mul(cl, _sl(self, d, -1)), 1)
        out.append(_join(prepend, center, append, d))
    return out


def _dims(self, dim):
    """An int dim names one direction; none names every one."""
    return [dim] if dim is not None else list(range(self.dim()))


def gradient_scalarint(self, spacing=None, dim=None, edge_order=1):
    dims = _dims(self, dim)
    _check(self, None if spacing is None else len(dims), dims if dim is not None else None, edge_order)
    return _uniform(self, [1.0 if spacing is None else spacing] * len(dims), dims, edge_order)


def gradient_scalararray(self, spacing, dim, edge_order=1):
    _check(self, len(dim), list(dim), edge_order)
    return _uniform(self, [spacing] * len(dim), list(dim), edge_order)


def gradient_array(self, dim, edge_order=1):
    _check(self, len(dim), list(dim), edge_order)
    return _uniform(self, [1.0] * len(dim), list(dim), edge_order)


def gradient_scalarrayint(self, spacing, dim=None, edge_order=1):
    dims = _dims(self, dim)
    _check(self, len(spacing), dims if dim is not None else None, edge_order)
    return _uniform(self, list(spacing), dims, edge_order)


def gradient_scalarrayarray(self, spacing, dim, edge_order=1):
    _check(self, len(spacing), list(dim), edge_order)
    return _uniform(self, list(spacing), list(dim), edge_order)


def gradient_tensorarrayint(self, spacing, dim=None, edge_order=1):
    dims = _dims(self, dim)
    _check(self, len(spacing), dims if dim is not None else None, edge_order)
    return _coordinates(self, list(spacing), dims, edge_order)


def gradient_tensorarray(self, spacing, dim, edge_order=1):
    _check(self, len(spacing), list(dim), edge_order)
    return _coordinates(self, list(spacing), list(dim), edge_order)
