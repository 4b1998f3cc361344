"""The CUDA wiring without a GPU: a stand-in ``cuda`` backend whose arrays are NumPy's (fake_cuda.py).

What runs here is what runs on a GPU above the array namespace: the generated register_cuda.py kernels,
``.cuda()``/``.to("cuda")``/``.cpu()``, device checks, autograd on cuda tensors, the CPU fallback for
operators without CUDA kernels, the CUDA random kernels, ``onion.cuda`` and the profiler's device timing.
Values are compared with PyTorch on the CPU.
"""
import warnings

import numpy as np
import pytest

import onion

from .fake_cuda import installed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def cuda():
    with installed() as backend:
        yield backend


def _same(o, t, **kw):
    assert o.device.type == "cuda", o.device
    got = o.cpu()
    assert got.device.type == "cpu"
    assert str(got.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(t.shape)
    np.testing.assert_allclose(got.numpy(), t.numpy(), rtol=kw.get("rtol", 1e-6), atol=kw.get("atol", 1e-6))


def _pair(data, dtype="float32", requires_grad=False):
    arr = np.asarray(data, dtype=dtype)
    o = onion.tensor(arr).cuda()
    t = torch.tensor(arr)
    if requires_grad:
        o.requires_grad_()
        t.requires_grad_()
    return o, t


# --- devices and transfers ---------------------------------------------------------------------------
def test_transfers_keep_values_and_name_the_device(cuda):
    x = onion.arange(6.0).reshape(2, 3)
    for moved, want in ((x.cuda(), "cuda:0"), (x.to("cuda"), "cuda:0"), (x.to("cuda:1"), "cuda:1"),
                        (x.cuda(1), "cuda:1"), (x.to(onion.device("cuda", 0)), "cuda:0")):
        assert str(moved.device) == want and moved.is_cuda and not x.is_cuda
        assert moved.device.index == int(want[-1])
        assert moved.cpu().tolist() == x.tolist()
    c = x.cuda()
    assert c.cuda() is c and c.to("cuda:0") is c              # already there: no copy, as PyTorch
    assert str(onion._C._dispatch_key_set(c)) == \
        "DispatchKeySet(CUDA, ADInplaceOrView, AutogradCUDA, AutocastCUDA)"
    assert repr(c) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='cuda:0')"
    assert onion.zeros(2, device="cuda").device == onion.device("cuda", 0)
    assert onion.empty(3, 2, device="cuda:1").stride() == (2, 1)
    assert onion.ones(2, device="cuda").to(onion.float64).dtype is onion.float64
    assert onion.ones(2, device="cuda").half().cpu().tolist() == [1.0, 1.0]
    for make in (lambda: onion.ones(2, device="cuda", dtype=onion.bfloat16), lambda: onion.ones(2).bfloat16().cuda(),
                 lambda: onion.ones(2, device="cuda").bfloat16()):
        with pytest.raises(TypeError, match="^onion's CUDA backend has no bfloat16: CuPy arrays cannot hold it"):
            make()


