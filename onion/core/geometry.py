"""Sizes, strides and dims as plain tuples: the rules every layer applies the same way (c10's).

The one place for them, in the lowest layer that needs them (``TensorImpl``
reports contiguous strides for empty arrays); ATen's geometry, the backends
and autograd import them from here.
"""
from __future__ import annotations


def contiguous_strides(sizes) -> tuple:
    """Row-major strides of ``sizes``; a dim of size 0 counts as 1, as empty_tensor_restride does."""
    strides = []
    acc = 1
    for n in reversed(sizes):
        strides.append(acc)
        if n > 1:
            acc *= n
    return tuple(reversed(strides))


def wrap_dim(dim: int, ndim: int, wrap_scalar: bool = True) -> int:
    """c10's maybe_wrap_dim: a negative ``dim`` counts from the end.

    A 0-dim tensor accepts -1 and 0 when ``wrap_scalar`` (most operators), and
    no dim at all otherwise (``Tensor.size`` / ``Tensor.stride``).
    """
    if ndim <= 0:
        if not wrap_scalar:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        ndim = 1
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


# --------------------------------------------------------------------------
# contiguity (c10/core/Contiguity.h, TensorImpl::refresh_contiguous)
# --------------------------------------------------------------------------

def is_contiguous(sizes, strides) -> bool:
    """Row-major up to size-1 dims (whose strides never matter); an empty tensor always is."""
    for s in sizes:
        if s == 0:
            return True
    expected = 1
    for i in range(len(sizes) - 1, -1, -1):
        s = sizes[i]
        if s != 1:
            if strides[i] != expected:
                return False
            expected *= s
    return True


def _contiguous_in_order(sizes, strides, order) -> bool:
    expected = 1
    for d in order:
        s = sizes[d]
        if s != 1:
            if strides[d] != expected:
                return False
            expected *= s
    return True


def is_channels_last_contiguous(sizes, strides) -> bool:
    """is_contiguous(memory_format=channels_last): rank 4, dims packed in the order C, W, H, N.

    Unlike plain contiguity, an empty tensor gets no pass here (as in c10)."""
    return len(sizes) == 4 and _contiguous_in_order(sizes, strides, (1, 3, 2, 0))


def is_channels_last_3d_contiguous(sizes, strides) -> bool:
    """is_contiguous(memory_format=channels_last_3d): rank 5, packed C, W, H, D, N."""
    return len(sizes) == 5 and _contiguous_in_order(sizes, strides, (1, 4, 3, 2, 0))


def is_contiguous_as(sizes, strides, format_name) -> bool:
    """Tensor.is_contiguous(memory_format=...) with the format given by name."""
    if format_name == "channels_last":
        return is_channels_last_contiguous(sizes, strides)
    if format_name == "channels_last_3d":
        return is_channels_last_3d_contiguous(sizes, strides)
    return is_contiguous(sizes, strides)


def is_non_overlapping_and_dense(sizes, strides) -> bool:
    """Every element of the span of memory used exactly once, in some order of the dims.

    As TensorImpl caches it: contiguous (any format) or, sorting the dims of size >= 2 by
    stride, each stride the product of the sizes before it."""
    n = len(sizes)
    if n == 1:
        return sizes[0] < 2 or strides[0] == 1
    if is_contiguous(sizes, strides):
        return True
    if n == 4 and is_channels_last_contiguous(sizes, strides):
        return True
    if n == 5 and is_channels_last_3d_contiguous(sizes, strides):
        return True
    require = 1
    for i in sorted((i for i in range(n) if sizes[i] >= 2), key=lambda i: strides[i]):
        if strides[i] != require:
            return False
        require *= sizes[i]
    return True


# --------------------------------------------------------------------------
# strides for a memory format
# --------------------------------------------------------------------------

def channels_last_strides(sizes) -> tuple:
    """Strides of empty(sizes, memory_format=channels_last): raw sizes, no max(size, 1), as c10."""
    if len(sizes) != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    s3 = sizes[1]
    s2 = s3 * sizes[3]
    s0 = s2 * sizes[2]
    return (s0, 1, s2, s3)


def channels_last_3d_strides(sizes) -> tuple:
    if len(sizes) != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    s4 = sizes[1]
    s3 = s4 * sizes[4]
    s2 = s3 * sizes[3]
    s0 = s2 * sizes[2]
    return (s0, 1, s2, s3, s4)


def strides_for_format(sizes, format_name) -> tuple:
    """Strides of a fresh tensor of ``sizes`` laid out as the named (non-preserve) format."""
    if format_name == "channels_last":
        return channels_last_strides(sizes)
    if format_name == "channels_last_3d":
        return channels_last_3d_strides(sizes)
    return contiguous_strides(sizes)


