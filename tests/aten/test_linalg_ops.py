"""Products, contractions and decompositions against PyTorch: values, dtypes, strides and error texts."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import onion  # noqa: E402

pytestmark = pytest.mark.oracle


def _pair(shape, dtype="float64", seed=0, fn=None):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if fn is not None:
        a = fn(a)
    a = a.astype(dtype)
    return onion.tensor(a), torch.tensor(a)


def _same(ro, rt, rtol=1e-7, atol=1e-7, strides=True):
    if isinstance(rt, (tuple, list)):
        assert len(ro) == len(rt)
        for a, b in zip(ro, rt):
            _same(a, b, rtol, atol, strides)
        return
    assert str(ro.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert tuple(ro.shape) == tuple(rt.shape)
    if strides:
        assert all(a == b for a, b, n in zip(ro.stride(), rt.stride(), rt.shape) if n > 1), (ro.stride(), rt.stride())
    np.testing.assert_allclose(ro.detach().numpy(), rt.detach().numpy(), rtol=rtol, atol=atol)


def _outcome(fn, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return "err", e


def _same_error(o_call, t_call):
    ro = _outcome(o_call)
    rt = _outcome(t_call)
    assert rt[0] == "err", rt
    assert ro[0] == "err", f"onion returned where torch raised {rt[1]}"
    # onion.linalg.LinAlgError stands for torch.linalg.LinAlgError (torch._C._LinAlgError)
    assert type(ro[1]) is type(rt[1]) or type(ro[1]).__name__.lstrip("_") == type(rt[1]).__name__.lstrip("_"), \
        (ro[1], rt[1])
    assert str(ro[1]) == str(rt[1])


# ----------------------------------------------------------------------------- products
ERROR_CASES = [
    ("dot", [(3,), (4,)]), ("dot", [(2, 3), (3,)]), ("vdot", [(3,), (4,)]),
    ("mv", [(2, 3), (4,)]), ("mv", [(3,), (3,)]), ("mv", [(2, 3, 1), (3,)]),
    ("addmv", [(3,), (2, 3), (3,)]), ("addmv", [(2, 2), (2, 3), (3,)]),
    ("addr", [(2, 3), (2,), (4,)]), ("addr", [(2, 3), (2, 1), (3,)]),
    ("baddbmm", [(2, 3, 4), (2, 3, 5), (2, 4, 4)]), ("baddbmm", [(3, 5), (2, 3, 5), (2, 5, 4)]),
    ("addbmm", [(3, 4), (2, 3, 5), (3, 5, 4)]), ("addbmm", [(3, 4), (2, 3, 5), (2, 6, 4)]),
    ("addbmm", [(3, 4), (3, 5), (3, 5, 4)]),
    ("outer", [(2, 3), (3,)]), ("inner", [(2, 3), (4,)]), ("kron", [(2,), (3,)]),
]


@pytest.mark.parametrize("name,shapes", ERROR_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ERROR_CASES)])
def test_product_errors_match_torch(name, shapes):
    pairs = [_pair(s, seed=i) for i, s in enumerate(shapes)]
    o = [p[0] for p in pairs]
    t = [p[1] for p in pairs]
    if name == "kron":
        # kron broadcasts anything: a worked value instead of an error
        _same(onion.kron(*o), torch.kron(*t))
        return
    _same_error(lambda: getattr(onion, name)(*o), lambda: getattr(torch, name)(*t))


def test_dtype_errors_match_torch():
    a, ta = _pair((3,))
    b, tb = _pair((3,), "float32")
    _same_error(lambda: onion.dot(a, b), lambda: torch.dot(ta, tb))
    m, tm = _pair((2, 3), "float32")
    _same_error(lambda: onion.mv(m, a), lambda: torch.mv(tm, ta))
    s, ts = _pair((2,))
    _same_error(lambda: onion.addmv(s, m, b), lambda: torch.addmv(ts, tm, tb))
    bo = onion.ones(3, dtype=onion.bool)
    _same_error(lambda: onion.dot(bo, bo), lambda: torch.dot(torch.ones(3, dtype=torch.bool),
                                                             torch.ones(3, dtype=torch.bool)))
    i, ti = _pair((2, 3), "int64")
    v1, tv1 = _pair((2,), "int64")
    v2, tv2 = _pair((3,), "int64")
    _same_error(lambda: onion.addr(i, v1, v2, beta=2.0), lambda: torch.addr(ti, tv1, tv2, beta=2.0))


def test_products_with_scalars_match_torch():
    s, ts = _pair((4,))
    m, tm = _pair((4, 3), seed=1)
    v, tv = _pair((3,), seed=2)
    _same(onion.addmv(s, m, v, beta=0.5, alpha=-2), torch.addmv(ts, tm, tv, beta=0.5, alpha=-2))
    nan = onion.full((4,), float("nan"), dtype=onion.float64)
    # beta == 0 ignores self entirely (NaN included)
    _same(onion.addmv(nan, m, v, beta=0), torch.addmv(torch.full((4,), float("nan"), dtype=torch.float64), tm, tv,
                                                        beta=0))
    x, tx = _pair((4, 3), seed=3)
    _same(onion.addr(x, s, v, beta=2, alpha=3), torch.addr(tx, ts, tv, beta=2, alpha=3))
    # addr promotes like an elementwise op
    f, tf = _pair((3,), "float32", seed=4)
    _same(onion.addr(x, s, f), torch.addr(tx, ts, tf))
    b1, tb1 = _pair((5, 4, 2), seed=5)
    b2, tb2 = _pair((5, 2, 3), seed=6)
    _same(onion.addbmm(x, b1, b2, beta=0.5, alpha=2), torch.addbmm(tx, tb1, tb2, beta=0.5, alpha=2))
    _same(onion.baddbmm(x, b1, b2, alpha=0.25), torch.baddbmm(tx, tb1, tb2, alpha=0.25))
    i1 = onion.tensor([1, 2, 3], dtype=onion.int32)
    i2 = onion.tensor([4, 5, 6], dtype=onion.int32)
    _same(onion.dot(i1, i2), torch.dot(torch.tensor([1, 2, 3], dtype=torch.int32),
                                       torch.tensor([4, 5, 6], dtype=torch.int32)))
    c, tc = _pair((3,), "complex128", seed=7, fn=lambda a: a + 1j * a[::-1])
    d, td = _pair((3,), "complex128", seed=8, fn=lambda a: a - 2j * a)
    _same(onion.vdot(c, d), torch.vdot(tc, td))
    _same(onion.dot(c, d), torch.dot(tc, td))


def test_inplace_and_out_variants():
    s, ts = _pair((4,))
    m, tm = _pair((4, 3), seed=1)
    v, tv = _pair((3,), seed=2)
    r = s.addmv_(m, v, alpha=2)
    assert r is s
    _same(s, ts.addmv_(tm, tv, alpha=2))
    out = onion.empty(0, dtype=onion.float64)
    onion.mv(m, v, out=out)
    _same(out, torch.mv(tm, tv))
    x, tx = _pair((4, 3), seed=3)
    x.addr_(s, v)
    _same(x, tx.addr_(ts, tv))
    o2 = onion.empty(0, dtype=onion.float64)
    onion.outer(s, v, out=o2)
    _same(o2, torch.outer(ts, tv))


def test_autograd_of_products():
    s, ts = _pair((4,))
    m, tm = _pair((4, 3), seed=1)
    v, tv = _pair((3,), seed=2)
    for t in (s, m, v, ts, tm, tv):
        t.requires_grad_(True)
    ro = onion.addmv(s, m, v, beta=0.5, alpha=3).sum()
    rt = torch.addmv(ts, tm, tv, beta=0.5, alpha=3).sum()
    go = onion.autograd.grad(ro, [s, m, v])
    gt = torch.autograd.grad(rt, [ts, tm, tv])
    _same(list(go), list(gt))
    ro = (onion.dot(v, v) + onion.outer(s, v).sum())
    rt = (torch.dot(tv, tv) + torch.outer(ts, tv).sum())
    _same(list(onion.autograd.grad(ro, [s, v])), list(torch.autograd.grad(rt, [ts, tv])))


# ----------------------------------------------------------------------------- contractions
EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->", [(3, 4)]),
    ("ab,bc,cd->ad", [(2, 30), (30, 40), (40, 3)]),
    ("ab,bc,cd,de->ae", [(50, 2), (2, 50), (50, 2), (2, 50)]),
    ("Ab,bA->A", [(3, 4), (4, 3)]),
    ("i,i,i->", [(5,), (5,), (5,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_matches_torch(eq, shapes):
    pairs = [_pair(s, seed=i) for i, s in enumerate(shapes)]
    for p in pairs:
        p[0].requires_grad_(True)
        p[1].requires_grad_(True)
    ro = onion.einsum(eq, *[p[0] for p in pairs])
    rt = torch.einsum(eq, *[p[1] for p in pairs])
    # with three or more operands onion may take a cheaper order than PyTorch's left to right (PyTorch
    # does the same with opt_einsum installed); the result is then another permutation of the same values
    _same(ro, rt, rtol=1e-10, atol=1e-10, strides=len(shapes) <= 2)
    go = onion.autograd.grad(ro.sum(), [p[0] for p in pairs])
    gt = torch.autograd.grad(rt.sum(), [p[1] for p in pairs])
    for a, b in zip(go, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)


def test_einsum_sublist_and_list_forms():
    a, ta = _pair((3, 4))
    b, tb = _pair((4, 5), seed=1)
    _same(onion.einsum(a, [0, 1], b, [1, 2], [0, 2]), torch.einsum(ta, [0, 1], tb, [1, 2], [0, 2]))
    _same(onion.einsum("ij,jk", [a, b]), torch.einsum("ij,jk", [ta, tb]))


def test_einsum_path_choice_cheaper_than_left_to_right():
    """A chain whose left-to-right order builds a 50x50x50 product; the path found avoids it."""
    from onion.aten.native.contractions import _einsum_path, _left_to_right_cost
    shapes = ((50, 1, 1, 2), (1, 1, 50, 2), (1, 2, 50, 1))     # 'ae,ce,cd' in a common layout
    assert _left_to_right_cost(shapes) > 50 * 50 * 2
    path = _einsum_path("ae,ce,cd->ad", ((50, 2), (50, 2), (50, 2)))
    assert path == (1, 2, 0, 1)


EINSUM_ERRORS = [
    ("ij,jk", [(3, 4)]), ("ij", [(3, 4), (4, 5)]), ("ijk", [(3, 4)]), ("ij->k", [(3, 4)]),
    ("i.j", [(3, 4)]), ("ij->ii", [(3, 4)]), ("ii->i", [(3, 4)]), ("i1", [(3, 4)]),
    ("ij,jk->ik", [(3, 4), (5, 6)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_ERRORS, ids=[f"{c[0]}-{len(c[1])}" for c in EINSUM_ERRORS])
def test_einsum_errors_match_torch(eq, shapes):
    pairs = [_pair(s, seed=i) for i, s in enumerate(shapes)]
    _same_error(lambda: onion.einsum(eq, *[p[0] for p in pairs]), lambda: torch.einsum(eq, *[p[1] for p in pairs]))


@pytest.mark.parametrize("dims", [2, 1, 0, ([1, 0], [0, 1]), ([0], [2])])
def test_tensordot_matches_torch(dims):
    a, ta = _pair((3, 4, 2))
    b, tb = _pair((4, 3, 5) if dims != ([0], [2]) else (2, 2, 3), seed=1)
    if dims == 2:
        b, tb = _pair((4, 2, 5), seed=1)
    elif dims == 1:
        b, tb = _pair((2, 5), seed=1)
    _same(onion.tensordot(a, b, dims), torch.tensordot(ta, tb, dims))


def test_tensordot_errors_match_torch():
    a, ta = _pair((3, 4))
    b, tb = _pair((5, 3), seed=1)
    _same_error(lambda: onion.tensordot(a, b, ([1], [0])), lambda: torch.tensordot(ta, tb, ([1], [0])))
    _same_error(lambda: onion.tensordot(a, b, -1), lambda: torch.tensordot(ta, tb, -1))
    _same_error(lambda: onion.tensordot(a, b, ([1, 0], [0])), lambda: torch.tensordot(ta, tb, ([1, 0], [0])))


# ----------------------------------------------------------------------------- decompositions
def _spd(n, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    s = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return onion.tensor(s), torch.tensor(s)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family_matches_torch(upper):
    a, ta = _spd(4, (2,))
    for t in (a, ta):
        t.requires_grad_(True)
    L = onion.cholesky(a, upper=upper)
    tL = torch.cholesky(ta, upper=upper)
    _same(L, tL)
    b, tb = _pair((2, 4, 3), seed=3)
    _same(onion.cholesky_solve(b, L, upper), torch.cholesky_solve(tb, tL, upper))
    _same(onion.cholesky_inverse(L[0], upper), torch.cholesky_inverse(tL[0], upper))
    go = onion.autograd.grad(onion.cholesky_solve(b, L, upper).sum(), [a])
    gt = torch.autograd.grad(torch.cholesky_solve(tb, tL, upper).sum(), [ta])
    _same(list(go), list(gt))


def test_cholesky_not_positive_definite_is_linalg_error():
    bad = [[1.0, 2.0], [2.0, 1.0]]
    with pytest.raises(onion.linalg.LinAlgError) as e:
        onion.cholesky(onion.tensor(bad))
    with pytest.raises(torch.linalg.LinAlgError) as et:
        torch.cholesky(torch.tensor(bad))
    assert str(e.value) == str(et.value)
    assert isinstance(e.value, RuntimeError)
    both = [[[1.0, 0.0], [0.0, 1.0]], bad]
    with pytest.raises(onion.linalg.LinAlgError) as e:
        onion.cholesky(onion.tensor(both))
    with pytest.raises(torch.linalg.LinAlgError) as et:
        torch.cholesky(torch.tensor(both))
    assert str(e.value) == str(et.value)
    _same_error(lambda: onion.cholesky(onion.ones(2, 3)), lambda: torch.cholesky(torch.ones(2, 3)))
    _same_error(lambda: onion.cholesky(onion.ones(3)), lambda: torch.cholesky(torch.ones(3)))
    _same_error(lambda: onion.cholesky_inverse(onion.tensor([[0.0, 0.0], [0.0, 1.0]])),
                lambda: torch.cholesky_inverse(torch.tensor([[0.0, 0.0], [0.0, 1.0]])))


def test_triangular_solve_matches_torch():
    a, ta = _pair((2, 3, 3), fn=lambda x: np.triu(x) + 3 * np.eye(3))
    b, tb = _pair((3, 2), seed=1)
    for upper, transpose, unit in [(True, False, False), (False, True, False), (True, True, True)]:
        _same(onion.triangular_solve(b, a, upper, transpose, unit),
              torch.triangular_solve(tb, ta, upper, transpose, unit))
    _same_error(lambda: onion.triangular_solve(b, onion.ones(2, 3)), lambda: torch.triangular_solve(tb, torch.ones(2, 3)))
    _same_error(lambda: onion.triangular_solve(onion.ones(2, 2), a), lambda: torch.triangular_solve(torch.ones(2, 2), ta))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_qr_svd_lu_match_torch(shape):
    a, ta = _pair(shape, seed=4)
    for some in (True, False):
        _same(onion.qr(a, some), torch.qr(ta, some))
        # singular vectors are unique up to sign (and a full basis's extra vectors not at all): compare the
        # singular values, the layouts and the reconstruction
        ro, rt = onion.svd(a, some), torch.svd(ta, some)
        _same(ro[1], rt[1])
        for x, y in zip(ro, rt):
            assert tuple(x.shape) == tuple(y.shape) and x.stride() == y.stride()
        k = min(shape[-2:])
        u, s_, v = (x.numpy() for x in ro)
        np.testing.assert_allclose((u[..., :k] * s_[..., None, :]) @ np.swapaxes(v[..., :k], -1, -2), a.numpy(),
                                   atol=1e-10)
    _same(onion.svd(a, compute_uv=False), torch.svd(ta, compute_uv=False))
    _same(onion.linalg.qr(a, "r")[1], torch.linalg.qr(ta, "r")[1])
    LU, piv = onion.lu(a)
    tLU, tpiv = torch.lu(ta)
    _same(LU, tLU)
    assert piv.tolist() == tpiv.tolist()
    _same(onion.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv))
    _same(onion.pinverse(a), torch.pinverse(ta))
    a.requires_grad_(True)
    ta.requires_grad_(True)
    Q, R = onion.qr(a)
    tQ, tR = torch.qr(ta)
    if shape[-2] >= shape[-1]:
        go = onion.autograd.grad([Q, R], [a], [onion.ones_like(Q), onion.ones_like(R)])
        gt = torch.autograd.grad([tQ, tR], [ta], [torch.ones_like(tQ), torch.ones_like(tR)])
        _same(list(go), list(gt))
    U, S, V = onion.svd(a)
    tU, tS, tV = torch.svd(ta)
    go = onion.autograd.grad(S.sum() + (U[..., 0] * U[..., 0]).sum(), [a])
    gt = torch.autograd.grad(tS.sum() + (tU[..., 0] * tU[..., 0]).sum(), [ta])
    np.testing.assert_allclose(go[0].numpy(), gt[0].numpy(), rtol=1e-7, atol=1e-7)


def test_determinants_exponential_geqrf_ormqr_match_torch():
    a, ta = _pair((2, 3, 3), seed=5)
    for t in (a, ta):
        t.requires_grad_(True)
    _same(onion.logdet(a), torch.logdet(ta))
    _same(onion.linalg.slogdet(a), torch.linalg.slogdet(ta))
    _same(onion.matrix_exp(a), torch.matrix_exp(ta), strides=False)
    go = onion.autograd.grad(onion.matrix_exp(a).sum() + onion.linalg.slogdet(a)[1].sum(), [a])
    gt = torch.autograd.grad(torch.matrix_exp(ta).sum() + torch.linalg.slogdet(ta)[1].sum(), [ta])
    _same(list(go), list(gt))
    g, tg = _pair((4, 3), seed=6)
    _same(onion.geqrf(g), torch.geqrf(tg))
    c, tc = _pair((4, 2), seed=7)
    qr, tau = onion.geqrf(g)
    tqr, ttau = torch.geqrf(tg)
    for left, transpose in [(True, False), (True, True)]:
        _same(onion.ormqr(qr, tau, c, left, transpose), torch.ormqr(tqr, ttau, tc, left, transpose))
    _same_error(lambda: onion.logdet(onion.ones(2, 3)), lambda: torch.logdet(torch.ones(2, 3)))
    _same_error(lambda: onion.qr(onion.ones(3)), lambda: torch.qr(torch.ones(3)))
    _same_error(lambda: onion.svd(onion.ones(3)), lambda: torch.svd(torch.ones(3)))
    _same_error(lambda: onion.matrix_exp(onion.ones(2, 2, dtype=onion.int64)),
                lambda: torch.matrix_exp(torch.ones(2, 2, dtype=torch.int64)))


def test_lu_solve_and_meta_shapes():
    a, ta = _pair((2, 4, 4), seed=8)
    b, tb = _pair((2, 4, 3), seed=9)
    LU, piv = onion.lu(a)
    tLU, tpiv = torch.lu(ta)
    _same(onion.lu_solve(b, LU, piv), torch.lu_solve(tb, tLU, tpiv))
    # Meta results have the geometry of the CPU ones
    m = onion.empty((2, 5, 3), device="meta")
    tm = torch.zeros((2, 5, 3))
    for fo, ft in [(lambda x: onion.qr(x), lambda x: torch.qr(x)), (lambda x: onion.svd(x), lambda x: torch.svd(x)),
                   (lambda x: onion.linalg.qr(x, "complete"), lambda x: torch.linalg.qr(x, "complete"))]:
        ro, rt = fo(m), ft(tm)
        for x, y in zip(ro, rt):
            assert tuple(x.shape) == tuple(y.shape) and x.stride() == y.stride()


def test_lowrank_recovers_an_exact_low_rank_matrix_as_torch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 3)) @ rng.standard_normal((3, 5))
    U, S, V = onion.svd_lowrank(onion.tensor(a), q=3)
    tU, tS, tV = torch.svd_lowrank(torch.tensor(a), q=3)
    np.testing.assert_allclose(S.numpy(), tS.numpy(), atol=1e-10)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, a, atol=1e-10)
    _, S, _ = onion.pca_lowrank(onion.tensor(a), q=3)
    _, tS, _ = torch.pca_lowrank(torch.tensor(a), q=3)
    np.testing.assert_allclose(S.numpy(), tS.numpy(), atol=1e-10)


def test_stft_istft_round_trip_matches_torch():
    x, tx = _pair((2, 64), seed=11)
    w = onion.tensor(np.hanning(16))
    tw = torch.tensor(np.hanning(16))
    for kw in ({"center": True}, {"center": False, "normalized": True}, {"onesided": False}):
        so = onion.stft(x, 16, hop_length=4, window=w, return_complex=True, **kw)
        st = torch.stft(tx, 16, hop_length=4, window=tw, return_complex=True, **kw)
        _same(so, st)
    so = onion.stft(x, 16, hop_length=4, window=w, return_complex=True)
    st = torch.stft(tx, 16, hop_length=4, window=tw, return_complex=True)
    _same(onion.istft(so, 16, hop_length=4, window=w, length=64), torch.istft(st, 16, hop_length=4, window=tw, length=64))
    _same(onion.stft(x, 16, return_complex=False, window=w), torch.stft(tx, 16, return_complex=False, window=tw))
    _same_error(lambda: onion.stft(x, 16), lambda: torch.stft(tx, 16))