def test_device_mismatch_is_refused_in_pytorchs_words(cuda):
    a = onion.ones(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, but found at least two "
                                           r"devices, cuda:0 and cpu!$"):
        a + onion.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, but found at least two "
                                           r"devices, cuda:0 and cuda:1!$"):
        a * onion.ones(2, 3, device="cuda:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        onion.mm(a, onion.ones(3, 2))
    assert (a + onion.tensor(2.0)).cpu().tolist() == [[3.0] * 3] * 2          # a CPU 0-dim tensor may join
    out = onion.zeros(2, 3)
    with pytest.raises(RuntimeError, match="cpu and cuda:0!$"):
        onion.add(a, a, out=out)
    assert out.tolist() == [[0.0] * 3] * 2


# --- the generated CUDA kernels ------------------------------------------------------------------------
def test_elementwise_kernels_match_torch(cuda):
    (a, ta), (b, tb) = _pair([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]]), _pair([[1.0, 2.0, -3.0], [0.5, 4.0, 1.5]])
    _same(onion.add(a, b, alpha=2), torch.add(ta, tb, alpha=2))
    _same(a * b - a / b, ta * tb - ta / tb)
    _same(a.exp().sigmoid(), ta.exp().sigmoid())
    _same(onion.erf(a), torch.erf(ta))                         # scipy.special on CPU, cupyx.scipy.special on GPU
    _same(onion.lgamma(b), torch.lgamma(tb), rtol=1e-5)
    _same(onion.where(a > b, a, b), torch.where(ta > tb, ta, tb))
    _same(a.clamp(-1, 1), ta.clamp(-1, 1))
    (i, ti) = _pair([[1, -2, 3], [7, 0, -9]], "int64")
    _same(i // 2 + i % 3, ti // 2 + ti % 3)
    _same(i + a, ti + ta)                                         # promotion across dtypes on the device
    a2 = a.clone()
    a2.mul_(2).add_(b)
    _same(a2, ta * 2 + tb)


def test_special_functions_come_from_cupyx_scipy_special(cuda):
    """The formulas over ``scipy.special`` on the CPU take ``cupyx.scipy.special`` on CUDA (here: the stand-in's
    module of that name, holding only what CuPy's has)."""
    import sys
    (a, ta) = _pair([[0.3, 1.7, 2.5], [4.0, 0.9, 3.2]])
    (h, th) = _pair([[0.1, -0.4, 0.7]])
    for f, tf in ((onion.erfc, torch.erfc), (onion.digamma, torch.digamma), (onion.i0, torch.i0),
                  (onion.special_i1, torch.special.i1)):
        _same(f(a), tf(ta), rtol=1e-5)
    _same(onion.erfinv(h), torch.erfinv(th), rtol=1e-5)
    _same(onion.igamma(a, a * 0.5 + 1), torch.igamma(ta, ta * 0.5 + 1), rtol=1e-5)
    _same(onion.igammac(a, a * 0.5 + 1), torch.igammac(ta, ta * 0.5 + 1), rtol=1e-5)
    assert sys.modules["cupyx.scipy.special"].__name__ == "cupyx.scipy.special"


def test_reductions_and_matmul_match_torch(cuda):
    rng = np.random.default_rng(0)
    (x, tx), (w, tw) = _pair(rng.standard_normal((4, 5))), _pair(rng.standard_normal((5, 3)))
    _same(x.sum(), tx.sum(), rtol=1e-5)
    _same(x.mean(1), tx.mean(1), rtol=1e-5)
    _same(x.amax(0), tx.amax(0))
    _same(x.argmax(1), tx.argmax(1))
    _same(x.var(0), tx.var(0), rtol=1e-5)
    _same(x.cumsum(1), tx.cumsum(1), rtol=1e-5)
    _same(x.softmax(1), tx.softmax(1), rtol=1e-5)
    _same(x @ w, tx @ tw, rtol=1e-5)
    _same(onion.addmm(w[:1], x, w), torch.addmm(tw[:1], tx, tw), rtol=1e-5)
    (bx, tbx) = _pair(rng.standard_normal((2, 3, 4)))
    _same(onion.bmm(bx, bx.transpose(1, 2)), torch.bmm(tbx, tbx.transpose(1, 2)), rtol=1e-5)


def test_views_and_indexing_match_torch(cuda):
    (x, tx) = _pair(np.arange(24.0).reshape(4, 6))
    _same(x[1:3, ::2], tx[1:3, ::2])
    _same(x.t()[2], tx.t()[2])
    v = x[:, 1]
    assert v._impl._storage is x._impl._storage                   # a view: same device storage
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                              # the CPU fallback's warning (tested below)
        idx, tidx = onion.tensor([2, 0]).cuda(), torch.tensor([2, 0])
        _same(x[idx], tx[tidx])
        _same(x[x > 20], tx[tx > 20])
        _same(x.gather(1, idx.reshape(1, 2).expand(4, 2)), tx.gather(1, tidx.reshape(1, 2).expand(4, 2)))
        vals, order = x.sort(1, descending=True)
        tvals, torder = tx.sort(1, descending=True)
        _same(vals, tvals)
        _same(order, torder)
        y, ty = x.clone(), tx.clone()
        y[idx] = 0.5
        ty[tidx] = 0.5
        _same(y, ty)


@pytest.fixture
def fresh_warnings():
    """The fallback's once-per-operator memory, emptied for the test and restored after."""
    from onion.backends import cpu_fallback
    saved = set(cpu_fallback._WARNED)
    cpu_fallback._WARNED.clear()
    yield
    cpu_fallback._WARNED.clear()
    cpu_fallback._WARNED.update(saved)


def test_cpu_fallback_warns_once_per_operator_and_writes_back(cuda, fresh_warnings):
    (x, tx) = _pair(np.arange(6.0).reshape(2, 3))
    mask, tmask = x > 2, tx > 2
    with pytest.warns(UserWarning, match=r"^The operator 'aten::masked_fill_.Scalar' is not currently supported on "
                                         r"the cuda backend and will fall back to run on the CPU"):
        r = x.masked_fill_(mask, -1.0)
    assert r is x and x.device.type == "cuda" and x._version == 1
    _same(x, tx.masked_fill_(tmask, -1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                              # a second call does not warn again
        x.masked_fill_(mask, -2.0)
    out = onion.empty(0, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onion.masked_select(x, mask, out=out)                       # out= resized and filled on the device
    assert out.device.type == "cuda" and out.cpu().tolist() == [-2.0, -2.0, -2.0]


def test_autograd_on_cuda_matches_torch(cuda):
    rng = np.random.default_rng(1)
    (x, tx) = _pair(rng.standard_normal((8, 4)))
    (w1, tw1), (w2, tw2) = (_pair(rng.standard_normal(s), requires_grad=True) for s in ((4, 16), (16, 1)))
    loss = ((x @ w1).tanh() @ w2).pow(2).mean()
    tloss = ((tx @ tw1).tanh() @ tw2).pow(2).mean()
    loss.backward()
    tloss.backward()
    _same(loss.detach(), tloss.detach(), rtol=1e-5)
    _same(w1.grad, tw1.grad, rtol=1e-4, atol=1e-6)
    _same(w2.grad, tw2.grad, rtol=1e-4, atol=1e-6)
    with onion.no_grad():
        w1 -= 0.1 * w1.grad
    with torch.no_grad():
        tw1 -= 0.1 * tw1.grad
    _same(w1.detach(), tw1.detach(), rtol=1e-5)
    assert w1.grad_fn is None and w1.device.type == "cuda"
    (gx,) = onion.autograd.grad((x.cuda(1).requires_grad_() * 3).sum(), [x.cuda(1).requires_grad_()],
                                allow_unused=True)
    assert gx is None


# --- random numbers ----------------------------------------------------------------------------------
def test_seeded_cuda_draws_repeat_and_have_their_distributions(cuda):
    onion.cuda.manual_seed(7)
    a = onion.rand(1000, device="cuda")
    onion.cuda.manual_seed(7)
    b = onion.rand(1000, device="cuda")
    assert a.device.type == "cuda" and a.cpu().tolist() == b.cpu().tolist()
    assert onion.cuda.initial_seed() == 7
    onion.cuda.manual_seed(8)
    assert onion.rand(1000, device="cuda").cpu().tolist() != a.cpu().tolist()
    av = a.cpu().numpy()
    assert av.dtype == np.float32 and av.min() >= 0 and av.max() < 1 and abs(av.mean() - 0.5) < 0.05
    n = onion.randn(4000, device="cuda", dtype=onion.float64).cpu().numpy()
    assert n.dtype == np.float64 and abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    r = onion.randint(3, 9, (500,), device="cuda").cpu().numpy()
    assert r.dtype == np.int64 and set(r.tolist()) == set(range(3, 9))
    p = onion.randperm(50, device="cuda")
    assert sorted(p.cpu().tolist()) == list(range(50)) and p.dtype is onion.int64
    bern = onion.bernoulli(onion.full((400,), 0.25, device="cuda")).cpu().numpy()
    assert set(bern.tolist()) <= {0.0, 1.0} and 0.15 < bern.mean() < 0.35
    e = onion.empty(2000, device="cuda").exponential_(2.0).cpu().numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.05
    u = onion.empty(300, device="cuda").uniform_(-3, -1).cpu().numpy()
    assert u.min() >= -3 and u.max() < -1
    for dt, top in ((onion.int8, 127), (onion.uint8, 255), (onion.bool, 1), (onion.float32, 1 << 24)):
        v = onion.empty(3000, dtype=dt, device="cuda").random_().cpu().numpy()
        assert v.min() >= 0 and v.max() <= top and v.max() > top // 2
    full = onion.empty(3000, dtype=onion.int64, device="cuda").random_(-(1 << 63), None).cpu().numpy()
    assert full.min() < -(1 << 61) and full.max() > 1 << 61
    ft = onion.empty(500, device="cuda").random_(-5, 5).cpu().tolist()
    assert set(ft) == set(range(-5, 5))
    onion.manual_seed(11)                   # as torch.manual_seed: every CUDA device is seeded too
    assert onion.cuda.initial_seed() == 11
    first = onion.rand(5, device="cuda:1").cpu().tolist()
    onion.manual_seed(11)
    assert onion.rand(5, device="cuda:1").cpu().tolist() == first
    like = onion.randn_like(onion.zeros(2, 3, device="cuda:1"))
    assert like.device == onion.device("cuda", 1) and like.shape == (2, 3)
    d = onion.nn.functional.dropout(onion.ones(1000, device="cuda"), 0.5)
    assert d.device.type == "cuda" and set(d.cpu().unique().tolist()) <= {0.0, 2.0}


def test_cuda_random_kernels_check_as_the_cpu_ones(cuda):
    t = onion.empty(3, device="cuda")
    for call in (lambda x: x.uniform_(2, 1), lambda x: x.normal_(0, -1), lambda x: x.exponential_(-1.0),
                 lambda x: x.bernoulli_(1.5), lambda x: x.random_(5, 2)):
        with pytest.raises(RuntimeError) as got:
            call(t)
        with pytest.raises(RuntimeError) as want:
            call(torch.empty(3))
        assert str(got.value) == str(want.value)
    assert t._version == 0                                          # refused: nothing written
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        t.uniform_(generator=onion.Generator())


# --- onion.cuda --------------------------------------------------------------------------------------
def test_onion_cuda_device_functions(cuda):
    c = onion.cuda
    assert c.is_available() and c.device_count() == 2 and c.is_initialized()
    assert c.current_device() == 0
    c.set_device(1)
    assert c.current_device() == 1
    with c.device(0):
        assert c.current_device() == 0
    assert c.current_device() == 1
    c.set_device("cuda:0")
    with c.device_of(onion.ones(1, device="cuda:1")):
        assert c.current_device() == 1
    with c.device_of(onion.ones(1)):                  # a CPU tensor: no change
        assert c.current_device() == 0
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        c.set_device("cpu")
    c.synchronize()
    c.synchronize(1)
    assert cuda.synchronized[-2:] == [0, 1]
    assert c.get_device_name() == "Fake NumPy GPU" and c.get_device_capability(1) == (9, 0)
    props = c.get_device_properties(0)
    assert props.total_memory == 16 << 30 and "multi_processor_count=4" in repr(props)
    with pytest.raises(AssertionError, match="Invalid device id"):
        c.get_device_properties(5)
    for f in (c.memory_allocated, c.max_memory_allocated, c.memory_reserved, c.max_memory_reserved):
        assert f() == 0 and f(1) == 0
    c.reset_peak_memory_stats()
    c.empty_cache()


def test_streams_and_events(cuda):
    c = onion.cuda
    s = c.Stream()
    assert s.device == onion.device("cuda", 0) and s.query()
    assert c.current_stream() == c.default_stream()
    with c.stream(s):
        assert c.current_stream() == s
    assert c.current_stream() != s
    with c.stream(None):
        pass
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="Both events must be recorded before calculating elapsed time."):
        start.elapsed_time(end)
    start.record()
    (onion.ones(100, device="cuda") * 2).sum()
    end.record(s)
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    untimed = c.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="Both events must be created with argument 'enable_timing=True'."):
        start.elapsed_time(untimed)
    s.wait_event(untimed)
    s.wait_stream(c.default_stream())
    assert isinstance(s.record_event(), c.Event)


def test_profiler_rows_of_cuda_kernels_carry_device_time(cuda):
    x = onion.ones(64, device="cuda")
    with onion.profiler.profile() as prof:
        (x + x).sum()
    kernels = [e for e in prof.events() if e.device_type is onion.autograd.profiler.DeviceType.KERNEL]
    names = [e.name for e in kernels]
    assert names == ["cupy.add <float32>", "cupy.sum_impl <float32>"]
    assert all(e.device_time > 0 and e.self_device_time_total == e.device_time for e in kernels)
    assert [e.op.name for e in kernels] == ["aten::add", "aten::sum"]

