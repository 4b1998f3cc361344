# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::relu on the PrivateUse1 backend of onion_npu."""
import numpy as np

import onion
from onion_npu.runtime import array_of, result_like_meta


def relu(self):
    """aten::relu(Tensor self) -> Tensor

    declared at onion/aten/native_functions.yaml:740; listed in backend.yaml:15 (supported: registered for PrivateUse1)
    meta: the ufunc iterator's meta (TensorIterator rules) (structured_delegate relu.out): onion/aten/iterator.py
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    """
    out = result_like_meta(onion.ops.aten.relu.default, self)
    a = array_of(self)
    array_of(out)[...] = np.maximum(a, np.zeros((), a.dtype))
    return out
