"""DLPack (``torch.utils.dlpack``): zero-copy exchange of tensors with NumPy, PyTorch, CuPy, JAX...

The DLPack structures are written here with ``ctypes`` rather than borrowed from NumPy's
``__dlpack__``, because NumPy exports neither bfloat16 (ml_dtypes' dtype) nor a read-only flag, and
imports no bfloat16 either.  A CPU tensor is exported as a ``DLManagedTensor`` (capsule ``"dltensor"``)
or, when the consumer asks for DLPack >= 1.0 through ``max_version``, a ``DLManagedTensorVersioned``
(``"dltensor_versioned"``); either points into the tensor's own storage, which the capsule keeps alive
until the consumer calls the deleter (or until the capsule dies unconsumed).  Importing reads the same
structures and builds a NumPy array over the memory (``__array_interface__``), then a tensor over that
array, so writes through either side are seen by the other.  CUDA goes through CuPy, which speaks the
same protocol: a CUDA tensor exports its CuPy array's capsule, and a producer on a CUDA device is
imported with ``cupy.from_dlpack``.

Differences from PyTorch: a tensor with the negative bit set is refused (PyTorch exports the memory
without the negation, so the consumer would read the wrong sign); resolve it first.
"""
from __future__ import annotations

import ctypes
import enum
import itertools
import threading

import numpy as np

__all__ = ["DLDeviceType", "to_dlpack", "from_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (as ``torch.utils.dlpack.DLDeviceType``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# DLDataTypeCode
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_READ_ONLY, _IS_COPIED = 1, 2          # DLManagedTensorVersioned.flags bits
_VERSION = (1, 0)                      # the DLPack version the versioned capsules carry


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    pass


_DeleterVersioned = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensorVersioned))
_DLManagedTensorVersioned._fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                      ("deleter", _DeleterVersioned), ("flags", ctypes.c_uint64),
                                      ("dl_tensor", _DLTensor)]

_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_USED = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

_api = ctypes.pythonapi
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CapsuleDestructor)(
    ("PyCapsule_New", _api))
_capsule_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", _api))
_capsule_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", _api))
# the destructor gets the dying capsule as a bare pointer (a py_object argument would revive it)
_raw_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(("PyCapsule_GetName", _api))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# manager_ctx -> what an exported capsule keeps alive (the structure, its shape/strides, the array)
_EXPORTED: dict = {}
_CTX = itertools.count(1)
_LOCK = threading.Lock()


def _release(ctx) -> None:
    with _LOCK:
        _EXPORTED.pop(ctx, None)


@_Deleter
def _deleter(ptr):
    _release(ptr.contents.manager_ctx)


@_DeleterVersioned
def _deleter_versioned(ptr):
    _release(ptr.contents.manager_ctx)


@_CapsuleDestructor
def _capsule_destructor(capsule):
    """A capsule that dies unconsumed (still named ``dltensor``) releases what it holds."""
    try:
        name = _raw_get_name(capsule)
        if name not in (_NAME, _NAME_VERSIONED):
            return                               # consumed: the consumer owns the deleter now
        ptr = _raw_get_pointer(capsule, name)
        cls = _DLManagedTensor if name == _NAME else _DLManagedTensorVersioned
        _release(ctypes.cast(ptr, ctypes.POINTER(cls)).contents.manager_ctx)
    except Exception:  # noqa: BLE001,S110 - at interpreter exit the module may be half torn down
        pass


def _dl_dtype(dtype):
    from ..core import dtype as _dt
    if dtype is _dt.bool:
        return _BOOL, 8
    if dtype is _dt.bfloat16:
        return _BFLOAT, 16
    bits = dtype.itemsize * 8
    if dtype.is_complex:
        return _COMPLEX, bits
    if dtype.is_floating_point:
        return _FLOAT, bits
    return (_INT if dtype.is_signed else _UINT), bits


def _pack(array, dtype, device_type: int, device_id: int, versioned: bool, copied: bool):
    """A capsule over ``array``'s memory (a NumPy array: the tensor's own strided view)."""
    code, bits = _dl_dtype(dtype)
    itemsize = array.itemsize
    ndim = array.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // itemsize for s in array.strides))
    managed = _DLManagedTensorVersioned() if versioned else _DLManagedTensor()
    t = managed.dl_tensor
    t.data = array.__array_interface__["data"][0] if array.size else None
    t.device = _DLDevice(device_type, device_id)
    t.ndim = ndim
    t.dtype = _DLDataType(code, bits, 1)
    t.shape = shape
    t.strides = strides
    t.byte_offset = 0
    with _LOCK:
        ctx = next(_CTX)
        _EXPORTED[ctx] = (managed, shape, strides, array)
    managed.manager_ctx = ctx
    if versioned:
        managed.version = _DLPackVersion(*_VERSION)
        managed.deleter = _deleter_versioned
        managed.flags = (0 if array.flags.writeable else _READ_ONLY) | (_IS_COPIED if copied else 0)
    else:
        managed.deleter = _deleter
    return _capsule_new(ctypes.addressof(managed), _NAME_VERSIONED if versioned else _NAME, _capsule_destructor)


