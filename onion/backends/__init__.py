"""Backends: CPU (NumPy), Meta (no data), CUDA (CuPy, when available)."""
from . import cpu, cuda, meta  # noqa: F401  (registration on import)
from .base import BACKEND_BY_KEY, BACKENDS, Backend, backend_for, register_backend, unregister_backend  # noqa: F401
