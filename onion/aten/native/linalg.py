"""Matrix products: mm, bmm, addmm (structured) and the composites built on them
(matmul, linear).

The meta functions hold every check PyTorch's CPU path makes, in PyTorch's
order and with its texts, including the ones ATen makes inside its kernels
(dtype agreement, Bool, Scalar overflow), so meta and fake tensors fail where
a CPU tensor would.  The impls compute in the op-math dtype: float32 for
float16/bfloat16 (rounded once by the caller), int64 for integer types (which
wraps exactly as the narrow type would).
"""
from __future__ import annotations

import math

from numpy import ndarray as _ndarray

from ...core import dtype as _dt
from ...core.device import CPU as _CPU
from ...core.promotion import DIMENSIONED, WRAPPED, can_cast, promote_pair, scalar_dtype
from ..structured import Plan
from ..tensor_new import wrap_cpu
from ..view_geometry import broadcast_pair_for_op, expand as _expand_geometry, legacy_type_str, reshape_is_view
from ..at import at
from ..iterator import check_devices, check_out_device, device_mismatch, resize_out
from ...core.tls import state as _tls_state
from .. import iterator as _it

_LOW = (_dt.float16, _dt.bfloat16)
_float32 = _dt.float32
_float64 = _dt.float64
_f32_np = _float32.np

# c10::checked_convert: the C++ type names and the limits of each op-math type
_CONVERT_NAME = {
    _dt.uint8: "uint8_t", _dt.int8: "int8_t", _dt.int16: "int16_t", _dt.int32: "int", _dt.int64: "int64_t",
    _dt.float32: "float", _dt.float64: "double", _dt.complex64: "c10::complex<float>",
    _dt.complex128: "c10::complex<double>",
}
_INT_RANGE = {
    _dt.uint8: (0, 255), _dt.int8: (-128, 127), _dt.int16: (-(1 << 15), (1 << 15) - 1),
    _dt.int32: (-(1 << 31), (1 << 31) - 1), _dt.int64: (-(1 << 63), (1 << 63) - 1),
}
_FLT_MAX = 3.4028234663852886e38


def _bool_not_implemented(kernel):
    return NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _compute_np(dtype):
    """The dtype a product is accumulated in."""
    if dtype.category < 2:
        return _dt.int64.np
    if dtype is _dt.float16 or dtype is _dt.bfloat16:
        return _dt.float32.np
    return dtype.np


def _real_overflows(v, opdt):
    """c10::overflows<To, double or int64>(v) for a real ``v`` and a real or complex ``opdt``."""
    if opdt.is_complex:
        opdt = opdt.to_real()
    if opdt.is_floating_point:
        if isinstance(v, int) or math.isinf(v):
            return False
        return opdt is _dt.float32 and (v < -_FLT_MAX or v > _FLT_MAX)
    lo, hi = _INT_RANGE[opdt]
    if isinstance(v, int):
        if lo == 0 and v < 0:
            return -v > hi     # unsigned types take negative values modulo 2**n
        return v < lo or v > hi
    if v != v:
        return True
    return v < lo or v > hi


def _checked_scalar(v, dtype):
    """Scalar::to<opmath_t>(): PyTorch's conversion of alpha/beta, with its overflow error."""
    opdt = _dt.float32 if dtype in _LOW else dtype
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, complex):
        bad = (not opdt.is_complex and v.imag != 0) or _real_overflows(v.real, opdt) or \
            _real_overflows(v.imag, opdt)
        if bad:
            raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAME[opdt]} without overflow")
        return v if opdt.is_complex else (v.real if opdt.is_floating_point else int(v.real))
    if _real_overflows(v, opdt):
        raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAME[opdt]} without overflow")
    if opdt.category < 2:
        return int(v)
    return v


# --------------------------------------------------------------------------
# mm
# --------------------------------------------------------------------------

def meta_mm(self, mat2):
    a = self._impl
    b = mat2._impl
    sa = a._array.shape
    sb = b._array.shape
    if len(sa) != 2:
        raise RuntimeError("self must be a matrix")
    if len(sb) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
    dev = a.device
    if b.device is not dev and b.device != dev:
        raise device_mismatch(dev, b.device)
    dt = a.dtype
    if dt is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {dt.typemeta_name} != "
                           f"{b.dtype.typemeta_name}")
    if dt is _dt.bool and sa[1] != 0 and sa[0] != 0 and sb[1] != 0:
        raise _bool_not_implemented("addmm_impl_cpu_")
    return Plan((sa[0], sb[1]), dt, dev)


