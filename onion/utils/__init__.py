"""Utilities with PyTorch's module names."""
