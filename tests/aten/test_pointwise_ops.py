"""The pointwise operators of issue 8 (item 2) vs PyTorch: dtype support and promotion, the Python
operators, integer division by zero, shifts past the width, special functions, error texts, out=,
in-place, Meta and gradients."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import assert_close, check_same, make, meta_like, onion, outcome, tmeta_like, torch

pytestmark = pytest.mark.oracle      # every test here compares with PyTorch

DTYPES = ("bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64", "complex64")

UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "ceil", "floor", "trunc", "fix",
         "frac", "round", "sign", "sgn", "signbit", "square", "reciprocal", "exp2", "expm1", "log10", "log1p",
         "log2", "deg2rad", "rad2deg", "bitwise_not", "logical_not", "isfinite", "isinf", "isnan", "isneginf",
         "isposinf", "isreal", "nan_to_num", "erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "logit")

BINARY = ("atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
          "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "copysign", "fmax", "fmin", "fmod",
          "remainder", "floor_divide", "true_divide", "float_power", "gcd", "lcm", "heaviside", "hypot", "ldexp",
          "logaddexp", "logaddexp2", "nextafter", "xlogy", "igamma", "igammac", "clamp_min", "clamp_max")


def _pos(name, seed):
    """Inputs in (0, 1) where the functions are defined for every op (acosh gets 1 + x below)."""
    return make((2, 3), name, seed, positive=True)


@pytest.mark.parametrize("op,dt", list(itertools.product(UNARY, DTYPES)))
def test_unary_dtypes_values_and_errors(op, dt):
    """Result dtype and values, or PyTorch's exception type and text, for every dtype kind."""
    o, t = make((2, 3), dt, 3)
    if op in ("acosh",) and dt not in ("bool",):
        o, t = o.abs() + 1, t.abs() + 1
    if op in ("acos", "asin", "atanh", "erfinv", "logit") and dt not in ("bool", "uint8", "int64"):
        o, t = o / 10, t / 10
    check_same(lambda: getattr(onion, op)(o), lambda: getattr(torch, op)(t), msg=True, equal_nan=True)


@pytest.mark.parametrize("op,a,b", [(op, a, b) for op in BINARY for a, b in
                                    (("int64", "int64"), ("bool", "bool"), ("int64", "float32"),
                                     ("float16", "float16"), ("float64", "float32"), ("complex64", "complex64"),
                                     ("uint8", "int64"))])
def test_binary_dtypes_values_and_errors(op, a, b):
    x, xt = make((2, 3), a, 1, positive=True)
    y, yt = make((2, 3), b, 2, positive=True)
    check_same(lambda: getattr(onion, op)(x, y), lambda: getattr(torch, op)(xt, yt), msg=True, equal_nan=True)


# ------------------------------------------------------------------ Python operators
def _ints():
    return make((2, 4), "int64", 5)


@pytest.mark.parametrize("expr", [
    lambda a: a // 3, lambda a: 7 // (a.abs() + 1), lambda a: a % 3, lambda a: 7 % (a.abs() + 1), lambda a: ~a,
    lambda a: a & 6, lambda a: 6 & a, lambda a: a | 1, lambda a: 1 | a, lambda a: a ^ 5, lambda a: 5 ^ a,
    lambda a: a << 2, lambda a: 1 << a.abs(), lambda a: a >> 1, lambda a: 64 >> a.abs(), lambda a: 2 / (a.abs() + 1),
    lambda a: a.float() // 2.5, lambda a: -7.5 % (a.float().abs() + 1), lambda a: (a > 0) & (a < 3),
    lambda a: ~(a > 0), lambda a: (a > 0) ^ True,
])
def test_python_operators(expr):
    o, t = _ints()
    check_same(lambda: expr(o), lambda: expr(t), msg=True)


def test_inplace_python_operators():
    for op in ("__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__ifloordiv__", "__imod__"):
        o, t = _ints()
        ro, rt = getattr(o, op)(2), getattr(t, op)(2)
        assert ro is o and rt is t
        assert_close(o, t)


def test_rmatmul_goes_through_matmul():
    (a, at), (b, bt) = make((2, 3), "float64", 1), make((3, 4), "float64", 2)
    check_same(lambda: b.__rmatmul__(a), lambda: bt.__rmatmul__(at))


