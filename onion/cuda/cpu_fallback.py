"""The CUDA key's boxed fallback for operators with no CUDA kernel: run the CPU kernel on host copies.

PyTorch's ``cpu_fallback`` pattern (what its out-of-tree backends and MPS use): the CUDA tensors among the
arguments are copied to the host, the operator runs on the CPU key, the results come back to the device
of the first CUDA argument, and arguments the operator writes (``out=``, in-place) get the new values
copied back into their device memory.  Each operator warns once.  The operators that take this path are
those whose kernels call NumPy or SciPy directly (indexing with tensors, sorting, scatter/gather, LAPACK):
correct on a GPU, with two host transfers per call.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..aten import iterator as _it
from ..aten.tensor_new import wrap, wrap_cpu
from ..backends.base import BACKENDS
from ..core.device import CPU
from ..core.dispatch_key import K
from ..core.tensor import Tensor

_CPU_KS = 1 << int(K.CPU)
_PLANS: dict = {}
_WARNED: set = set()


def _plan(schema):
    """(tensor argument positions, written positions), read once per operator."""
    tensors = [i for i, a in enumerate(schema.arguments) if a.type.is_tensor_like]
    written = {i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.writes}
    return tensors, written


def _to_host(t, backend):
    impl = t._impl
    if impl.device.type != "cuda":
        return t
    return wrap_cpu(np.array(backend.to_numpy(impl._array), order="C"), impl.dtype)   # 0-d stays 0-d


def _to_device(result, backend, dev, back):
    if isinstance(result, Tensor):
        if id(result) in back:
            return back[id(result)]
        impl = result._impl
        if impl.device.type != "cpu":
            return result
        return wrap(backend.asarray(np.array(impl._array, order="C"), dev), impl.dtype, dev)
    if isinstance(result, tuple):
        return type(result)(*[_to_device(r, backend, dev, back) for r in result]) \
            if hasattr(result, "_fields") else tuple(_to_device(r, backend, dev, back) for r in result)
    if isinstance(result, list):
        return [_to_device(r, backend, dev, back) for r in result]
    return result


def cuda_cpu_fallback(op, ks, values):
    h = op._handle
    plan = _PLANS.get(h)
    if plan is None:
        plan = _PLANS[h] = _plan(h.schema)
    tensors, written = plan
    backend = BACKENDS["cuda"]
    if h not in _WARNED:
        _WARNED.add(h)
        warnings.warn(f"The operator '{h.qualified_name}' is not currently supported on the CUDA backend of onion "
                      "and will fall back to run on the CPU. This may have performance implications.",
                      UserWarning, stacklevel=4)
    values = list(values)
    dev = None
    back = {}                   # id(host copy of a written argument) -> the device tensor it came from
    for i in tensors:
        v = values[i]
        if isinstance(v, Tensor):
            if v._impl.device.type == "cuda":
                dev = dev or v._impl.device
                host = values[i] = _to_host(v, backend)
                if i in written:
                    back[id(host)] = v
        elif isinstance(v, (list, tuple)):
            for t in v:
                if isinstance(t, Tensor) and t._impl.device.type == "cuda":
                    dev = dev or t._impl.device
            values[i] = [_to_host(t, backend) if isinstance(t, Tensor) else t for t in v]
    if dev is None:               # a factory routed here by its device argument: run it on the CPU, then move
        dev = next((v for v in values if getattr(v, "type", None) == "cuda"), None)
        values = [CPU if getattr(v, "type", None) == "cuda" else v for v in values]
    result = h.redispatch(_CPU_KS, *values)
    for host_id, original in back.items():      # written arguments: the host values go back to the device
        host = next(values[i] for i in written if id(values[i]) == host_id)
        shape = tuple(host._impl._array.shape)
        if tuple(original._impl._array.shape) != shape:
            _it.resize_out(original, shape)
        _it.xp_copy(original._impl._array, backend.asarray(host._impl._array, dev))
        original._impl.bump_version()
    return _to_device(result, backend, dev, back)


def register():
    """A ``Library`` holding the fallback for the CUDA key (``_destroy()`` undoes it)."""
    from ..dispatch.library import Library
    lib = Library("_", "IMPL")
    lib._fallback_internal(K.CUDA, cuda_cpu_fallback,
                           "registered at onion/cuda/cpu_fallback.py (run the CPU kernel on host copies)")
    return lib
