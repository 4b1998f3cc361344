"""FakeTensorMode and FakeTensor against PyTorch 2.13's: results' geometry and devices, the exceptions (types and
texts) of data-dependent operators, device mixing and real inputs, from_tensor, autograd on fake tensors, the
fake-implementation registry, and the memory a model's forward+backward takes under the mode."""
from __future__ import annotations

import gc
import tracemalloc

import pytest

import onion
from conftest import torch
from onion._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException, FakeTensor,
                                           FakeTensorDeviceMismatchError, FakeTensorMode,
                                           UnsupportedOperatorException)
from onion.modes.python_dispatch import TorchDispatchMode

pytestmark = pytest.mark.oracle


def _torch_fake():
    from torch._subclasses import fake_tensor
    return fake_tensor


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the exception is compared with PyTorch's
        return "err", e


def _describe(r):
    """What both libraries' outcomes are compared by: class names, geometry, device, exception text."""
    kind, v = r
    if kind == "err":
        return ("err", type(v).__name__, str(v))
    if isinstance(v, (tuple, list)):
        return ("ok", type(v).__name__, tuple(_describe(("ok", x)) for x in v))
    if hasattr(v, "shape") and hasattr(v, "stride"):
        return ("ok", type(v).__name__, tuple(v.shape), str(v.dtype).split(".")[-1], str(v.device), v.stride())
    return ("ok", type(v).__name__, v)


def _both(scenario, **mode_kw):
    """The scenario under each library's FakeTensorMode; ``scenario(lib, mode)`` builds its inputs itself."""
    tmode = _torch_fake().FakeTensorMode(**mode_kw)
    omode = FakeTensorMode(**mode_kw)
    with tmode:
        rt = _outcome(lambda: scenario(torch, tmode))
    with omode:
        ro = _outcome(lambda: scenario(onion, omode))
    return _describe(ro), _describe(rt)


