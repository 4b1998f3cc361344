"""``onion.device``: a device type and index, as ``torch.device``."""
from __future__ import annotations

from .dispatch_key import K

_BACKEND_OF_TYPE = {"cpu": K.CPU, "cuda": K.CUDA, "meta": K.Meta, "privateuseone": K.PrivateUse1}


class device:
    """Immutable (type, index) pair; ``device("cuda:1")`` or ``device("cuda", 1)``."""

    __slots__ = ("type", "index", "_key")

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            if index is not None:
                raise TypeError("device(): device object given together with an index")
            return type_or_str
        if isinstance(type_or_str, int) and not isinstance(type_or_str, bool):
            type_or_str, index = "cuda", type_or_str
        if not isinstance(type_or_str, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type(type_or_str).__name__})")
        text = type_or_str.strip()
        dev_type, _, idx_text = text.partition(":")
        if idx_text:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {text}")
            if not idx_text.isdigit():
                raise RuntimeError(f"Invalid device string: '{text}'")
            index = int(idx_text)
        if dev_type not in _BACKEND_OF_TYPE and dev_type != _PRIVATE_NAME[0]:
            raise RuntimeError(
                "Expected one of cpu, cuda, meta, privateuseone device type at start of device string: " + text)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        key = (dev_type, index)
        cached = _CACHE.get(key)
        if cached is not None:
            return cached
        self = object.__new__(cls)
        object.__setattr__(self, "type", dev_type)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "_key", _BACKEND_OF_TYPE.get(dev_type, K.PrivateUse1))
        _CACHE[key] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("onion.device is immutable")

    @property
    def backend_key(self):
        return self._key

    def __eq__(self, other):
        # as torch.device: only another device can be equal (a string or a number never is)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __ne__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self.type != other.type or self.index != other.index

    def __hash__(self):
        # std::hash<c10::Device>: the DeviceType number in bits 16..23, the index as a uint8 below it
        return (_DEVICE_TYPE_NUMBER.get(self.type, 20) << 16) | ((-1 if self.index is None else self.index) & 0xFF)

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))


_CACHE: dict = {}
# c10::DeviceType's numbers for the types onion knows (PrivateUse1, under any name, is 20)
_DEVICE_TYPE_NUMBER = {"cpu": 0, "cuda": 1, "meta": 14, "privateuseone": 20}
_PRIVATE_NAME = ["privateuseone"]


def rename_privateuse1_backend(name: str) -> None:
    """Let ``device("name")`` mean the PrivateUse1 backend, as torch.utils does."""
    _PRIVATE_NAME[0] = name
    _BACKEND_OF_TYPE[name] = K.PrivateUse1


def canonical(dev) -> "device":
    """Accept a device, a string or None (cpu); cuda without index means cuda:0."""
    if dev is None:
        return CPU
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda" and d.index is None:
        return device("cuda", 0)
    if d.type == "cpu" and d.index is not None:
        return CPU
    return d


CPU = device("cpu")
META = device("meta")
