"""The Dask backend (the ``dask`` device on PrivateUse2): laziness, in-place operators and views
(onion/backends/dask.py's design), autograd, whole-array operators, device mixing, clusters.

Values are compared with the CPU device (whose own tests compare it with PyTorch) or with worked values.
"""
import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("dask.array")

import dask  # noqa: E402
import dask.array as da  # noqa: E402

import onion  # noqa: E402
import onion.dask  # noqa: E402

DASK = onion.device("dask")


from .dask_fallback import dask_fallback  # noqa: E402,F401 (autouse: the module's own fallback)


def d(values, dtype=onion.float32):
    return onion.tensor(values, dtype=dtype).to("dask")


@pytest.fixture(autouse=True)
def _local_scheduler():
    """Each test on Dask's synchronous scheduler (fast, deterministic), unless it sets a cluster itself."""
    with dask.config.set(scheduler="sync"), onion.dask.use_cluster(None):
        yield


# --- the device, factories, transfers -------------------------------------------------------------------
def test_tensors_on_the_dask_device_are_chunked_dask_arrays_on_privateuse2():
    a = onion.ones(2, 3, device="dask")
    assert a.device == DASK and a.dtype is onion.float32
    assert isinstance(a._impl._array, da.Array)
    assert str(onion._C._dispatch_key_set(a)) == ("DispatchKeySet(PrivateUse2, ADInplaceOrView, "
                                                  "AutogradPrivateUse2)")
    b = onion.arange(6.0, device="dask").reshape(2, 3)
    assert (a + b * 2).to("cpu").tolist() == [[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]]
    assert onion.dask.is_available()


def test_chunks_are_automatic_and_settable():
    with onion.dask.chunk_size(4):
        x = onion.zeros(10, 6, device="dask")
        assert x._impl._array.chunks == ((4, 4, 2), (4, 2))
        assert onion.arange(10.0).to("dask")._impl._array.chunks == ((4, 4, 2),)
    onion.dask.set_chunk_size((5, 3))
    try:
        assert onion.empty(10, 6, device="dask")._impl._array.chunks == ((5, 5), (3, 3))
    finally:
        onion.dask.set_chunk_size(None)
    assert onion.dask.get_chunk_size() == "auto"
    assert onion.zeros(10, 6, device="dask")._impl._array.chunks == ((10,), (6,))   # small: one chunk


def test_moving_to_dask_copies_the_cpu_values():
    c = onion.arange(4.0)
    x = c.to("dask")
    c.add_(10)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x.to("cpu").device == onion.device("cpu")


# --- laziness ----------------------------------------------------------------------------------------------
class _CountingScheduler:
    """A synchronous scheduler that counts the computations asked of it."""

    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


def test_nothing_is_computed_until_a_value_is_needed():
    s = _CountingScheduler()
    with dask.config.set(scheduler=s):
        x = onion.arange(12.0, device="dask").reshape(3, 4)
        y = (x * 2 + 1).sum(0)
        z = y.exp().t() if y.dim() == 2 else y.exp()
        x.add_(1)
        assert s.calls == 0
        assert y.tolist() == [27.0, 33.0, 39.0, 45.0]
        assert s.calls == 1
        assert y.sum().item() == 144.0
        with pytest.raises(TypeError, match="can.t convert dask device type tensor to numpy"):
            y.numpy()          # as for every device but the CPU (PyTorch)
        assert isinstance(y.numpy(force=True), np.ndarray) and s.calls == 3
        assert "device='dask'" in repr(z) and s.calls == 4
        y.to("cpu")
        assert s.calls == 5
        a, b = onion.dask.compute(y, x)
        assert s.calls == 6 and a.device.type == "cpu" and b.tolist()[0] == [1.0, 2.0, 3.0, 4.0]


def test_persist_keeps_values_and_the_tensors():
    x = onion.arange(6.0, device="dask") * 3
    w = onion.ones(3, device="dask", requires_grad=True)
    assert onion.dask.persist(x) is x
    assert len(x._impl._array.dask) == x._impl._array.npartitions      # the graph is the values now
    assert x.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]
    assert onion.dask.persist(w) is w and w.requires_grad


# --- in-place operators and views ---------------------------------------------------------------------------
def test_in_place_operators_rebind_the_array_and_bump_the_version():
    x = onion.arange(4.0, device="dask")
    arr = x._impl._array
    name = arr.name
    x.mul_(2).add_(1)
    assert x._version == 2
    assert x._impl._array.name != name
    assert x.tolist() == [1.0, 3.0, 5.0, 7.0]
    x.zero_()
    assert x.tolist() == [0.0] * 4 and x._version == 3
    x[1] = 5.0
    assert x.tolist() == [0.0, 5.0, 0.0, 0.0]