# dtype -> whether mm accumulates it in float32 and rounds once (mm_impl's second road); the dtypes fast_mm takes
_MM_FAST = {_float32: False, _float64: False, _dt.bfloat16: True, _dt.float16: True}


def fast_mm(self, mat2):
    """mm's common case without a plan: two CPU matrices of one floating dtype (not complex), no dim of size
    0 or 1: one BLAS gemm through ``dot`` (bfloat16/float16 accumulated in float32 and rounded once), whose
    fresh row-major result ``functional`` keeps as it is; None for every other call.  The layouts need no
    test: ``dot`` copies an operand that is neither row- nor column-major before the gemm, as ATen's
    ``addmm_impl_cpu_`` does (``matmul``, mm_impl's general road, would sum such operands in another order)."""
    a = self._impl
    b = mat2._impl
    dt = a.dtype
    half = _MM_FAST.get(dt)
    if half is None or b.dtype is not dt or a.device is not _CPU or b.device is not _CPU:
        return None
    x = a._array
    y = b._array
    try:
        rows, k = x.shape
        k2, cols = y.shape
    except ValueError:      # not two matrices: meta_mm's errors
        return None
    if k != k2 or rows < 2 or k < 2 or cols < 2 or type(x) is not _ndarray or type(y) is not _ndarray:
        return None
    if half:
        if rows * k * cols <= 512:
            # small: the dtype's own ``dot`` (NumPy's float16, ml_dtypes' bfloat16) also sums each element in
            # float32 in order and rounds once, without the two casts and the cast back (4x4: 1.1 -> 0.5 us)
            return wrap_cpu(x.dot(y), dt)
        return wrap_cpu(x.astype(_f32_np).dot(y.astype(_f32_np)).astype(dt.np), dt)
    return wrap_cpu(x.dot(y), dt)


def mm_impl(xp, plan, self, mat2):
    a = self._impl._array
    dt = plan.dtype
    if (dt is _float32 or dt is _float64) and type(a) is _ndarray:
        rows, k = a.shape
        if rows > 1 and k > 1 and plan.shape[1] > 1:
            b = mat2._impl._array
            if a.flags.forc and b.flags.forc:
                # ndarray.dot calls the same BLAS gemm (syrk for a matrix times its
                # transpose) that np.matmul picks for these layouts, with less overhead
                return a.dot(b)
    elif (dt is _dt.bfloat16 or dt is _dt.float16) and type(a) is _ndarray:
        rows, k = a.shape
        if rows > 1 and k > 1 and plan.shape[1] > 1:
            b = mat2._impl._array
            if a.flags.forc and b.flags.forc:     # accumulated in float32 (PyTorch's opmath), rounded once
                return a.astype(_float32.np).dot(b.astype(_float32.np)).astype(dt.np)
    _it.refuse_barebones_unsigned("addmm_impl_cpu_", self._impl)     # (after the float road: not its dtypes)
    if a.shape[1] == 0 or a.shape[0] == 0 or plan.shape[1] == 0:
        return xp.zeros(plan.shape, dtype=plan.dtype.np)
    ct = _compute_np(plan.dtype)
    return xp.matmul(a.astype(ct, copy=False), mat2._impl._array.astype(ct, copy=False))


# --------------------------------------------------------------------------
# bmm
# --------------------------------------------------------------------------

def _batch_items_contiguous_or_transposed(impl):
    sizes = impl._array.shape
    strides = impl.strides
    return ((strides[2] == 1 and (sizes[1] == 1 or strides[1] >= sizes[2]))
            or (strides[1] == 1 and (sizes[2] == 1 or strides[2] >= sizes[1])))


