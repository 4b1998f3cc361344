"""Reductions: sum, mean, prod, amax/amin, argmax/argmin.

Each structured op has a meta function (dims, result shape and dtype, PyTorch's
checks, no data) and one impl over an array namespace ``xp``.  The meta's
``Plan.extra`` carries the ``axis`` argument for the namespace's reduction
(``None`` means every dim).  float16/bfloat16 accumulate in float32 and round
once (prod excepted: ATen multiplies in the result dtype); integer and bool sums
and products accumulate in int64.
"""
from __future__ import annotations

import warnings

import numpy as _np

from ...core import dtype as _dt
from ...core.promotion import can_cast
from ..at import at
from ..structured import Plan
from ..tensor_new import wrap_cpu as _wrap_cpu
from ...core.device import CPU as _CPU
from ..view_geometry import wrap_dim
from .. import iterator as _it

_int64 = _dt.int64
_float32 = _dt.float32


# --------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------

def _reduce_dims(dim, ndim):
    """Wrapped dims of an ``int[]?`` dim argument; ``None`` when every dim reduces.

    Every dim is wrapped before duplicates are looked for, as make_dim_mask does,
    so an out-of-range dim wins over a repeated one.
    """
    if dim is None:
        return None
    if type(dim) is int:
        dim = (dim,)
    elif not dim:
        return None
    if len(dim) == 1:
        return (wrap_dim(dim[0], ndim),)
    wrapped = [wrap_dim(d, ndim) for d in dim]
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    wrapped.sort()
    return tuple(wrapped)


def _reduced_shape(shape, dims, keepdim):
    """Result shape; ``dims`` None reduces all.  Also returns the ``axis`` for xp."""
    if not shape:
        return (), None
    if dims is None:
        return ((1,) * len(shape) if keepdim else ()), None
    if len(dims) == 1:
        d = dims[0]
        return (shape[:d] + (1,) + shape[d + 1:] if keepdim else shape[:d] + shape[d + 1:]), dims
    if keepdim:
        out = list(shape)
        for d in dims:
            out[d] = 1
        return tuple(out), dims
    return tuple(s for i, s in enumerate(shape) if i not in dims), dims


def _int_or_float_result(self_dtype, dtype):
    """sum/prod's result dtype: ``dtype`` if given, bool and integers widen to int64."""
    if dtype is not None:
        return dtype
    return _int64 if self_dtype.category < 2 else self_dtype


def _acc_np(out_dtype):
    """The dtype a sum accumulates in, for a given result dtype."""
    if out_dtype.category < 2:
        return _int64.np
    if out_dtype is _dt.float16 or out_dtype is _dt.bfloat16:
        return _float32.np
    return out_dtype.np


def _prod_acc_np(out_dtype):
    """ATen's CPU prod multiplies in the result dtype itself, float16/bfloat16 included
    (see prod_impl); integers wrap the same in int64."""
    if out_dtype.category < 2:
        return _int64.np
    return out_dtype.np


_warned_complex_to_real = [False]


def _cast(xp, a, src, dst):
    """Convert the input to ``dst`` first, as a reduction with ``dtype=`` does."""
    if dst is src:
        return a
    if src.is_complex and not dst.is_complex:
        if not _warned_complex_to_real[0]:   # TORCH_WARN_ONCE
            _warned_complex_to_real[0] = True
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        a = xp.real(a)
    if dst is _dt.uint8 and src.category >= 2:
        a = a.astype(_int64.np)   # c10 converts floats to uint8 through int64 (wrapping negatives)
    return a.astype(dst.np)


def _numel_of(shape, dims):
    n = 1
    if dims is None:
        for s in shape:
            n *= s
    else:
        for d in dims:
            n *= shape[d]
    return n


def _kernel_name(base, device):
    return f"{base}_cuda" if device.type == "cuda" else f"{base}_cpu"


# --------------------------------------------------------------------------
# sum
# --------------------------------------------------------------------------

def _in_out_dtype(plan, odt, xp):
    """The ``out=`` dtype rule of sum/mean/prod without ``dtype=``: compute in out's dtype
    (the input cast to it first).  ``plan.args`` is (the op's impl, self, dim, keepdim)."""
    if xp is not None:
        impl_fn, self, dim, keepdim = plan.args
        return impl_fn(xp, _retyped(plan, odt), self, dim, keepdim, odt)