def test_a_write_through_a_view_is_seen_in_the_base_and_other_views():
    x = onion.arange(12.0, device="dask").reshape(3, 4)
    c = onion.arange(12.0).reshape(3, 4)
    row, col, t, flat = x[1], x[:, 2], x.t(), x.view(12)
    crow, ccol, ct, cflat = c[1], c[:, 2], c.t(), c.view(12)
    for tensor, (r, cl, tt, fl) in ((x, (row, col, t, flat)), (c, (crow, ccol, ct, cflat))):
        r.add_(100)
        tt[3, 0] = -1.0
        fl[11] = 42.0
        cl.mul_(2)
    assert x.tolist() == c.tolist()
    for v, cv in ((row, crow), (col, ccol), (t, ct), (flat, cflat)):
        assert v.tolist() == cv.tolist()
        assert v._version == x._version == cv._version
        assert v._base is x._base


def test_a_write_to_the_base_is_seen_by_its_views():
    x = onion.zeros(4, 6, device="dask")
    c = onion.zeros(4, 6)
    views = [lambda t: t[1:3, ::2], lambda t: t.t()[2], lambda t: t.reshape(2, 12), lambda t: t.view(24)[5:9],
             lambda t: t.unsqueeze(0).permute(2, 0, 1), lambda t: t[:, 1:].t()[1:4, ::3]]
    vs, cs = [f(x) for f in views], [f(c) for f in views]
    for t in (x, c):
        t.copy_(onion.arange(24.0).reshape(4, 6) if t is c else onion.arange(24.0).reshape(4, 6).to("dask"))
        t[2].fill_(-7.0)
    for v, cv in zip(vs, cs):
        assert v.shape == cv.shape and v.stride() == cv.stride() and v.tolist() == cv.tolist()


def test_views_of_views_write_through_to_the_root():
    c = onion.arange(24.0).reshape(2, 3, 4)
    x = c.to("dask")
    for t in (c, x):
        v = t.permute(2, 0, 1)[1:3]          # sizes (2, 2, 3), strides (1, 12, 4), offset 1
        w = v.select(2, 1)
        w.sub_(50)
        v[0, 1, 2] = 9.0
    assert x.tolist() == c.tolist()


def test_a_non_contiguous_view_of_a_view_that_no_index_gives():
    """``view(6, 4).t()`` of a (4, 6) tensor: a gather by flat index, and a scatter to write it back."""
    c = onion.arange(24.0).reshape(4, 6)
    x = c.to("dask")
    vc, vx = c.view(6, 4).t(), x.view(6, 4).t()
    vc[1].mul_(-1)
    vx[1].mul_(-1)
    assert x.tolist() == c.tolist() and vx.tolist() == vc.tolist()


def test_writing_into_an_expanded_view_is_refused():
    x = onion.zeros(3, device="dask")
    e = x.expand(2, 3)
    assert e.tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.add_(1)


def test_detach_shares_the_data():
    x = onion.arange(3.0, device="dask")
    y = x.detach()
    y.add_(1)
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_in_place_training_step():
    """``w -= lr * w.grad`` under no_grad and ``grad.zero_()``, as on the CPU device."""
    results = []
    for dev in ("cpu", "dask"):
        x = onion.arange(8.0).reshape(4, 2).to(dev) / 8
        y = onion.tensor([[1.0], [2.0], [3.0], [4.0]]).to(dev)
        w = onion.zeros(2, 1, device=dev, requires_grad=True)
        for _ in range(3):
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            with onion.no_grad():
                w -= 0.5 * w.grad
            w.grad.zero_()
        results.append((w.tolist(), w.grad.tolist(), w._version))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    assert results[0][1:] == results[1][1:]


def test_autograd_through_in_place_writes_to_views():
    """In-place ops on views of a tensor that then requires grad (CopySlices), as on the CPU device."""
    res = []
    for dev in ("cpu", "dask"):
        w = onion.arange(1.0, 4.0).to(dev).requires_grad_()
        x = onion.zeros(2, 3, device=dev)
        x[1].add_(w * 2)
        x.t()[0].mul_(w[:2])
        (x * x).sum().backward()
        res.append((x.tolist(), w.grad.tolist()))
    assert res[0] == res[1] == ([[0.0, 0.0, 0.0], [4.0, 4.0, 6.0]], [32.0, 32.0, 24.0])


def test_an_in_place_change_of_a_saved_tensor_is_caught_by_autograd():
    w = onion.ones(3, device="dask", requires_grad=True)
    y = w * 2
    z = (y * y).sum()
    with onion.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


