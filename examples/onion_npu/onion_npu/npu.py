"""``onion.npu``: the device module (``onion._register_device_module("npu", ...)``), with the functions
PyTorch's PrivateUse1 machinery asks a backend module for."""
from __future__ import annotations

import onion

_current = [0]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return _current[0]


def set_device(device) -> None:
    index = device if isinstance(device, int) else onion.device(device).index or 0
    if not 0 <= index < device_count():
        raise RuntimeError(f"Invalid device index {index} for the npu backend ({device_count()} device)")
    _current[0] = index


def synchronize(device=None) -> None:
    """NumPy computes eagerly: nothing is ever in flight."""


def _is_in_bad_fork() -> bool:
    return False


def manual_seed_all(seed: int) -> None:
    """The npu draws from onion's CPU generator (its random operators fall back to the CPU)."""
    onion.manual_seed(seed)


def get_amp_supported_dtype():
    return [onion.float16, onion.bfloat16]
