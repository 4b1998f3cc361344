"""Reductions vs PyTorch: sum, mean, prod, amax/amin, argmax/argmin.

Every case runs the same call on onion and on torch (the oracle) and compares
dtype, shape, strides and values, or the exception type and message.  Covers
all twelve dtypes, 0-dim / empty / non-contiguous inputs, dim lists, keepdim,
dtype=, method and keyword spellings, out= (dtype rules, resizing, strided
outs) and Meta (the CPU result's geometry and errors, without data).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import (meta_vs_cpu, DTYPE_NAMES, FLOAT_NAMES, assert_close, check_same, float32_sum_reference, from_np,
                      make, meta_like, odt, onion, outcome, same_exc_type, tdt, to_np, torch)

pytestmark = pytest.mark.oracle      # every test here compares with PyTorch

OPS = ("sum", "mean", "prod", "amax", "amin", "argmax", "argmin")
FULL = "full"   # call without dim / keepdim: sum(t), prod(t), argmax(t), ...

# dims each overload accepts (plus out-of-range, repeated and empty ones, for the errors)
DIMS = {
    "sum": (FULL, None, [], 0, -1, 1, 2, (0, 1), (1, 0), (0, -1), (0, 0), (1, -1), 3, -4, (0, 5)),
    "amax": (FULL, (), 0, -1, 1, (0, 1), (-1, 0), (0, 0), 3, (2, -3)),
    "argmax": (FULL, None, 0, -1, 1, 2, 3, -4),
    "prod": (FULL, 0, -1, 1, 2, 3, -4),
}
DIMS["mean"] = DIMS["sum"]
DIMS["amin"] = DIMS["amax"]
DIMS["argmin"] = DIMS["argmax"]

SHAPES = ((), (5,), (3, 4), (2, 3, 4), (1, 1), (0,), (3, 0), (2, 0, 3))

# float32 sums may round differently from ATen's cascade sum in the last bits
_ATOL = {"float32": 1e-5, "complex64": 1e-5}


def _call(lib, op, x, dim, keepdim, **kw):
    f = getattr(lib, op)
    if dim is FULL:
        return f(x, **kw)
    return f(x, dim, keepdim, **kw)


def _check(op, x, dim, keepdim=False, **kw):
    """Same call on both libraries; kw values given as (onion, torch) pairs are split."""
    __tracebackhide__ = True
    okw = {k: v[0] if isinstance(v, tuple) else v for k, v in kw.items()}
    tkw = {k: v[1] if isinstance(v, tuple) else v for k, v in kw.items()}
    name = _result_name(op, x[1], tkw.get("dtype"))
    # prod in float16/bfloat16 rounds every partial product, so ATen's order over a strided
    # input (vectorised, not sequential) changes more than the last bit
    rtol = 5e-2 if op == "prod" and name in ("float16", "bfloat16") else None
    return check_same(lambda: _call(onion, op, x[0], dim, keepdim, **okw),
                      lambda: _call(torch, op, x[1], dim, keepdim, **tkw),
                      msg=True, atol=_ATOL.get(name), rtol=rtol, exact=op.startswith("arg"))


def _result_name(op, t, dtype):
    if dtype is not None:
        return str(dtype).split(".")[-1]
    return str(t.dtype).split(".")[-1]


def _dt(name):
    """(onion, torch) dtype pair."""
    return odt(name), tdt(name)


# ------------------------------------------------------------------ every op, dtype, shape, dim, keepdim
@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("op", OPS)
def test_dims_shapes_dtypes(op, name):
    for shape in SHAPES:
        x = make(shape, name, seed=len(shape))
        for dim in DIMS[op]:
            for keepdim in ((False,) if dim is FULL else (False, True)):
                _check(op, x, dim, keepdim)


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("layout", ("transposed", "stepped", "expanded", "permuted", "offset"))
def test_non_contiguous_inputs(layout, name):
    if layout == "permuted":
        o, t = make((4, 3, 5), name, seed=7)
        x = (o.permute(2, 0, 1), t.permute(2, 0, 1))
    elif layout == "offset":
        o, t = make((5, 4, 6), name, seed=8)
        x = (o[1:4, :, 2:], t[1:4, :, 2:])
    else:
        x = make((3, 4, 5), name, seed=9, layout=layout)
    assert tuple(x[0].stride()) == tuple(x[1].stride())
    for op in OPS:
        for dim in DIMS[op]:
            for keepdim in ((False,) if dim is FULL else (False, True)):
                _check(op, x, dim, keepdim)


# ------------------------------------------------------------------ dtype=
@pytest.mark.parametrize("src", DTYPE_NAMES)
@pytest.mark.parametrize("op", ("sum", "mean", "prod"))
def test_dtype_argument(op, src):
    x = make((3, 4), src, seed=3)
    z = make((), src, seed=4)
    e = make((0, 3), src, seed=5)
    dims = (FULL, 0, 1) if op == "prod" else (FULL, None, 1, (0, 1), [])
    for dst in DTYPE_NAMES:
        for dim in dims:
            _check(op, x, dim, dtype=_dt(dst))
            if dim is not FULL:
                _check(op, x, dim, True, dtype=_dt(dst))
        _check(op, z, FULL, dtype=_dt(dst))
        _check(op, e, FULL if op == "prod" else 0, dtype=_dt(dst))


def test_sum_mean_half_accumulate_in_float32():
    # many float16 terms: a float16 accumulator would stall; ATen sums in float32 and rounds once
    for name in ("float16", "bfloat16"):
        o, t = from_np(np.full((3, 3000), 0.1, dtype=np.float32), name)
        for dim in (FULL, 0, 1, (0, 1)):
            for op in ("sum", "mean"):
                _check(op, (o, t), dim)
    u = 2.0 ** -10
    vals = np.array([1 + 0.48 * u, 1 + 0.48 * u, 1 + 0.9 * u], dtype=np.float32)
    o, t = from_np(vals)
    for op in ("sum", "mean"):
        ro, rt = _check(op, (o, t), 0, dtype=_dt("float16"))
        assert_close(ro, rt, exact=True)


def test_float_sums_stay_accurate_over_long_axes():
    """float32 sums and means of many terms, along contiguous and strided axes, against the exact
    sum: within the bound of a summation tree (conftest.float32_sum_reference), which holds for
    ATen's cascade sum on every CPU, so PyTorch's own result is held to it too.  (That a sequential
    sum can miss this bound is shown with a worked case in tests/aten/test_worked_values.py.)"""
    o, t = make((7, 5000), "float32", seed=11)
    for x, y in ((o, t), (o.t(), t.t())):
        terms = to_np(y)
        for dim in (0, 1, FULL):
            for op in ("sum", "mean"):
                ro = _call(onion, op, x, dim, False)
                rt = _call(torch, op, y, dim, False)
                exact, bound = float32_sum_reference(terms, None if dim is FULL else dim, mean=op == "mean")
                # dtype, shape, strides; values: each within its bound of the exact result
                assert_close(ro, rt, rtol=0, atol=2 * bound.max())
                for lib, r in (("onion", ro), ("torch", rt)):
                    err = np.abs(to_np(r).astype(np.float64) - exact)
                    assert (err <= bound).all(), (lib, op, dim, float((err / bound).max()))


def test_integer_sums_and_products_wrap():
    x = from_np(np.array([2 ** 62, 2 ** 62, 2 ** 62], dtype=np.int64))
    ro, rt = _check("sum", x, FULL)
    assert_close(ro, rt, exact=True)
    _check("prod", from_np(np.array([2 ** 40, 2 ** 40, 3], dtype=np.int64)), FULL)
    i8 = from_np(np.array([100, 100, 100], dtype=np.int8))
    _check("sum", i8, FULL)
    _check("sum", i8, FULL, dtype=_dt("int8"))
    _check("prod", i8, 0, dtype=_dt("int8"))
    _check("prod", from_np(np.array([200, 200], dtype=np.uint8)), FULL, dtype=_dt("uint8"))
    # floats to uint8 go through int64 (negatives wrap)
    _check("sum", from_np(np.array([-3.5, 2.2], dtype=np.float32)), FULL, dtype=_dt("uint8"))


# ------------------------------------------------------------------ NaN, inf, ties
@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_nan_inf_and_ties(name):
    nan, inf = float("nan"), float("inf")
    rows = ([1.0, nan, 3.0, nan], [nan, 1.0, 2.0, 0.0], [5.0, 5.0, 1.0, 1.0], [-inf, inf, 0.0, 2.0],
            [nan, nan, nan, nan], [inf, inf, -inf, -inf])
    arr = np.array(rows, dtype="float32" if name == "bfloat16" else name)
    x = from_np(arr, name)
    for op in OPS:
        for dim in (FULL, 0, 1, -1):
            _check(op, x, dim)
    x3 = np.random.default_rng(1).standard_normal((4, 5, 6)).astype(arr.dtype)
    x3[1, 2, 3] = nan
    x3[2, :, 1] = nan
    x3[0, 0, :] = nan
    x3 = from_np(x3, name)
    for op in ("amax", "amin", "argmax", "argmin"):
        for dim in (0, 1, 2, -1):
            _check(op, x3, dim)


@pytest.mark.parametrize("name", ("bool", "uint8", "int8", "int16", "int32", "int64"))
def test_integer_ties_pick_first(name):
    if name == "bool":
        arr = np.array([[True, False, True, False], [True, True, True, True]])
    else:
        arr = np.array([[3, 1, 3, 1], [2, 2, 2, 2]], dtype=name)
    x = from_np(arr)
    for op in ("argmax", "argmin", "amax", "amin"):
        for dim in (FULL, 0, 1):
            _check(op, x, dim)


# ------------------------------------------------------------------ spellings: methods, keywords
@pytest.mark.parametrize("name", ("float32", "int32", "bool", "float16", "complex128"))
def test_methods_and_keywords(name):
    o, t = make((2, 3, 4), name, seed=2)
    f64 = _dt("float64")

    def both(fn):
        return lambda: fn(o, onion, 0), lambda: fn(t, torch, 1)

    cases = [
        lambda x, lib, i: x.sum(),
        lambda x, lib, i: x.sum(1),
        lambda x, lib, i: x.sum(dim=(0, 2), keepdim=True),
        lambda x, lib, i: x.sum(-1, dtype=f64[i]),
        lambda x, lib, i: x.sum(dtype=f64[i]),
        lambda x, lib, i: lib.sum(x, dim=1, keepdim=True, dtype=f64[i]),
        lambda x, lib, i: lib.sum(x, dtype=f64[i]),
        lambda x, lib, i: x.mean(),
        lambda x, lib, i: x.mean(dim=[0, 1], keepdim=True),
        lambda x, lib, i: x.mean(1, dtype=f64[i]),
        lambda x, lib, i: lib.mean(x, dim=-1, keepdim=False, dtype=f64[i]),
        lambda x, lib, i: x.prod(),
        lambda x, lib, i: x.prod(1, keepdim=True),
        lambda x, lib, i: x.prod(dim=2, dtype=f64[i]),
        lambda x, lib, i: lib.prod(x, 0, dtype=f64[i]),
        lambda x, lib, i: x.amax(),
        lambda x, lib, i: x.amax(dim=(0, 2)),
        lambda x, lib, i: lib.amin(x, dim=1, keepdim=True),
        lambda x, lib, i: x.amin(-1),
        lambda x, lib, i: x.argmax(),
        lambda x, lib, i: x.argmax(dim=1, keepdim=True),
        lambda x, lib, i: lib.argmin(x, dim=-1),
        lambda x, lib, i: x.argmin(keepdim=True),
    ]
    for fn in cases:
        check_same(*both(fn), msg=True, exact=False, atol=_ATOL.get(name))


# ------------------------------------------------------------------ errors
def test_error_messages():
    f = make((2, 3), "float32")
    i = make((2, 3), "int64")
    b = make((2, 3), "bool")
    c = make((2, 3), "complex64")
    e = make((0, 3), "float32")
    z = make((), "float32")
    cases = [
        ("mean", i, FULL, {}), ("mean", i, 0, {}), ("mean", f, 0, {"dtype": _dt("int32")}),
        ("mean", b, FULL, {}), ("mean", b, FULL, {"dtype": _dt("bool")}),
        ("argmax", b, 0, {}), ("argmin", c, FULL, {}), ("amax", c, 0, {}), ("amin", c, FULL, {}),
        ("amax", e, FULL, {}), ("amax", e, 0, {}), ("amax", e, (1, 0), {}), ("amin", e, (), {}),
        ("argmax", e, FULL, {}), ("argmax", e, 0, {}), ("argmin", e, -2, {}),
        ("sum", f, 2, {}), ("sum", f, (0, 0), {}), ("sum", f, (0, 2, 0), {}), ("sum", f, (-3,), {}),
        ("prod", f, 2, {}), ("amax", f, (1, -1), {}), ("argmax", f, -3, {}),
        ("sum", z, 1, {}), ("sum", z, (0, 0), {}), ("argmax", z, 1, {}), ("prod", z, -2, {}),
        ("amax", make((0,), "complex64"), 0, {}),
    ]
    for op, x, dim, kw in cases:
        ro, rt = outcome(lambda: _call(onion, op, x[0], dim, False, **{k: v[0] for k, v in kw.items()})), \
            outcome(lambda: _call(torch, op, x[1], dim, False, **{k: v[1] for k, v in kw.items()}))
        assert rt[0] == "err", (op, dim, kw)   # every case here is an error
        assert ro[0] == "err", f"{op} {dim} {kw}: torch raised {rt[1]!r}, onion returned {ro[1]!r}"
        same_exc_type(ro[1], rt[1])
        assert str(ro[1]) == str(rt[1]), (op, dim, kw)


def test_complex_to_real_dtype_warns():
    o, t = make((2, 3), "complex64")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        onion.sum(o, 0, dtype=onion.float32)   # the first such cast in the process warns
        ro = onion.sum(o, 0, dtype=onion.float32)
    rt = torch.sum(t, 0, dtype=torch.float32)
    assert_close(ro, rt)
    msgs = [str(x.message) for x in w]
    assert all("Casting complex values to real discards the imaginary part" in m for m in msgs)


# ------------------------------------------------------------------ out=
def _run_out(op, x, dim, keepdim, out_pair, **kw):
    """Both libraries' out= call; returns (outcome onion, outcome torch) of (returned, out)."""
    okw = {k: v[0] for k, v in kw.items()}
    tkw = {k: v[1] for k, v in kw.items()}
    oo, to = out_pair

    def fo():
        r = _call(onion, op, x[0], dim, keepdim, out=oo, **okw)
        assert r is oo, "out= call must return out itself"
        return oo

    def ft():
        r = _call(torch, op, x[1], dim, keepdim, out=to, **tkw)
        assert r is to
        return to
    return fo, ft


