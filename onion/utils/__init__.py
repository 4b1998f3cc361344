"""Utilities with PyTorch's module names."""

from .operator_recording import record_operators  # noqa: E402,F401
