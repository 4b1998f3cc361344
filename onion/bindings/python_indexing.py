"""The hand-written indexing functions of the public surface: ``nonzero(as_tuple=...)`` (PyTorch's
python_torch_functions_manual.cpp binding) and ``unravel_index`` (torch/functional.py)."""
from __future__ import annotations

import numbers

from ..aten.at import at
from ..core import dtype as _dt
from ..core.tensor import Tensor


def make_nonzero(generated):
    """``onion.nonzero``: the generated binding, plus ``as_tuple=True`` giving one index tensor per dim."""
    def nonzero(input, *, out=None, as_tuple=False):
        if type(as_tuple) is not bool:
            raise TypeError(f"nonzero(): argument 'as_tuple' must be bool, not {type(as_tuple).__name__}")
        if as_tuple:
            if out is not None:
                raise TypeError("nonzero(): as_tuple=True does not take out=")
            return tuple(at.nonzero_numpy(input))
        if out is None:
            return generated(input)
        return generated(input, out=out)
    nonzero.__doc__ = getattr(generated, "__doc__", None)
    return nonzero


def make_nonzero_method(generated):
    def nonzero(self, *, as_tuple=False):
        if as_tuple:
            return tuple(at.nonzero_numpy(self))
        return generated(self)
    return nonzero


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``: a tuple of one int64 tensor per dim."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer tensor, but got {type(indices)}")
    dt = indices._impl.dtype
    if dt.category != 1:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {dt}")
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    elif isinstance(shape, Tensor):
        shape = tuple(int(s) for s in shape.tolist())
    shape = tuple(shape)
    for s in shape:
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
        if s < 0:
            raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    # as PyTorch's Python function: operators a mode sees (and a fake tensor runs on), not the index values
    from .python_torch_functions import tensor as _tensor
    k = len(shape)
    coefs = [1] * k
    for i in range(k - 2, -1, -1):
        coefs[i] = coefs[i + 1] * shape[i + 1]
    dev = indices.device
    # row-major coefficients, then floor division and a floor modulo (negative indices wrap, as there)
    res = at.floor_divide(at.unsqueeze(indices, -1), _tensor(coefs, dtype=_dt.int64, device=dev))
    res = at.remainder_Tensor(res, _tensor(list(shape), dtype=_dt.int64, device=dev))
    return tuple(at.unbind_int(res, -1))