def meta_bmm(self, mat2):
    a = self._impl
    b = mat2._impl
    sa = a._array.shape
    sb = b._array.shape
    if len(sa) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(sb) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, rows, k = sa
    if sb[0] != bs or sb[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] "
                           f"but got: [{sb[0]}, {sb[1]}].")
    if b.device is not a.device and b.device != a.device:
        raise device_mismatch(a.device, b.device)
    cols = sb[2]
    d1 = a.dtype
    d2 = b.dtype
    if bs * rows * cols != 0 and k != 0 and (d1 is not d2 or d1 is _dt.bool):
        # ATen's bmm picks a path by size and dtype; each fails with its own words
        if k * rows * cols < 400:
            if d1 is _dt.bool:
                raise _bool_not_implemented("bmm")
            raise RuntimeError(f"expected scalar type {d1.scalar_type_name} but found {d2.scalar_type_name}")
        gemm = ((d2.is_floating_point and d2 not in _LOW) or d2.is_complex) and \
            _batch_items_contiguous_or_transposed(a) and _batch_items_contiguous_or_transposed(b)
        if gemm and d1 is not d2:
            raise RuntimeError(f"expected scalar type {d2.scalar_type_name} but found {d1.scalar_type_name}")
        if d1 is not d2:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {d1.typemeta_name} != "
                               f"{d2.typemeta_name}")
        raise _bool_not_implemented("addmm_impl_cpu_")
    return Plan((bs, rows, cols), d2, b.device)


def bmm_impl(xp, plan, self, mat2):
    a = self._impl._array
    if a.shape[2] == 0 or 0 in plan.shape:
        return xp.zeros(plan.shape, dtype=plan.dtype.np)
    ct = _compute_np(plan.dtype)
    return xp.matmul(a.astype(ct, copy=False), mat2._impl._array.astype(ct, copy=False))


# --------------------------------------------------------------------------
# addmm
# --------------------------------------------------------------------------

def meta_addmm(self, mat1, mat2, beta=1, alpha=1):
    s = self._impl
    a = mat1._impl
    b = mat2._impl
    dev = a.device
    if b.device is not dev or s.device is not dev:
        # PyTorch's order: the matrices, then self, which may be a CPU scalar next to them
        dev = check_devices("addmm", (a, b, s))
    dt = s.dtype
    if dt is not b.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {dt.scalar_type_name} and "
                           f"{b.dtype.scalar_type_name}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {a.dtype.scalar_type_name} and "
                           f"{b.dtype.scalar_type_name}")
    sa = a._array.shape
    sb = b._array.shape
    if len(sa) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {len(sa)}-D tensor")
    if len(sb) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(sb)}-D tensor")
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
    shape = (sa[0], sb[1])
    try:
        extra = _addmm_impl_checks(s, sa, shape, dt, beta, alpha)
    except (RuntimeError, NotImplementedError) as e:
        # ATen raises these in addmm_out_cpu, after the out= / in-place checks
        return Plan(shape, dt, dev, None, None, None, e)
    return Plan(shape, dt, dev, None, extra)


def _addmm_impl_checks(s, sa, shape, dt, beta, alpha):
    """What addmm_out_cpu checks and decides once the output exists: (mode, beta, alpha)."""
    ss = s._array.shape
    if ss != shape and not (len(ss) == 1 and ss[0] == shape[1]):
        _expand_geometry(ss, (0,) * len(ss), 0, shape, legacy_type_str(dt.scalar_type_name, s.device.type))
    if shape[0] == 0 or shape[1] == 0:
        mode = None
    elif sa[1] == 0:
        if beta == 0:
            mode = "zero"
        else:
            # result.mul_(beta): beta must not promote the result's dtype
            r = promote_pair(dt, DIMENSIONED, scalar_dtype(beta), WRAPPED)
            if r is not dt and not can_cast(r, dt):
                # PyTorch promotes float16 with a complex number to ComplexHalf, which onion lacks
                name = "ComplexHalf" if dt is _dt.float16 and r.is_complex else r.scalar_type_name
                raise RuntimeError(f"result type {name} can't be cast to the desired output "
                                   f"type {dt.scalar_type_name}")
            mode = "scale"
    else:
        if dt is _dt.bool:
            raise _bool_not_implemented("addmm_impl_cpu_")
        if not (type(alpha) is int and type(beta) is int and alpha in (0, 1) and beta in (0, 1)):
            alpha = _checked_scalar(alpha, dt)
            beta = _checked_scalar(beta, dt)
        mode = "gemm"
    return mode, beta, alpha


