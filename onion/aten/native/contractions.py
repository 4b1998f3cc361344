"""Vector and batched products (dot, vdot, mv, addmv, addr, baddbmm, addbmm) and the contractions
composed of them (outer, ger, inner, tensordot, kron, einsum).

The kernels are structured: the meta function makes every check PyTorch's CPU path makes, in its
order, and the impl computes in the op-math dtype (float32 for float16/bfloat16, int64 for integer
types, which wraps as the narrow type would) and is rounded once by the caller.
"""
from __future__ import annotations

import functools

import numpy as _np

from ...core import dtype as _dt
from ...core.promotion import can_cast
from ..at import at
from ..iterator import check_devices, common_dtype
from ..structured import Plan
from ..view_geometry import expand as _expand_geometry
from ..view_geometry import legacy_type_str
from .. import iterator as _it
from .linalg import _bool_not_implemented, _checked_scalar, _compute_np, _prod

_LOW = (_dt.float16, _dt.bfloat16)


def _shape(t):
    return t._impl._array.shape


def _expand_check(s, shape):
    """ATen's expand_size of ``s`` to ``shape``: raises expand's error where it does not broadcast."""
    ss = s._array.shape
    if tuple(ss) != tuple(shape):
        _expand_geometry(ss, (0,) * len(ss), 0, tuple(shape), legacy_type_str(s.dtype.scalar_type_name,
                                                                               s.device.type))


def _size(shape, d):
    """Tensor::size(d): a dim past the tensor's rank is PyTorch's IndexError."""
    n = len(shape)
    if d >= n:
        lo, hi = (-n, n - 1) if n else (-1, 0)
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
    return shape[d]


def _check_device_type(name, tensors):
    """checkDeviceType: every tensor on the first one's device type."""
    want = tensors[0]._impl.device.type
    for t in tensors[1:]:
        got = t._impl.device.type
        if got != want:
            raise RuntimeError(f"Expected tensor to have {want} DeviceType, but got tensor with {got} DeviceType "
                               f"(while checking arguments for {name})")


def _cast(a, ct):
    return a.astype(ct, copy=False)


def _scaled(xp, r, s, ct):
    return r if (type(s) is int and s == 1) else xp.multiply(r, ct.type(s) if ct.kind != "b" else s)


# --------------------------------------------------------------------------
# dot, vdot
# --------------------------------------------------------------------------

def _dot_checks(name, self, other):
    a = self._impl
    b = other._impl
    sa = a._array.shape
    sb = b._array.shape
    if len(sa) != 1 or len(sb) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(sa)}D and {len(sb)}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a.dtype.scalar_type_name} "
                           f"and {b.dtype.scalar_type_name}")
    if sa[0] != sb[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the same "
                           f"number of elements, but got {sa[0]} and {sb[0]} elements respectively")
    dev = check_devices(name, (a, b), allow_cpu_scalars=False)
    if a.dtype is _dt.bool:
        raise _bool_not_implemented(name)
    return Plan((), a.dtype, dev)


def meta_dot(self, tensor):
    return _dot_checks("dot", self, tensor)


def dot_impl(xp, plan, self, tensor):
    _it.refuse_barebones_unsigned("dot", self._impl)
    ct = _compute_np(plan.dtype)
    return xp.dot(_cast(self._impl._array, ct), _cast(tensor._impl._array, ct))


def meta_vdot(self, other):
    return _dot_checks("vdot", self, other)


def vdot_impl(xp, plan, self, other):
    _it.refuse_barebones_unsigned("dot", self._impl)
    ct = _compute_np(plan.dtype)
    return xp.vdot(_cast(self._impl._array, ct), _cast(other._impl._array, ct))


# --------------------------------------------------------------------------
# mv, addmv
# --------------------------------------------------------------------------

def _addmv_shape_checks(self_shape, mat, vec):
    sm = _shape(mat)
    sv = _shape(vec)
    if not (len(sm) == 2 and len(sv) == 1 and len(self_shape) <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(self_shape)}, {len(sm)}, {len(sv)}")
    n = _prod(self_shape)
    if not (sm[1] == sv[0] and (sm[0] == n or n == 1)):
        first = self_shape[0] if self_shape else 1
        raise RuntimeError(f"size mismatch, got input ({first}), mat ({sm[0]}x{sm[1]}), vec ({sv[0]})")
    return sm


