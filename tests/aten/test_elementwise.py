"""Elementwise operators vs PyTorch: promotion, broadcasting, layouts, out=, in-place, Meta, errors."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from conftest import (COMPLEX_NAMES, DTYPE_NAMES, FLOAT_NAMES, INT_NAMES, assert_close, check_same, complex_half_gap,
                      default_dtype, make, meta_like, odt, onion, outcome, same_exc_type, tdt, tmeta_like, to_np, torch)

pytestmark = pytest.mark.oracle      # every test here compares with PyTorch

PAIRS = list(itertools.product(DTYPE_NAMES, DTYPE_NAMES))
BINARY = ("add", "mul", "sub", "div", "eq", "maximum")


def _both(op, *args, **kw):
    """(onion thunk, torch thunk) calling op by name on each library's half of the (onion, torch) pairs."""
    def pick(i):
        return [a[i] if isinstance(a, tuple) else a for a in args], \
            {k: (v[i] if isinstance(v, tuple) else v) for k, v in kw.items()}
    oa, okw = pick(0)
    ta, tkw = pick(1)
    return (lambda: getattr(onion, op)(*oa, **okw)), (lambda: getattr(torch, op)(*ta, **tkw))


# ------------------------------------------------------------------ type promotion, all dtype pairs
@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", BINARY)
def test_binary_all_dtype_pairs(op, a, b):
    x = make((2, 3), a, 1)
    y = make((2, 3), b, 2, positive=(op == "div"))
    check_same(*_both(op, x, y))


ZERO_DIM_PAIRS = list(itertools.product(DTYPE_NAMES, ("bool", "int64", "uint8", "float64", "float16", "complex128")))


@pytest.mark.parametrize("a,b", ZERO_DIM_PAIRS, ids=[f"{a}-{b}" for a, b in ZERO_DIM_PAIRS])
@pytest.mark.parametrize("op", ("add", "div", "eq"))
def test_binary_zero_dim_operand(op, a, b):
    """A 0-dim tensor counts only when its category is higher (both orders)."""
    x = make((3,), a, 1)
    y = make((), b, 2, positive=True)
    check_same(*_both(op, x, y))
    check_same(*_both(op, y, x if op != "div" else make((3,), a, 3, positive=True)))


SCALARS = (True, False, 3, -2, 2.5, 1 + 2j)


@pytest.mark.parametrize("s", SCALARS, ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "div", "eq", "ne", "lt", "ge"))
def test_binary_python_scalar(op, a, s):
    x = make((2, 3), a, 1)
    check_same(*_both(op, x, s))


@pytest.mark.parametrize("s", SCALARS, ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_reflected_python_scalar(a, s):
    o, t = make((2, 3), a, 1, positive=True)
    # torch computes `s / t` as t.reciprocal() * s, rounding the reciprocal to t's dtype first
    rtol = 1e-2 if a in ("float16", "bfloat16") else None
    for fo, ft in ((lambda: s + o, lambda: s + t), (lambda: s - o, lambda: s - t),
                   (lambda: s * o, lambda: s * t), (lambda: s / o, lambda: s / t),
                   (lambda: o + s, lambda: t + s), (lambda: o == s, lambda: t == s)):
        check_same(fo, ft, rtol=rtol)


def test_result_type_matches_torch():
    for a, b in PAIRS:
        o1, t1 = make((2,), a)
        o2, t2 = make((), b)
        if a == "float16" and b in COMPLEX_NAMES:
            continue  # complex32 in torch: see conftest.COMPLEX_HALF_REASON
        assert str(onion.result_type(o1, o2)).split(".")[-1] == str(torch.result_type(t1, t2)).split(".")[-1]
        for s in SCALARS:
            if a == "float16" and isinstance(s, complex):
                continue  # complex32 in torch: see conftest.COMPLEX_HALF_REASON
            assert str(onion.result_type(o1, s)).split(".")[-1] == str(torch.result_type(t1, s)).split(".")[-1]


def test_default_dtype_changes_scalar_promotion():
    o, t = make((3,), "int32")
    with default_dtype("float64"):
        check_same(lambda: o + 1.5, lambda: t + 1.5)
        check_same(lambda: o / 2, lambda: t / 2)
        check_same(lambda: o * 1j, lambda: t * 1j)


# ------------------------------------------------------------------ add / sub / div overloads
ALPHAS = (2, -1, 0.5, True, False, 1j)


@pytest.mark.parametrize("alpha", ALPHAS, ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
@pytest.mark.parametrize("op", ("add", "sub"))
def test_alpha(op, a, alpha):
    x = make((2, 3), a, 1)
    y = make((2, 3), a, 2)
    check_same(*_both(op, x, y, alpha=alpha))
    check_same(*_both(op, x, 3, alpha=alpha))


def test_alpha_mixed_dtypes():
    x = make((3,), "int64", 1)
    y = make((3,), "float32", 2)
    check_same(*_both("add", x, y, alpha=0.5))
    check_same(*_both("sub", y, x, alpha=2))
    check_same(*_both("add", make((3,), "bool"), make((3,), "bool", 3), alpha=True))


@pytest.mark.parametrize("mode", ("trunc", "floor", None))
@pytest.mark.parametrize("a,b", [(a, b) for a in DTYPE_NAMES for b in ("int64", "int8", "float32", "float64",
                                                                        "bfloat16", "bool")],
                         ids=lambda v: str(v))
def test_div_rounding_mode(a, b, mode):
    x = make((4, 5), a, 1, low=-20, high=20)
    y = make((4, 5), b, 2, low=-6, high=6, positive=(b in INT_NAMES or b == "bool"))
    check_same(*_both("div", x, y, rounding_mode=mode))
    check_same(*_both("div", x, 3, rounding_mode=mode))
    check_same(*_both("div", x, -2.5, rounding_mode=mode))


def test_div_rounding_mode_signs_and_specials():
    vals = np.array([7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1e-300, 5.0])
    divs = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, 0.0, 1.0, 1e300, -0.0])
    for name in ("float32", "float64", "float16", "bfloat16"):
        from conftest import from_np
        with np.errstate(over="ignore"):
            x = from_np(vals.astype("float32" if name == "bfloat16" else name), name)
            y = from_np(divs.astype("float32" if name == "bfloat16" else name), name)
        for mode in ("trunc", "floor"):
            ro, rt = check_same(*_both("div", x, y, rounding_mode=mode))
            # signed zeros too (the sign of a NaN means nothing)
            a, b = to_np(ro), to_np(rt)
            np.testing.assert_array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))
    ints = from_np(np.array([7, -7, 7, -7, 0, -1], dtype=np.int32))
    idiv = from_np(np.array([2, 2, -2, -2, 5, 3], dtype=np.int32))
    for mode in ("trunc", "floor"):
        check_same(*_both("div", ints, idiv, rounding_mode=mode))


def test_div_integer_by_zero_raises():
    x = make((3,), "int64", 1)
    z = make((3,), "int64", 0, low=0, high=0)
    for mode in ("trunc", "floor"):
        check_same(*_both("div", x, z, rounding_mode=mode))
        check_same(*_both("div", x, 0, rounding_mode=mode))
        ro = outcome(lambda: onion.div(x[0], 0, rounding_mode=mode))
        assert ro[0] == "err" and str(ro[1]) == "ZeroDivisionError"
    check_same(*_both("div", x, z))   # true division: inf / nan


