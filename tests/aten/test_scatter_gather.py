"""gather/scatter, the index_* family, segment_reduce and the layout operators against PyTorch 2.13:
worked values (duplicates in the index, include_self, integer means, negative indices), PyTorch's error
types and texts, what bad calls leave behind (nothing), and gradients."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _both(fn):
    """fn(lib) with lib = torch and onion: both raise the same type and text, or return equal tensors."""
    out = []
    for lib in (torch, onion):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(("ok", fn(lib)))
        except Exception as e:     # noqa: BLE001 - compared below
            out.append(("err", e))
    (kt, rt), (ko, ro) = out
    assert kt == ko, f"torch {kt}: {rt!r}; onion {ko}: {ro!r}"
    if kt == "err":
        assert type(ro).__name__ == type(rt).__name__, (rt, ro)
        assert str(ro).split("\n")[0] == str(rt).split("\n")[0]
        return None
    _same(ro, rt)
    return ro


def _same(ro, rt):
    if isinstance(rt, (tuple, list)):
        for a, b in zip(ro, rt):
            _same(a, b)
        return
    assert str(ro.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert tuple(ro.shape) == tuple(rt.shape)
    np.testing.assert_allclose(np.asarray(ro.tolist(), dtype=complex), np.asarray(rt.tolist(), dtype=complex),
                               rtol=1e-6, atol=1e-6)


def T(lib, data, **kw):
    return lib.tensor(data, **kw)


X = [[0., 1., 2.], [3., 4., 5.]]
XI = [[0, 1, 2], [3, 4, 5]]


# ----------------------------------------------------------------------------- worked values
@pytest.mark.parametrize("call", [
    lambda L: T(L, X).gather(1, T(L, [[2, 0, 0], [1, 1, 2]])),
    lambda L: T(L, X).gather(0, T(L, [[1, 0], [1, 1]])),
    lambda L: T(L, X).gather(1, T(L, [[2]], dtype=L.int32)),
    lambda L: T(L, 5.).gather(0, T(L, 0)),
    lambda L: T(L, X).t().gather(0, T(L, [[2, 0], [1, 1]])),
    lambda L: T(L, X).scatter(1, T(L, [[2, 0]]), T(L, [[9., 8.]])),
    lambda L: T(L, X).scatter(0, T(L, [[1, 0, 1]]), 7.5),
    lambda L: T(L, XI).scatter(1, T(L, [[1, 1]]), T(L, [[4, 3]]), reduce="add"),
    lambda L: T(L, X).scatter(1, T(L, [[1, 1]]), 2., reduce="multiply"),
    lambda L: T(L, X).scatter_add(1, T(L, [[2, 2, 0]]), T(L, [[9., 8., 7.]])),
    lambda L: T(L, [False, False, True]).scatter_add(0, T(L, [1, 1]), T(L, [True, True])),
    lambda L: T(L, XI).scatter_reduce(1, T(L, [[1, 1]]), T(L, [[4, 3]]), "mean"),
    lambda L: T(L, XI).scatter_reduce(1, T(L, [[1, 1]]), T(L, [[-4, -3]]), "mean", include_self=False),
    lambda L: T(L, X).scatter_reduce(1, T(L, [[1, 1], [0, 0]]), T(L, [[-4., -3], [6, 9]]), "amax",
                                     include_self=False),
    lambda L: T(L, X).scatter_reduce(1, T(L, [[1, 1], [0, 0]]), T(L, [[-4., -3], [6, 9]]), "amin"),
    lambda L: T(L, X).scatter_reduce(0, T(L, [[1, 1, 0]]), T(L, [[2., 3., 4.]]), "prod", include_self=False),
    lambda L: T(L, X).scatter_reduce(0, T(L, [[1, 1, 0]]), T(L, [[2., 3., 4.]]), "sum"),
    lambda L: T(L, X).index_select(1, T(L, [2, 0, 2])),
    lambda L: T(L, X).index_select(0, T(L, 1)),
    lambda L: T(L, X).index_add(1, T(L, [2, 2]), T(L, [[1., 2.], [3., 4.]]), alpha=2),
    lambda L: T(L, XI).index_add(0, T(L, [1, 1], dtype=L.int32), T(L, [[1, 2, 3], [1, 1, 1]]), alpha=2.5),
    lambda L: T(L, X).index_copy(1, T(L, [2, 0]), T(L, [[9., 8.], [7., 6.]])),
    lambda L: T(L, X).index_fill(1, T(L, [-1, 0]), 5),
    lambda L: T(L, X).index_fill(0, T(L, [1]), T(L, -2.)),
    lambda L: T(L, XI).index_reduce(0, T(L, [0, 0]), T(L, [[1, 2, 3], [4, 4, 4]]), "mean"),
    lambda L: T(L, XI).index_reduce(0, T(L, [0, 0]), -T(L, [[1, 2, 3], [4, 4, 4]]), "mean", include_self=False),
    lambda L: T(L, X).index_reduce(1, T(L, [0, 0, 2]), T(L, [[1., 2., 3.], [4., 5., 6.]]), "amax"),
    lambda L: T(L, X).index_reduce(1, T(L, [0, 0, 2]), T(L, [[1., 2., 3.], [4., 5., 6.]]), "prod",
                                   include_self=False),
    lambda L: L.take_along_dim(T(L, X), T(L, [[0], [2]]), 1),
    lambda L: L.take_along_dim(T(L, X), T(L, [5, 0])),
    lambda L: L.take_along_dim(T(L, X), T(L, [[0, 1, 1]]), 0),
])
def test_scatter_gather_values(call):
    _both(call)


@pytest.mark.parametrize("call", [
    lambda L: T(L, X).roll(1),
    lambda L: T(L, X).roll((1, -1), (0, 1)),
    lambda L: L.roll(T(L, X), 2, 1),
    lambda L: T(L, X).flip(0, 1),
    lambda L: T(L, X).t().flip(1),
    lambda L: T(L, X).fliplr(),
    lambda L: T(L, X).flipud(),
    lambda L: T(L, X).rot90(),
    lambda L: T(L, X).rot90(-1, (1, 0)),
    lambda L: T(L, X).rot90(2),
    lambda L: T(L, X).tril(),
    lambda L: T(L, X).tril(-1),
    lambda L: T(L, X).triu(1),
    lambda L: L.tril_indices(3, 4, -1),
    lambda L: L.triu_indices(4, 3, 1),
    lambda L: L.diag(T(L, [1., 2.]), 1),
    lambda L: L.diag(T(L, X), -1),
    lambda L: L.diag_embed(T(L, X), 1, 0, 2),
    lambda L: L.diagflat(T(L, X), -1),
    lambda L: T(L, X).repeat(2, 1, 2),
    lambda L: T(L, X).tile((2,)),
    lambda L: L.repeat_interleave(T(L, [1, 0, 2])),
    lambda L: T(L, X).repeat_interleave(T(L, [1, 2]), dim=0),
    lambda L: T(L, X).repeat_interleave(2),
    lambda L: T(L, X).select_scatter(T(L, [7., 8.]), 1, -1),
    lambda L: T(L, X).slice_scatter(T(L, [[7.], [8.]]), 1, 1, 2),
    lambda L: T(L, X).diagonal_scatter(T(L, [7.]), 2),
    lambda L: T(L, X).as_strided_scatter(T(L, [7., 8.]), (2,), (2,), 1),
    lambda L: L.segment_reduce(T(L, [1., 2., 3., 4.]), "max", lengths=T(L, [1, 0, 3])),
    lambda L: L.segment_reduce(T(L, [1., 2., 3., 4.]), "mean", offsets=T(L, [0, 1, 1, 4])),
    lambda L: L.segment_reduce(T(L, X), "prod", lengths=T(L, [[2, 1], [0, 3]]), axis=1, initial=2.),
])
def test_layout_values(call):
    _both(call)


def test_layout_strides():
    """flip keeps a transposed input's layout; rot90 returns the flipped copy transposed; the view scatters
    copy self's strides."""
    for lib in (torch, onion):
        x = T(lib, X).t()
        assert x.flip(0).stride() == (1, 3)
        assert x.rot90().stride() == (3, 1)
        assert x.select_scatter(T(lib, [1., 2.]), 0, 0).stride() == (1, 3)
        assert x.roll(1, 0).stride() == (2, 1)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call", [
    lambda L: T(L, X).gather(1, T(L, [[-1]])),
    lambda L: T(L, X).gather(1, T(L, [[3]])),
    lambda L: T(L, X).gather(1, T(L, [[1.]])),
    lambda L: T(L, X).gather(1, T(L, [1])),
    lambda L: T(L, X).gather(1, T(L, [[1]] * 3)),
    lambda L: T(L, X).gather(2, T(L, [[1]])),
    lambda L: T(L, X).scatter(1, T(L, [[3]]), T(L, [[1.]])),
    lambda L: T(L, X).scatter(1, T(L, [[1]]), T(L, [[1.]], dtype=L.float64)),
    lambda L: T(L, X).scatter(1, T(L, [[1, 1]]), T(L, [[1.]])),
    lambda L: T(L, X).scatter(1, T(L, [[1]] * 3), 1.),
    lambda L: T(L, X).scatter(1, T(L, [[[1]]]), 1.),
    lambda L: T(L, X).scatter(1, T(L, [[1]]), T(L, [[[1.]]])),
    lambda L: T(L, X).scatter(1, T(L, [[1]]), T(L, [[1.]]), reduce="mean"),
    lambda L: T(L, X).scatter_reduce(1, T(L, [[1]]), T(L, [[1.]]), "foo"),
    lambda L: T(L, [True]).scatter_reduce(0, T(L, [0]), T(L, [True]), "mean"),
    lambda L: T(L, X).index_select(1, T(L, [3])),
    lambda L: T(L, [1., 2.]).index_select(0, T(L, [-1])),
    lambda L: T(L, X).index_select(1, T(L, [[1]])),
    lambda L: T(L, X).index_select(1, T(L, [1.])),
    lambda L: T(L, 5.).index_select(0, T(L, [0, 0])),
    lambda L: T(L, X).index_add(1, T(L, [3]), T(L, [[1.], [1.]])),
    lambda L: T(L, [1., 2.]).index_add(0, T(L, [2]), T(L, [1.])),
    lambda L: T(L, X).index_add(1, T(L, [1]), T(L, [[1., 1.], [1., 1.]])),
    lambda L: T(L, X).index_add(1, T(L, [1]), T(L, [[1.], [1.]], dtype=L.float64)),
    lambda L: T(L, X).index_add(0, T(L, [[0]]), T(L, [[1., 1., 1.]])),
    lambda L: T(L, X).index_add(0, T(L, [0.]), T(L, [[1., 1., 1.]])),
    lambda L: T(L, X).index_add(0, T(L, [0]), T(L, [[1., 1.]])),
    lambda L: T(L, X).index_copy(1, T(L, [3]), T(L, [[1.], [1.]])),
    lambda L: T(L, X).index_copy(0, T(L, [0], dtype=L.int32), T(L, [[1., 1., 1.]])),
    lambda L: T(L, X).index_copy(0, T(L, [0, 1]), T(L, [[1., 1., 1.]])),
    lambda L: T(L, X).index_copy(0, T(L, [0]), T(L, [[1., 1.]])),
    lambda L: T(L, X).index_fill(1, T(L, [3]), 1),
    lambda L: T(L, X).index_fill(1, T(L, [0], dtype=L.int32), 1),
    lambda L: T(L, X).index_fill(1, T(L, [[0]]), 1),
    lambda L: T(L, X).index_fill(1, T(L, [0]), T(L, [1.])),
    lambda L: T(L, X).index_reduce(0, T(L, [0]), T(L, [[1., 1., 1.]]), "sum"),
    lambda L: T(L, X).index_reduce(0, T(L, [5]), T(L, [[1., 1., 1.]]), "prod"),
    lambda L: L.take_along_dim(T(L, X), T(L, [[0.]]), 1),
    lambda L: L.take_along_dim(T(L, X), T(L, [0]), 1),
    lambda L: T(L, X).roll((1, 2), (0,)),
    lambda L: T(L, X).flip(0, 0),
    lambda L: T(L, [1.]).fliplr(),
    lambda L: T(L, X).rot90(1, (0, 0)),
    lambda L: T(L, [1.]).tril(),
    lambda L: L.tril_indices(-1, 3),
    lambda L: L.diag(T(L, [[[1.]]])),
    lambda L: L.diag_embed(T(L, X), 0, 1, 1),
    lambda L: T(L, X).repeat(2),
    lambda L: T(L, X).repeat(2, -1),
    lambda L: L.repeat_interleave(T(L, [1, -2])),
    lambda L: L.repeat_interleave(T(L, [[1, 2]])),
    lambda L: L.repeat_interleave(T(L, [1, 2]), output_size=4),
    lambda L: T(L, X).repeat_interleave(T(L, [1, 2, 3]), dim=0),
    lambda L: T(L, X).slice_scatter(T(L, [[1., 1.], [1., 1.]]), 1, 0, 1),
    lambda L: T(L, X).diagonal_scatter(T(L, [1., 1., 1.])),
    lambda L: L.segment_reduce(T(L, [1., 2.]), "sum"),
    lambda L: L.segment_reduce(T(L, [1., 2.]), "sum", lengths=T(L, [1, 2])),
    lambda L: L.segment_reduce(T(L, [1, 2]), "sum", lengths=T(L, [1, 1])),
])
def test_errors(call):
    _both(call)


