"""The out-of-tree backend kit's Python half, as ``torch.utils.backend_registration``.

A vendor's package names its device (``rename_privateuse1_backend("npu")``), registers its
runtime module (``onion._register_device_module("npu", module)``: ``onion.npu`` then answers
``is_available()``, ``device_count()``, ``current_device()``...) and asks for the convenience
methods (``generate_methods_for_privateuse1_backend()``: ``Tensor.npu()``, ``Tensor.is_npu``,
and, where onion has the classes, the same on modules, packed sequences and storages).  The
kernels come from ``python -m onion.codegen.backend_stubs`` and the CPU fallback
(onion/backends/cpu_fallback.py).

Everything here monkey-patches classes or the ``onion`` module, as PyTorch's does; each change is
recorded so that ``_undo_privateuse1_registrations()`` can put the process back (tests).
"""
from __future__ import annotations

import sys

from ..core import device as _device_mod

__all__ = ["rename_privateuse1_backend", "generate_methods_for_privateuse1_backend"]

# (owner, attribute, had it before, the old value) for every attribute the kit set, newest last
_PATCHES: list = []


def rename_privateuse1_backend(backend_name: str) -> None:
    """Let ``backend_name`` be the device type of the PrivateUse1 key (``onion.device("npu")``,
    ``tensor.to("npu")``).  Allowed once per process; renaming again to the same name does nothing,
    and an in-tree device type (cpu, cuda, ...) is refused, as in PyTorch."""
    _device_mod.rename_privateuse1_backend(backend_name)


def _get_privateuse1_backend_name() -> str:
    return _device_mod._PRIVATE_NAME[0]


def _set(owner, attr: str, value) -> None:
    had = attr in vars(owner) if isinstance(owner, type) else hasattr(owner, attr)
    _PATCHES.append((owner, attr, had, getattr(owner, attr, None)))
    setattr(owner, attr, value)


def _check_register_once(owner, attr: str) -> None:
    if hasattr(owner, attr):
        raise RuntimeError(f"The custom device module of {owner} has already been registered with {attr}")


def _normalization_device(custom_backend_name: str, device=None) -> int:
    """The device index ``device`` (None, an int, "npu:1" or a device) names; None: the current one."""
    import onion

    def current():
        mod = getattr(onion, custom_backend_name, None)
        fn = getattr(mod, "current_device", None)
        return fn() if fn is not None else 0

    if device is None:
        return current()
    if isinstance(device, str):
        device = onion.device(device)
    if isinstance(device, onion.device):
        if device.type != custom_backend_name:
            raise RuntimeError(f"Invalid device, must be {custom_backend_name} device")
        return current() if device.index is None else device.index
    return device


def _generate_tensor_methods(name: str) -> None:
    import onion

    def is_backend(self) -> bool:
        return self.device.type == name
    is_backend.__name__ = f"is_{name}"
    _check_register_once(onion.Tensor, f"is_{name}")
    _set(onion.Tensor, f"is_{name}", property(is_backend))

    def to_backend(self, device=None, non_blocking=False, **kwargs):
        """A copy of this tensor on the custom device (``self`` when it is already there)."""
        index = _normalization_device(name, device)
        return self.to(device=onion.device(name, index), non_blocking=non_blocking, **kwargs)
    to_backend.__name__ = name
    _check_register_once(onion.Tensor, name)
    _set(onion.Tensor, name, to_backend)


def _generate_module_methods(name: str) -> None:
    import onion
    if not hasattr(onion.Tensor, name):
        raise RuntimeError(f"Can not automatically generate {name}() method for torch.nn.Module.Because "
                           f"torch.Tensor doesn't has the method {name}().For this error, you can try setting "
                           f"for_tensor=True.")
    module_cls = getattr(onion.nn, "Module", None)
    if module_cls is None:          # onion has no nn.Module yet: nothing to patch
        return

    def to_backend(self, device=None):
        return self._apply(lambda t: getattr(t, name)(device))
    _check_register_once(module_cls, name)
    _set(module_cls, name, to_backend)