def _addmv_dtype_error(sdt, mat, vec):
    md = mat._impl.dtype
    vd = vec._impl.dtype
    if not (sdt is md and md is vd):
        return RuntimeError(f"addmv input tensors must have the same dtype, but got {sdt.scalar_type_name}, "
                            f"{md.scalar_type_name}, and {vd.scalar_type_name}")
    sm = _shape(mat)
    if md is _dt.bool and sm[0] != 0 and sm[1] != 0:
        return _bool_not_implemented("addmv_impl_cpu")
    return None


def meta_mv(self, vec):
    sm = _addmv_shape_checks((_shape(self)[0],) if len(_shape(self)) else (), self, vec) \
        if len(_shape(self)) == 2 else _addmv_shape_checks((1,), self, vec)
    dev = check_devices("mv", (self._impl, vec._impl), allow_cpu_scalars=False)
    err = _addmv_dtype_error(vec._impl.dtype, self, vec)
    if err is not None:
        raise err
    return Plan((sm[0],), vec._impl.dtype, dev)


def mv_impl(xp, plan, self, vec):
    ct = _compute_np(plan.dtype)
    if 0 in _shape(self):
        return xp.zeros(plan.shape, dtype=plan.dtype.np)
    return xp.matmul(_cast(self._impl._array, ct), _cast(vec._impl._array, ct))


def meta_addmv(self, mat, vec, beta=1, alpha=1):
    s = self._impl
    sm = _addmv_shape_checks(s._array.shape, mat, vec)
    dev = check_devices("addmv", (mat._impl, vec._impl, s))
    shape = (sm[0],)
    err = _addmv_dtype_error(s.dtype, mat, vec)
    if err is None:
        try:
            _expand_check(s, shape)
            if sm[0] != 0 and sm[1] != 0 and s.dtype is not _dt.bool:
                alpha = _checked_scalar(alpha, s.dtype)
                beta = _checked_scalar(beta, s.dtype)
        except RuntimeError as e:
            err = e
    return Plan(shape, s.dtype, dev, None, (beta, alpha), None, err)


def _add_scaled_self(xp, res, s, beta, alpha, shape, dt, ct):
    """``beta * self + alpha * res`` as ATen's BLAS-style kernels do: beta == 0 ignores self, and a
    product of zero length contributes nothing."""
    if dt is _dt.bool:
        out = xp.zeros(shape, dtype=bool)
        if res is not None and alpha:
            out = xp.logical_or(out, res.astype(bool))
        if beta:
            out = xp.logical_or(out, s.astype(bool))
        return out
    if res is not None:
        res = _scaled(xp, res, alpha, ct)
    if beta != 0 and not (type(beta) is bool and not beta):
        sb = _scaled(xp, _cast(s, ct), beta, ct)
        res = xp.broadcast_to(sb, shape) if res is None else xp.add(res, sb)
    if res is None:
        return xp.zeros(shape, dtype=dt.np)
    return res


def addmv_impl(xp, plan, self, mat, vec, beta=1, alpha=1):
    if plan.impl_error is not None:
        return None
    beta, alpha = plan.extra
    dt = plan.dtype
    ct = _compute_np(dt)
    m = mat._impl._array
    res = None
    if m.shape[0] != 0 and m.shape[1] != 0 and (alpha != 0 or dt in _LOW):
        res = xp.matmul(_cast(m, ct), _cast(vec._impl._array, ct))
    return _add_scaled_self(xp, res, self._impl._array, beta, alpha, plan.shape, dt, ct)


# --------------------------------------------------------------------------
# addr (TensorIterator: the result type promotes)
# --------------------------------------------------------------------------

def _integral_scalar_check(dt, beta, alpha):
    if dt.category < 2:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (float, complex)):
                msg = f"For integral input tensors, argument {name} must not be a floating point number."
                raise RuntimeError(msg)  # noqa: TRY004 - PyTorch's type
    elif dt.is_floating_point:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, complex):
                msg = f"For non-complex input tensors, argument {name} must not be a complex number."
                raise RuntimeError(msg)  # noqa: TRY004 - PyTorch's type


