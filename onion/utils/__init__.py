"""Utilities with PyTorch's module names."""
from .backend_registration import generate_methods_for_privateuse1_backend, rename_privateuse1_backend  # noqa: F401
from .operator_recording import record_operators  # noqa: F401
