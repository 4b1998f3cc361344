"""Structured kernels: one meta function (shapes, dtypes, checks) per operator,
one impl per backend, shared by the functional, ``out=`` and in-place variants.

A meta function returns a ``Plan``; an impl returns the computed array, which
the generated wrapper hands to ``functional``/``out``/``inplace`` below.
"""
from __future__ import annotations

from numpy import asarray as _asarray, ndarray as _ndarray

from . import iterator as _it
from .tensor_new import empty_tensor, wrap, wrap_cpu as _wrap_cpu
from ..backends import backend_for
from ..core.device import CPU as _CPU
from ..core.geometry import contiguous_strides
from ..core.tls import state as _tls_state



class Plan:
    """What the meta function decided: output shape, dtype, device, and anything the impl needs.

    Made once per call, so a plain class with slots (no attribute dict).
    """

    __slots__ = ("shape", "dtype", "device", "strides", "extra", "out_dtype_rule", "impl_error", "args")

    def __init__(self, shape, dtype, device, strides=None, extra=None, out_dtype_rule=None, impl_error=None,
                 args=None):
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self.strides = strides
        self.extra = extra
        # How an ``out=`` tensor of another dtype is treated.  None: it must have
        # exactly ``dtype`` (the resize_out check of PyTorch's structured out=
        # wrappers).  Otherwise ``rule(plan, out_dtype, xp)``, which raises the op's
        # own error or (sum/mean/prod without dtype=, whose result dtype is out's)
        # returns the result computed in out's dtype (None: the result is cast to
        # it); ``xp`` is None on Meta, where only the checks run.
        self.out_dtype_rule = out_dtype_rule
        # An error PyTorch raises in the op's impl, so only after the output checks
        # (out= dtype, in-place shape); the impl returns None when this is set.
        self.impl_error = impl_error
        # What the rule needs to compute again (e.g. the op's own arguments), so
        # the meta function need not make a closure per call.
        self.args = args

    def __repr__(self):
        return (f"Plan(shape={self.shape!r}, dtype={self.dtype!r}, device={self.device!r}, strides={self.strides!r}, "
                f"extra={self.extra!r})")


# in-place structured ops that PyTorch does not run through TensorIterator; their
# wrappers check the result against self with check_inplace's own words
CHECK_INPLACE_OPS = frozenset({"addmm_", "addmv_", "baddbmm_", "addbmm_", "cumsum_", "cumprod_"})


def _out_dtype(plan: Plan, out_tensor, xp):
    """Apply ``plan.out_dtype_rule``; returns an array computed in out's dtype, or None."""
    odt = out_tensor._impl.dtype
    if odt is plan.dtype:
        return None
    rule = plan.out_dtype_rule
    if rule is None:
        raise RuntimeError(f"Expected out tensor to have dtype {plan.dtype.typemeta_name}, but got "
                           f"{odt.typemeta_name} instead")
    return rule(plan, odt, xp)


def _check_inplace(opname: str, plan: Plan, self):
    impl = self._impl
    if opname in CHECK_INPLACE_OPS:
        if impl.dtype is not plan.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {impl.dtype.typemeta_name} and output tensor "
                               f"dtype {plan.dtype.typemeta_name} should match")
        if tuple(impl._array.shape) != tuple(plan.shape):
            raise RuntimeError(f"Bad in-place call: input tensor size {list(impl._array.shape)} and output tensor "
                               f"size {list(plan.shape)} should match")
    elif tuple(impl._array.shape) != tuple(plan.shape):
        raise RuntimeError(f"output with shape {list(impl._array.shape)} doesn't match the broadcast shape "
                           f"{list(plan.shape)}")


def _as_array(plan: Plan, r):
    """The impl's result as an array of the plan's dtype and shape (NumPy returns 0-d results as scalars)."""
    if type(r) is not _ndarray and plan.device.type == "cpu":
        r = _asarray(r)
    want = plan.dtype.np
    if r.dtype != want:
        r = r.astype(want)
    shape = plan.shape
    if r.shape != shape and tuple(r.shape) != tuple(shape):
        r = r.reshape(shape)
    return r


