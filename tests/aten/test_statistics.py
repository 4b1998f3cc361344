"""Scans, statistics, norms, softmax and numerical calculus vs PyTorch.

Each case runs the same call on onion and torch and compares dtype, shape and values (or the
exception type and text); gradients are compared for the operators with their own derivative.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import onion  # noqa: E402

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
X3 = RNG.standard_normal((2, 3, 3))


def both(a):
    return onion.tensor(a), torch.tensor(a)


def values(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def same(ro, rt, rtol=1e-6, atol=1e-6):
    if isinstance(rt, (tuple, list)):
        for a, b in zip(ro, rt):
            same(a, b, rtol, atol)
        return
    assert str(ro.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert tuple(ro.shape) == tuple(rt.shape)
    np.testing.assert_allclose(values(ro), values(rt), rtol=rtol, atol=atol, equal_nan=True)


def outcome(fn, lib, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(lib)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return "err", e


def check(call, arr=X, **kw):
    """``call(lib, t)`` on both libraries: same result, or the same exception type and text."""
    o, t = both(arr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rt = ("ok", call(torch, t))
        except Exception as e:  # noqa: BLE001
            rt = ("err", e)
        try:
            ro = ("ok", call(onion, o))
        except Exception as e:  # noqa: BLE001
            ro = ("err", e)
    assert ro[0] == rt[0], (ro, rt)
    if rt[0] == "err":
        assert type(ro[1]) is type(rt[1]) and str(ro[1]) == str(rt[1])
    else:
        same(ro[1], rt[1], **kw)


# ------------------------------------------------------------------------------ scans
@pytest.mark.parametrize("dtype", ["int32", "bool", "float16", "float32", "complex64"])
def test_cumsum_result_dtype(dtype):
    check(lambda lib, t: lib.cumsum(t.to(getattr(lib, dtype)), 1), rtol=1e-3, atol=1e-3)


def test_cumsum_dtype_out_and_inplace():
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    check(lambda lib, t: lib.cumsum(t, 0, dtype=lib.float64), a)
    check(lambda lib, t: lib.cumsum(t, 1, out=lib.empty(0, dtype=lib.int16)), a)
    check(lambda lib, t: lib.cumsum(t, 1, dtype=lib.int32, out=lib.empty(0, dtype=lib.int16)), a)
    check(lambda lib, t: t.cumsum_(1), a)                               # in place keeps int32
    check(lambda lib, t: t.cumsum_(1, dtype=lib.float32), a)           # refused: dtypes differ
    check(lambda lib, t: t.bool().cumsum_(0), a)                        # refused: no bool kernel
    check(lambda lib, t: lib.cumsum(t, 2), a)                           # dim out of range


def test_cumsum_float32_accumulates_wide():
    a = np.full(100_000, 0.1, dtype=np.float32)
    o, t = both(a)
    np.testing.assert_array_equal(onion.cumsum(o, 0).numpy(), torch.cumsum(t, 0).numpy())


def test_cumprod_gradient_with_zeros():
    a = np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [1.5, -2.0, 0.5, 3.0, 1.0]])
    g = RNG.standard_normal((2, 5))
    xo = onion.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    go, = onion.autograd.grad(onion.cumprod(xo, 1), xo, onion.tensor(g))
    gt, = torch.autograd.grad(torch.cumprod(xt, 1), xt, torch.tensor(g))
    np.testing.assert_allclose(go.numpy(), gt.numpy(), rtol=1e-12, atol=1e-12)


def test_logcumsumexp_worked_values_and_errors():
    a = np.array([0.0, np.log(3.0), -np.inf, np.inf])
    r = onion.logcumsumexp(onion.tensor(a), 0).numpy()
    np.testing.assert_allclose(r[:3], [0.0, np.log(4.0), np.log(4.0)])
    assert r[3] == np.inf
    check(lambda lib, t: lib.logcumsumexp(t.long(), 0))
    check(lambda lib, t: lib.logcumsumexp(t, 0, out=lib.empty(0, dtype=lib.float64)))
    check(lambda lib, t: lib.logcumsumexp(t.to(lib.complex128) * 3, 1))


# ------------------------------------------------------------------------------ var / std
@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_overloads(fn):
    check(lambda lib, t: getattr(lib, fn)(t))
    check(lambda lib, t: getattr(lib, fn)(t, 1, True, True))
    check(lambda lib, t: getattr(lib, fn)(t, unbiased=False))
    check(lambda lib, t: getattr(lib, fn)(t, (0, 1), correction=2))
    check(lambda lib, t: getattr(lib, fn)(t, 0, correction=3))           # dof 0: inf
    check(lambda lib, t: getattr(lib, fn)(t.to(lib.complex64), 1))       # real result
    check(lambda lib, t: getattr(lib, fn)(t.long()))
    check(lambda lib, t: getattr(lib, fn)(t, 1, out=lib.empty(0, dtype=lib.float64)))
    check(lambda lib, t: getattr(lib, fn)(t, 1, out=lib.empty(0, dtype=lib.int64)))


def test_var_warns_when_degrees_of_freedom_run_out():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        onion.var(onion.tensor(X), 0, correction=3)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
def test_var_std_mean(fn):
    check(lambda lib, t: getattr(lib, fn)(t, 1))
    check(lambda lib, t: getattr(lib, fn)(t, correction=0, keepdim=True))
    xo = onion.tensor(X3, requires_grad=True)
    xt = torch.tensor(X3, requires_grad=True)
    vo, mo = getattr(onion, fn)(xo, (0, 2))
    vt, mt = getattr(torch, fn)(xt, (0, 2))
    go, = onion.autograd.grad((vo * 2 + mo).sum(), xo)
    gt, = torch.autograd.grad((vt * 2 + mt).sum(), xt)
    np.testing.assert_allclose(go.numpy(), gt.numpy(), rtol=1e-10)


# ------------------------------------------------------------------------------ other reductions
def test_all_any_dtypes_and_dims():
    a = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.uint8)
    check(lambda lib, t: lib.all(t, 1), a)                 # uint8 stays uint8
    check(lambda lib, t: lib.any(t.float(), ()), a)        # no dims: no reduction
    check(lambda lib, t: lib.all(t, out=lib.empty(0, dtype=lib.float32)), a)
    check(lambda lib, t: t.any(), a)


def test_count_nonzero_nansum_nanmean():
    a = np.array([[0.0, np.nan, 2.0], [3.0, 0.0, np.nan]])
    check(lambda lib, t: lib.count_nonzero(t, (0, 1)), a)
    check(lambda lib, t: lib.count_nonzero(t, (0, 0)), a)
    check(lambda lib, t: lib.nansum(t, 1), a)
    check(lambda lib, t: lib.nanmean(t, 0), a)
    check(lambda lib, t: lib.nansum(t.to(lib.complex64)), a)
    check(lambda lib, t: lib.nanmean(t.long()), np.ones((2, 2)))


def test_logsumexp():
    check(lambda lib, t: lib.logsumexp(t, 1))
    check(lambda lib, t: lib.logsumexp(t.long(), (0, 1), True))
    check(lambda lib, t: lib.logsumexp(t, 1, out=lib.empty(0, dtype=lib.int64)))
    check(lambda lib, t: lib.logsumexp(t, ()))
    check(lambda lib, t: lib.logsumexp(t, 0), np.array([np.inf, np.inf, 1.0]))


# ------------------------------------------------------------------------------ softmax
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_family(fn):
    check(lambda lib, t: getattr(lib, fn)(t, 0))
    check(lambda lib, t: getattr(lib, fn)(t.long(), 1, dtype=lib.float64))
    check(lambda lib, t: getattr(lib, fn)(t.long(), 1))
    check(lambda lib, t: getattr(lib, fn)(t.half(), 1), rtol=1e-3, atol=1e-3)
    xo = onion.tensor(X.astype(np.float64), requires_grad=True)
    xt = torch.tensor(X.astype(np.float64), requires_grad=True)
    g = RNG.standard_normal(X.shape)
    go, = onion.autograd.grad(getattr(onion, fn)(xo, 1), xo, onion.tensor(g), create_graph=True)
    gt, = torch.autograd.grad(getattr(torch, fn)(xt, 1), xt, torch.tensor(g), create_graph=True)
    np.testing.assert_allclose(go.detach().numpy(), gt.detach().numpy(), rtol=1e-10)
    ggo, = onion.autograd.grad((go * go).sum(), xo)      # double backward through *_backward_data
    ggt, = torch.autograd.grad((gt * gt).sum(), xt)
    np.testing.assert_allclose(ggo.numpy(), ggt.numpy(), rtol=1e-9, atol=1e-12)


def test_safe_softmax_zeroes_fully_masked_rows():
    a = np.array([[-np.inf, -np.inf], [1.0, 2.0]])
    check(lambda lib, t: lib.ops.aten._safe_softmax(t, 1), a)


# ------------------------------------------------------------------------------ norms
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 0, float("inf"), float("-inf"), "fro"])
def test_norm_values_and_gradients(p):
    check(lambda lib, t: lib.norm(t, p))
    check(lambda lib, t: lib.norm(t, p, 1, True))
    if p == 0:
        return
    xo = onion.tensor(X3, requires_grad=True)
    xt = torch.tensor(X3, requires_grad=True)
    go, = onion.autograd.grad(onion.norm(xo, p, (0, 2)).sum(), xo)
    gt, = torch.autograd.grad(torch.norm(xt, p, (0, 2)).sum(), xt)
    np.testing.assert_allclose(go.numpy(), gt.numpy(), rtol=1e-9, atol=1e-12)


def test_norm_errors_and_dist_trace():
    check(lambda lib, t: lib.norm(t.long()))
    check(lambda lib, t: lib.linalg_vector_norm(t, 2, dtype=lib.int64) if lib is onion
          else lib.linalg.vector_norm(t, 2, dtype=lib.int64))
    check(lambda lib, t: lib.dist(t, t * 2, 3))
    check(lambda lib, t: lib.trace(t))
    check(lambda lib, t: lib.trace(t.long()))
    check(lambda lib, t: lib.trace(t[0]))
    check(lambda lib, t: lib.renorm(t, 2, 0, 1.0))
    check(lambda lib, t: lib.renorm(t, -1, 0, 1.0))


# ------------------------------------------------------------------------------ numerical calculus
def test_isclose_allclose():
    a = np.array([1.0, np.nan, np.inf, 1e-9])
    check(lambda lib, t: lib.isclose(t, t + 1e-6), a)
    check(lambda lib, t: lib.isclose(t, t, equal_nan=True), a)
    check(lambda lib, t: lib.isclose(t, t.double()), a)
    assert onion.allclose(onion.tensor(X), onion.tensor(X) + 1e-9) is True
    assert onion.allclose(onion.tensor(X), onion.tensor(X) + 1) is False


def test_diff_trapezoid_cross():
    check(lambda lib, t: lib.diff(t, 2, 1))
    check(lambda lib, t: lib.diff(t, 1, 0, prepend=t[:1], append=t))
    check(lambda lib, t: lib.diff(t > 0))
    check(lambda lib, t: lib.diff(t, -1))
    check(lambda lib, t: lib.trapezoid(t, dx=0.5))
    check(lambda lib, t: lib.trapezoid(t, lib.arange(4.0) ** 2))
    check(lambda lib, t: lib.trapz(t, dim=0))
    check(lambda lib, t: lib.cumulative_trapezoid(t, lib.arange(4.0)))
    a = RNG.standard_normal((4, 3))
    check(lambda lib, t: lib.cross(t, t.flip(0) if lib is torch else lib.tensor(a[::-1].copy()), dim=1), a)
    check(lambda lib, t: lib.linalg_cross(t, t) if lib is onion else lib.linalg.cross(t, t), a)
