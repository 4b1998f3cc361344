"""``onion.memory_format`` and its four values, as ``torch.memory_format``.

The Python objects are what users pass; kernels receive the value's ``name``
(the argument parser converts), so a layout decision compares short strings.
"""
from __future__ import annotations


class memory_format:
    """A named memory layout; one object per name, so ``is`` and ``==`` agree."""

    __slots__ = ("name",)

    def __new__(cls, name: str):
        known = _BY_NAME.get(name)
        if known is not None:
            return known
        if _BY_NAME.get("_sealed"):
            raise TypeError(f"no memory format named {name!r}")
        self = object.__new__(cls)
        object.__setattr__(self, "name", name)
        _BY_NAME[name] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("onion.memory_format is immutable")

    def __repr__(self):
        return f"onion.{self.name}"

    def __reduce__(self):
        return (memory_format, (self.name,))


_BY_NAME: dict = {}
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_BY_NAME["_sealed"] = True

NAMES = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


def format_name(value) -> str:
    """The name of a memory format given as an object, a name, or None (contiguous_format)."""
    if value is None:
        return "contiguous_format"
    if isinstance(value, memory_format):
        return value.name
    if isinstance(value, str) and value in NAMES:
        return value
    raise TypeError(f"expected an onion.memory_format, got {type(value).__name__}")