def functional(plan: Plan, r):
    if plan.impl_error is not None:
        raise plan.impl_error
    dtype = plan.dtype
    if plan.device is _CPU and not _tls_state().inference_mode:
        # the common case, made inline: a NumPy result already of the plan's dtype
        # and shape becomes the new tensor's array as it is
        if type(r) is not _ndarray:
            r = _asarray(r)
        shape = r.shape         # (each NumPy attribute read costs a generic lookup: read once)
        if r.dtype is not dtype.np or shape != plan.shape or (len(shape) > 1 and plan.strides is None
                                                              and (not r.flags.c_contiguous or 1 in shape)):
            r = _contiguous(plan, _as_array(plan, r))
        t = _wrap_cpu(r, dtype)
    else:
        t = wrap(_contiguous(plan, _as_array(plan, r)), dtype, plan.device)
    if plan.strides is not None and 0 in plan.shape:    # an empty array cannot tell its strides: the impl keeps them
        t._impl._strides = tuple(plan.strides)
    return t


def _contiguous(plan: Plan, r):
    if plan.strides is None and r.ndim > 1:
        xp = backend_for(plan.device).xp
        if not r.flags.c_contiguous:
            # NumPy reductions follow the input's memory order; ATen allocates contiguous
            r = xp.ascontiguousarray(r)
        elif 1 in r.shape:
            # NumPy's contiguity ignores the strides of size-1 dims; ATen's fresh outputs have row-major ones
            want = tuple(st * r.itemsize for st in contiguous_strides(r.shape))
            if r.strides != want:
                r = xp.lib.stride_tricks.as_strided(r, r.shape, want)
    return r


# PyTorch's reductions build their TensorIterator without the memory-overlap check and bmm fills its out=
# directly, so these write into an expanded out= (mean, a sum and then an in-place division, and mm/addmm do check)
OUT_OVERLAP_UNCHECKED = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin", "bmm"})


# ops whose out= may not share any memory with these inputs (PyTorch's assert_no_overlap in their meta); the
# meta function puts the inputs in ``plan.args``
OUT_NO_OVERLAP = frozenset({"gather"})


def out(opname: str, plan: Plan, r, out_tensor):
    _it.check_out_device(plan.device, out_tensor._impl)
    if opname in OUT_NO_OVERLAP:
        _it.check_no_overlap(out_tensor._impl, [t._impl for t in plan.args])
    if plan.impl_error is not None:
        meta_out(opname, plan, out_tensor)   # raises it after the output checks
    if out_tensor._impl.dtype is not plan.dtype:
        r2 = _out_dtype(plan, out_tensor, backend_for(plan.device).xp)
        plan = Plan(plan.shape, out_tensor._impl.dtype, plan.device, plan.strides, plan.extra, None, None, plan.args)
        if r2 is not None:
            r = r2
    return _it.write_out(opname, out_tensor, _as_array(plan, r), plan.dtype,
                         check_overlap=opname not in OUT_OVERLAP_UNCHECKED)


def _inplace_dtype(opname: str, plan: Plan, self, xp):
    """An in-place scan without ``dtype=`` runs in self's dtype (its out= rule, self being the output)."""
    odt = self._impl.dtype
    if odt is plan.dtype or plan.out_dtype_rule is None or opname not in CHECK_INPLACE_OPS:
        return plan, None
    r = plan.out_dtype_rule(plan, odt, xp)
    return Plan(plan.shape, odt, plan.device, plan.strides, plan.extra, None, plan.impl_error, plan.args), r


def inplace(opname: str, plan: Plan, r, self):
    plan, r2 = _inplace_dtype(opname, plan, self, backend_for(plan.device).xp)
    if r2 is not None:
        r = r2
    _check_inplace(opname, plan, self)
    if plan.impl_error is not None:
        raise plan.impl_error
    return _it.write_out(opname, self, _as_array(plan, r), plan.dtype, inplace=True)


def meta_functional(plan: Plan):
    if plan.impl_error is not None:
        raise plan.impl_error
    return empty_tensor(plan.shape, plan.dtype, plan.device, plan.strides)


def meta_out(opname: str, plan: Plan, out_tensor):
    _it.check_out_device(plan.device, out_tensor._impl)
    if plan.dtype is not out_tensor._impl.dtype:
        _out_dtype(plan, out_tensor, None)
    _it.resize_out(out_tensor, plan.shape)
    if plan.impl_error is not None:
        raise plan.impl_error
    return out_tensor


def meta_inplace(opname: str, plan: Plan, self):
    plan, _ = _inplace_dtype(opname, plan, self, None)
    _check_inplace(opname, plan, self)
    if plan.impl_error is not None:
        raise plan.impl_error
    return self
