"""Sorting and selection against PyTorch: values, the indices it picks for ties and NaN, namedtuple
returns, out= pairs, errors, Meta geometry, gradients (onion/aten/native/sorting.py)."""
from __future__ import annotations

import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

NAN = float("nan")


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def same(ro, rt, indices_exact=True):
    """onion's result is torch's: structure, dtype, shape, values (NaN where torch has NaN)."""
    if isinstance(rt, torch.Tensor):
        assert str(ro.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1], (ro.dtype, rt.dtype)
        assert tuple(ro.shape) == tuple(rt.shape), (ro.shape, rt.shape)
        np.testing.assert_allclose(_np(ro), _np(rt), rtol=1e-6, atol=1e-6, equal_nan=True)
        return
    assert isinstance(ro, tuple) and len(ro) == len(rt), (ro, rt)
    for a, b in zip(ro, rt):
        same(a, b)


def both(fn, *arrays, **kw):
    """fn(lib, *tensors) on torch and on onion; the same outcome, or the same exception type and text."""
    def run(lib, conv):
        try:
            return "ok", fn(lib, *[conv(a) for a in arrays], **kw)
        except Exception as e:  # noqa: BLE001 - compared with torch's outcome
            return "err", e
    rt = run(torch, lambda a: torch.tensor(a) if not isinstance(a, np.ndarray) else torch.from_numpy(a.copy()))
    ro = run(onion, lambda a: onion.tensor(a))
    if rt[0] == "err":
        assert ro[0] == "err", f"torch raised {rt[1]!r}, onion returned {ro[1]!r}"
        assert type(ro[1]) is type(rt[1]) and str(ro[1]) == str(rt[1]), (ro[1], rt[1])
        return None, None
    assert ro[0] == "ok", ro[1]
    same(ro[1], rt[1])
    return ro[1], rt[1]


# --------------------------------------------------------------------------- ties and NaN
TIES = [[1., 3., 3., 2., 3.], [2., 1., 2., 2., 5.], [NAN, 1., 3., NAN], [4., 1., 3., 2.], [0., -0., 0., -0.]]


@pytest.mark.parametrize("row", TIES)
@pytest.mark.parametrize("op", ["max", "min", "median", "nanmedian", "cummax", "cummin"])
def test_dim_reductions_pick_torch_indices(op, row):
    if op.startswith("cum"):
        both(lambda lib, x: getattr(lib, op)(x, 0), row)
    else:
        both(lambda lib, x: getattr(lib, op)(x, 0), row)
        both(lambda lib, x: getattr(lib, op)(x.reshape(1, -1), 1, True), row)


@pytest.mark.parametrize("row", TIES)
def test_sort_is_stable_with_nan_largest(row):
    for desc in (False, True):
        both(lambda lib, x: lib.sort(x, stable=True, descending=desc), row)
        both(lambda lib, x: lib.argsort(x, stable=True, descending=desc), row)


def test_all_nan_and_empty_medians():
    both(lambda lib, x: lib.nanmedian(x, 0), [NAN, NAN, NAN])
    both(lambda lib, x: lib.median(x), np.zeros(0, np.float32))
    both(lambda lib, x: lib.median(x), [NAN, 2., 1.])
    both(lambda lib, x: lib.nanmedian(x), [NAN, 2., 1., 7.])


def test_mode_takes_smallest_most_frequent_value_and_its_last_position():
    both(lambda lib, x: lib.mode(x, 0), [2., 1., 1., 2., 5., 5.])
    both(lambda lib, x: lib.mode(x, 1), [[3, 3, 1, 1, 1], [7, 2, 2, 7, 9]])


def test_kthvalue_and_topk_values():
    x = np.random.RandomState(0).randn(4, 7).astype(np.float32)
    for k in (1, 3, 7):
        both(lambda lib, t: lib.kthvalue(t, k, 1), x)
        both(lambda lib, t: lib.topk(t, k, 1), x)
        both(lambda lib, t: lib.topk(t, k, 0 if k < 4 else 1, largest=False), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.int8, np.uint8, np.bool_])
def test_long_sorts_keep_torch_stable_order(dtype):
    """Long inputs take the packed-key and radix paths; PyTorch's stable sort is the oracle for the indices."""
    a = np.random.RandomState(1).randint(-30, 30, 5000).astype(dtype)
    for desc in (False, True):
        both(lambda lib, x: lib.sort(x, stable=True, descending=desc), a)
    b = np.random.RandomState(2).randint(-30, 30, (20, 300)).astype(dtype)
    both(lambda lib, x: lib.sort(x, dim=0, stable=True, descending=True), b)


