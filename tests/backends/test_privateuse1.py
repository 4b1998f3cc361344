"""Adding a backend from Python: a PrivateUse1 device whose arrays are NumPy's.

This is the recipe a new backend follows: subclass ``Backend``, register it,
name the device; every generated kernel then runs on it.
"""
import copy

import pytest

import onion
from onion.backends.base import BACKEND_BY_KEY, BACKENDS, register_backend, unregister_backend
from onion.backends.cpu import HostArrayBackend
from onion.core import device as _device
from onion.core.device import rename_privateuse1_backend
from onion.core.dispatch_key import K
from onion.core.tensor_impl import STORAGE_MAKERS


class ToyBackend(HostArrayBackend):
    device_type = "toy"
    key = K.PrivateUse1


def _registries():
    """Everything registering a backend and renaming PrivateUse1 writes to."""
    return (_device._PRIVATE_NAME, _device._BACKEND_OF_TYPE, _device._CACHE, _device._DEVICE_TYPE_NUMBER, BACKENDS,
            BACKEND_BY_KEY, STORAGE_MAKERS)


@pytest.fixture(scope="module")
def toy():
    """The toy backend, named "toy"; afterwards the PrivateUse1 name, the device types and the
    registered backends are what they were before."""
    saved = [copy.copy(r) for r in _registries()]
    try:
        rename_privateuse1_backend("toy")
        register_backend(ToyBackend())
        yield onion.device("toy")
    finally:
        unregister_backend("toy")      # its xp-generic kernels too
        for registry, before in zip(_registries(), saved):
            if isinstance(registry, list):
                registry[:] = before
            else:
                registry.clear()
                registry.update(before)


def test_factories_ops_and_views_run_on_a_new_backend(toy):
    a = onion.ones(2, 3, device=toy)
    b = onion.arange(6.0, device=toy).reshape(2, 3)
    assert str(onion._C._dispatch_key_set(a)) == "DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1, AutocastPrivateUse1)"
    c = a + b * 2
    assert c.device == toy and c.dtype is onion.float32
    assert c.cpu().tolist() == [[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]]
    assert c.t().cpu().tolist() == [[1.0, 7.0], [3.0, 9.0], [5.0, 11.0]]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + onion.ones(2, 3)
    assert (a + onion.tensor(1.0)).cpu().tolist() == [[2.0] * 3] * 2   # CPU scalars may join


def test_outputs_on_another_device_are_refused_in_tensoriterators_words(toy):
    """Off Meta, PyTorch's C++ TensorIterator speaks: it names the output's device first."""
    a = onion.ones(2, 3, device=toy)
    out = onion.full((2, 3), 7.0)
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device, but found at least two "
                                           "devices, cpu and toy!$"):
        onion.add(a, a, out=out)
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device, but found at least two "
                                           "devices, cpu and toy!$"):
        onion.tensor(1.0).add_(a)        # a CPU scalar joins as an input, never as the output
    assert out.tolist() == [[7.0] * 3] * 2 and out._version == 0
