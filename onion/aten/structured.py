"""Structured kernels: one meta function (shapes, dtypes, checks) per operator,
one impl per backend, shared by the functional, ``out=`` and in-place variants.

A meta function returns a ``Plan``; an impl returns the computed array, which
the generated wrapper hands to ``functional``/``out``/``inplace`` below.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import iterator as _it
from .tensor_new import empty_tensor, wrap


@dataclass
class Plan:
    """What the meta function decided: output shape, dtype, device, and anything the impl needs."""

    shape: tuple
    dtype: object
    device: object
    strides: tuple | None = None
    extra: object = None


def _as_array(plan: Plan, r):
    from ..backends import backend_for
    b = backend_for(plan.device)
    if plan.device.type == "cpu":
        import numpy as np
        if type(r) is not np.ndarray:
            r = np.asarray(r)
    if r.dtype != plan.dtype.np:
        r = r.astype(plan.dtype.np)
    if tuple(r.shape) != tuple(plan.shape):
        r = r.reshape(plan.shape)
    del b
    return r


def functional(plan: Plan, r):
    return wrap(_as_array(plan, r), plan.dtype, plan.device)


def out(opname: str, plan: Plan, r, out_tensor):
    return _it.write_out(opname, out_tensor, _as_array(plan, r), plan.dtype)


def inplace(opname: str, plan: Plan, r, self):
    return _it.write_out(opname, self, _as_array(plan, r), plan.dtype, inplace=True)


def meta_functional(plan: Plan):
    return empty_tensor(plan.shape, plan.dtype, plan.device, plan.strides)


def meta_out(opname: str, plan: Plan, out_tensor):
    _it.resize_out(out_tensor, plan.shape)
    if plan.dtype is not out_tensor._impl.dtype:
        _it.check_out_dtype(plan.dtype, out_tensor._impl.dtype)
    return out_tensor


def meta_inplace(opname: str, plan: Plan, self):
    if tuple(self._impl._array.shape) != tuple(plan.shape):
        raise RuntimeError(f"output with shape {list(self._impl._array.shape)} doesn't match the broadcast shape "
                           f"{list(plan.shape)}")
    return self