SCENARIOS = {
    "ones": lambda lib, m: lib.ones(2, 3),
    "randn": lambda lib, m: lib.randn(3),
    "zeros_like": lambda lib, m: lib.zeros_like(lib.ones(2, 3).t()),
    "arange": lambda lib, m: lib.arange(5),
    "full_meta": lambda lib, m: lib.full((2,), 3.0, device="meta"),
    "empty_strided": lambda lib, m: lib.empty_strided((2, 3), (1, 2)),
    "meta_plus_scalar": lambda lib, m: lib.ones(2, device="meta") + 1,
    "mm": lambda lib, m: lib.mm(lib.ones(4, 3), lib.ones(3, 5)),
    "transpose_view": lambda lib, m: lib.ones(2, 3).t(),
    "expand": lambda lib, m: lib.ones(3, 1).expand(3, 4),
    "sum_dim": lambda lib, m: lib.ones(2, 3, 4).sum(1, keepdim=True),
    "max_dim": lambda lib, m: lib.max(lib.ones(2, 3), 1),
    "to_dtype": lambda lib, m: lib.ones(2, 3).to(lib.float64),
    "to_meta": lambda lib, m: lib.ones(2, 3).to("meta"),
    "meta_to_cpu": lambda lib, m: lib.ones(2, 3, device="meta").to("cpu"),
    "empty_like_meta": lambda lib, m: lib.empty_like(lib.ones(2, 3), device="meta"),
    "copy_into_meta": lambda lib, m: lib.ones(2, device="meta").copy_(lib.ones(2)),
    "cuda_factory": lambda lib, m: lib.ones(2, device="cuda"),
    "cuda_plus_cpu_0dim": lambda lib, m: lib.ones(2, device="cuda") + lib.ones(()),
    "meta_plus_cpu_0dim": lambda lib, m: lib.ones(2, device="meta") + lib.ones(()),
    "cat_float_int": lambda lib, m: lib.cat([lib.ones(2), lib.ones(2, dtype=lib.int64)]),
    "index_put_mask": lambda lib, m: lib.ones(2, 3).index_put_((lib.ones(2, 3) > 0,), lib.ones(())),
    "histc": lambda lib, m: lib.histc(lib.ones(6)),
    "any": lambda lib, m: lib.ones(2, 3).any(),
    # devices that do not mix
    "cpu_plus_meta": lambda lib, m: lib.ones(2, device="meta") + lib.ones(2),
    "meta_plus_cpu_1elem": lambda lib, m: lib.ones(2, device="meta") + lib.ones(1),
    "mm_meta_cpu": lambda lib, m: lib.mm(lib.ones(2, 2, device="meta"), lib.ones(2, 2)),
    "cat_devices": lambda lib, m: lib.cat([lib.ones(2), lib.ones(2, device="meta")]),
    "cuda_plus_cpu": lambda lib, m: lib.ones(2, device="cuda") + lib.ones(2),
    # data-dependent operators
    "nonzero": lambda lib, m: lib.nonzero(lib.ones(2, 3)),
    "argwhere": lambda lib, m: lib.argwhere(lib.ones(2, 3)),
    "unique": lambda lib, m: lib.unique(lib.ones(4)),
    "unique_consecutive": lambda lib, m: lib.unique_consecutive(lib.ones(4)),
    "masked_select": lambda lib, m: lib.masked_select(lib.ones(2, 3), lib.ones(2, 3) > 0),
    "bool_mask_index": lambda lib, m: lib.ones(2, 3)[lib.ones(2, 3) > 0],
    "repeat_interleave": lambda lib, m: lib.repeat_interleave(lib.ones(3, dtype=lib.int64)),
    "bincount": lambda lib, m: lib.bincount(lib.ones(3, dtype=lib.int64)),
    "item": lambda lib, m: lib.ones(2, 3).sum().item(),
    "tolist": lambda lib, m: lib.ones(2).tolist(),
    "bool": lambda lib, m: bool(lib.ones(())),
    "equal": lambda lib, m: lib.equal(lib.ones(2), lib.ones(2)),
    "allclose": lambda lib, m: lib.allclose(lib.ones(2), lib.ones(2)),
    # operators without a Meta kernel: their CPU kernel on zeros (PyTorch's fallback kernels)
    "geqrf": lambda lib, m: lib.geqrf(lib.randn(2, 5, 3)),
    "geqrf_empty_batch": lambda lib, m: lib.geqrf(lib.randn(0, 2, 5)),
    "histogram": lambda lib, m: lib.histogram(lib.randn(10), 5, weight=lib.rand(10), density=True),
    "histogram_bins_tensor": lambda lib, m: lib.histogram(lib.randn(10), lib.tensor([0., 1., 3.])),
    "histogramdd": lambda lib, m: lib.histogramdd(lib.randn(10, 2), [3, 4]),
    "histogramdd_bin_tensors": lambda lib, m: lib.histogramdd(lib.randn(10, 2), [lib.ones(3), lib.ones(2)]),
    # out= through the fallback: the fake outs come back as they were (PyTorch's fallback does not resize them)
    "geqrf_out": lambda lib, m: lib.geqrf(lib.randn(4, 3), out=(lib.empty(0), lib.empty(0))),
    "histogram_out": lambda lib, m: lib.histogram(lib.randn(10), 4, out=(lib.empty(0), lib.empty(0))),
    # composites that read no values under the mode
    "quantile": lambda lib, m: lib.quantile(lib.randn(4, 10), lib.tensor([0.2, 0.5]), dim=1, keepdim=True),
    "quantile_scalar": lambda lib, m: lib.quantile(lib.randn(4, 10), 0.3, dim=0),
    "nanquantile": lambda lib, m: lib.nanquantile(lib.randn(10), lib.tensor(0.5)),
    "unravel_index": lambda lib, m: lib.unravel_index(lib.tensor([1, 5, 7]), (3, 4)),
    "unravel_index_0dim": lambda lib, m: lib.unravel_index(lib.tensor(5), (3, 4)),
    "tensor_split_0dim": lambda lib, m: lib.tensor_split(lib.ones(10), lib.ones((), dtype=lib.int64)),
    "istft": lambda lib, m: lib.istft(lib.ones(5, 33, dtype=lib.complex64), 8, window=lib.ones(8)),
    # one-element tensors made from Python data under the mode are constants: their values are kept
    "constant_item": lambda lib, m: (lib.tensor(3) * 2 + 1).item(),
    "constant_tensor_split": lambda lib, m: lib.tensor_split(lib.ones(10), lib.tensor(3)),
    "constant_nonzero": lambda lib, m: lib.nonzero(lib.tensor(3)),
    "constant_equal": lambda lib, m: lib.equal(lib.tensor(3), lib.tensor(3)),
    "constant_bool": lambda lib, m: bool(lib.tensor(2.5) > 2),
    "constant_arange": lambda lib, m: lib.arange(lib.tensor(4)),
    "two_elements_no_constant": lambda lib, m: lib.tensor([1.0, 2.0]).sum().item(),
    "constant_plus_fake": lambda lib, m: (lib.tensor(3.0) + lib.ones(())).item(),
    "constant_written_by_fake": lambda lib, m: lib.tensor(3.0).add_(lib.ones(())).item(),
    "constant_written_by_constant": lambda lib, m: lib.tensor(3.0).add_(lib.tensor(1.0)).item(),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_matches_torch(name):
    ro, rt = _both(SCENARIOS[name])
    assert ro == rt


def test_results_are_fake_tensors_holding_no_data():
    with FakeTensorMode() as mode:
        x = onion.ones(1000, 1000)
        y = x @ x
    assert type(x) is FakeTensor and type(y) is FakeTensor and isinstance(y, onion.Tensor)
    assert y.fake_mode is mode and y.fake_device == onion.device("cpu")
    assert y._impl._array.__class__.__name__ == "MetaArray"
    assert repr(y) == "FakeTensor(..., size=(1000, 1000))"
    with pytest.raises(RuntimeError, match=r"\.numpy\(\) is not supported for tensor subclasses\."):
        y.numpy()


def test_dispatch_keys_as_torch():
    with _torch_fake().FakeTensorMode():
        kt = str(torch._C._dispatch_keys(torch.ones(2)))
    with FakeTensorMode():
        ko = str(onion._C._dispatch_keys(onion.ones(2)))
    assert ko == kt == "DispatchKeySet(CPU, Python, ADInplaceOrView, AutogradCPU, AutocastCPU, PythonTLSSnapshot)"


def test_privateuse1_device():
    """A fake tensor on the PrivateUse1 device needs no backend: the Meta kernels compute, the device is reported."""
    with FakeTensorMode():
        p = onion.ones(2, 3, device="privateuseone")
        assert (type(p), p.device, p.shape) == (FakeTensor, onion.device("privateuseone"), (2, 3))
        q = (p * onion.ones(())).sum(0)        # a CPU 0-dim tensor defers to the other device
        assert q.device == onion.device("privateuseone") and q.shape == (3,)
        assert p.to("cpu").device == onion.device("cpu")
        with pytest.raises(FakeTensorDeviceMismatchError, match="found at least two devices, privateuseone and cpu!"):
            p + onion.ones(2, 3)
        assert "PrivateUse1" in str(onion._C._dispatch_keys(p))


def test_repr_as_torch():
    tf = _torch_fake()
    cases = [lambda lib: lib.ones(2, dtype=lib.float64), lambda lib: lib.ones(2, dtype=lib.int64, device="meta"),
             lambda lib: lib.ones(2, requires_grad=True), lambda lib: lib.ones(2, requires_grad=True) * 2]
    for case in cases:
        with tf.FakeTensorMode():
            rt = repr(case(torch))
        with FakeTensorMode():
            ro = repr(case(onion))
        assert ro == rt.replace("torch.", "onion.")


def test_inplace_out_and_views_keep_identity_and_aliasing():
    with FakeTensorMode():
        y = onion.ones(3)
        assert y.add_(1) is y
        out = onion.empty(0)
        r = onion.add(onion.ones(2, 3), 1, out=out)
        assert r is out and out.shape == (2, 3) and type(out) is FakeTensor
        x = onion.ones(2, 3)
        v = x.t()
        assert v._base is x and v.stride() == (1, 3) and v.untyped_storage() is x.untyped_storage()
        v.mul_(2)
        assert x._version == v._version == 1


def test_exceptions_are_pytorchs_classes():
    tf = _torch_fake()
    assert issubclass(DynamicOutputShapeException, RuntimeError) and issubclass(DataDependentOutputException,
                                                                                 RuntimeError)
    assert [c.__name__ for c in DynamicOutputShapeException.__mro__[:2]] == \
           [c.__name__ for c in tf.DynamicOutputShapeException.__mro__[:2]]
    with FakeTensorMode():
        with pytest.raises(DynamicOutputShapeException) as e:
            onion.nonzero(onion.ones(3))
    assert e.value.func is onion.ops.aten.nonzero.default
    with FakeTensorMode():
        with pytest.raises(FakeTensorDeviceMismatchError) as e:
            onion.ones(2, device="meta") + onion.ones(2)
    assert isinstance(e.value, RuntimeError) and e.value.func is onion.ops.aten.add.Tensor
    assert (str(e.value.common_device), str(e.value.device)) == ("meta", "cpu")


def test_real_inputs_refused_or_converted_as_torch():
    def mixed(lib, m, real):
        return m, lib.ones(2, 3) + real

    for make_real in (lambda lib: lib.ones(2, 3), lambda lib: lib.tensor(2.0), lambda lib: lib.ones(())):
        real_t, real_o = make_real(torch), make_real(onion)
        for allow in (False, True):
            tmode = _torch_fake().FakeTensorMode(allow_non_fake_inputs=allow)
            omode = FakeTensorMode(allow_non_fake_inputs=allow)
            with tmode:
                rt = _outcome(lambda: tmode.from_tensor(torch.ones(2, 3)) * real_t)
            with omode:
                ro = _outcome(lambda: omode.from_tensor(onion.ones(2, 3)) * real_o)
            assert _describe(ro) == _describe(rt)


def test_fake_tensors_of_two_modes_refused():
    m1, m2 = FakeTensorMode(), FakeTensorMode()
    a, b = m1.from_tensor(onion.ones(2)), m2.from_tensor(onion.ones(2))
    with m1:
        with pytest.raises(AssertionError, match=r"^Mixing fake modes NYI x\.fake_mode=.* vs self="):
            a + b


def test_metadata_mutation_of_real_tensor_refused():
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    real = onion.ones(2, 3)
    with mode:
        with pytest.raises(AssertionError, match="Can't call metadata mutating ops on non-Fake Tensor inputs"):
            real.resize_(4, 5) if "inplace_view" in onion.ops.aten.resize_.default.tags else \
                onion.ops.aten.as_strided_.default(real, (3,), (1,))
    assert real.shape == (2, 3)


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, 3),
    lambda lib: lib.ones(4, 5).t(),
    lambda lib: lib.ones(4, 5)[1:, ::2],
    lambda lib: lib.ones(3, dtype=lib.int64, device="meta"),
    lambda lib: lib.ones(2, 2, requires_grad=True),
    lambda lib: lib.ones(()),
    lambda lib: lib.ones(0, 3),
], ids=["plain", "transposed", "sliced", "meta", "requires_grad", "0dim", "empty"])
def test_from_tensor_as_torch(make):
    tmode, omode = _torch_fake().FakeTensorMode(), FakeTensorMode()
    ft, fo = tmode.from_tensor(make(torch)), omode.from_tensor(make(onion))
    assert _describe(("ok", fo)) == _describe(("ok", ft))[:1] + ("FakeTensor",) + _describe(("ok", ft))[2:]
    assert (fo.storage_offset(), fo.requires_grad, fo.is_leaf, fo.is_contiguous()) == \
           (ft.storage_offset(), ft.requires_grad, ft.is_leaf, ft.is_contiguous())


