"""onion_npu: an out-of-tree onion backend built with the kit.

Importing it names PrivateUse1 ``npu``, registers the runtime (runtime.py) and the device module
(``onion.npu``), adds ``Tensor.npu()`` / ``Tensor.is_npu``, registers the kernels the stub generator
wrote the glue for (register_privateuse1.py, from backend.yaml; bodies in kernels/) and the CPU
fallback for every other operator.
"""
from __future__ import annotations

import onion
from onion.backends.base import register_backend, unregister_backend
from onion.backends.cpu_fallback import register_cpu_fallback
from onion.utils import backend_registration as _kit

from . import npu, register_privateuse1
from .runtime import NPUBackend

_LIBS: list = []


def _load() -> None:
    onion.utils.rename_privateuse1_backend("npu")
    register_backend(NPUBackend())
    onion._register_device_module("npu", npu)
    onion.utils.generate_methods_for_privateuse1_backend()
    _LIBS.append(register_privateuse1.register())
    _LIBS.append(register_cpu_fallback("PrivateUse1"))


def _unload() -> None:
    """Undo ``_load`` (tests do, to leave the process as they found it); import the package anew to reload."""
    import sys
    from onion.core.device import unregister_device_type
    while _LIBS:
        _LIBS.pop()._destroy()
    _kit._undo_privateuse1_registrations()
    unregister_backend("npu")
    unregister_device_type("npu")
    for name in [m for m in sys.modules if m == __name__ or m.startswith(__name__ + ".")]:
        del sys.modules[name]


_load()
