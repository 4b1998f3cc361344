"""``detach`` and ``lift_fresh``: aliases without history, operators so that modes see them.

``x.detach()`` is a new tensor over the same storage and version counter, outside the autograd graph and
not a view (PyTorch's detach result has no ``_base``); its autograd entry records nothing.
``lift_fresh`` is what ``onion.tensor(...)`` hands a freshly made tensor to: the identity, so that a mode
sees the new tensor (PyTorch's FakeTensorMode turns it into a fake one there).
"""
from __future__ import annotations

from ...core.tensor import make_tensor
from ...core.tensor_impl import TensorImpl


def detach(self):
    impl = self._impl
    d = TensorImpl(impl._array, impl.dtype, impl.device, impl.keyset)
    d._vc = impl.version_counter()
    if impl._storage is not None:
        d._storage, d._offset = impl._storage, impl._offset
    if impl._strides is not None:
        d._strides = impl._strides
    if impl._inference:
        d._inference = True
    return make_tensor(d)


def lift_fresh(self):
    return self
