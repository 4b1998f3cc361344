"""The last operators of issue 8 (cov, corrcoef, gradient, hash_tensor, softmax backward, ...) against PyTorch:
the error texts, weights and overloads the OpInfo samples do not reach."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import onion  # noqa: E402

pytestmark = pytest.mark.oracle


def _pair(a):
    a = np.asarray(a)
    return onion.tensor(a), torch.tensor(a)


def _same(ro, rt, rtol=1e-7, atol=1e-7):
    if isinstance(rt, (tuple, list)):
        assert isinstance(ro, (tuple, list)) and len(ro) == len(rt)
        for a, b in zip(ro, rt):
            _same(a, b, rtol, atol)
        return
    assert str(ro.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert tuple(ro.shape) == tuple(rt.shape)
    np.testing.assert_allclose(ro.numpy(), rt.numpy(), rtol=rtol, atol=atol, equal_nan=True)


def _same_error(fo, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)) as eo:
        fo()
    assert str(eo.value) == str(et.value).split("\n")[0]


# ---- cov / corrcoef --------------------------------------------------------------------------------
def test_cov_worked_value():
    xo = onion.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    c = onion.cov(xo)                     # both rows vary by 1 per step, in opposite directions
    np.testing.assert_allclose(c.numpy(), [[1.0, -1.0], [-1.0, 1.0]])


@pytest.mark.parametrize("kwargs", [
    dict(), dict(correction=0), dict(correction=2),
    dict(fweights=[1, 2, 3, 1]), dict(aweights=[0.5, 1.0, 2.0, 0.25]),
    dict(fweights=[1, 2, 3, 1], aweights=[0.5, 1.0, 2.0, 0.25], correction=0),
    dict(fweights=[1, 2, 3, 1], aweights=[0.5, 1.0, 2.0, 0.25]),
])
@pytest.mark.parametrize("dtype", ["int64", "float32", "complex128"])
def test_cov_weights(kwargs, dtype):
    a = (np.arange(12).reshape(3, 4) ** 2 % 7).astype(dtype)
    xo, xt = _pair(a)
    ko = {k: onion.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
    kt = {k: torch.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
    _same(onion.cov(xo, **ko), torch.cov(xt, **kt), rtol=1e-5)
    _same(xo.cov(**ko), xt.cov(**kt), rtol=1e-5)


def test_cov_degrees_of_freedom_warning():
    xo, xt = _pair(np.ones((2, 3)))
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        rt = torch.cov(xt, correction=3)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        ro = onion.cov(xo, correction=3)
    assert wt
    _same(ro, rt)


@pytest.mark.parametrize("make", [
    lambda m: m.cov(m.zeros(2, 3, 4)),
    lambda m: m.cov(m.ones(3, dtype=m.bool)),
    lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1.0, 2.0, 3.0])),
    lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([[1, 2, 3]])),
    lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1, 2])),
    lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1, -2, 3])),
    lambda m: m.cov(m.ones(2, 3), aweights=m.tensor([1, 2, 3])),
    lambda m: m.cov(m.ones(2, 3), aweights=m.tensor([1.0, -2.0, 3.0])),
    lambda m: m.cov(m.ones(2, 3), aweights=m.tensor([0.0, 0.0, 0.0])),
    lambda m: m.corrcoef(m.zeros(2, 3, 4)),
])
def test_cov_errors(make):
    _same_error(lambda: make(onion), lambda: make(torch))


@pytest.mark.parametrize("a", [
    [[1.0, 2.0, 4.0], [3.0, 1.0, 0.0], [1.0, 1.0, 1.0]],     # a constant row: nan
    [1.0, 2.0, 4.0],                                           # one variable: 1
    [[1 + 2j, 2 - 1j, 4j], [3.0, 1j, 0.5]],
])
def test_corrcoef(a):
    xo, xt = _pair(a)
    _same(onion.corrcoef(xo), torch.corrcoef(xt))


def test_cov_grad():
    a = np.random.default_rng(0).standard_normal((3, 5))
    aw = np.array([0.5, 1.0, 2.0, 0.25, 1.0])
    xo, xt = onion.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    wo, wt = onion.tensor(aw, requires_grad=True), torch.tensor(aw, requires_grad=True)
    onion.cov(xo, aweights=wo).sum().backward()
    torch.cov(xt, aweights=wt).sum().backward()
    _same(xo.grad, xt.grad)
    _same(wo.grad, wt.grad)


# ---- gradient ------------------------------------------------------------------------------------
def test_gradient_worked_value():
    # f(x) = x**2 at x = 0..4: central differences 2x inside; edge_order=2 is exact for a quadratic
    (g,) = onion.gradient(onion.tensor([0.0, 1.0, 4.0, 9.0, 16.0]), edge_order=2)
    np.testing.assert_allclose(g.numpy(), [0.0, 2.0, 4.0, 6.0, 8.0])


_GRADIENT_CALLS = [
    dict(), dict(spacing=2), dict(spacing=2.0, dim=1), dict(spacing=[1.5, 2.0]), dict(spacing=(2.0,), dim=0),
    dict(dim=[0, 1]), dict(dim=-1, edge_order=2), dict(spacing=2, dim=[1]), dict(spacing=[0.5], dim=[-1]),
    dict(spacing="coords0", dim=0, edge_order=2), dict(spacing="coords01"), dict(spacing="coords01", edge_order=2),
    dict(spacing=[1.0], dim=(1, 0)), dict(spacing=[1.0, 2.0, 3.0]), dict(edge_order=3), dict(dim=(1, 1)),
    dict(dim=3), dict(spacing="coords2d", dim=0),
]


@pytest.mark.parametrize("kwargs", _GRADIENT_CALLS)
@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_gradient_overloads(kwargs, dtype):
    def call(m):
        t = m.tensor(np.array([[1, 2, 4, 8], [10, 20, 40, 80], [3, 3, 3, 3]], dtype=dtype))
        coords = {"coords0": (m.tensor([0.0, 1, 3]),),
                  "coords01": [m.tensor([0.0, 1, 3]), m.tensor([0, 1, 3, 4])],
                  "coords2d": [m.tensor([[0.0, 1, 3]])]}
        kw = dict(kwargs)
        if isinstance(kw.get("spacing"), str):
            kw["spacing"] = coords[kw["spacing"]]
        return m.gradient(t, **kw)
    try:
        rt = call(torch)
    except Exception:
        _same_error(lambda: call(onion), lambda: call(torch))
        return
    _same(call(onion), rt)


@pytest.mark.parametrize("make", [
    lambda m: m.gradient(m.tensor([1, 2, 3], dtype=m.uint8)),
    lambda m: m.gradient(m.tensor([[1.0], [2.0]])),
    lambda m: m.gradient(m.tensor([[1.0, 2.0], [3.0, 4.0]]), edge_order=2),
])
def test_gradient_errors(make):
    _same_error(lambda: make(onion), lambda: make(torch))


def test_gradient_grad():
    a = np.random.default_rng(1).standard_normal((4, 5))
    c = np.array([0.0, 0.5, 1.5, 3.0, 3.5])
    xo, xt = onion.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    co, ct = onion.tensor(c, requires_grad=True), torch.tensor(c, requires_grad=True)
    go = onion.gradient(xo, spacing=[co], dim=1, edge_order=2)[0]
    gt = torch.gradient(xt, spacing=[ct], dim=1, edge_order=2)[0]
    w = np.random.default_rng(2).standard_normal((4, 5))
    (go * onion.tensor(w)).sum().backward()
    (gt * torch.tensor(w)).sum().backward()
    _same(xo.grad, xt.grad)
    _same(co.grad, ct.grad)


# ---- _softmax_backward_data ----------------------------------------------------------------------
_F = ("float16", "float32", "float64", "bfloat16", "int64")


@pytest.mark.parametrize("grad_dtype,output_dtype,input_dtype,dim,shape", [
    ("float32", "float32", "float32", 1, (2, 3)), ("float64", "float64", "float64", 0, (2, 3)),
    ("float32", "float32", "float16", 1, (2, 3)),        # Half result for a Float grad: the CPU kernel refuses
    ("float16", "float16", "float32", 1, (2, 3)),        # grad's dtype wins
    ("float64", "float64", "float32", -1, (2, 3)), ("float32", "float64", "float32", 1, (2, 3)),
    ("float64", "float32", "float64", 0, (2, 3)), ("int64", "int64", "int64", 0, (2, 3)),
    ("int64", "int64", "int64", 1, (2, 3)), ("int64", "int64", "int64", 0, (0, 3)),
    ("bfloat16", "bfloat16", "float32", 1, (2, 3)), ("float32", "float32", "float32", 0, ()),
])
def test_softmax_backward_data_dtypes(grad_dtype, output_dtype, input_dtype, dim, shape):
    rng = np.random.default_rng(3)
    g, o = rng.standard_normal(shape), rng.random(shape)

    def call(m, device="cpu"):
        dt = lambda n: getattr(m, n)  # noqa: E731
        return m.ops.aten._softmax_backward_data(m.tensor(g, device=device).to(dt(grad_dtype)),
                                                 m.tensor(o, device=device).to(dt(output_dtype)), dim,
                                                 dt(input_dtype))
    try:
        rt = call(torch)
    except Exception:
        _same_error(lambda: call(onion), lambda: call(torch))
        return
    ro = call(onion)
    _same(ro.float(), rt.float(), rtol=1e-2 if grad_dtype in ("float16", "bfloat16") else 1e-6)
    assert str(ro.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    # on Meta, PyTorch's registration gives input_dtype without the CPU kernel's checks
    meta, tmeta = call(onion, "meta"), call(torch, "meta")
    assert tuple(meta.shape) == tuple(tmeta.shape) and str(meta.dtype)[6:] == str(tmeta.dtype)[6:]


def test_softmax_backward_data_out_and_errors():
    rng = np.random.default_rng(4)
    g, o = rng.standard_normal((3, 4)), rng.random((3, 4))
    outs = []
    for m in (onion, torch):
        out = m.empty(0, dtype=m.float64)
        r = m.ops.aten._softmax_backward_data.out(m.tensor(g), m.tensor(o), 0, m.float64, grad_input=out)
        assert r is out
        outs.append(out)
    _same(*outs)
    for make in (lambda m: m.ops.aten._softmax_backward_data(m.ones(2, 3), m.ones(3, 2), 1, m.float32),
                 lambda m: m.ops.aten._softmax_backward_data.out(m.ones(2, 3), m.ones(2, 3), 1, m.float32,
                                                                 grad_input=m.empty(0, dtype=m.float64)),
                 lambda m: m.ops.aten._softmax_backward_data(m.ones(2, 3), m.ones(2, 3), 2, m.float32)):
        _same_error(lambda: make(onion), lambda: make(torch))


# ---- ormqr's derivative ------------------------------------------------------------------------------
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("dtype,a_shape,k", [("float64", (5, 3), 3), ("complex128", (2, 4, 4), 4),
                                             ("float64", (2, 5), 2)])
def test_ormqr_grad(left, transpose, dtype, a_shape, k):
    rng = np.random.default_rng(5)

    def rand(shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if dtype == "complex128" else x
    a, tau = rand(a_shape), rand(a_shape[:-2] + (k,))
    m = a_shape[-2]
    c = rand(a_shape[:-2] + ((m, 4) if left else (4, m)))
    gout = rand(c.shape)
    res = []
    for lib in (onion, torch):
        ts = [lib.tensor(x, requires_grad=True) for x in (a, tau, c)]
        r = lib.ormqr(*ts, left=left, transpose=transpose)
        res.append(lib.autograd.grad(r, ts, lib.tensor(gout)))
    _same(res[0], res[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda m: m.ormqr(m.ones(5, 3), m.ones(2), m.ones(5, 2)),
    lambda m: m.ormqr(m.ones(2, 5), m.ones(3), m.ones(2, 5)),
    lambda m: m.ormqr(m.ones(5, 2), m.ones(1), m.ones(3, 5), left=False),
])
def test_ormqr_tau_length(make):
    _same_error(lambda: make(onion), lambda: make(torch))


def test_ormqr_double_backward():
    rng = np.random.default_rng(6)
    a, tau, c = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((4, 2))
    res = []
    for lib in (onion, torch):
        ts = [lib.tensor(x, requires_grad=True) for x in (a, tau, c)]
        r = lib.ormqr(*ts)
        g = lib.autograd.grad((r * r).sum(), ts, create_graph=True)
        res.append(lib.autograd.grad(sum((x * x).sum() for x in g), ts))
    _same(res[0], res[1], rtol=1e-8, atol=1e-8)


# ---- stft / istft derivatives ---------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [
    dict(n_fft=8, hop_length=2, center=True, pad_mode="reflect", return_complex=True),
    dict(n_fft=8, hop_length=3, center=True, pad_mode="constant", return_complex=False, normalized=True),
    dict(n_fft=8, hop_length=2, center=True, pad_mode="replicate", return_complex=True, window="hann6"),
    dict(n_fft=7, hop_length=2, center=True, pad_mode="circular", return_complex=True, onesided=False),
    dict(n_fft=8, hop_length=4, center=False, return_complex=True, window="hann8"),
    dict(n_fft=8, center=False, return_complex=True, window="hann8", signal="complex"),
])
@pytest.mark.parametrize("batched", [False, True])
def test_stft_grad(kwargs, batched):
    rng = np.random.default_rng(7)
    kwargs = dict(kwargs)
    signal = kwargs.pop("signal", "real")
    x = rng.standard_normal((2, 20) if batched else (20,))
    if signal == "complex":
        x = x + 1j * rng.standard_normal(x.shape)
    window = kwargs.pop("window", None)
    res = []
    for lib in (onion, torch):
        xs = lib.tensor(x, requires_grad=True)
        ins = [xs]
        kw = dict(kwargs)
        if window is not None:
            n = int(window[4:])
            w = lib.tensor(np.hanning(n + 2)[1:-1], requires_grad=True)
            ins.append(w)
            kw.update(window=w, win_length=n)
        r = lib.stft(xs, **kw)
        g = lib.tensor(np.random.default_rng(8).standard_normal(tuple(r.shape)) * (1 if r.is_complex() else 1.0))
        if r.is_complex():
            g = lib.complex(g, g * 0.5)
        res.append(lib.autograd.grad(r, ins, g))
    _same(res[0], res[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kwargs", [
    dict(n_fft=8, hop_length=2, center=True),
    dict(n_fft=8, hop_length=2, center=True, window="hann8", length=40, normalized=True),
    dict(n_fft=8, hop_length=2, center=True, window="hann6", onesided=False),
    dict(n_fft=8, hop_length=2, center=True, window="hann8c", return_complex=True, onesided=False, length=20),
])
@pytest.mark.parametrize("batched", [False, True])
def test_istft_grad(kwargs, batched):
    rng = np.random.default_rng(9)
    kwargs = dict(kwargs)
    window = kwargs.pop("window", None)
    n_freq = 8 if kwargs.get("onesided") is False else 5
    shape = ((2,) if batched else ()) + (n_freq, 12)
    spec = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    res = []
    for lib in (onion, torch):
        s = lib.tensor(spec, requires_grad=True)
        ins = [s]
        kw = dict(kwargs)
        if window is not None:
            n = int(window[4:].rstrip("c"))
            w = np.hanning(n + 2)[1:-1] + 0.1
            if window.endswith("c"):
                w = w + 0.05j * np.arange(n)
            wt = lib.tensor(w, requires_grad=True)
            ins.append(wt)
            kw.update(window=wt, win_length=n)
        r = lib.istft(s, **kw)
        g = lib.tensor(np.random.default_rng(10).standard_normal(tuple(r.shape)))
        if r.is_complex():
            g = lib.complex(g, g * 0.25)
        res.append((r, lib.autograd.grad(r, ins, g)))
    _same(res[0][0].detach(), res[1][0].detach(), rtol=1e-9, atol=1e-9)
    _same(res[0][1], res[1][1], rtol=1e-8, atol=1e-8)


def test_stft_double_backward():
    x = np.random.default_rng(11).standard_normal(16)
    res = []
    for lib in (onion, torch):
        xs = lib.tensor(x, requires_grad=True)
        w = lib.tensor(np.hanning(8), requires_grad=True)
        r = lib.stft(xs, 8, hop_length=2, window=w, return_complex=True)
        (g,) = lib.autograd.grad(r.abs().pow(2).sum(), [xs], create_graph=True)
        res.append(lib.autograd.grad((g * g).sum(), [xs, w]))
    _same(res[0], res[1], rtol=1e-8, atol=1e-8)


# ---- _batch_norm_with_update ---------------------------------------------------------------------
@pytest.mark.parametrize("shape,channels_last,affine", [((4, 3), False, True), ((2, 3, 5), False, False),
                                                        ((2, 3, 4, 5), True, True)])
def test_batch_norm_with_update(shape, channels_last, affine):
    rng = np.random.default_rng(12)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    res, stats = [], []
    for lib in (onion, torch):
        xt = lib.tensor(x, requires_grad=True)
        if channels_last:
            xt = xt.detach().to(memory_format=lib.channels_last).requires_grad_(True)
        wt, bt = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        args = (wt, bt) if affine else (None, None)
        out = lib.ops.aten._batch_norm_with_update(xt, *args, rm, rv, 0.3, 1e-3)
        assert out[3].shape == (0,) and not out[1].requires_grad
        g = gg = ()
        if affine:      # (PyTorch's backward of this op needs a weight)
            loss = (out[0] * out[0] * lib.tensor(np.arange(x.size).reshape(shape))).sum()
            g = lib.autograd.grad(loss, [xt, wt, bt], create_graph=True)
            gg = lib.autograd.grad(sum((t * t).sum() for t in g), [xt])
        res.append((out[0].detach(), out[1], out[2], *g, *gg))
        stats.append((rm, rv, tuple(out[0].stride())))
    _same([t.detach() for t in res[0]], [t.detach() for t in res[1]], rtol=1e-9, atol=1e-9)
    _same(stats[0][:2], stats[1][:2])
    assert stats[0][2] == stats[1][2]


def test_batch_norm_with_update_out():
    x = np.random.default_rng(13).standard_normal((4, 3, 2))
    res = []
    for lib in (onion, torch):
        outs = [lib.empty(0, dtype=lib.float64) for _ in range(3)] + [lib.empty(0, dtype=lib.uint8)]
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        r = lib.ops.aten._batch_norm_with_update.out(lib.tensor(x), None, None, rm, rv, 0.1, 1e-5, out=outs[0],
                                                     save_mean=outs[1], save_invstd=outs[2], reserve=outs[3])
        assert all(a is b for a, b in zip(r, outs))
        res.append(outs[:3] + [rm, rv])
    _same(res[0], res[1])
