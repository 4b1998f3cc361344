# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::empty_strided on the PrivateUse1 backend of onion_npu."""
import onion
from onion_npu.runtime import empty_on


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    """aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device?
      device=None, bool? pin_memory=None) -> Tensor

    declared at onion/aten/native_functions.yaml:18; listed in backend.yaml:8 (supported: registered for PrivateUse1)
    meta: onion/aten/native/factories.py empty_strided
    symint: SymInt arguments arrive as Python ints (or onion SymInts)
    """
    return empty_on(size, stride, dtype or onion.get_default_dtype(), device)
