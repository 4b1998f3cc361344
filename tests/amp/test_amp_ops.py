"""GradScaler's operators against torch's on the same inputs: values written in place, found_inf, the scale update,
the checks and their messages, Meta, and GradScaler calling them as PyTorch's does."""
from __future__ import annotations

import numpy as np
import pytest

import onion
from onion.utils._python_dispatch import TorchDispatchMode
from tests.conftest import torch

pytestmark = pytest.mark.oracle

INF, NAN = float("inf"), float("nan")


def _grads(T):
    return [T.tensor([1.0, -2.0, 3.0]), T.tensor([[0.25, 8.0], [4.0, 1e-3]], dtype=T.float64),
            T.tensor([3.0, 4.0, 65504.0], dtype=T.float16), T.tensor([1.0, 2.5], dtype=T.bfloat16)]


def _values(ts):
    return [np.asarray(t.float().tolist()) for t in ts]


@pytest.mark.parametrize("bad", [None, INF, NAN, -INF])
@pytest.mark.parametrize("inv", [0.5, 1.0, 1 / 65536])
def test_unscale_as_torch(bad, inv):
    results = []
    for T in (onion, torch):
        grads = _grads(T)
        if bad is not None:
            grads[1][1, 0] = bad
        found = T.zeros(())
        out = T._amp_foreach_non_finite_check_and_unscale_(grads, found, T.tensor(inv))
        assert out is None
        results.append((_values(grads), float(found), [g.dtype for g in grads]))
    (ov, of, odt), (tv, tf, tdt) = results
    for a, b in zip(ov, tv):
        np.testing.assert_array_equal(a, b)
    assert of == tf == (0.0 if bad is None else 1.0)
    assert [str(d).split(".")[1] for d in odt] == [str(d).split(".")[1] for d in tdt]


def test_unscale_writes_through_views_and_keeps_a_set_flag():
    for T in (onion, torch):
        base = T.tensor([[1.0, 2.0], [3.0, 4.0]])
        found = T.ones(())          # already set by an earlier list: never reset
        T._amp_foreach_non_finite_check_and_unscale_([base.t(), base[0]], found, T.tensor(0.5))
        assert base.tolist() == [[0.25, 0.5], [1.5, 2.0]] and float(found) == 1.0
    v = onion.ones(3)
    version = v._version
    onion._amp_foreach_non_finite_check_and_unscale_([v], onion.zeros(()), onion.tensor(2.0))
    assert v._version == version + 1
    onion._amp_foreach_non_finite_check_and_unscale_([], onion.zeros(2), onion.tensor(2.0))   # nothing to check


def _unscale_bad_inputs(T):
    f = T._amp_foreach_non_finite_check_and_unscale_
    return [
        lambda: f([T.ones(2)], T.zeros(2), T.ones(2)),
        lambda: f([T.ones(2)], T.zeros(2), T.ones((), dtype=T.float64)),
        lambda: f([T.ones(2)], T.zeros(()), T.ones((), dtype=T.float64)),
        lambda: f([T.ones(2)], T.zeros((), dtype=T.float64), T.ones(())),
        lambda: f([T.ones(2, dtype=T.int64)], T.zeros(()), T.ones(())),
        lambda: f([T.ones(2, dtype=T.complex64)], T.zeros(()), T.ones(())),
        lambda: f([T.ones(2, device="meta")], T.zeros(2, device="meta"), T.ones((), device="meta")),
    ]


def _update_bad_inputs(T):
    u = T._amp_update_scale_
    i32 = T.int32
    return [
        lambda: u(T.ones(2, dtype=T.float64), T.zeros(2), T.zeros(2, dtype=T.float64), 2.0, 0.5, 2),
        lambda: u(T.ones(2), T.zeros((), dtype=i32), T.zeros(()), 2.0, 0.5, 2),
        lambda: u(T.ones(()), T.zeros(()), T.zeros(2), 2.0, 0.5, 2),
        lambda: u(T.ones(()), T.zeros((), dtype=T.int64), T.zeros(()), 2.0, 0.5, 2),
        lambda: u(T.ones((), dtype=T.float64), T.zeros((), dtype=i32), T.zeros(()), 2.0, 0.5, 2),
        lambda: u(T.ones(()), T.zeros((), dtype=i32), T.zeros((), dtype=T.float64), 2.0, 0.5, 2),
    ]


@pytest.mark.parametrize("k", range(7))
def test_unscale_bad_input_as_torch(k):
    with pytest.raises(Exception) as te:
        _unscale_bad_inputs(torch)[k]()
    with pytest.raises(type(te.value), match=pytest.importorskip("re").escape(str(te.value))):
        _unscale_bad_inputs(onion)[k]()


