"""onion.bindings.tensor_str against PyTorch's repr (torch is only the oracle here)."""

import importlib.util
import itertools
import math
import os
import sys

import ml_dtypes
import numpy as np
import pytest

from conftest import HAVE_TORCH, torch  # (torch: a stand-in without PyTorch)


def _load_module():
    try:
        import onion.bindings.tensor_str as mod  # noqa: PLC0415
        return mod
    except Exception:
        path = os.path.join(os.path.dirname(__file__), os.pardir, "onion", "bindings", "tensor_str.py")
        spec = importlib.util.spec_from_file_location("_onion_tensor_str_standalone", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        return mod


ts = _load_module()
format_tensor = ts.format_tensor


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _dtype_name(dt):
    return str(dt).replace("torch.", "")


def _extras(t):
    if t.grad_fn is not None:
        return (f"grad_fn=<{type(t.grad_fn).__name__}>",)
    if t.requires_grad:
        return ("requires_grad=True",)
    return ()


def _numpy_of(t, bf16_as_ml=False):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        arr = t.float().numpy()
        return arr.astype(ml_dtypes.bfloat16) if bf16_as_ml else arr
    if t.dtype == torch.float8_e4m3fn:
        return t.float().numpy().astype(ml_dtypes.float8_e4m3fn)
    if t.dtype == torch.float8_e5m2:
        return t.float().numpy().astype(ml_dtypes.float8_e5m2)
    if t.dtype == torch.complex32:
        return t.to(torch.complex64).numpy()
    return t.resolve_conj().resolve_neg().numpy()


def onion_repr(t, bf16_as_ml=False):
    meta = t.device.type == "meta"
    return format_tensor(
        None if meta else _numpy_of(t, bf16_as_ml),
        dtype_name=_dtype_name(t.dtype),
        default_dtype_name=_dtype_name(torch.get_default_dtype()),
        is_floating=t.dtype.is_floating_point,
        is_complex=t.dtype.is_complex,
        is_bool=t.dtype == torch.bool,
        device="meta" if meta else None,
        shape=tuple(t.shape),
        extras=_extras(t),
    )


def torch_repr(t):
    return repr(t).replace("torch.", "onion.")


def check(t, **kw):
    expected = torch_repr(t)
    got = onion_repr(t, **kw)
    assert got == expected, f"\n--- torch\n{expected}\n--- onion\n{got}"


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request):
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, request.param))
    try:
        yield request.param
    finally:
        torch.set_default_dtype(old)


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Each test starts from the default print options (of both libraries) and afterwards the options
    are the ones it found."""
    saved = ts.get_printoptions()
    saved_torch = torch._tensor_str.get_printoptions() if HAVE_TORCH else None
    try:
        ts.set_printoptions(profile="default")
        if HAVE_TORCH:
            torch.set_printoptions(profile="default")
        yield
    finally:
        ts.set_printoptions(**saved)
        if HAVE_TORCH:
            torch.set_printoptions(**saved_torch)


# ---------------------------------------------------------------------------
# case generation
# ---------------------------------------------------------------------------

SHAPES = [(), (1,), (5,), (7,), (30,), (2, 3), (4, 1), (1, 4), (3, 4, 5), (2, 3, 2, 2),
          (1, 1, 1), (13, 9)]
BIG_SHAPES = [(1001,), (40, 40), (3, 500), (500, 3), (12, 10, 10), (2, 3, 13, 17), (2000, 1)]
SCALES = [1e-12, 1e-6, 1e-4, 1e-3, 0.1, 1.0, 3.0, 100.0, 1e4, 1e7, 1e9, 1e20]


def _tdt(*names):
    """torch dtypes by name, for parametrize lists (just the names without torch: the tests are skipped)."""
    return [getattr(torch, n) for n in names] if HAVE_TORCH else list(names)


FLOAT_DTYPES = _tdt("float32", "float64", "float16", "bfloat16")
INT_DTYPES = _tdt("int8", "int16", "int32", "int64", "uint8")


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_name)
@pytest.mark.parametrize("shape,scale", list(itertools.product(SHAPES, SCALES)),
                         ids=lambda v: str(v))
def test_random_floats(default_dtype, dtype, shape, scale):
    g = torch.Generator().manual_seed(hash((shape, scale)) % 1000)
    t = (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)
    check(t)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_integer_valued_floats(default_dtype, dtype, shape):
    g = torch.Generator().manual_seed(7)
    t = torch.randint(-50, 50, shape, generator=g).to(dtype)
    check(t)
    check(t * 1e6)  # int mode with large magnitude -> sci mode
    check(-t)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_name)
def test_special_floats(default_dtype, dtype):
    nan, inf = math.nan, math.inf
    rows = [
        [0.0], [-0.0], [0.0, -0.0], [nan], [inf], [-inf], [nan, inf, -inf],
        [1.0, nan], [1.5, nan], [1.0, -inf, 2.0], [0.5, inf], [1e-8, nan, 3.0],
        [1e10, -inf], [0.0, 0.0, 0.0], [1.0, 0.0], [-1.0, 0.0, -0.0],
        [1e-5, 0.0], [12345.678, 0.001], [0.1, 0.2, 0.3], [100.0, 0.2],
        [1e8, 1.0], [1.0001e8, 1.0], [0.0001, 0.1], [0.00009, 0.05],
        [999.5, 1.0], [1.0, 1000.0], [1.0, 1001.0], [-123456.0, 7.0],
        [2.5e-3, 4.0, -6.0],
    ]
    for r in rows:
        check(torch.tensor(r, dtype=dtype))
        check(torch.tensor(r, dtype=dtype).reshape(len(r), 1))
    for v in [0.0, -0.0, nan, inf, -inf, 3.0, -2.0, 0.5, 1e-5, 1e10, 123.456, -7.25]:
        check(torch.tensor(v, dtype=dtype))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_dtype_name)
@pytest.mark.parametrize("shape", SHAPES + BIG_SHAPES, ids=str)
def test_ints(default_dtype, dtype, shape):
    g = torch.Generator().manual_seed(11)
    info = torch.iinfo(dtype)
    lo = max(info.min, -(10 ** 6))
    hi = min(info.max, 10 ** 6)
    t = torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)
    check(t)


@pytest.mark.oracle
def test_int_extremes(default_dtype):
    for dt in INT_DTYPES + [torch.uint16, torch.uint32, torch.uint64]:
        info = torch.iinfo(dt)
        if dt == torch.uint64:
            t = torch.tensor([0, 1, 2 ** 62], dtype=dt)
        else:
            t = torch.tensor([info.min, 0, info.max], dtype=dt)
        check(t)
        check(t[:1].reshape(()))


@pytest.mark.oracle
@pytest.mark.parametrize("shape", SHAPES + BIG_SHAPES, ids=str)
def test_bools(default_dtype, shape):
    g = torch.Generator().manual_seed(3)
    check(torch.rand(shape, generator=g) > 0.5)
    check(torch.ones(shape, dtype=torch.bool))
    check(torch.zeros(shape, dtype=torch.bool))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", _tdt("complex64", "complex128"), ids=_dtype_name)
@pytest.mark.parametrize("shape", SHAPES + BIG_SHAPES[:3], ids=str)
@pytest.mark.parametrize("scale", [1e-6, 1.0, 100.0, 1e9], ids=str)
def test_complex(default_dtype, dtype, shape, scale):
    g = torch.Generator().manual_seed(5)
    re = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    im = torch.randn(shape, generator=g, dtype=torch.float64)
    check(torch.complex(re, im).to(dtype))
    check(torch.complex(re.round(), -im.round()).to(dtype))


@pytest.mark.oracle
def test_complex_special(default_dtype):
    vals = [1 + 2j, -1j, 0j, complex(0.0, -0.0), complex(-0.0, 0.0), complex(math.nan, 1),
            complex(1, math.nan), complex(math.inf, -math.inf), 1.5 - 2.25j, 1e-7 + 1j]
    for dt in [torch.complex64, torch.complex128]:
        check(torch.tensor(vals, dtype=dt))
        for v in vals:
            check(torch.tensor(v, dtype=dt))
    check(torch.tensor([1 + 2j, 0 - 1j]))
    check(torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj())


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:ComplexHalf")
def test_complex32(default_dtype):
    check(torch.tensor([1 + 2j, 0.5 - 1j], dtype=torch.complex32))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + _tdt("complex64"), ids=_dtype_name)
@pytest.mark.parametrize("shape", BIG_SHAPES, ids=str)
def test_summarized(default_dtype, dtype, shape):
    g = torch.Generator().manual_seed(9)
    base = torch.randn(shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        t = torch.complex(base, base * 3).to(dtype)
    else:
        t = base.to(dtype)
    check(t)
    # the hidden middle must not influence the formatting
    if not dtype.is_complex and t.dim() == 1:
        t2 = t.clone()
        t2[500] = 1e30 if dtype != torch.float16 else 60000.0
        check(t2)


@pytest.mark.oracle
def test_bfloat16_as_ml_dtypes(default_dtype):
    g = torch.Generator().manual_seed(21)
    for shape in SHAPES + BIG_SHAPES:
        t = torch.randn(shape, generator=g).to(torch.bfloat16)
        check(t, bf16_as_ml=True)
        check(t * 1000, bf16_as_ml=True)


@pytest.mark.oracle
def test_float8(default_dtype):
    for dt in [torch.float8_e4m3fn, torch.float8_e5m2]:
        t = torch.tensor([0.5, -1.25, 3.0, 0.0, 100.0]).to(dt)
        check(t)
        check(t.reshape(5, 1)[:2])


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + _tdt("bool", "complex64", "complex128"),
                         ids=_dtype_name)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0)], ids=str)
def test_empty(default_dtype, dtype, shape):
    check(torch.empty(shape, dtype=dtype))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + _tdt("bool", "complex64", "complex128"),
                         ids=_dtype_name)
@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (4, 5, 6), (10 ** 6,)], ids=str)
def test_meta(default_dtype, dtype, shape):
    check(torch.empty(shape, dtype=dtype, device="meta"))


@pytest.mark.oracle
def test_meta_requires_grad(default_dtype):
    t = torch.empty(2, 3, device="meta", requires_grad=True)
    check(t)
    check(t * 2)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", _tdt("float32", "float64", "float16", "bfloat16", "complex64"),
                         ids=_dtype_name)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (40,), (6, 14), (1200,), (0, 2)], ids=str)
def test_autograd_extras(default_dtype, dtype, shape):
    g = torch.Generator().manual_seed(2)
    t = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_()
    check(t)
    check(t + 1)
    check(t * 2.5)
    if t.numel():
        check(t.sum())
    check(t.reshape(-1)[:1])


@pytest.mark.oracle
def test_long_suffix_wraps(default_dtype):
    # lines close to the linewidth push suffixes to a new line
    for n in range(1, 20):
        t = torch.arange(n, dtype=torch.int32) * 1000
        check(t)
        tf = (torch.arange(n, dtype=torch.float16) + 0.5).requires_grad_()
        check(tf)
        check(tf * 3)


@pytest.mark.oracle
def test_scalar_dtypes(default_dtype):
    for dt in FLOAT_DTYPES + INT_DTYPES + [torch.bool, torch.complex64, torch.complex128]:
        check(torch.tensor(1, dtype=dt))
        check(torch.tensor(0, dtype=dt))


@pytest.mark.oracle
def test_views_and_noncontiguous(default_dtype):
    g = torch.Generator().manual_seed(4)
    t = torch.randn(6, 8, generator=g)
    check(t.t())
    check(t[::2, 1::3])
    check(t.unsqueeze(0).expand(3, 6, 8))
    check(-t)
    check(torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1))


PRINT_OPTION_SETS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=8),
    dict(threshold=5),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=5, threshold=10),
    dict(linewidth=40),
    dict(linewidth=200),
    dict(linewidth=5),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6),
    dict(profile="full", sci_mode=True),
]


@pytest.mark.oracle
@pytest.mark.parametrize("opts", PRINT_OPTION_SETS, ids=str)
def test_printoptions(opts):
    torch.set_printoptions(**opts)
    ts.set_printoptions(**opts)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    g = torch.Generator().manual_seed(8)
    cases = [
        torch.randn(20, generator=g),
        torch.randn(4, 5, generator=g) * 1e5,
        torch.randn(3, 4, 5, generator=g) * 1e-5,
        torch.randn(1500, generator=g),
        torch.randn(30, 40, generator=g),
        torch.arange(30),
        torch.arange(12).reshape(3, 4),
        torch.tensor([1.0, 2.0, math.nan]),
        torch.tensor([0.0, -0.0]),
        torch.tensor(3.14159),
        torch.rand(30, generator=g) > 0.5,
        torch.complex(torch.randn(12, generator=g), torch.randn(12, generator=g)),
        torch.randn(2, 3, 4, 5, generator=g).to(torch.float16),
        torch.randn(10, generator=g, requires_grad=True),
        torch.empty(0, 4),
    ]
    for t in cases:
        check(t)


def test_printoptions_api():
    defaults = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
    assert ts.get_printoptions() == defaults
    with ts.printoptions(precision=2, sci_mode=True):
        assert ts.get_printoptions()["precision"] == 2
        assert ts.get_printoptions()["sci_mode"] is True
        got = format_tensor(np.array([1.23456], np.float32), dtype_name="float32",
                            is_floating=True, is_complex=False, is_bool=False)
        assert got == "tensor([1.23e+00])"
    assert ts.get_printoptions() == defaults
    ts.set_printoptions(profile="full")
    assert ts.get_printoptions()["threshold"] == math.inf
    ts.set_printoptions(precision=3)
    # sci_mode is reset whenever it is not passed, like PyTorch
    ts.set_printoptions(sci_mode=False)
    ts.set_printoptions(linewidth=100)
    assert ts.get_printoptions()["sci_mode"] is None
    assert ts.get_printoptions()["precision"] == 3


def test_device_suffix():
    kw = dict(dtype_name="float32", is_floating=True, is_complex=False, is_bool=False)
    assert format_tensor(np.array([1.0, 2.0], np.float32), device="cuda:0", **kw) == \
        "tensor([1., 2.], device='cuda:0')"
    assert format_tensor(np.array(1.5, np.float32), device="cuda:1",
                         extras=("requires_grad=True",), **kw) == \
        "tensor(1.5000, device='cuda:1', requires_grad=True)"
    kw16 = dict(kw, dtype_name="float16")
    assert format_tensor(np.zeros((0, 2), np.float16), device="cuda:0", **kw16) == \
        "tensor([], device='cuda:0', size=(0, 2), dtype=onion.float16)"
    assert format_tensor(None, device="meta", shape=(2, 3), **kw16) == \
        "tensor(..., device='meta', size=(2, 3), dtype=onion.float16)"
    assert format_tensor(None, shape=(2, 3), **kw) == "tensor(..., device='meta', size=(2, 3))"
    # the device suffix comes first and wraps like any other suffix
    for n in range(1, 30):
        arr = np.arange(n, dtype=np.float32) * 1000 + 0.5
        assert format_tensor(arr, device="cuda:0", extras=("requires_grad=True",), **kw) == \
            format_tensor(arr, extras=("device='cuda:0'", "requires_grad=True"), **kw)
    arr = np.arange(9, dtype=np.float32) * 1000 + 0.5
    assert format_tensor(arr, device="cuda:0", **kw) == (
        "tensor([5.0000e-01, 1.0005e+03, 2.0005e+03, 3.0005e+03, 4.0005e+03, 5.0005e+03,\n"
        "        6.0005e+03, 7.0005e+03, 8.0005e+03], device='cuda:0')")
    arr = np.arange(6, dtype=np.float32) * 1000 + 0.5
    assert format_tensor(arr, device="cuda:0", **kw) == (
        "tensor([5.0000e-01, 1.0005e+03, 2.0005e+03, 3.0005e+03, 4.0005e+03, 5.0005e+03],\n"
        "       device='cuda:0')")


def test_dtype_name_aliases():
    kw = dict(is_floating=True, is_complex=False, is_bool=False)
    arr = np.array([1.0], np.float64)
    assert format_tensor(arr, dtype_name="torch.float64", **kw) == \
        "tensor([1.], dtype=onion.float64)"
    assert format_tensor(arr, dtype_name="double", **kw) == "tensor([1.], dtype=onion.float64)"
    assert format_tensor(arr, dtype_name="float", **kw) == "tensor([1.])"
    assert format_tensor(arr, dtype_name="double", default_dtype_name="float64", **kw) == \
        "tensor([1.])"


def test_does_not_import_torch():
    src = open(ts.__file__).read()
    assert "import torch" not in src and "from torch" not in src


@pytest.mark.oracle
def test_random_fuzz():
    """Random dtype / shape / scale / special values / print options / default dtype."""
    import random

    rng = random.Random(0)
    dts = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
           torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64,
           torch.complex128]
    old_default = torch.get_default_dtype()
    old_rng = torch.get_rng_state()
    torch.manual_seed(0)
    try:
        for _ in range(1500):
            opts = {}
            if rng.random() < 0.3:
                opts = rng.choice([
                    dict(precision=rng.randint(0, 10)),
                    dict(threshold=rng.randint(1, 50)),
                    dict(edgeitems=rng.randint(0, 4), threshold=rng.randint(1, 60)),
                    dict(linewidth=rng.randint(10, 150)),
                    dict(sci_mode=rng.choice([True, False])),
                ])
            for setter in (torch.set_printoptions, ts.set_printoptions):
                setter(profile="default")
                setter(**opts)
            torch.set_default_dtype(rng.choice([torch.float32, torch.float64,
                                                torch.float16, torch.bfloat16]))
            nd = rng.randint(0, 4)
            shape = tuple(rng.choice([1, 2, 3, 5, 7, 8, 13]) for _ in range(nd))
            if rng.random() < 0.1:
                shape = tuple(rng.choice([10, 20, 40]) for _ in range(max(nd, 2)))
            dt = rng.choice(dts)
            base = torch.randn(shape, dtype=torch.float64) * 10 ** rng.uniform(-12, 12)
            if rng.random() < 0.3:
                base = base.round()
            if rng.random() < 0.3 and base.numel():
                flat = base.view(-1)
                for _ in range(rng.randint(1, 3)):
                    flat[rng.randrange(flat.numel())] = rng.choice(
                        [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-30, 1e30, 1.0])
            if dt.is_complex:
                im = torch.randn(shape, dtype=torch.float64) * rng.choice([1, 1e-6, 1e6])
                t = torch.complex(base, im).to(dt)
            elif dt == torch.bool:
                t = base > 0
            elif not dt.is_floating_point:
                info = torch.iinfo(dt)
                t = torch.nan_to_num(base, 0, 0, 0).clamp(info.min, info.max).to(dt)
            else:
                t = base.to(dt)
            if rng.random() < 0.2 and (dt.is_floating_point or dt.is_complex):
                t = t.requires_grad_()
            check(t)
    finally:
        torch.set_default_dtype(old_default)
        torch.set_rng_state(old_rng)