def test_from_tensor_memo_and_identity():
    mode = FakeTensorMode()
    real = onion.ones(2)
    f = mode.from_tensor(real)
    assert mode.from_tensor(real) is f                     # memoized per real tensor (as PyTorch)
    assert mode.from_tensor(onion.ones(2)) is not f
    assert mode.from_tensor(f) is f                        # a fake of this mode comes back as it is
    other = FakeTensorMode().from_tensor(f)
    assert other is not f and type(other) is FakeTensor and other.shape == (2,)


def test_from_tensor_keeps_views_as_torch():
    def run(lib, mode):
        base = lib.ones(4, 5)
        v, s = base.t(), base[1:, 2:]
        fv, fs, fb = mode.from_tensor(v), mode.from_tensor(s), mode.from_tensor(base)
        with mode:
            fv.mul_(2)
        return (fv._base is fb, fs._base is fb, fs.storage_offset(), fv.stride(), fv._version, fb._version,
                fs.untyped_storage().nbytes())

    assert run(onion, FakeTensorMode()) == run(torch, _torch_fake().FakeTensorMode())


def test_fake_tensor_constructor_as_torch():
    tf = _torch_fake()
    tmode, omode = tf.FakeTensorMode(), FakeTensorMode()
    ft = tf.FakeTensor(tmode, torch.empty(2, 3, device="meta").t(), torch.device("cpu"))
    fo = FakeTensor(omode, onion.empty(2, 3, device="meta").t(), onion.device("cpu"))
    assert _describe(("ok", fo)) == _describe(("ok", ft)) and fo.fake_mode is omode
    with omode:
        assert type(fo + 1) is FakeTensor
    with pytest.raises(AssertionError, match="elem.device.type must be 'meta', got cpu"):
        FakeTensor(omode, onion.ones(2), onion.device("cpu"))


