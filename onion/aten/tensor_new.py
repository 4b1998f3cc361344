"""Making result tensors: the per-call path every kernel ends in."""
from __future__ import annotations

import numpy as np

from ..backends import backend_for
from ..core import dtype as _dt
from ..core.device import CPU, device as _device
from ..core.dispatch_key import BACKEND_KEYS, K, tensor_keyset
from ..core.promotion import _SCALAR_DTYPE, scalar_dtype
from ..core.tensor import Tensor, make_tensor
from ..core.tensor_impl import TensorImpl, WrappedNumberImpl, make_impl
from ..core.tls import state as _tls_state

_ndarray = np.ndarray
_asarray = np.asarray

# fresh keysets per backend key, normal and inference
_FRESH = {k: tensor_keyset(k) for k in BACKEND_KEYS}
_FRESH_INFERENCE = {k: tensor_keyset(k, inference=True) for k in BACKEND_KEYS}
CPU_KS = _FRESH[K.CPU]
CPU_INFERENCE_KS = _FRESH_INFERENCE[K.CPU]


def wrap_cpu(array, dtype) -> Tensor:
    """A new CPU tensor over ``array`` (a NumPy result; 0-d scalars become arrays), an inference
    tensor inside inference mode.  Every CPU kernel ends here, so the impl's slots are stored
    directly, which is cheaper than calling its constructor."""
    if type(array) is not _ndarray:
        array = _asarray(array)
    impl = TensorImpl()
    impl._array = array
    impl.dtype = dtype
    impl.device = CPU
    impl.requires_grad = False
    impl._base = None
    if _tls_state().inference_mode:
        impl.keyset = CPU_INFERENCE_KS
        impl._inference = True
    else:
        impl.keyset = CPU_KS
        impl._inference = False
    t = Tensor()
    t._impl = impl
    return t


def wrap(array, dtype, device) -> Tensor:
    """A new tensor of any backend over ``array``."""
    key = device._key
    if _tls_state().inference_mode:
        impl = make_impl(array, dtype, device, _FRESH_INFERENCE[key])
        impl._inference = True
    else:
        impl = make_impl(array, dtype, device, _FRESH[key])
    return make_tensor(impl)


def empty_tensor(shape, dtype, device, strides=None) -> Tensor:
    b = backend_for(device)
    shape = tuple(shape)
    if device.type == "meta":       # nothing is allocated, so nothing else would notice
        check_storage_size(shape, dtype.itemsize, strides)
    try:
        if strides is None:
            arr = b.empty(shape, dtype.np, device)
        else:
            strides = tuple(strides)
            arr = b.empty_strided(shape, strides, dtype.np, device)
    except (ValueError, MemoryError) as e:
        raise allocation_error(shape, dtype.itemsize, e, strides) from None
    if strides is not None and 0 in shape:      # an empty array cannot tell its strides: the impl keeps them
        t = wrap(arr, dtype, device)
        t._impl._strides = strides
        return t
    return wrap(arr, dtype, device)


# --- sizes NumPy cannot hold: PyTorch's RuntimeErrors instead of NumPy's ValueError / MemoryError ------
# Checked only once an allocation or a view has failed (or on Meta, which allocates nothing), so the
# common call pays nothing for them.

_MAX_NBYTES = 2 ** 63 - 1
MAX_DIMS = 64       # NumPy's limit on an array's rank (PyTorch has none)


def _storage_numel(shape, strides) -> int:
    if strides is None:
        n = 1
        for s in shape:
            n *= s
        return n
    return 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0


def check_storage_size(shape, itemsize, strides=None) -> None:
    """c10's computeStorageNbytes overflow check: the bytes a tensor of this geometry spans fit in int64."""
    n = _storage_numel(shape, strides)
    if n * itemsize > _MAX_NBYTES or (strides is not None and any(st < 0 for st in strides)):
        where = f"sizes={list(shape)}" + ("" if strides is None else f" and strides={list(strides)}")
        raise RuntimeError(f"Storage size calculation overflowed with {where}")


def too_many_dims(ndim: int) -> RuntimeError:
    return RuntimeError(f"onion cannot make a tensor with {ndim} dimensions: its tensors are NumPy arrays, which "
                        f"have at most {MAX_DIMS} (PyTorch has no such limit)")


def view_error(sizes, exc) -> BaseException:
    """The error to raise where NumPy refused a view's array (PyTorch would have made it)."""
    if len(sizes) > MAX_DIMS:
        return too_many_dims(len(sizes))
    if "too big" in str(exc) or "Maximum allowed dimension" in str(exc):
        return RuntimeError(f"onion cannot view a tensor of sizes {list(sizes)}: its tensors are NumPy arrays, "
                            f"whose sizes in bytes must fit in int64 even when strides are 0 ({exc})")
    return exc


def allocation_error(shape, itemsize, exc, strides=None) -> BaseException:
    """The error to raise where the backend failed to make an array of ``shape``: too many dimensions,
    a size that overflows, or memory that is not there (RuntimeErrors in PyTorch); else ``exc`` itself."""
    if len(shape) > MAX_DIMS:
        return too_many_dims(len(shape))
    check_storage_size(shape, itemsize, strides)
    if isinstance(exc, MemoryError) or "too big" in str(exc):
        return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                            f"{_storage_numel(shape, strides) * itemsize} bytes ({exc})")
    return exc


def scalar_to_tensor(value, device=CPU) -> Tensor:
    """A 0-dim 'wrapped number' tensor, as PyTorch makes for Python scalars (made for every ``h * 1.01``,
    so on CPU its slots are stored here, as ``wrap_cpu`` stores them)."""
    dt = _SCALAR_DTYPE.get(type(value))
    if dt is None:
        dt = scalar_dtype(value)
    try:
        arr = np.array(value, dt.np)
    except OverflowError:
        raise OverflowError(f"int too big to convert: {value} does not fit in int64") from None
    impl = WrappedNumberImpl()
    impl.wrapped_value = value      # the Python number itself, for kernels that hand it to NumPy as it is
    impl.dtype = dt
    impl.requires_grad = False
    impl._base = None
    inference = _tls_state().inference_mode
    impl._inference = inference
    if device.type != "cpu":
        impl._array = backend_for(device).from_numpy(arr, device)
        impl.device = device
        impl.keyset = (_FRESH_INFERENCE if inference else _FRESH)[device._key]
    else:
        impl._array = arr
        impl.device = CPU
        impl.keyset = CPU_INFERENCE_KS if inference else CPU_KS
    t = Tensor()
    t._impl = impl
    return t


def as_device(d):
    if d is None:
        return CPU
    return d if isinstance(d, _device) else _device(d)


__all__ = ["wrap_cpu", "wrap", "empty_tensor", "scalar_to_tensor", "CPU_KS", "CPU_INFERENCE_KS", "_dt",
           "check_storage_size", "allocation_error", "view_error", "too_many_dims", "MAX_DIMS"]
