# A kernel stub written by `python -m onion.codegen.backend_stubs`; filled in by hand.

"""aten::sum.dim_IntList on the PrivateUse1 backend of onion_npu."""
import numpy as np

import onion
from onion_npu.runtime import array_of, result_like_meta


def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    """aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor

    declared at onion/aten/native_functions.yaml:1137; listed in backend.yaml:13 (supported: registered for PrivateUse1)
    meta: onion/aten/native/reductions.py meta_sum (structured_delegate sum.IntList_out)
    device_check: NoCheck (the kernel checks its tensors' devices itself, as TensorIterator does:
      onion.backends.device_check.check_same_device)
    """
    out = result_like_meta(onion.ops.aten.sum.dim_IntList, self, dim, keepdim, dtype=dtype)
    a = array_of(self)
    if a.ndim == 0:
        array_of(out)[...] = a.astype(out.dtype.np)
        return out
    axes = tuple(range(a.ndim)) if not dim else tuple(d % a.ndim for d in dim)
    array_of(out)[...] = np.sum(a, axis=axes, dtype=out.dtype.np, keepdims=keepdim)
    return out
