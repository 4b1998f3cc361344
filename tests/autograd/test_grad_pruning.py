"""``autograd.grad(out, inputs)`` and ``backward(inputs=...)`` run only the part of the graph that leads to the
inputs asked for: hooks (tensor hooks, node pre-hooks and hooks) on other branches never fire, as in PyTorch."""
from __future__ import annotations

import pytest

import onion
from conftest import torch

pytestmark = pytest.mark.oracle


def _fired(L, how):
    x = L.ones(2, requires_grad=True)
    y = L.ones(2, requires_grad=True)
    fired = []
    z, w = x * 2, y * 3
    z.register_hook(lambda g: fired.append("z"))
    w.register_hook(lambda g: fired.append("w"))
    y.register_hook(lambda g: fired.append("y"))
    w.grad_fn.register_hook(lambda gi, go: fired.append("w node"))
    w.grad_fn.register_prehook(lambda go: fired.append("w prehook"))
    out = (z + w).sum()
    if how == "grad":
        (g,) = L.autograd.grad(out, [x])
        return fired, g.tolist(), x.grad, y.grad
    out.backward(inputs=[x])
    return fired, x.grad.tolist(), y.grad


@pytest.mark.parametrize("how", ["grad", "backward inputs"])
def test_other_branches_do_not_run(how):
    assert _fired(onion, how) == _fired(torch, how)