def _addr_out_dtype(plan, out_dtype, xp):
    if not can_cast(plan.dtype, out_dtype):
        raise RuntimeError(f"result type {plan.dtype.scalar_type_name} can't be cast to the desired output type "
                           f"{out_dtype.scalar_type_name}")


def meta_addr(self, vec1, vec2, beta=1, alpha=1):
    s = self._impl
    v1 = _shape(vec1)
    v2 = _shape(vec2)
    if len(v1) != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {len(v1)}-D")
    if len(v2) != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {len(v2)}-D")
    shape = (v1[0], v2[0])
    _expand_check(s, shape)
    dev = check_devices("addr", (vec1._impl, vec2._impl, s))
    dt = common_dtype((s, vec1._impl, vec2._impl))
    _integral_scalar_check(dt, beta, alpha)
    return Plan(shape, dt, dev, None, None, _addr_out_dtype)


def addr_impl(xp, plan, self, vec1, vec2, beta=1, alpha=1):
    dt = plan.dtype
    ct = _compute_np(dt) if dt is not _dt.bool else _np.dtype(bool)
    a = _cast(vec1._impl._array, ct)
    b = _cast(vec2._impl._array, ct)
    if dt is _dt.bool:
        res = xp.logical_and(a[:, None], b[None, :])
        return _add_scaled_self(xp, res, self._impl._array, bool(beta), bool(alpha), plan.shape, dt, ct)
    if dt in _LOW:
        # ATen's addr kernel works in the tensor's own type: every product and sum is rounded to it
        low = dt.np

        def r(x):
            return x.astype(low).astype(ct)
        al = ct.type(low.type(alpha))
        prod = r(xp.multiply(r(xp.multiply(al, a[:, None])), b[None, :]))
        if beta == 0:
            return xp.broadcast_to(prod, plan.shape)
        be = ct.type(low.type(beta))
        return r(xp.add(r(xp.multiply(be, _cast(self._impl._array, ct))), prod))
    res = xp.multiply(a[:, None], b[None, :])
    return _add_scaled_self(xp, res, self._impl._array, beta, alpha, plan.shape, dt, ct)


# --------------------------------------------------------------------------
# baddbmm, addbmm
# --------------------------------------------------------------------------

def _batch_checks(b1, b2):
    s1 = _shape(b1)
    s2 = _shape(b2)
    if len(s1) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(s2) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return s1, s2


def meta_baddbmm(self, batch1, batch2, beta=1, alpha=1):
    s = self._impl
    s1 = _shape(batch1)
    s2 = _shape(batch2)
    _expand_check(s, (_size(s1, 0), _size(s1, 1), _size(s2, 2)))
    s1, s2 = _batch_checks(batch1, batch2)
    bs, n, k = s1
    if s2[0] != bs or s2[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] "
                           f"but got: [{s2[0]}, {s2[1]}].")
    shape = (bs, n, s2[2])
    dev = check_devices("baddbmm", (batch1._impl, batch2._impl, s))
    d1 = batch1._impl.dtype
    d2 = batch2._impl.dtype
    if s.dtype is not d1 or s.dtype is not d2:
        if d1 is d2:
            raise RuntimeError(f"Input dtypes must be the same, got: input {s.dtype.typemeta_name}, batch1: {d1.typemeta_name}, "
                               f"batch2: {d2.typemeta_name}")
        raise RuntimeError(f"expected scalar type {d1.scalar_type_name} but found {d2.scalar_type_name}")
    alpha, beta, err = _scalars_or_error(s.dtype, _prod(shape) and k, alpha, beta, "baddbmm_cpu")
    return Plan(shape, s.dtype, dev, None, (beta, alpha), None, err)


def _scalars_or_error(dtype, computes, alpha, beta, bool_kernel):
    """``(alpha, beta, error)`` for a batched product the kernel computes (``computes``: a non-empty result
    and contraction): the scalars checked against the result dtype, or the kernel's refusal of bool, both
    raised only after the output checks (``Plan.impl_error``)."""
    if not computes:
        return alpha, beta, None
    if dtype is _dt.bool:
        return alpha, beta, _bool_not_implemented(bool_kernel)
    try:
        return _checked_scalar(alpha, dtype), _checked_scalar(beta, dtype), None
    except RuntimeError as e:
        return alpha, beta, e


