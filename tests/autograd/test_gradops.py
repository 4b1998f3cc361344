"""Backward passes that record what PyTorch's record: AccumulateGrad's steal-or-copy choice, tanh's and sigmoid's
backward operators (and their own derivatives), clamp's and where's 0-d ``scalar_tensor`` zeros.  Each case runs
under a logging dispatch mode in onion and in torch, and the operator sequences and the gradients are compared."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import onion
from onion.utils._python_dispatch import TorchDispatchMode
from tests.conftest import torch

pytestmark = pytest.mark.oracle


def _log_mode(T):
    if T is onion:
        base = TorchDispatchMode
    else:
        from torch.utils._python_dispatch import TorchDispatchMode as base

    class Log(base):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func).split(".", 1)[1])
            return func(*args, **(kwargs or {}))
    return Log()


def _run(T, case):
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    y = T.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    xt = T.tensor(rng.standard_normal((4, 3)).astype(np.float32)).t().detach().requires_grad_()
    mode = _log_mode(T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mode:
            grads = case(T, x, y, xt)
    leaves = [t.grad for t in (x, y, xt) if t.grad is not None]
    returned = grads if isinstance(grads, list) else []
    out = [g.detach() for g in returned if isinstance(g, T.Tensor)] + leaves
    return mode.ops, [np.asarray(g.tolist()) for g in out], [tuple(g.stride()) for g in leaves]


ACCUMULATE = {
    # a fresh gradient that obeys the leaf's layout is taken as it is (detach)
    "mul": lambda T, x, y, xt: (x * 2).sum().backward(),
    "two_leaves": lambda T, x, y, xt: (x * y).sum().backward(),
    "transposed_result": lambda T, x, y, xt: (xt.t() * 2).sum().backward(),
    "sum_of_two_paths": lambda T, x, y, xt: (x * 2 + x * 3).sum().backward(),
    "scalar_chain": lambda T, x, y, xt: ((x * 2).sum() * 3).backward(),
    "hook_returning_it": lambda T, x, y, xt: (x.register_hook(lambda g: g), (x * 2).sum().backward()),
    # an expanded one (stride 0), a user's tensor, one shared by two leaves, a leaf of other strides: copied
    "expanded": lambda T, x, y, xt: x.sum().backward(),
    "add_shares_one_gradient": lambda T, x, y, xt: ((x + y) * 2).sum().backward(),
    "users_gradient": lambda T, x, y, xt: x.backward(T.ones(3, 4)),
    "kept_by_a_hook": lambda T, x, y, xt: (lambda keep: (x.register_hook(keep.append), (x * 2).sum().backward()))([]),
    "other_strides": lambda T, x, y, xt: (xt * 2).sum().backward(),
    "create_graph": lambda T, x, y, xt: (x * 2).sum().backward(create_graph=True),
    # the second gradient is added in place; a non-leaf's retained / captured gradient is cloned then added
    "second_backward": lambda T, x, y, xt: [(x * 2).sum().backward() for _ in range(2)],
    "retain_grad": lambda T, x, y, xt: (lambda h: (h.retain_grad(), (h * 3).sum().backward(retain_graph=True),
                                                   (h * 3).sum().backward()))(x * 2),
    "backward_inputs_non_leaf": lambda T, x, y, xt: (lambda h: (h * 3).sum().backward(inputs=[h]))(x * 2),
    "backward_inputs_leaf": lambda T, x, y, xt: (x * 2).sum().backward(inputs=[x]),
    "autograd_grad": lambda T, x, y, xt: list(T.autograd.grad((x * 2).sum(), x)),
}


@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_accumulate_grad_records_as_torch(name):
    ours, theirs = _run(onion, ACCUMULATE[name]), _run(torch, ACCUMULATE[name])
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert ours[2] == theirs[2]


def test_a_stolen_gradient_is_not_shared_with_the_user():
    g = onion.ones(3)
    x = onion.zeros(3, requires_grad=True)
    x.backward(g)
    g.add_(1.0)
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    x.grad = None
    (x * 1).backward(g)         # the product is stolen; g, the user's, is untouched by later accumulation
    (x * 1).backward(g)
    assert x.grad.tolist() == [4.0, 4.0, 4.0] and g.tolist() == [2.0, 2.0, 2.0]


ACTIVATIONS = {
    "tanh": lambda T, a: T.tanh(a) * a,
    "sigmoid": lambda T, a: T.sigmoid(a) * a,
    "tanh_f16": lambda T, a: T.tanh(a.half()).float() * a,
    "clamp_min": lambda T, a: a.clamp(min=0),
    "clamp_both": lambda T, a: a.clamp(-0.5, 0.5),
    "clamp_max": lambda T, a: a.clamp(max=0.25),
    "clamp_tensor": lambda T, a: a.clamp(a.detach() * 0 - 0.5, a.detach() * 0 + 0.5),
    "clamp_min_op": lambda T, a: T.clamp_min(a, 0.1),
    "clamp_max_op": lambda T, a: T.clamp_max(a, 0.1),
    "where_scalar_other": lambda T, a: T.where(a > 0, a, 1.0),
    "where_scalar_self": lambda T, a: T.where(a > 0, 2.0, a),
    "where_tensors": lambda T, a: T.where(a > 0, a * 2, a),
}


def _double_backward(T, fn):
    a = T.tensor([-1.5, -0.3, 0.0, 0.2, 0.9, 2.0], dtype=T.float64, requires_grad=True)
    mode = _log_mode(T)
    with mode:
        (g,) = T.autograd.grad(fn(T, a).sum(), a, create_graph=True)
        gg = T.autograd.grad(g.sum(), a)[0] if g.requires_grad else None
    return mode.ops, g.detach().tolist(), None if gg is None else gg.tolist()


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_backward_and_double_backward_record_as_torch(name):
    ours, theirs = _double_backward(onion, ACTIVATIONS[name]), _double_backward(torch, ACTIVATIONS[name])
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    if theirs[2] is None:
        assert ours[2] is None
    else:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


@pytest.mark.parametrize("op", ["tanh_backward", "sigmoid_backward"])
def test_backward_operators_differentiate_twice_as_torch(op):
    """The operators' own derivatives (grad_output and output), to second order, on complex inputs too."""
    for dtype in ("float64", "complex128"):
        rng = np.random.default_rng(1)
        go = rng.standard_normal(5) + (1j * rng.standard_normal(5) if dtype == "complex128" else 0)
        out = rng.uniform(-0.9, 0.9, 5) + (1j * rng.uniform(-0.5, 0.5, 5) if dtype == "complex128" else 0)
        res = []
        for T in (onion, torch):
            a = T.tensor(go, dtype=getattr(T, dtype), requires_grad=True)
            b = T.tensor(out, dtype=getattr(T, dtype), requires_grad=True)
            r = getattr(T.ops.aten, op)(a, b)
            ga, gb = T.autograd.grad(r.abs().sum(), (a, b), create_graph=True)
            gga, ggb = T.autograd.grad((ga.abs() + gb.abs()).sum(), (a, b))
            res.append([np.asarray(t.detach().tolist()) for t in (r, ga, gb, gga, ggb)])
        for x, y in zip(*res):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
    assert onion.autograd.gradcheck(lambda a, b: getattr(onion.ops.aten, op)(a, b),
                                    (onion.tensor([0.3, -1.2], dtype=onion.float64, requires_grad=True),
                                     onion.tensor([0.5, -0.25], dtype=onion.float64, requires_grad=True)))