def _empty(name, shape=(0,), device="cpu"):
    return onion.empty(shape, dtype=odt(name), device=device), torch.empty(shape, dtype=tdt(name), device=device)


@pytest.mark.parametrize("op", OPS)
def test_out_same_dtype(op):
    for name in ("float32", "int32", "float64", "bfloat16", "bool", "complex64"):
        x = make((3, 4, 5), name, seed=4)
        for dim in (DIMS[op][2], DIMS[op][4]):
            for keepdim in (False, True):
                rt = outcome(lambda: _call(torch, op, x[1], dim, keepdim))
                if rt[0] == "err":
                    continue
                res = str(rt[1].dtype).split(".")[-1]
                check_same(*_run_out(op, x, dim, keepdim, _empty(res)), msg=True, atol=_ATOL.get(res))
                # an out of the right shape, contiguous and transposed: written in place, strides kept
                shape = tuple(rt[1].shape)
                check_same(*_run_out(op, x, dim, keepdim, _empty(res, shape)), msg=True, atol=_ATOL.get(res))
                if len(shape) >= 2:
                    oo, to = _empty(res, shape[::-1])
                    pair = (oo.transpose(0, -1), to.transpose(0, -1))
                    ro, rt2 = check_same(*_run_out(op, x, dim, keepdim, pair), msg=True, atol=_ATOL.get(res))
                    assert tuple(ro.stride()) == tuple(rt2.stride())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("src", ("float32", "int64", "float16", "complex64", "bool"))
