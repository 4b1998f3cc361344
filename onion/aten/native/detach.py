"""``detach`` and ``lift_fresh``: aliases without history, operators so that modes see them.

``x.detach()`` is a new tensor over the same storage and version counter, outside the autograd graph and
not a view (PyTorch's detach result has no ``_base``); its autograd entry records nothing.
``lift_fresh`` is what ``onion.tensor(...)`` hands a freshly made tensor to: the identity, so that a mode
sees the new tensor (PyTorch's FakeTensorMode turns it into a fake one there).
"""
from __future__ import annotations

from ...core.tensor import make_tensor


def detach(self):
    return make_tensor(self._impl.shallow_copy_and_detach())


def lift_fresh(self):
    return self