@pytest.mark.parametrize("call", [
    lambda x, L: x.scatter_(1, T(L, [[0, 3]]), 1.),
    lambda x, L: x.scatter_add_(1, T(L, [[0, 3]]), T(L, [[1., 1.]])),
    lambda x, L: x.index_add_(1, T(L, [0, 3]), T(L, [[1., 1.], [1., 1.]])),
    lambda x, L: x.index_fill_(1, T(L, [0, 3]), 2.),
    lambda x, L: x.index_copy_(1, T(L, [0, 3]), T(L, [[1., 1.], [1., 1.]])),
])
def test_bad_inplace_changes_nothing(call):
    x = onion.tensor(X)
    v = x._version
    with pytest.raises((RuntimeError, IndexError)):
        call(x, onion)
    assert x.tolist() == X and x._version == v


def test_inplace_and_out():
    for lib in (torch, onion):
        x = T(lib, X)
        r = x.scatter_(1, T(lib, [[2, 0]]), T(lib, [[9., 8.]]))
        assert r is x and x.tolist() == [[8., 1., 9.], [3., 4., 5.]]
        out = lib.empty(0)
        lib.gather(T(lib, X), 1, T(lib, [[1], [0]]), out=out)
        assert out.tolist() == [[1.], [3.]]
        out = lib.empty(0)
        lib.index_select(T(lib, X), 1, T(lib, [2]), out=out)
        assert out.tolist() == [[2.], [5.]]
        y = T(lib, X).tril_(0)
        assert y.tolist() == [[0., 0., 0.], [3., 4., 0.]]


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("fn", [
    lambda L, x, s: x.gather(1, T(L, [[2, 2], [0, 1]])) * s[:, :2],
    lambda L, x, s: x.scatter(1, T(L, [[2, 0], [1, 1]]), s[:, :2]),
    lambda L, x, s: x.scatter_add(1, T(L, [[2, 2], [1, 1]]), s[:, :2]),
    lambda L, x, s: x.scatter_reduce(1, T(L, [[2, 2, 0], [1, 1, 0]]), s, "prod"),
    lambda L, x, s: x.scatter_reduce(1, T(L, [[2, 2, 0], [1, 1, 0]]), s, "amax", include_self=False),
    lambda L, x, s: x.scatter_reduce(1, T(L, [[2, 2, 0], [1, 1, 0]]), s, "mean"),
    lambda L, x, s: x.index_add(1, T(L, [2, 2, 0]), s, alpha=3),
    lambda L, x, s: x.index_copy(1, T(L, [2, 0, 1]), s),
    lambda L, x, s: x.index_reduce(1, T(L, [2, 2, 0]), s, "prod"),
    lambda L, x, s: x.index_reduce(1, T(L, [2, 2, 0]), s, "amin", include_self=False),
    lambda L, x, s: x.index_fill(1, T(L, [2, 2]), s[0, 0]),
    lambda L, x, s: x.roll(1, 1) * s,
    lambda L, x, s: x.rot90() * s.t(),
    lambda L, x, s: x.repeat(2, 2) * s.repeat(2, 2),
    lambda L, x, s: x.triu(1) + s.tril(),
    lambda L, x, s: x.select_scatter(s[0], 0, 1),
    lambda L, x, s: x.slice_scatter(s[:, :1], 1, 1, 2),
    lambda L, x, s: x.diagonal_scatter(s[0, :2]),
    lambda L, x, s: L.diag_embed(x) * 2 + L.diag(s[0]).sum(),
    lambda L, x, s: x.repeat_interleave(T(L, [1, 2, 0]), dim=1) * 3,
    lambda L, x, s: L.segment_reduce(x, "prod", lengths=T(L, [[1, 2], [3, 0]]), axis=1) * s[:, :2],
])
def test_gradients(fn):
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((2, 3))
    xv[0, 1] = 0.0      # a zero for the prod gradients
    sv = rng.standard_normal((2, 3))
    grads = []
    for lib in (torch, onion):
        x = lib.tensor(xv, requires_grad=True)
        s = lib.tensor(sv, requires_grad=True)
        y = fn(lib, x, s)
        g = lib.tensor(np.linspace(-1, 1, int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)))
        grads.append([v.tolist() if v is not None else None
                      for v in lib.autograd.grad(y, (x, s), g, allow_unused=True)])
    gt, go = grads
    for a, b in zip(go, gt):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_scatter_add_large_matches_torch():
    """Many repeats into few positions, 1-D and along dim 1 (the ufunc.at path)."""
    rng = np.random.default_rng(1)
    src = rng.standard_normal((50, 400))
    idx = rng.integers(0, 7, (50, 400))
    z = np.zeros((50, 7))
    rt = torch.tensor(z).scatter_add(1, torch.tensor(idx), torch.tensor(src))
    ro = onion.tensor(z).scatter_add(1, onion.tensor(idx), onion.tensor(src))
    np.testing.assert_allclose(ro.tolist(), rt.tolist(), rtol=1e-12, atol=1e-12)
    rt = torch.tensor(z).scatter_reduce(1, torch.tensor(idx), torch.tensor(src), "amin", include_self=False)
    ro = onion.tensor(z).scatter_reduce(1, onion.tensor(idx), onion.tensor(src), "amin", include_self=False)
    assert ro.tolist() == rt.tolist()