# ------------------------------------------------------------------ integers
@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
def test_integer_division_by_zero_raises_and_modifies_nothing(op):
    o, t = make((3,), "int64", 1)
    zo, zt = onion.tensor([1, 0, 2]), torch.tensor([1, 0, 2])
    check_same(lambda: getattr(onion, op)(o, zo), lambda: getattr(torch, op)(t, zt), msg=True)
    check_same(lambda: getattr(onion, op)(o, 0), lambda: getattr(torch, op)(t, 0), msg=True)
    before = o.tolist()
    check_same(lambda: getattr(o, op + "_")(zo), lambda: getattr(t, op + "_")(zt), msg=True)
    assert o.tolist() == before


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "int64"])
def test_shifts_past_the_width(dt):
    """A negative shift or one by the width or more: 0 to the left, the sign bit to the right."""
    a = [1, -8, 5, 100, -1] if dt != "uint8" else [1, 248, 5, 100, 255]
    s = [-1, 7, 9, 64, 65]
    o, t = onion.tensor(a, dtype=getattr(onion, dt)), torch.tensor(a, dtype=getattr(torch, dt))
    so, st = onion.tensor(s, dtype=getattr(onion, dt)), torch.tensor(s, dtype=getattr(torch, dt))
    check_same(lambda: o << so, lambda: t << st)
    check_same(lambda: o >> so, lambda: t >> st)


def test_gcd_lcm_worked_values():
    a, b = onion.tensor([12, -18, 0, 7]), onion.tensor([8, 12, 5, 0])
    assert onion.gcd(a, b).tolist() == [4, 6, 5, 7]
    assert onion.lcm(a, b).tolist() == [24, 36, 0, 0]


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64", "uint8"])
def test_gcd_integer_minimum(dt):
    # PyTorch's gcd takes abs() in the operand type (the minimum stays negative) and uses C's %:
    # gcd(-128, 127) is -1 in int8, gcd(-128, 3) is 1, gcd(-128, 0) is -128
    info = np.iinfo(dt)
    rs = np.random.RandomState(9)
    a = rs.randint(info.min, int(info.max) + 1, 300, dtype=dt)
    b = rs.randint(info.min, int(info.max) + 1, 300, dtype=dt)
    a[::7], b[::5], a[::11], b[::13] = info.min, info.min, 0, 0
    rt = torch.gcd(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(onion.gcd(onion.tensor(a), onion.tensor(b)).numpy(), rt)


# ------------------------------------------------------------------ floating edge values
EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-30, float("inf"), float("-inf"), float("nan"), 3.7, -3.7]


@pytest.mark.parametrize("op", ["ceil", "floor", "trunc", "round", "frac", "sign", "sgn", "signbit", "isposinf",
                                "isneginf", "isinf", "isfinite", "isnan", "nan_to_num", "sinc", "expm1", "log1p",
                                "lgamma", "digamma", "erf", "erfc", "i0", "exp2"])
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_edge_values(op, dt):
    o = onion.tensor(EDGE, dtype=getattr(onion, dt))
    t = torch.tensor(EDGE, dtype=getattr(torch, dt))
    check_same(lambda: getattr(onion, op)(o), lambda: getattr(torch, op)(t), equal_nan=True)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_nextafter_steps_one_ulp(dt):
    a = [0.0, -0.0, 1.0, -1.0, 1.0, float("nan"), 2.0, float("inf")]
    b = [1.0, -1.0, 2.0, 0.0, 1.0, 1.0, float("nan"), 0.0]
    o, t = onion.tensor(a, dtype=getattr(onion, dt)), torch.tensor(a, dtype=getattr(torch, dt))
    ob, tb = onion.tensor(b, dtype=getattr(onion, dt)), torch.tensor(b, dtype=getattr(torch, dt))
    check_same(lambda: onion.nextafter(o, ob), lambda: torch.nextafter(t, tb), equal_nan=True, rtol=0, atol=0)


def test_nan_to_num_defaults_and_values():
    vals = [float("nan"), float("inf"), float("-inf"), 1.5]
    for dt in ("float16", "bfloat16", "float32", "float64"):
        o, t = onion.tensor(vals, dtype=getattr(onion, dt)), torch.tensor(vals, dtype=getattr(torch, dt))
        check_same(lambda: onion.nan_to_num(o), lambda: torch.nan_to_num(t))
        check_same(lambda: o.nan_to_num(1.0, 2.0, -3.0), lambda: t.nan_to_num(1.0, 2.0, -3.0))
    c = [complex(float("nan"), float("inf")), complex(1, float("-inf"))]
    check_same(lambda: onion.nan_to_num(onion.tensor(c)), lambda: torch.nan_to_num(torch.tensor(c)))


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_decimals(decimals):
    o, t = make((4, 5), "float32", 7)
    o, t = o * 123.456, t * 123.456
    check_same(lambda: onion.round(o, decimals=decimals), lambda: torch.round(t, decimals=decimals))


