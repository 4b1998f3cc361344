"""``onion.types``: the type aliases PyTorch's annotations use (``torch.types``)."""
from __future__ import annotations

from typing import Union

from .core.device import device as Device  # noqa: F401
from .core.dtype import dtype as _dtype  # noqa: F401

# a Python number as an operator argument (schema type ``Scalar``)
Number = Union[int, float, bool]
