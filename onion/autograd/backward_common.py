"""Helpers the backward formulas of every family share (formulas.py and the backward_<family> modules)."""
from __future__ import annotations

from ..aten.at import at
from ..aten.tensor_new import scalar_to_tensor


def where(cond, a, b):
    """``torch.where`` in a formula, where either branch may be a Python number."""
    if not hasattr(a, "_impl"):
        a = scalar_to_tensor(a)
    if not hasattr(b, "_impl"):
        b = scalar_to_tensor(b)
    return at.where_self(cond, a, b)


def reduced_dims(dim, ndim) -> list:
    """The dims a reduction's ``dim`` argument names, wrapped (None or empty: every dim)."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    return [d % ndim if ndim else 0 for d in dim]
