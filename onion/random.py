"""``torch.random``: the default CPU generator's seed and state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from typing import Generator as _PyGenerator

from .core.generator import Generator, default_generator

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng"]


def set_rng_state(new_state) -> None:
    """Set the default CPU generator's state (a ByteTensor in PyTorch's layout, as get_rng_state gives)."""
    default_generator.set_state(new_state)


def get_rng_state():
    """The default CPU generator's state as a ByteTensor (PyTorch's 5056-byte CPUGeneratorImplState)."""
    return default_generator.get_state()


def manual_seed(seed) -> Generator:
    """Seed the default CPU generator (as torch.manual_seed, ``int(seed)`` first) and return it; as
    torch.manual_seed seeds every CUDA device too, so does this when a CUDA backend is there."""
    g = default_generator.manual_seed(int(seed))
    _seed_cuda(int(seed))
    return g


def _seed_cuda(seed: int) -> None:
    from .backends.base import BACKENDS
    cuda = BACKENDS.get("cuda")
    if cuda is not None:
        for i in range(cuda.device_count()):
            cuda.manual_seed(seed, i)


def seed() -> int:
    """Seed the default CPU generator from the OS and return that seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None) -> _PyGenerator:
    """Run the block with the default generator's state restored afterwards (CPU only: onion's
    accelerator backends keep no generator of their own)."""
    if not enabled:
        yield
        return
    saved = default_generator.snapshot()
    try:
        yield
    finally:
        default_generator.restore_state(saved)
