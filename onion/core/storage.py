"""``Storage``: the memory a tensor and all its views share.

The data is a flat byte array of the backend (a NumPy ``uint8`` array on CPU,
CuPy on CUDA, ``None`` on Meta), so one storage can be viewed with any dtype.
"""
from __future__ import annotations


class Storage:
    __slots__ = ("data", "_nbytes", "device", "__weakref__")

    def __init__(self, data, nbytes: int, device):
        self.data = data
        self._nbytes = nbytes
        self.device = device

    def size(self) -> int:
        return self._nbytes

    def nbytes(self) -> int:
        """The storage's size in bytes (a method, as torch.UntypedStorage.nbytes)."""
        return self._nbytes

    def data_ptr(self) -> int:
        if self.data is None:
            return 0
        return self.data.__array_interface__["data"][0] if hasattr(self.data, "__array_interface__") \
            else int(self.data.data.ptr)

    def __len__(self):
        return self._nbytes

    def __repr__(self):
        return f"<onion.UntypedStorage of {self._nbytes} bytes on {self.device}>"