def test_autograd_on_fake_tensors():
    mode = FakeTensorMode()
    w = mode.from_tensor(onion.ones(3, 3, requires_grad=True))
    x = mode.from_tensor(onion.ones(4, 3))
    with mode:
        y = (x @ w).relu().sum()
        assert type(y.grad_fn).__name__ == "SumBackward0"
        y.backward()
        (gx,) = onion.autograd.grad((x @ w).sum(), [w])
    assert type(w.grad) is FakeTensor and w.grad.shape == (3, 3) and w.grad.device == onion.device("cpu")
    assert type(gx) is FakeTensor and gx.shape == (3, 3)
    assert w.is_leaf and w.grad.grad_fn is None


def test_autograd_on_fake_tensors_as_torch():
    def run(lib, mode):
        w = mode.from_tensor(lib.ones(3, 2, requires_grad=True))
        with mode:
            loss = (lib.ones(5, 3) @ w).sigmoid().mean()
            loss.backward()
        return type(loss.grad_fn).__name__, tuple(w.grad.shape), w.grad.stride(), str(w.grad.device)

    assert run(onion, FakeTensorMode()) == run(torch, _torch_fake().FakeTensorMode())


def test_modes_nest_with_fake_mode():
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with FakeTensorMode():
        with Recorder():        # the recorder sees each call once, then the fake mode runs it
            y = onion.ones(2, 3).sum()
    assert type(y) is FakeTensor and seen == ["aten.ones.default", "aten.sum.default"]
    seen.clear()
    with Recorder():
        with FakeTensorMode():  # the fake mode runs the Meta kernels where no other mode sees them
            y = onion.ones(2, 3).sum()
    assert type(y) is FakeTensor and seen == []