def addmm_impl(xp, plan, self, mat1, mat2, beta=1, alpha=1):
    if plan.impl_error is not None:
        return None
    mode, beta, alpha = plan.extra
    dt = plan.dtype
    shape = plan.shape
    if mode is None or mode == "zero":
        return xp.zeros(shape, dtype=dt.np)
    s = self._impl._array
    ct = _compute_np(dt)
    if mode == "scale":
        if dt is _dt.bool:
            return xp.broadcast_to(xp.logical_and(s, bool(beta)), shape)
        if dt in _LOW:
            beta = dt.np.type(beta)   # mul_ rounds the scalar to the tensor's dtype first
        return xp.broadcast_to(xp.multiply(s.astype(ct, copy=False), ct.type(beta)), shape)
    res = None
    if alpha != 0 or dt in _LOW:
        # BLAS does not read mat1/mat2 when alpha == 0 (so NaN there does not
        # reach the result); the float16/bfloat16 kernels do.
        res = xp.matmul(mat1._impl._array.astype(ct, copy=False), mat2._impl._array.astype(ct, copy=False))
        if alpha != 1:
            res = xp.multiply(res, ct.type(alpha))
    if beta != 0:
        # beta == 0 means self is not read at all (NaN in it is ignored)
        sb = s.astype(ct, copy=False)
        if beta != 1:
            sb = xp.multiply(sb, ct.type(beta))
        res = xp.broadcast_to(sb, shape) if res is None else xp.add(res, sb)
    if res is None:
        return xp.zeros(shape, dtype=dt.np)
    return res


# --------------------------------------------------------------------------
# matmul (CompositeImplicitAutograd)
# --------------------------------------------------------------------------

def _dot(a, b):
    """at::dot, composed of mm (onion has no dot operator)."""
    ai = a._impl
    bi = b._impl
    if ai.dtype is not bi.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {ai.dtype.scalar_type_name} "
                           f"and {bi.dtype.scalar_type_name}")
    na = ai._array.size
    nb = bi._array.size
    if na != nb:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{na}] and src [{nb}] to have the same "
                           f"number of elements, but got {na} and {nb} elements respectively")
    if ai.dtype is _dt.bool:
        raise _bool_not_implemented("dot")
    return at._unsafe_view(at.mm(at.unsqueeze(a, 0), at.unsqueeze(b, 1)), ())


def _mv_checks(mat, vec, result_dtype=None):
    mi = mat._impl
    vi = vec._impl
    sm = mi._array.shape
    n = vi._array.shape[0]
    if sm[1] != n:
        raise RuntimeError(f"size mismatch, got input ({sm[0]}), mat ({sm[0]}x{sm[1]}), vec ({n})")
    rd = vi.dtype if result_dtype is None else result_dtype
    if not (rd is mi.dtype and mi.dtype is vi.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {rd.scalar_type_name}, "
                           f"{mi.dtype.scalar_type_name}, and {vi.dtype.scalar_type_name}")
    if mi.dtype is _dt.bool and sm[0] != 0 and n != 0:
        raise _bool_not_implemented("addmv_impl_cpu")


def _mv(mat, vec):
    """at::mv, composed of mm (onion has no mv operator)."""
    _mv_checks(mat, vec)
    return at._unsafe_view(at.mm(mat, at.unsqueeze(vec, 1)), (mat._impl._array.shape[0],))


def _should_fold(t1, t2, has_out):
    i1 = t1._impl
    i2 = t2._impl
    d1 = i1._array.ndim
    d2 = i2._array.ndim
    t1_larger = d1 >= d2
    if t1_larger:
        big = i1
        dim_small = d2
        small_grad = i2.requires_grad
    else:
        big = i2
        dim_small = d1
        small_grad = i1.requires_grad
    dim_big = big._array.ndim
    if not (dim_big >= 3 and dim_small <= 2):
        return False
    if small_grad and not has_out:
        return True
    if d1 == 2:
        return False
    if big._array.size == 0:
        return True
    shape = list(big._array.shape)
    strides = list(big.strides)
    if not t1_larger:   # the larger tensor enters transposed (mT)
        shape[-1], shape[-2] = shape[-2], shape[-1]
        strides[-1], strides[-2] = strides[-2], strides[-1]
    for i in range(dim_big - 2):
        if strides[i] != strides[i + 1] * shape[i + 1]:
            return False
    return True


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _out_view(out, shape, inner_shape):
    """Resize ``out`` to ``shape``; a tensor of ``inner_shape`` writing into it, and whether it aliases."""
    resize_out(out, shape)
    impl = out._impl
    if reshape_is_view(impl._array.shape, impl.strides, inner_shape) is not None:
        return at.view(out, inner_shape), True
    return at.reshape(out, inner_shape), False


