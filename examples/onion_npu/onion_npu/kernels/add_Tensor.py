# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::add.Tensor on the PrivateUse1 backend of onion_npu."""
import numpy as np

import onion
from onion.backends.device_check import check_same_device
from onion_npu.runtime import array_of, result_like_meta


def add_Tensor(self, other, *, alpha=1):
    """aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor

    declared at onion/aten/native_functions.yaml:271; listed in backend.yaml:11 (supported: registered for PrivateUse1)
    meta: the ufunc iterator's meta (TensorIterator rules) (structured_delegate add.out): onion/aten/iterator.py
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    """
    check_same_device("add", (("self", self), ("other", other)), allow_cpu_scalars=True)
    out = result_like_meta(onion.ops.aten.add.Tensor, self, other, alpha=alpha)
    dt = out.dtype.np
    b = array_of(other).astype(dt)
    array_of(out)[...] = np.add(array_of(self).astype(dt), b if alpha == 1 else b * np.asarray(alpha).astype(dt))
    return out
