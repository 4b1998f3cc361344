"""``onion.strided``, as ``torch.strided``: a layout is its name (kernels compare ``layout == "strided"``)
that prints as the object PyTorch users see (``onion.strided``, in a mode's record too)."""
from __future__ import annotations


class layout(str):
    __slots__ = ()

    def __repr__(self):
        return f"onion.{str.__str__(self)}"

    __str__ = __repr__


strided = layout("strided")