def test_div_bad_rounding_mode():
    x = make((3,), "float32")
    ro, rt = outcome(lambda: onion.div(x[0], 2, rounding_mode="round")), \
        outcome(lambda: torch.div(x[1], 2, rounding_mode="round"))
    same_exc_type(ro[1], rt[1])
    assert str(ro[1]) == str(rt[1])


def test_bool_sub_messages():
    b = make((2,), "bool")
    i = make((2,), "int64")
    for fo, ft in ((lambda: b[0] - b[0], lambda: b[1] - b[1]), (lambda: i[0] - b[0], lambda: i[1] - b[1]),
                   (lambda: b[0] - 1, lambda: b[1] - 1), (lambda: i[0] - True, lambda: i[1] - True),
                   (lambda: -b[0], lambda: -b[1])):
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err"
        assert str(ro[1]) == str(rt[1])


def test_alpha_error_messages():
    i = make((2,), "int64")
    b = make((2,), "bool")
    f = make((2,), "float32")
    for fo, ft in ((lambda: onion.add(i[0], i[0], alpha=0.5), lambda: torch.add(i[1], i[1], alpha=0.5)),
                   (lambda: onion.add(i[0], i[0], alpha=True), lambda: torch.add(i[1], i[1], alpha=True)),
                   (lambda: onion.add(b[0], b[0], alpha=2.0), lambda: torch.add(b[1], b[1], alpha=2.0)),
                   (lambda: onion.add(f[0], f[0], alpha=1j), lambda: torch.add(f[1], f[1], alpha=1j))):
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err"
        same_exc_type(ro[1], rt[1])
        assert str(ro[1]) == str(rt[1])


# ------------------------------------------------------------------ unary
UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu")


@pytest.mark.parametrize("a", DTYPE_NAMES)
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, a):
    x = make((3, 4), a, 1)
    check_same(*_both(op, x))
    check_same(lambda: getattr(x[0], op)(), lambda: getattr(x[1], op)())