def test_heaviside_and_xlogy_at_zero():
    x = [float("nan"), 0.0, -1.0, 2.0, 0.0]
    v = [5.0, 7.0, 5.0, 5.0, float("nan")]
    check_same(lambda: onion.heaviside(onion.tensor(x), onion.tensor(v)),
               lambda: torch.heaviside(torch.tensor(x), torch.tensor(v)), equal_nan=True)
    check_same(lambda: onion.xlogy(onion.tensor(x), onion.tensor(v)),
               lambda: torch.xlogy(torch.tensor(x), torch.tensor(v)), equal_nan=True)
    check_same(lambda: onion.xlogy(2, onion.tensor(v)), lambda: torch.xlogy(2, torch.tensor(v)), equal_nan=True)


# ------------------------------------------------------------------ special functions
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_polygamma(n, dt):
    o, t = make((3, 4), dt, n)
    o, t = o * 3, t * 3
    check_same(lambda: onion.polygamma(n, o), lambda: torch.polygamma(n, t), equal_nan=True, rtol=1e-4)
    check_same(lambda: o.polygamma(n), lambda: t.polygamma(n), equal_nan=True, rtol=1e-4)


@pytest.mark.parametrize("p", [1, 3, 5])
def test_mvlgamma(p):
    o, t = make((3, 4), "float64", p, positive=True)
    o, t = o + p, t + p
    check_same(lambda: onion.mvlgamma(o, p), lambda: torch.mvlgamma(t, p))


def test_igamma_igammac():
    (a, at), (x, xt) = make((4, 5), "float64", 1, positive=True), make((4, 5), "float64", 2, positive=True)
    check_same(lambda: onion.igamma(a * 3, x * 4), lambda: torch.igamma(at * 3, xt * 4))
    check_same(lambda: onion.igammac(a * 3, x * 4), lambda: torch.igammac(at * 3, xt * 4))


def test_logit_eps():
    v = [0.0, 0.05, 0.5, 0.97, 1.0, -0.5]
    for eps in (None, 0.1):
        check_same(lambda: onion.logit(onion.tensor(v), eps), lambda: torch.logit(torch.tensor(v), eps),
                   equal_nan=True)


def test_frexp():
    v = [0.0, 1.0, -3.0, 1e-310, 6.5e4, float("inf"), float("nan")]
    ro = onion.frexp(onion.tensor(v, dtype=onion.float64))
    rt = torch.frexp(torch.tensor(v, dtype=torch.float64))
    assert_close(ro.mantissa, rt.mantissa, equal_nan=True)
    assert_close(ro.exponent, rt.exponent)
    assert ro.mantissa.dtype is onion.float64 and ro.exponent.dtype is onion.int32
    check_same(lambda: onion.frexp(onion.tensor([1, 2])), lambda: torch.frexp(torch.tensor([1, 2])), msg=True)


# ------------------------------------------------------------------ errors PyTorch names
ERRORS = [
    lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])),
    lambda m: m.heaviside(m.tensor([1j]), m.tensor([1j])),
    lambda m: m.lerp(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64), 0.5),
    lambda m: m.lerp(m.tensor([1.0]), m.tensor([1.0]), m.tensor([0.5], dtype=m.float64)),
    lambda m: m.lerp(m.tensor([1.0]), m.tensor([1.0]), 2j),
    lambda m: m.lerp(m.tensor([1]), m.tensor([1]), 1),
    lambda m: m.addcdiv(m.tensor([1.0]), m.tensor([1]), m.tensor([2])),
    lambda m: m.addcmul(m.tensor([True]), m.tensor([True]), m.tensor([True])),
    lambda m: m.polygamma(-1, m.tensor([1.0])),
    lambda m: m.mvlgamma(m.tensor([1.0]), 0),
    lambda m: m.mvlgamma(m.tensor([True]), 1),
    lambda m: m.sign(m.tensor([1j])),
    lambda m: m.tensor([1.0]).float_power_(2),
    lambda m: m.float_power(m.tensor([1.0]), 2, out=m.empty(1)),
    lambda m: m.bitwise_and(m.tensor([1.0]), 1),
    lambda m: m.tensor([1]) & 1.5,
    lambda m: m.gcd(m.tensor([1.0]), m.tensor([2.0])),
    lambda m: m.ceil(m.tensor([True])),
    lambda m: m.floor(m.tensor([1j])),
    lambda m: m.fmax(m.tensor([1j]), m.tensor([1j])),
    lambda m: m.deg2rad(m.tensor([1j])),
    lambda m: m.isposinf(m.tensor([1j])),
    lambda m: m.signbit(m.tensor([1j])),
    lambda m: m.frac(m.tensor([1])),
    lambda m: m.round(m.tensor([1]), decimals=1),
    lambda m: m.hypot(m.tensor([1]), m.tensor([1])),
    lambda m: m.clamp_min(m.tensor([1j]), 0),
    lambda m: m.tensor([True]).bitwise_left_shift(1),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    check_same(lambda: ERRORS[i](onion), lambda: ERRORS[i](torch), msg=True)


