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
        if dev_type not in _BACKEND_OF_TYPE:
            raise RuntimeError(f"Expected one of {', '.join(_BACKEND_OF_TYPE)} device type at start of device "
                               f"string: {text}")
        if dev_type == "privateuseone":         # PyTorch's own name for PrivateUse1 still works after a rename
            dev_type = _PRIVATE_NAME[0]
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
# device types whose tensors always carry an index (``cuda`` means ``cuda:0``); a backend joins with
# ``Backend.indexed = True`` (onion/backends/base.py register_backend)
_INDEXED_TYPES = {"cuda"}


# device types PyTorch itself refuses as a PrivateUse1 name (c10's in-tree accelerators)
_IN_TREE_NAMES = frozenset(("cpu", "cuda", "hip", "mps", "xpu", "mtia"))


def rename_privateuse1_backend(name: str) -> None:
    """Let ``device("name")`` mean the PrivateUse1 backend, as torch.utils does: once per process (renaming
    again to the same name is allowed), never to an in-tree device type or to one another backend named."""
    if not isinstance(name, str) or not name.isidentifier():
        raise RuntimeError(f"Invalid privateuse1 backend name: {name!r} (expected an identifier)")
    current = _PRIVATE_NAME[0]
    if current != "privateuseone":
        if name == current:
            return
        raise RuntimeError(f"torch.register_privateuse1_backend() has already been set! Current backend: {current}")
    if name in _IN_TREE_NAMES:
        raise RuntimeError(f"Cannot register privateuse1 backend with in-tree device name: {name}")
    if name in _BACKEND_OF_TYPE and name != "privateuseone":
        raise RuntimeError(f"Cannot register privateuse1 backend with device name '{name}': it already names the "
                           f"{_BACKEND_OF_TYPE[name].name} backend")
    _PRIVATE_NAME[0] = name
    _BACKEND_OF_TYPE[name] = K.PrivateUse1
    _DEVICE_TYPE_NUMBER[name] = 20


def register_device_type(name: str, key, number: int | None = None) -> None:
    """Name a device type for another backend key (PrivateUse2, PrivateUse3): ``device(name)`` then means
    that key, as ``rename_privateuse1_backend`` does for PrivateUse1.  ``number`` stands in for c10's
    DeviceType number in ``hash(device)`` (PyTorch has none for these keys).  Registering the same name
    for the same key again is a no-op; a name already taken raises."""
    if not isinstance(name, str) or not name.isidentifier():
        raise RuntimeError(f"Invalid device type name: {name!r} (expected an identifier)")
    key = K[key] if isinstance(key, str) else K(key)
    taken = _BACKEND_OF_TYPE.get(name)
    if taken is not None:
        if taken is key:
            return
        raise RuntimeError(f"Device type '{name}' is already registered for the {taken.name} backend")
    if name in _IN_TREE_NAMES:
        raise RuntimeError(f"Cannot register device type with in-tree device name: {name}")
    if key is K.PrivateUse1:
        raise RuntimeError("register_device_type: name PrivateUse1 with rename_privateuse1_backend")
    _BACKEND_OF_TYPE[name] = key
    _DEVICE_TYPE_NUMBER[name] = number if number is not None else 64 + int(key)


def unregister_device_type(name: str) -> None:
    """Forget a device type ``register_device_type`` (or a rename) added, and its cached devices (tests)."""
    if name in ("cpu", "cuda", "meta", "privateuseone"):
        raise RuntimeError(f"unregister_device_type: '{name}' is built in")
    _BACKEND_OF_TYPE.pop(name, None)
    _DEVICE_TYPE_NUMBER.pop(name, None)
    for k in [k for k in _CACHE if k[0] == name]:
        del _CACHE[k]
    if _PRIVATE_NAME[0] == name:
        _PRIVATE_NAME[0] = "privateuseone"


def device_type_of_key(key) -> str:
    """The device type that names a backend key now (``privateuseone`` until PrivateUse1 is renamed)."""
    if key == K.PrivateUse1:
        return _PRIVATE_NAME[0]
    for name, k in _BACKEND_OF_TYPE.items():
        if k == key:
            return name
    return K(key).name.lower()


def canonical(dev) -> "device":
    """Accept a device, a string or None (cpu); cuda (or an indexed backend's type) without index means index 0."""
    if dev is None:
        return CPU
    d = dev if isinstance(dev, device) else device(dev)
    if d.index is None:
        return device(d.type, 0) if d.type in _INDEXED_TYPES else d
    if d.type == "cpu":
        return CPU
    return d


CPU = device("cpu")
META = device("meta")