def baddbmm_impl(xp, plan, self, batch1, batch2, beta=1, alpha=1):
    if plan.impl_error is not None:
        return None
    beta, alpha = plan.extra
    dt = plan.dtype
    ct = _compute_np(dt)
    a = batch1._impl._array
    res = None
    if a.shape[2] != 0 and 0 not in plan.shape and (alpha != 0 or dt in _LOW):
        res = xp.matmul(_cast(a, ct), _cast(batch2._impl._array, ct))
    return _add_scaled_self(xp, res, self._impl._array, beta, alpha, plan.shape, dt, ct)


def meta_addbmm(self, batch1, batch2, beta=1, alpha=1):
    s = self._impl
    s1 = _shape(batch1)
    s2 = _shape(batch2)
    _expand_check(s, (_size(s1, 1), _size(s2, 2)))
    s1, s2 = _batch_checks(batch1, batch2)
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} and {s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and {s2[1]}x{s2[2]})")
    shape = (s1[1], s2[2])
    dev = check_devices("addbmm", (batch1._impl, batch2._impl, s))
    d1 = batch1._impl.dtype
    d2 = batch2._impl.dtype
    if s.dtype is not d2:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {s.dtype.scalar_type_name} and "
                           f"{d2.scalar_type_name}")
    if d1 is not d2:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {d1.scalar_type_name} and "
                           f"{d2.scalar_type_name}")
    alpha, beta, err = _scalars_or_error(s.dtype, _prod(shape) and s1[0] * s1[2], alpha, beta, "addmm_impl_cpu_")
    return Plan(shape, s.dtype, dev, None, (beta, alpha), None, err)


def addbmm_impl(xp, plan, self, batch1, batch2, beta=1, alpha=1):
    if plan.impl_error is not None:
        return None
    beta, alpha = plan.extra
    dt = plan.dtype
    ct = _compute_np(dt)
    a = batch1._impl._array
    res = None
    if dt in _LOW and a.shape[0] * a.shape[2] != 0 and 0 not in plan.shape:
        # ATen adds one batch at a time into the float16/bfloat16 result (addmm_ per batch), rounding each
        # partial sum: a sequence of roundings, one per batch matrix
        prods = xp.matmul(_cast(a, ct), _cast(batch2._impl._array, ct))
        acc = _add_scaled_self(xp, _scaled(xp, prods[0], alpha, ct), _cast(self._impl._array, ct), beta, 1,
                               plan.shape, dt, ct).astype(dt.np).astype(ct)
        for i in range(1, prods.shape[0]):
            acc = xp.add(acc, _scaled(xp, prods[i], alpha, ct)).astype(dt.np).astype(ct)
        return acc
    if a.shape[0] * a.shape[2] != 0 and 0 not in plan.shape and alpha != 0:
        # ATen adds one batch product at a time into the result: the same order of additions, as one
        # reduction over the leading axis (which NumPy takes in order for an outer axis)
        prods = _scaled(xp, xp.matmul(_cast(a, ct), _cast(batch2._impl._array, ct)), alpha, ct)
        first = _add_scaled_self(xp, prods[0], self._impl._array, beta, 1, plan.shape, dt, ct)
        if prods.shape[0] == 1:
            return first
        prods[0] = first
        return xp.add.reduce(prods, axis=0)
    return _add_scaled_self(xp, res, self._impl._array, beta, alpha, plan.shape, dt, ct)


# --------------------------------------------------------------------------
# CompositeImplicitAutograd: outer, ger, inner, tensordot, kron
# --------------------------------------------------------------------------

def outer(self, vec2):
    d1 = len(_shape(self))
    d2 = len(_shape(vec2))
    if d1 != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {d1}-D")
    if d2 != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {d2}-D")
    return at.mul_Tensor(at.reshape(self, (-1, 1)), vec2)