# ------------------------------------------------------------------ out= and in-place
@pytest.mark.parametrize("op,args", [("logical_and", 2), ("logical_xor", 2), ("logical_not", 1), ("signbit", 1),
                                     ("isposinf", 1)])
@pytest.mark.parametrize("out_dt", ["bool", "float32", "int64"])
def test_bool_results_cast_into_out(op, args, out_dt):
    ins = [make((2, 3), "float32", s) for s in range(args)]
    oo, ot = make((2, 3), out_dt, 9)
    check_same(lambda: getattr(onion, op)(*[x[0] for x in ins], out=oo),
               lambda: getattr(torch, op)(*[x[1] for x in ins], out=ot), msg=True)


@pytest.mark.parametrize("op", ["atan2", "copysign", "hypot", "fmod", "remainder", "xlogy", "logaddexp", "fmax",
                                "nextafter", "igamma", "lerp", "addcmul", "addcdiv", "clamp_min", "floor_divide"])
def test_out_and_inplace(op):
    (a, at), (b, bt), (c, ct) = (make((3, 4), "float32", s, positive=True) for s in range(3))
    extra = {"lerp": ((c, ct),), "addcmul": ((b, bt), (c, ct)), "addcdiv": ((b, bt), (c, ct))}.get(op, ((b, bt),))
    oa = [e[0] for e in extra]
    ta = [e[1] for e in extra]
    oo, ot = onion.empty(0), torch.empty(0)
    check_same(lambda: getattr(onion, op)(a, *oa, out=oo), lambda: getattr(torch, op)(at, *ta, out=ot))
    check_same(lambda: getattr(a.clone(), op + "_")(*oa), lambda: getattr(at.clone(), op + "_")(*ta))


def test_addcmul_addcdiv_values():
    (a, at), (b, bt), (c, ct) = (make((3, 4), "float64", s, positive=True) for s in range(3))
    for v in (1, 0.5, -2):
        check_same(lambda: onion.addcmul(a, b, c, value=v), lambda: torch.addcmul(at, bt, ct, value=v))
        check_same(lambda: onion.addcdiv(a, b, c, value=v), lambda: torch.addcdiv(at, bt, ct, value=v))
    (i, it) = make((3, 4), "int64", 4)
    check_same(lambda: onion.addcmul(i, i, i, value=2), lambda: torch.addcmul(it, it, it, value=2))


# ------------------------------------------------------------------ Meta
@pytest.mark.parametrize("op", ["acos", "erf", "floor", "sgn", "signbit", "bitwise_not", "logit", "nan_to_num",
                                "isinf", "isfinite", "square"])