def _check_exportable(tensor) -> None:
    from ..core.dispatch_key import K
    impl = tensor._impl
    if impl.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if impl.keyset & (1 << int(K.Conjugate)):
        raise BufferError("Can't export tensors with the conjugate bit set")
    if impl.keyset & (1 << int(K.Negative)):
        raise BufferError("Can't export tensors with the negative bit set (resolve it first: tensor.resolve_neg())")
    if impl.device.type == "meta":
        raise BufferError("Cannot pack tensors on meta")


def tensor_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: a DLPack capsule over the tensor's memory (the array API's protocol)."""
    _check_exportable(self)
    impl = self._impl
    dev_type, dev_id = tensor_dlpack_device(self)
    if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != (int(dev_type), dev_id):
        raise BufferError(f"Can't export a tensor on {impl.device} to DLPack device {tuple(dl_device)}: "
                          f"onion exports only to the tensor's own device (move it with .to() first)")
    versioned = max_version is not None and int(max_version[0]) >= 1
    if dev_type == DLDeviceType.kDLCUDA:
        array = impl._array                     # a CuPy array: CuPy writes the capsule for its memory
        kwargs = {"stream": stream}
        if max_version is not None:
            kwargs.update(max_version=max_version, copy=copy)
        try:
            return array.__dlpack__(**kwargs)
        except TypeError:                        # an older CuPy without the 2023 keywords
            return array.__dlpack__(stream=stream)
    if dev_type != DLDeviceType.kDLCPU:
        raise BufferError(f"Cannot pack tensors on {impl.device}")
    if stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    array = impl._array
    if copy:
        array = array.copy()
    return _pack(array, impl.dtype, int(dev_type), dev_id, versioned, bool(copy))


def tensor_dlpack_device(self):
    """``Tensor.__dlpack_device__``: (DLDeviceType, device index)."""
    dev = self._impl.device
    if dev.type == "cpu":
        return DLDeviceType.kDLCPU, 0
    if dev.type == "cuda":
        return DLDeviceType.kDLCUDA, dev.index or 0
    raise ValueError(f"Unknown device type {dev.type} for Dlpack")


def to_dlpack(tensor):
    """A legacy (unversioned) ``dltensor`` capsule over ``tensor`` (``torch.utils.dlpack.to_dlpack``)."""
    return tensor.__dlpack__()


class _Imported:
    """Owns a consumed capsule's memory for the NumPy array built over it: calls the producer's
    deleter when the array (and so this object) goes away."""

    def __init__(self, managed_ptr, versioned: bool, interface: dict):
        self._ptr = managed_ptr
        self._versioned = versioned
        self.__array_interface__ = interface

    def __del__(self):
        try:
            cls = _DLManagedTensorVersioned if self._versioned else _DLManagedTensor
            p = ctypes.cast(self._ptr, ctypes.POINTER(cls))
            if p.contents.deleter:
                p.contents.deleter(p)
        except Exception:  # noqa: BLE001,S110 - at interpreter exit the module may be half torn down
            pass


_TYPESTR = {(_INT, 8): "|i1", (_INT, 16): "<i2", (_INT, 32): "<i4", (_INT, 64): "<i8",
            (_UINT, 8): "|u1", (_UINT, 16): "<u2", (_UINT, 32): "<u4", (_UINT, 64): "<u8",
            (_FLOAT, 16): "<f2", (_FLOAT, 32): "<f4", (_FLOAT, 64): "<f8",
            (_COMPLEX, 64): "<c8", (_COMPLEX, 128): "<c16", (_BOOL, 8): "|b1", (_BFLOAT, 16): "<u2"}


def _invalid_capsule():
    return RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                        "only once, so you might have already constructed a tensor from it once.")


def _consume(capsule):
    """A NumPy array over a CPU capsule's memory (the capsule is marked used)."""
    try:
        name = _capsule_get_name(capsule)
    except (ValueError, TypeError, ctypes.ArgumentError):
        raise _invalid_capsule() from None
    if name == _NAME_VERSIONED:
        ptr = _capsule_get_pointer(capsule, name)
        managed = ctypes.cast(ptr, ctypes.POINTER(_DLManagedTensorVersioned)).contents
        if managed.version.major > _VERSION[0]:
            raise BufferError(f"from_dlpack: DLPack version {managed.version.major}.{managed.version.minor} "
                              f"is newer than onion supports ({_VERSION[0]}.x)")
        readonly = bool(managed.flags & _READ_ONLY)
        used = _USED_VERSIONED
    elif name == _NAME:
        ptr = _capsule_get_pointer(capsule, name)
        managed = ctypes.cast(ptr, ctypes.POINTER(_DLManagedTensor)).contents
        readonly = False
        used = _USED
    else:
        raise _invalid_capsule()
    t = managed.dl_tensor
    if t.device.device_type not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        raise BufferError(f"from_dlpack: a capsule on DLPack device {t.device.device_type}:{t.device.device_id} "
                          f"cannot be read as CPU memory; pass the producer object itself (CuPy, torch.cuda), "
                          f"not its capsule")
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _TYPESTR:
        raise BufferError(f"from_dlpack: unsupported DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}, "
                          f"lanes {t.dtype.lanes})")
    itemsize = t.dtype.bits // 8
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] * itemsize for i in range(t.ndim)) if t.strides else None
    _capsule_set_name(capsule, used)
    owner = _Imported(ptr, name == _NAME_VERSIONED, {
        "version": 3, "shape": shape, "typestr": _TYPESTR[key], "strides": strides,
        "data": ((t.data or 0) + t.byte_offset, readonly)})
    if 0 in shape or not t.data:
        array = np.empty(shape, np.dtype(_TYPESTR[key]))
        del owner                                   # nothing to share: the producer's memory goes back now
    else:
        array = np.asarray(owner)
    if t.dtype.code == _BFLOAT:
        from ..core import dtype as _dt
        array = array.view(_dt.bfloat16.np)
    return array


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor over the memory of ``ext_tensor`` (an object with ``__dlpack__``, or a capsule), shared
    unless ``copy=True`` (``torch.from_dlpack``)."""
    from ..bindings.python_torch_functions import from_numpy
    from ..core.device import device as _device
    if isinstance(ext_tensor, np.ndarray) and ext_tensor.dtype.kind == "V" and ext_tensor.dtype.name == "bfloat16":
        # NumPy's exporter refuses ml_dtypes' bfloat16; the array is CPU memory onion shares directly
        t = from_numpy(ext_tensor.copy() if copy else ext_tensor)
        return t.to(device) if device is not None and _device(device) != t.device else t
    if hasattr(ext_tensor, "__dlpack__"):
        dev_type, dev_id = ext_tensor.__dlpack_device__()
        if int(dev_type) in (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged):
            return _from_cuda(ext_tensor, dev_id, device, copy)
        kwargs = {"max_version": _VERSION}
        if copy is not None:
            kwargs["copy"] = copy
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:                           # a producer from before DLPack 1.0's keywords
            capsule = ext_tensor.__dlpack__()
    else:
        capsule = ext_tensor
    array = _consume(capsule)
    if copy:
        array = array.copy()
    t = from_numpy(array)
    if device is not None and _device(device) != t.device:
        t = t.to(device)
    return t


def _from_cuda(ext_tensor, dev_id, device, copy):
    """A CUDA producer: CuPy imports it (zero-copy), onion wraps CuPy's array as a ``cuda`` tensor."""
    try:
        import cupy
    except ImportError:
        raise RuntimeError("from_dlpack: the producer is on a CUDA device; onion's CUDA backend needs CuPy "
                           "(pip install onion[cuda])") from None
    from ..aten.tensor_new import wrap
    from ..core import dtype as _dt
    from ..core.device import device as _device
    array = cupy.from_dlpack(ext_tensor)
    if copy:
        array = array.copy()
    if array.dtype.kind == "V" or str(array.dtype) == "bfloat16":
        dt = _dt.bfloat16
    else:
        dt = _dt.from_numpy_dtype(np.dtype(array.dtype))
    t = wrap(array, dt, _device("cuda", dev_id))
    if device is not None and _device(device) != t.device:
        t = t.to(device)
    return t


def install(tensor_cls) -> None:
    """Give the Tensor class the protocol's two methods."""
    tensor_cls.__dlpack__ = tensor_dlpack
    tensor_cls.__dlpack_device__ = tensor_dlpack_device
