"""float32 cumsum against PyTorch to the bit: ATen keeps a float64 running sum and rounds each partial sum
to float32.  onion takes an int64 scan where that is provably the same (cumulative._exact_float32_cumsum)
and the float64 scan elsewhere; both must give PyTorch's bits, including +0.0 where the running sum that
starts at +0 meets -0.0."""
from __future__ import annotations

import numpy as np
import pytest

import onion
from onion.aten.native import cumulative

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

N = 6000          # above cumulative._EXACT_MIN


def _bits(a):
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


def _check(x, dim=0, exact_path=None):
    ref = torch.cumsum(torch.from_numpy(np.ascontiguousarray(x)), dim).numpy()
    got = onion.cumsum(onion.tensor(x), dim)
    assert got.dtype == onion.float32
    np.testing.assert_array_equal(_bits(np.asarray(got.tolist(), np.float32)), _bits(ref))
    if exact_path is not None:
        r = cumulative._exact_float32_cumsum(x, dim)
        assert (r is not None) == exact_path
        if r is not None:
            np.testing.assert_array_equal(_bits(r), _bits(ref))


def _data(kind):
    rng = np.random.default_rng(3)
    if kind == "normal":                    # partial sums stay below 2^53 ulps: int64 scan throughout
        return rng.standard_normal(N).astype(np.float32)
    if kind == "crossing":                  # past 2^53 ulps early, one fine value midway: float64 from there
        x = (rng.standard_normal(N) + 1.0).astype(np.float32)
        x[3000] = np.float32(2.0 ** -24 * (1 + 2.0 ** -23))      # an odd multiple of the smallest ulp
        return x
    if kind == "fine_first":                # the fine value early, 2^53 ulps crossed later
        x = (rng.standard_normal(N) * 0.01 + 0.05).astype(np.float32)
        x[10] = np.float32(2.0 ** -24 * (1 + 2.0 ** -23))
        return x
    if kind == "integers":
        return rng.integers(-50, 100, N).astype(np.float32)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["normal", "crossing", "fine_first", "integers"])
def test_int64_scan_matches_torch(kind):
    _check(_data(kind), exact_path=True)


def test_int64_scan_2d_and_strided():
    x = np.random.default_rng(4).standard_normal((120, 70)).astype(np.float32)
    for dim in (0, 1):
        _check(x, dim, exact_path=True)
        _check(x.T, dim, exact_path=True)           # a transposed (non-contiguous) input


@pytest.mark.parametrize("kind", ["nan", "inf", "subnormal", "range", "big_sums", "signed_zeros"])
def test_float64_scan_where_int64_cannot(kind):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(N).astype(np.float32)
    if kind == "nan":
        x[17] = np.nan
    elif kind == "inf":
        x[4000] = -np.inf
    elif kind == "subnormal":
        x[100] = np.float32(1e-40)
    elif kind == "range":
        x[::2] *= np.float32(1e20)
    elif kind == "big_sums":                       # int64 prefix sums would reach 2^61 ulps
        x = (rng.random(N) * 2000).astype(np.float32)
        x[0] = np.float32(1.5 * 2.0 ** -16)
    elif kind == "signed_zeros":
        x = np.where(rng.random(N) < 0.5, np.float32(-0.0), np.float32(0.0))
    _check(x, exact_path=False)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_negative_zero_becomes_positive(dtype):
    """ATen's running sum starts at +0: a leading -0.0 comes out +0.0 (small sizes take the float64 scan)."""
    for shape, dim in (((3,), 0), ((3, 2), 0), ((2, 3), 1)):
        a = np.full(shape, -0.0, dtype=dtype)
        r = np.asarray(onion.cumsum(onion.tensor(a), dim).tolist(), dtype=dtype)
        t = torch.cumsum(torch.from_numpy(a), dim).numpy()
        assert np.array_equal(np.signbit(r.real), np.signbit(t.real))
        assert not np.signbit(r.real).any()


def _first_rounding(x):
    """The first index where ATen's float64 running sum over ``x`` rounds (its exact prefix sum, in units of
    the smallest ulp, is not a float64)."""
    nz = np.abs(x[x != 0]).astype(np.float64)
    q = 2.0 ** (np.frexp(nz.min())[1] - 24)
    p = np.cumsum((x.astype(np.float64) / q).astype(np.int64))
    bad = p.astype(np.float64).astype(np.int64) != p
    return int(np.argmax(bad)) if bad.any() else None


@pytest.mark.parametrize("kind", ["crossing", "fine_first"])
def test_int64_scan_blocks(monkeypatch, kind):
    """The 1-D scan runs in blocks: the carry between blocks, and the switch to float64 at the first
    rounding whether it falls inside a block or on a block's first element."""
    x = _data(kind)
    k = _first_rounding(x)
    assert k is not None and 0 < k < N - 1
    for block in (512, k, k + 1):
        monkeypatch.setattr(cumulative, "_BLOCK", block)
        _check(x, exact_path=True)


@pytest.mark.parametrize("chunk", [4096, 7])
@pytest.mark.parametrize("restarts", [0, 2, 1000])
def test_int64_scan_restarts_after_roundings(monkeypatch, restarts, chunk):
    """Past 2^53 ulps, each fine value where ATen's float64 sum rounds: the scan carries the rounded sum on
    from the next element (several times in one block), and after ``_RESTARTS`` of them finishes with
    float64 steps; every way gives PyTorch's bits."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(N) + 1.0).astype(np.float32)
    fine = rng.choice(np.arange(200, N), 12, replace=False)
    x[fine] = np.float32(2.0 ** -24 * (1 + 2.0 ** -23)) * rng.integers(1, 5, 12).astype(np.float32)
    monkeypatch.setattr(cumulative, "_RESTARTS", restarts)
    monkeypatch.setattr(cumulative, "_CHUNK", chunk)        # the runs the smallest magnitudes are kept for
    for block in (N, 1000):
        monkeypatch.setattr(cumulative, "_BLOCK", block)
        _check(x, exact_path=True)


@pytest.mark.parametrize("kind", ["zeros", "neg_zero", "all_negative", "all_positive", "tiny_negative"])
def test_magnitude_range_signs_and_zeros(kind):
    """The smallest nonzero and largest magnitudes come from the bits read as int32 and uint32: zeros of
    either sign, inputs of one sign, and the smallest magnitude on the negative side all give PyTorch's bits."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal(N).astype(np.float32)
    if kind == "zeros":
        x[::7] = 0.0
        x[3::11] = -0.0
    elif kind == "neg_zero":
        x = np.abs(x)
        x[5] = -0.0
    elif kind == "all_negative":
        x = -np.abs(x)
    elif kind == "all_positive":
        x = np.abs(x)
    elif kind == "tiny_negative":
        x[4321] = np.float32(-3.0 * 2.0 ** -24)
    _check(x, exact_path=True)
    lo = np.abs(x[x != 0]).min().view(np.uint32)
    assert cumulative._smallest_magnitude(x) == lo
    assert cumulative._largest_magnitude(x) == np.abs(x).max().view(np.uint32)
