"""Shared helpers for comparing onion with PyTorch (the test oracle), and the two tiers.

Tensors are built from one NumPy array on both sides; results are compared by
dtype, shape, strides (where asked) and values (NaNs equal, tolerances by dtype).
bfloat16 has no NumPy dtype of its own in torch, so such tensors are built from
float32 and converted on both sides, and read back as float32.

Two tiers.  A test that needs PyTorch carries the ``oracle`` marker: written
out (``pytestmark = pytest.mark.oracle`` for a whole module, or a decorator), or
added by ``pytest_collection_modifyitems`` below when the test's own code names
``torch``.  Everything else (dispatcher tables, schemas against stored text,
codegen, worked values) runs without torch:

    python -m pytest -q -m "not oracle"

PyTorch is optional here.  Without it ``torch`` below is a stand-in that fails
loudly when an unmarked test touches it, and every ``oracle`` test is skipped
with the reason.  The autouse fixtures at the end check that no test and no
fixture leaves global state changed.
"""
from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import pytest

import onion

ORACLE_SKIP_REASON = "oracle test: compares with PyTorch 2.13, which is not installed (pip install -e '.[test]')"


class TorchMissing(BaseException):
    """Raised by the stand-in below.  Not an ``Exception``, so helpers that compare the errors of the
    two libraries (``outcome``, ``pytest.raises``) cannot mistake it for an answer of torch's."""


class _NoTorch:
    """Stands for the ``torch`` module when PyTorch is not installed.

    Module-level code may mention it (``from conftest import torch``); using it
    from a test that is not marked ``oracle`` fails with a message that says so.
    """

    def __bool__(self):
        return False

    def __getattr__(self, name):
        if name.startswith("pytest") or name.startswith("_") and name not in ("_C", "_tensor_str"):
            raise AttributeError(name)      # pytest's and unittest.mock's probes while collecting
        raise TorchMissing(f"torch.{name}: PyTorch is not installed; a test that uses it must be marked "
                           f"@pytest.mark.oracle (it is then skipped: {ORACLE_SKIP_REASON})")

    def __repr__(self):
        return "<torch: not installed>"


try:
    import torch
except ImportError:
    torch = _NoTorch()
HAVE_TORCH = not isinstance(torch, _NoTorch)


def _names_torch(code) -> bool:
    """Whether a function's code (lambdas and comprehensions inside it included) reads a global ``torch``."""
    if "torch" in code.co_names:
        return True
    return any(_names_torch(c) for c in code.co_consts if hasattr(c, "co_names"))


def pytest_collection_modifyitems(config, items):
    """A test whose own code names ``torch`` is marked ``oracle`` here, so it cannot be forgotten; a test
    that reaches torch only through helpers carries the mark explicitly (a module-level ``pytestmark``
    or a decorator).  Without PyTorch every ``oracle`` test is skipped, with the reason."""
    skip = None if HAVE_TORCH else pytest.mark.skip(reason=ORACLE_SKIP_REASON)
    for item in items:
        fn = getattr(item, "function", None)
        if item.get_closest_marker("oracle") is None and fn is not None and _names_torch(fn.__code__):
            item.add_marker(pytest.mark.oracle)
        if skip is not None and item.get_closest_marker("oracle") is not None:
            item.add_marker(skip)


@contextlib.contextmanager
def default_dtype(name):
    """onion's (and torch's, when present) default dtype is ``name`` inside the block; the previous
    ones come back afterwards, also when the block raises."""
    prev_o = onion.get_default_dtype()
    prev_t = torch.get_default_dtype() if HAVE_TORCH else None
    try:
        onion.set_default_dtype(getattr(onion, name))
        if HAVE_TORCH:
            torch.set_default_dtype(getattr(torch, name))
        yield name
    finally:
        onion.set_default_dtype(prev_o)
        if HAVE_TORCH:
            torch.set_default_dtype(prev_t)


@contextlib.contextmanager
def dispatch_trace(level=1):
    """The dispatch trace at ``level``, written into the StringIO this yields; afterwards the trace
    level and stream are the previous ones (ONION_SHOW_DISPATCH_TRACE may have set them)."""
    from onion.dispatch.dispatcher import dispatcher
    previous = (dispatcher.trace_level, dispatcher.trace_stream)
    buf = io.StringIO()
    onion._C._set_dispatch_trace(level, buf)
    try:
        yield buf
    finally:
        onion._C._set_dispatch_trace(*previous)


def _is_torch_tensor(x):
    return HAVE_TORCH and isinstance(x, torch.Tensor)


DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
               "complex64", "complex128")
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")
COMPLEX_NAMES = ("complex64", "complex128")

# absolute/relative tolerance per result dtype: float16/bfloat16 round once from float32
_TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12),
        "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-12)}


