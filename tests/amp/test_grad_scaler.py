"""GradScaler against torch.amp.GradScaler on the same CPU run: scales, skipped steps, growth and backoff."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import onion
from tests.conftest import torch

pytestmark = pytest.mark.oracle


class SGD:
    """The smallest optimizer GradScaler drives: param_groups and step()."""

    def __init__(self, lib, params, lr):
        self.lib = lib
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.steps = 0

    def step(self):
        self.steps += 1
        with self.lib.no_grad():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is not None:
                        p.sub_(g["lr"] * p.grad)

    def zero_grad(self):
        for g in self.param_groups:
            for p in g["params"]:
                p.grad = None


def _run(lib, data, bad_steps, **kw):
    x, y, w = (lib.tensor(a) for a in data)
    w.requires_grad_(True)
    opt = SGD(lib, [w], 0.01)
    scaler = lib.amp.GradScaler("cpu", **kw)
    trace = []
    for step in range(8):
        xs = x * float("inf") if step in bad_steps else x
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = lib.mm(xs, w)
        loss = ((out.float() - y) ** 2).mean()
        opt.zero_grad()
        scaled = scaler.scale(loss)
        scaled.backward()
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), bool((w.detach() == before).all()), float(scaled.detach()),
                      scaler.state_dict()["_growth_tracker"]))
    return trace, opt.steps, w.detach().numpy().copy(), scaler.state_dict()


def test_grad_scaler_matches_pytorch():
    rng = np.random.default_rng(7)
    data = (rng.standard_normal((8, 16), dtype=np.float32), rng.standard_normal((8, 4), dtype=np.float32),
            (rng.standard_normal((16, 4)) / 4).astype(np.float32))
    kw = dict(init_scale=1024.0, growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    to, so, wo, sdo = _run(onion, data, {3, 4}, **kw)
    tt, st, wt, sdt = _run(torch, data, {3, 4}, **kw)
    assert [(s, skipped, g) for s, skipped, _, g in to] == [(s, skipped, g) for s, skipped, _, g in tt]
    assert [t[0] for t in to] == [1024.0, 2048.0, 2048.0, 512.0, 128.0, 128.0, 256.0, 256.0]
    assert so == st == 6                                  # the two inf steps were skipped
    assert sdo == sdt
    np.testing.assert_allclose([t[2] for t in to], [t[2] for t in tt], rtol=2e-2)
    np.testing.assert_allclose(wo, wt, rtol=2e-2, atol=1e-3)


def test_grad_scaler_stages_and_state_dict():
    for lib in (onion, torch):
        w = lib.ones(2, requires_grad=True)
        opt = SGD(lib, [w], 0.1)
        s = lib.amp.GradScaler("cpu", init_scale=4.0)
        assert s.get_scale() == 4.0 and s.is_enabled()
        s.scale((w * 2).sum()).backward()
        s.unscale_(opt)
        np.testing.assert_array_equal(np.asarray(w.grad.tolist()), [2.0, 2.0])
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            s.unscale_(opt)
        s.update()
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.step(opt, closure=lambda: None)
        sd = s.state_dict()
        assert sd == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                      "_growth_tracker": 1}
        s2 = lib.amp.GradScaler("cpu")
        s2.load_state_dict(sd)
        assert s2.state_dict() == sd
        with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
            s3 = lib.amp.GradScaler("cpu")
            s3.scale(lib.ones(()))
            s3.update()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cuda = torch.cuda.is_available()
    if not cuda:
        with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
            s = onion.amp.GradScaler("cuda")
        assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
        x = onion.ones(2)
        assert s.scale(x) is x
