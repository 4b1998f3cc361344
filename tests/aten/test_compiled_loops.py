"""The compiled loops (onion.core.loops) give PyTorch's bits, and the same bits as the NumPy roads kept for
where numba is missing.

- cumsum in float32 keeps a float64 running sum that starts at +0 and rounds each partial sum once;
- gather along any dim, any item size, int32 and int64 indices, and its errors;
- the mt19937 draws behind randn: the stream NumPy's MT19937 (and PyTorch's generator) makes.
"""
from __future__ import annotations

import numpy as np
import pytest

import onion
from onion.core import loops

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

N = 6000


@pytest.fixture(params=["compiled", "numpy"])
def road(request, monkeypatch):
    """Each test runs on the compiled loops and on the NumPy road (loops reported unavailable)."""
    if request.param == "numpy":
        monkeypatch.setattr(loops, "available", lambda: False)
    elif not loops.available():
        pytest.skip("numba is not installed")
    return request.param


def _bits(a, dtype=np.float32):
    return np.ascontiguousarray(a, dtype).view(np.uint32 if dtype == np.float32 else np.uint64)


def _cumsum_data(kind, dtype=np.float32):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(N).astype(dtype)
    if kind == "shifted":               # partial sums far above the fine values: float64 rounds on the way
        x = (x + 1.0).astype(dtype)
        x[3000] = dtype(2.0 ** -24 * (1 + 2.0 ** -23))
    elif kind == "nan":
        x[17] = np.nan
    elif kind == "inf":
        x[4000] = -np.inf
    elif kind == "subnormal":
        x[100] = dtype(1e-40)
    elif kind == "range":
        x[::2] *= dtype(1e20)
    elif kind == "signed_zeros":
        x = np.where(rng.random(N) < 0.5, dtype(-0.0), dtype(0.0))
    return x


@pytest.mark.parametrize("kind", ["normal", "shifted", "nan", "inf", "subnormal", "range", "signed_zeros"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cumsum_bits_match_torch(road, kind, dtype):
    x = _cumsum_data(kind, dtype)
    ref = torch.cumsum(torch.from_numpy(x), 0).numpy()
    got = onion.cumsum(onion.tensor(x), 0).numpy()
    np.testing.assert_array_equal(_bits(got, dtype), _bits(ref, dtype))


@pytest.mark.parametrize("shape,dim", [((40, 300), 1), ((40, 300), 0), ((4, 5, 300), -1), ((300,), -1)])
def test_cumsum_nd_and_strided_match_torch(road, shape, dim):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    for a in (x, np.swapaxes(x, 0, -1)):        # contiguous, and a transposed view
        ref = torch.cumsum(torch.from_numpy(a), dim)
        got = onion.cumsum(onion.from_numpy(a), dim)
        assert got.stride() == ref.stride()
        np.testing.assert_array_equal(_bits(got.numpy()), _bits(ref.numpy()))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_cumsum_negative_zero_becomes_positive(road, dtype):
    """ATen's running sum starts at +0: a leading -0.0 comes out +0.0."""
    for shape, dim in (((3,), 0), ((3, 2), 0), ((2, 3), 1), ((2, 300), 1)):
        a = np.full(shape, -0.0, dtype=dtype)
        r = onion.cumsum(onion.tensor(a), dim).numpy()
        t = torch.cumsum(torch.from_numpy(a), dim).numpy()
        assert np.array_equal(np.signbit(r.real), np.signbit(t.real))
        assert not np.signbit(r.real).any()


GATHER_DTYPES = [np.bool_, np.uint8, np.int16, np.float16, np.int32, np.float32, np.int64, np.float64,
                 np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_gather_matches_torch(road, dtype, index_dtype):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((6, 14, 40)) * 50).astype(dtype)
    for dim in (0, 1, 2, -1):
        for step in (1, 2):                 # contiguous, and every other row of dim 1 (a strided view)
            a = x[:, ::step]
            ishape = list(a.shape)
            size = ishape[dim]
            ishape[dim] = 33
            ishape[(dim + 1) % 3] -= 1      # an index smaller than the input on another dim
            idx = rng.integers(0, size, ishape).astype(index_dtype)
            ref = torch.gather(torch.from_numpy(x)[:, ::step], dim, torch.from_numpy(idx))
            got = onion.gather(onion.tensor(x)[:, ::step], dim, onion.tensor(idx))
            np.testing.assert_array_equal(got.numpy(), ref.numpy())


@pytest.mark.parametrize("bad", [-1, 40])
def test_gather_out_of_bounds_raises_torchs_error(road, bad):
    x = np.arange(2 * 3 * 40, dtype=np.float32).reshape(2, 3, 40)
    idx = np.zeros((2, 3, 300), np.int64)
    idx[1, 2, 299] = bad
    with pytest.raises(RuntimeError) as ref:
        torch.gather(torch.from_numpy(x), 2, torch.from_numpy(idx))
    with pytest.raises(RuntimeError) as got:
        onion.gather(onion.tensor(x), 2, onion.tensor(idx))
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("n", [16, 624 * 3 + 16, 100_000 + 5])
def test_randn_float32_matches_torch(road, n):
    """normal_fill's float32 blocks: the same uniforms as PyTorch (so the same stream), Box-Muller to float
    rounding; the generator stands where PyTorch's does afterwards."""
    g, tg = onion.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    got = onion.randn(n, generator=g).numpy()
    ref = torch.randn(n, generator=tg).numpy()
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-6)
    np.testing.assert_array_equal(onion.rand(5, generator=g).numpy(), torch.rand(5, generator=tg).numpy())


def test_mt19937_draws_are_numpys_stream():
    if not loops.available():
        pytest.skip("numba is not installed")
    bg = np.random.MT19937(5)
    st = bg.state["state"]
    key, pos = st["key"].copy(), int(st["pos"])
    m = 1000
    halves = np.empty((2, m, 8), np.float32)
    pos = loops.mt19937_uniform_halves(key, pos, halves, 2 * np.pi)
    first, second = halves
    raw = bg.random_raw(16 * m).astype(np.uint32).reshape(m, 16)
    u = (raw & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)
    np.testing.assert_array_equal(first, np.float32(1.0) - u[:, :8])
    np.testing.assert_array_equal(second, np.float32(2 * np.pi) * u[:, 8:])
    assert pos == bg.state["state"]["pos"]
    np.testing.assert_array_equal(key, bg.state["state"]["key"])


@pytest.mark.parametrize("mean,std", [(0.0, 1.0), (2.0, 3.0)])
def test_normal_compiled_and_numpy_roads_give_the_same_bits(monkeypatch, mean, std):
    """The compiled draws and products round as NumPy's steps do (no fused multiply-add): same bits."""
    if not loops.available():
        pytest.skip("numba is not installed")

    def run():
        g = onion.Generator().manual_seed(5)
        x = onion.empty(100_003).normal_(mean, std, generator=g).numpy().copy()
        return x, onion.rand(4, generator=g).numpy()

    (a, ra) = run()
    monkeypatch.setattr(loops, "available", lambda: False)
    (b, rb) = run()
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
    np.testing.assert_array_equal(ra, rb)