def test_out_dtype_rules(op, src):
    """sum/mean/prod without dtype= compute in out's dtype; the others (and dtype=) need an exact match."""
    x = make((2, 3), src, seed=6)
    dim = 1
    for dst in DTYPE_NAMES:
        check_same(*_run_out(op, x, dim, False, _empty(dst)), msg=True, atol=_ATOL.get(dst))
        if op in ("sum", "mean", "prod"):
            check_same(*_run_out(op, x, dim, False, _empty(dst), dtype=_dt("float64")), msg=True)
            check_same(*_run_out(op, x, dim, True, _empty(dst), dtype=_dt(dst)), msg=True, atol=_ATOL.get(dst))


def test_out_dtype_error_leaves_out_unresized():
    x = make((2, 3), "float32")
    for op in ("amax", "argmax"):
        oo, to = _empty("float64", (5,))
        fo, ft = _run_out(op, x, 1, False, (oo, to))
        ro, rt = outcome(fo), outcome(ft)
        assert ro[0] == rt[0] == "err" and str(ro[1]) == str(rt[1])
        assert tuple(oo.shape) == tuple(to.shape) == (5,)


@pytest.mark.parametrize("op", OPS)
def test_out_resize_warns(op):
    x = make((3, 4), "float32", seed=1)
    res = "int64" if op.startswith("arg") else "float32"
    for out_shape, warns in (((7,), True), ((0,), False), ((3,), False)):
        oo, to = _empty(res, out_shape)
        with warnings.catch_warnings(record=True) as wo:
            warnings.simplefilter("always")
            ro = _call(onion, op, x[0], 1, False, out=oo)
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            rt = _call(torch, op, x[1], 1, False, out=to)
        assert_close(ro, rt, atol=1e-5)
        mo = [str(w.message) for w in wo if "resized" in str(w.message)]
        mt = [str(w.message) for w in wt if "resized" in str(w.message)]
        assert len(mo) == len(mt) == (1 if warns else 0)
        if warns:
            assert mt[0].startswith(mo[0])


