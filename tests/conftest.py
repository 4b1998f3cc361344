"""Shared helpers for comparing onion with PyTorch (the test oracle).

Tensors are built from one NumPy array on both sides; results are compared by
dtype, shape, strides (where asked) and values (NaNs equal, tolerances by dtype).
bfloat16 has no NumPy dtype of its own in torch, so such tensors are built from
float32 and converted on both sides, and read back as float32.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import onion  # noqa: E402

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
               "complex64", "complex128")
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")
COMPLEX_NAMES = ("complex64", "complex128")

# absolute/relative tolerance per result dtype: float16/bfloat16 round once from float32
_TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12),
        "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-12)}


def odt(name):
    """onion dtype by name."""
    return getattr(onion, name)


def tdt(name):
    """torch dtype by name."""
    return getattr(torch, name)


def np_data(shape, name, seed=0, low=-5, high=5, positive=False):
    """Deterministic data for a dtype: small ints, floats away from ties, bools, complex."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if name in INT_NAMES:
        lo = 0 if (name == "uint8" or positive) else low
        a = rng.integers(lo, high + 1, shape)
        if positive:
            a = np.maximum(a, 1)
        return a.astype(name)
    if name in COMPLEX_NAMES:
        re = rng.uniform(low, high, shape)
        im = rng.uniform(low, high, shape)
        return (re + 1j * im).astype(name)
    a = rng.uniform(0.1 if positive else low, high, shape)
    a = np.round(a, 2)
    return a.astype("float32" if name == "bfloat16" else name)


def from_np(arr, name=None):
    """(onion, torch) tensors holding ``arr`` (bfloat16 when name says so)."""
    if name == "bfloat16":
        o = onion.tensor(np.asarray(arr, dtype=np.float32)).to(onion.bfloat16)
        t = torch.from_numpy(np.array(arr, dtype=np.float32)).to(torch.bfloat16)
        return o, t
    arr = np.array(arr)
    return onion.tensor(arr), torch.from_numpy(arr.copy())


def make(shape, name, seed=0, layout="contiguous", **kw):
    """(onion, torch) pair of a given dtype and memory layout.

    layout: contiguous | transposed (last two dims swapped) | stepped (every other
    element of the last dim) | expanded (size-1 leading dim expanded) | zerodim.
    """
    shape = tuple(shape)
    if layout == "contiguous":
        return from_np(np_data(shape, name, seed, **kw), name)
    if layout == "transposed":
        full = shape[:-2] + (shape[-1], shape[-2])
        o, t = from_np(np_data(full, name, seed, **kw), name)
        return o.transpose(-1, -2), t.transpose(-1, -2)
    if layout == "stepped":
        full = shape[:-1] + (shape[-1] * 2,)
        o, t = from_np(np_data(full, name, seed, **kw), name)
        return o[..., ::2], t[..., ::2]
    if layout == "expanded":
        o, t = from_np(np_data((1,) + shape[1:], name, seed, **kw), name)
        return o.expand(*shape), t.expand(*shape)
    raise ValueError(layout)


def to_np(x):
    """Values of an onion or torch tensor as a NumPy array (bfloat16 -> float32)."""
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype == torch.bfloat16:
            x = x.to(torch.float32)
        return x.numpy()
    x = x.detach()
    if x.dtype is onion.bfloat16:
        return np.asarray(x.numpy()).astype(np.float32)
    return np.asarray(x.numpy())


def dtype_name(x):
    """'float32' for either library's dtype (or tensor)."""
    d = x.dtype if hasattr(x, "dtype") and not isinstance(x, (onion.dtype, torch.dtype)) else x
    return str(d).split(".")[-1]