def outer_out(self, vec2, out):
    d1 = len(_shape(self))
    d2 = len(_shape(vec2))
    if d1 != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {d1}-D")
    if d2 != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {d2}-D")
    return at.mul_out(at.reshape(self, (-1, 1)), vec2, out)


def ger(self, vec2):
    return at.outer(self, vec2)


def ger_out(self, vec2, out):
    return at.outer_out(self, vec2, out)


def _inner_checks(self, other):
    sa = _shape(self)
    sb = _shape(other)
    if len(sa) == 0 or len(sb) == 0:
        return None
    if sa[-1] != sb[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(sa)} and {list(sb)}")
    return len(sa) - 1, len(sb) - 1


def inner(self, other):
    _check_device_type("inner()", (self, other))
    dims = _inner_checks(self, other)
    if dims is None:
        return at.mul_Tensor(self, other)
    return at.tensordot(self, other, [dims[0]], [dims[1]])


def inner_out(self, other, out):
    _check_device_type("inner()", (self, other, out))
    dims = _inner_checks(self, other)
    if dims is None:
        return at.mul_out(self, other, out)
    return at.tensordot_out(self, other, [dims[0]], [dims[1]], out)


def _wrap_dim(d, n):
    m = max(n, 1)
    if d < -m or d >= m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d + m if d < 0 else d


def _tensordot_parts(self, other, dims1, dims2):
    """The two operands as matrices (free x contracted, contracted x free) and the result's shape; a
    contracted dim of size one on one side is summed out of the other side first (kept as size one)."""
    if len(dims1) != len(dims2):
        raise RuntimeError("both dimension lists should have same length")
    if self._impl.dtype is not other._impl.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa = _shape(self)
    sb = _shape(other)
    d1 = [_wrap_dim(d, len(sa)) for d in dims1]
    d2 = [_wrap_dim(d, len(sb)) for d in dims2]
    t1 = self
    t2 = other
    csize = 1
    for k, (x, y) in enumerate(zip(d1, d2)):
        s1 = sa[x]
        s2 = sb[y]
        if s2 == 1:
            t1 = at.sum_dim_IntList(t1, [x], True, t1._impl.dtype)
        elif s1 == 1:
            t2 = at.sum_dim_IntList(t2, [y], True, t2._impl.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {dims1[k]} "
                                   f"and second has size {s2} in dim {dims2[k]}")
            csize *= s1
    s1 = _shape(t1)
    s2 = _shape(t2)
    free1 = [i for i in range(len(sa)) if i not in d1]
    free2 = [i for i in range(len(sb)) if i not in d2]
    out_shape = [s1[i] for i in free1] + [s2[i] for i in free2]
    size1 = _prod(s1[i] for i in free1)
    size2 = _prod(s2[i] for i in free2)
    p1 = at.permute(t1, free1 + d1)
    p2 = at.permute(t2, d2 + free2)
    if size1 == 1 and size2 == 1:
        return p1, p2, out_shape, True
    return at.reshape(p1, (size1, csize)), at.reshape(p2, (csize, size2)), out_shape, False


def tensordot(self, other, dims_self, dims_other):
    m1, m2, out_shape, full = _tensordot_parts(self, other, dims_self, dims_other)
    if not full:
        return at.reshape(at.mm(m1, m2), out_shape)
    # a full contraction: dot where both are contiguous (flattening is then a view), else mul and sum
    if m1._impl.is_contiguous() and m2._impl.is_contiguous():
        return at.reshape(at.dot(at.reshape(m1, (-1,)), at.reshape(m2, (-1,))), out_shape)
    return at.reshape(at.sum(at.mul_Tensor(at.squeeze(m1), at.squeeze(m2)), m1._impl.dtype), out_shape)


def tensordot_out(self, other, dims_self, dims_other, out):
    r = tensordot(self, other, dims_self, dims_other)
    do, da, db = out._impl.device, self._impl.device, other._impl.device
    if not (do == da and da == db):
        raise RuntimeError(f"tensordot: Expected the output and input tensors to be on the same device, but got the "
                           f"output tensor on {do}, input tensor a on {da}, and input tensor b on {db}")
    rd = r._impl.dtype
    od = out._impl.dtype
    if rd is not od:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {rd.typemeta_name}, but got an output "
                           f"tensor with dtype {od.typemeta_name}")
    from ..iterator import resize_out
    resize_out(out, _shape(r))
    at.copy_(out, r, False)
    return out


