"""The Conjugate and Negative bits against PyTorch: lazy ``conj()`` / ``_neg_view()`` views, how operators
resolve them (values, in-place and ``out=`` writes through a view), which results keep them, the complex views
(``real``, ``imag``, ``view_as_real``, ``view_as_complex``) and ``complex``/``polar``/``angle``.

PyTorch's own tests of the bits (test_view_ops.py's conj/neg view tests, test_torch.py's ``test_conj_*``,
test_complex.py) pin down the behaviour ported here, rewritten for onion."""
from __future__ import annotations

import numpy as np
import pytest

import onion
from conftest import assert_close, to_np, torch

pytestmark = pytest.mark.oracle

DATA = [[1 + 2j, -3 + 0.5j, 0.25 - 1j], [2 - 2j, 0 + 1j, -1.5 + 0j]]


def _lib(x):
    return onion if isinstance(x, onion.Tensor) else torch


def pair(dtype="complex64"):
    return (onion.tensor(DATA, dtype=getattr(onion, dtype)), torch.tensor(DATA, dtype=getattr(torch, dtype)))


def bits(t):
    return (t.is_conj(), t.is_neg())


def test_conj_is_a_view_with_the_bit_and_the_keyset_shows_it():
    o, t = pair()
    oc, tc = o.conj(), t.conj()
    assert bits(oc) == bits(tc) == (True, False)
    assert oc._base is o and oc.data_ptr() == o.data_ptr()
    assert repr(onion._C._dispatch_key_set(oc)) == "DispatchKeySet(CPU, Conjugate, ADInplaceOrView, AutogradCPU, " \
                                                   "AutocastCPU)"
    assert "Conjugate" in repr(torch._C._dispatch_keys(tc))
    assert_close(oc, tc)
    # conj of a conj drops the bit; conj of a real tensor is the tensor itself
    assert bits(oc.conj()) == bits(tc.conj()) == (False, False)
    r = onion.tensor([1.0, 2.0])
    assert r.conj() is r and onion.conj(r) is r


@pytest.mark.parametrize("name, fn", [
    ("t", lambda x: x.t()), ("transpose", lambda x: x.transpose(0, 1)), ("view", lambda x: x.view(3, 2)),
    ("select", lambda x: x[1]), ("slice", lambda x: x[:, 1:]), ("expand", lambda x: x[:1].expand(4, 3)),
    ("unsqueeze", lambda x: x.unsqueeze(0)), ("detach", lambda x: x.detach()), ("permute", lambda x: x.permute(1, 0)),
    ("clone", lambda x: x.clone()), ("contiguous", lambda x: x.t().contiguous()), ("add", lambda x: x + 1),
    ("mul_", lambda x: x.clone().mul_(2)), ("resolve_conj", lambda x: x.resolve_conj()), ("neg", lambda x: x.neg()),
    ("sum", lambda x: x.sum()), ("zeros_like", lambda x: _lib(x).zeros_like(x)),
    ("empty_like", lambda x: _lib(x).empty_like(x)), ("to_cdouble", lambda x: x.to(_lib(x).complex128)),
    ("real", lambda x: x.real), ("imag", lambda x: x.imag), ("matmul", lambda x: x @ x.t()),
])
def test_which_results_keep_the_bit(name, fn):
    o, t = pair()
    ro, rt = fn(o.conj()), fn(t.conj())
    assert bits(ro) == bits(rt), name
    if name == "empty_like":
        assert ro.shape == rt.shape and ro.stride() == rt.stride() and ro.dtype == onion.complex64
    else:
        assert_close(ro, rt)


def test_inplace_through_a_conj_view_writes_the_conjugate():
    o, t = pair()
    for x in (o, t):
        v = x.conj()
        v.mul_(2)
        v.add_(1j)
        v[0, 0] = 5 + 5j
    assert_close(o, t)


def test_out_into_a_conj_view_and_copy_between_bits():
    o, t = pair()
    for m, x in ((onion, o), (torch, t)):
        dst = m.zeros(2, 3, dtype=x.dtype).conj()
        m.add(x, 1, out=dst)
        assert dst.is_conj()
        x.copy_(dst)                    # conj -> plain: stores the conjugate of what dst holds
        y = m.zeros(2, 3, dtype=x.dtype).conj()
        y.copy_(x.conj())               # conj -> conj: stored as is
        x.add_(y.resolve_conj())
    assert_close(o, t)


def test_neg_bit_imag_of_a_conj_view():
    o, t = pair("complex128")
    oi, ti = o.conj().imag, t.conj().imag
    assert bits(oi) == bits(ti) == (False, True)
    assert oi.dtype is onion.float64 and oi.stride() == ti.stride() and oi.storage_offset() == ti.storage_offset()
    assert_close(oi, ti)
    assert_close(oi + 1, ti + 1)
    oi.mul_(3)
    ti.mul_(3)                      # writes through the Negative bit into the imaginary parts
    assert_close(o, t)
    assert bits(oi.resolve_neg()) == (False, False)
    n_o, n_t = onion._neg_view(onion.tensor([1.0, -2.0])), torch._neg_view(torch.tensor([1.0, -2.0]))
    assert bits(n_o) == bits(n_t) == (False, True)
    assert_close(n_o, n_t)
    assert_close(n_o.neg(), n_t.neg())
    assert bits(n_o.neg()) == bits(n_t.neg())