def assert_close(o, t, *, strides=True, rtol=None, atol=None, equal_nan=True, exact=False):
    """onion result ``o`` matches torch result ``t``: dtype, shape, strides, values."""
    __tracebackhide__ = True
    if isinstance(t, torch.Tensor):
        if not isinstance(o, onion.Tensor):
            _fail(f"expected an onion Tensor, got {type(o).__name__}")
        if dtype_name(o) != dtype_name(t):
            _fail(f"dtype: onion {o.dtype} vs torch {t.dtype}")
        if tuple(o.shape) != tuple(t.shape):
            _fail(f"shape: onion {tuple(o.shape)} vs torch {tuple(t.shape)}")
        if strides and t.numel() > 1 and tuple(o.stride()) != tuple(t.stride()):
            _fail(f"strides: onion {o.stride()} vs torch {t.stride()} (shape {tuple(t.shape)})")
        if t.device.type == "meta":
            if o.device.type != "meta":
                _fail(f"device: onion {o.device} vs torch meta")
            return
        a, b = to_np(o), to_np(t)
        name = dtype_name(t)
        if exact or name not in _TOL:
            np.testing.assert_array_equal(a, b)
            return
        d_atol, d_rtol = _TOL[name]
        np.testing.assert_allclose(a, b, rtol=d_rtol if rtol is None else rtol, atol=d_atol if atol is None else atol,
                                   equal_nan=equal_nan)
    elif not (o == t or (o != o and t != t)):
        _fail(f"{o!r} != {t!r}")


def geom(x):
    """(shape, strides, storage offset) of either library's tensor."""
    return tuple(x.shape), tuple(x.stride()), x.storage_offset()


def outcome(fn):
    """('ok', result) or ('err', exception) for a call, warnings silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:  # noqa: BLE001 - we compare exception types with torch
        return "err", e


def _fail(msg):
    __tracebackhide__ = True
    raise AssertionError(msg)


def same_exc_type(eo, et):
    """onion raised the exception type torch raised (or a subclass of it)."""
    __tracebackhide__ = True
    if not (type(eo) is type(et) or isinstance(eo, type(et))):
        _fail(f"onion raised {type(eo).__name__}: {eo}\ntorch raised {type(et).__name__}: {et}")


COMPLEX_HALF_REASON = ("torch promotes float16 with a complex number to complex32 (ComplexHalf); onion has no "
                       "complex32 and uses complex64 (documented in onion/core/dtype.py)")


def complex_half_gap(rt, ro=None):
    """xfail when torch's outcome involves complex32, a dtype onion deliberately lacks, and onion's
    outcome (if given) differs from it because of that."""
    if rt[0] == "ok" and isinstance(rt[1], torch.Tensor) and rt[1].dtype == torch.complex32:
        pytest.xfail(COMPLEX_HALF_REASON)
    if rt[0] == "err" and "ComplexHalf" in str(rt[1]) and (ro is None or ro[0] == "ok"):
        pytest.xfail(COMPLEX_HALF_REASON)


def check_same(fo, ft, msg=False, **kw):
    """Run both; either both raise the same exception type (and text if ``msg``) or both results match."""
    __tracebackhide__ = True
    ro, rt = outcome(fo), outcome(ft)
    complex_half_gap(rt, ro)
    if rt[0] == "err":
        if ro[0] != "err":
            _fail(f"torch raised {type(rt[1]).__name__}: {rt[1]}\nonion returned {ro[1]!r}")
        same_exc_type(ro[1], rt[1])
        if msg and str(ro[1]) != str(rt[1]):
            _fail(f"message: onion {str(ro[1])!r}\n         torch {str(rt[1])!r}")
        return None
    if ro[0] != "ok":
        _fail(f"onion raised {type(ro[1]).__name__}: {ro[1]}\ntorch returned {rt[1]!r}")
    assert_close(ro[1], rt[1], **kw)
    return ro[1], rt[1]


def meta_like(o):
    """An onion meta tensor with the geometry and dtype of ``o`` (strides kept)."""
    return onion.empty_strided(tuple(o.shape), tuple(o.stride()), dtype=o.dtype, device="meta")


def tmeta_like(t):
    return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="meta")


def meta_vs_cpu(fo_meta, ft_cpu):
    """onion on Meta gives the geometry and dtype of torch's CPU result, or its error."""
    __tracebackhide__ = True
    rm, rc = outcome(fo_meta), outcome(ft_cpu)
    if rc[0] == "err":
        assert rm[0] == "err", f"torch CPU raised {rc[1]!r}; onion meta returned {rm[1]!r}"
        same_exc_type(rm[1], rc[1])
        assert str(rm[1]) == str(rc[1])
        return None
    assert rm[0] == "ok", f"onion meta raised {rm[1]!r}; torch CPU returned {rc[1].dtype}"
    assert rm[1].device.type == "meta"
    assert_close(rm[1], tmeta_like(rc[1]))
    return rm[1]