def test_unscale_bad_input_modifies_nothing():
    good = onion.tensor([INF, 2.0])
    found = onion.zeros(())
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        onion._amp_foreach_non_finite_check_and_unscale_([good, onion.ones(2, dtype=onion.int64)], found,
                                                         onion.tensor(0.5))
    assert good.tolist() == [INF, 2.0] and float(found) == 0.0


@pytest.mark.parametrize("k", range(6))
def test_update_bad_input_as_torch(k):
    with pytest.raises(Exception) as te:
        _update_bad_inputs(torch)[k]()
    with pytest.raises(type(te.value), match=pytest.importorskip("re").escape(str(te.value))):
        _update_bad_inputs(onion)[k]()


def test_update_scale_sequence_as_torch():
    """A run of clean and bad steps (nan and a non-1 found count included), growth capped at float32's max."""
    steps = [0.0, 0.0, 0.0, 1.0, 0.0, NAN, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0]
    for start, growth, backoff, interval in ((4.0, 2.0, 0.5, 2), (1.0, 3.0, 0.3, 3), (3e38, 2.0, 0.5, 1),
                                             (65536.0, 2.0, 0.125, 1)):
        trace = []
        for T in (onion, torch):
            scale, tracker = T.tensor(start), T.tensor(0, dtype=T.int32)
            seq = []
            for f in steps:
                r = T._amp_update_scale_(scale, tracker, T.tensor(f), growth, backoff, interval)
                assert r is scale
                seq.append((float(scale), int(tracker)))
            trace.append(seq)
        assert trace[0] == trace[1]


def test_meta_kernels():
    g = onion.ones(3, device="meta")
    assert onion._amp_foreach_non_finite_check_and_unscale_([g], onion.zeros((), device="meta"),
                                                            onion.ones((), device="meta")) is None
    s = onion.ones((), device="meta")
    r = onion._amp_update_scale_(s, onion.zeros((), dtype=onion.int32, device="meta"),
                                 onion.zeros((), device="meta"), 2.0, 0.5, 2)
    assert r is s and r.device.type == "meta"
    assert str(onion.ops.aten._amp_update_scale_.default._schema) == \
        str(torch.ops.aten._amp_update_scale_.default._schema)
    assert str(onion.ops.aten._amp_foreach_non_finite_check_and_unscale_.default._schema) == \
        str(torch.ops.aten._amp_foreach_non_finite_check_and_unscale_.default._schema)


def _names_mode(base):
    class Names(base):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func).split(".")[1])
            return func(*args, **(kwargs or {}))
    return Names()


class _SGD:
    """The least an optimizer needs for GradScaler: param_groups and step()."""

    def __init__(self, T, params, lr):
        self.T, self.param_groups = T, [{"params": params}]
        self.lr = lr

    def step(self):
        with self.T.no_grad():
            for p in self.param_groups[0]["params"]:
                p -= self.lr * p.grad

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None


def _scaler_step(T, names_mode):
    rng = np.random.default_rng(0)
    w1 = T.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    w2 = T.tensor(rng.standard_normal((3,)).astype(np.float64), requires_grad=True)
    opt = _SGD(T, [w1, w2], lr=0.1)
    scaler = T.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
    losses = []
    for bad in (False, True, False):
        loss = (w1.sum() * 2 + w2.sum().float()) * (float("inf") if bad else 1.0)
        scaler.scale(loss).backward()
        with names_mode:
            scaler.step(opt)
            scaler.update()
        opt.zero_grad()
        losses.append((scaler.get_scale(), w1.detach().tolist(), w2.detach().tolist()))
    return losses


def test_grad_scaler_calls_the_operators_as_torch():
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
    om, tm = _names_mode(TorchDispatchMode), _names_mode(TorchMode)
    assert _scaler_step(onion, om) == _scaler_step(torch, tm)
    amp = [n for n in om.names if n.startswith("_amp")]
    assert amp == [n for n in tm.names if n.startswith("_amp")]
    # the whole sequence too, but for step()'s ``.item()`` of found_inf (onion's item reads the value without
    # dispatching aten::_local_scalar_dense)
    assert om.names == [n for n in tm.names if n != "_local_scalar_dense"]
    assert amp.count("_amp_update_scale_") == 3
    assert amp.count("_amp_foreach_non_finite_check_and_unscale_") == 6     # float32 and float64 grads, per step
