# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::empty.memory_format on the PrivateUse1 backend of onion_npu."""
import onion
from onion_npu.runtime import empty_on


def empty_memory_format(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
      bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor

    declared at onion/aten/native_functions.yaml:13; listed in backend.yaml:7 (supported: registered for PrivateUse1)
    meta: onion/aten/native/factories.py empty_memory_format
    symint: SymInt arguments arrive as Python ints (or onion SymInts)
    """
    dtype = dtype or onion.get_default_dtype()
    if memory_format in (None, onion.contiguous_format, onion.preserve_format):
        return empty_on(size, None, dtype, device)
    # channels_last: the geometry onion's Meta kernel gives
    m = onion.empty(size, dtype=dtype, device="meta", memory_format=memory_format)
    return empty_on(size, m.stride(), dtype, device)
