"""What the operator checks ask of tensors: copies that keep geometry, memory overlap, and closeness."""
from __future__ import annotations

import numpy as np

from ....core import dtype as _dt
from ....core.tensor import Tensor
from ....utils import _pytree as pytree

# torch.testing.assert_close's default tolerances, by dtype: (rtol, atol); exact for the others
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}


def clone_input(t: Tensor) -> Tensor:
    """A copy with ``t``'s sizes, strides and requires_grad (a leaf), so a check can run the operator on it."""
    out = t.detach().clone()
    if tuple(out.stride()) != tuple(t.stride()) and t.numel() > 0:
        out = t.detach().new_empty_strided(tuple(t.shape), tuple(t.stride()))
        out.copy_(t.detach())
    return out.requires_grad_(t.requires_grad)


def clone_inputs(tree):
    """``clone_input`` of every tensor in ``tree`` (nested tuples, lists, dicts)."""
    return pytree.tree_map_only(Tensor, clone_input, tree)


def host_values(t: Tensor) -> np.ndarray:
    """A host copy of ``t``'s values (bfloat16 widened: NumPy has no such dtype)."""
    d = t.detach()
    if d.dtype is _dt.bfloat16:
        d = d.float()
    return np.array(d.cpu().numpy(), copy=True)


def _extent(t: Tensor) -> tuple[int, int]:
    """The byte range ``[lo, hi)`` of its storage that ``t`` can touch (empty for no elements)."""
    size = t.element_size()
    lo = t.storage_offset() * size
    if t.numel() == 0:
        return lo, lo
    span = sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))
    return lo, lo + (span + 1) * size


def storage_of(t: Tensor):
    return t._impl.storage()


def overlaps(a, b) -> bool:
    """Whether two tensors can read or write the same memory (PyTorch's ``_overlaps``): same storage and
    intersecting byte ranges; anything that is not a tensor overlaps nothing."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return False
    if a._impl is b._impl:
        return a.numel() > 0
    if storage_of(a) is not storage_of(b):
        return False
    (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
    return alo < bhi and blo < ahi


def tolerances(dtype, rtol, atol) -> tuple[float, float]:
    if rtol is not None and atol is not None:
        return rtol, atol
    return _TOLERANCES.get(dtype.name if hasattr(dtype, "name") else str(dtype), (0.0, 0.0))


def assert_close(actual, expected, *, rtol=None, atol=None, msg: str = "") -> None:
    """``torch.testing.assert_close`` for what operators return: same structure, and tensors of the same
    shape, dtype and device whose values agree within the dtype's tolerances (NaNs equal)."""
    a_flat, a_spec = pytree.tree_flatten(actual)
    e_flat, e_spec = pytree.tree_flatten(expected)
    prefix = f"{msg}\n\n" if msg else ""
    if len(a_flat) != len(e_flat):
        raise AssertionError(f"{prefix}The structures differ: {len(a_flat)} values against {len(e_flat)}")
    for i, (a, e) in enumerate(zip(a_flat, e_flat)):
        where = f" (item {i})" if len(a_flat) > 1 else ""
        if isinstance(e, Tensor) != isinstance(a, Tensor):
            raise AssertionError(f"{prefix}A tensor was compared with a {type(a if isinstance(e, Tensor) else e)}"
                                 f"{where}")
        if not isinstance(e, Tensor):
            if a != e and not (a != a and e != e):
                raise AssertionError(f"{prefix}Values {a!r} and {e!r} are not equal{where}")
            continue
        if tuple(a.shape) != tuple(e.shape):
            raise AssertionError(f"{prefix}The values for attribute 'shape' do not match: {a.shape} != "
                                 f"{e.shape}{where}")
        if a.dtype is not e.dtype:
            raise AssertionError(f"{prefix}The values for attribute 'dtype' do not match: {a.dtype} != "
                                 f"{e.dtype}{where}")
        if a.device != e.device:
            raise AssertionError(f"{prefix}The values for attribute 'device' do not match: {a.device} != "
                                 f"{e.device}{where}")
        r, t = tolerances(e.dtype, rtol, atol)
        av, ev = host_values(a), host_values(e)
        close = np.isclose(av, ev, rtol=r, atol=t, equal_nan=True) if av.dtype.kind in "fc" else av == ev
        if not np.all(close):
            bad = int(np.size(close) - np.count_nonzero(close))
            diff = np.max(np.abs(av.astype(np.complex128) - ev.astype(np.complex128))) if av.size else 0.0
            raise AssertionError(f"{prefix}Tensor-likes are not close!{where}\n\nMismatched elements: {bad} / "
                                 f"{av.size}\nGreatest absolute difference: {float(np.real(diff))} (up to {t} "
                                 f"allowed)")