def meta_sum(self, dim, keepdim=False, dtype=None):
    impl = self._impl
    shape = impl._array.shape
    if dim is None and dtype is None:
        # sum(): every dim, the result dtype from the input's alone
        dt = impl.dtype
        if dt.category < 2:
            dt = _int64
        return Plan((1,) * len(shape) if keepdim else (), dt, impl.device, None, None, _in_out_dtype, None,
                    (sum_impl, self, dim, keepdim))
    dims = _reduce_dims(dim, len(shape))
    out_shape, axis = _reduced_shape(shape, dims, keepdim)
    rule = None if dtype is not None else _in_out_dtype
    return Plan(out_shape, _int_or_float_result(impl.dtype, dtype), impl.device, None, axis, rule, None,
                (sum_impl, self, dim, keepdim))


def _retyped(plan, dtype):
    return Plan(plan.shape, dtype, plan.device, plan.strides, plan.extra, None, None, plan.args)


_f32_np = _float32.np
_c64_np = _dt.complex64.np
_WIDER = {_f32_np: _dt.float64.np, _c64_np: _dt.complex128.np}
_ADD_REDUCE: dict = {}     # array namespace -> its add.reduce (or sum)
_np_add_reduce = _np.add.reduce


def _float_sum(xp, a, axis, acc):
    """xp.sum, with float32 sums kept as accurate as ATen's cascade sum.

    NumPy sums pairwise only along a contiguous innermost run; over any other
    axis it adds sequentially, whose error grows with the count.  Those sums of
    many terms accumulate in float64 instead and round once.
    """
    if xp is _np and ((acc is not _f32_np and acc is not _c64_np) or a.size <= 512):
        return _np_add_reduce(a, axis, acc)     # short or float64 sums: nothing to widen
    if acc in _WIDER and a.size > 512:
        nd = a.ndim
        inner = axis is None or axis[-1] == nd - 1 and axis == tuple(range(nd - len(axis), nd))
        if not (inner and a.flags.c_contiguous):
            return xp.sum(a, axis=axis, dtype=_WIDER[acc]).astype(acc)
    reduce = _ADD_REDUCE.get(xp)
    if reduce is None:      # NumPy's ufunc method skips np.sum's Python wrapper
        reduce = _ADD_REDUCE[xp] = getattr(xp.add, "reduce", None) or \
            (lambda a, axis=None, dtype=None, _xp=xp: _xp.sum(a, axis=axis, dtype=dtype))
    return reduce(a, axis=axis, dtype=acc)


def sum_impl(xp, plan, self, dim, keepdim=False, dtype=None):
    impl = self._impl
    a = impl._array
    if dtype is not None:
        a = _cast(xp, a, impl.dtype, dtype)
    acc = _acc_np(plan.dtype)
    if xp is _np and ((acc is not _f32_np and acc is not _c64_np) or a.size <= 512):
        return _np_add_reduce(a, plan.extra, acc)      # what _float_sum does here, one call less
    return _float_sum(xp, a, plan.extra, acc)


def sum(ks, self, dtype=None):  # noqa: A001 - the operator's name
    """PyTorch's composite: ``sum.dim_IntList`` over every dim.  A CPU tensor of a few elements (or
    not float32/complex64, whose long sums need ``_float_sum``'s care) is summed here with the same
    NumPy call its CPU kernel would make: the whole-tensor sum is the commonest reduction, and the
    second dispatch and plan cost more than the sum."""
    impl = self._impl
    if dtype is None and impl.device is _CPU:
        out, acc, out_np, most = _SUM_TYPES.get(impl.dtype) or _sum_types(impl.dtype)
        a = impl._array
        if a.size <= most:
            if acc is out_np:   # NumPy adds into the 0-d array the tensor holds: no scalar made and converted
                return _wrap_cpu(_np_add_reduce(a, None, acc, _np_empty((), acc)), out)
            # float16/bfloat16: a float32 scalar, which np.array rounds once into the 0-d result (cheaper
            # than astype)
            return _wrap_cpu(_np_array(_np_add_reduce(a, None, acc), out_np), out)
    return at.sum_dim_IntList(self, None, False, dtype)


# input dtype -> (result dtype, the NumPy dtype it adds in, the result's NumPy dtype, the most elements sum()
# adds itself: float32/complex64 sums longer than that need _float_sum), filled on each dtype's first sum: one
# lookup instead of _acc_np's tests
_SUM_TYPES: dict = {}
_np_array = _np.array
_np_empty = _np.empty


def _sum_types(dt):
    out = _int64 if dt.category < 2 else dt
    acc = _acc_np(out)
    most = 512 if acc is _f32_np or acc is _c64_np else 1 << 63
    t = _SUM_TYPES[dt] = (out, acc, out.np, most)
    return t


