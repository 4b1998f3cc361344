# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::view on the PrivateUse1 backend of onion_npu."""
import onion
from onion.aten.native.views import make_view


def view(self, size):
    """aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)

    declared at onion/aten/native_functions.yaml:165; listed in backend.yaml:10 (supported: registered for PrivateUse1)
    meta: onion/aten/native/views.py view
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    symint: SymInt arguments arrive as Python ints (or onion SymInts)
    """
    # the geometry (and PyTorch's errors) from onion's Meta kernel; the alias shares self's storage
    m = onion.empty_strided(tuple(self.shape), self.stride(), dtype=self.dtype, device="meta").view(size)
    return make_view(self, tuple(m.shape), m.stride(), self.storage_offset())
