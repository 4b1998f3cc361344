"""What a backend provides: an array namespace plus memory management.

Kernels written against ``xp`` (NumPy's API) run on any backend whose ``xp``
follows it; the rest of this interface is how tensors get memory and how views
are made over it.  To add a backend, subclass ``Backend`` and call
``register_backend`` (see ``privateuse1.py``).
"""
from __future__ import annotations

from ..core.dispatch_key import K


class Backend:
    """Base class; ``device_type`` names the device, ``key`` its dispatch key."""

    device_type = "?"
    key = K.PrivateUse1
    xp = None

    def empty(self, shape, np_dtype, device):
        raise NotImplementedError

    def empty_strided(self, shape, strides, np_dtype, device):
        """A fresh array with the given element strides (dense, any permutation)."""
        raise NotImplementedError

    def view(self, storage, shape, strides, offset, np_dtype):
        """An array over ``storage`` with element strides and offset (no copy)."""
        raise NotImplementedError

    def storage_of(self, array, device):
        """(Storage, element offset) for an array this backend made."""
        raise NotImplementedError

    def to_numpy(self, array):
        raise NotImplementedError

    def from_numpy(self, array, device):
        raise NotImplementedError

    def asarray(self, array, device):
        """Any array-like (NumPy, this backend's) as this backend's array."""
        return self.from_numpy(array, device)


BACKENDS: dict[str, Backend] = {}
BACKEND_BY_KEY: dict = {}


def register_backend(backend: Backend) -> None:
    from ..core.tensor_impl import STORAGE_MAKERS

    BACKENDS[backend.device_type] = backend
    BACKEND_BY_KEY[backend.key] = backend
    STORAGE_MAKERS[backend.device_type] = lambda array, _b=backend: _b.storage_of(array, None)


# what PyTorch built without CUDA says as "Torch not compiled with CUDA enabled" (an AssertionError there too)
NO_CUDA = "onion has no CUDA: install onion[cuda] (CuPy) on a machine with an NVIDIA GPU"


def backend_for(device) -> Backend:
    b = BACKENDS.get(device.type)
    if b is None:
        if device.type == "cuda":
            raise AssertionError(NO_CUDA)
        raise RuntimeError(f"onion has no backend for device type '{device.type}'")
    return b
