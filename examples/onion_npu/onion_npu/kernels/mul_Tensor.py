# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::mul.Tensor on the PrivateUse1 backend of onion_npu."""
import numpy as np

import onion
from onion.backends.device_check import check_same_device
from onion_npu.runtime import array_of, result_like_meta


def mul_Tensor(self, other):
    """aten::mul.Tensor(Tensor self, Tensor other) -> Tensor

    declared at onion/aten/native_functions.yaml:352; listed in backend.yaml:12 (supported: registered for PrivateUse1)
    meta: the ufunc iterator's meta (TensorIterator rules) (structured_delegate mul.out): onion/aten/iterator.py
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    """
    check_same_device("mul", (("self", self), ("other", other)), allow_cpu_scalars=True)
    out = result_like_meta(onion.ops.aten.mul.Tensor, self, other)
    dt = out.dtype.np
    array_of(out)[...] = np.multiply(array_of(self).astype(dt), array_of(other).astype(dt))
    return out
