"""PyTorch type promotion: promote_types, can_cast, and the result type of an op.

The result type follows at::native::result_type (what TensorIterator uses):
operands have a priority (dimensioned tensor > zero-dim tensor > wrapped Python
number) and a category (bool < integral < floating < complex). Operands of one
priority are promoted together with promote_types; a lower priority only counts
when its category is above every higher-priority category.

Python numbers are represented as torch represents them: a wrapped 0-dim tensor
of bool, int64, float64 or complex128 (``scalar_dtype``), with priority WRAPPED.
During promotion a WRAPPED floating operand counts as the default dtype and a
WRAPPED complex operand as the default complex dtype, exactly as PyTorch does;
results that depend on the default dtype are memoised and the memos are dropped
whenever set_default_dtype is called.
"""

import numpy as _np

from onion.core import dtype as _dt
from onion.core.dtype import (
    ALL_DTYPES,
    BAREBONES_UNSIGNED_DTYPES,
    EVERY_DTYPE,
    CATEGORY_COMPLEX,
    CATEGORY_FLOATING,
    CATEGORY_INTEGRAL,
    bfloat16,
    complex128,
    float16,
    float32,
    float64,
    int16,
    int64,
)
from onion.core.dtype import bool as _bool

# Operand priorities (higher wins).
DIMENSIONED = 2
ZERO_DIM = 1
WRAPPED = 0


def type_category(d):
    """0 bool, 1 integral, 2 floating, 3 complex."""
    return d.category


# ---------------------------------------------------------------------------
# promote_types / can_cast: rules written out once, tabulated at import.

def _promote_rule(a, b):
    if a is b:
        return a
    if a is _bool:
        return b
    if b is _bool:
        return a
    ca, cb = a.category, b.category
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi.category == CATEGORY_COMPLEX and lo.category == CATEGORY_FLOATING:
            # The complex type wide enough for both real parts.
            return _promote_rule(lo, hi.to_real()).to_complex()
        return hi
    if ca == CATEGORY_INTEGRAL:
        if a.is_signed == b.is_signed:
            return a if a.itemsize >= b.itemsize else b
        signed = a if a.is_signed else b
        # uint8 with a signed type: the signed type if wider, else int16.
        return signed if signed.itemsize > 1 else int16
    if ca == CATEGORY_FLOATING and {a, b} == {float16, bfloat16}:
        return float32
    return a if a.itemsize >= b.itemsize else b


class _PromotionTable(dict):
    """promote_types of every pair that promotes; a pair with a barebones unsigned type
    (uint16/32/64) and another dtype is missing, and looking it up raises as c10 does."""

    __slots__ = ()

    def __missing__(self, key):
        a, b = key
        if isinstance(a, _dt.dtype) and isinstance(b, _dt.dtype):
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                               f"attempted to promote {a.scalar_type_name} and {b.scalar_type_name}")
        raise KeyError(key)


_PROMOTE = _PromotionTable({(a, b): _promote_rule(a, b) for a in ALL_DTYPES for b in ALL_DTYPES})
_PROMOTE.update({(d, d): d for d in BAREBONES_UNSIGNED_DTYPES})
# a floating type is the one promotion they join: the floating type wins
_PROMOTE.update({k: f for d in BAREBONES_UNSIGNED_DTYPES for f in ALL_DTYPES if f.is_floating_point
                 for k in ((d, f), (f, d))})
# bool may never be reached from a wider category; otherwise any widening is fine.
_CAN_CAST = {(a, b): a.category <= b.category for a in EVERY_DTYPE for b in EVERY_DTYPE}


def promote_types(a, b):
    """The smallest dtype both a and b convert to (torch.promote_types)."""
    try:
        return _PROMOTE[a, b]
    except KeyError:
        raise TypeError(f"promote_types() expects two onion dtypes, got {a!r} and {b!r}") from None


def can_cast(from_, to):
    """Whether an in-place or out= result may be cast from ``from_`` to ``to`` (torch.can_cast)."""
    try:
        return _CAN_CAST[from_, to]
    except KeyError:
        raise TypeError(f"can_cast() expects two onion dtypes, got {from_!r} and {to!r}") from None


# ---------------------------------------------------------------------------
# Python scalars

_SCALAR_DTYPE = {
    bool: _bool,  # the builtin types; onion's bool dtype is _bool
    int: int64,
    float: float64,
    complex: complex128,
}