# Sums of float32 terms: the reference is the exact sum (math.fsum), and the allowed error is what a
# summation tree may lose when every term passes through at most SUM_TREE_DEPTH roundings (each costing
# at most the unit roundoff u, relative to the sum of |terms|), plus the rounding of the result.  ATen's
# cascade sum and NumPy's pairwise sum stay well inside that depth for the tens of thousands of terms
# summed here, whatever the CPU's vector width (it changes the shape of the tree, not its depth much);
# a sequential sum of n terms does not: it may lose (n - 1) u sum|terms|.
F32_UNIT_ROUNDOFF = 2.0 ** -24
SUM_TREE_DEPTH = 128


def float32_sum_reference(terms, axis=None, mean=False):
    """(exact result, error bound) in float64 for a float32 sum (or mean) of ``terms`` along ``axis``."""
    terms = np.asarray(terms, dtype=np.float64)
    if axis is None:
        terms = terms.reshape(-1)
        axis = 0
    exact = np.apply_along_axis(math.fsum, axis, terms)
    n = terms.shape[axis]
    u = F32_UNIT_ROUNDOFF
    bound = min(n - 1, SUM_TREE_DEPTH) * u * np.abs(terms).sum(axis) + u * np.abs(exact)
    if mean:
        exact, bound = exact / n, bound / n + u * np.abs(exact / n)
    return exact, bound


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
    if _is_torch_tensor(x):
        x = x.detach().resolve_conj().resolve_neg()
        if x.dtype == torch.bfloat16:
            x = x.to(torch.float32)
        return x.numpy()
    x = x.detach().resolve_conj().resolve_neg()
    if x.dtype is onion.bfloat16:
        return np.asarray(x.numpy()).astype(np.float32)
    return np.asarray(x.numpy())


def dtype_name(x):
    """'float32' for either library's dtype (or tensor)."""
    if HAVE_TORCH and isinstance(x, torch.dtype):
        return str(x).split(".")[-1]
    d = x.dtype if hasattr(x, "dtype") and not isinstance(x, onion.dtype) else x
    return str(d).split(".")[-1]


def assert_close(o, t, *, strides=True, rtol=None, atol=None, equal_nan=True, exact=False):
    """onion result ``o`` matches torch result ``t``: dtype, shape, strides, values."""
    __tracebackhide__ = True
    if _is_torch_tensor(t):
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
    if rt[0] == "ok" and _is_torch_tensor(rt[1]) and rt[1].dtype == torch.complex32:
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


# ----------------------------------------------------------------------------- global state
# Every test and every fixture must leave the process as it found it: the default
# dtype, grad mode and the rest of the thread-local dispatch state, the dispatch
# trace, registered operators, kernels, fallbacks and library namespaces, backends
# and the PrivateUse1 name.  These fixtures compare before and after, per test and
# per module (so module-scoped fixtures are checked after their own teardown).

def _frozen(v):
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((str(k), _frozen(x)) for k, x in v.items()))
    return v


def global_state() -> dict:
    """What a test may change only for its own duration."""
    from onion.backends.base import BACKENDS
    from onion.core import device as _device
    from onion.core.tls import state as tls_state
    from onion.dispatch.dispatcher import dispatcher
    from onion.dispatch.library import _DEF_NAMESPACES

    state = {
        "onion default dtype": onion.get_default_dtype(),
        "onion thread-local state": {k: _frozen(getattr(tls_state(), k)) for k in
                                     ("include", "exclude", "grad_enabled", "inference_mode", "mode_stack")},
        "dispatch trace": (dispatcher.trace_level, dispatcher.trace_stream),
        "operators": frozenset(dispatcher.ops),
        "kernels": sum(len(regs) for h in dispatcher.ops.values() for regs in h.kernels.values()),
        "fallbacks": tuple(sorted((k.name, len(v)) for k, v in dispatcher._fallback_stack.items() if v)),
        "library namespaces (DEF)": frozenset(_DEF_NAMESPACES),
        "backends": frozenset(BACKENDS),
        "PrivateUse1 name": _device._PRIVATE_NAME[0],
        "device types": frozenset(_device._BACKEND_OF_TYPE),
    }
    if HAVE_TORCH:
        state["torch default dtype"] = torch.get_default_dtype()
        state["torch grad mode"] = torch.is_grad_enabled()
    return state


def _compare_state(before, after, where):
    __tracebackhide__ = True
    changed = []
    for k, v in before.items():
        w = after.get(k)
        if isinstance(v, dict):    # thread-local attributes: new ones may appear lazily
            diff = {a: (v[a], w.get(a)) for a in v if w.get(a) != v[a]}
            if diff:
                changed.append(f"{k}: {diff}")
        elif w != v:
            changed.append(f"{k}: {v!r} -> {w!r}")
    if changed:
        pytest.fail(f"{where} left global state changed (restore it in a finally or a yield fixture):\n  "
                    + "\n  ".join(changed), pytrace=False)


@pytest.fixture(autouse=True, scope="module")
def _module_restores_global_state(request):
    before = global_state()
    yield
    _compare_state(before, global_state(), f"module {request.module.__name__} (its module-scoped fixtures)")


@pytest.fixture(autouse=True)
def _test_restores_global_state(request):
    before = global_state()
    yield
    _compare_state(before, global_state(), request.node.nodeid)