# --------------------------------------------------------------------------
# mean
# --------------------------------------------------------------------------

def meta_mean(self, dim, keepdim=False, dtype=None):
    impl = self._impl
    if dtype is None:
        out_dtype = impl.dtype
        if out_dtype.category < 2:
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {out_dtype.scalar_type_name}")
    else:
        out_dtype = dtype
        if dtype.category < 2:
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {dtype.scalar_type_name}")
    shape = impl._array.shape
    if dim is None:
        out_shape, axis = ((1,) * len(shape) if keepdim else ()), None
    else:
        out_shape, axis = _reduced_shape(shape, _reduce_dims(dim, len(shape)), keepdim)
    # mean.out without dtype= computes in out's dtype: sum_out(out, ...).div_(n),
    # whose true division cannot write an integral or bool out
    rule = None if dtype is not None else _mean_out_rule
    return Plan(out_shape, out_dtype, impl.device, None, axis, rule, None, (mean_impl, self, dim, keepdim))


def _mean_out_rule(plan, odt, xp):
    if odt.category < 2:
        raise RuntimeError(f"result type {_dt.get_default_dtype().scalar_type_name} can't be cast to the "
                           f"desired output type {odt.scalar_type_name}")
    return _in_out_dtype(plan, odt, xp)


def mean_impl(xp, plan, self, dim, keepdim=False, dtype=None):
    # PyTorch's CPU mean: sum in the result dtype (float32 for float16/bfloat16, the
    # input converted to it first), divide by the count, round once.
    impl = self._impl
    a = impl._array
    out_dtype = plan.dtype
    sum_dtype = _float32 if (out_dtype is _dt.float16 or out_dtype is _dt.bfloat16) else out_dtype
    if sum_dtype is not impl.dtype:
        a = _cast(xp, a, impl.dtype, sum_dtype)
    axis = plan.extra
    s = _float_sum(xp, a, axis, sum_dtype.np)
    n = a.size if axis is None else _numel_of(a.shape, axis)
    div = sum_dtype._real.np.type(n)
    if n == 0 and xp.__name__ == "numpy":
        with xp.errstate(invalid="ignore", divide="ignore"):
            return xp.divide(s, div)
    return xp.divide(s, div)


def mean(self, dtype=None):
    return at.mean_dim(self, None, False, dtype)


def mean_dtype_out(self, dtype=None, out=None):
    """``mean(t, out=...)``: the mean over every dimension, written as mean.out writes it (after PyTorch's
    own check that the input's dtype casts to ``out``'s)."""
    if not can_cast(self._impl.dtype, out._impl.dtype):
        raise RuntimeError("mean.dtype_out(): input types can't be cast to the desired output type "
                           f"{out._impl.dtype.scalar_type_name}")
    return at.mean_out(self, None, False, dtype, out)


# --------------------------------------------------------------------------
# prod
# --------------------------------------------------------------------------

def meta_prod(self, dim, keepdim=False, dtype=None):
    impl = self._impl
    shape = impl._array.shape
    d = wrap_dim(dim, len(shape))
    out_shape, axis = _reduced_shape(shape, (d,), keepdim)
    rule = None if dtype is not None else _in_out_dtype
    return Plan(out_shape, _int_or_float_result(impl.dtype, dtype), impl.device, None, axis, rule, None,
                (prod_impl, self, dim, keepdim))


def prod_impl(xp, plan, self, dim, keepdim=False, dtype=None):
    impl = self._impl
    a = impl._array
    if dtype is not None:
        a = _cast(xp, a, impl.dtype, dtype)
    out = plan.dtype
    if (out is _dt.float16 or out is _dt.bfloat16) and xp.__name__ == "numpy":
        # NumPy's float16 reduce keeps a float32 accumulator; accumulate() rounds
        # every partial product, which is what ATen's sequential loop does.
        axis = plan.extra
        if axis is None:
            a = a.reshape(-1)
            axis = 0
        else:
            axis = axis[0]
        if a.shape[axis] == 0:
            return xp.ones(plan.shape, dtype=out.np)
        with xp.errstate(over="ignore", invalid="ignore"):
            return xp.multiply.accumulate(a, axis=axis, dtype=out.np).take(-1, axis=axis)
    return xp.prod(a, axis=plan.extra, dtype=_prod_acc_np(out))


def prod(self, dtype=None):
    return at.prod_dim_int(at.reshape(self, (-1,)), 0, False, dtype)


# --------------------------------------------------------------------------
# amax / amin
# --------------------------------------------------------------------------