def test_operator_without_meta_kernel_is_unsupported():
    lib = onion.library.Library("fake_test_nometa", "DEF")
    try:
        lib.define("double_it(Tensor x) -> Tensor")
        lib.impl("double_it", lambda x: x * 2, "CPU")
        with FakeTensorMode():
            with pytest.raises(UnsupportedOperatorException) as e:
                onion.ops.fake_test_nometa.double_it(onion.ones(3))
        assert str(e.value) == "fake_test_nometa.double_it.default"
    finally:
        lib._destroy()


def test_fallback_kernels_as_torch():
    """Without a Meta kernel an aten operator runs its CPU kernel on zeros; with ``allow_fallback_kernels=False``
    (or for another namespace) it is unsupported; a Meta tensor itself gets no fallback."""
    for kw in ({}, {"allow_fallback_kernels": False}):
        _torch_fake().FakeTensorMode.cache_clear()    # PyTorch's dispatch cache would answer from the first run
        ro, rt = _both(lambda lib, m: lib.geqrf(lib.ones(3, 2)), **kw)
        assert ro == rt
    rt = _outcome(lambda: torch.geqrf(torch.ones(3, 2, device="meta")))
    ro = _outcome(lambda: onion.geqrf(onion.ones(3, 2, device="meta")))
    assert ro[0] == rt[0] == "err" and type(ro[1]) is type(rt[1]) is NotImplementedError