def test_out_overlap_refused():
    """gather/index_select refuse an out= that is expanded or shares memory with an input, as PyTorch."""
    for lib in (torch, onion):
        src, idx = lib.arange(6.), lib.tensor([0, 1, 2])
        for out in (lib.zeros(1).expand(3), src[:3]):
            with pytest.raises(RuntimeError, match="unsupported operation"):
                lib.gather(src, 0, idx, out=out)
        x = lib.zeros(3, 6)
        with pytest.raises(RuntimeError, match="unsupported operation"):
            lib.index_select(x, 1, lib.tensor([0, 1]), out=lib.zeros(1, 2).expand(3, 2))


@pytest.mark.parametrize("shape,ishape,dim", [((37,), (45,), 0), ((6, 7), (5, 9), 1), ((6, 7), (9, 4), 0),
                                              ((3, 4, 5), (2, 6, 5), 1), ((3, 4, 5), (3, 2, 9), 2)])
def test_blocked_positions_match_torch(monkeypatch, shape, ishape, dim):
    """gather/scatter work out flat positions a block of the index's leading dim at a time: with blocks of a
    few elements, repeats that fall in different blocks still add in index order (float32 results equal
    to the bit), and a bad index in a later block is the one named."""
    from onion.aten.native import scatter_gather
    monkeypatch.setattr(scatter_gather, "_CHUNK", 5)
    rng = np.random.default_rng(7)
    xv = rng.standard_normal(shape).astype(np.float32)
    sv = (rng.standard_normal(ishape) * 10.0 ** rng.integers(-6, 6, ishape)).astype(np.float32)
    gshape = tuple(min(a, b) if d != dim else b for d, (a, b) in enumerate(zip(shape, ishape)))
    iv = rng.integers(0, shape[dim], ishape)
    gv = iv[tuple(slice(0, n) for n in gshape)]
    calls = [
        lambda L, x, i, s, g: x.gather(dim, g),
        lambda L, x, i, s, g: x.scatter_add(dim, g, s[tuple(slice(0, n) for n in gshape)]),
        lambda L, x, i, s, g: x.scatter(dim, g, s[tuple(slice(0, n) for n in gshape)]),
        lambda L, x, i, s, g: x.scatter(dim, g, 2.5),
        lambda L, x, i, s, g: x.scatter_reduce(dim, g, s, "sum"),
        lambda L, x, i, s, g: x.scatter_reduce(dim, g, s, "prod"),
        lambda L, x, i, s, g: x.scatter_reduce(dim, g, s, "amax"),
        lambda L, x, i, s, g: x.scatter_reduce(dim, g, s, "mean", include_self=False),
    ]
    for call in calls:
        res = []
        for lib in (torch, onion):
            res.append(np.asarray(call(lib, lib.tensor(xv), lib.tensor(iv), lib.tensor(sv), lib.tensor(gv)).tolist(),
                                  np.float32))
        assert res[0].tobytes() == res[1].tobytes()
    bad = gv.copy()
    flat = bad.reshape(-1)
    flat[-1], flat[-2] = -1, shape[dim] + 3      # the first bad one in row-major order is shape[dim] + 3
    for call in calls[:4]:
        _both(lambda L: call(L, L.tensor(xv), L.tensor(iv), L.tensor(sv), L.tensor(bad)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
@pytest.mark.parametrize("shape,ishape", [((40,), (300,)), ((6, 50), (4, 200)), ((3, 4, 9), (2, 4, 30))])
def test_scatter_add_last_dim_rows_match_torch(dtype, shape, ishape):
    """scatter_add / scatter_reduce sum along the last dim add each index row into its own row (the CSR
    kernel for float32/float64): many repeats per position, an index with fewer leading rows than self,
    non-contiguous index and src, values of mixed magnitude: equal to torch bit for bit; a negative or
    too large index anywhere raises PyTorch's error naming the first one."""
    rng = np.random.default_rng(11)
    xv = (rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 4, shape)).astype(dtype)
    sv = (rng.standard_normal(ishape[:-1] + (2 * ishape[-1],)) * 10.0 ** rng.integers(-4, 4, ishape[:-1] + (2 * ishape[-1],))).astype(dtype)
    iv = rng.integers(0, shape[-1], ishape[:-1] + (2 * ishape[-1],))
    d = len(shape) - 1
    res = []
    for lib in (torch, onion):
        x, i, s = lib.tensor(xv), lib.tensor(iv)[..., ::2], lib.tensor(sv)[..., 1::2]
        res.append([np.asarray(r.tolist(), dtype).tobytes() for r in
                    (x.scatter_add(d, i, s), x.scatter_reduce(d, i, s, "sum"), x.scatter_add(-1, i.contiguous(), s))])
    assert res[0] == res[1]
    for bad_value in (-1, shape[-1]):
        bad = iv.copy()
        bad.reshape(-1)[bad.size // 2] = bad_value
        bad.reshape(-1)[-1] = -7
        _both(lambda L: L.tensor(xv).scatter_add(d, L.tensor(bad), L.tensor(sv)))
