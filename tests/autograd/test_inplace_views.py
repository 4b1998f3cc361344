"""In-place view operators (PyTorch's ``inplace_view`` tag: t_, transpose_, squeeze_, unsqueeze_, as_strided_,
swapdims_, swapaxes_), and two small behaviours next to them: ``equal`` on tensors that require grad, and
the version counter of a freshly made random tensor.

An in-place view changes the tensor's own sizes and strides over the same storage; autograd extends that
tensor's history by the view's backward node (named as PyTorch names the in-place entry: TBackward1,
SqueezeBackward3, ...) and leaves a view's base untouched, so later in-place writes through the re-shaped
view still reach the base's gradient.  Each case runs through PyTorch and onion and compares.
"""
from __future__ import annotations

from types import ModuleType

import pytest

import onion
from conftest import torch

pytestmark = pytest.mark.oracle

CASES = {
    "t_": lambda b: b.t_(),
    "transpose_": lambda b: b.transpose_(0, 1),
    "swapdims_": lambda b: b.swapdims_(0, 1),
    "swapaxes_": lambda b: b.swapaxes_(-1, 0),
    "unsqueeze_": lambda b: b.unsqueeze_(1),
    "squeeze_": lambda b: b.unsqueeze_(0).squeeze_(),
    "squeeze_.dim": lambda b: b.unsqueeze_(0).squeeze_(0),
    "squeeze_.dims": lambda b: b.unsqueeze_(0).squeeze_([0, 1]),
    "as_strided_": lambda b: b.as_strided_((2, 2), (1, 2), 1),
    "as_strided_ function": lambda b: b.as_strided_((3,), (2,)),
}


def _record(L, fn):
    a = L.arange(6.0).reshape(2, 3).requires_grad_(True)
    b = a.clone()
    v0 = b._version
    assert fn(b) is b
    weights = L.arange(float(b.numel())).reshape(b.shape)
    (b * weights).sum().backward()
    return (tuple(b.shape), tuple(b.stride()), b.storage_offset(), b._version - v0, type(b.grad_fn).__name__,
            a.grad.tolist())


@pytest.mark.parametrize("case", sorted(CASES))
def test_geometry_version_node_and_gradient_match_torch(case):
    fn = CASES[case]
    if case == "as_strided_ function":
        fn = None
    if fn is None:
        ours = _record(onion, lambda b: onion.as_strided_(b, (3,), (2,)))
        theirs = _record(torch, lambda b: torch.as_strided_(b, (3,), (2,)))
    else:
        ours, theirs = _record(onion, fn), _record(torch, fn)
    assert ours == theirs


def _through_a_view(L):
    """An in-place view on a view, then an in-place write through it: the base's history and gradient."""
    out = []
    a = L.arange(6.0).reshape(2, 3).requires_grad_(True)
    c = a.clone()
    v = c[1]
    v.unsqueeze_(0)
    out.append((type(c.grad_fn).__name__, type(v.grad_fn).__name__,
                type(v.grad_fn.next_functions[0][0]).__name__, v._base is c))
    v.mul_(L.tensor([[1.0, 2.0, 3.0]]))
    (c * L.tensor([[1.0, 1.0, 1.0], [10.0, 10.0, 10.0]])).sum().backward()
    out.append((a.grad.tolist(), c.tolist()))
    a = L.arange(6.0).reshape(2, 3).requires_grad_(True)
    c = a.clone()
    w = c.t()
    w.t_()
    w.mul_(L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    (c * L.tensor([[1.0, 1.0, 1.0], [10.0, 10.0, 10.0]])).sum().backward()
    out.append((a.grad.tolist(), c.tolist(), tuple(w.shape), tuple(w.stride())))
    return out


def test_inplace_view_of_a_view_keeps_the_base_history():
    assert _through_a_view(onion) == _through_a_view(torch)


def _refusals(L):
    out = []
    for fn in (lambda: L.ones(2, 3, requires_grad=True).t_(), lambda: L.ones(2, 3).squeeze_(5),
               lambda: L.ones(2, 3).unsqueeze_(-4), lambda: L.ones(2, 3, 4).t_(),
               lambda: L.ones(2, 3).transpose_(0, 2)):
        try:
            fn()
            out.append("ok")
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            out.append((type(e).__name__, str(e)))
    with L.no_grad():
        d = L.ones(2, 3)
        e = d.view(6)
        e.unsqueeze_(0)
        out.append((tuple(e.shape), e._base is d, d._version))
    m = L.ones(2, 3, device="meta")
    m.t_()
    out.append((tuple(m.shape), m.stride()))
    return out


def test_refusals_no_grad_views_and_meta_match_torch():
    assert _refusals(onion) == _refusals(torch)


def _equal_with_grad(L):
    a = L.ones(3, requires_grad=True)
    return L.equal(a, a), L.equal(a, a * 2), a.equal(a.detach()), a.grad_fn


def test_equal_on_tensors_that_require_grad():
    assert _equal_with_grad(onion) == (True, False, True, None) == _equal_with_grad(torch)


FACTORIES = {
    "randn": lambda L: L.randn(3), "rand": lambda L: L.rand(3), "randint": lambda L: L.randint(5, (3,)),
    "randperm": lambda L: L.randperm(4), "normal float float": lambda L: L.normal(0.0, 1.0, (3,)),
    "rand_like": lambda L: L.rand_like(L.ones(2)), "randn_like": lambda L: L.randn_like(L.ones(2)),
    "randint_like": lambda L: L.randint_like(L.ones(2), 3),
    "bernoulli": lambda L: L.bernoulli(L.full((3,), 0.5)), "multinomial": lambda L: L.multinomial(L.ones(3), 2),
    "normal Tensor float": lambda L: L.normal(L.zeros(2), 1.0),
    "normal float Tensor": lambda L: L.normal(1.0, L.ones(2)),
    "normal Tensor Tensor": lambda L: L.normal(L.zeros(2), L.ones(2)),
    "normal_": lambda L: L.empty(3).normal_(),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_random_factories_start_at_version_zero(name):
    if not isinstance(torch, ModuleType):
        pytest.skip("needs PyTorch")
    assert FACTORIES[name](onion)._version == FACTORIES[name](torch)._version
