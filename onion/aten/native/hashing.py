"""hash_tensor: a reduction to one uint64 per slice that two equal tensors share.

Mode 0 (the only one) XORs the elements' 64-bit patterns: floating values widened to
float64 and read as uint64, integers and bool widened to int64 and read as uint64 (so
-1 is all ones), as ATen's xor_sum kernel does.
"""
from __future__ import annotations

from ...core import dtype as _dt
from ..structured import Plan
from .reductions import _kernel_name, _reduce_dims, _reduced_shape, zero_numel_check_dims

_uint64 = _dt.uint64


def meta_hash_tensor(self, dim=(), keepdim=False, mode=0):
    impl = self._impl
    arr = impl._array
    shape = arr.shape
    if arr.size == 0:
        zero_numel_check_dims("hash_tensor", shape, dim)
    dims = _reduce_dims(dim, len(shape))
    out_shape, axis = _reduced_shape(shape, dims, keepdim)
    # Both errors come from the kernel, so after out='s dtype check; Meta never raises them.
    err = None
    if impl.device.type == "meta":
        pass
    elif mode != 0:
        err = RuntimeError(f"Unknown hash_tensor mode: {mode}")
    elif (impl.dtype.is_complex or impl.dtype in _dt.BAREBONES_UNSIGNED_DTYPES) and 0 not in out_shape:
        err = NotImplementedError(f'"{_kernel_name("xor_sum", impl.device)}" not implemented for '
                                  f"'{impl.dtype.scalar_type_name}'")
    return Plan(out_shape, _uint64, impl.device, None, axis, _out_dtype, err)


def _out_dtype(plan, odt, xp):
    # the kernel's own check on its result, made before it runs
    raise RuntimeError(f"Expected result to be of dtype uint64, but got {odt.scalar_type_name}")


def hash_tensor_out(xp, plan, self, dim=(), keepdim=False, mode=0):
    if plan.impl_error is not None:
        return None     # the structured wrapper raises it after the out= checks
    impl = self._impl
    if impl.dtype.is_complex:   # only reached for an empty result
        return xp.zeros(plan.shape, _uint64.np)
    wide = _dt.float64 if impl.dtype.is_floating_point else _dt.int64
    bits = impl._array.astype(wide.np).view(_uint64.np)
    return xp.bitwise_xor.reduce(bits, axis=plan.extra)
