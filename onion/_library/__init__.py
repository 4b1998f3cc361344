"""The machinery behind ``onion.library``'s high-level API (PyTorch's ``torch/_library``)."""
