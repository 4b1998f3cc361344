"""autocast on every device type c10 knows: the same result or the same error (type and text) as PyTorch's."""
from __future__ import annotations

import warnings

import pytest

import onion
from tests.conftest import torch

pytestmark = pytest.mark.oracle

DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "foo", "", "CPU", "cuda:x", "xpu:1")


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            return type(e).__name__, str(e).replace("torch.", "onion.")
    return "ok", str(r).replace("torch.", "onion.")


def _region(T, dev):
    def run():
        with T.autocast(dev):
            return T.is_autocast_enabled(dev.partition(":")[0]) if dev not in ("cuda",) else "entered"
    return run


@pytest.mark.parametrize("dev", DEVICE_TYPES)
def test_device_type_as_torch(dev):
    for make in (lambda T: (lambda: T.get_autocast_dtype(dev)), lambda T: (lambda: T.is_autocast_enabled(dev)),
                 lambda T: (lambda: T.amp.is_autocast_available(dev)), lambda T: _region(T, dev)):
        assert _outcome(make(onion)) == _outcome(make(torch)), dev


def test_a_device_without_cast_kernels_keeps_its_settings():
    """xpu has autocast in PyTorch but no tensors in onion: a region turns it on and restores it, no cast runs."""
    assert not onion.is_autocast_enabled("xpu")
    with onion.autocast("xpu", dtype=onion.bfloat16):
        assert onion.is_autocast_enabled("xpu") and onion.get_autocast_dtype("xpu") is onion.bfloat16
        assert not onion.is_autocast_enabled("cpu")
        x = onion.ones(2, 2)
        assert onion.mm(x, x).dtype is onion.float32
        with onion.autocast("xpu", enabled=False):
            assert not onion.is_autocast_enabled("xpu")
        assert onion.is_autocast_enabled("xpu")
    assert not onion.is_autocast_enabled("xpu") and onion.get_autocast_dtype("xpu") is onion.float16
    with pytest.warns(UserWarning, match="XPU Autocast only supports dtypes of onion.bfloat16, onion.float16"):
        assert onion.autocast("xpu", dtype=onion.float64)._enabled is False