def _generate_packed_sequence_methods(name: str) -> None:
    import onion
    if not hasattr(onion.Tensor, f"is_{name}") or not hasattr(onion.Tensor, name):
        raise RuntimeError(f"Can not automatically generate is_{name}() or {name}() method for "
                           f"torch.nn.utils.rnn.PackedSequence.Because torch.Tensor doesn't has the method "
                           f"is_{name}()or {name}().For this error, you can try setting for_tensor=True.")
    rnn = sys.modules.get("onion.nn.utils.rnn")
    cls = getattr(rnn, "PackedSequence", None)
    if cls is None:                 # onion has no PackedSequence yet: nothing to patch
        return
    _check_register_once(cls, f"is_{name}")
    _set(cls, f"is_{name}", property(lambda self: self.data.device.type == name))

    def to_backend(self, *args, **kwargs):
        kwargs.setdefault("device", name)
        return self.to(*args, **kwargs)
    _check_register_once(cls, name)
    _set(cls, name, to_backend)


def _generate_storage_methods(name: str, unsupported_dtype=None) -> None:
    import numpy as np

    import onion
    from ..backends.base import backend_for
    from ..core.storage import Storage

    _check_register_once(Storage, f"is_{name}")
    _set(Storage, f"is_{name}", property(lambda self: self.device.type == name))

    def to_backend(self, device=None, non_blocking=False):
        """This storage's bytes on the custom device (``self`` when already there)."""
        index = _normalization_device(name, device)
        target = onion.device(name, index)
        if self.device == target or (self.device.type == name and index == 0 and self.device.index is None):
            return self
        src = self.data if self.device.type == "cpu" else backend_for(self.device).to_numpy(self.data)
        backend = backend_for(target)
        return backend.storage_of(backend.from_numpy(np.array(src, copy=True), target), target)[0]
    _check_register_once(Storage, name)
    _set(Storage, name, to_backend)


def generate_methods_for_privateuse1_backend(for_tensor: bool = True, for_module: bool = True,
                                             for_packed_sequence: bool = True, for_storage: bool = False,
                                             unsupported_dtype=None) -> None:
    """Add ``Tensor.<name>()`` and ``Tensor.is_<name>`` for the renamed PrivateUse1 backend (and, as asked,
    the same on ``nn.Module``, ``PackedSequence`` and storages where onion has them).  Each attribute may
    be added once: a second call raises, as in PyTorch."""
    name = _get_privateuse1_backend_name()
    if for_tensor:
        _generate_tensor_methods(name)
    if for_module:
        _generate_module_methods(name)
    if for_storage:
        _generate_storage_methods(name, unsupported_dtype)
    if for_packed_sequence:
        _generate_packed_sequence_methods(name)


def _register_device_module(device_type, module) -> None:
    """``onion.<device_type>`` (and ``import onion.<device_type>``) is ``module``; the device type must be
    one onion knows (built in, a renamed PrivateUse1, or a registered type), and may be taken once."""
    import onion
    device_type = onion.device(device_type).type
    if hasattr(onion, device_type):
        raise RuntimeError(f"The runtime module of '{device_type}' has already been registered with "
                           f"'{getattr(onion, device_type)}'")
    _set(onion, device_type, module)
    qualified = f"onion.{device_type}"
    _PATCHES.append((sys.modules, qualified, qualified in sys.modules, sys.modules.get(qualified)))
    sys.modules[qualified] = module


def _get_custom_mod_func(func_name: str):
    """The function ``func_name`` of the renamed backend's registered module (``onion.npu.is_available``),
    with PyTorch's error when the module or the function is missing."""
    import onion
    if not isinstance(func_name, str):
        raise AssertionError(f"func_name must be `str`, but got `{type(func_name)}`.")
    name = _get_privateuse1_backend_name()
    fn = getattr(getattr(onion, name, None), func_name, None)
    if fn is None:
        raise RuntimeError(f"Try to call torch.{name}.{func_name}. The backend must register a custom backend "
                           f"module with `torch._register_device_module('{name}', BackendModule)`. And "
                           f"BackendModule needs to have the following API's:\n `{func_name}(*args, **kwargs)`. \n")
    return fn


def _undo_privateuse1_registrations() -> None:
    """Take back every attribute and module this kit added, newest first (tests; a real process keeps them)."""
    while _PATCHES:
        owner, attr, had, old = _PATCHES.pop()
        if owner is sys.modules:
            if had:
                sys.modules[attr] = old
            else:
                sys.modules.pop(attr, None)
        elif had:
            setattr(owner, attr, old)
        else:
            delattr(owner, attr)
