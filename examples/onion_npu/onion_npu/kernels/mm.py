# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::mm on the PrivateUse1 backend of onion_npu."""
import numpy as np

import onion
from onion.backends.device_check import check_same_device
from onion_npu.runtime import array_of, result_like_meta


def mm(self, mat2):
    """aten::mm(Tensor self, Tensor mat2) -> Tensor

    declared at onion/aten/native_functions.yaml:1243; listed in backend.yaml:14 (supported: registered for PrivateUse1)
    meta: onion/aten/native/linalg.py meta_mm (structured_delegate mm.out)
    """
    check_same_device("mm", (("self", self), ("mat2", mat2)))
    out = result_like_meta(onion.ops.aten.mm.default, self, mat2)
    array_of(out)[...] = np.matmul(array_of(self), array_of(mat2))
    return out
