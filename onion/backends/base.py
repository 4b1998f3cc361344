"""What a backend provides: an array namespace plus memory management.

Kernels written against ``xp`` (NumPy's API) run on any backend whose ``xp``
follows it; the rest of this interface is how tensors get memory and how views
are made over it.  To add a backend, subclass ``Backend`` and call
``register_backend`` (tests/backends/test_privateuse1.py; the out-of-tree kit: onion/utils/backend_registration.py,
examples/onion_npu).
"""
from __future__ import annotations

from ..core.dispatch_key import K


class Backend:
    """Base class; ``device_type`` names the device, ``key`` its dispatch key."""

    device_type = "?"
    key = K.PrivateUse1
    xp = None
    # an out-of-tree key (PrivateUse1-3) gets onion's kernels written against ``xp`` (the generated
    # register_privateuse1.py) when its ``xp`` follows NumPy's API; a backend that registers its own
    # kernels (the stub generator's output) and the CPU fallback for the rest sets this False
    xp_generic_kernels = True
    # tensors of this device always carry an index, as PyTorch's accelerators' do (``npu`` means ``npu:0``)
    indexed = False

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


_BUILT_IN_KEYS = (K.CPU, K.CUDA, K.Meta)
XP_GENERIC_LIBS: dict = {}      # device type -> the Library holding its xp-generic kernels


def register_backend(backend: Backend) -> None:
    """Make ``backend`` the runtime of its device type; a device type or key already served raises."""
    from ..core.tensor_impl import STORAGE_MAKERS

    taken = BACKENDS.get(backend.device_type)
    if taken is not None:
        raise RuntimeError(f"register_backend: device type '{backend.device_type}' already has a backend "
                           f"({type(taken).__name__}); unregister it first")
    taken = BACKEND_BY_KEY.get(backend.key)
    if taken is not None:
        raise RuntimeError(f"register_backend: dispatch key {backend.key.name} is already served by the "
                           f"'{taken.device_type}' backend ({type(taken).__name__})")
    BACKENDS[backend.device_type] = backend
    BACKEND_BY_KEY[backend.key] = backend
    STORAGE_MAKERS[backend.device_type] = lambda array, _b=backend: _b.storage_of(array, None)
    if backend.indexed:
        from ..core.device import _INDEXED_TYPES
        _INDEXED_TYPES.add(backend.device_type)
    if backend.xp_generic_kernels and backend.key not in _BUILT_IN_KEYS:
        from .._generated import register_privateuse1
        XP_GENERIC_LIBS[backend.device_type] = register_privateuse1.register(backend.key.name)


def unregister_backend(device_type: str) -> None:
    """Undo ``register_backend`` (its xp-generic kernels too); for tests and for backends that unload."""
    from ..core.tensor_impl import STORAGE_MAKERS

    backend = BACKENDS.pop(device_type, None)
    if backend is not None and BACKEND_BY_KEY.get(backend.key) is backend:
        del BACKEND_BY_KEY[backend.key]
    STORAGE_MAKERS.pop(device_type, None)
    if backend is not None and backend.indexed and device_type != "cuda":
        from ..core.device import _INDEXED_TYPES
        _INDEXED_TYPES.discard(device_type)
    lib = XP_GENERIC_LIBS.pop(device_type, None)
    if lib is not None:
        lib._destroy()


def backend_for(device) -> Backend:
    b = BACKENDS.get(device.type)
    if b is None:
        raise RuntimeError(f"onion has no backend for device type '{device.type}'"
                           + (" (install cupy to use CUDA)" if device.type == "cuda" else ""))
    return b