def _kron_views(self, other):
    """The two operands reshaped so that their product, laid out as (i0, j0, i1, j1, ...), is kron's result
    once each pair of dims is merged; and that result's shape."""
    sa = _shape(self)
    sb = _shape(other)
    nd = max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + tuple(sa)
    sb = (1,) * (nd - len(sb)) + tuple(sb)
    ia = []
    ib = []
    for i in range(nd):
        ia += [sa[i], 1]
        ib += [1, sb[i]]
    return at.reshape(self, ia), at.reshape(other, ib), [sa[i] * sb[i] for i in range(nd)], \
        [n for i in range(nd) for n in (sa[i], sb[i])]


def kron(self, other):
    a, b, shape, _pairs = _kron_views(self, other)
    return at.reshape(at.mul_Tensor(a, b), shape)


def kron_out(self, other, out):
    a, b, shape, pairs = _kron_views(self, other)
    from ..iterator import resize_out
    src = self._impl.device
    if out._impl.device != src:
        raise RuntimeError(f"Attempting to copy from device {src} to device {out._impl.device}, but cross-device "
                           f"copies are not allowed!")
    resize_out(out, shape)
    # mul writes straight into out seen with the pairs of dims apart (PyTorch's kron_out does the same)
    at.mul_out(a, b, at.view(out, pairs))
    return out


# --------------------------------------------------------------------------
# einsum (CompositeImplicitAutograd)
# --------------------------------------------------------------------------
# Every operand is brought to one common layout: the output dims first, then the contracted ones
# (a label an operand lacks is a dim of size one).  Pairs are then contracted by one bmm each, summing a
# contracted dim as soon as no other operand still has it.  Without a path the operands are taken left
# to right, as PyTorch does when opt_einsum is not installed; with three or more operands a cheaper
# order found by np.einsum_path (the optimal search up to four operands, greedy beyond) is used, as
# PyTorch does with opt_einsum.

_ELL = 52


def _label_index(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _label_char(i):
    return chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26)


def _parse_terms(lhs, num_ops):
    op_labels = [[] for _ in range(num_ops)]
    cur = 0
    seen_ell = False
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if seen_ell:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of any ellipsis")
            i += 2
            op_labels[cur].append(_ELL)
            seen_ell = True
        elif c == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            seen_ell = False
        else:
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   f"subscripts must be in [a-zA-Z]")
            op_labels[cur].append(_label_index(c))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _pair_cost(sa, sb):
    """Multiplications of one pairwise product in the common layout (sizes broadcast)."""
    n = 1
    for x, y in zip(sa, sb):
        n *= max(x, y)
    return n


def _left_to_right_cost(shapes):
    cur = shapes[0]
    total = 0
    for s in shapes[1:]:
        total += _pair_cost(cur, s)
        cur = tuple(max(x, y) for x, y in zip(cur, s))
    return total


@functools.lru_cache(maxsize=512)
def _einsum_path(subscripts, shapes):
    """np.einsum_path's pairwise order for these operand shapes, in PyTorch's ``path`` format, cached."""
    arrays = [_np.broadcast_to(_np.empty((), dtype=_np.float32), s) for s in shapes]
    path, _ = _np.einsum_path(subscripts, *arrays, optimize="optimal" if len(shapes) <= 4 else "greedy")
    flat = []
    for p in path[1:]:
        flat.extend(p)
    return tuple(flat)