# --- autograd: a linear-regression fit on a chunked data set ------------------------------------------------
def test_linear_regression_fit_gives_the_cpu_result():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5)).astype(np.float32)
    true_w = np.arange(1, 6, dtype=np.float32)[:, None]
    Y = X @ true_w + 0.1 * rng.standard_normal((200, 1)).astype(np.float32)
    fits = {}
    for dev in ("cpu", "dask"):
        with onion.dask.chunk_size((50, 5)):
            Xt, Yt = onion.from_numpy(X).to(dev), onion.from_numpy(Y).to(dev)
        if dev == "dask":
            assert Xt._impl._array.numblocks == (4, 1)
        w = onion.zeros(5, 1, device=dev, requires_grad=True)
        b = onion.zeros(1, device=dev, requires_grad=True)
        for _ in range(20):
            loss = ((Xt @ w + b - Yt) ** 2).mean()
            gw, gb = onion.autograd.grad(loss, [w, b])
            with onion.no_grad():
                w -= 0.1 * gw
                b -= 0.1 * gb
        fits[dev] = (w.detach().numpy(force=True), b.detach().numpy(force=True), loss.item())
        if dev == "dask":
            assert isinstance(gw._impl._array, da.Array)         # the gradients are Dask graphs too
    for a, b in zip(fits["cpu"], fits["dask"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fits["dask"][0][:, 0], true_w[:, 0], atol=0.3)


# --- operators over the whole array ------------------------------------------------------------------------
def test_sort_unique_nonzero_follow_dask_and_match_cpu():
    c = onion.tensor([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, -1.0]])
    x = c.to("dask")
    for desc in (False, True):
        for dim in (0, 1, -1):
            cv, ci = onion.sort(c, dim=dim, descending=desc, stable=True)
            xv, xi = onion.sort(x, dim=dim, descending=desc, stable=True)
            assert xv.tolist() == cv.tolist() and xi.tolist() == ci.tolist()
    for kw in ({}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True}):
        cu, xu = onion.unique(c, **kw), onion.unique(x, **kw)
        cu, xu = (cu, xu) if isinstance(cu, tuple) else ((cu,), (xu,))
        assert [t.tolist() for t in xu] == [t.tolist() for t in cu]
    assert onion.nonzero(x).tolist() == onion.nonzero(c).tolist()
    assert onion.nonzero(x).shape == (7, 2)


def test_an_operator_without_a_dask_kernel_names_itself_and_the_backend():
    x = onion.arange(6.0, device="dask")
    with pytest.raises(RuntimeError, match=r"^aten::kthvalue: the dask backend \(PrivateUse2\) has no kernel"):
        onion.kthvalue(x, 2)


# --- random -------------------------------------------------------------------------------------------------
def test_random_fills_are_drawn_chunk_by_chunk_and_seeded():
    onion.dask.manual_seed(3)
    with onion.dask.chunk_size(50):
        a = onion.randn(200, 4, device="dask")
        u = onion.rand(100, device="dask")
        n = onion.empty(100, device="dask").normal_(2.0, 0.5)
    assert a._impl._array.numblocks == (4, 1)
    onion.dask.manual_seed(3)
    with onion.dask.chunk_size(50):
        assert onion.randn(200, 4, device="dask").tolist() == a.tolist()
    av, uv, nv = a.numpy(force=True), u.numpy(force=True), n.numpy(force=True)
    assert av.dtype == np.float32 and abs(av.mean()) < 0.2 and 0.8 < av.std() < 1.2
    assert uv.min() >= 0 and uv.max() < 1
    assert abs(nv.mean() - 2.0) < 0.2
    with pytest.raises(RuntimeError, match="Expected a 'dask' device type for generator but found 'cpu'"):
        onion.randn(3, device="dask", generator=onion.Generator())


# --- devices ------------------------------------------------------------------------------------------------
def test_mixing_dask_and_cpu_tensors_is_pytorchs_device_mismatch():
    a = onion.ones(2, 3, device="dask")
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device, but found at least two "
                                           "devices, dask and cpu!$"):
        a + onion.ones(2, 3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        onion.ones(2, 3) @ onion.ones(3, 2, device="dask")
    out = onion.full((2, 3), 7.0)
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device, but found at least two "
                                           "devices, cpu and dask!$"):
        onion.add(a, a, out=out)
    assert out.tolist() == [[7.0] * 3] * 2 and out._version == 0
    assert (a + onion.tensor(1.0)).tolist() == [[2.0] * 3] * 2      # CPU scalars may join


# --- clusters -----------------------------------------------------------------------------------------------
def test_a_cluster_computes_and_a_closed_one_is_a_clear_error():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        with onion.dask.use_cluster(client, timeout=30) as c:
            assert onion.dask.client() is c is client
            x = onion.arange(10.0, device="dask")
            assert (x * 2).sum().item() == 90.0
            y = (x + 1).sum()
            with onion.dask.use_cluster(cluster.scheduler_address):       # an address: onion's own client
                own = onion.dask.client()
                assert own is not client and own.status == "running"
                assert (x - 1).sum().item() == 35.0
            assert own.status == "closed" and onion.dask.client() is client
            client.close()
            cluster.close()
            with pytest.raises(RuntimeError, match=r"dask backend: the dask.distributed cluster .* is not running"):
                y.item()
        assert onion.dask.client() is None
        assert y.item() == 55.0          # the local scheduler again
    finally:
        client.close()
        cluster.close()


def test_a_cluster_that_does_not_answer_times_out_with_a_clear_error():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        import time

        def slow(b):
            time.sleep(1.5)
            return b
        x = onion.arange(4.0, device="dask")
        x._impl._array = x._impl._array.map_blocks(slow, dtype=np.float32)
        with onion.dask.use_cluster(client, timeout=0.2):
            with pytest.raises(RuntimeError, match="did not complete the computation"):
                x.sum().item()
