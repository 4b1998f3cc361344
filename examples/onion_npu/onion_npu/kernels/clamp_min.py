# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::clamp_min on the PrivateUse1 backend of onion_npu."""
import numpy as np

import onion
from onion_npu.runtime import array_of, result_like_meta


def clamp_min(self, min):
    """aten::clamp_min(Tensor self, Scalar min) -> Tensor

    declared at onion/aten/native_functions.yaml:1622; listed in backend.yaml:16 (supported: registered for PrivateUse1)
    meta: the ufunc iterator's meta (TensorIterator rules) (structured_delegate clamp_min.out): onion/aten/iterator.py
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    """
    out = result_like_meta(onion.ops.aten.clamp_min.default, self, min)
    dt = out.dtype.np
    array_of(out)[...] = np.maximum(array_of(self).astype(dt), np.asarray(min).astype(dt))
    return out