def _sumproduct_pair(left, right, sum_dims, ndim):
    """(left * right).sum(sum_dims, keepdim=True) by one bmm: dims in both and kept (lro), only left's
    (lo), only right's (ro) and the summed ones."""
    if not sum_dims:
        return at.mul_Tensor(left, right)
    sl_all = _shape(left)
    sr_all = _shape(right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl = sl_all[i] != 1
        sr = sr_all[i] != 1
        if i in sum_dims:
            if sl and sr:
                if sl_all[i] != sr_all[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= sl_all[i]
            elif sl:
                left = at.sum_dim_IntList(left, [i], True, None)
            elif sr:
                right = at.sum_dim_IntList(right, [i], True, None)
        elif sl and sr:
            if sl_all[i] != sr_all[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= sl_all[i]
        elif sl:
            lo.append(i)
            lo_size *= sl_all[i]
        else:
            ro.append(i)
            ro_size *= sr_all[i]
    sl_all = _shape(left)
    sr_all = _shape(right)
    out_size = [sl_all[d] for d in lro] + [sl_all[d] for d in lo] + [1] * len(sum_dims) + [sr_all[d] for d in ro]
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * ndim
    for k, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = k
    left = at.reshape(at.permute(left, lperm), (lro_size, lo_size, sum_size))
    right = at.reshape(at.permute(right, rperm), (lro_size, sum_size, ro_size))
    return at.permute(at.view(at.bmm(left, right), out_size), operm)


def einsum(equation, tensors, path=None):
    num_ops = len(tensors)
    if num_ops == 0:
        raise RuntimeError("einsum(): must provide at least one operand")
    if path is not None:
        want = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != want:
            raise RuntimeError(f"einsum(): expected contraction path given in path parameter to have size {want} but "
                               f"got {len(path)}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_terms(lhs, num_ops)
    count = [0] * _ELL
    ell_num_dim = 0
    for i, (t, labels) in enumerate(zip(tensors, op_labels)):
        nd = len(_shape(t))
        nl = len(labels)
        has_ell = False
        for lb in labels:
            if lb == _ELL:
                nl -= 1
                has_ell = True
            else:
                count[lb] += 1
        if has_ell:
            ell_num_dim = max(ell_num_dim, nd - nl)
        if (nl > nd) if has_ell else (nl != nd):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) "
                               f"{'is more than' if has_ell else 'does not match'} the number of dimensions ({nd}) "
                               f"for operand {i}{'' if has_ell else ' and no ellipsis was given'}")
    perm_of = [-1] * _ELL
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for lb in range(_ELL):
            if count[lb] == 1:
                perm_of[lb] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                pass
            elif c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not (c.isascii() and c.isalpha()):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the equation "
                                       f"string, subscripts must be in [a-zA-Z]")
                lb = _label_index(c)
                if not (count[lb] > 0 and perm_of[lb] == -1):
                    why = " appears more than once in the output" if perm_of[lb] > -1 else \
                        " does not appear in the equation for any input operand"
                    raise RuntimeError(f"einsum(): output subscript {c}{why}")
                perm_of[lb] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for lb in range(_ELL):
        if count[lb] > 0 and perm_of[lb] == -1:
            perm_of[lb] = perm_index
            perm_index += 1

    label_size = [1] * _ELL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, (op, labels) in enumerate(zip(tensors, op_labels)):
        permutation = [-1] * perm_index
        dim = 0
        for lb in labels:
            sizes = _shape(op)
            if lb == _ELL:
                nd = len(_shape(tensors[i])) - (len(labels) - 1)
                for j in range(ell_num_dim - nd, ell_num_dim):
                    n = _shape(op)[dim]
                    if n != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != n:
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                               f"{n} which does not broadcast with previously seen ellipsis with "
                                               f"size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = n
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_of[lb]] == -1:
                n = sizes[dim]
                if n != 1:
                    if label_size[lb] != 1 and label_size[lb] != n:
                        raise RuntimeError(f"einsum(): subscript {_label_char(lb)} has size {n} for operand {i} which "
                                           f"does not broadcast with previously seen size {label_size[lb]}")
                    label_size[lb] = n
                    dim_counts[perm_of[lb]] += 1
                permutation[perm_of[lb]] = dim
                dim += 1
            else:
                prev = permutation[perm_of[lb]]
                if sizes[dim] != sizes[prev]:
                    raise RuntimeError(f"einsum(): subscript {_label_char(lb)} is repeated for operand {i} but the sizes "
                                       f"don't match, {sizes[dim]} != {sizes[prev]}")
                op = at.diagonal(op, 0, prev, dim)
                nd_now = len(_shape(op))
                order = list(range(nd_now - 1))
                order.insert(prev, nd_now - 1)
                op = at.permute(op, order)      # movedim(-1, prev)
        for k in range(perm_index):
            if permutation[k] == -1:
                op = at.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(at.permute(op, permutation))

    use_path = path is not None
    if not use_path and num_ops > 2:
        shapes = tuple(tuple(_shape(o)) for o in ops)
        letters = "".join(_label_char(k) for k in range(perm_index)) if perm_index <= _ELL else None
        if letters is not None:
            subs = ",".join("".join(letters[k] for k in range(perm_index) if s[k] != 1) for s in shapes)
            squeezed = tuple(tuple(n for n in s if n != 1) for s in shapes)
            out_sub = "".join(letters[k] for k in range(out_num_dim)
                              if any(s[k] != 1 for s in shapes))
            found = _einsum_path(subs + "->" + out_sub, squeezed)
            # the order found is taken only where it is cheaper than left to right
            cost = 0
            cur = list(shapes)
            for a, b in zip(found[0::2], found[1::2]):
                a, b = sorted((a, b))
                cost += _pair_cost(cur[a], cur[b])
                merged = tuple(max(x, y) for x, y in zip(cur[a], cur[b]))
                del cur[b]
                del cur[a]
                cur.append(merged)
            if cost < _left_to_right_cost(shapes):
                path = found
                use_path = True
    it = iter(path) if use_path else None
    while len(ops) > 1:
        i, j = 0, 1
        if use_path:
            i = next(it)
            j = next(it)
            if j < i:
                i, j = j, i
            if i == j or i < 0 or j >= len(ops):
                why = ") cannot contract an operand with itself" if i == j else ") operand index is out of bounds"
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}{why}")
        a = ops[i]
        b = ops[j]
        del ops[j]
        del ops[i]
        sum_dims = []
        a_sum = []
        b_sum = []
        sa = _shape(a)
        sb = _shape(b)
        for d in range(out_num_dim, perm_index):
            if sa[d] != 1 and sb[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if sa[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif sb[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = at.sum_dim_IntList(a, a_sum, True, None)
        if b_sum:
            b = at.sum_dim_IntList(b, b_sum, True, None)
        r = _sumproduct_pair(a, b, sum_dims, perm_index)
        if use_path:
            ops.append(r)
        else:
            ops.insert(0, r)
    result = ops[0]
    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            return at.view(result, list(_shape(result)[:out_num_dim]))
        return at.sum_dim_IntList(result, list(range(out_num_dim, perm_index)), False, None)
    return result


# --------------------------------------------------------------------------
# block_diag (CompositeExplicitAutograd in PyTorch: one kernel for every backend)
# --------------------------------------------------------------------------

def _block_diag_plan(tensors):
    """The result's shape, dtype, device and each input's block (rows, cols) as a 2-D matrix."""
    from ..iterator import common_dtype
    blocks = []
    dev = None
    for i, t in enumerate(tensors):
        impl = t._impl
        s = impl._array.shape
        if len(s) > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{len(s)} dimensions")
        if dev is None:
            dev = impl.device
        elif impl.device != dev:
            raise RuntimeError(f"torch.block_diag: input tensors must all be on the same device. Input 0 is on device "
                               f"{dev} and input {i} is on device {impl.device}.")
        blocks.append((1, 1) if len(s) == 0 else (1, s[0]) if len(s) == 1 else tuple(s))
    from ...core import dtype as _dtm
    dt = common_dtype([t._impl for t in tensors]) if tensors else _dtm.get_default_dtype()
    from ...core.device import CPU
    shape = (sum(b[0] for b in blocks), sum(b[1] for b in blocks))
    return shape, dt, (dev if dev is not None else CPU), blocks


def block_diag(tensors):
    from ..tensor_new import empty_tensor
    shape, dt, dev, blocks = _block_diag_plan(tensors)
    out = empty_tensor(shape, dt, dev)
    if dev.type == "meta":
        return out
    arr = out._impl._array
    arr[...] = 0
    r = c = 0
    for t, (h, w) in zip(tensors, blocks):
        arr[r:r + h, c:c + w] = t._impl._array.reshape(h, w)
        r += h
        c += w
    return out