def test_long_topk_candidates_path():
    a = np.random.RandomState(3).randn(100_000).astype(np.float32)
    for k in (1, 10, 500):
        for largest in (True, False):
            both(lambda lib, x: lib.topk(x, k, largest=largest), a)
    a[17] = NAN                                          # NaN ranks first: the full sort takes over
    both(lambda lib, x: lib.topk(x, 5), a)


# --------------------------------------------------------------------------- returns and out=
def test_namedtuple_returns():
    x = onion.tensor([[1., 5., 2.], [7., 0., 3.]])
    r = onion.max(x, 1)
    assert type(r).__name__ == "max" and r.values.tolist() == [5., 7.] and r.indices.tolist() == [1, 0]
    s = x.sort(descending=True)
    assert type(s).__name__ == "sort" and s.indices.tolist() == [[1, 2, 0], [0, 2, 1]]
    a = onion.aminmax(x)
    assert a.min.item() == 0. and a.max.item() == 7.
    assert type(onion.topk(x, 1)).__name__ == "topk"


def test_out_pairs_and_their_checks():
    def run(lib, x):
        v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.sort(x, 1, out=(v, i))
        assert r[0] is v and r[1] is i
        v2, i2 = lib.empty(0), lib.empty(0, dtype=lib.int64)
        lib.max(x, 0, out=(v2, i2))
        return v, i, v2, i2, lib.max(x, out=lib.empty(()))
    both(run, [[3., 1., 2.], [0., 5., 4.]])
    both(lambda lib, x: lib.sort(x, out=(lib.empty(0), lib.empty(0, dtype=lib.int32))), [3., 1.])
    both(lambda lib, x: lib.topk(x, 1, out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64))),
         [3., 1.])