def scalar_dtype(value):
    """The dtype of the wrapped 0-dim tensor PyTorch makes for a Python number.

    bool -> bool, int -> int64, float -> float64, complex -> complex128. Use it
    with priority WRAPPED; promotion then applies the default dtype.
    NumPy scalars follow torch 2.13: integers are ints, floating are floats, and
    np.bool_ counts as a float (torch does that too). np.complex64 is complex here;
    torch 2.13 treats it as a float and drops the imaginary part.
    """
    d = _SCALAR_DTYPE.get(type(value))
    if d is not None:
        return d
    return _scalar_dtype_slow(value)


def _scalar_dtype_slow(value):
    if isinstance(value, bool):
        return _bool
    if isinstance(value, (int, _np.integer)):
        return int64
    if isinstance(value, (float, _np.floating, _np.bool_)):
        return float64
    if isinstance(value, (complex, _np.complexfloating)):
        return complex128
    raise TypeError(f"expected a Python number (bool, int, float or complex), got {type(value).__name__}")


def default_dtype_for_scalar(value):
    """The dtype ``onion.tensor(value)`` gets: the default (complex) dtype for floats."""
    d = scalar_dtype(value)
    if d.category == CATEGORY_FLOATING:
        return _dt._default_dtype
    if d.category == CATEGORY_COMPLEX:
        return _dt._default_complex_dtype
    return d


# ---------------------------------------------------------------------------
# Result type

def _combine(higher, lower):
    """c10's combine_categories: lower counts only if its category is higher."""
    if higher is None:
        return lower
    if lower is None or lower.category <= higher.category:
        return higher
    if higher.category == CATEGORY_FLOATING:
        # complex below floating keeps the floating precision: float64 + 1j -> complex128
        return higher.to_complex()
    # bool < integral < floating: the two differ in category, so the lower-priority type wins
    return lower


def _compute_result_type(operands):
    dim = zero = wrapped = None
    for d, prio in operands:
        if prio == DIMENSIONED:
            dim = d if dim is None else _PROMOTE[dim, d]
        elif prio == ZERO_DIM:
            zero = d if zero is None else _PROMOTE[zero, d]
        elif prio == WRAPPED:
            c = d.category
            if c == CATEGORY_FLOATING:
                d = _dt._default_dtype
            elif c == CATEGORY_COMPLEX:
                d = _dt._default_complex_dtype
            wrapped = d if wrapped is None else _PROMOTE[wrapped, d]
        else:
            raise ValueError(f"unknown operand priority {prio!r}; expected DIMENSIONED, ZERO_DIM or WRAPPED")
    if dim is None and zero is None and wrapped is None:
        raise ValueError("result type needs at least one operand")
    return _combine(dim, _combine(zero, wrapped))


_RESULT_MEMO = {}
_PAIR_MEMO = {}
_MEMO_LIMIT = 1 << 14


def result_type_of(operands):
    """The common dtype of operands given as ``(dtype, priority)`` pairs.

    Priorities are DIMENSIONED (dim > 0), ZERO_DIM (0-dim tensor) and WRAPPED
    (a Python number; its dtype from scalar_dtype).
    """
    key = operands if type(operands) is tuple else tuple(operands)
    r = _RESULT_MEMO.get(key)
    if r is None:
        r = _compute_result_type(key)
        if len(_RESULT_MEMO) >= _MEMO_LIMIT:
            _RESULT_MEMO.clear()
        _RESULT_MEMO[key] = r
    return r


def promote_pair(dtype_a, prio_a, dtype_b, prio_b):
    """result_type_of for two operands, the common case of binary ops."""
    r = _PAIR_MEMO.get((dtype_a, prio_a, dtype_b, prio_b))
    if r is None:
        r = _compute_result_type(((dtype_a, prio_a), (dtype_b, prio_b)))
        # at most 12 * 3 squared entries, so no limit is needed
        _PAIR_MEMO[dtype_a, prio_a, dtype_b, prio_b] = r
    return r


def _clear_memos():
    _RESULT_MEMO.clear()
    _PAIR_MEMO.clear()


_dt.add_default_dtype_listener(_clear_memos)

# Names re-exported for callers that only import promotion.
__all__ = [
    "DIMENSIONED", "ZERO_DIM", "WRAPPED",
    "type_category", "promote_types", "can_cast",
    "scalar_dtype", "default_dtype_for_scalar",
    "result_type_of", "promote_pair",
]