def infer_dense_strides(sizes, strides) -> tuple:
    """Dense strides that keep the dim order of ``strides`` (preserve_format on a non-dense input).

    Dims are sorted fastest first by stride, with TensorIterator's tie rules: a stride of 0
    compares with nothing (that dim stays where it is), equal strides put the smaller size
    first; sizes 0 and 1 count as 1 in the products."""
    n = len(sizes)
    if n == 0:
        return ()
    if n == 1:
        return (1,)
    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            a, b = perm[d0], perm[d1]
            s0, s1 = strides[a], strides[b]
            if s0 == 0 or s1 == 0:
                continue        # ambiguous: no swap, and the scan goes on past it
            if s0 < s1:
                break
            if s0 > s1 or sizes[a] > sizes[b]:
                perm[d0], perm[d1] = b, a
                d1 = d0
    out = [0] * n
    acc = 1
    for d in perm:
        out[d] = acc
        if sizes[d] > 1:
            acc *= sizes[d]
    return tuple(out)


def preserve_strides(sizes, strides) -> tuple:
    """Strides of a fresh copy with preserve_format (empty_like, clone, _to_copy): the input's own
    when they are non-overlapping and dense, else dense ones in the input's dim order."""
    if is_non_overlapping_and_dense(sizes, strides):
        return tuple(strides)
    return infer_dense_strides(sizes, strides)


def like_strides(sizes, strides, format_name) -> tuple:
    """Strides of a fresh tensor like (sizes, strides) in the named memory format (None: preserve)."""
    if format_name is None or format_name == "preserve_format":
        return preserve_strides(sizes, strides)
    return strides_for_format(sizes, format_name)


def _strides_like_channels_last(sizes, strides, order) -> bool:
    """c10's is_channels_last_strides_2d/3d: the strides grow in the channels-last order (a
    guess from strides, with PyTorch's tie rules for size-1 dims and a zero channel stride)."""
    if strides[1] == 0:
        return False
    low = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d]
        if sizes[d] > 1:
            low *= sizes[d]
    return True


def sort_dims(perm: list, should_swap) -> list:
    """TensorIterator's insertion sort of dims (reorder_dimensions): ``should_swap(a, b)`` > 0 moves
    ``b`` before ``a``, < 0 stops, 0 keeps looking (an ambiguous pair is no reason to stop).  In place."""
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def suggest_memory_format(sizes, strides) -> str:
    """TensorBase::suggest_memory_format: the format the strides look like, by name."""
    n = len(sizes)
    if n == 4 and _strides_like_channels_last(sizes, strides, (1, 3, 2, 0)):
        return "channels_last"
    if n == 5 and _strides_like_channels_last(sizes, strides, (1, 4, 3, 2, 0)):
        return "channels_last_3d"
    return "contiguous_format"


def _ref_perm(shape, strides_list) -> list:
    """torch._prims_common's logical-to-physical dim order for tensors of one ``shape``."""
    n = len(shape)

    def should_swap(a, b):
        for strides in strides_list:
            sa, sb = strides[a], strides[b]
            if sa == 0 or sb == 0:
                continue
            if sa == sb:
                if shape[b] >= shape[a]:
                    continue
                return 1
            if _ref_ge(sb, sa):
                return -1
            if _ref_ge(sa, sb):
                return 1
        return 0
    perm = list(range(n - 1, -1, -1))
    sort_dims(perm, should_swap)
    return perm[::-1]


def _strides_in_order(sizes, order) -> tuple:
    """Contiguous strides of the dims taken in ``order`` (outermost first), given back per dim."""
    physical = contiguous_strides([sizes[d] for d in order])
    out = [0] * len(sizes)
    for i, d in enumerate(order):
        out[d] = physical[i]
    return tuple(out)


def elementwise_ref_strides(shape, strides_list) -> tuple:
    """Output strides of an elementwise op as PyTorch's Python references compute them (its Meta
    kernels for add, mul, exp...): ``strides_list`` holds the strides of the tensor operands already
    broadcast to ``shape`` (CPU scalars left out)."""
    n = len(shape)
    if not strides_list or n == 0:
        return ()
    if n == 1:
        return (1,)
    contig = cl = True
    for st in strides_list:
        contig = contig and is_contiguous(shape, st)
        cl = cl and is_channels_last_contiguous(shape, st)
    if contig and not cl:
        return contiguous_strides(shape)
    if cl and not contig:
        return _strides_in_order(shape, [0, *range(2, n), 1])
    return _strides_in_order(shape, _ref_perm(shape, strides_list))


def meta_like_strides(sizes, strides) -> tuple:
    """preserve_format strides of ``empty_like`` and friends on Meta, where PyTorch runs its Python
    reference (torch._refs.empty_like): the references' elementwise layout of the one input."""
    return elementwise_ref_strides(sizes, [strides])


def _ref_ge(a, b) -> bool:
    """The references' 'a >= b' for strides (b == 0 counts as smaller, a multiple as larger)."""
    if b == 0:
        return True
    if a == 0:
        return False
    return a >= b or a % b == 0