def test_meta_matches_cpu_geometry(op):
    o, t = make((3, 4), "float32", 1, layout="transposed")
    rm = getattr(onion, op)(meta_like(o))
    rt = getattr(torch, op)(t) if op != "bitwise_not" else torch.bitwise_not(t.int())
    if op == "bitwise_not":
        rm = onion.bitwise_not(meta_like(o.int()))
    tm = getattr(torch, op)(tmeta_like(t)) if op != "bitwise_not" else torch.bitwise_not(tmeta_like(t.int()))
    assert rm.device.type == "meta"
    assert str(rm.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert tuple(rm.shape) == tuple(rt.shape) and tuple(rm.stride()) == tuple(tm.stride())


# ------------------------------------------------------------------ gradients
GRADS = [
    ("atan2", 2), ("hypot", 2), ("copysign", 2), ("fmax", 2), ("fmin", 2), ("logaddexp", 2), ("logaddexp2", 2),
    ("xlogy", 2), ("fmod", 2), ("remainder", 2), ("nextafter", 2), ("lerp", 3), ("addcmul", 3), ("addcdiv", 3),
    ("acos", 1), ("acosh", 1), ("asinh", 1), ("atanh", 1), ("tan", 1), ("sinc", 1), ("erf", 1), ("erfinv", 1),
    ("lgamma", 1), ("digamma", 1), ("i0", 1), ("logit", 1), ("expm1", 1), ("exp2", 1), ("log1p", 1),
    ("reciprocal", 1), ("deg2rad", 1), ("nan_to_num", 1), ("frac", 1), ("clamp_min", 1), ("square", 1),
]


@pytest.mark.parametrize("op,n", GRADS)
def test_gradients(op, n):
    data = [make((2, 3), "float64", s, positive=True) for s in range(n)]
    if op == "acosh":
        data = [(o + 1, t + 1) for o, t in data]
    if op in ("acos", "atanh", "erfinv", "logit"):
        data = [(o / 6, t / 6) for o, t in data]      # inside (0, 1)
    os_ = [o.detach().requires_grad_() for o, _ in data]
    ts = [t.detach().requires_grad_() for _, t in data]
    extra = (0.3,) if op == "clamp_min" else ()
    ro, rt = getattr(onion, op)(*os_, *extra), getattr(torch, op)(*ts, *extra)
    go, gt = make(tuple(rt.shape), "float64", 11)
    gos = onion.autograd.grad(ro, os_, go)
    gts = torch.autograd.grad(rt, ts, gt)
    for a, b in zip(gos, gts):
        assert_close(a, b)


def test_gradients_of_polygamma_mvlgamma_sgn_frexp():
    x, xt = make((2, 3), "float64", 1, positive=True)
    for fo, ft in [(lambda v: onion.polygamma(2, v + 1), lambda v: torch.polygamma(2, v + 1)),
                   (lambda v: onion.mvlgamma(v + 3, 3), lambda v: torch.mvlgamma(v + 3, 3)),
                   (lambda v: onion.frexp(v * 10)[0], lambda v: torch.frexp(v * 10)[0]),
                   (lambda v: onion.xlogy(v, 2.0), lambda v: torch.xlogy(v, 2.0))]:
        a, b = x.detach().requires_grad_(), xt.detach().requires_grad_()
        ga = onion.autograd.grad(fo(a).sum(), a)[0]
        gb = torch.autograd.grad(ft(b).sum(), b)[0]
        assert_close(ga, gb)
    c = onion.tensor([1 + 2j, -3j, 0j], requires_grad=True)
    ct = torch.tensor([1 + 2j, -3j, 0j], requires_grad=True)
    go, gt = onion.tensor([0.5 - 1j, 2 + 1j, 1j]), torch.tensor([0.5 - 1j, 2 + 1j, 1j])
    assert_close(onion.autograd.grad(onion.sgn(c), c, go)[0], torch.autograd.grad(torch.sgn(ct), ct, gt)[0])


def test_integer_results_are_not_differentiable():
    x = onion.tensor([1.5, -2.0], requires_grad=True)
    assert not onion.signbit(x).requires_grad and not onion.isinf(x).requires_grad
    assert onion.frexp(x).exponent.requires_grad is False


def test_inplace_acosh_backward_not_implemented():
    o = onion.tensor([1.5, 2.0], requires_grad=True).clone()
    t = torch.tensor([1.5, 2.0], requires_grad=True).clone()
    o.acosh_()
    t.acosh_()
    ro = outcome(lambda: o.sum().backward())
    rt = outcome(lambda: t.sum().backward())
    assert ro[0] == rt[0] == "err" and type(ro[1]) is type(rt[1])
    assert "inplace version of acosh" in str(ro[1])


def test_ops_are_tagged_as_pytorch_tags_them():
    for name, tags in [("acos.default", {"core", "pointwise"}), ("erfc.default", {"pointwise"}),
                       ("bitwise_and.Tensor", {"core", "pointwise"}), ("floor_divide.default", set()),
                       ("isnan.default", {"core", "pointwise"})]:
        op_name, overload = name.split(".")
        ot = {str(t).split(".")[-1] for t in getattr(getattr(onion.ops.aten, op_name), overload).tags}
        tt = {str(t).split(".")[-1] for t in getattr(getattr(torch.ops.aten, op_name), overload).tags}
        assert tags <= tt and ot & {"core", "pointwise"} == tt & {"core", "pointwise"}


def test_numpy_special_namespace_values_match_scipy_worked_value():
    """erf(1) and lgamma(0.5) against their closed forms."""
    assert abs(onion.erf(onion.tensor([1.0], dtype=onion.float64)).item() - 0.8427007929497149) < 1e-15
    assert abs(onion.lgamma(onion.tensor([0.5], dtype=onion.float64)).item() - 0.5 * np.log(np.pi)) < 1e-15