# --------------------------------------------------------------------------- errors
ERRORS = [
    (lambda lib, x: lib.sort(x.to(lib.complex64)), [1., 2.]),
    (lambda lib, x: lib.sort(x, dim=3), [1., 2.]),
    (lambda lib, x: lib.topk(x, 4), [1., 2., 3.]),
    (lambda lib, x: lib.topk(x > 1, 1), [1., 2., 3.]),
    (lambda lib, x: lib.kthvalue(x, 0), [1., 2., 3.]),
    (lambda lib, x: lib.kthvalue(x > 1, 1), [1., 2., 3.]),
    (lambda lib, x: lib.max(x[:0]), [1., 2.]),
    (lambda lib, x: lib.max(x.reshape(2, 1)[:, :0], 1), [1., 2.]),
    (lambda lib, x: lib.max(x.to(lib.complex64), 0), [1., 2.]),
    (lambda lib, x: lib.max(x.to(lib.complex64)), [1., 2.]),
    (lambda lib, x: lib.median(x.to(lib.complex64)), [1., 2.]),
    (lambda lib, x: lib.mode(x[:0], 0), [1., 2.]),
    (lambda lib, x: lib.aminmax(x[:0]), [1., 2.]),
    (lambda lib, x: lib.cummax(x.to(lib.complex64), 0), [1., 2.]),
    (lambda lib, x: lib.quantile(x, 1.5), [1., 2.]),
    (lambda lib, x: lib.quantile(x.to(lib.int64), 0.5), [1., 2.]),
    (lambda lib, x: lib.quantile(x, lib.tensor([[0.5]])), [1., 2.]),
    (lambda lib, x: lib.quantile(x, 0.5, interpolation="cubic"), [1., 2.]),
    (lambda lib, x: lib.searchsorted(x, x, side="middle"), [1., 2.]),
    (lambda lib, x: lib.searchsorted(x, x, right=True, side="left"), [1., 2.]),
    (lambda lib, x: lib.searchsorted(x, x, sorter=lib.tensor([0, 1], dtype=lib.int32)), [1., 2.]),
    (lambda lib, x: lib.searchsorted(x, x, sorter=lib.tensor([0, 5])), [1., 2.]),
    (lambda lib, x: lib.searchsorted(x.reshape(2, 1), x.reshape(1, 2)), [1., 2.]),
    (lambda lib, x: lib.bucketize(x, x.reshape(2, 1)), [1., 2.]),
    (lambda lib, x: lib.bincount(x.to(lib.int64) - 3), [1., 2.]),
    (lambda lib, x: lib.bincount(x), [1., 2.]),
    (lambda lib, x: lib.histc(x, 0), [1., 2.]),
    (lambda lib, x: lib.histc(x, 4, 3, 1), [1., 2.]),
    (lambda lib, x: lib.histogram(x, 2, weight=lib.ones(3)), [1., 2.]),
    (lambda lib, x: lib.histogram(x, lib.tensor([0., 1.], dtype=lib.float64)), [1., 2.]),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_torch(i):
    fn, arg = ERRORS[i]
    ro, rt = both(fn, arg)
    assert ro is None and rt is None, "expected both to raise"


# --------------------------------------------------------------------------- search, unique, histograms
def test_searchsorted_and_bucketize():
    seq, vals = [1., 2., 2., 3.], [2., 2.5, NAN, 0., 3.]
    for right in (False, True):
        both(lambda lib, s, v: lib.searchsorted(s, v, right=right), seq, vals)
        both(lambda lib, s, v: lib.bucketize(v, s, right=right, out_int32=True), seq, vals)
    both(lambda lib, s, v: lib.searchsorted(s, v, side="right", sorter=lib.tensor([3, 0, 2, 1])), [3., 1., 2., 2.],
         vals)
    both(lambda lib, s, v: lib.searchsorted(s, v), [[1., 2., 3.], [0., 5., 6.]], [[2., 3.5, 9.], [5., 7., -1.]])
    both(lambda lib, s: lib.searchsorted(s, 2), seq)


def test_unique_family():
    x = [3, 1, 2, 1, 3, 5]
    both(lambda lib, t: lib.unique(t, return_inverse=True, return_counts=True), x)
    both(lambda lib, t: t.unique(sorted=False), x)
    both(lambda lib, t: lib.unique(t, return_inverse=True, return_counts=True), [NAN, 1., NAN, 1.])
    both(lambda lib, t: lib.unique(t, dim=1, return_inverse=True, return_counts=True), [[1, 2, 1], [3, 0, 3]])
    both(lambda lib, t: lib.unique_consecutive(t, return_inverse=True, return_counts=True), [1, 1, 2, 2, 1])
    both(lambda lib, t: lib.unique_consecutive(t, dim=0, return_counts=True), [[1, 1], [1, 1], [2, 3]])
    big = np.random.RandomState(4).randint(0, 1 << 40, 3000)      # wide range: the sort path
    both(lambda lib, t: lib.unique(t, return_inverse=True, return_counts=True), big)


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("shape,dim", [((3, 4, 5), 1), ((3, 4, 5), -1), ((3, 4, 1), 1), ((5, 4), 1), ((5, 4), 0),
                                       ((3, 0, 5), 1)])
def test_unique_dim_strides(name, shape, dim):
    # PyTorch computes the distinct slices with dim moved first and moves it back: for dim != 0 the result
    # is that permuted view (shape (3, 4, 5), dim 2: strides (4, 1, 12)); an empty dim gives a plain clone
    x = np.random.RandomState(6).randint(0, 2, shape)
    rt = getattr(torch, name)(torch.from_numpy(x), dim=dim)
    ro = getattr(onion, name)(onion.tensor(x), dim=dim)
    same(ro, rt)
    assert ro.stride() == rt.stride()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_histc_reduced_precision_bins(dtype):
    # PyTorch's histc kernel computes (x - min) * bins / (max - min) in c10::Half/BFloat16, rounding each
    # step: elements near a bin edge land in other bins than a float32 computation puts them
    x = torch.from_numpy(np.random.RandomState(7).randn(400).astype(np.float32) * 5).to(getattr(torch, dtype))
    xo = onion.tensor(x.float().numpy()).to(getattr(onion, dtype))
    for bins, lo, hi in ((100, 0, 0), (37, -3.3, 4.1), (7, -9.0, 9.0)):
        rt = torch.histc(x, bins, lo, hi)
        ro = onion.histc(xo, bins, lo, hi)
        np.testing.assert_array_equal(ro.float().numpy(), rt.float().numpy())


@pytest.mark.parametrize("density", [False, True])
def test_histogram_weights_summed_in_float32(density):
    # PyTorch adds float32 weights into each bin in float32, in element order (one thread below its grain
    # size of 200 elements); a float64 sum rounded once differs in the last bits
    rs = np.random.RandomState(10)
    a, w = rs.randn(125).astype(np.float32), (rs.rand(125) * 100).astype(np.float32)
    for bins in (1, 3, 4):
        ht, et = torch.histogram(torch.from_numpy(a), bins, weight=torch.from_numpy(w), density=density)
        ho, eo = onion.histogram(onion.tensor(a), bins, weight=onion.tensor(w), density=density)
        np.testing.assert_array_equal(ho.numpy(), ht.numpy())
        np.testing.assert_array_equal(eo.numpy(), et.numpy())


def test_histograms_and_bincount():
    f = [1., 2., 1., 4., 2.5]
    both(lambda lib, t: lib.histc(t, 4), f)
    both(lambda lib, t: lib.histc(t, 3, 0, 2), f)
    both(lambda lib, t: lib.histogram(t, 4, density=True), f)
    both(lambda lib, t: lib.histogram(t, lib.tensor([0., 1.5, 4.]), weight=t), f)
    both(lambda lib, t: lib.histogram(t, 3, range=(0., 3.)), f)
    both(lambda lib, t: lib.bincount(t, minlength=7), [1, 2, 2, 5])
    both(lambda lib, t: lib.bincount(t, lib.tensor([0.5, 1., 2., 4.])), [1, 2, 2, 5])


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantiles(interpolation):
    a = np.random.RandomState(5).randn(4, 6)
    a[1, 2] = NAN
    q = [0., 0.3, 0.5, 1.]
    both(lambda lib, t: lib.quantile(t, lib.tensor(q, dtype=lib.float64), 1, interpolation=interpolation), a)
    both(lambda lib, t: lib.nanquantile(t, lib.tensor(q, dtype=lib.float64), 0, True, interpolation=interpolation), a)
    both(lambda lib, t: lib.nanquantile(t, 0.7, interpolation=interpolation), a)


# --------------------------------------------------------------------------- Meta and gradients
def test_meta_geometry():
    x = onion.empty((3, 4, 5), device="meta").permute(2, 0, 1)
    v, i = onion.sort(x, 1)
    assert v.device.type == "meta" and v.stride() == (1, 20, 5) and i.dtype is onion.int64
    v, i = onion.topk(x, 2, 1)
    assert tuple(v.shape) == (5, 2, 4) and v.stride() == (8, 4, 1)
    assert tuple(onion.max(x, 1, True)[0].shape) == (5, 1, 4)
    assert tuple(onion.quantile(x.contiguous(), onion.empty(3, device="meta"), 0).shape) == (3, 3, 4)


GRAD_OPS = [
    lambda lib, x: lib.sort(x, 1, True).values,
    lambda lib, x: lib.topk(x, 2, 0).values,
    lambda lib, x: lib.max(x, 1).values,
    lambda lib, x: lib.max(x),
    lambda lib, x: lib.median(x, 0, True).values,
    lambda lib, x: lib.nanmedian(x),
    lambda lib, x: lib.kthvalue(x, 2, 0).values,        # no ties at k=2 (their index is the known difference)
    lambda lib, x: lib.mode(x.round(), 1).values if hasattr(x, "round") else None,
    lambda lib, x: lib.cummax(x, 1).values,
    lambda lib, x: lib.cummin(x, 0).values,
    lambda lib, x: sum(lib.aminmax(x, dim=0)),
    lambda lib, x: lib.quantile(x, 0.4, dim=1),
    lambda lib, x: lib.msort(x),
]


@pytest.mark.parametrize("i", range(len(GRAD_OPS)))
def test_gradients_match_torch(i):
    a = np.array([[1., 3., 3., 2.], [0.5, -1., 4., 4.], [2., 2., 2., 7.]])
    xt = torch.tensor(a, requires_grad=True)
    xo = onion.tensor(a, requires_grad=True)
    rt = GRAD_OPS[i](torch, xt)
    if rt is None or not hasattr(onion.Tensor, "round") and i == 7:
        pytest.skip("needs Tensor.round")
    ro = GRAD_OPS[i](onion, xo)
    g = np.random.RandomState(i).randn(*rt.shape)
    gt = torch.autograd.grad(rt, xt, torch.tensor(g))[0]
    go = onion.autograd.grad(ro, xo, onion.tensor(g))[0]
    np.testing.assert_allclose(go.numpy(), gt.numpy(), rtol=1e-12, atol=1e-12)


def test_double_backward_through_sort():
    a = np.array([[3., 1., 2.], [0., 5., 4.]])
    xt = torch.tensor(a, requires_grad=True)
    xo = onion.tensor(a, requires_grad=True)
    outs = []
    for lib, x in ((torch, xt), (onion, xo)):
        v = lib.sort(x, 1).values
        w = lib.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=lib.float64, requires_grad=True)
        (gx,) = lib.autograd.grad((v * w).sum(), x, create_graph=True)
        (gw,) = lib.autograd.grad((gx * gx).sum(), w)
        outs.append(gw.detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0])


def test_histogramdd():
    x = [[0., 1.], [1., 0.], [2., 0.], [2., 2.]]
    rt = torch.histogramdd(torch.tensor(x), [2, 3], range=[0., 1., 0., 2.])
    ro = onion.histogramdd(onion.tensor(x), [2, 3], range=[0., 1., 0., 2.])
    assert type(ro).__name__ == "histogramdd" and isinstance(ro.bin_edges, tuple)
    same((ro.hist,) + ro.bin_edges, (rt.hist,) + rt.bin_edges)
    both(lambda lib, t: lib.histogramdd(t, 2, weight=lib.tensor([1., 2., 4., 8.]), density=True).hist, x)
    both(lambda lib, t: lib.histogramdd(t, [lib.tensor([0., 1., 2.]), lib.tensor([0., 0.5, 2.])]).hist, x)
    both(lambda lib, t: lib.histogramdd(t, [2, 3, 4]), x)
    both(lambda lib, t: lib.histogramdd(t.reshape(-1), 2), x)