def _matmul_impl(out, tensor1, tensor2):
    i1 = tensor1._impl
    i2 = tensor2._impl
    dim1 = i1._array.ndim
    dim2 = i2._array.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D")
    has_out = out is not None
    if has_out:
        if _tls_state().grad_enabled and (i1.requires_grad or i2.requires_grad or out._impl.requires_grad):
            raise RuntimeError("matmul(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")

    if dim1 == 1 and dim2 == 1:
        if not has_out:
            return _dot(tensor1, tensor2)
        # dot_out: resize, check the dtype, then compute
        resize_out(out, ())
        if out._impl.dtype is not i1.dtype:
            raise RuntimeError(f"result dtype {out._impl.dtype.scalar_type_name} does not match input dtype "
                               f"{i1.dtype.scalar_type_name}")
        return _copy_into(out, _dot(tensor1, tensor2))
    if dim1 == 2 and dim2 == 1:
        if not has_out:
            return _mv(tensor1, tensor2)
        oi = out._impl
        on = oi._array.size
        if oi._array.ndim <= 1 and (on == i1._array.shape[0] or on == 1):
            # mv_out passes an out of the right size to addmv_out as its self as well
            _mv_checks(tensor1, tensor2, oi.dtype)
        r = _mv(tensor1, tensor2)
        if out._impl.dtype is not r._impl.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {r._impl.dtype.typemeta_name}, but got "
                               f"{out._impl.dtype.typemeta_name} instead")
        return _copy_into(out, r)
    if dim1 == 1 and dim2 == 2:
        m = i2._array.shape[1]
        if not has_out:
            return at._unsafe_view(at.mm(at.unsqueeze(tensor1, 0), tensor2), (m,))
        meta_mm(at.unsqueeze(tensor1, 0), tensor2)   # checks before out is touched
        view, aliased = _out_view(out, (m,), (1, m))
        at.mm_out(at.unsqueeze(tensor1, 0), tensor2, view)
        if not aliased:
            at.copy_(out, at.view(view, (m,)), False)
        return out
    if dim1 == 2 and dim2 == 2:
        if not has_out:
            return at.mm(tensor1, tensor2)
        return at.mm_out(tensor1, tensor2, out)

    if _should_fold(tensor1, tensor2, has_out):
        transpose = dim2 > dim1
        if transpose:
            t1 = at.transpose_int(tensor2, -2, -1)
            t2 = at.t(tensor1) if dim1 == 2 else tensor1
        else:
            t1 = tensor1
            t2 = tensor2
        sizes_1 = t1._impl._array.shape
        output_shape = tuple(sizes_1[:-1])
        folded_dim1 = _prod(output_shape)
        t2_is_matrix = t2._impl._array.ndim == 2
        if t2_is_matrix:
            output_shape = output_shape + (t2._impl._array.shape[1],)
        t1_folded = at.reshape(t1, (folded_dim1, sizes_1[-1]))
        if not has_out:
            if t2_is_matrix:
                output = at._unsafe_view(at.mm(t1_folded, t2), output_shape)
                return at.contiguous(at.transpose_int(output, -2, -1)) if transpose else output
            return at._unsafe_view(_mv(t1_folded, t2), output_shape)
        if t2_is_matrix:
            meta_mm(t1_folded, t2)
            view, aliased = _out_view(out, output_shape, (folded_dim1, t2._impl._array.shape[1]))
            at.mm_out(t1_folded, t2, view)
        else:
            _mv_checks(t1_folded, t2, out._impl.dtype)
            view, aliased = _out_view(out, output_shape, (folded_dim1,))
            at.copy_(view, _mv(t1_folded, t2), False)
        if not aliased:
            # as ATen does: copied without reshaping, so only broadcastable shapes get through
            at.copy_(out, view, False)
        return out

    # dim1 >= 3 or dim2 >= 3: broadcast the batch dims, fold them, bmm
    s1 = i1._array.shape
    s2 = i2._array.shape
    n = s1[-2] if dim1 > 1 else 1
    m1 = s1[-1]
    batch1 = tuple(s1[:max(dim1 - 2, 0)])
    m2 = s2[-2] if dim2 > 1 else s2[0]
    p = s2[-1] if dim2 > 1 else 1
    batch2 = tuple(s2[:max(dim2 - 2, 0)])

    if dim1 == 3 and dim2 == 3 and batch1[0] != batch2[0]:
        # broadcasting a batch of one: fold instead, so the backward does not expand
        if batch1[0] == 1 and i1.requires_grad:
            return _matmul_impl(out, at.squeeze_dim(tensor1, 0), tensor2)
        if batch2[0] == 1 and i2.requires_grad:
            return _matmul_impl(out, tensor1, at.squeeze_dim(tensor2, 0))

    batch = broadcast_pair_for_op(batch1, batch2)
    nbatch = _prod(batch)
    t1e = at.reshape(at.expand(tensor1, batch + (n, m1), False), (nbatch, n, m1))
    vector_rhs = dim2 == 1
    if vector_rhs:
        t2e = at.unsqueeze(at.reshape(at.expand(tensor2, batch + (m2,), False), (nbatch, m2)), 2)
    else:
        t2e = at.reshape(at.expand(tensor2, batch + (m2, p), False), (nbatch, m2, p))
    output_shape = batch
    if dim1 > 1:
        output_shape = output_shape + (n,)
    if dim2 > 1:
        output_shape = output_shape + (p,)
    if not has_out:
        r = at.bmm(t1e, t2e)
        if vector_rhs:
            r = at.squeeze_dim(r, -1)
        return at._unsafe_view(r, output_shape)
    meta_bmm(t1e, t2e)
    view, aliased = _out_view(out, output_shape, (nbatch, n, p))
    at.bmm_out(t1e, t2e, view)
    if not aliased:
        at.copy_(out, at.view(view, output_shape), False)
    return out


