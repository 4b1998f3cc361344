# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::copy_ on the PrivateUse1 backend of onion_npu."""
import numpy as np

from onion_npu.runtime import array_of


def copy_(self, src, non_blocking=False):
    """aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)

    declared at onion/aten/native_functions.yaml:133; listed in backend.yaml:9 (supported: registered for PrivateUse1)
    meta: onion/aten/native/copy.py copy_
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    """
    # copy_ meets tensors of both devices (to and from the CPU); the values go through NumPy
    if self.device.type == "meta" or src.device.type == "meta":
        raise NotImplementedError("copy_: the npu backend does not copy to or from meta tensors")
    if self.dtype.is_complex is False and src.dtype.is_complex:
        values = np.real(array_of(src.resolve_conj()))
    else:
        values = array_of(src.resolve_conj().resolve_neg())
    if self.dtype.name == "bool":
        values = values != 0
    dst = array_of(self)
    dst[...] = np.broadcast_to(np.asarray(values).astype(dst.dtype, copy=False), dst.shape)
    self._impl.bump_version()
    return self