def test_mean_out_half_and_complex():
    # mean into a float16/bfloat16 out sums in float32 and rounds once; complex into real keeps the real part
    x = make((4, 50), "float32", seed=12)
    for name in ("float16", "bfloat16", "float64", "complex64"):
        check_same(*_run_out("mean", x, 1, False, _empty(name)), msg=True)
    c = make((3, 4), "complex64", seed=13)
    for name in ("float32", "float64", "complex128"):
        for op in ("sum", "mean", "prod"):
            check_same(*_run_out(op, c, 1, False, _empty(name)), msg=True, atol=1e-4)


# ------------------------------------------------------------------ Meta
@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("op", OPS)
def test_meta_matches_cpu(op, name):
    for shape, layout in (((), "contiguous"), ((5,), "contiguous"), ((2, 3, 4), "contiguous"),
                          ((2, 3, 4), "transposed"), ((3, 4), "stepped"), ((0, 3), "contiguous")):
        o, t = make(shape, name, layout=layout)
        m = meta_like(o)
        for dim in DIMS[op]:
            for keepdim in ((False,) if dim is FULL else (False, True)):
                meta_vs_cpu(lambda: _call(onion, op, m, dim, keepdim), lambda: _call(torch, op, t, dim, keepdim))
        if op in ("sum", "mean", "prod"):
            for dst in ("float64", "int64", "float16", "complex64", "bool"):
                meta_vs_cpu(lambda: _call(onion, op, m, FULL, False, dtype=odt(dst)),
                             lambda: _call(torch, op, t, FULL, False, dtype=tdt(dst)))


@pytest.mark.parametrize("op", OPS)
def test_meta_out(op):
    o, t = make((3, 4), "float32", seed=2)
    m = meta_like(o)
    for dst in DTYPE_NAMES:
        for shape in ((0,), (3,), (6,)):
            om = onion.empty(shape, dtype=odt(dst), device="meta")
            tc = torch.empty(shape, dtype=tdt(dst))

            def fo():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = _call(onion, op, m, 1, False, out=om)
                assert r is om
                return r
            meta_vs_cpu(fo, lambda: _call(torch, op, t, 1, False, out=tc))