@pytest.mark.parametrize("a", FLOAT_NAMES + COMPLEX_NAMES)
@pytest.mark.parametrize("op", UNARY)
def test_unary_special_values(op, a):
    if a in COMPLEX_NAMES:
        vals = np.array([0, -0.0, 1, -1, 1e-3, 50, -50, np.inf, -np.inf, np.nan, 1j, -2 + 3j], dtype=a)
    else:
        vals = np.array([0, -0.0, 1, -1, 1e-3, 50, -50, 100, -100, np.inf, -np.inf, np.nan],
                        dtype="float32" if a == "bfloat16" else a)
    from conftest import from_np
    x = from_np(vals, a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(*_both(op, x), rtol=2e-2 if a in ("float16", "bfloat16") else 1e-5)


def test_unary_dunders():
    o, t = make((3,), "float32")
    check_same(lambda: -o, lambda: -t)
    check_same(lambda: abs(o), lambda: abs(t))
    oi, ti = make((3,), "int8")
    check_same(lambda: -oi, lambda: -ti)


def test_abs_complex_returns_real():
    o, t = make((3,), "complex128")
    ro, rt = check_same(*_both("abs", (o, t)))
    assert ro.dtype is onion.float64


def test_integer_overflow_wraps():
    from conftest import from_np
    x = from_np(np.array([127, -128, 100], dtype=np.int8))
    check_same(lambda: x[0] + x[0], lambda: x[1] + x[1])
    check_same(lambda: x[0] * 3, lambda: x[1] * 3)
    check_same(lambda: -x[0], lambda: -x[1])
    check_same(lambda: abs(x[0]), lambda: abs(x[1]))
    u = from_np(np.array([250, 3], dtype=np.uint8))
    check_same(lambda: u[0] + 10, lambda: u[1] + 10)
    check_same(lambda: u[0] - 5, lambda: u[1] - 5)


# ------------------------------------------------------------------ pow
POW_PAIRS = [(a, b) for a in DTYPE_NAMES for b in DTYPE_NAMES]


@pytest.mark.parametrize("a,b", POW_PAIRS, ids=[f"{a}-{b}" for a, b in POW_PAIRS])
def test_pow_tensor_tensor(a, b):
    x = make((2, 3), a, 1, low=-3, high=3)
    y = make((2, 3), b, 2, low=0, high=3)
    check_same(*_both("pow", x, y), rtol=1e-2 if "16" in a + b else None)


POW_EXPONENTS = (2, 3, 0, 1, -1, -2, 0.5, 2.0, -0.5, True, False, 1j, 1.5 + 0.5j)


@pytest.mark.parametrize("e", POW_EXPONENTS, ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_pow_tensor_scalar(a, e):
    x = make((2, 3), a, 1, low=-3, high=3)
    check_same(*_both("pow", x, e), rtol=1e-2 if "16" in a else None)
    check_same(lambda: x[0] ** e, lambda: x[1] ** e, rtol=1e-2 if "16" in a else None)
    check_same(lambda: x[0].pow(e), lambda: x[1].pow(e), rtol=1e-2 if "16" in a else None)


@pytest.mark.parametrize("s", (2, -2, 0.5, 2.5, True, 1j), ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_pow_scalar_tensor(a, s):
    x = make((2, 3), a, 1, low=-3, high=3)
    check_same(*_both("pow", s, x), rtol=1e-2 if "16" in a else None)
    check_same(lambda: s ** x[0], lambda: s ** x[1], rtol=1e-2 if "16" in a else None)


def test_pow_integer_negative_exponent():
    from conftest import from_np
    x = from_np(np.array([-2, -1, 0, 1, 2, 3], dtype=np.int64))
    e = from_np(np.array([-1, -1, 2, -3, -2, -1], dtype=np.int64))
    for fo, ft in ((lambda: x[0].pow(-1), lambda: x[1].pow(-1)), (lambda: x[0] ** -2, lambda: x[1] ** -2)):
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err"
        same_exc_type(ro[1], rt[1])
        assert str(ro[1]) == str(rt[1]) == "Integers to negative integer powers are not allowed."
    # tensor exponents do not raise: 1 ** -n == 1, (-1) ** -n == +-1, anything else -> 0
    check_same(lambda: x[0] ** e[0], lambda: x[1] ** e[1])
    check_same(lambda: x[0] ** e[0][0], lambda: x[1] ** e[1][0])
    check_same(lambda: onion.pow(-1, e[0]), lambda: torch.pow(-1, e[1]))
    check_same(lambda: x[0].pow(-1.0), lambda: x[1].pow(-1.0))


def test_pow_inplace():
    x = make((2, 3), "float32", 1, positive=True)
    o, t = x[0].clone(), x[1].clone()
    check_same(lambda: o.pow_(2), lambda: t.pow_(2))
    check_same(lambda: o.pow_(make((2, 3), "float32", 3)[0]), lambda: t.pow_(make((2, 3), "float32", 3)[1]))
    i, it = make((3,), "int32")
    check_same(lambda: i.pow_(0.5), lambda: it.pow_(0.5))


# ------------------------------------------------------------------ comparisons
CMP = ("eq", "ne", "lt", "le", "gt", "ge")
CMP_PAIRS = [(a, b) for a in DTYPE_NAMES for b in ("bool", "uint8", "int64", "float16", "float32", "complex64")]


@pytest.mark.parametrize("a,b", CMP_PAIRS, ids=[f"{a}-{b}" for a, b in CMP_PAIRS])
@pytest.mark.parametrize("op", CMP)
def test_comparison_tensor(op, a, b):
    x = make((3, 4), a, 1, low=-2, high=2)
    y = make((3, 4), b, 2, low=-2, high=2)
    check_same(*_both(op, x, y))


@pytest.mark.parametrize("s", (True, 0, 1, -1, 1.5, 2j), ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
@pytest.mark.parametrize("op", CMP)
def test_comparison_scalar(op, a, s):
    x = make((3, 4), a, 1, low=-2, high=2)
    check_same(*_both(op, x, s))
    check_same(lambda: getattr(x[0], op)(s), lambda: getattr(x[1], op)(s))


def test_comparison_dunders_and_nan():
    from conftest import from_np
    x = from_np(np.array([1.0, np.nan, 3.0, -np.inf], dtype=np.float32))
    y = from_np(np.array([1.0, np.nan, 2.0, -np.inf], dtype=np.float32))
    for f in (lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
              lambda a, b: a > b, lambda a, b: a >= b, lambda a, b: a == 3):
        check_same(lambda: f(x[0], y[0]), lambda: f(x[1], y[1]))


def test_comparison_out_and_inplace():
    x = make((2, 3), "float32", 1)
    y = make((2, 3), "float32", 2)
    ob, tb = onion.empty(2, 3, dtype=onion.bool), torch.empty(2, 3, dtype=torch.bool)
    check_same(lambda: onion.lt(x[0], y[0], out=ob), lambda: torch.lt(x[1], y[1], out=tb))
    of, tf = onion.empty(2, 3), torch.empty(2, 3)
    check_same(lambda: onion.lt(x[0], y[0], out=of), lambda: torch.lt(x[1], y[1], out=tf))
    o, t = x[0].clone(), x[1].clone()
    check_same(lambda: o.ge_(y[0]), lambda: t.ge_(y[1]))
    check_same(lambda: o.eq_(1.0), lambda: t.eq_(1.0))


# ------------------------------------------------------------------ where / maximum / minimum / clamp
WHERE_PAIRS = [(a, b) for a in DTYPE_NAMES for b in ("bool", "int8", "int64", "float16", "float64", "complex64")]


@pytest.mark.parametrize("a,b", WHERE_PAIRS, ids=[f"{a}-{b}" for a, b in WHERE_PAIRS])
def test_where_self(a, b):
    c = make((3, 1), "bool", 5)
    x = make((3, 4), a, 1)
    y = make((4,), b, 2)
    check_same(*_both("where", c, x, y))


def test_where_out_resized_takes_input_layout():
    # an empty out= resized by where gets TensorIterator's layout of the inputs (here (1, 9, 3)), as the
    # functional result does
    import onion
    import torch
    rs = np.random.RandomState(8)
    c0, s0, o0 = rs.rand(10, 6) > 0.5, rs.randn(10, 2).astype(np.float32), rs.randn(3, 10, 3).astype(np.float32)
    res = []
    for lib in (torch, onion):
        c, x = lib.tensor(c0)[:, ::2], lib.tensor(s0)[:, :1]
        y = lib.tensor(o0).permute(2, 1, 0).contiguous().permute(2, 1, 0)
        out = lib.empty(0)
        lib.where(c, x, y, out=out)
        res.append((tuple(out.stride()), out.numpy().copy()))
    assert res[0][0] == res[1][0] == (1, 9, 3)
    np.testing.assert_array_equal(res[0][1], res[1][1])


def test_where_method_binds_self():
    c = make((3, 1), "bool", 5)
    x = make((3, 4), "float32", 1)
    y = make((4,), "float32", 2)
    check_same(lambda: x[0].where(c[0], y[0]), lambda: x[1].where(c[1], y[1]))


@pytest.mark.parametrize("s", (True, 2, -1.5, 1j), ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_where_scalar_overloads(a, s):
    c = make((3, 4), "bool", 5)
    x = make((3, 4), a, 1)
    check_same(*_both("where", c, x, s))    # ScalarOther
    check_same(*_both("where", c, s, x))    # ScalarSelf


@pytest.mark.parametrize("s1,s2", [(1, 0), (1.0, 0), (True, False), (2, 1.5), (1j, 0), (True, 3)], ids=repr)
def test_where_scalar_scalar(s1, s2):
    c = make((3, 4), "bool", 5)
    check_same(*_both("where", c, s1, s2))


def test_where_errors_and_broadcast():
    c = make((2,), "int64")
    x = make((2,), "float32")
    ro, rt = outcome(lambda: onion.where(c[0], x[0], x[0])), outcome(lambda: torch.where(c[1], x[1], x[1]))
    assert ro[0] == rt[0] == "err" and str(ro[1]) == str(rt[1])
    cu = make((2,), "uint8")
    check_same(*_both("where", cu, x, x))
    cb = make((2, 1), "bool")
    check_same(*_both("where", cb, x, make((3, 1, 1), "float64")))
    check_same(*_both("where", make((3,), "bool"), x, x))


MAXMIN_PAIRS = [(a, b) for a in DTYPE_NAMES for b in ("bool", "uint8", "int32", "bfloat16", "float32", "complex64")]


@pytest.mark.parametrize("a,b", MAXMIN_PAIRS, ids=[f"{a}-{b}" for a, b in MAXMIN_PAIRS])
@pytest.mark.parametrize("op", ("maximum", "minimum"))
def test_maximum_minimum(op, a, b):
    x = make((3, 4), a, 1)
    y = make((4,), b, 2)
    check_same(*_both(op, x, y))


def test_maximum_nan_propagates():
    from conftest import from_np
    x = from_np(np.array([1.0, np.nan, 3.0, np.nan]))
    y = from_np(np.array([np.nan, 2.0, 1.0, np.nan]))
    for op in ("maximum", "minimum"):
        check_same(*_both(op, x, y))


CLAMP_BOUNDS = [(0, 2), (-1, None), (None, 1), (0.5, 2.5), (-1.5, None), (True, None), (3, 1), (None, None),
                (1j, None)]


@pytest.mark.parametrize("lo,hi", CLAMP_BOUNDS, ids=repr)
@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_clamp_scalar(a, lo, hi):
    x = make((3, 4), a, 1, low=-3, high=3)
    check_same(*_both("clamp", x, lo, hi))
    check_same(*_both("clamp", x, min=lo, max=hi))
    check_same(lambda: x[0].clamp(lo, hi), lambda: x[1].clamp(lo, hi))


@pytest.mark.parametrize("a,b", [(a, b) for a in ("uint8", "int32", "float16", "float32", "float64", "bool",
                                                  "complex64")
                                 for b in ("int64", "float32", "float64", "bool")], ids=lambda v: str(v))
def test_clamp_tensor(a, b):
    x = make((3, 4), a, 1, low=-3, high=3)
    lo = make((4,), b, 2, low=-2, high=0)
    hi = make((3, 1), b, 3, low=0, high=2)
    check_same(*_both("clamp", x, lo, hi))
    check_same(*_both("clamp", x, lo))
    check_same(*_both("clamp", x, None, hi))
    check_same(*_both("clamp", x, min=lo))
    check_same(*_both("clamp", x, max=hi))


def test_clamp_nan_and_inplace():
    from conftest import from_np
    x = from_np(np.array([np.nan, -5.0, 5.0, 0.5], dtype=np.float32))
    check_same(*_both("clamp", x, -1.0, 1.0))
    check_same(*_both("clamp", x, from_np(np.array([np.nan, 0, 0, 0], dtype=np.float32)), None))
    o, t = x[0].clone(), x[1].clone()
    check_same(lambda: o.clamp_(0, 1), lambda: t.clamp_(0, 1))
    check_same(lambda: onion.clamp_(o, max=0.2), lambda: torch.clamp_(t, max=0.2))
    i, ti = make((4,), "int32")
    check_same(lambda: i.clamp_(0.5), lambda: ti.clamp_(0.5))
    lo = make((4,), "float32", 9)
    o2, t2 = x[0].clone(), x[1].clone()
    check_same(lambda: o2.clamp_(lo[0]), lambda: t2.clamp_(lo[1]))


def test_clamp_requires_a_bound():
    x = make((3,), "float32")
    for fo, ft in ((lambda: onion.clamp(x[0]), lambda: torch.clamp(x[1])),
                   (lambda: onion.clamp(x[0], None, None), lambda: torch.clamp(x[1], None, None))):
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err"
        same_exc_type(ro[1], rt[1])
        assert str(ro[1]) == str(rt[1])


# ------------------------------------------------------------------ broadcasting
BCAST = [((2, 3), (3,)), ((2, 1), (1, 3)), ((4, 1, 3), (2, 1)), ((), (2, 3)), ((1,), (5,)), ((0, 3), (1, 3)),
         ((2, 0), (2, 1)), ((3, 1, 1), (1, 4, 1))]


@pytest.mark.parametrize("sa,sb", BCAST, ids=repr)
@pytest.mark.parametrize("op", ("add", "mul", "div", "eq", "maximum", "pow", "lt"))
def test_broadcasting(op, sa, sb):
    x = make(sa, "float32", 1, positive=True)
    y = make(sb, "float64", 2, positive=True)
    check_same(*_both(op, x, y))
    check_same(*_both(op, y, x))


@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((2, 3), (3, 2)), ((4, 2, 3), (5, 3)), ((2, 1), (3, 4, 3))],
                         ids=repr)
@pytest.mark.parametrize("op", ("add", "sub", "mul", "div", "eq", "lt", "maximum", "minimum", "pow", "where",
                                "clamp"))
def test_broadcast_error_message(op, sa, sb):
    x = make(sa, "float32", 1)
    y = make(sb, "float32", 2)
    if op == "where":
        fo, ft = _both("where", make(sa, "bool"), x, y)
    elif op == "clamp":
        fo, ft = _both("clamp", x, y)
    else:
        fo, ft = _both(op, x, y)
    ro, rt = outcome(fo), outcome(ft)
    assert rt[0] == "err"
    assert ro[0] == "err", f"onion returned {ro[1]!r}"
    same_exc_type(ro[1], rt[1])
    assert str(ro[1]) == str(rt[1])


def test_broadcast_error_exact_text():
    a = onion.ones(2)
    b = onion.ones(3)
    with pytest.raises(RuntimeError) as e:
        onion.add(a, b)
    assert str(e.value) == "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    with pytest.raises(RuntimeError) as e:
        a + b
    assert str(e.value) == "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    with pytest.raises(RuntimeError) as e:
        onion.exp(a, out=onion.empty(2)).add_(b)
    assert str(e.value) == "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"


# ------------------------------------------------------------------ non-contiguous inputs: values and strides
LAYOUTS = ("contiguous", "transposed", "stepped", "expanded")
LAYOUT_OPS = {
    "add": lambda m, x, y: m.add(x, y), "sub_alpha": lambda m, x, y: m.sub(x, y, alpha=2),
    "mul": lambda m, x, y: m.mul(x, y), "div": lambda m, x, y: m.div(x, y),
    "div_floor": lambda m, x, y: m.div(x, y, rounding_mode="floor"), "eq": lambda m, x, y: m.eq(x, y),
    "maximum": lambda m, x, y: m.maximum(x, y), "pow": lambda m, x, y: m.pow(x, y),
    "where": lambda m, x, y: m.where(m.gt(x, 1), x, y), "clamp": lambda m, x, y: m.clamp(x, y),
    "add_scalar": lambda m, x, y: m.add(x, 2.5), "exp": lambda m, x, y: m.exp(x),
    "neg": lambda m, x, y: m.neg(x), "abs": lambda m, x, y: m.abs(x), "sigmoid": lambda m, x, y: m.sigmoid(x),
    "relu": lambda m, x, y: m.relu(x), "gt_scalar": lambda m, x, y: m.gt(x, 0),
}


@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("op", list(LAYOUT_OPS))
def test_noncontiguous_values_and_strides(op, la, lb):
    f = LAYOUT_OPS[op]
    x = make((3, 4), "float32", 1, layout=la, positive=True)
    y = make((3, 4), "float32", 2, layout=lb, positive=True)
    check_same(lambda: f(onion, x[0], y[0]), lambda: f(torch, x[1], y[1]))


@pytest.mark.parametrize("dt", ("int64", "float16", "bool", "complex64"))
def test_noncontiguous_mixed_dtypes(dt):
    x = make((2, 3, 4), dt, 1, layout="transposed")
    y = make((2, 3, 4), "float32", 2, layout="stepped")
    check_same(*_both("add", x, y))
    check_same(*_both("mul", y, x))
    p = (x[0].permute(2, 0, 1), x[1].permute(2, 0, 1))
    check_same(*_both("eq", p, 1))
    check_same(*_both("abs", p))


def test_broadcast_output_strides_follow_inputs():
    # (3,1) transposed-ish + (1,4): torch picks strides from the input layouts
    a = make((4, 3), "float32", 1)
    at = (a[0].t(), a[1].t())
    b = make((3, 1), "float32", 2)
    check_same(*_both("add", at, b))
    check_same(*_both("add", b, at))
    c = make((2, 3, 4), "float32", 3)
    cp = (c[0].permute(2, 0, 1), c[1].permute(2, 0, 1))
    check_same(*_both("mul", cp, make((3, 1), "float32", 4)))


# ------------------------------------------------------------------ out=
OUT_OPS = {
    "add": lambda m, x, y, **k: m.add(x, y, alpha=2, **k), "sub": lambda m, x, y, **k: m.sub(x, y, **k),
    "mul": lambda m, x, y, **k: m.mul(x, y, **k), "div": lambda m, x, y, **k: m.div(x, y, **k),
    "div_trunc": lambda m, x, y, **k: m.div(x, y, rounding_mode="trunc", **k),
    "pow": lambda m, x, y, **k: m.pow(x, y, **k), "pow_scalar": lambda m, x, y, **k: m.pow(x, 2, **k),
    "rpow": lambda m, x, y, **k: m.pow(2, x, **k),
    "maximum": lambda m, x, y, **k: m.maximum(x, y, **k), "minimum": lambda m, x, y, **k: m.minimum(x, y, **k),
    "clamp": lambda m, x, y, **k: m.clamp(x, 0.5, 1.5, **k), "clamp_t": lambda m, x, y, **k: m.clamp(x, y, **k),
    "where": lambda m, x, y, **k: m.where(m.gt(x, 1), x, y, **k), "exp": lambda m, x, y, **k: m.exp(x, **k),
    "neg": lambda m, x, y, **k: m.neg(x, **k), "sqrt": lambda m, x, y, **k: m.sqrt(x, **k),
    "eq": lambda m, x, y, **k: m.eq(x, y, **k),
}


@pytest.mark.parametrize("op", list(OUT_OPS))
def test_out_right_shape(op):
    f = OUT_OPS[op]
    x = make((3, 4), "float32", 1, positive=True)
    y = make((4,), "float32", 2, positive=True)
    dt = "bool" if op == "eq" else "float32"
    oo, to = onion.empty(3, 4, dtype=odt(dt)), torch.empty(3, 4, dtype=tdt(dt))
    ro, rt = check_same(lambda: f(onion, x[0], y[0], out=oo), lambda: f(torch, x[1], y[1], out=to))
    assert ro is oo
    assert_close(oo, to)


@pytest.mark.parametrize("op", [k for k in OUT_OPS if k != "eq"])
def test_out_resized_with_warning(op):
    f = OUT_OPS[op]
    x = make((3, 4), "float32", 1, positive=True)
    y = make((4,), "float32", 2, positive=True)
    oo, to = onion.empty(5), torch.empty(5)
    with pytest.warns(UserWarning, match="was resized"):
        ro = f(onion, x[0], y[0], out=oo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(torch, x[1], y[1], out=to) is to
    assert ro is oo
    assert_close(oo, to)
    # an empty out is resized silently
    oo, to = onion.empty(0), torch.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(onion, x[0], y[0], out=oo)
        f(torch, x[1], y[1], out=to)
    assert_close(oo, to)


def test_relu_out():
    """onion declares relu.out; torch's Python API has none, so compare with torch.relu's value."""
    x = make((3, 4), "float32", 1, layout="transposed")
    oo = onion.empty(3, 4)
    assert onion.relu(x[0], out=oo) is oo
    assert_close(oo, torch.relu(x[1]).contiguous())
    ol = onion.empty(3, 4, dtype=onion.int64)
    check_same(lambda: onion.relu(x[0], out=ol), lambda: torch.add(x[1], 0, out=torch.empty(3, 4, dtype=torch.int64)),
               msg=True)


def test_out_dtype_errors_and_casts():
    x = make((2, 3), "float32", 1)
    i = make((2, 3), "int64", 2)
    ol, tl = onion.empty(2, 3, dtype=onion.int64), torch.empty(2, 3, dtype=torch.int64)
    ro, rt = outcome(lambda: onion.add(x[0], x[0], out=ol)), outcome(lambda: torch.add(x[1], x[1], out=tl))
    assert ro[0] == rt[0] == "err"
    assert str(ro[1]) == str(rt[1]) == "result type Float can't be cast to the desired output type Long"
    # int result into a float out: allowed (cast)
    of, tf = onion.empty(2, 3, dtype=onion.float64), torch.empty(2, 3, dtype=torch.float64)
    check_same(lambda: onion.add(i[0], i[0], out=of), lambda: torch.add(i[1], i[1], out=tf))
    # comparison into an int out
    check_same(lambda: onion.eq(i[0], i[0], out=ol), lambda: torch.eq(i[1], i[1], out=tl))
    # complex result into float out
    c = make((2, 3), "complex64")
    of32, tf32 = onion.empty(2, 3), torch.empty(2, 3)
    ro, rt = outcome(lambda: onion.mul(c[0], c[0], out=of32)), outcome(lambda: torch.mul(c[1], c[1], out=tf32))
    assert ro[0] == rt[0] == "err" and str(ro[1]) == str(rt[1])
    # every (result, out) dtype pair on add
    for a, b in itertools.product(DTYPE_NAMES, DTYPE_NAMES):
        xa = make((3,), a, 1)
        oo, to = onion.empty(3, dtype=odt(b)), torch.empty(3, dtype=tdt(b))
        # tolerance of the compute dtype (a complex64 product written to a complex128 out)
        check_same(lambda: onion.mul(xa[0], xa[0], out=oo), lambda: torch.mul(xa[1], xa[1], out=to),
                   rtol=1e-2 if "16" in a else 1e-5)


def test_out_noncontiguous_is_written_through():
    x = make((3, 4), "float32", 1)
    base_o, base_t = onion.zeros(4, 3), torch.zeros(4, 3)
    oo, to = base_o.t(), base_t.t()
    check_same(lambda: onion.add(x[0], 1, out=oo), lambda: torch.add(x[1], 1, out=to))
    assert_close(base_o, base_t)
    base_o, base_t = onion.zeros(3, 8), torch.zeros(3, 8)
    check_same(lambda: onion.exp(x[0], out=base_o[:, ::2]), lambda: torch.exp(x[1], out=base_t[:, ::2]))
    assert_close(base_o, base_t)


def test_out_version_counter():
    x = make((3,), "float32")
    oo = onion.empty(3)
    v = oo._version
    onion.add(x[0], x[0], out=oo)
    assert oo._version == v + 1
    to = torch.empty(3)
    tv = to._version
    torch.add(x[1], x[1], out=to)
    assert oo._version - v == to._version - tv


# ------------------------------------------------------------------ in-place
INPLACE = {
    "add_": lambda x, y: x.add_(y), "add_alpha": lambda x, y: x.add_(y, alpha=2), "add_s": lambda x, y: x.add_(2),
    "sub_": lambda x, y: x.sub_(y), "sub_s": lambda x, y: x.sub_(1.5, alpha=2), "mul_": lambda x, y: x.mul_(y),
    "mul_s": lambda x, y: x.mul_(2), "div_": lambda x, y: x.div_(y), "div_s": lambda x, y: x.div_(4),
    "div_floor": lambda x, y: x.div_(y, rounding_mode="floor"),
    "div_s_trunc": lambda x, y: x.div_(3, rounding_mode="trunc"),
    "neg_": lambda x, y: x.neg_(), "abs_": lambda x, y: x.abs_(), "exp_": lambda x, y: x.exp_(),
    "sqrt_": lambda x, y: x.sqrt_(), "sigmoid_": lambda x, y: x.sigmoid_(), "relu_": lambda x, y: x.relu_(),
    "pow_": lambda x, y: x.pow_(2), "clamp_": lambda x, y: x.clamp_(0, 1), "iadd": lambda x, y: x.__iadd__(y),
    "imul": lambda x, y: x.__imul__(3), "isub": lambda x, y: x.__isub__(y), "itruediv": lambda x, y: x.__itruediv__(y),
    "eq_": lambda x, y: x.eq_(y), "lt_s": lambda x, y: x.lt_(1),
}


@pytest.mark.parametrize("dt", ("float32", "int64", "float16", "complex64", "bool", "uint8", "bfloat16"))
@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace(op, dt):
    f = INPLACE[op]
    x = make((3, 4), dt, 1, positive=True)
    y = make((4,), dt, 2, positive=True)
    o, t = x[0].clone(), x[1].clone()
    vo, vt = o._version, t._version
    ro, rt = outcome(lambda: f(o, y[0])), outcome(lambda: f(t, y[1]))
    if rt[0] == "err":
        assert ro[0] == "err", f"torch raised {rt[1]!r}, onion returned {ro[1]!r}"
        same_exc_type(ro[1], rt[1])
        assert str(ro[1]) == str(rt[1])
        return
    assert ro[0] == "ok", f"onion raised {ro[1]!r}"
    assert ro[1] is o
    assert_close(o, t)
    assert o._version - vo == t._version - vt


def test_inplace_promotion_errors():
    i = make((3,), "int64")
    f = make((3,), "float32")
    b = make((3,), "bool")
    for fo, ft in ((lambda: i[0].clone().add_(f[0]), lambda: i[1].clone().add_(f[1])),
                   (lambda: i[0].clone().add_(1.5), lambda: i[1].clone().add_(1.5)),
                   (lambda: i[0].clone().div_(2), lambda: i[1].clone().div_(2)),
                   (lambda: b[0].clone().add_(i[0]), lambda: b[1].clone().add_(i[1])),
                   (lambda: f[0].clone().mul_(1j), lambda: f[1].clone().mul_(1j)),
                   (lambda: i[0].clone().sqrt_(), lambda: i[1].clone().sqrt_())):
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err", (ro, rt)
        same_exc_type(ro[1], rt[1])
        assert str(ro[1]) == str(rt[1])
    # a wider in-place operand is fine when the category allows it
    check_same(lambda: f[0].clone().add_(i[0]), lambda: f[1].clone().add_(i[1]))
    check_same(lambda: i[0].clone().div_(2, rounding_mode="floor"), lambda: i[1].clone().div_(2, rounding_mode="floor"))


def test_inplace_broadcast_shape_error():
    o, t = onion.ones(2, 1), torch.ones(2, 1)
    ro, rt = outcome(lambda: o.add_(onion.ones(3))), outcome(lambda: t.add_(torch.ones(3)))
    assert ro[0] == rt[0] == "err"
    assert str(ro[1]) == str(rt[1]) == "output with shape [2, 1] doesn't match the broadcast shape [2, 3]"
    ro, rt = outcome(lambda: o.mul_(onion.ones(2, 3))), outcome(lambda: t.mul_(torch.ones(2, 3)))
    assert str(ro[1]) == str(rt[1])


def test_inplace_on_views_updates_base():
    x = make((3, 4), "float32", 1)
    bo, bt = x[0].clone(), x[1].clone()
    vo0, vt0 = bo._version, bt._version
    bo[0].add_(10)
    bt[0].add_(10)
    assert_close(bo, bt)
    bo.t().mul_(2)
    bt.t().mul_(2)
    assert_close(bo, bt)
    bo[:, 1].neg_()
    bt[:, 1].neg_()
    assert_close(bo, bt)
    bo[1:, ::2].clamp_(max=0)
    bt[1:, ::2].clamp_(max=0)
    assert_close(bo, bt)
    bo.diagonal().div_(4)
    bt.diagonal().div_(4)
    assert_close(bo, bt)
    bo.t()[2].sub_(make((3,), "float32", 7)[0])
    bt.t()[2].sub_(make((3,), "float32", 7)[1])
    assert_close(bo, bt)
    assert bo._version - vo0 == bt._version - vt0
    # views share the version counter with their base
    v = bo[1]
    assert v._version == bo._version
    v.exp_()
    assert v._version == bo._version


def test_inplace_on_expanded_view_errors_like_torch():
    o, t = make((1, 4), "float32")
    eo, et = o.expand(3, 4), t.expand(3, 4)
    check_same(lambda: eo.add_(1), lambda: et.add_(1), msg=True)
    check_same(lambda: onion.add(o, 1, out=eo), lambda: torch.add(t, 1, out=et), msg=True)
    assert_close(o, t)


def test_inplace_self_aliasing():
    o, t = make((3, 3), "float32", 1)
    o, t = o.clone(), t.clone()
    # the same memory, read and written: fine
    check_same(lambda: o.mul_(o), lambda: t.mul_(t))
    check_same(lambda: o.add_(o[:]), lambda: t.add_(t[:]))
    check_same(lambda: onion.add(o, 1, out=o), lambda: torch.add(t, 1, out=t))
    # partly the same memory: refused
    for fo, ft in ((lambda: o.add_(o.t()), lambda: t.add_(t.t())),
                   (lambda: onion.mul(o, 2, out=o.t()), lambda: torch.mul(t, 2, out=t.t())),
                   (lambda: o[1:].add_(o[:2]), lambda: t[1:].add_(t[:2])),
                   (lambda: onion.exp(o[:2], out=o[1:]), lambda: torch.exp(t[:2], out=t[1:]))):
        check_same(fo, ft, msg=True)
    assert_close(o, t)
    # memory that does not overlap, in one storage: fine
    check_same(lambda: o[0].add_(o[1]), lambda: t[0].add_(t[1]))
    assert_close(o, t)


# ------------------------------------------------------------------ Meta
META_OPS = {
    "add": lambda m, x, y: m.add(x, y, alpha=2), "sub": lambda m, x, y: m.sub(x, y), "mul": lambda m, x, y: m.mul(x, y),
    "div": lambda m, x, y: m.div(x, y), "div_floor": lambda m, x, y: m.div(x, y, rounding_mode="floor"),
    "add_scalar": lambda m, x, y: m.add(x, 1.5), "mul_scalar": lambda m, x, y: m.mul(x, 2),
    "div_scalar": lambda m, x, y: m.div(x, 2), "neg": lambda m, x, y: m.neg(x), "abs": lambda m, x, y: m.abs(x),
    "exp": lambda m, x, y: m.exp(x), "log": lambda m, x, y: m.log(x), "sqrt": lambda m, x, y: m.sqrt(x),
    "rsqrt": lambda m, x, y: m.rsqrt(x), "sin": lambda m, x, y: m.sin(x), "cos": lambda m, x, y: m.cos(x),
    "tanh": lambda m, x, y: m.tanh(x), "sigmoid": lambda m, x, y: m.sigmoid(x), "relu": lambda m, x, y: m.relu(x),
    "pow": lambda m, x, y: m.pow(x, y), "pow_scalar": lambda m, x, y: m.pow(x, 2.5),
    "rpow": lambda m, x, y: m.pow(2, x),
    "eq": lambda m, x, y: m.eq(x, y), "lt_scalar": lambda m, x, y: m.lt(x, 1), "ge": lambda m, x, y: m.ge(x, y),
    "where": lambda m, x, y: m.where(m.ne(x, 0), x, y), "where_scalar": lambda m, x, y: m.where(m.ne(x, 0), x, 2.0),
    "maximum": lambda m, x, y: m.maximum(x, y), "minimum": lambda m, x, y: m.minimum(x, y),
    "clamp": lambda m, x, y: m.clamp(x, 0, 1), "clamp_t": lambda m, x, y: m.clamp(x, y),
}
META_CASES = [("float32", "float32", "contiguous"), ("int64", "float16", "contiguous"), ("int32", "int32", "transposed"),
              ("bool", "bool", "contiguous"), ("complex64", "float64", "transposed"), ("uint8", "int8", "stepped"),
              ("bfloat16", "int64", "expanded")]


@pytest.mark.parametrize("a,b,layout", META_CASES, ids=repr)
@pytest.mark.parametrize("op", list(META_OPS))
def test_meta(op, a, b, layout):
    """Meta gives the shape, dtype and strides of the CPU result (torch's CPU result: other tests tie
    onion's CPU results to it).  Where CPU raises for a dtype, Meta may or may not (torch's Meta does not
    run dtype dispatch either), so only the successful cases are compared."""
    f = META_OPS[op]
    x = make((3, 4), a, 1, layout=layout, positive=True)
    y = make((4,), b, 2, positive=True)
    ox, oy = meta_like(x[0]), meta_like(y[0])
    rc = outcome(lambda: f(torch, x[1], y[1]))
    complex_half_gap(rc)
    if rc[0] == "err":
        return
    rm = outcome(lambda: f(onion, ox, oy))
    assert rm[0] == "ok", f"onion meta raised {rm[1]!r}; torch CPU returned {rc[1].dtype}"
    assert_close(rm[1], tmeta_like(rc[1]))
    ro = outcome(lambda: f(onion, x[0], y[0]))
    assert ro[0] == "ok", f"onion CPU raised {ro[1]!r}"
    assert (tuple(rm[1].shape), rm[1].dtype) == (tuple(ro[1].shape), ro[1].dtype)
    if ro[1].numel() > 1:
        assert tuple(rm[1].stride()) == tuple(ro[1].stride())


def test_meta_out_and_inplace():
    ox = onion.empty((3, 4), device="meta")
    tx = torch.empty((3, 4), device="meta")
    oo = onion.empty(0, device="meta")
    to = torch.empty(0, device="meta")
    check_same(lambda: onion.add(ox, 1, out=oo), lambda: torch.add(tx, 1, out=to))
    assert tuple(oo.shape) == (3, 4)
    ol = onion.empty((3, 4), device="meta", dtype=onion.int64)
    tl = torch.empty((3, 4), device="meta", dtype=torch.int64)
    check_same(lambda: onion.add(ox, 1, out=ol), lambda: torch.add(tx, 1, out=tl))
    check_same(lambda: ox.mul_(2), lambda: tx.mul_(2))
    check_same(lambda: ol.add_(1.5), lambda: tl.add_(1.5))
    check_same(lambda: ox.add_(onion.empty((2, 3, 4), device="meta")),
               lambda: tx.add_(torch.empty((2, 3, 4), device="meta")))
    check_same(lambda: onion.add(ox, onion.empty(5, device="meta")),
               lambda: torch.add(tx, torch.empty(5, device="meta")))


def test_meta_mixed_with_cpu_scalar_tensor():
    ox = onion.empty((3, 4), device="meta")
    tx = torch.empty((3, 4), device="meta")
    check_same(lambda: onion.add(ox, onion.tensor(2.0)), lambda: torch.add(tx, torch.tensor(2.0)))
    check_same(lambda: onion.add(ox, onion.ones(4)), lambda: torch.add(tx, torch.ones(4)))


# ------------------------------------------------------------------ errors: argument types
BAD_CALLS = [
    ("add", lambda m, x: m.add(x, "a")), ("add_none", lambda m, x: m.add(x, None)),
    ("add_alpha", lambda m, x: m.add(x, x, alpha="x")), ("exp_str", lambda m, x: m.exp("x")),
    ("exp_list", lambda m, x: m.exp([1.0, 2.0])), ("mul_kw", lambda m, x: m.mul(x, x, beta=2)),
    ("clamp_str", lambda m, x: m.clamp(x, min="a")), ("pow_str", lambda m, x: x.pow("a")),
    ("where_extra", lambda m, x: m.where(m.gt(x, 0), x, x, 3)), ("div_mode_int", lambda m, x: m.div(x, 2, rounding_mode=3)),
    ("maximum_scalar", lambda m, x: m.maximum(x, 2)), ("eq_str", lambda m, x: m.eq(x, "a")),
    ("neg_two", lambda m, x: m.neg(x, x)), ("add_three", lambda m, x: m.add(x, x, x)),
    ("method_str", lambda m, x: x.add("s")), ("sub_list", lambda m, x: x - [1, 2]),
]


@pytest.mark.parametrize("name,f", BAD_CALLS, ids=[n for n, _ in BAD_CALLS])
def test_bad_argument_types(name, f):
    x = make((3,), "float32")
    ro, rt = outcome(lambda: f(onion, x[0])), outcome(lambda: f(torch, x[1]))
    assert rt[0] == "err"
    assert ro[0] == "err", f"onion returned {ro[1]!r}"
    same_exc_type(ro[1], rt[1])


def test_dunder_with_unsupported_type_returns_notimplemented():
    o, t = make((3,), "float32")
    ro, rt = outcome(lambda: o + object()), outcome(lambda: t + object())
    assert ro[0] == rt[0] == "err"
    same_exc_type(ro[1], rt[1])


def test_not_implemented_dtype_errors():
    for name in ("bool",):
        x = make((3,), name)
        for fo, ft in ((lambda: onion.relu(x[0]), lambda: torch.relu(x[1])),
                       (lambda: onion.clamp(x[0], True, True), lambda: torch.clamp(x[1], True, True)),
                       (lambda: onion.clamp(x[0], x[0], x[0]), lambda: torch.clamp(x[1], x[1], x[1])),
                       (lambda: onion.abs(x[0]), lambda: torch.abs(x[1])),
                       (lambda: onion.pow(x[0], x[0]), lambda: torch.pow(x[1], x[1]))):
            ro, rt = outcome(fo), outcome(ft)
            assert ro[0] == rt[0] == "err", (ro, rt)
            same_exc_type(ro[1], rt[1])
    c = make((3,), "complex64")
    for op in ("lt", "maximum", "clamp", "relu"):
        args = (c, c) if op in ("lt", "maximum") else ((c, 0, 1) if op == "clamp" else (c,))
        fo, ft = _both(op, *args)
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err", (op, ro, rt)
        same_exc_type(ro[1], rt[1])


def test_device_mismatch_meta_cpu():
    ox = onion.empty((3,), device="meta")
    tx = torch.empty((3,), device="meta")
    check_same(lambda: onion.add(ox, onion.ones(3)), lambda: torch.add(tx, torch.ones(3)))


# ------------------------------------------------------------------ every overload, called through ops.aten
def _ops(m):
    return m.ops.aten


OVERLOADS = {
    "add.Tensor": lambda m, x, y, c: _ops(m).add.Tensor(x, y, alpha=2),
    "add.Scalar": lambda m, x, y, c: _ops(m).add.Scalar(x, 2.5, 2),
    "add_.Scalar": lambda m, x, y, c: _ops(m).add_.Scalar(x.clone(), 3),
    "sub.Tensor": lambda m, x, y, c: _ops(m).sub.Tensor(x, y),
    "sub.Scalar": lambda m, x, y, c: _ops(m).sub.Scalar(x, 1, 3),
    "rsub.Scalar": lambda m, x, y, c: _ops(m).rsub.Scalar(x, 1),
    "rsub.Tensor": lambda m, x, y, c: _ops(m).rsub.Tensor(x, y, alpha=2),
    "mul.Scalar": lambda m, x, y, c: _ops(m).mul.Scalar(x, -2),
    "mul_.Scalar": lambda m, x, y, c: _ops(m).mul_.Scalar(x.clone(), 2),
    "div.Scalar": lambda m, x, y, c: _ops(m).div.Scalar(x, 4),
    "div.Tensor_mode": lambda m, x, y, c: _ops(m).div.Tensor_mode(x, y, rounding_mode="floor"),
    "div.Scalar_mode": lambda m, x, y, c: _ops(m).div.Scalar_mode(x, 3, rounding_mode="trunc"),
    "div_.Scalar_mode": lambda m, x, y, c: _ops(m).div_.Scalar_mode(x.clone(), 2, rounding_mode="floor"),
    "pow.Tensor_Tensor": lambda m, x, y, c: _ops(m).pow.Tensor_Tensor(x, y),
    "pow.Tensor_Scalar": lambda m, x, y, c: _ops(m).pow.Tensor_Scalar(x, 3),
    "pow.Scalar": lambda m, x, y, c: _ops(m).pow.Scalar(2, x),
    "eq.Scalar": lambda m, x, y, c: _ops(m).eq.Scalar(x, 1),
    "ne.Tensor": lambda m, x, y, c: _ops(m).ne.Tensor(x, y),
    "lt.Scalar": lambda m, x, y, c: _ops(m).lt.Scalar(x, 1.5),
    "ge.Tensor": lambda m, x, y, c: _ops(m).ge.Tensor(x, y),
    "where.self": lambda m, x, y, c: _ops(m).where.self(c, x, y),
    "where.ScalarSelf": lambda m, x, y, c: _ops(m).where.ScalarSelf(c, 1.5, y),
    "where.ScalarOther": lambda m, x, y, c: _ops(m).where.ScalarOther(c, x, -1),
    "where.Scalar": lambda m, x, y, c: _ops(m).where.Scalar(c, 1, 0),
    "clamp.default": lambda m, x, y, c: _ops(m).clamp.default(x, 0, 2),
    "clamp.Tensor": lambda m, x, y, c: _ops(m).clamp.Tensor(x, y),
    "clamp_.Tensor": lambda m, x, y, c: _ops(m).clamp_.Tensor(x.clone(), None, y),
    "maximum.default": lambda m, x, y, c: _ops(m).maximum.default(x, y),
    "neg.default": lambda m, x, y, c: _ops(m).neg.default(x),
    "sigmoid_.default": lambda m, x, y, c: _ops(m).sigmoid_.default(x.clone()),
    "add.out": lambda m, x, y, c: _ops(m).add.out(x, y, out=m.empty(0, dtype=x.dtype)),
    "exp.out": lambda m, x, y, c: _ops(m).exp.out(x, out=m.empty(3, 4, dtype=m.float64)),
}


@pytest.mark.parametrize("dt", ("int64", "float32", "float16"))
@pytest.mark.parametrize("name", list(OVERLOADS))
def test_ops_overloads(name, dt):
    f = OVERLOADS[name]
    x = make((3, 4), dt, 1, positive=True)
    y = make((4,), dt, 2, positive=True)
    c = make((3, 4), "bool", 3)
    # exp.out computes in float32/float16 and writes float64: compare at the compute precision
    rtol = (1e-2 if dt == "float16" else 1e-5) if name == "exp.out" else None
    check_same(lambda: f(onion, x[0], y[0], c[0]), lambda: f(torch, x[1], y[1], c[1]), rtol=rtol)


def test_python_operators_in_place():
    o, t = make((3,), "int64", 1)
    o, t = o.clone(), t.clone()
    oid = id(o)
    o += 2
    t += 2
    o *= o
    t *= t
    o -= 1
    t -= 1
    assert id(o) == oid
    assert_close(o, t)
    for fo, ft in ((lambda: o.__iadd__(1.5), lambda: t.__iadd__(1.5)), (lambda: o.__itruediv__(2), lambda: t.__itruediv__(2))):
        check_same(fo, ft, msg=True)
    z = onion.tensor(1.0)
    check_same(lambda: z.add_(onion.ones(3)), lambda: torch.tensor(1.0).add_(torch.ones(3)), msg=True)


def test_op_specific_out_dtype_rules():
    """where and clamp(Scalar) do not cast their output; clamp(Tensor) and the rest follow can_cast."""
    i = make((2,), "int64", 1)
    f = make((2,), "float32", 2)
    c = make((2,), "bool", 3)
    cases = [
        (lambda m, x, y, b, o: m.where(b, y, y, out=o), "float64"), (lambda m, x, y, b, o: m.where(b, y, y, out=o), "int64"),
        (lambda m, x, y, b, o: m.where(b, y, y, out=o), "float32"),
        (lambda m, x, y, b, o: m.clamp(x, 0, 3, out=o), "float32"), (lambda m, x, y, b, o: m.clamp(x, 0, 3, out=o), "int32"),
        (lambda m, x, y, b, o: m.clamp(x, 0, 3, out=o), "int64"), (lambda m, x, y, b, o: m.clamp(y, 0, 3, out=o), "float64"),
        (lambda m, x, y, b, o: m.clamp(x, y, out=o), "float64"), (lambda m, x, y, b, o: m.clamp(x, y, out=o), "int64"),
        (lambda m, x, y, b, o: m.add(x, y, out=o), "float64"), (lambda m, x, y, b, o: m.add(x, y, out=o), "int64"),
    ]
    for fn, odt_ in cases:
        check_same(lambda: fn(onion, i[0], f[0], c[0], onion.empty(2, dtype=odt(odt_))),
                   lambda: fn(torch, i[1], f[1], c[1], torch.empty(2, dtype=tdt(odt_))), msg=True)
    for dt in ("int64", "int8", "uint8", "bool", "int32"):
        x = make((3,), dt, 4)
        check_same(lambda: x[0].clone().clamp_(0.5), lambda: x[1].clone().clamp_(0.5), msg=True)
        check_same(lambda: x[0].clone().clamp_(f[0][:1]), lambda: x[1].clone().clamp_(f[1][:1]), msg=True)


def test_scalar_arguments_must_fit_the_integer_type():
    x = make((3,), "int8", 1)
    u = make((3,), "uint8", 1)
    for fo, ft in ((lambda: onion.add(x[0], x[0], alpha=1000), lambda: torch.add(x[1], x[1], alpha=1000)),
                   (lambda: onion.sub(u[0], u[0], alpha=-300), lambda: torch.sub(u[1], u[1], alpha=-300)),
                   (lambda: onion.clamp(u[0], 300), lambda: torch.clamp(u[1], 300)),
                   (lambda: onion.clamp(x[0], None, -129), lambda: torch.clamp(x[1], None, -129))):
        check_same(fo, ft, msg=True)
    # wrapped numbers as operands wrap silently, as in torch
    check_same(lambda: x[0] + 1000, lambda: x[1] + 1000)
    check_same(lambda: onion.add(u[0], u[0], alpha=-1), lambda: torch.add(u[1], u[1], alpha=-1))
    check_same(lambda: onion.clamp(make((2,), "float32")[0], 1 + 0j), lambda: torch.clamp(make((2,), "float32")[1], 1 + 0j))


def test_out_resize_keeps_memory_when_it_fits():
    oo, to = onion.zeros(5), torch.zeros(5)
    po = oo.untyped_storage().data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onion.add(onion.ones(2), 1, out=oo)
        torch.add(torch.ones(2), 1, out=to)
    assert oo.untyped_storage().data_ptr() == po
    assert_close(oo, to)
    # a view as out= is resized over its base's memory
    bo, bt = onion.zeros(4, 3), torch.zeros(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(lambda: onion.add(onion.ones(2, 3), 1, out=bo[1:2]), lambda: torch.add(torch.ones(2, 3), 1, out=bt[1:2]))
        check_same(lambda: onion.mul(onion.ones(3, 3), 2, out=bo.t()), lambda: torch.mul(torch.ones(3, 3), 2, out=bt.t()))
    assert_close(bo, bt)
    # overlap is judged before resizing
    check_same(lambda: onion.add(bo[0], 1, out=bo[:2]), lambda: torch.add(bt[0], 1, out=bt[:2]), msg=True)


def test_number_as_first_argument():
    o, t = make((3,), "int8", 1)
    check_same(lambda: onion.mul(2, o), lambda: torch.mul(2, t))
    check_same(lambda: onion.add(1, 2), lambda: torch.add(1, 2))
