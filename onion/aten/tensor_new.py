"""Making result tensors: the per-call path every kernel ends in."""
from __future__ import annotations

import numpy as np

from ..backends import backend_for
from ..core import dtype as _dt
from ..core.device import CPU, device as _device
from ..core.dispatch_key import K, tensor_keyset
from ..core.promotion import scalar_dtype
from ..core.tensor import Tensor, make_tensor
from ..core.tensor_impl import TensorImpl
from ..core.tls import tls

_ndarray = np.ndarray
_asarray = np.asarray
_new = object.__new__

# fresh keysets per backend key, normal and inference
_FRESH = {k: tensor_keyset(k) for k in (K.CPU, K.CUDA, K.PrivateUse1, K.Meta)}
_FRESH_INFERENCE = {k: tensor_keyset(k, inference=True) for k in (K.CPU, K.CUDA, K.PrivateUse1, K.Meta)}
CPU_KS = _FRESH[K.CPU]
CPU_INFERENCE_KS = _FRESH_INFERENCE[K.CPU]


def wrap_cpu(array, dtype) -> Tensor:
    """A new CPU tensor over ``array`` (a NumPy result; 0-d scalars become arrays), an inference
    tensor inside inference mode.  Every CPU kernel ends here, so the impl's four fields are stored
    directly, which is cheaper than calling its constructor."""
    if type(array) is not _ndarray:
        array = _asarray(array)
    impl = _new(TensorImpl)
    impl._array = array
    impl.dtype = dtype
    impl.device = CPU
    if tls.inference_mode:
        impl.keyset = CPU_INFERENCE_KS
        impl._inference = True
    else:
        impl.keyset = CPU_KS
    t = _new(Tensor)
    t._impl = impl
    return t


def wrap(array, dtype, device) -> Tensor:
    """A new tensor of any backend over ``array``."""
    key = device._key
    if tls.inference_mode:
        impl = TensorImpl(array, dtype, device, _FRESH_INFERENCE[key])
        impl._inference = True
    else:
        impl = TensorImpl(array, dtype, device, _FRESH[key])
    return make_tensor(impl)


def empty_tensor(shape, dtype, device, strides=None) -> Tensor:
    b = backend_for(device)
    shape = tuple(shape)
    if strides is None:
        arr = b.empty(shape, dtype.np, device)
    else:
        arr = b.empty_strided(shape, tuple(strides), dtype.np, device)
    return wrap(arr, dtype, device)


def scalar_to_tensor(value, device=CPU) -> Tensor:
    """A 0-dim 'wrapped number' tensor, as PyTorch makes for Python scalars."""
    dt = scalar_dtype(value)
    try:
        arr = np.array(value, dtype=dt.np)
    except OverflowError:
        raise OverflowError(f"int too big to convert: {value} does not fit in int64") from None
    if device.type != "cpu":
        arr = backend_for(device).from_numpy(arr, device)
    t = wrap(arr, dt, device if device.type != "cpu" else CPU)
    t._impl.is_wrapped_number = True
    return t


def as_device(d):
    if d is None:
        return CPU
    return d if isinstance(d, _device) else _device(d)


__all__ = ["wrap_cpu", "wrap", "empty_tensor", "scalar_to_tensor", "CPU_KS", "CPU_INFERENCE_KS", "_dt"]