def test_constants_as_torch():
    """Which fakes keep a constant, after in-place writes, a view that may write it, autograd."""
    def run(lib, ft):
        out = []
        with ft.FakeTensorMode():
            d = lib.tensor(2.0)
            r = d.add_(1)
            out.append((r is d, d.constant is not None, d.item()))
            f = lib.tensor(5.0)
            f.expand(3)            # a result of several elements shares the constant's memory: it is dropped
            out.append(f.constant is None)
            x = lib.tensor(1.5, requires_grad=True)
            y = x * 2
            (g,) = lib.autograd.grad(y, x)
            out.append((type(y.grad_fn).__name__, y.item(), g.constant is not None))
            out.append(lib.tensor([1.0, 2.0]).constant is None)
        return out
    assert run(torch, _torch_fake()) == run(onion, onion._subclasses.fake_tensor)


def test_quantile_on_fake_tensors_keeps_q_in_the_graph_as_torch():
    def run(lib, ft):
        m = ft.FakeTensorMode()
        x = m.from_tensor(lib.randn(4, 10))
        q = m.from_tensor(lib.tensor([0.2, 0.5], requires_grad=True))
        with m:
            r = lib.quantile(x, q, dim=1)
            (g,) = lib.autograd.grad(r.sum(), q)
        return tuple(r.shape), r.requires_grad, type(g).__name__, tuple(g.shape)
    assert run(torch, _torch_fake()) == run(onion, onion._subclasses.fake_tensor)


def test_tensor_split_reads_no_fake_indices_as_torch():
    def split(lib, m):
        return lib.tensor_split(lib.ones(10), lib.tensor([2, 5]))
    ro, rt = _both(split)
    assert ro[:2] == rt[:2] == ("err", "RuntimeError")
    assert ro[2].splitlines()[0] == rt[2].splitlines()[0]


def test_register_fake_is_used_by_the_mode():
    from onion.dispatch.library import FAKE_IMPLS
    lib = onion.library.Library("fake_test_reg", "DEF")
    try:
        lib.define("repeat2(Tensor x) -> Tensor")
        lib.impl("repeat2", lambda x: onion.cat([x, x]), "CPU")

        @onion.library.register_fake("fake_test_reg::repeat2", lib=lib)
        def _(x):
            return x.new_empty((x.shape[0] * 2,) + tuple(x.shape[1:]))

        assert onion.ops.fake_test_reg.repeat2(onion.ones(3, 2)).shape == (6, 2)      # the real kernel
        with FakeTensorMode():
            y = onion.ops.fake_test_reg.repeat2(onion.ones(3, 2))
        assert type(y) is FakeTensor and y.shape == (6, 2)
        lib._register_fake("repeat2", lambda x: x.new_empty((1,)))                    # overrides
        with FakeTensorMode():
            assert onion.ops.fake_test_reg.repeat2(onion.ones(3, 2)).shape == (1,)
        with pytest.raises(RuntimeError, match="operator fake_test_reg::nope does not exist"):
            onion.library.register_fake("fake_test_reg::nope", lambda x: x, lib=lib)
    finally:
        lib._destroy()
    assert "fake_test_reg::repeat2" not in FAKE_IMPLS


