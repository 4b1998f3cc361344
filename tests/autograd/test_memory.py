"""Memory: graphs are freed by reference counting alone, as in PyTorch.

Every test runs with the cyclic collector off, so anything that only a cycle
keeps alive stays and shows: a custom ``Function`` that saves its output or
marks an input dirty (PyTorch saves an output without its grad_fn, so no
output -> node -> saved output cycle), graphs built and dropped with and
without backward, and a small MLP trained for 1,000 steps (tracemalloc's
traced memory, which counts NumPy's buffers, may grow by less than 1 MB
between step 100 and step 1,000; the graph loops: between step 50 and 300).
"""
from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

from conftest import assert_close, onion, torch

GROWTH_LIMIT = 1 << 20


@pytest.fixture(autouse=True)
def no_cyclic_gc():
    """The cyclic collector is off for the whole test (and on again afterwards, as it was)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def growth_over(step, warm_up: int, total: int) -> int:
    """Bytes still allocated after steps ``warm_up .. total`` that were not before them.

    tracemalloc starts only after the warm-up (caches filled, first gradients made), so what it
    reports at the end is exactly what those steps allocated and left behind; tracing only these
    steps keeps the test fast (tracing costs each allocation several times its price).
    """
    for i in range(warm_up):
        step(i)
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(warm_up, total):
            step(i)
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        if started:
            tracemalloc.stop()


def _functions(m):
    """The two patterns of the issue: save the output; modify the input in place and mark it dirty."""

    class ExpSavingOutput(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class DoubleInPlace(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return ExpSavingOutput, DoubleInPlace


@pytest.mark.parametrize("pattern", ["save_output", "mark_dirty"])
def test_custom_function_graph_is_freed_without_the_cyclic_collector(pattern):
    exp_fn, dirty_fn = _functions(onion)
    x = onion.ones(4, requires_grad=True)
    y = exp_fn.apply(x) if pattern == "save_output" else dirty_fn.apply(x.clone())
    node = weakref.ref(y.grad_fn)
    assert node() is not None
    del y
    assert node() is None, "the node outlived its only output: something holds it in a cycle"


@pytest.mark.parametrize("pattern", ["save_output", "mark_dirty"])
def test_custom_function_on_large_tensors_keeps_memory_flat(pattern):
    """The issue's case, scaled down: 100 calls on 1 MB tensors, results dropped each time."""
    exp_fn, dirty_fn = _functions(onion)
    x = onion.ones(1 << 18, requires_grad=True)          # 1 MB of float32

    def step(i):
        y = exp_fn.apply(x) if pattern == "save_output" else dirty_fn.apply(x.clone())
        del y
    assert growth_over(step, 1, 100) < GROWTH_LIMIT     # not one buffer of the 99 calls is left


@pytest.mark.oracle
def test_custom_functions_still_give_torchs_gradients():
    grads = []
    for m in (onion, torch):
        exp_fn, dirty_fn = _functions(m)
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        (exp_fn.apply(x).sum() + dirty_fn.apply(x * 3).sum()).backward()
        grads.append(x.grad)
    assert_close(grads[0], grads[1])


def _custom_function_step(exp_fn, dirty_fn, x, i):
    y = exp_fn.apply(x)
    z = dirty_fn.apply(x.clone())
    if i % 2:
        (y.sum() + z.sum()).backward()          # and every other step: dropped without backward


def _graph_step(x, i):
    h = (x * 2).exp().sin()
    v = h[1:].t() if h.dim() > 1 else h[1:]
    out = (v * v).sum() + h.mean()
    if i % 3 == 0:
        out.backward()
    elif i % 3 == 1:
        onion.autograd.grad(out, [x], create_graph=True)[0].sum().backward()


@pytest.mark.parametrize("kind", ["custom_function", "graphs_built_and_dropped"])
def test_repeated_graphs_leave_nothing_behind(kind):
    exp_fn, dirty_fn = _functions(onion)
    x = onion.ones(3, 5, requires_grad=True)

    def step(i):
        if kind == "custom_function":
            _custom_function_step(exp_fn, dirty_fn, x, i)
        else:
            _graph_step(x, i)
        x.grad = None

    assert growth_over(step, 50, 300) < GROWTH_LIMIT


def _mlp(m, seed=0):
    rng = np.random.default_rng(seed)
    params = [m.tensor(rng.normal(0, 0.3, shape).astype(np.float32), requires_grad=True)
              for shape in ((4, 8), (8,), (8, 1), (1,))]
    data = m.tensor(rng.normal(0, 1, (16, 4)).astype(np.float32))
    target = m.tensor(rng.normal(0, 1, (16, 1)).astype(np.float32))
    return params, data, target


def _train_step(m, params, data, target, lr=0.05):
    w1, b1, w2, b2 = params
    hidden = m.relu(data @ w1 + b1)
    loss = ((hidden @ w2 + b2 - target) ** 2).mean()
    loss.backward()
    with m.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)
            p.grad = None
    return loss.detach()


def test_mlp_training_memory_is_flat_over_1000_steps():
    params, data, target = _mlp(onion)
    first_and_last = {}

    def step(i):
        loss = _train_step(onion, params, data, target)
        first_and_last[min(i, 1)] = loss.item()        # two floats, replaced each step: nothing accumulates
    growth = growth_over(step, 100, 1000)
    assert growth < GROWTH_LIMIT, f"traced memory grew by {growth} bytes between step 100 and step 1,000"
    assert first_and_last[1] < first_and_last[0]       # and it did train


@pytest.mark.oracle
def test_mlp_training_follows_torch():
    """The loop measured above computes what PyTorch computes (20 steps, same start)."""
    losses = []
    for m in (onion, torch):
        params, data, target = _mlp(m)
        losses.append([_train_step(m, params, data, target).item() for _ in range(20)])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-4)