def _copy_into(out, r):
    resize_out(out, r._impl._array.shape)
    at.copy_(out, r, False)
    return out


def matmul(self, other):
    return _matmul_impl(None, self, other)


def matmul_out(self, other, out):
    # checked before _matmul_impl resizes out or writes a part of it
    dev = self._impl.device
    if other._impl.device is not dev or out._impl.device is not dev:
        dev = check_devices("matmul", (self._impl, other._impl), allow_cpu_scalars=False)
        check_out_device(dev, out._impl)
    _matmul_impl(out, self, other)
    return out


# --------------------------------------------------------------------------
# linear
# --------------------------------------------------------------------------

def _flatten_nd_linear(input, weight, bias):
    sizes = input._impl._array.shape
    flat = at.view(input, (_prod(sizes[:-1]), sizes[-1]))
    result = at.addmm(bias, flat, at.t(weight), 1, 1)
    return at.view(result, tuple(sizes[:-1]) + (result._impl._array.shape[1],))


def _linear_device(input, weight, bias):
    """The device of linear's tensors, checked before any part of it runs (a bias may be a CPU scalar)."""
    dev = input._impl.device
    if weight._impl.device is not dev or (bias is not None and bias._impl.device is not dev):
        dev = check_devices("linear", [t._impl for t in (input, weight, bias) if t is not None])
    return dev


def linear(input, weight, bias=None):
    _linear_device(input, weight, bias)
    ii = input._impl
    d_in = ii._array.ndim
    d_w = weight._impl._array.ndim
    if d_in == 0 or d_w == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {d_in}D and {d_w}D")
    if bias is not None:
        if d_in == 2:
            return at.addmm(bias, input, at.t(weight), 1, 1)
        bi = bias._impl
        bshape = bi._array.shape
        # a bias addmm can broadcast: one dim, or one dim besides size-1 ones, and contiguous
        fusable = (len(bshape) == 1 or sum(1 for s in bshape if s != 1) == 1) and bi.is_contiguous()
        if fusable and ii.is_contiguous():
            return _flatten_nd_linear(input, weight, bias)
    output = at.matmul(input, at.t(weight))
    if bias is not None:
        output = at.add__Tensor(output, bias, 1)
    return output


def linear_out(input, weight, bias=None, out=None):
    check_out_device(_linear_device(input, weight, bias), out._impl)
    if bias is not None and input._impl._array.ndim == 2:
        return at.addmm_out(bias, input, at.t(weight), 1, 1, out)
    at.matmul_out(input, at.t(weight), out)
    if bias is not None:
        at.add__Tensor(out, bias, 1)
    return out