def zero_numel_check_dims(where: str, shape, dim) -> None:
    """ATen's zero_numel_check_dims for a reduction of an empty input (``where``: "amax()", "hash_tensor"):
    the dims must be given and each of non-zero size; it runs before the dims are wrapped and deduplicated."""
    if dim is None or (type(dim) is not int and not dim):
        raise RuntimeError(f"{where}: Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    for d in ((dim,) if type(dim) is int else dim):
        if shape[wrap_dim(d, len(shape))] == 0:
            raise IndexError(f"{where}: Expected reduction dim {d} to have non-zero size.")


def _meta_minmax(name, kernel, self, dim, keepdim):
    impl = self._impl
    arr = impl._array
    shape = arr.shape
    if arr.size == 0:
        zero_numel_check_dims(f"{name}()", shape, dim)
    dims = _reduce_dims(dim, len(shape))
    out_shape, axis = _reduced_shape(shape, dims, keepdim)
    err = None
    if impl.dtype.is_complex and 0 not in out_shape:   # the kernel is not reached for an empty result
        # raised by the kernel, so after out='s dtype check and resize
        err = NotImplementedError(f'"{_kernel_name(kernel, impl.device)}" not implemented for '
                                  f"'{impl.dtype.scalar_type_name}'")
    return Plan(out_shape, impl.dtype, impl.device, None, axis, _minmax_out_dtype, err)


def _minmax_out_dtype(plan, odt, xp):
    # amax/amin's meta compares out with the input itself
    raise RuntimeError(f"Expected the dtype for input and out to match, but got {plan.dtype.scalar_type_name} for "
                       f"input's dtype and {odt.scalar_type_name} for out's dtype.")


def meta_amax(self, dim=(), keepdim=False):
    return _meta_minmax("amax", "max_values", self, dim, keepdim)


def meta_amin(self, dim=(), keepdim=False):
    return _meta_minmax("amin", "min_values", self, dim, keepdim)


def _minmax_input(impl):
    a = impl._array
    if impl.dtype is _dt.bfloat16:
        a = a.astype(_float32.np)   # exact; keeps NaN ordering independent of ml_dtypes' loops
    return a


def amax_impl(xp, plan, self, dim=(), keepdim=False):
    _it.refuse_barebones_unsigned("max_values_cpu", self._impl)
    if plan.impl_error is not None:
        return None
    return xp.max(_minmax_input(self._impl), axis=plan.extra)


def amin_impl(xp, plan, self, dim=(), keepdim=False):
    _it.refuse_barebones_unsigned("min_values_cpu", self._impl)
    if plan.impl_error is not None:
        return None
    return xp.min(_minmax_input(self._impl), axis=plan.extra)


# --------------------------------------------------------------------------
# argmax / argmin
# --------------------------------------------------------------------------

def _meta_arg(name, self, dim, keepdim):
    impl = self._impl
    dt = impl.dtype
    if dt is _dt.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dt.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    arr = impl._array
    shape = arr.shape
    ndim = len(shape)
    if dim is None:
        if arr.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        out_shape = (1,) * ndim if keepdim else ()
        return Plan(out_shape, _int64, impl.device, None, None)
    d = wrap_dim(dim, ndim)
    if ndim == 0:
        return Plan((), _int64, impl.device, None, None)
    if shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if keepdim:
        out_shape = shape[:d] + (1,) + shape[d + 1:]
    else:
        out_shape = shape[:d] + shape[d + 1:]
    return Plan(out_shape, _int64, impl.device, None, d)


def meta_argmax(self, dim=None, keepdim=False):
    return _meta_arg("argmax", self, dim, keepdim)


def meta_argmin(self, dim=None, keepdim=False):
    return _meta_arg("argmin", self, dim, keepdim)


def _arg_input(impl):
    a = impl._array
    if impl.dtype is _dt.bfloat16 or impl.dtype is _dt.float16:
        a = a.astype(_float32.np)   # exact; NumPy's float32 loops return the first NaN, as PyTorch does
    return a


def argmax_impl(xp, plan, self, dim=None, keepdim=False):
    _it.refuse_barebones_unsigned("argmax_cpu", self._impl)
    a = _arg_input(self._impl)
    if a.ndim == 0:
        return xp.zeros((), dtype=_int64.np)
    return xp.argmax(a, axis=plan.extra)


def argmin_impl(xp, plan, self, dim=None, keepdim=False):
    _it.refuse_barebones_unsigned("argmin_cpu", self._impl)
    a = _arg_input(self._impl)
    if a.ndim == 0:
        return xp.zeros((), dtype=_int64.np)
    return xp.argmin(a, axis=plan.extra)
