"""``_base`` and ``_is_view()`` along chains of views, against PyTorch: ``_base`` is the root tensor's own
Python object (``d[:]._base is d``), the same for every view of it (``v[:]._base is v._base``)."""
from __future__ import annotations

import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

# each step takes a tensor to one of its views (both libraries spell them the same)
CHAINS = {
    "slice-all": [lambda x: x[:]],
    "slice-slice": [lambda x: x[:], lambda x: x[1:]],
    "t-index": [lambda x: x.t(), lambda x: x[0]],
    "unsqueeze-expand": [lambda x: x[0], lambda x: x.unsqueeze(0), lambda x: x.expand(3, 4)],
    "view-transpose": [lambda x: x.view(4, 3), lambda x: x.transpose(0, 1), lambda x: x[::2]],
    "reshape-permute": [lambda x: x.reshape(2, 6), lambda x: x.permute(1, 0), lambda x: x.squeeze()],
    "alias-diagonal": [lambda x: x.view(3, 4), lambda x: x.diagonal(), lambda x: x.unsqueeze(1)],
    "empty-slices": [lambda x: x[3:], lambda x: x[:, 1:]],
    "select-neg": [lambda x: x[-1], lambda x: x[None]],
}


def _walk(lib, steps, shape=(3, 4)):
    root = lib.ones(shape)
    seen = []
    x = root
    for step in steps:
        x = step(x)
        seen.append(x)
    out = []
    for v in seen:
        out.append((v._is_view(), v._base is root, v._base is seen[0]._base, v[:]._base is v._base,
                    v._base._is_view(), tuple(v.shape), tuple(v.stride())))
    return root._is_view(), root._base is None, out


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_view_chain_base_identity(name):
    assert _walk(onion, CHAINS[name]) == _walk(torch, CHAINS[name])


def test_base_of_a_view_is_the_root_object_even_through_autograd():
    for lib in (onion, torch):
        p = lib.ones(2, 3, requires_grad=True)
        v = p[0]
        assert v._base is p and v.t()._base is p and v._is_view()
        assert v.grad_fn is not None and (p * 2)[1]._base is not p


@pytest.mark.parametrize("make", [lambda x: x.detach(), lambda x: x.t().reshape(-1), lambda x: x.clone(),
                                  lambda x: x.contiguous()], ids=["detach", "reshape-copy", "clone", "contiguous"])
def test_non_views_have_no_base(make):
    o, t = make(onion.ones(2, 3)), make(torch.ones(2, 3))
    assert (o._is_view(), o._base is None) == (t._is_view(), t._base is None)


def test_base_keeps_the_root_alive():
    for lib in (onion, torch):
        v = lib.arange(6.)[2:]
        b = v._base
        assert b is v._base and tuple(b.shape) == (6,) and b[3].item() == 3.0