def _mlp_step(lib, x, w1, w2, target):
    h = lib.mm(x, w1).relu()
    out = lib.mm(h, w2)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    return loss


def _peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_mlp_forward_backward_memory(capsys):
    """A 2-layer MLP (mm, relu, squared error), forward and backward: under the mode no array memory is taken.

    The real run holds about 4 * (256*1024 + 1024*1024 + 1024*256 + 256*1024 ...) bytes of float32 arrays
    (inputs, activations, gradients: tens of MB); the fake run holds only Python objects."""
    n, d_in, d_hidden, d_out = 256, 1024, 1024, 256

    def real():
        x, target = onion.randn(n, d_in), onion.randn(n, d_out)
        w1 = onion.randn(d_in, d_hidden, requires_grad=True)
        w2 = onion.randn(d_hidden, d_out, requires_grad=True)
        _mlp_step(onion, x, w1, w2, target)
        assert w1.grad.shape == (d_in, d_hidden)

    def fake():
        with FakeTensorMode():
            x, target = onion.randn(n, d_in), onion.randn(n, d_out)
            w1 = onion.randn(d_in, d_hidden, requires_grad=True)
            w2 = onion.randn(d_hidden, d_out, requires_grad=True)
            loss = _mlp_step(onion, x, w1, w2, target)
        assert type(loss) is FakeTensor and type(w1.grad) is FakeTensor and w1.grad.shape == (d_in, d_hidden)

    fake()      # first calls build caches (dispatch tables, generated code): not part of the measure
    real_peak, fake_peak = _peak(real), _peak(fake)
    with capsys.disabled():
        print(f"\nMLP forward+backward tracemalloc peak: real {real_peak / 2**20:.1f} MiB, "
              f"fake {fake_peak / 2**20:.3f} MiB")
    assert real_peak > 8 * 2**20
    assert fake_peak < 0.02 * real_peak


def _has_subclass_dispatch() -> bool:
    try:
        import onion.modes.subclasses  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_subclass_dispatch(), reason="needs the Python key's dispatch to tensor subclasses "
                                                          "(onion.modes.subclasses)")
@pytest.mark.parametrize("name", ["plus_number", "sum_view", "plus_real", "plus_real_0dim", "item", "backward"])
def test_fake_tensors_outside_their_mode_as_torch(name):
    """Outside ``with mode:`` an operator on a fake tensor runs under the tensor's own mode (FakeTensor's
    ``__torch_dispatch__``), with the same refusals."""
    cases = {
        "plus_number": lambda lib, f: f + 1,
        "sum_view": lambda lib, f: f.t().sum(0),
        "plus_real": lambda lib, f: f + lib.ones(2, 3),
        "plus_real_0dim": lambda lib, f: f + lib.tensor(1.0),
        "item": lambda lib, f: f.sum().item(),
        "backward": lambda lib, f: (f.requires_grad_(), (f * 2).sum().backward(), f.grad)[2],
    }
    tmode, omode = _torch_fake().FakeTensorMode(), FakeTensorMode()
    rt = _outcome(lambda: cases[name](torch, tmode.from_tensor(torch.ones(2, 3))))
    ro = _outcome(lambda: cases[name](onion, omode.from_tensor(onion.ones(2, 3))))
    assert _describe(ro) == _describe(rt)
    assert type(onion.ones(2)) is onion.Tensor        # no mode left behind
