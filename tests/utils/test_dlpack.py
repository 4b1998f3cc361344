"""DLPack: zero-copy exchange with NumPy and PyTorch in both directions, PyTorch's errors, the protocol."""
from __future__ import annotations

import gc

import ml_dtypes
import numpy as np
import pytest

import onion
from onion.utils import dlpack as odl

from conftest import torch

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "float64", "int64", "int8", "uint8", "bool", "bfloat16", "float16", "complex64", "complex128"]


def _layouts(base):
    """(name, view) pairs: contiguous, non-contiguous (a transpose, a step) and offset views of ``base``."""
    return [("contiguous", base), ("transposed", base.t()), ("stepped", base[:, ::2]), ("offset", base[1:, 1:]),
            ("scalar", base[1, 2])]


LAYOUTS = ("contiguous", "transposed", "stepped", "offset", "scalar")


def _onion_base(dtype):
    return onion.arange(12).reshape(3, 4).to(getattr(onion, dtype))


def _torch_base(dtype):
    return torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))


def _write_one(x, lib):
    """Write a 1 (True) where every element is 0 (False) after: x.zero_() then x.fill_(1) at one spot."""
    if x.dim() == 0:
        x.fill_(1)
    else:
        x[(0,) * x.dim()] = 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_onion_to_torch_shares_memory_both_ways(dtype):
    for name in LAYOUTS:
        v = dict(_layouts(_onion_base(dtype)))[name]          # a fresh base for each layout
        t = torch.from_dlpack(v)
        ref = _torch_base(dtype)
        ref_v = dict(_layouts(ref))[name]
        assert t.dtype == ref_v.dtype and t.shape == ref_v.shape and t.stride() == ref_v.stride(), name
        assert torch.equal(t, ref_v), name
        t.zero_()                                      # torch writes, onion sees
        assert not v.any().item(), name
        _write_one(v, onion)                           # onion writes, torch sees
        assert t.flatten()[0].item() == 1 or t.flatten()[0].item() is True, name


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_onion_shares_memory_both_ways(dtype):
    for name in LAYOUTS:
        v = dict(_layouts(_torch_base(dtype)))[name]
        o = onion.from_dlpack(v)
        ref_v = dict(_layouts(_onion_base(dtype)))[name]
        assert o.dtype == ref_v.dtype and o.shape == ref_v.shape and o.stride() == ref_v.stride(), name
        assert onion.equal(o, ref_v), name
        before = o._version
        o.zero_()                                      # onion writes, torch sees; onion's version moves
        assert o._version == before + 1
        assert not v.any().item(), name
        _write_one(v, torch)                           # torch writes, onion sees
        assert o.flatten()[0].item() in (1, True), name


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128", "bfloat16"])
def test_numpy_round_trips_share_memory(dtype):
    base = _onion_base(dtype)
    v = base[1:, ::2]
    if dtype == "bfloat16":            # NumPy's own from_dlpack has no bfloat16: onion's consumer reads it
        a = odl.from_dlpack(v).numpy()
        assert a.dtype == ml_dtypes.bfloat16
    else:
        a = np.from_dlpack(v)
        assert a.strides == tuple(s * base.element_size() for s in v.stride())
    assert a.shape == (2, 2) and a.tolist() == v.tolist()
    a[0, 0] = 0
    assert base[1, 0].item() in (0, False)
    # NumPy -> onion
    n = np.arange(12).reshape(3, 4).astype(a.dtype)[1:, 1:]
    o = onion.from_dlpack(n)
    assert o.stride() == (4, 1) and o.storage_offset() == 0 and o.tolist() == n.tolist()
    before = o._version
    o.fill_(1)
    assert o._version == before + 1 and (n == 1).all()
    n[0, 0] = 0
    assert o[0, 0].item() in (0, False)


def test_pytorch_errors_and_onion_differences():
    with pytest.raises(BufferError, match=r"Can't export tensors that require gradient, use tensor.detach\(\)"):
        onion.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError) as torch_err:
        torch.ones(2, requires_grad=True).__dlpack__()
    assert "tensor.detach()" in str(torch_err.value)
    with pytest.raises(BufferError, match="Can't export tensors with the conjugate bit set"):
        onion.ones(2, dtype=onion.cfloat).conj().__dlpack__()
    with pytest.raises(BufferError, match="Can't export tensors with the conjugate bit set"):
        torch.ones(2, dtype=torch.cfloat).conj().__dlpack__()
    # deliberate difference: PyTorch exports a negative view's memory without the sign; onion refuses
    with pytest.raises(BufferError, match="negative bit"):
        onion.ones(2, dtype=onion.cfloat).conj().imag.__dlpack__()
    with pytest.raises(BufferError, match="Cannot pack tensors on meta"):
        onion.ones(2, device="meta").__dlpack__()
    with pytest.raises(ValueError, match="Unknown device type meta for Dlpack"):
        onion.ones(2, device="meta").__dlpack_device__()
    with pytest.raises(AssertionError, match="stream should be None on cpu"):
        onion.ones(2).__dlpack__(stream=1)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        onion.from_dlpack(5)
    cap = odl.to_dlpack(onion.ones(2))
    onion.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        onion.from_dlpack(cap)
    with pytest.raises(BufferError, match="DLPack device"):
        onion.ones(2).__dlpack__(dl_device=(2, 0))


def test_protocol_versions_device_and_copy():
    x = onion.arange(4.0)
    assert x.__dlpack_device__() == (odl.DLDeviceType.kDLCPU, 0) == torch.ones(1).__dlpack_device__()
    legacy, versioned = x.__dlpack__(), x.__dlpack__(max_version=(1, 0))
    assert "dltensor" in repr(legacy) and "dltensor_versioned" in repr(versioned)
    assert "dltensor_versioned" not in repr(x.__dlpack__(max_version=(0, 8)))
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(2, 0)))
    for cap in (legacy, versioned):
        y = onion.from_dlpack(cap)
        assert y.data_ptr() == x.data_ptr()
    c = torch.from_dlpack(x.__dlpack__(max_version=(1, 0), copy=True))
    c.fill_(-1)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    z = onion.from_dlpack(torch.arange(3.0), copy=True)
    assert z.data_ptr() != 0 and z.tolist() == [0.0, 1.0, 2.0]
    t = torch.arange(3.0)
    onion.from_dlpack(t, copy=True).fill_(5)
    assert t.tolist() == [0.0, 1.0, 2.0]
    e = onion.from_dlpack(np.empty((0, 3), np.float32))
    assert e.shape == (0, 3) and e.dtype == onion.float32
    assert onion.from_dlpack(np.ones(2), device="meta").device.type == "meta"


def test_capsules_release_what_they_hold():
    gc.collect()
    before = len(odl._EXPORTED)
    cap = odl.to_dlpack(onion.ones(3))               # never consumed: released when the capsule dies
    assert len(odl._EXPORTED) == before + 1
    del cap
    gc.collect()
    assert len(odl._EXPORTED) == before
    t = torch.from_dlpack(onion.ones(3))             # consumed: released when the consumer lets go
    assert len(odl._EXPORTED) == before + 1
    del t
    gc.collect()
    assert len(odl._EXPORTED) == before
    # an imported producer's memory stays alive as long as the onion tensor does
    o = onion.from_dlpack(torch.arange(5.0))
    gc.collect()
    assert o.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_read_only_producer_is_flagged():
    a = np.arange(3.0)
    a.flags.writeable = False
    o = onion.from_dlpack(a)
    assert o.tolist() == [0.0, 1.0, 2.0] and not o.numpy().flags.writeable