def test_numpy_refuses_a_pending_bit_with_pytorchs_text():
    o, t = pair()
    for a, b in ((o.conj(), t.conj()), (o.conj().imag, t.conj().imag)):
        with pytest.raises(RuntimeError) as eo:
            a.numpy()
        with pytest.raises(RuntimeError) as et:
            b.numpy()
        assert str(eo.value) == str(et.value)
    assert np.array_equal(o.conj().resolve_conj().numpy(), t.conj().resolve_conj().numpy())
    assert o.conj().tolist() == t.conj().tolist()
    assert o.conj()[0, 0].item() == t.conj()[0, 0].item()


def test_view_as_real_and_view_as_complex_share_memory_with_pytorchs_geometry():
    o, t = pair()
    for fo, ft in ((lambda x: x, lambda x: x), (lambda x: x[:, 1:], lambda x: x[:, 1:]),
                   (lambda x: x.t(), lambda x: x.t())):
        ro, rt = onion.view_as_real(fo(o)), torch.view_as_real(ft(t))
        assert_close(ro, rt)
        assert ro.storage_offset() == rt.storage_offset()
        assert_close(onion.view_as_complex(ro), torch.view_as_complex(rt))
    r = onion.view_as_real(o)
    r[0, 0, 1] = 42.0
    assert o[0, 0].item() == 1 + 42j


@pytest.mark.parametrize("make", [
    lambda m: m.view_as_real(m.ones(3)),
    lambda m: m.view_as_real(m.ones(3, dtype=m.complex64).conj()),
    lambda m: m.view_as_complex(m.ones(3, 4)),
    lambda m: m.view_as_complex(m.ones(2, 3)[:, :2]),
    lambda m: m.view_as_complex(m.ones(3, 2).t().contiguous().t()),
    lambda m: m.view_as_complex(m.ones(8)[1:7].view(3, 2)),
    lambda m: m.view_as_complex(m.ones(2)[0]),
    lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)),
    lambda m: m.imag(m.ones(3)),
    lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.complex(m.ones(2, dtype=m.int32), m.ones(2, dtype=m.int32)),
    lambda m: m.complex(m.ones(2), m.ones(2), out=m.empty(2, dtype=m.complex128)),
])
def test_errors_match_pytorch(make):
    with pytest.raises(RuntimeError) as et:
        make(torch)
    with pytest.raises(RuntimeError) as eo:
        make(onion)
    assert str(eo.value) == str(et.value)


def test_real_and_imag_setters_and_real_of_a_real_tensor():
    o, t = pair()
    for x, m in ((o, onion), (t, torch)):
        x.imag = m.ones(2, 3)
        x.real.add_(1)
        x.conj().real.mul_(2)
    assert_close(o, t)
    r = onion.tensor([1.0, 2.0])
    assert onion.real(r) is r and r.real is r


def test_complex_polar_angle_values_and_gradients():
    a = [[0.5, -1.0, 2.0], [0.0, 3.0, -0.25]]
    b = [[1.0, 0.0, -2.0], [0.5, -3.0, 0.75]]
    results = []
    for m in (onion, torch):
        x = m.tensor(a, dtype=m.float64, requires_grad=True)
        y = m.tensor(b, dtype=m.float64, requires_grad=True)
        c = m.complex(x, y)
        p = m.polar(x.abs() + 0.5, y)
        z = m.tensor(DATA, dtype=m.complex128, requires_grad=True)
        ang = m.angle(z) + m.angle(x)
        loss = (c * p.conj()).real.sum() + (c.imag * 2).sum() + ang.sum() + m.view_as_real(z).pow(2).sum()
        loss.backward()
        results.append((c, p, ang, x.grad, y.grad, z.grad))
    for ro, rt in zip(*results):
        assert_close(ro, rt)


def test_angle_of_reals_integers_and_nan():
    for vals, dt in (([-1.0, 0.0, 2.0, float("nan"), -0.0], "float32"), ([-3, 0, 4], "int64"), ([True, False], "bool")):
        assert_close(onion.angle(onion.tensor(vals, dtype=getattr(onion, dt))),
                     torch.angle(torch.tensor(vals, dtype=getattr(torch, dt))))


def test_gradient_through_conj_and_neg_views():
    results = []
    for m in (onion, torch):
        z = m.tensor(DATA, dtype=m.complex128, requires_grad=True)
        w = z.conj() * m.tensor(2 - 1j, dtype=m.complex128)
        u = m._neg_view(z.real) * 3
        loss = w.abs().sum() + u.sum() + z.conj().imag.sum()
        loss.backward()
        results.append(z.grad)
    assert_close(*results)


def test_mh_of_a_conj_view_and_matmul():
    o, t = pair()
    assert bits(o.mH) == bits(t.mH)
    assert_close(o.mH @ o, t.mH @ t)
    assert np.array_equal(to_np(o.conj().conj()), to_np(t))
